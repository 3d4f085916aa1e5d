// CSR-scalar of the semiring product (SemiringPlan, Algorithm::CsrScalar): the SpMV's kernel body (csr_scalar.cuh:
// one thread a row, grid-stride over the rows, its entries ⊕-folded in storage order in one chain from the
// semiring's zero) with the semiring's ops, writing y = the row's ⊕-sum. The SpMV's block size (Options.block_size,
// else its policy). One launch, no workspace, no conversion: products on any number of streams may run at once,
// and each gives the same bits (one thread, one order a row). A's arrays are read in place.
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/csr_scalar.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
__global__ void semiring_csr_scalar_kernel(CsrView<Value, Index> a, const Value* __restrict__ x,
                                           Value* __restrict__ y) {
  csr_scalar::rows<Ops>(a, x, y, PlainRow<Value>{});
}

template <class Ops, class Value, class Index>
class SemiringCsrScalar final : public SemiringFormat<Value, Index> {
 public:
  SemiringCsrScalar(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), block_(csr_scalar::block_size(options.block_size, sizeof(Value))) {}

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    semiring_csr_scalar_kernel<Ops><<<grid_for(a_.rows, block_), block_, 0, stream>>>(a_, x, y);
    SPMV_CHECK_LAUNCH("semiring_csr_scalar_kernel");
  }
  std::string policy() const override { return "csr-scalar block=" + std::to_string(block_); }
  std::size_t bytes() const override { return 0; }
  bool writes_workspace() const override { return false; }

 private:
  CsrView<Value, Index> a_;
  int block_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_csr_scalar(const CsrView<Value, Index>& a, Semiring s,
                                                         const Options& options, cudaStream_t) {
  return semiring_format::make_for<SemiringCsrScalar, Value, Index>(s, a, options);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_csr_scalar)

}  // namespace spmv::cuda
