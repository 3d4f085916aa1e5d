// Hola-SpMV (Steinberger, Zayer & Seidel, "Globally Homogeneous, Locally Adaptive Sparse
// Matrix-Vector Multiplication on the GPU", ICS'17): plain CSR, no preprocessing. Every block gets the
// same number of nonzeros (global balancing, §3.1), every thread the same number inside its block
// (local balancing, §3.2), and each block adapts to the rows it happens to hold (§3.3). Two launches
// per product: hola_first_kernel (blockRowStarts + beta) and hola_spmv_kernel, so they can be timed
// apart (nsys). The building blocks live in hola_common.cuh; Hola-SpMVT (op = Transpose, and the
// buffered variant) in hola_transpose.cu. docs/algorithms/hola.md describes the design.
// The main kernel and one product's launches live in hola_spmv.cuh, written once for this SpMV and the semiring
// product (semiring_hola.cu): the same code with the (+, x) ops and the alpha/beta epilogue here.
#include "cuda/hola_common.cuh"
#include "cuda/hola_spmv.cuh"
#include "cuda/hola_transpose.cuh"

namespace spmv::cuda {
namespace hola {
namespace {

template <class Value, class Index>
class HolaSpmv final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  HolaSpmv(const CsrView<Value, Index>& a, const Options& options) : launch_(a, options) {
    first_kernel_ms_ = time_first_kernel(launch_.params(), Operation::NonTranspose, nullptr);
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    launch_.run(alpha, x, beta, y, stream);
  }

  // The first kernel rewrites block_row_starts_ with the same values every product: a concurrent
  // product reads them unchanged.
  bool writes_workspace() const override { return false; }
  std::string policy() const override { return launch_.policy() + first_kernel_note(first_kernel_ms_); }
  std::size_t extra_bytes() const override { return launch_.bytes(); }

 private:
  HolaSpmvLaunch<semiring_ops::PlusTimes<Real>, Value, Index> launch_;
  double first_kernel_ms_ = 0;
};

}  // namespace
}  // namespace hola

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_hola(const CsrView<Value, Index>& matrix, Operation op,
                                                const Options& options, cudaStream_t) {
  if constexpr (kHalfStored<Value>) {  // Hola-SpMVT is not built for half-precision values
    if (op == Operation::Transpose) throw unsupported_operation(Algorithm::Hola, op);
  } else {
    if (op == Operation::Transpose) return hola::make_hola_transpose<Value, Index>(matrix, options, false);
  }
  return std::make_unique<hola::HolaSpmv<Value, Index>>(matrix, options);
}
SPMV_INSTANTIATE_FACTORY(make_hola)
SPMV_INSTANTIATE_HALF_FACTORY(make_hola)

// The buffered Hola-SpMVT the paper evaluates; there is no buffered non-transposed variant (Hola's
// output buffer is always on for op = NonTranspose).
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hola_buffered(const CsrView<Value, Index>& matrix, Operation op,
                                              const Options& options, cudaStream_t) {
  if (op != Operation::Transpose) throw unsupported_operation(Algorithm::HolaBuffered, op);
  return hola::make_hola_transpose<Value, Index>(matrix, options, true);
}
SPMV_INSTANTIATE_FACTORY(make_hola_buffered)

}  // namespace spmv::cuda
