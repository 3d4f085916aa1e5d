// Cooperative CSR (Reguly & Giles, "Efficient sparse matrix-vector multiplication on cache-based
// GPUs", InPar 2012): `coop` threads share a row, a group of coop threads handles `repeat` rows of its
// block's tile, and the three parameters (coop, repeat, block size) come from a fixed rule of the
// matrix's mean row length and row count (the paper's "fixed rule", which needs no run-time tuning).
// The row walk and reduction are the shared sub-warp ones (warp_row.cuh, warp_reduce.cuh):
// shuffles instead of the paper's shared-memory reduction, and unrolled loads for Hopper.
#include "core/semiring_ops.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/csr_coop.cuh"

namespace spmv::cuda {
namespace {

// The fixed rule and the row walk are csr_coop.cuh's, shared with the semiring product (semiring_csr_coop.cu):
// plus-times here, then y = alpha * sum + beta * y.
template <int C, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_coop_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                    compute_t<Value> beta, compute_t<Value>* __restrict__ y, int repeat) {
  using Real = compute_t<Value>;
  csr_coop::rows<C, semiring_ops::PlusTimes<Real>>(a, x, y, repeat, ScaledRow<Real>{alpha, beta});
}

template <class Value, class Index, class Real = compute_t<Value>>
using Kernel = void (*)(CsrView<Value, Index>, Real, const Real*, Real, Real*, int);

template <class Value, class Index>
class CsrCoop final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrCoop(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), launch_(csr_coop::launch_for(a.rows, a.nnz, sizeof(Value), options)) {
    with_width<csr_coop::kMinCoop>(launch_.coop,
                                   [&](auto c) { kernel_ = csr_coop_kernel<decltype(c)::value, Value, Index>; });
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    const std::int64_t rows_per_block = std::int64_t(launch_.block / launch_.coop) * launch_.repeat;
    kernel_<<<grid_for(a_.rows, rows_per_block), launch_.block, 0, stream>>>(a_, alpha, x, beta, y, launch_.repeat);
    SPMV_CHECK_LAUNCH("csr_coop_kernel");
  }

  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override { return csr_coop::policy_string(launch_, sizeof(Value)); }

 private:
  CsrView<Value, Index> a_;
  csr_coop::Launch launch_;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_csr_coop(const CsrView<Value, Index>& matrix, Operation op,
                                                    const Options& options, cudaStream_t) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CsrCoop, op);
  return std::make_unique<CsrCoop<Value, Index>>(matrix, options);
}

SPMV_INSTANTIATE_FACTORY(make_csr_coop)
SPMV_INSTANTIATE_HALF_FACTORY(make_csr_coop)

}  // namespace spmv::cuda
