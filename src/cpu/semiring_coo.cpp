// COO of the CPU semiring product (spmv/semiring.hpp, Algorithm::Coo): the matrix converted by to_coo (CSR's
// order: entries sorted by row, each row's in storage order), chunks of rows on demand, each chunk's first entry
// found by binary search and each row's run folded by semiring_fold (coo_fold_rows, semiring_kernels.hpp). A row
// is folded and written by one thread, once, so there is no scatter and no race (the plus-times SpMV's COO
// scatters y[row] += ...; a semiring has no such add-into-y for min or or without atomics), and the result is the
// row loop's, bit for bit: the same fold over the same run.
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

template <class Value, class Index>
void semiring_coo(Semiring s, const CooMatrix<Value, Index>& m, const Value* x, Value* y, int threads) {
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    semiring_row_chunks<Ops>(m.rows, threads, y, [&](std::int64_t first, std::int64_t lanes, Value* acc) {
      coo_fold_rows<Ops>(m, first, lanes, x, acc);
    });
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_coo(Semiring, const CooMatrix<V, I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
