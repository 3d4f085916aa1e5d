// SELL-C-sigma of the CPU semiring product (spmv/semiring.hpp, Algorithm::Sell): the matrix converted by
// to_sell (spmv/formats.hpp; Kreutzer, Hager, Wellein, Fehske & Bishop, SIAM J. Sci. Comput. 2014, §2),
// slices of C rows handed out to OpenMP threads on demand, each slice walked slot by slot with one
// accumulator per lane (row), so the C rows of a slice advance together (the layout's point: the lane loop
// reads C consecutive slots). C is the SELL SpMV's, the SIMD width of (Value, Index).
//
// Padding never enters a row: to_sell pads with column -1 and value 0, and 0 ⊗ x[0] is not the semiring's
// zero (min-plus: 0 + x[0]; max-times: 0 * x[0] > -inf; a NaN or inf x[0] breaks plus-times too), so a
// padding slot keeps its lane's accumulator by a select on the column (fold_padded_slot, semiring_kernels.hpp,
// shared with ELL: no branch; its x read is clamped to column 0, which exists whenever a slot does). Accumulators start at the semiring's zero, so an empty row,
// or a lane past the last row, gives it. A lane folds its row's entries in storage order in one chain: the
// row loop's order for plus-times (the same bits), the same values for min, max and or (a zero's sign
// aside, as between the row loop and merge-path: docs/SEMIRINGS.md). Results go to y[perm[p]].
#include <algorithm>
#include <vector>

#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

template <class Value, class Index>
void semiring_sell(Semiring s, const SellMatrix<Value, Index>& m, const Value* x, Value* y, int threads) {
  const std::int64_t rows = m.rows, c = m.c, slices = m.num_slices();
  const Index* perm = m.perm.data();
  const Index* cols = m.col_idx.data();
  const Value* values = m.values.data();
  // Slices a thread takes at a time: the row loop's chunk of rows (at least one slice).
  const std::int64_t chunk = std::max<std::int64_t>(1, kSemiringRowChunk / c);
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
#pragma omp parallel num_threads(threads)
    {
      std::vector<Value> acc(static_cast<std::size_t>(c));  // one per lane, sized by the matrix's C
#pragma omp for schedule(dynamic, chunk)
      for (std::int64_t sl = 0; sl < slices; ++sl) {
        std::fill(acc.begin(), acc.end(), Ops::zero());
        const std::int64_t width = m.slice_width[sl];
        const std::int64_t base = m.slice_ptr[sl];
        for (std::int64_t k = 0; k < width; ++k) {
          fold_padded_slot<Ops>(cols + base + k * c, values + base + k * c, x, c, acc.data());
        }
        const std::int64_t first = sl * c, lanes = std::min(c, rows - first);  // the last slice's padding lanes: none
        for (std::int64_t l = 0; l < lanes; ++l) y[perm[first + l]] = acc[l];
      }
    }
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_sell(Semiring, const SellMatrix<V, I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
