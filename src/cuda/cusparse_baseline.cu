// Vendor baselines: cuSPARSE's generic SpMV (cusparseSpMV) with CUSPARSE_SPMV_CSR_ALG1,
// CUSPARSE_SPMV_CSR_ALG2 (deterministic) and CUSPARSE_SPMV_COO_ALG1, used the way cuSPARSE documents
// for repeated products: handle, descriptors and workspace created once, cusparseSpMV_preprocess once
// (counted as setup), and apply() only points the dense-vector descriptors at x and y and calls
// cusparseSpMV on the given stream (no allocation, so it can be captured in a CUDA graph).
#include <cusparse.h>

#include <algorithm>
#include <memory>
#include <type_traits>

#include "cuda/algorithms.cuh"
#include "cuda/common/cusparse_check.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// RAII owners of cuSPARSE objects (destroy calls never throw from a destructor).
struct HandleDeleter {
  void operator()(cusparseHandle_t h) const noexcept { cusparseDestroy(h); }
};
struct SpMatDeleter {
  void operator()(cusparseConstSpMatDescr_t d) const noexcept { cusparseDestroySpMat(d); }
};
struct DnVecDeleter {
  void operator()(cusparseDnVecDescr_t d) const noexcept { cusparseDestroyDnVec(d); }
};
using HandlePtr = std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, HandleDeleter>;
using SpMatPtr = std::unique_ptr<std::remove_pointer_t<cusparseConstSpMatDescr_t>, SpMatDeleter>;
using DnVecPtr = std::unique_ptr<std::remove_pointer_t<cusparseDnVecDescr_t>, DnVecDeleter>;

template <class Value>
constexpr cudaDataType kValueType = std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
template <class Index>
constexpr cusparseIndexType_t kIndexType = sizeof(Index) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;

enum class Format { Csr, Coo };

// COO row indices from row_ptr: one warp per row, lanes stride the row (coalesced writes; a long row
// is not left to one thread).
template <class Index>
__global__ void expand_row_indices_kernel(const Index* __restrict__ row_ptr, Index rows, Index* __restrict__ row_idx) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; row < rows; row += warps) {
    const std::int64_t end = row_ptr[row + 1];
    for (std::int64_t k = row_ptr[row] + lane; k < end; k += 32) row_idx[k] = static_cast<Index>(row);
  }
}
constexpr int kExpandBlock = 256;

