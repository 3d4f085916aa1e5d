// HYB of the CPU semiring product (spmv/semiring.hpp, Algorithm::Hyb): the matrix converted by to_hyb (Bell &
// Garland 2009 §3.4: a row's first ell.width entries in ELL, the rest in COO, sorted by row). A chunk of rows folds
// its ELL part (padding skipped by its column, ell_fold_rows) and then continues each row's accumulator over its
// COO overflow (coo_fold_rows): a row's entries in storage order in one fold, so plus-times keeps the row loop's
// bits, and one thread writes each row once (the SpMV's COO part adds into y; a semiring cannot without atomics).
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

template <class Value, class Index>
void semiring_hyb(Semiring s, const HybMatrix<Value, Index>& m, const Value* x, Value* y, int threads) {
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    semiring_row_chunks<Ops>(m.ell.rows, threads, y, [&](std::int64_t first, std::int64_t lanes, Value* acc) {
      ell_fold_rows<Ops>(m.ell, m.ell.width, first, lanes, x, acc);
      coo_fold_rows<Ops>(m.coo, first, lanes, x, acc);
    });
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_hyb(Semiring, const HybMatrix<V, I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
