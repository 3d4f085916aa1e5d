// CSR-scalar (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, §3.4): one thread per row. Simple and fast for short, even rows; a warp's
// loads are uncoalesced when rows are long.
#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). block_size: first value, to be tuned on the H100/H200.
struct CsrScalarPolicy {
  int block_size;
};
constexpr CsrScalarPolicy csr_scalar_policy(int /*value_bytes*/) { return {256}; }

template <class Value, class Index>
__global__ void csr_scalar_kernel(CsrView<Value, Index> a, compute_t<Value> alpha,
                                  const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                                  compute_t<Value>* __restrict__ y) {
  // Grid-stride over rows so any grid size is correct.
  for (Index row = blockIdx.x * Index(blockDim.x) + threadIdx.x; row < a.rows; row += Index(gridDim.x) * blockDim.x) {
    compute_t<Value> sum = 0;
    const Index end = a.row_ptr[row + 1];
    for (Index k = a.row_ptr[row]; k < end; ++k) sum += widen(a.values[k]) * __ldg(x + a.col_idx[k]);
    y[row] = axpby(alpha, sum, beta, y, row);
  }
}

template <class Value, class Index>
class CsrScalar final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrScalar(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), block_(options.block_size > 0 ? options.block_size : csr_scalar_policy(sizeof(Value)).block_size) {}

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    csr_scalar_kernel<<<grid_for(a_.rows, block_), block_, 0, stream>>>(a_, alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("csr_scalar_kernel");
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override { return "block=" + std::to_string(block_); }

 private:
  CsrView<Value, Index> a_;
  int block_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_csr_scalar(const CsrView<Value, Index>& matrix, Operation op,
                                                      const Options& options, cudaStream_t) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CsrScalar, op);
  return std::make_unique<CsrScalar<Value, Index>>(matrix, options);
}

SPMV_INSTANTIATE_FACTORY(make_csr_scalar)
SPMV_INSTANTIATE_HALF_FACTORY(make_csr_scalar)

}  // namespace spmv::cuda
