// Cooperative CSR of the semiring product (SemiringPlan, Algorithm::CsrCoop): the SpMV's kernel body and fixed rule
// (csr_coop.cuh: `coop` lanes a row, `repeat` rows a group, block size; Options.block_size, coop and repeat where
// set) with the semiring's ops. A group's lanes fold their strided share of the row from the semiring's zero, then
// combine with ⊕ by a shuffle butterfly; y = the row's ⊕-sum. One launch, no workspace, no conversion: products on
// any number of streams may run at once, and each gives the same bits (a row's order is fixed by the lanes). A's
// arrays are read in place.
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/csr_coop.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <int C, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    semiring_csr_coop_kernel(CsrView<Value, Index> a, const Value* __restrict__ x, Value* __restrict__ y, int repeat) {
  csr_coop::rows<C, Ops>(a, x, y, repeat, PlainRow<Value>{});
}

template <class Value, class Index>
using Kernel = void (*)(CsrView<Value, Index>, const Value*, Value*, int);

template <class Ops, class Value, class Index>
class SemiringCsrCoop final : public SemiringFormat<Value, Index> {
 public:
  SemiringCsrCoop(const CsrView<Value, Index>& a, const Options& options)
      : a_(a), launch_(csr_coop::launch_for(a.rows, a.nnz, sizeof(Value), options)) {
    with_width<csr_coop::kMinCoop>(launch_.coop, [&](auto c) {
      kernel_ = semiring_csr_coop_kernel<decltype(c)::value, Ops, Value, Index>;
    });
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    const std::int64_t rows_per_block = std::int64_t(launch_.block / launch_.coop) * launch_.repeat;
    kernel_<<<grid_for(a_.rows, rows_per_block), launch_.block, 0, stream>>>(a_, x, y, launch_.repeat);
    SPMV_CHECK_LAUNCH("semiring_csr_coop_kernel");
  }
  std::string policy() const override { return "csr-coop " + csr_coop::policy_string(launch_, sizeof(Value)); }
  std::size_t bytes() const override { return 0; }
  bool writes_workspace() const override { return false; }

 private:
  CsrView<Value, Index> a_;
  csr_coop::Launch launch_;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_csr_coop(const CsrView<Value, Index>& a, Semiring s,
                                                       const Options& options, cudaStream_t) {
  return semiring_format::make_for<SemiringCsrCoop, Value, Index>(s, a, options);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_csr_coop)

}  // namespace spmv::cuda
