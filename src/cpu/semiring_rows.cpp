// The row loop of the CPU semiring product (spmv/semiring.hpp, Algorithm::RowLoop): one pass over each
// row's entries, rows in chunks handed out to OpenMP threads on demand. A row is walked by one thread,
// so a row holding a large share of the nonzeros leaves the others idle: semiring_merge.cpp balances
// those, and semiring_multiply.cpp chooses.
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

template <class Value, class Index>
void semiring_rows(Semiring s, const CsrMatrix<Value, Index>& a, const Value* x, Value* y, int threads) {
  const std::int64_t rows = a.rows;
  const Index* row_ptr = a.row_ptr.data();
  const Index* cols = a.col_idx.data();
  const Value* values = a.values.data();
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
#pragma omp parallel for schedule(dynamic, kSemiringRowChunk) num_threads(threads)
    for (std::int64_t i = 0; i < rows; ++i) y[i] = semiring_fold<Ops>(values, cols, x, row_ptr[i], row_ptr[i + 1]);
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_rows(Semiring, const CsrMatrix<V, I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
