// The CPU product over a semiring (spmv/semiring.hpp): one pass over each row's entries, rows spread
// over OpenMP threads.
#include <omp.h>

#include <string>

#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv {

template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                       int threads) {
  if (static_cast<std::int64_t>(x.size()) != static_cast<std::int64_t>(a.cols) ||
      static_cast<std::int64_t>(y.size()) != static_cast<std::int64_t>(a.rows))
    throw InvalidArgument("semiring_multiply (" + std::string(to_string(s)) + "): A is " + std::to_string(a.rows) +
                          " x " + std::to_string(a.cols) + ", x has " + std::to_string(x.size()) + " entries and y " +
                          std::to_string(y.size()));
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
      Value acc = Ops::zero();
      for (Index k = row_ptr[i]; k < row_ptr[i + 1]; ++k) acc = Ops::add(acc, Ops::mul(values[k], x[cols[k]]));
      y[static_cast<std::size_t>(i)] = acc;
    }
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
