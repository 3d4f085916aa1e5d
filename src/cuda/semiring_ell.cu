// ELLPACK and ELLPACK-R of the semiring product (SemiringPlan, Algorithm::Ell and Algorithm::EllR): the ELL SpMV's
// layout (format_ell.cuh: Bell & Garland SC'09 column-major ELL, every row padded to the longest with column -1
// and value 0 after its entries; ELLPACK-R, Vázquez et al. 2011, keeps each row's length), converted once at plan
// time by the SpMV's conversion with the plan's Options (refused, with its message, beyond the padding rule:
// format::checked_ell_width), and the SpMV's one-thread-a-row walk with the semiring's ops
// (semiring_format_kernels.cuh): ELL walks every slot and skips padding by its column, ELL-R stops at the row's
// length. Padding never enters a row. One launch, no workspace: products on any number of streams may run at once.
#include <string>

#include "cuda/semiring_format_kernels.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
class SemiringEll final : public SemiringFormat<Value, Index> {
 public:
  SemiringEll(const CsrView<Value, Index>& a, bool stop_at_length, const Options& options, cudaStream_t stream)
      : stop_at_length_(stop_at_length) {
    const Index width =
        format::checked_ell_width(a, stop_at_length ? "ELL-R" : "ELL", Index(1), options, stream);
    ell_ = format::build_ell(a, width, 1, stream);
    if (stop_at_length) row_length_ = format::row_lengths(a.row_ptr, a.rows, stream);
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // converted before the plan returns
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    semiring_format::launch_ell<Ops>(ell_, stop_at_length_ ? row_length_.data() : nullptr, x, y, stream);
  }
  std::string policy() const override {
    return std::string(stop_at_length_ ? "ellr" : "ell") + " block=" + std::to_string(semiring_format::kThreads) +
           " width=" + std::to_string(ell_.width) + " unroll=" + std::to_string(format::kSlotUnroll) +
           (stop_at_length_ ? " stop=row_length" : " stop=width");
  }
  std::size_t bytes() const override { return ell_.bytes() + row_length_.bytes(); }
  bool writes_workspace() const override { return false; }

 private:
  bool stop_at_length_;
  format::EllStorage<Value, Index> ell_;
  DeviceBuffer<Index> row_length_;  // ELL-R only
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_ell(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream) {
  return semiring_format::make_for<SemiringEll, Value, Index>(s, a, /*stop_at_length=*/false, options, stream);
}

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_ellr(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream) {
  return semiring_format::make_for<SemiringEll, Value, Index>(s, a, /*stop_at_length=*/true, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_ell)
SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_ellr)

}  // namespace spmv::cuda
