// CSR-scalar (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, §3.4): one thread per row. Simple and fast for short, even rows; a warp's
// loads are uncoalesced when rows are long.
#include "core/semiring_ops.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/csr_scalar.cuh"

namespace spmv::cuda {
namespace {

// The row loop is csr_scalar.cuh's, shared with the semiring product (semiring_csr_scalar.cu): plus-times here,
// then y = alpha * sum + beta * y.
template <class Value, class Index>
__global__ void csr_scalar_kernel(CsrView<Value, Index> a, compute_t<Value> alpha,
                                  const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                                  compute_t<Value>* __restrict__ y) {
  using Real = compute_t<Value>;
  csr_scalar::rows<semiring_ops::PlusTimes<Real>>(a, x, y, ScaledRow<Real>{alpha, beta});
}

template <class Value, class Index>
class CsrScalar final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrScalar(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), block_(csr_scalar::block_size(options.block_size, sizeof(Value))) {}

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
