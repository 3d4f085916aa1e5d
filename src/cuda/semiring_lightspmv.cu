// LightSpMV of the semiring product (SemiringPlan, Algorithm::LightSpmv): the SpMV's kernel body and launch rule
// (lightspmv.cuh: rows handed out at run time by a global atomic row counter, a warp's vectors of V lanes each
// taking a row; Options.block_size and subwarp where set) with the semiring's ops. A vector's lanes fold their
// strided share of the row from the semiring's zero, then combine with ⊕ by a shuffle butterfly; y = the row's
// ⊕-sum. Which vector takes a row depends on timing, a row's result does not: every product gives the same bits.
// The row counter is a workspace (zeroed on the stream before each launch), so the plan orders products of one
// plan on different streams. A's arrays are read in place.
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/lightspmv.cuh"
#include "cuda/semiring_formats.cuh"
#include "spmv/cuda/device_buffer.hpp"

namespace spmv::cuda {
namespace {

template <int V, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    semiring_lightspmv_kernel(CsrView<Value, Index> a, const Value* __restrict__ x, Value* __restrict__ y,
                              lightspmv::RowCounter<Index>* __restrict__ row_counter) {
  lightspmv::rows<V, Ops>(a, x, y, row_counter, PlainRow<Value>{});
}

template <class Value, class Index>
using Kernel = void (*)(CsrView<Value, Index>, const Value*, Value*, lightspmv::RowCounter<Index>*);

template <class Ops, class Value, class Index>
class SemiringLightSpmv final : public SemiringFormat<Value, Index> {
 public:
  SemiringLightSpmv(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), counter_(1), launch_(lightspmv::launch_for(a.rows, a.nnz, sizeof(Value), options)) {
    with_width<2>(launch_.vector,
                  [&](auto v) { kernel_ = semiring_lightspmv_kernel<decltype(v)::value, Ops, Value, Index>; });
    lightspmv::size_grid(launch_, a.rows, kernel_);
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    // Reset on the stream so every product, and every replay of a captured graph, starts from row 0.
    SPMV_CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, counter_.bytes(), stream));
    kernel_<<<launch_.grid, launch_.block, 0, stream>>>(a_, x, y, counter_.data());
    SPMV_CHECK_LAUNCH("semiring_lightspmv_kernel");
  }
  std::string policy() const override { return "lightspmv " + lightspmv::policy_string(launch_, sizeof(Value)); }
  std::size_t bytes() const override { return counter_.bytes(); }
  bool writes_workspace() const override { return true; }  // the row counter

 private:
  CsrView<Value, Index> a_;
  DeviceBuffer<lightspmv::RowCounter<Index>> counter_;
  lightspmv::Launch launch_;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_lightspmv(const CsrView<Value, Index>& a, Semiring s,
                                                        const Options& options, cudaStream_t) {
  return semiring_format::make_for<SemiringLightSpmv, Value, Index>(s, a, options);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_lightspmv)

}  // namespace spmv::cuda
