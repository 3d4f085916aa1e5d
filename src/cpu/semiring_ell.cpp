// ELLPACK and ELLPACK-R of the CPU semiring product (spmv/semiring.hpp, Algorithm::Ell and Algorithm::EllR): the
// matrix converted by to_ell / to_ellr (spmv/formats.hpp; Bell & Garland 2009 §3.2, Vázquez et al. 2011), chunks
// of rows on demand, each chunk walked slot by slot with one accumulator a row (ell_fold_rows,
// semiring_kernels.hpp): padding slots (column -1) are skipped by a select, never folded as 0 ⊗ x0. ELL-R's row
// lengths stop a chunk at its longest row instead of the matrix's width, which is the format's point; the values
// are the same.
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

template <class Value, class Index>
void semiring_ell(Semiring s, const EllMatrix<Value, Index>& m, const Index* row_length, const Value* x, Value* y,
                  int threads) {
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    semiring_row_chunks<Ops>(m.rows, threads, y, [&](std::int64_t first, std::int64_t lanes, Value* acc) {
      std::int64_t width = m.width;
      if (row_length) width = *std::max_element(row_length + first, row_length + first + lanes);
      ell_fold_rows<Ops>(m, width, first, lanes, x, acc);
    });
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_ell(Semiring, const EllMatrix<V, I>&, const I*, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
