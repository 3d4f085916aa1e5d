// Vendor baseline: Intel MKL's inspector-executor SpMV (issue 17: the CPU library users would otherwise
// call). At plan time the CSR arrays are copied into an MKL handle (mkl_sparse_?_create_csr); with the
// caller's Options::expected_applies MKL is told how many products to expect (mkl_sparse_set_mv_hint)
// and optimised (mkl_sparse_optimize, where MKL may convert to its own layout), as Auto may convert only
// with that hint; without it MKL runs on the CSR arrays as given. apply calls mkl_sparse_?_mv. Offered for comparison only (never chosen by
// Auto); compiled with SPMV_WITH_MKL (LP64 interface, GNU OpenMP threading, so OpenMP's team size and
// Options::threads apply to it as to the other kernels).
#ifdef SPMV_HAS_MKL

#include <mkl.h>
#include <mkl_spblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

void check(sparse_status_t status, const char* what) {
  if (status != SPARSE_STATUS_SUCCESS)
    throw Error(std::string("spmv mkl: ") + what + " failed with sparse_status_t " + std::to_string(status));
}

// The MKL handle and the arrays it points into (MKL does not copy them).
template <class Value>
struct MklMatrix {
  std::vector<MKL_INT> row_ptr, col_idx;
  std::vector<Value> values;
  sparse_matrix_t handle = nullptr;
  ~MklMatrix() {
    if (handle) mkl_sparse_destroy(handle);
  }
};

}  // namespace

template <class Value, class Index>
CpuKernel<Value, Index> make_mkl_kernel(const CsrMatrix<Value, Index>& a, Operation op, std::int64_t expected_applies) {
  // LP64: MKL_INT is 32-bit. 64-bit matrices are copied when they fit and refused otherwise.
  if (a.rows > std::numeric_limits<MKL_INT>::max() || a.cols > std::numeric_limits<MKL_INT>::max() ||
      a.nnz() > std::numeric_limits<MKL_INT>::max())
    throw Unsupported("mkl (LP64): the matrix has more than 2^31-1 rows, columns or nonzeros");
  auto m = std::make_shared<MklMatrix<Value>>();
  m->row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  m->col_idx.assign(a.col_idx.begin(), a.col_idx.end());
  m->values.assign(a.values.begin(), a.values.end());
  const bool degenerate = a.rows == 0 || a.cols == 0 || a.nnz() == 0;  // y = beta*y: no handle needed
  const sparse_operation_t mkl_op = op == Operation::NonTranspose ? SPARSE_OPERATION_NON_TRANSPOSE
                                                                    : SPARSE_OPERATION_TRANSPOSE;
  matrix_descr descr{};
  descr.type = SPARSE_MATRIX_TYPE_GENERAL;
  if (!degenerate) {
    const auto rows = static_cast<MKL_INT>(a.rows), cols = static_cast<MKL_INT>(a.cols);
    if constexpr (std::is_same_v<Value, float>)
      check(mkl_sparse_s_create_csr(&m->handle, SPARSE_INDEX_BASE_ZERO, rows, cols, m->row_ptr.data(),
                                    m->row_ptr.data() + 1, m->col_idx.data(), m->values.data()),
            "mkl_sparse_s_create_csr");
    else
      check(mkl_sparse_d_create_csr(&m->handle, SPARSE_INDEX_BASE_ZERO, rows, cols, m->row_ptr.data(),
                                    m->row_ptr.data() + 1, m->col_idx.data(), m->values.data()),
            "mkl_sparse_d_create_csr");
    if (expected_applies > 0) {
      const auto hint = static_cast<MKL_INT>(std::min<std::int64_t>(expected_applies, std::numeric_limits<MKL_INT>::max()));
      check(mkl_sparse_set_mv_hint(m->handle, mkl_op, descr, hint), "mkl_sparse_set_mv_hint");
      check(mkl_sparse_optimize(m->handle), "mkl_sparse_optimize");
    }
  }
  const std::int64_t y_size = op == Operation::NonTranspose ? a.rows : a.cols;

  CpuKernel<Value, Index> kernel;
  kernel.run = [m, mkl_op, descr, y_size, degenerate](Value alpha, const Value* x, Value beta, Value* y) {
    // y may hold NaN when beta == 0, and MKL does not promise to leave y unread then: zero it first.
    if (beta == 0) std::fill(y, y + y_size, Value(0));
    if (alpha == 0 || degenerate) {
      if (beta != 0)
        for (std::int64_t i = 0; i < y_size; ++i) y[i] *= beta;
      return;
    }
    if constexpr (std::is_same_v<Value, float>)
      check(mkl_sparse_s_mv(mkl_op, alpha, m->handle, descr, x, beta, y), "mkl_sparse_s_mv");
    else
      check(mkl_sparse_d_mv(mkl_op, alpha, m->handle, descr, x, beta, y), "mkl_sparse_d_mv");
  };
  MKLVersion version;
  mkl_get_version(&version);
  kernel.policy = "MKL " + std::to_string(version.MajorVersion) + "." + std::to_string(version.UpdateVersion) +
                  " inspector-executor, " +
                  (expected_applies > 0 ? "mv_hint=" + std::to_string(expected_applies) + ", optimized" : "no hint") +
                  (degenerate ? " (empty)" : "");
  kernel.extra_bytes = 0;  // MKL's optimised copy is not visible; the CSR copy replaces the input
  return kernel;
}

#define SPMV_INSTANTIATE(V, I) \
  template CpuKernel<V, I> make_mkl_kernel(const CsrMatrix<V, I>&, Operation, std::int64_t);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail

#endif  // SPMV_HAS_MKL
