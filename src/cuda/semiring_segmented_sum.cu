// Segmented sum of the semiring product (SemiringPlan, Algorithm::SegmentedSum): the segmented-sum SpMV's tiles and
// kernels (segmented_sum.cuh; segmented_sum.cu has the design: warp tiles of 32 * K nonzeros, a bit a nonzero where
// its row ends) with the semiring's ops. A lane folds its K terms a_k ⊗ x[col_k] with ⊕ from the zero and writes the
// rows that end inside it; a warp segmented scan (cub::WarpScan, ⊕ restarting where a row ended) hands each lane the
// fold of the row open at its start; the row open at the tile's end is the tile's carry, a workspace, ⊕-added into
// that row by a second kernel after every tile has written its rows: a compare-and-swap loop on the value's bits for
// min, max and or (row_output.cuh's atomic_add: exact in any order, so they give the definition's values), atomicAdd
// for plus-times (not bit-reproducible for a row that spans three or more tiles, as the SpMV). The spare warps of
// the launch write the semiring's zero into the empty rows. Products on different streams are ordered by the plan
// (the carries). Options read: block_size (a multiple of 32 up to 1024), as the SpMV.
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/segmented_sum.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
class SemiringSegmentedSum final : public SemiringFormat<Value, Index> {
  static constexpr int K = kLaneItems<Value>;

 public:
  SemiringSegmentedSum(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        block_(warp_block_size(options.block_size, kDefaultBlock, "SegmentedSum")),
        tiles_(a, /*carries=*/true, stream) {
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the tiles built before the plan returns
  }

  // alpha = 1 and beta = 0 for plus-times (row_output.cuh: the SpMV's instantiation, y = the sum), unread otherwise.
  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    tiles_.template run<Ops>(a_, Value(1), x, Value(0), y, block_, stream);
  }
  std::string policy() const override {
    return "segmented-sum block=" + std::to_string(block_) + " nonzeros_per_lane=" + std::to_string(K) +
           " tiles=" + std::to_string(tiles_.count()) + " empty_rows=" + std::to_string(tiles_.empty_rows()) +
           " vector_loads=" + (tiles_.aligned() ? "on" : "off") +
           (kIsPlusTimes<Ops> ? " (carries added with atomics: not bit-reproducible)"
                              : " (carries ⊕-added with compare-and-swap: exact)");
  }
  std::size_t bytes() const override { return tiles_.bytes(); }
  bool writes_workspace() const override { return true; }  // the tiles' carries

 private:
  CsrView<Value, Index> a_;
  int block_;
  SegmentedTiles<K, Value, Index> tiles_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_segmented_sum(const CsrView<Value, Index>& a, Semiring s,
                                                            const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringSegmentedSum, Value, Index>(s, a, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_segmented_sum)

}  // namespace spmv::cuda
