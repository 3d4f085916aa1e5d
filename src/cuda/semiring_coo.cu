// COO of the semiring product (SemiringPlan, Algorithm::Coo): the COO SpMV's arrays (format_coo.cuh: the row of
// each entry expanded from row_ptr on the device, the CSR's columns and values used in place, the rows holding
// entries listed ascending by cub::DevicePartition), built once at plan time, and its segmented reduction with the
// semiring's ops: cub::DeviceReduce::ReduceByKey folds each run of equal rows with ⊕ over the terms a_k ⊗ x[col_k],
// then one thread a row writes it (the zero for the rows without entries; semiring_format_kernels.cuh's CooFold).
//
// Why a segmented reduction and not atomics into y: it is deterministic (no atomics; CUB documents ReduceByKey as
// run-to-run deterministic), each row is written once, and it is the SpMV COO's own reduction with ⊕ in place of
// +, so the work per entry stays the same whatever the row lengths (one huge row is split among CUB's tiles). A
// compare-and-swap loop on the value's bits (merge_path.cuh's, for min, max and or) would have given the same
// values for those semirings, but plus-times's bits would depend on timing, and y would first need the zero
// written by another launch. The per-run results and CUB's scratch are a workspace: the plan orders products on
// different streams.
#include <string>

#include "cuda/semiring_format_kernels.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
class SemiringCoo final : public SemiringFormat<Value, Index> {
 public:
  SemiringCoo(const CsrView<Value, Index>& a, cudaStream_t stream)
      : row_idx_(static_cast<std::size_t>(a.nnz)), row_list_(static_cast<std::size_t>(a.rows)) {
    format::expand_row_indices(a.row_ptr, a.rows, a.nnz, row_idx_.data(), stream);
    const auto runs = static_cast<Index>(format::partition_rows(a.row_ptr, a.rows, Index(0), row_list_.data(), stream));
    coo_ = semiring_format::CooFold<Ops, Value, Index>(row_idx_.data(), a.col_idx, a.values, a.nnz, row_list_.data(),
                                                       runs, a.rows - runs, /*accumulate=*/false);
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override { coo_.apply(x, y, stream); }
  std::string policy() const override {
    return "coo reduce_by_key=cub fold_block=" + std::to_string(semiring_format::kThreads) +
           " nonempty_rows=" + std::to_string(coo_.runs());
  }
  std::size_t bytes() const override { return row_idx_.bytes() + row_list_.bytes() + coo_.bytes(); }
  bool writes_workspace() const override { return true; }  // the runs' results and CUB's scratch

 private:
  DeviceBuffer<Index> row_idx_;   // nnz: the row of each entry (the COO row array)
  DeviceBuffer<Index> row_list_;  // rows: the non-empty rows ascending, then the empty rows
  semiring_format::CooFold<Ops, Value, Index> coo_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_coo(const CsrView<Value, Index>& a, Semiring s,
                                                  const Options& /*no knob*/, cudaStream_t stream) {
  return semiring_format::make_for<SemiringCoo, Value, Index>(s, a, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_coo)

}  // namespace spmv::cuda
