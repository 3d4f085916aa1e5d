// Compressed CSR (layout in spmv/formats.hpp, docs/algorithms/formats.md): the SpMV over compressed_csr.cuh's
// layout, converted on the device (inside the factory, hence in Plan::setup_ms()) into exactly the layout of the host
// conversion spmv::to_compressed_csr that CI checks, and its row walk (one thread per row, one warp per slice, each
// row walked up to its own length so padding is never read) with plus-times and y = alpha * sum + beta * y. The
// semiring product (semiring_compressed_csr.cu) runs the same walk over the same conversion with the semiring's ops.
// The point is bytes: a stencil in f64 reads 2 (column) + 1 (code) bytes per nonzero instead of 12.
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/compressed_csr.cuh"

namespace spmv::cuda {
namespace {

// The row walk is compressed_csr.cuh's, shared with the semiring product: plus-times here, then
// y = alpha * sum + beta * y.
template <CompressedValues kMode, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    compressed_csr_kernel(compressed_csr::View<Value, Index> m, Value alpha, const Value* __restrict__ x, Value beta,
                          Value* __restrict__ y) {
  compressed_csr::rows<semiring_ops::PlusTimes<Value>, kMode>(m, x, y, ScaledRow<Value>{alpha, beta});
}

template <class Value, class Index>
class CompressedCsr final : public CudaAlgorithm<Value, Index> {
 public:
  CompressedCsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : layout_(a, options, stream) {}

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    compressed_csr::with_mode(layout_.mode, [&](auto mode) {
      compressed_csr_kernel<decltype(mode)::value>
          <<<layout_.grid(), layout_.block, 0, stream>>>(layout_.view(), alpha, x, beta, y);
    });
    SPMV_CHECK_LAUNCH("compressed_csr_kernel");
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override { return layout_.policy() + " conversion=device"; }
  std::size_t extra_bytes() const override { return layout_.bytes(); }

 private:
  compressed_csr::Layout<Value, Index> layout_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_compressed_csr(const CsrView<Value, Index>& matrix, Operation op,
                                               const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CompressedCsr, op);
  return std::make_unique<CompressedCsr<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_compressed_csr)

}  // namespace spmv::cuda
