// HYB of the semiring product (SemiringPlan, Algorithm::Hyb): the HYB SpMV's split (format_hyb.cuh: Bell & Garland
// SC'09, a row's first K entries in ELL, K by their rule, the rest in COO sorted by row), converted once at plan
// time with the plan's Options (hyb_ell_width, max_padding), and two launches a product: the ELL walk writes every row's ELL part folded from
// the semiring's zero (padding skipped by its column), then the COO overflow is reduced run by run and ⊕-added into
// its rows (y[row] = y[row] ⊕ run, not the SpMV's +=; semiring_format_kernels.cuh's CooFold). min, max and or-and
// give the definition's values (exact in any order); plus-times folds a row's ELL part in storage order and adds
// the sum of its overflow (CUB's order). The COO part's per-run results are a workspace.
#include <string>

#include "cuda/common/format_hyb.cuh"
#include "cuda/semiring_format_kernels.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
class SemiringHyb final : public SemiringFormat<Value, Index> {
 public:
  SemiringHyb(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : m_(format::build_hyb(a, options, stream)) {
    if (m_.coo_nnz > 0)
      coo_ = semiring_format::CooFold<Ops, Value, Index>(m_.coo_row.data(), m_.coo_col.data(), m_.coo_val.data(),
                                                         m_.coo_nnz, m_.overflow_rows.data(),
                                                         static_cast<Index>(m_.overflow_rows.size()), Index(0),
                                                         /*accumulate=*/true);
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    semiring_format::launch_ell<Ops>(m_.ell, static_cast<const Index*>(nullptr), x, y, stream);
    if (m_.coo_nnz > 0) coo_.apply(x, y, stream);
  }
  std::string policy() const override {
    return "hyb block=" + std::to_string(semiring_format::kThreads) + " ell_width=" + std::to_string(m_.ell.width) +
           " (Bell & Garland rule) coo_entries=" + std::to_string(m_.coo_nnz) +
           " coo_rows=" + std::to_string(m_.overflow_rows.size());
  }
  std::size_t bytes() const override { return m_.bytes() + coo_.bytes(); }
  bool writes_workspace() const override { return m_.coo_nnz > 0; }  // the COO part's runs and CUB's scratch

 private:
  format::HybStorage<Value, Index> m_;
  semiring_format::CooFold<Ops, Value, Index> coo_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_hyb(const CsrView<Value, Index>& a, Semiring s,
                                                  const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringHyb, Value, Index>(s, a, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_hyb)

}  // namespace spmv::cuda
