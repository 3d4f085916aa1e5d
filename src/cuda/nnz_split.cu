// Warp-level merge-path SpMV ("nnz-split"): every warp takes an equal share of the merge path of (row
// ends, nonzeros) — 512 items, so at most 512 nonzeros and 512 rows — and works on it with all 32 lanes at
// once, as cuSPARSE's COO kernel does, but from CSR (no row index per nonzero):
//  - the tile boundaries are found once at plan time (merge-path diagonal search, one per tile);
//  - the warp marks, in a shared-memory bitmap (one 32-bit word per step of 32 nonzeros), where each row
//    ending in its tile has its last nonzero there, with the row beside it; a row with no nonzero in the
//    tile (empty, or all of it in earlier tiles) gets beta * y at once;
//  - each lane multiplies one nonzero per step (coalesced loads of values and column indices; all 16
//    steps' loads issued before any reduction), then a segmented warp scan keyed by the bitmap word sums
//    each row's products and the lane holding a row's last nonzero writes y; the segment crossing into
//    the next step carries over in a register;
//  - the row still open at the tile's end goes to a carry-out, and a second small kernel adds
//    alpha * carry into y (the tile finishing the row wrote y in the first kernel).
// Every lane does useful work on every step (no per-row divergence): on power-law and mostly-empty
// matrices csr-vector kept 66-73% of lanes busy where cuSPARSE's COO kept ~96% (docs/PERFORMANCE.md,
// profiler counters). docs/algorithms/nnz_split.md has the details and the measurements.
#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/merge_path_search.cuh"

namespace spmv::cuda {
namespace {

// Path items (row ends + nonzeros) per warp: up to 16 steps of 32 nonzeros. Enough independent loads
// per lane in flight to cover the gather's latency, and bounded row bookkeeping per warp.
constexpr int kSteps = 16;
constexpr int kTile = 32 * kSteps;
constexpr int kDefaultBlockThreads = 128;
// Compiled block sizes (a bounded set, STYLE.md §6); larger blocks buy nothing here, warps are independent.
int checked_nnz_split_threads(int requested) {
  const int threads = requested > 0 ? requested : kDefaultBlockThreads;
  if (threads != 64 && threads != 128 && threads != 256)
    throw InvalidArgument("NnzSplit: block_size must be 64, 128 or 256 (its warps work independently), got " +
                          std::to_string(threads));
  return threads;
}
template <class F>
void with_nnz_split_threads(int threads, F&& f) {
  if (threads == 64) return f(std::integral_constant<int, 64>{});
  if (threads == 256) return f(std::integral_constant<int, 256>{});
  return f(std::integral_constant<int, 128>{});
}

template <int Threads, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    nnz_split_kernel(CsrView<Value, Index> a, const MergeCoordinate<Index>* __restrict__ coords, long long tiles,
                     Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y,
                     Index* __restrict__ carry_rows, Value* __restrict__ carry_values) {
  constexpr int kWarps = Threads / 32;
  __shared__ unsigned tails[kWarps][kSteps];  // bit l of word k: a row ends at nonzero nz0 + 32k + l
  __shared__ Index tail_row[kWarps][kTile];   // that row (at most 32 KiB per block of 256 threads)
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const long long tile = static_cast<long long>(blockIdx.x) * kWarps + warp;
  if (tile >= tiles) return;  // whole warps leave together: no block-wide barrier below

  const MergeCoordinate<Index> begin = coords[tile];
  const MergeCoordinate<Index> end = coords[tile + 1];
  const long long nz0 = begin.nz;
  const long long nz1 = end.nz;  // nz1 - nz0 <= kTile

  // The products first: their loads do not depend on the row bookkeeping below and overlap it.
  Value product[kSteps];
#pragma unroll
  for (int k = 0; k < kSteps; ++k) {
    const long long j = nz0 + k * 32 + lane;
    product[k] = j < nz1 ? a.values[j] * __ldg(x + a.col_idx[j]) : Value(0);
  }

  // Rows ending in this tile (at most kTile): mark where each one's last nonzero in the tile sits; a row
  // with none here (empty, or begun and carried out by an earlier tile) gets alpha * 0 + beta * y now.
  if (lane < kSteps) tails[warp][lane] = 0;
  __syncwarp();
  for (long long r = static_cast<long long>(begin.row) + lane; r < end.row; r += 32) {
    const long long row_end = a.row_ptr[r + 1];
    const long long first = max(static_cast<long long>(a.row_ptr[r]), nz0);
    if (row_end > first) {
      const int pos = static_cast<int>(row_end - 1 - nz0);
      atomicOr(&tails[warp][pos >> 5], 1u << (pos & 31));
      tail_row[warp][pos] = static_cast<Index>(r);
    } else {
      y[r] = axpby(alpha, Value(0), beta, y, r);
    }
  }
  __syncwarp();

  Value open = 0;  // the sum of the segment still open at the end of the previous step
  const unsigned lanes_below_me = (1u << lane) - 1;
#pragma unroll
  for (int k = 0; k < kSteps; ++k) {
    if (nz0 + k * 32 >= nz1) break;  // warp-uniform
    const unsigned word = tails[warp][k];
    const unsigned below = word & lanes_below_me;
    const int seg_start = below ? 32 - __clz(below) : -1;  // lane after the last row end below me
    Value v = product[k];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const Value other = __shfl_up_sync(0xffffffffu, v, d);
      if (lane >= d && lane - d >= seg_start) v += other;
    }
    if (seg_start < 0) v += open;
    if ((word >> lane) & 1u) {
      const long long row = tail_row[warp][k * 32 + lane];
      y[row] = axpby(alpha, v, beta, y, row);
    }
    const Value last = __shfl_sync(0xffffffffu, v, 31);
    open = (word >> 31) ? Value(0) : last;
  }
  // The row open at the tile's end (finished and written by a later tile) carries its part out.
  if (lane == 0) {
    carry_rows[tile] = end.row;  // == rows at the path's end: no row
    carry_values[tile] = open;
  }
}

// Adds alpha * carry for every tile that ended inside a row (finished and written by a later tile in the
// main kernel); several tiles may carry into one long row, hence the atomics.
template <class Value, class Index>
__global__ void nnz_split_fixup_kernel(const Index* __restrict__ carry_rows, const Value* __restrict__ carry_values,
                                       long long tiles, Index rows, Value alpha, Value* __restrict__ y) {
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < tiles;
       c += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Index row = carry_rows[c];
    if (row < rows) atomicAdd(y + row, alpha * carry_values[c]);
  }
}

