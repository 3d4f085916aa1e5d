// Segmented sum over nonzero-balanced warp tiles, with one bit per nonzero marking where rows end (the
// bit-field row descriptors of MERBIT, arXiv 2605.07391, on plain CSR; issue 13's power-law class):
//  - the nonzeros are cut into tiles of 32 * K, one warp each (K = 8 in float, 4 in double: a lane reads
//    32 bytes of values with two 16-byte loads and has K gathers of x in flight): equal work per warp
//    whatever the row lengths, no search at run time;
//  - at plan time a bit marks each row's last nonzero, and each tile gets the number of the row open at
//    its start (a prefix count of those bits): 1/8 byte per nonzero, where COO reads a 4-byte row index
//    and merge-path searches the row offsets;
//  - a lane sums its K products in order and writes the rows that end inside it; a warp segmented scan
//    (cub::WarpScan) hands each lane the partial sum of the row open at its start; the row still open at
//    the tile's end is the tile's carry, added into y by a second small kernel (merge-path's fix-up);
//  - when rows are empty, the bits number the non-empty rows only and a plan-time list (one index per
//    row: the non-empty rows in order, then the empty ones) maps them to rows; threads beyond the tiles'
//    warps, in the same launch, write y = alpha * 0 + beta * y on the empty ones (as CSR gives them).
// Carries meet in atomics: not bit-reproducible for rows that span three or more tiles.
// A^T x (no copy of A) reads the same tiles in stripes: segmented_sum_transpose_kernel below.
// The product kernels and the tiles live in segmented_sum.cuh, written once for this SpMV and the semiring product
// (semiring_segmented_sum.cu): the same code with the (+, x) ops and the alpha/beta epilogue here.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/segmented_sum.cuh"

namespace spmv::cuda {
namespace {

// y += alpha * A^T x after y = beta * y (scale_vector), on the same tiles and bits, without a copy of A.
// A tile is read in K stripes of 32 consecutive nonzeros, one a lane: the loads are coalesced, and where
// a row's columns lie close together the warp's atomic adds into y fall on a few lines, where
// Hola-SpMVT's lanes, each owning a run of consecutive nonzeros, scatter 32 far-apart addresses an
// instruction (every atomic then a request of its own to L2, the bound of these products; docs/
// PERFORMANCE.md "What bounds scattered gathers and scatters"). A nonzero's row is the tile's first row
// plus the row ends before it: the earlier stripes' bits and this stripe's bits below the lane.
template <int K, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    segmented_sum_transpose_kernel(CsrView<Value, Index> a, Value alpha, const Value* __restrict__ x,
                                   Value* __restrict__ y, Tiles<Value, Index> t) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const unsigned below = (1u << lane) - 1u;
  const auto nnz = static_cast<std::int64_t>(a.nnz);
  for (std::int64_t tile = global_thread() / 32; tile < t.count; tile += grid_threads() / 32) {  // warp-uniform
    const std::int64_t first = tile * (32 * K) + lane;
    Value v[K];
    Index c[K];
    unsigned bits[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {  // every load of the tile in flight before the first gather
      const std::int64_t n = first + 32 * k;
      v[k] = n < nnz ? __ldcs(a.values + n) : Value(0);
      c[k] = n < nnz ? __ldcs(a.col_idx + n) : Index(0);
      bits[k] = __ldg(t.ends + tile * K + k);
    }
    std::int64_t row = __ldg(t.first_row + tile);  // non-empty rows ended before the stripe
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (first + 32 * k < nnz) {
        const std::int64_t r = row_at(t.row_of, row + __popc(bits[k] & below));
        atomicAdd(y + c[k], alpha * v[k] * __ldg(x + r));
      }
      row += __popc(bits[k]);
    }
  }
}

template <int K, class Value, class Index>
class SegmentedSum final : public CudaAlgorithm<Value, Index> {
 public:
  SegmentedSum(const CsrView<Value, Index>& a, Operation op, const Options& options, cudaStream_t stream)
      : a_(a),
        op_(op),
        block_(warp_block_size(options.block_size, kDefaultBlock, "SegmentedSum")),
        tiles_(a, /*carries=*/op == Operation::NonTranspose, stream) {}

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    if (op_ == Operation::Transpose) {
      scale_vector(beta, y, a_.cols, stream);
      if (tiles_.count() == 0) return;
      const std::int64_t tile_blocks = std::min<std::int64_t>(grid_for(tiles_.count() * 32, block_), INT_MAX / 2);
      segmented_sum_transpose_kernel<K><<<static_cast<unsigned>(tile_blocks), block_, 0, stream>>>(a_, alpha, x, y,
                                                                                                   tiles_.view());
      SPMV_CHECK_LAUNCH("segmented_sum_transpose_kernel");
      return;
    }
    tiles_.template run<semiring_ops::PlusTimes<Value>>(a_, alpha, x, beta, y, block_, stream);
  }

  std::string policy() const override {
    return "block=" + std::to_string(block_) + " nonzeros_per_lane=" + std::to_string(K) +
           " tiles=" + std::to_string(tiles_.count()) + " empty_rows=" + std::to_string(tiles_.empty_rows()) +
           (op_ == Operation::Transpose ? std::string(" transpose=stripes (atomic scatter: not bit-reproducible)")
                                        : " vector_loads=" + std::string(tiles_.aligned() ? "on" : "off") +
                                              " (carries added with atomics: not bit-reproducible)");
  }
  std::size_t extra_bytes() const override { return tiles_.bytes(); }

 private:
  CsrView<Value, Index> a_;
  Operation op_;
  int block_;
  SegmentedTiles<K, Value, Index> tiles_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_segmented_sum(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                              cudaStream_t stream) {
  return std::make_unique<SegmentedSum<kLaneItems<Value>, Value, Index>>(matrix, op, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_segmented_sum)

}  // namespace spmv::cuda
