// The CPU product over a semiring (spmv/semiring.hpp): one pass over each row's entries, rows spread
// over OpenMP threads.
#include <omp.h>

#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"

namespace spmv {

// Row length from which the order-free semirings split a row into four chains. One thread on the 2-core
// Zen 4 VM (docs/SEMIRINGS.md): four chains took R-MAT scale 16 min-plus from 2.77 to 1.72 ms, and
// slowed 5-entry Poisson rows from 0.53 to 0.70 ms, so short rows keep one chain.
constexpr std::int64_t kFourChainsFrom = 16;

template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                       int threads) {
  semiring_ops::check_lengths(s, a.rows, a.cols, x.size(), y.size());
  const std::int64_t rows = a.rows;
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const Index* row_ptr = a.row_ptr.data();
  const Index* cols = a.col_idx.data();
  const Value* values = a.values.data();
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    // Rows in chunks handed out on demand: power-law rows make a static split uneven.
#pragma omp parallel for schedule(dynamic, 512) num_threads(team)
    for (std::int64_t i = 0; i < rows; ++i) {
      const Index end = row_ptr[i + 1];
      Index k = row_ptr[i];
      Value acc = Ops::zero();
      if constexpr (Ops::kOrderFree) if (end - k >= kFourChainsFrom) {
        // min, max and or give the same value in any order (a zero's sign aside: max(+0, -0) keeps its
        // first operand; tests/cpu/edge_probe_test.cpp): four independent chains on long rows, so
        // that the compare-and-select latency of one term does not serialise the row.
        Value part[3] = {Ops::zero(), Ops::zero(), Ops::zero()};
        for (; k + 4 <= end; k += 4) {
          acc = Ops::add(acc, Ops::mul(values[k], x[cols[k]]));
          part[0] = Ops::add(part[0], Ops::mul(values[k + 1], x[cols[k + 1]]));
          part[1] = Ops::add(part[1], Ops::mul(values[k + 2], x[cols[k + 2]]));
          part[2] = Ops::add(part[2], Ops::mul(values[k + 3], x[cols[k + 3]]));
        }
        acc = Ops::add(Ops::add(acc, part[0]), Ops::add(part[1], part[2]));
      }
      for (; k < end; ++k) acc = Ops::add(acc, Ops::mul(values[k], x[cols[k]]));
      y[static_cast<std::size_t>(i)] = acc;
    }
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
