// Vendor baseline: Eigen's own sparse * dense product on a row-major Eigen::SparseMatrix copied from
// the CSR input once at plan time. Offered for comparison only (never chosen by Auto). Eigen
// parallelises the row-major N product over OpenMP threads itself; its T product is sequential.
#ifdef SPMV_HAS_EIGEN

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"

namespace spmv::detail {

template <class Value, class Index>
CpuKernel<Value, Index> make_eigen_kernel(const CsrMatrix<Value, Index>& a, Operation op) {
  using Sparse = Eigen::SparseMatrix<Value, Eigen::RowMajor, Index>;
  using Vector = Eigen::Matrix<Value, Eigen::Dynamic, 1>;
  // The arrays are copied as they are (not through Eigen's ordered insertion, which asserts sorted,
  // duplicate-free rows): the product only walks each row, so unsorted columns and duplicates give
  // the same result as in CSR.
  auto m = std::make_shared<Sparse>(a.rows, a.cols);
  m->resizeNonZeros(a.nnz());
  std::copy(a.row_ptr.begin(), a.row_ptr.end(), m->outerIndexPtr());
  std::copy(a.col_idx.begin(), a.col_idx.end(), m->innerIndexPtr());
  std::copy(a.values.begin(), a.values.end(), m->valuePtr());
  const Eigen::Index x_size = op == Operation::NonTranspose ? a.cols : a.rows;
  const Eigen::Index y_size = op == Operation::NonTranspose ? a.rows : a.cols;

  CpuKernel<Value, Index> kernel;
  kernel.run = [m, op, x_size, y_size](Value alpha, const Value* x, Value beta, Value* y) {
    Eigen::Map<const Vector> xv(x, x_size);
    Eigen::Map<Vector> yv(y, y_size);
    if (beta == 0) yv.setZero();  // never reads y, which may hold NaN
    else if (beta != 1) yv *= beta;
    if (alpha == 0) return;
    if (op == Operation::NonTranspose) yv.noalias() += alpha * (*m) * xv;
    else yv.noalias() += alpha * m->transpose() * xv;
  };
  kernel.policy = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                  std::to_string(EIGEN_MINOR_VERSION) + " SparseMatrix<RowMajor>" +
                  (op == Operation::Transpose ? " transpose() product" : "");
  kernel.extra_bytes = 0;  // the Eigen copy replaces the CSR; nothing beyond it
  return kernel;
}

#define SPMV_INSTANTIATE(V, I) \
  template CpuKernel<V, I> make_eigen_kernel(const CsrMatrix<V, I>&, Operation);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail

#endif  // SPMV_HAS_EIGEN
