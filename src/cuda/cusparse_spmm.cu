// cusparseSpMM baseline (src/cuda/cusparse_spmm.cuh).
#include <cusparse.h>

#include <algorithm>
#include <type_traits>

#include "cuda/common/cusparse_check.cuh"
#include "cuda/cusparse_spmm.cuh"
#include "spmv/error.hpp"

namespace spmv::cuda {
namespace {

template <class Value>
constexpr cudaDataType kValueType = std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
template <class Index>
constexpr cusparseIndexType_t kIndexType = sizeof(Index) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;

constexpr cusparseSpMMAlg_t kAlgorithms[] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1,
                                             CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};

cusparseOrder_t order_of(Layout layout) {
  return layout == Layout::RowMajor ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
}

}  // namespace

template <class Value, class Index>
struct CusparseSpmm<Value, Index>::Impl {
  cusparseHandle_t handle = nullptr;
  cusparseConstSpMatDescr_t matrix = nullptr;
  cusparseDnMatDescr_t x = nullptr;  // non-const so that cusparseDnMatSetValues can re-point it
  cusparseDnMatDescr_t y = nullptr;
  DeviceBuffer<unsigned char> workspace;
  cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  int variant = 0;
  int version = 0;
  // The shape the descriptors and workspace were made for.
  std::int64_t k = -1, ldx = 0, ldy = 0;
  Layout layout = Layout::RowMajor;
  Value alpha = 0, beta = 0;

  void destroy_dense() {
    if (x) cusparseDestroyDnMat(x);
    if (y) cusparseDestroyDnMat(y);
    x = y = nullptr;
  }
  ~Impl() {
    destroy_dense();
    if (matrix) cusparseDestroySpMat(matrix);
    if (handle) cusparseDestroy(handle);
  }
};

template <class Value, class Index>
CusparseSpmm<Value, Index>::CusparseSpmm(CsrView<Value, Index> a, Operation op, int variant)
    : impl_(std::make_unique<Impl>()) {
  if (variant < 0 || variant >= static_cast<int>(std::size(kAlgorithms)))
    throw InvalidArgument("cusparseSpMM variant " + std::to_string(variant) + " out of range");
  impl_->variant = variant;
  impl_->op = op == Operation::NonTranspose ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE;
  SPMV_CUSPARSE_CHECK(cusparseCreate(&impl_->handle));
  SPMV_CUSPARSE_CHECK(cusparseSetPointerMode(impl_->handle, CUSPARSE_POINTER_MODE_HOST));
  SPMV_CUSPARSE_CHECK(cusparseGetVersion(impl_->handle, &impl_->version));
  SPMV_CUSPARSE_CHECK(cusparseCreateConstCsr(&impl_->matrix, a.rows, a.cols, a.nnz, a.row_ptr, a.col_idx, a.values,
                                             kIndexType<Index>, kIndexType<Index>, CUSPARSE_INDEX_BASE_ZERO,
                                             kValueType<Value>));
}

template <class Value, class Index>
CusparseSpmm<Value, Index>::~CusparseSpmm() = default;

template <class Value, class Index>
void CusparseSpmm<Value, Index>::apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y,
                                       cudaStream_t stream) {
  if (x.layout != y.layout) throw Unsupported("cusparseSpMM needs X and Y in the same layout");
  Impl& s = *impl_;
  SPMV_CUSPARSE_CHECK(cusparseSetStream(s.handle, stream));
  const cusparseSpMMAlg_t alg = kAlgorithms[s.variant];
  const bool new_shape = x.cols != s.k || x.ld != s.ldx || y.ld != s.ldy || x.layout != s.layout ||
                         (beta == Value(0)) != (s.beta == Value(0));
  if (new_shape) {
    s.destroy_dense();
    SPMV_CUSPARSE_CHECK(cusparseCreateDnMat(&s.x, x.rows, x.cols, x.ld, const_cast<Value*>(x.data), kValueType<Value>,
                                            order_of(x.layout)));
    SPMV_CUSPARSE_CHECK(cusparseCreateDnMat(&s.y, y.rows, y.cols, y.ld, y.data, kValueType<Value>, order_of(y.layout)));
    std::size_t bytes = 0;
    SPMV_CUSPARSE_CHECK(cusparseSpMM_bufferSize(s.handle, s.op, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s.matrix, s.x,
                                                &beta, s.y, kValueType<Value>, alg, &bytes));
    s.workspace = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 1));
    SPMV_CUSPARSE_CHECK(cusparseSpMM_preprocess(s.handle, s.op, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s.matrix,
                                                s.x, &beta, s.y, kValueType<Value>, alg, s.workspace.data()));
    s.k = x.cols;
    s.ldx = x.ld;
    s.ldy = y.ld;
    s.layout = x.layout;
    s.beta = beta;
  } else {
    SPMV_CUSPARSE_CHECK(cusparseDnMatSetValues(s.x, const_cast<Value*>(x.data)));
    SPMV_CUSPARSE_CHECK(cusparseDnMatSetValues(s.y, y.data));
  }
  SPMV_CUSPARSE_CHECK(cusparseSpMM(s.handle, s.op, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s.matrix, s.x, &beta, s.y,
                                   kValueType<Value>, alg, s.workspace.data()));
}

template <class Value, class Index>
std::string CusparseSpmm<Value, Index>::name() const { return kCusparseSpmmNames[impl_->variant]; }

template <class Value, class Index>
std::string CusparseSpmm<Value, Index>::policy() const {
  const int v = impl_->version;
  return std::string("cusparseSpMM ") + kCusparseSpmmNames[impl_->variant] + " cuSPARSE " + std::to_string(v / 1000) +
         "." + std::to_string(v % 1000 / 100) + "." + std::to_string(v % 100) +
         " workspace=" + std::to_string(impl_->workspace.bytes()) + "B";
}

template class CusparseSpmm<float, std::int32_t>;
template class CusparseSpmm<float, std::int64_t>;
template class CusparseSpmm<double, std::int32_t>;
template class CusparseSpmm<double, std::int64_t>;

}  // namespace spmv::cuda
