// LightSpMV (Liu & Schmidt, "LightSpMV: faster CSR-based sparse matrix-vector multiplication on
// CUDA-enabled GPUs", ASAP 2015): rows are handed out at run time through a global atomic row
// counter instead of a static row -> warp mapping, so warps that drew short rows simply fetch more.
// This is the paper's warp-level dynamic row distribution (faster than its vector-level one): lane 0
// of a warp fetches rows for all the warp's vectors with one atomicAdd, a shuffle broadcasts the first
// row, each vector of V lanes takes its row, walks it (warp_row.cuh) and reduces it with shuffles.
// The grid is just large enough to fill the GPU with resident warps.
#include "core/semiring_ops.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/lightspmv.cuh"

namespace spmv::cuda {
namespace {

using lightspmv::RowCounter;

// The launch rule and the row loop are lightspmv.cuh's, shared with the semiring product (semiring_lightspmv.cu):
// plus-times here, then y = alpha * sum + beta * y.
template <int V, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    lightspmv_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                     compute_t<Value> beta, compute_t<Value>* __restrict__ y,
                     RowCounter<Index>* __restrict__ row_counter) {
  using Real = compute_t<Value>;
  lightspmv::rows<V, semiring_ops::PlusTimes<Real>>(a, x, y, row_counter, ScaledRow<Real>{alpha, beta});
}

template <class Value, class Index, class Real = compute_t<Value>>
using Kernel = void (*)(CsrView<Value, Index>, Real, const Real*, Real, Real*, RowCounter<Index>*);

template <class Value, class Index>
class LightSpmv final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  LightSpmv(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), counter_(1), launch_(lightspmv::launch_for(a.rows, a.nnz, sizeof(Value), options)) {
    with_width<2>(launch_.vector, [&](auto v) { kernel_ = lightspmv_kernel<decltype(v)::value, Value, Index>; });
    lightspmv::size_grid(launch_, a.rows, kernel_);
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    // Reset on the stream (not at construction) so every apply, and every replay of a captured graph,
    // starts from row 0.
    SPMV_CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, counter_.bytes(), stream));
    kernel_<<<launch_.grid, launch_.block, 0, stream>>>(a_, alpha, x, beta, y, counter_.data());
    SPMV_CHECK_LAUNCH("lightspmv_kernel");
  }

  bool reproducible() const override { return true; }
  std::string policy() const override { return lightspmv::policy_string(launch_, sizeof(Value)); }
  std::size_t extra_bytes() const override { return counter_.bytes(); }

 private:
  CsrView<Value, Index> a_;
  DeviceBuffer<RowCounter<Index>> counter_;
  lightspmv::Launch launch_;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_lightspmv(const CsrView<Value, Index>& matrix, Operation op,
                                                     const Options& options, cudaStream_t) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::LightSpmv, op);
  return std::make_unique<LightSpmv<Value, Index>>(matrix, options);
}

SPMV_INSTANTIATE_FACTORY(make_lightspmv)
SPMV_INSTANTIATE_HALF_FACTORY(make_lightspmv)

}  // namespace spmv::cuda
