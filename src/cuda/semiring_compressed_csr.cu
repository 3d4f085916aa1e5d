// Compressed CSR of the semiring product (SemiringPlan, Algorithm::CompressedCsr): the SpMV's layout, conversion and
// row walk (compressed_csr.cuh: slices of 32 rows stored column-major, uint16 row lengths, a base column a slice
// with 16- or 32-bit offsets, values as pattern, table + 8/16-bit codes or raw; converted once at plan time on the
// device with the plan's Options, block_size and max_padding) with the semiring's ops. The conversion refuses, with
// the SpMV's messages, a row of more than 65535 entries, a slice spanning 2^32 columns or more, and slots beyond the
// padding rule (Unsupported), and a block size that is not whole warps (InvalidArgument).
//
// One thread a row folds its entries in storage order (CSR's order) in one chain from the semiring's zero, up to
// the row's own length, so padding (offset 0, code 0) never enters a row and an empty row gives the zero; a pattern
// matrix's entries are 1, and a code's value is the table's entry with the stored value's bits, so min, max and
// or-and give the definition's bits, and plus-times the row loop's sum rounded as the device does (FMA). One
// launch, no atomics, no workspace: products on any number of streams may run at once, and each gives the same bits.
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/compressed_csr.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, CompressedValues kMode, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    semiring_compressed_csr_kernel(compressed_csr::View<Value, Index> m, const Value* __restrict__ x,
                                   Value* __restrict__ y) {
  compressed_csr::rows<Ops, kMode>(m, x, y, PlainRow<Value>{});
}

template <class Ops, class Value, class Index>
class SemiringCompressedCsr final : public SemiringFormat<Value, Index> {
 public:
  SemiringCompressedCsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : layout_(a, options, stream) {}  // the conversion synchronises `stream`

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    compressed_csr::with_mode(layout_.mode, [&](auto mode) {
      semiring_compressed_csr_kernel<Ops, decltype(mode)::value>
          <<<layout_.grid(), layout_.block, 0, stream>>>(layout_.view(), x, y);
    });
    SPMV_CHECK_LAUNCH("semiring_compressed_csr_kernel");
  }
  std::string policy() const override { return "compressed-csr " + layout_.policy(); }
  std::size_t bytes() const override { return layout_.bytes(); }
  bool writes_workspace() const override { return false; }

 private:
  compressed_csr::Layout<Value, Index> layout_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_compressed_csr(const CsrView<Value, Index>& a, Semiring s,
                                                             const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringCompressedCsr, Value, Index>(s, a, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_compressed_csr)

}  // namespace spmv::cuda