template <class Value, class Index>
class CusparseSpmv final : public CudaAlgorithm<Value, Index> {
 public:
  CusparseSpmv(const CsrView<Value, Index>& a, Operation op, Format format, cusparseSpMVAlg_t algorithm,
               const char* algorithm_name, cudaStream_t stream)
      : op_(op == Operation::NonTranspose ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE),
        algorithm_(algorithm),
        algorithm_name_(algorithm_name) {
    cusparseHandle_t handle = nullptr;
    SPMV_CUSPARSE_CHECK(cusparseCreate(&handle));
    handle_.reset(handle);
    SPMV_CUSPARSE_CHECK(cusparseSetStream(handle, stream));
    SPMV_CUSPARSE_CHECK(cusparseSetPointerMode(handle, CUSPARSE_POINTER_MODE_HOST));
    SPMV_CUSPARSE_CHECK(cusparseGetVersion(handle, &version_));

    cusparseConstSpMatDescr_t matrix = nullptr;
    if (format == Format::Csr) {
      SPMV_CUSPARSE_CHECK(cusparseCreateConstCsr(&matrix, a.rows, a.cols, a.nnz, a.row_ptr, a.col_idx, a.values,
                                                 kIndexType<Index>, kIndexType<Index>, CUSPARSE_INDEX_BASE_ZERO,
                                                 kValueType<Value>));
    } else {
      coo_rows_ = DeviceBuffer<Index>(static_cast<std::size_t>(a.nnz));
      expand_row_indices_kernel<<<grid_for(std::int64_t(a.rows) * 32, kExpandBlock), kExpandBlock, 0, stream>>>(
          a.row_ptr, a.rows, coo_rows_.data());
      SPMV_CHECK_LAUNCH("expand_row_indices_kernel");
      SPMV_CUSPARSE_CHECK(cusparseCreateConstCoo(&matrix, a.rows, a.cols, a.nnz, coo_rows_.data(), a.col_idx, a.values,
                                                 kIndexType<Index>, CUSPARSE_INDEX_BASE_ZERO, kValueType<Value>));
    }
    matrix_.reset(matrix);

    // The dense-vector descriptors live as long as the plan; apply() re-points them at x and y.
    // Until then they point at scratch vectors of the right sizes (freed at the end of setup), so
    // bufferSize and preprocess see fully valid descriptors.
    const Index x_size = op == Operation::NonTranspose ? a.cols : a.rows;
    const Index y_size = op == Operation::NonTranspose ? a.rows : a.cols;
    DeviceBuffer<Value> scratch_x(static_cast<std::size_t>(x_size)), scratch_y(static_cast<std::size_t>(y_size));
    cusparseDnVecDescr_t vector = nullptr;
    SPMV_CUSPARSE_CHECK(cusparseCreateDnVec(&vector, x_size, scratch_x.data(), kValueType<Value>));
    x_.reset(vector);
    SPMV_CUSPARSE_CHECK(cusparseCreateDnVec(&vector, y_size, scratch_y.data(), kValueType<Value>));
    y_.reset(vector);

    const Value one = 1, zero = 0;
    std::size_t workspace_bytes = 0;
    SPMV_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, op_, &one, matrix_.get(), x_.get(), &zero, y_.get(),
                                                kValueType<Value>, algorithm_, &workspace_bytes));
    // At least one byte: some cuSPARSE versions reject a null buffer even when they asked for none.
    workspace_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(workspace_bytes, 1));
    SPMV_CUSPARSE_CHECK(cusparseSpMV_preprocess(handle, op_, &one, matrix_.get(), x_.get(), &zero, y_.get(),
                                                kValueType<Value>, algorithm_, workspace_.data()));
    // The scratch vectors are freed on return; make sure preprocess is done with the descriptors first.
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    SPMV_CUSPARSE_CHECK(cusparseSetStream(handle_.get(), stream));
    // cusparseSpMV takes x through a const descriptor; the non-const one here exists only so that
    // cusparseDnVecSetValues can re-point it (cuSPARSE has no setter for const descriptors).
    SPMV_CUSPARSE_CHECK(cusparseDnVecSetValues(x_.get(), const_cast<Value*>(x)));
    SPMV_CUSPARSE_CHECK(cusparseDnVecSetValues(y_.get(), y));
    SPMV_CUSPARSE_CHECK(cusparseSpMV(handle_.get(), op_, &alpha, matrix_.get(), x_.get(), &beta, y_.get(),
                                     kValueType<Value>, algorithm_, workspace_.data()));
  }

  // cuSPARSE documents CSR_ALG2 as deterministic; ALG1 and COO_ALG1 are not.
  bool reproducible() const override { return algorithm_ == CUSPARSE_SPMV_CSR_ALG2; }
  std::string policy() const override {
    return std::string("cusparseSpMV ") + algorithm_name_ + " cuSPARSE " + std::to_string(version_ / 1000) + "." +
           std::to_string(version_ % 1000 / 100) + "." + std::to_string(version_ % 100) +
           " workspace=" + std::to_string(workspace_.bytes()) + "B";
  }
  std::size_t extra_bytes() const override { return workspace_.bytes() + coo_rows_.bytes(); }

 private:
  // Declaration order = construction order; destruction runs backwards, so the handle goes last.
  HandlePtr handle_;
  DeviceBuffer<Index> coo_rows_;
  SpMatPtr matrix_;
  DnVecPtr x_;
  DnVecPtr y_;
  DeviceBuffer<unsigned char> workspace_;
  cusparseOperation_t op_;
  cusparseSpMVAlg_t algorithm_;
  const char* algorithm_name_;
  int version_ = 0;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_cusparse_csr_alg1(const CsrView<Value, Index>& matrix, Operation op,
                                                  const Options&, cudaStream_t stream) {
  return std::make_unique<CusparseSpmv<Value, Index>>(matrix, op, Format::Csr, CUSPARSE_SPMV_CSR_ALG1, "CSR_ALG1",
                                                      stream);
}
SPMV_INSTANTIATE_FACTORY(make_cusparse_csr_alg1)

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_cusparse_csr_alg2(const CsrView<Value, Index>& matrix, Operation op,
                                                  const Options&, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CusparseCsrAlg2, op);
  return std::make_unique<CusparseSpmv<Value, Index>>(matrix, op, Format::Csr, CUSPARSE_SPMV_CSR_ALG2, "CSR_ALG2",
                                                      stream);
}
SPMV_INSTANTIATE_FACTORY(make_cusparse_csr_alg2)

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_cusparse_coo_alg1(const CsrView<Value, Index>& matrix, Operation op,
                                                  const Options&, cudaStream_t stream) {
  return std::make_unique<CusparseSpmv<Value, Index>>(matrix, op, Format::Coo, CUSPARSE_SPMV_COO_ALG1, "COO_ALG1",
                                                      stream);
}
SPMV_INSTANTIATE_FACTORY(make_cusparse_coo_alg1)

}  // namespace spmv::cuda
