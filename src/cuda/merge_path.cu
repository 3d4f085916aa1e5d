// Merge-based SpMV (Merrill & Garland, "Merge-based Parallel Sparse Matrix-Vector Multiplication",
// SC'16, §4), structured like CUB's former DeviceSpmv (AgentSpmv + segment fix-up):
//  - the merge path of (row end offsets, nonzero indices), rows + nnz steps, is cut into tiles of
//    block_threads * items_per_thread steps; the tile boundaries are found once at plan time by the
//    diagonal search (§4.1);
//  - a block stages its tile's row end offsets and products in shared memory, each thread finds its
//    start with a diagonal search in shared memory and consumes items_per_thread steps, emitting the
//    rows it finishes and carrying out a partial (row, sum);
//  - the carry-outs are fixed up within the block by a cub::BlockScan reduce-by-key over (row, sum)
//    pairs, rows finished in the tile are written to y coalesced, and the tile's own carry-out (the
//    partial sum of the row still open at its end) goes to a workspace;
//  - a second small kernel adds alpha * carry into y for every tile carry-out.
// Equal work per block whatever the row lengths: empty rows and one huge row are handled by
// construction. docs/algorithms/merge_path.md has the details.
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/adaptive_block_threads.cuh"
#include "cuda/merge_path.cuh"

namespace spmv::cuda {
namespace {

template <class Value, class Index>
class MergePath final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  MergePath(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_block_threads(options.block_size, merge_path::policy_for(sizeof(Value)).block_threads,
                                       "MergePath")),
        items_per_thread_(with_block_threads(
            threads_, [](auto threads) { return merge_path::items_per_thread<decltype(threads)::value, Real>(); })),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        tiles_(a.row_ptr, a.rows, a.nnz, tile_items(), stream) {}

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    with_block_threads(threads_, [&](auto threads) {
      tiles_.template run<decltype(threads)::value, semiring_ops::PlusTimes<Real>>(
          a_, aligned_, merge_path::ScaledRows<Real>{alpha, beta}, x, y, stream);
    });
  }

  std::string policy() const override {
    return "block=" + std::to_string(threads_) + " items_per_thread=" + std::to_string(items_per_thread_) +
           " tiles=" + std::to_string(tiles_.count()) + " vector_loads=" + (aligned_ ? "on" : "off");
  }
  std::size_t extra_bytes() const override { return tiles_.bytes(); }

 private:
  long long tile_items() const { return static_cast<long long>(threads_) * items_per_thread_; }

  CsrView<Value, Index> a_;
  int threads_;
  int items_per_thread_;
  bool aligned_;
  merge_path::Tiles<Real, Index> tiles_;  // after threads_ and items_per_thread_: built from them
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_merge_path(const CsrView<Value, Index>& matrix, Operation op,
                                                      const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::MergePath, op);
  return std::make_unique<MergePath<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_merge_path)
SPMV_INSTANTIATE_HALF_FACTORY(make_merge_path)

}  // namespace spmv::cuda
