// ELLR-T of the semiring product (SemiringPlan, Algorithm::EllRVector): the SpMV's layout, rule and kernel body
// (ellr_vector.cuh: the group-T ELL with each row's length, converted once at plan time by the SpMV's conversion;
// T threads a row from Options.subwarp or the mean row length; Options.block_size; refused, with the SpMV's
// message, beyond the padding rule, Options.max_padding) with the semiring's ops. A row's T threads fold their
// strided slots from the semiring's zero and stop at the row's length, so padding (column -1) never enters a row;
// their partial results meet with ⊕ in a shuffle butterfly; y = the row's ⊕-sum. One launch, no atomics, no
// workspace: products on any number of streams may run at once, and each gives the same bits (a row's order is
// fixed by its lanes).
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/ellr_vector.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <int T, class Ops, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    semiring_ellr_vector_kernel(Index rows, const Index* __restrict__ col_idx, const Value* __restrict__ values,
                                const Index* __restrict__ row_length, const Value* __restrict__ x,
                                Value* __restrict__ y) {
  ellr_vector::rows<T, Ops>(rows, col_idx, values, row_length, x, y, PlainRow<Value>{});
}

template <class Value, class Index>
using Kernel = void (*)(Index, const Index*, const Value*, const Index*, const Value*, Value*);

template <class Ops, class Value, class Index>
class SemiringEllRVector final : public SemiringFormat<Value, Index> {
 public:
  SemiringEllRVector(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : layout_(a, options, stream) {
    ellr_vector::with_threads_per_row(layout_.threads_per_row, [&](auto t) {
      kernel_ = semiring_ellr_vector_kernel<decltype(t)::value, Ops, Value, Index>;
    });
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // converted before the plan returns
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    kernel_<<<layout_.grid(layout_.threads_per_row), layout_.block, 0, stream>>>(
        layout_.ell.rows, layout_.ell.col_idx.data(), layout_.ell.values.data(), layout_.row_length.data(), x, y);
    SPMV_CHECK_LAUNCH("semiring_ellr_vector_kernel");
  }
  std::string policy() const override { return "ellr-vector " + layout_.policy(); }
  std::size_t bytes() const override { return layout_.bytes(); }
  bool writes_workspace() const override { return false; }

 private:
  ellr_vector::Layout<Value, Index> layout_;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_ellr_vector(const CsrView<Value, Index>& a, Semiring s,
                                                          const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringEllRVector, Value, Index>(s, a, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_ellr_vector)

}  // namespace spmv::cuda
