// HYB (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, hybrid ELL/COO format): the first K entries of every row in ELL (column-major, one
// thread per row), the rest in COO (a segmented reduction over the overflow entries). The ELL kernel writes
// y = alpha * A_ell * x + beta * y for every row, then the COO part adds alpha * A_coo * x to the rows that
// overflow (format_coo.cuh, accumulate mode): two launches of deterministic sums, no atomics.
//
// Conversion on the device at plan time (format_hyb.cuh, shared with the semiring product): the Bell & Garland
// width K from a row-length histogram, the ELL part, and the overflow scattered into a COO part sorted by row.
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/common/format_hyb.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data): the ELL kernel and the COO epilogue, 256 threads per block, a first value
// to be tuned on the H100/H200.
struct HybPolicy {
  int block_size;
};
constexpr HybPolicy hyb_policy(int /*value_bytes*/) { return {256}; }

template <class Value, class Index>
class Hyb final : public CudaAlgorithm<Value, Index> {
 public:
  Hyb(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : block_(format::resolve_block_size(options.block_size, hyb_policy(sizeof(Value)).block_size, "hyb")) {
    m_ = format::build_hyb(a, options, stream);
    if (m_.coo_nnz > 0)
      coo_ = format::CooProduct<Value, Index>(m_.coo_row.data(), m_.coo_col.data(), m_.coo_val.data(), m_.coo_nnz,
                                              m_.overflow_rows.data(), static_cast<Index>(m_.overflow_rows.size()),
                                              Index(0), /*accumulate=*/true, block_);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    format::launch_ell_product(m_.ell, static_cast<const Index*>(nullptr), block_, alpha, x, beta, y, stream);
    if (m_.coo_nnz > 0) coo_.apply(alpha, x, beta, y, stream);
  }
  bool writes_workspace() const override { return m_.coo_nnz > 0; }  // the COO part's sums and CUB scratch
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " ell_width=" + std::to_string(m_.ell.width) +
           (m_.width_from_rule ? " (Bell & Garland rule)" : " (hyb_ell_width)") +
           " coo_entries=" + std::to_string(m_.coo_nnz) + " coo_rows=" + std::to_string(m_.overflow_rows.size());
  }
  std::size_t extra_bytes() const override { return m_.bytes() + coo_.bytes(); }

 private:
  int block_;
  format::HybStorage<Value, Index> m_;  // the ELL part, and the COO part sorted by row
  format::CooProduct<Value, Index> coo_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hyb(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                    cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Hyb, op);
  return std::make_unique<Hyb<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_hyb)

}  // namespace spmv::cuda
