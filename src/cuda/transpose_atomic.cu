// Naive transposed SpMV, y = alpha*A^T*x + beta*y on the CSR arrays of A: one thread per row i
// scatters alpha*a_ij*x_i into y[j] with atomic adds, after y = beta*y (scale_vector). The naive
// SpMVT baseline of the Hola-SpMVT evaluation (Steinberger, Zayer & Seidel, ICS'17; the authors' code
// ships it too); the order of the additions into one y[j] varies from run to run
// (docs/algorithms/transpose.md).
#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). First value, not yet measured on the H100/H200.
struct TransposeAtomicPolicy {
  int block_size;
};
constexpr TransposeAtomicPolicy transpose_atomic_policy(int /*value_bytes*/) { return {256}; }

template <class Value, class Index>
__global__ void transpose_atomic_kernel(CsrView<Value, Index> a, Value alpha, const Value* __restrict__ x,
                                        Value* __restrict__ y) {
  // 64-bit counters: row + stride must not overflow a 32-bit Index near its limit.
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows; i += stride) {
    const Index row = static_cast<Index>(i);
    const Value scaled_x = alpha * __ldg(x + row);  // alpha*x_i once per row
    const Index end = a.row_ptr[row + 1];
    for (Index k = a.row_ptr[row]; k < end; ++k) atomicAdd(y + a.col_idx[k], a.values[k] * scaled_x);
  }
}

template <class Value, class Index>
class TransposeAtomic final : public CudaAlgorithm<Value, Index> {
 public:
  TransposeAtomic(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), block_(options.block_size > 0 ? options.block_size : transpose_atomic_policy(sizeof(Value)).block_size) {
    if (options.block_size < 0 || options.block_size > 1024)
      throw InvalidArgument("TransposeAtomic: block_size must be in [1, 1024] (0: policy), got " +
                            std::to_string(options.block_size));
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    scale_vector(beta, y, a_.cols, stream);  // y = beta*y (0 without reading y when beta == 0)
    transpose_atomic_kernel<<<grid_for(a_.rows, block_), block_, 0, stream>>>(a_, alpha, x, y);
    SPMV_CHECK_LAUNCH("transpose_atomic_kernel");
  }
  bool writes_workspace() const override { return false; }
  std::string policy() const override { return "block=" + std::to_string(block_) + " rows/thread=1 atomics=direct"; }

 private:
  CsrView<Value, Index> a_;
  int block_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_transpose_atomic(const CsrView<Value, Index>& matrix, Operation op,
                                                 const Options& options, cudaStream_t) {
  if (op != Operation::Transpose) throw unsupported_operation(Algorithm::TransposeAtomic, op);
  return std::make_unique<TransposeAtomic<Value, Index>>(matrix, options);
}

SPMV_INSTANTIATE_FACTORY(make_transpose_atomic)

}  // namespace spmv::cuda
