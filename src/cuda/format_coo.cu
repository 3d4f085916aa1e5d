// COO (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, COO format): one (row, column, value) triple per entry and a segmented reduction over
// the entries sorted by row, so the work per entry is the same whatever the row lengths. The segmented
// reduction is cub::DeviceReduce::ReduceByKey (decoupled look-back, one pass) into a compact list of row
// sums; an epilogue applies alpha / beta (format_coo.cuh).
//
// Conversion at plan time: the row indices are expanded from row_ptr on the device (head marks + max-scan),
// the rows holding entries are listed by cub::DevicePartition. The column and value arrays of the CSR input
// are already the COO's (same order), so they are used in place: the plan holds only the row indices, the
// row list, the per-row sums and CUB's temporary storage (extra_bytes()).
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy of the epilogue (tuning as data; ReduceByKey runs under CUB's own tuned policy).
// 256 threads: a first value, to be tuned on the H100/H200.
struct CooPolicy {
  int block_size;
};
constexpr CooPolicy coo_policy(int /*value_bytes*/) { return {256}; }

template <class Value, class Index>
class Coo final : public CudaAlgorithm<Value, Index> {
 public:
  Coo(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : block_(format::resolve_block_size(options.block_size, coo_policy(sizeof(Value)).block_size, "coo")),
        row_idx_(static_cast<std::size_t>(a.nnz)),
        row_list_(static_cast<std::size_t>(a.rows)) {
    format::expand_row_indices(a.row_ptr, a.rows, a.nnz, row_idx_.data(), stream);
    const auto runs = static_cast<Index>(format::partition_rows(a.row_ptr, a.rows, Index(0), row_list_.data(), stream));
    product_ = format::CooProduct<Value, Index>(row_idx_.data(), a.col_idx, a.values, a.nnz, row_list_.data(), runs,
                                                a.rows - runs, /*accumulate=*/false, block_);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    product_.apply(alpha, x, beta, y, stream);
  }
  std::string policy() const override {
    return "reduce_by_key=cub epilogue_block=" + std::to_string(block_) +
           " nonempty_rows=" + std::to_string(product_.runs());
  }
  std::size_t extra_bytes() const override { return row_idx_.bytes() + row_list_.bytes() + product_.bytes(); }

 private:
  int block_;
  DeviceBuffer<Index> row_idx_;   // nnz: the row of each entry (the COO row array)
  DeviceBuffer<Index> row_list_;  // rows: non-empty rows ascending, then the empty rows
  format::CooProduct<Value, Index> product_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_coo(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                    cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Coo, op);
  return std::make_unique<Coo<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_coo)

}  // namespace spmv::cuda