template <class Value, class Index>
class NnzSplit final : public CudaAlgorithm<Value, Index> {
 public:
  NnzSplit(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_nnz_split_threads(options.block_size)),
        tiles_((static_cast<long long>(a.rows) + a.nnz + kTile - 1) / kTile),
        coords_(static_cast<std::size_t>(tiles_ + 1)),
        carry_rows_(static_cast<std::size_t>(tiles_)),
        carry_values_(static_cast<std::size_t>(tiles_)) {
    merge_path_tile_search_kernel<<<grid_for(tiles_ + 1, kSetupBlock), kSetupBlock, 0, stream>>>(
        a.row_ptr, a.rows, a.nnz, kTile, tiles_, coords_.data());
    SPMV_CHECK_LAUNCH("merge_path_tile_search_kernel");
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    with_nnz_split_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      nnz_split_kernel<kThreads, Value, Index><<<grid_for(tiles_, kThreads / 32), kThreads, 0, stream>>>(
          a_, coords_.data(), tiles_, alpha, x, beta, y, carry_rows_.data(), carry_values_.data());
      SPMV_CHECK_LAUNCH("nnz_split_kernel");
    });
    if (tiles_ > 1) {  // one tile's only carry is the path's end, which is no row
      nnz_split_fixup_kernel<<<grid_for(tiles_, kSetupBlock), kSetupBlock, 0, stream>>>(
          carry_rows_.data(), carry_values_.data(), tiles_, a_.rows, alpha, y);
      SPMV_CHECK_LAUNCH("nnz_split_fixup_kernel");
    }
  }

  std::string policy() const override {
    return "block=" + std::to_string(threads_) + " tile=" + std::to_string(kTile) + " tiles=" + std::to_string(tiles_);
  }
  std::size_t extra_bytes() const override {
    return coords_.bytes() + carry_rows_.bytes() + carry_values_.bytes();
  }

 private:
  static constexpr int kSetupBlock = 256;

  CsrView<Value, Index> a_;
  int threads_;
  long long tiles_;
  DeviceBuffer<MergeCoordinate<Index>> coords_;  // tiles + 1 tile boundaries on the merge path
  DeviceBuffer<Index> carry_rows_;               // per tile: the row open at its end (rows: none)
  DeviceBuffer<Value> carry_values_;             // per tile: that row's partial sum inside the tile
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_nnz_split(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                          cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::NnzSplit, op);
  return std::make_unique<NnzSplit<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_nnz_split)

}  // namespace spmv::cuda
