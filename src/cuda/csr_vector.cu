// CSR-vector (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, §3.4 "CSR vector kernel"): a sub-warp of W lanes per row, lanes stride the
// row, a shuffle reduction, lane 0 writes. The paper uses a full warp; here W in {2, 4, 8, 16, 32}
// follows the typical row length so short rows do not idle most of the warp.
// Beyond the paper, for Hopper (docs/algorithms/csr_vector.md):
//  * W from a measured rule (width_for) on the nnz-weighted mean row length;
//  * narrow sub-warps (W <= 8) walk a row with all of a lane's loads issued before any use
//    (warp_row.cuh subwarp_row_dot_flat); wider ones use line-aligned steps and 16-byte vector loads;
//  * rows longer than two passes of the sub-warp are cut into chunks of 2048 nonzeros (one warp pass
//    in launch-bound products), one warp each,
//    in the same launch as the short rows (Daga & Greathouse's CSR-VectorL, HiPC'15, at warp grain);
//    a row's chunks meet in an atomic sum (not bit-reproducible for those rows);
//  * matrices with mostly empty rows run one warp per 32 rows, empty rows written at once.
// op = Transpose: y = beta*y first, then each sub-warp reads x[row] once and atomically adds
// alpha*a_ij*x[row] into y[col]; the order of the atomics varies, so results are not bit-reproducible.
// Tiny matrices do both in one block and one launch, small ones in one cooperative launch (a grid barrier
// between the two).
#include <cooperative_groups.h>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/vector_load.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"
#include "cuda/csr_vector_policy.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv::cuda {
namespace {

using csr_vector_policy::kFlatUnroll;
using csr_vector_policy::kMaxSubwarp;
using csr_vector_policy::kMinSubwarp;
using csr_vector_policy::kStreamLoads;
using csr_vector_policy::width_for;

// Launch policy (tuning as data):
//  block_size 128: H200 sweep 128/256/512/1024 (% of copy bandwidth, f64 / f32): stencil27 83.2 / 80.0
//    at 128 vs 80.9 / 79.2 at 256, random_uniform 38.7 / 27.3 vs 38.3 / 27.3, long_rows, dense_rows and
//    mostly_empty equal within 0.5; 512 and 1024 lose (stencil27 69.5, 62.5): smaller blocks retire
//    and refill SMs at a finer grain;
//  unroll: whole steps in flight per lane for W >= 16, 4 with 4/8-byte loads, 2 with 16-byte loads
//  (similar bytes in flight, half the registers).
struct CsrVectorPolicy {
  int block_size;
  int unroll;
  int vector_unroll;
};
constexpr CsrVectorPolicy csr_vector_policy(int /*value_bytes*/) { return {128, 4, 2}; }

// The sub-warp width rule (width_for) lives in csr_vector_policy.cuh: SemiringPlan's row kernel uses it too.
// Vector loads only for full-warp rows whose mean length gives every lane at least one vector per row;
// shorter rows would leave lanes idle and pay the alignment head.
constexpr int kVectorMinVectorsPerLane = 1;

constexpr int kFlatMaxWidth = 8;  // the flat walk (kFlatUnroll, kStreamLoads: csr_vector_policy.cuh) up to here
// Long-row split (flat walk only): rows longer than kHeadPasses passes of their sub-warp
// (kHeadPasses * W * kFlatUnroll nonzeros) are cut into chunks of kChunkNnz nonzeros, one warp
// each, kChunkUnroll loads per lane per pass. H200, long_rows f64 / f32: unroll 4 45.8% / 37.0%,
// unroll 8 45.4% / 36.8% (56 registers); dense_rows 48.9% / 38.2% vs 45.4% / 38.1%.
constexpr int kHeadPasses = 2;
constexpr int kChunkUnroll = 4;
// Chunk length, H200 2026-11-21, % of copy bandwidth at 512 / 2048 (same run, 512 timed before and
// after): long_rows f64 45.7 / 46.9, f32 37.1 / 38.3; dense_rows f64 49.4 / 51.0, f32 38.4 / 40.5;
// rmat 29.0 / 35.9 and 22.4 / 27.5 (its 128k rows of 17..2048 nonzeros become one chunk each, written
// without atomics). Fewer atomics and arrival counters per row; 2048 still gives thousands of warps.
constexpr int kChunkNnz = 2048;
// A chunk of 2048 is a chain of 16 dependent passes of one warp. Where that chain is the product's
// critical path, chunks of one pass (32 lanes x kChunkUnroll loads) spread a long row over as many
// warps: below detail::kLaunchBoundNnz nonzeros (a product of a few microseconds), and where the long
// rows are few (under kFewLongChunks chunks of 2048, i.e. far fewer warps than the GPU holds). Many
// long rows keep 2048: each is then one chunk, written without atomics, and shorter chunks only add
// the atomics and fences of split rows. H200, 2026-11-27, us per product at 2048 / 128, same process
// (docs/PERFORMANCE.md "Long rows in launch-bound products"): long_rows 0.14-0.56 M nonzeros 9.4-12.7
// / 4.6-7.8, dense_rows 0.31-0.80 M 10.7-14.0 / 5.5-8.8, R-MAT scale 13-16 (0.11-0.96 M) 6.5-14.0 /
// 4.5-12.0 except scale 15 at a = 0.5 (7.2-7.4 / 7.8-8.6), adder_dcop_05 5.7-6.3 / 4.0-5.6; above
// 2^20: long_rows 1.6 M (200 chunks) 20.4-20.7 / 13.5-14.2, dense_rows 2.5 M (176 chunks) 21.8-28.6 /
// 17.4-20.0, but R-MAT scale 17-18 (4-5 thousand chunks) 15.2-23.1 / 20.0-30.0.
constexpr int kOnePassChunkNnz = 32 * kChunkUnroll;
constexpr std::int64_t kFewLongChunks = 1024;
// The chunk length of a split, from the product's nonzeros and its long rows' chunks of kChunkNnz.
constexpr std::int64_t split_chunk_nnz(std::int64_t nnz, std::int64_t long_chunks) {
  return nnz < detail::kLaunchBoundNnz || long_chunks < kFewLongChunks ? kOnePassChunkNnz : kChunkNnz;
}
// Rows this many times longer than the mean count as long even when the mean asks for a wide sub-warp.
constexpr double kSplitFactor = 4.0;
// Uniformly long rows run a wide sub-warp a row unsplit only when those sub-warps make at least this
// many warps per multiprocessor (rows longer than a chunk of kChunkNnz), or kWideMinWarpsWithinChunk
// (rows within one): each row is a chain of passes of one warp, and too few warps leave HBM idle.
// H200, 2026-11-29, random columns, 16 M nonzeros in R rows, speed-up over the best cuSPARSE f32 / f64,
// unsplit warp a row against the split of `--subwarp 8` (the flat walk, rows cut into chunks of 2048):
// R = 500 (3.8 warps per SM) 0.54 / 0.51 against 1.33 / 1.01; R = 1000 (7.6) 0.99 / 0.93 against 1.06
// / 1.02; R = 2000 (15.2) 1.25 / 1.13 against 1.00 / 1.01; R = 4000-32000 unsplit 0.93-1.15 against
// 0.98-1.02. 11 is the geometric middle of 7.6 and 15.2. Checked on 2 M nonzeros: R = 100 (20,000 a
// row, chunks of 128) 0.33 / 0.20 against 1.08 / 1.00 split; R = 400 (5,000 a row) 0.98 / 0.74-0.95
// against 0.96 / 1.09 (two processes); R = 1600 (1,250 a row, within one chunk of 2048) 1.10 / 1.15
// unsplit against 1.11 / 1.23 (docs/PERFORMANCE.md, "Few uniformly long rows").
constexpr double kWideMinWarpsPerMultiprocessor = 11.0;
// Rows within one chunk are short chains (8-16 passes at 2,000 a row), which one-pass chunks of 128
// (split_chunk_nnz) beat only when the rows are very few: H200, 2026-11-29, random columns, rows of
// 2,000, us per product unsplit / split (f32, f64): R = 100 (0.76 warps per SM) 9.5 / 6.0, 10.4 / 6.0;
// R = 400 (3.0) 10.2 / 10.2, 11.0 / 12.9; R = 600 (4.5) 13.4 / 15.6, 13.6 / 14.9. 1.5 is the geometric
// middle of 0.76 and 3.0.
constexpr double kWideMinWarpsWithinChunk = 1.5;

// A^T x of at most this many nonzeros runs in one block of kOneBlockTransposeThreads and one launch (y's
// scaling, a barrier, the scatter) instead of two (scale_vector, then the grid's scatter). H200,
// 2026-11-29, us per product two launches / one block, f64 / f32, two runs each: random columns, 8 a row,
// 256 to 2,048 nonzeros 7.5-10.0 / 3.8-4.9; 4,096 9.4-9.6 / 5.5-5.8; poisson2d n=30 (4,380) 9.1-9.8 /
// 5.9-6.2; 8,192 9.3-9.4 / 9.2-10.0; poisson2d n=45 (9,945) 9.3-9.7 / 10.6-11.5; cage8 (11,003, one f64 run)
// 8.6 / 13.1: one block walks its rows in a chain of passes. 6,000 is the geometric middle of 4,380 and 8,192
// (docs/PERFORMANCE.md, "A^T x of tiny matrices in one launch").
constexpr std::int64_t kOneBlockTransposeMaxNnz = 6000;
constexpr int kOneBlockTransposeThreads = 1024;
// ... and at most this many columns: the block scales all of y itself, 8 stores a thread here (the A/B's
// one-block wins had up to 900 columns; an unbounded first trial ran luxembourg_osm's 114,599 columns in one
// block at 277 us); a few nonzeros among millions of columns keep scale_vector's grid.
constexpr std::int64_t kOneBlockTransposeMaxCols = 8 * kOneBlockTransposeThreads;

// A^T x of at most this many nonzeros (and more than kOneBlockTransposeMaxNnz) runs in one cooperative
// launch: y's scaling, a grid-wide barrier, the scatter, where two launches (scale_vector, then the
// scatter) cost two launch latencies. H200, 2026-11-29, us per product two launches / one cooperative
// launch, two processes each, f64 and f32 (docs/PERFORMANCE.md, "A^T x of small matrices in one
// cooperative launch"): the 22 files and random 8 a row up to 65,536 nonzeros 6.8-10.4 / 3.7-6.3 (cage8
// f32 7.1-9.6 / 4.5-4.7); 131,072 7.0-9.6 / 6.2-6.7; cage10 (150,645) 7.2-9.5 / 7.2-7.6; poisson2d n=200
// (199,200) f32 7.0-9.3 / 9.5-9.6, nh2010 (234,550) f32 7.2-9.1 / 10.6-10.7, luxembourg_osm (239,332) f32
// 7.1-9.9 / 9.1, random 262,144 f32 8.0-9.2 / 10.9-11.1. 2^17, the largest size measured to win in both
// precisions.
constexpr std::int64_t kGridTransposeMaxNnz = std::int64_t(1) << 17;

template <int W, int E>
constexpr bool uses_flat_walk() {
  return E == 1 && W <= kFlatMaxWidth;
}

// The flat walk of a short row (scalar loads: 16-byte loads of the aligned vectors around a row gained
// 1-2% on random columns and lost up to 36% elsewhere, docs/algorithms/csr_vector.md).
template <int W, class Value, class Index>
__device__ __forceinline__ compute_t<Value> short_row_dot(const CsrView<Value, Index>& a,
                                                          const compute_t<Value>* __restrict__ x, std::int64_t begin,
                                                          std::int64_t end, int lane) {
  return subwarp_row_dot_flat<W, kFlatUnroll, kStreamLoads<Value>>(a.col_idx, a.values, x, begin, end, lane);
}

template <int E, class Value>
constexpr int unroll_for() {
  return E == 1 ? csr_vector_policy(sizeof(Value)).unroll : csr_vector_policy(sizeof(Value)).vector_unroll;
}

// y[row] = alpha * (A x)[row] + beta * y[row]: one sub-warp per row, grid-stride over rows.
template <int W, int E, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                      compute_t<Value> beta, compute_t<Value>* __restrict__ y) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    compute_t<Value> sum;
    if constexpr (uses_flat_walk<W, E>()) {
      sum = short_row_dot<W>(a, x, begin, end, lane);
    } else {
      sum = subwarp_row_dot<W, E, unroll_for<E, Value>()>(a.col_idx, a.values, x, begin, end, a.nnz, lane);
    }
    sum = subwarp_sum<W>(sum);
    if (lane == 0) y[row] = axpby(alpha, sum, beta, y, row);
  }
}

// Flat walk with one warp per 32 consecutive rows: lane l loads row l's offsets (two coalesced loads
// for the whole group instead of two per sub-warp), empty rows are written at once, and the non-empty
// ones (found with a ballot) are dealt to the 32 / W sub-warps round by round. Rows that are mostly
// empty then cost no sub-warp, and a warp's row-offset loads are one round trip. Rows longer than
// `head` are left to the split kernel's chunks. `first` is the warp's first row, `stride` the rows per
// grid pass (32 per warp).
template <int W, class Value, class Index>
__device__ void group_walk(const CsrView<Value, Index>& a, compute_t<Value> alpha,
                           const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                           compute_t<Value>* __restrict__ y, std::int64_t first, std::int64_t stride,
                           std::int64_t head) {
  constexpr int kSubs = 32 / W;
  const int lane = threadIdx.x & 31;
  const int sub = lane / W;
  const int sub_lane = lane & (W - 1);
  for (; first < a.rows; first += stride) {
    const std::int64_t r = first + lane;
    std::int64_t begin = 0, end = 0;
    if (r < a.rows) {
      begin = __ldg(a.row_ptr + r);
      end = __ldg(a.row_ptr + r + 1);
      if (end == begin) y[r] = axpby(alpha, compute_t<Value>(0), beta, y, r);
    }
    unsigned pending = __ballot_sync(0xffffffffu, end > begin && end - begin <= head);
    while (pending != 0) {  // warp-uniform
      // Sub-warp `sub` takes the (sub + 1)-th pending row; the round consumes the first kSubs of them.
      unsigned mine = pending;
      for (int i = 0; i < sub; ++i) mine &= mine - 1;
      unsigned next = pending;
#pragma unroll
      for (int i = 0; i < kSubs; ++i) next &= next - 1;
      const int src = mine != 0 ? __ffs(mine) - 1 : 0;
      const std::int64_t row_begin = __shfl_sync(0xffffffffu, begin, src);
      const std::int64_t row_end = __shfl_sync(0xffffffffu, end, src);
      compute_t<Value> sum = 0;
      if (mine != 0) sum = short_row_dot<W>(a, x, row_begin, row_end, sub_lane);
      sum = subwarp_sum<W>(sum);
      if (mine != 0 && sub_lane == 0) y[first + src] = axpby(alpha, sum, beta, y, first + src);
      pending = next;
    }
  }
}

template <int W, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_group_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                            compute_t<Value> beta, compute_t<Value>* __restrict__ y) {
  group_walk<W>(a, alpha, x, beta, y, (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) & ~std::int64_t(31),
                std::int64_t(gridDim.x) * blockDim.x, std::numeric_limits<std::int64_t>::max());
}

// A piece of a long row, [begin, end) with end - begin <= kChunkNnz. The row's chunks are
// consecutive; `first` indexes its first one, which also names the row's accumulator and counter.
template <class Index>
struct RowChunk {
  std::int64_t begin;
  std::int64_t end;
  std::int64_t first;
  Index row;
  int count;  // chunks of the row
};

// The long rows' work, built at plan time: chunks, and per row (at its first chunk's index) a sum
// and an arrival counter, both zero between products (the row's last chunk resets them).
template <class Value, class Index>
struct SplitRows {
  const RowChunk<Index>* chunks;
  std::int64_t num_chunks;
  std::int64_t chunk_blocks;  // the grid's first blocks run chunks, the rest run rows
  Value* sums;        // one slot per chunk
  unsigned* arrivals;
  bool ordered;       // Options::deterministic: partial sums added in chunk order, not with atomics
};

// One launch for matrices with long rows (rows longer than `head`): its first split.chunk_blocks
// blocks sum the long rows, one warp per chunk, and the last chunk of a row to arrive (threadfence
// reduction, CUDA sample threadFenceReduction) writes y[row] = alpha * sum + beta * y[row]; the
// other blocks run the short rows as csr_vector_kernel does (or 32 rows a warp, group_walk, when Group)
// and skip the long ones. One launch lets the two kinds of work overlap (two launches left the second
// kernel's ramp and the first's tail idle). The sum is accumulated with atomics, not bit-reproducible
// for the long rows, unless split.ordered: then each chunk stores its partial sum in its own slot and the
// last to arrive adds the row's slots in chunk order (Options::deterministic: the same bits every run,
// one extra read per chunk).
template <int W, bool Group, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_split_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                            compute_t<Value> beta, compute_t<Value>* __restrict__ y, std::int64_t head,
                            SplitRows<compute_t<Value>, Index> split) {
  if (blockIdx.x < split.chunk_blocks) {
    const int lane = threadIdx.x & 31;
    const std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    if (c >= split.num_chunks) return;  // warp-uniform
    const RowChunk<Index> chunk = split.chunks[c];
    compute_t<Value> sum = subwarp_row_dot_flat<32, kChunkUnroll, kStreamLoads<Value>>(
        a.col_idx, a.values, x, chunk.begin, chunk.end, lane);
    sum = subwarp_sum<32>(sum);
    if (lane == 0 && chunk.count == 1) {  // a row of one chunk: no partial sums to combine
      y[chunk.row] = axpby(alpha, sum, beta, y, chunk.row);
    } else if (lane == 0) {
      if (split.ordered)
        split.sums[c] = sum;
      else
        atomicAdd(split.sums + chunk.first, sum);
      __threadfence();  // the sum lands before the arrival is counted
      const unsigned arrived = atomicAdd(split.arrivals + chunk.first, 1u);
      if (arrived == static_cast<unsigned>(chunk.count - 1)) {
        __threadfence();
        compute_t<Value> total = __ldcg(split.sums + chunk.first);
        if (split.ordered)
          for (std::int64_t k = chunk.first + 1; k < chunk.first + chunk.count; ++k) total += __ldcg(split.sums + k);
        else
          split.sums[chunk.first] = compute_t<Value>(0);
        split.arrivals[chunk.first] = 0u;
        y[chunk.row] = axpby(alpha, total, beta, y, chunk.row);
      }
    }
    return;
  }
  const std::int64_t blocks = std::int64_t(gridDim.x) - split.chunk_blocks;
  if constexpr (Group) {  // mostly empty rows: 32 rows a warp, the long ones skipped
    group_walk<W>(a, alpha, x, beta, y,
                  ((std::int64_t(blockIdx.x) - split.chunk_blocks) * blockDim.x + threadIdx.x) & ~std::int64_t(31),
                  blocks * blockDim.x, head);
    return;
  }
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = blocks * blockDim.x / W;
  for (std::int64_t row = ((std::int64_t(blockIdx.x) - split.chunk_blocks) * blockDim.x + threadIdx.x) / W;
       row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    if (end - begin > head) continue;  // a long row: the chunk blocks own it (uniform per sub-warp)
    compute_t<Value> sum = short_row_dot<W>(a, x, begin, end, lane);
    sum = subwarp_sum<W>(sum);
    if (lane == 0) y[row] = axpby(alpha, sum, beta, y, row);
  }
}

// y += alpha * A^T x: sub-warp per row of A, scattered with atomics; `thread` counts from 0 to `threads`.
template <int W, int E, class Value, class Index>
__device__ __forceinline__ void transpose_scatter(const CsrView<Value, Index>& a, compute_t<Value> alpha,
                                                  const compute_t<Value>* __restrict__ x,
                                                  compute_t<Value>* __restrict__ y, std::int64_t thread,
                                                  std::int64_t threads) {
  const int lane = threadIdx.x & (W - 1);
  for (std::int64_t row = thread / W; row < a.rows; row += threads / W) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    const compute_t<Value> scaled_x = alpha * __ldg(x + row);
    subwarp_row_walk<W, E, unroll_for<E, Value>()>(a.col_idx, a.values, begin, end, a.nnz, lane,
                                                   [&](Index column, compute_t<Value> value) {
                                                     atomicAdd(y + column, value * scaled_x);
                                                   });
  }
}

// y += alpha * A^T x after y = beta * y (scale_vector, a launch of its own).
template <int W, int E, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_transpose_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                                compute_t<Value> /*beta*/, compute_t<Value>* __restrict__ y) {
  transpose_scatter<W, E>(a, alpha, x, y, std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x,
                          std::int64_t(gridDim.x) * blockDim.x);
}

// The whole A^T x of a tiny matrix in one block and one launch: y = beta * y, a barrier (the block's own
// writes are then visible to its atomics), the scatter.
template <int W, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_transpose_block_kernel(CsrView<Value, Index> a, compute_t<Value> alpha,
                                      const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                                      compute_t<Value>* __restrict__ y) {
  using Real = compute_t<Value>;
  if (beta != Real(1))
    for (std::int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) y[c] = beta_times(beta, y, c);
  __syncthreads();
  transpose_scatter<W, 1>(a, alpha, x, y, threadIdx.x, blockDim.x);
}

// The same in one cooperative launch of several blocks (cudaLaunchCooperativeKernel: every block resident),
// with a grid-wide barrier between y's scaling and the scatter (the barrier orders the blocks' stores
// before the other blocks' atomics).
template <int W, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_transpose_grid_kernel(CsrView<Value, Index> a, compute_t<Value> alpha,
                                     const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                                     compute_t<Value>* __restrict__ y) {
  using Real = compute_t<Value>;
  const std::int64_t thread = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  if (beta != Real(1))
    for (std::int64_t c = thread; c < a.cols; c += threads) y[c] = beta_times(beta, y, c);
  cooperative_groups::this_grid().sync();
  transpose_scatter<W, 1>(a, alpha, x, y, thread, threads);
}

// Rows longer than `head` (split rows).
template <class Index>
struct IsLongRow {
  const Index* row_ptr;
  std::int64_t head;
  __device__ bool operator()(Index r) const { return std::int64_t(row_ptr[r + 1]) - row_ptr[r] > head; }
};

template <class Index>
__global__ void gather_row_bounds_kernel(const Index* row_ptr, const Index* rows, std::int64_t count,
                                         std::int64_t* bounds) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    bounds[2 * i] = row_ptr[rows[i]];
    bounds[2 * i + 1] = row_ptr[rows[i] + 1];
  }
}

template <class Value, class Index, class Real = compute_t<Value>>
using Kernel = void (*)(CsrView<Value, Index>, Real, const Real*, Real, Real*);
template <class Value, class Index, class Real = compute_t<Value>>
using SplitKernel = void (*)(CsrView<Value, Index>, Real, const Real*, Real, Real*, std::int64_t,
                             SplitRows<Real, Index>);

template <int W, int E, class Value, class Index>
Kernel<Value, Index> kernel_for(Operation op, bool group) {
  if constexpr (E == 1) {  // the group walk is a flat walk at any width
    if (op == Operation::NonTranspose && group) return csr_vector_group_kernel<W, Value, Index>;
  }
  return op == Operation::NonTranspose ? csr_vector_kernel<W, E, Value, Index>
                                       : csr_vector_transpose_kernel<W, E, Value, Index>;
}

template <class Value, class Index>
class CsrVector final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrVector(const CsrView<Value, Index>& a, Operation op, const Options& options, cudaStream_t stream)
      : a_(a), op_(op), deterministic_(options.deterministic) {
    constexpr CsrVectorPolicy policy = csr_vector_policy(sizeof(Value));
    constexpr int vector_width = kVectorWidth<Value, Index>;
    const double mean = double(a.nnz) / double(a.rows);
    block_ = warp_block_size(options.block_size, policy.block_size, "CsrVector");
    if (options.subwarp > 0) {
      width_ = checked_width(options.subwarp, 0, kMinSubwarp, "CsrVector: subwarp");
      if (op == Operation::NonTranspose) {  // a chosen flat width keeps the walk of mostly empty rows
        const RowStatistics s = row_statistics(a_, stream);
        group_ = detail::groups_empty_rows(s.empty_rows, a_.rows);
      }
      if (op == Operation::NonTranspose && width_ <= kFlatMaxWidth)
        build_chunks(find_long_rows(head_for(width_), stream), stream);
    } else {
      choose_width(stream);
    }
    one_block_ = op == Operation::Transpose && std::int64_t(a.nnz) <= kOneBlockTransposeMaxNnz &&
                 std::int64_t(a.cols) <= kOneBlockTransposeMaxCols;
    // Vector loads need 16-byte aligned arrays; a view of someone else's arrays may be offset.
    grid_ = op == Operation::Transpose && !one_block_ && std::int64_t(a.nnz) <= kGridTransposeMaxNnz;
    const bool vector = !group_ && !one_block_ && !grid_ && width_ == 32 &&
                        mean >= double(32 * vector_width * kVectorMinVectorsPerLane) && is_aligned(a.col_idx, 16) &&
                        is_aligned(a.values, 16);
    if (vector) {  // a warp a row: the launch covers rows * 32 threads
      kernel_ = kernel_for<32, vector_width, Value, Index>(op, false);
      elements_per_load_ = vector_width;
      unroll_ = policy.vector_unroll;
    } else {
      group_ = group_ && op == Operation::NonTranspose;
      flat_ = op == Operation::NonTranspose && (width_ <= kFlatMaxWidth || group_);
      with_width<kMinSubwarp>(width_, [&](auto w) {
        constexpr int kW = decltype(w)::value;
        kernel_ = one_block_ ? csr_vector_transpose_block_kernel<kW, Value, Index>
                  : grid_    ? csr_vector_transpose_grid_kernel<kW, Value, Index>
                             : kernel_for<kW, 1, Value, Index>(op, group_);
        if (grid_) scatter_kernel_ = kernel_for<kW, 1, Value, Index>(op, false);
        if constexpr (kW <= kFlatMaxWidth)
          split_kernel_ = group_ ? csr_vector_split_kernel<kW, true, Value, Index>
                                 : csr_vector_split_kernel<kW, false, Value, Index>;
      });
      elements_per_load_ = 1;
      unroll_ = flat_ ? kFlatUnroll : policy.unroll;
    }
    if (grid_) {  // every block resident at once: at most the occupancy the device allows
      int per_multiprocessor = 0;
      SPMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel_, block_, 0));
      const std::int64_t resident = std::int64_t(per_multiprocessor) * device_multiprocessors();
      grid_blocks_ = static_cast<unsigned>(
          std::max<std::int64_t>(1, std::min<std::int64_t>(grid_for(std::int64_t(a.rows) * width_, block_), resident)));
    }
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    if (one_block_) {
      kernel_<<<1, kOneBlockTransposeThreads, 0, stream>>>(a_, alpha, x, beta, y);
      SPMV_CHECK_LAUNCH("csr_vector_transpose_block_kernel");
      return;
    }
    if (grid_) {
      CsrView<Value, Index> a = a_;
      void* args[] = {&a, &alpha, &x, &beta, &y};
      const cudaError_t launched =
          cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel_), grid_blocks_, block_, args, 0, stream);
      if (launched != cudaErrorCooperativeLaunchTooLarge) {
        SPMV_CUDA_CHECK(launched);
        return;
      }
      // Fewer multiprocessors than the plan counted (an MPS share of the device): the two launches instead.
      (void)cudaGetLastError();
      scale_vector(beta, y, a_.cols, stream);
      scatter_kernel_<<<grid_for(std::int64_t(a_.rows) * width_, block_), block_, 0, stream>>>(a_, alpha, x, beta, y);
      SPMV_CHECK_LAUNCH("csr_vector_transpose_kernel");
      return;
    }
    if (op_ == Operation::Transpose) scale_vector(beta, y, a_.cols, stream);
    if (num_chunks_ > 0) {
      const SplitRows<Real, Index> split{chunks_.data(), num_chunks_,    chunk_blocks_,
                                          sums_.data(),   arrivals_.data(), deterministic_};
      const std::int64_t row_blocks =
          std::min<std::int64_t>(grid_for(std::int64_t(a_.rows) * (group_ ? 1 : width_), block_),
                                 INT_MAX - chunk_blocks_);
      split_kernel_<<<static_cast<unsigned>(chunk_blocks_ + row_blocks), block_, 0, stream>>>(a_, alpha, x, beta, y,
                                                                                             head_, split);
      SPMV_CHECK_LAUNCH("csr_vector_split_kernel");
      return;
    }
    const std::int64_t threads = std::int64_t(a_.rows) * (group_ ? 1 : width_);
    kernel_<<<grid_for(threads, block_), block_, 0, stream>>>(a_, alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("csr_vector_kernel");
  }

  // Rows of several chunks are summed through sums_/arrivals_, which each product uses and resets. A row of
  // one chunk is written by its warp directly: when every split row is one chunk (launch-bound products
  // whose long rows fit a chunk) no product touches the workspace, and none needs the ordering events,
  // whose record costs each product host time that products of a few microseconds feel.
  bool writes_workspace() const override { return shared_chunks_; }
  // A^T scatters with atomics; A x is a fixed shuffle tree per row unless a row's chunks meet in atomics.
  bool reproducible() const override {
    return op_ == Operation::NonTranspose && (!shared_chunks_ || deterministic_);
  }
  std::string policy() const override {
    std::string s = "block=" + std::to_string(block_) + " subwarp=" + std::to_string(width_) +
                    " elements_per_load=" + std::to_string(elements_per_load_) + " unroll=" + std::to_string(unroll_);
    if (flat_) s += group_ ? " walk=flat rows_per_warp=32" : " walk=flat";
    if (local_) s += " columns=local";
    if (num_chunks_ > 0)
      s += " split_rows=" + std::to_string(split_rows_) + " head=" + std::to_string(head_) +
           " chunks=" + std::to_string(num_chunks_) + " chunk=" + std::to_string(chunk_nnz_) +
           (!shared_chunks_ ? " (each split row one chunk: no partial sums)"
            : deterministic_ ? " (long rows' chunks added in order: reproducible)"
                             : " (long rows summed with atomics: not bit-reproducible)");
    if (op_ == Operation::Transpose)
      s += std::string(" transpose=atomic-scatter") +
           (one_block_ ? " one_block=" + std::to_string(kOneBlockTransposeThreads) : std::string()) +
           (grid_ ? " one_launch=cooperative blocks=" + std::to_string(grid_blocks_) : std::string()) +
           " (not bit-reproducible)";
    return s;
  }
  std::size_t extra_bytes() const override { return chunks_.bytes() + sums_.bytes() + arrivals_.bytes(); }

 private:
  struct LongRows {
    std::int64_t head = 0;
    std::vector<Index> rows;
    std::vector<std::int64_t> bounds;  // begin, end per row
    std::int64_t nnz = 0;              // their total length
  };

  static std::int64_t head_for(int width) { return std::int64_t(kHeadPasses) * width * kFlatUnroll; }

  // Rows are uniformly long when the plain mean length of the non-empty rows asks for a wide sub-warp
  // and no row is longer than kSplitFactor times that mean: W then comes from L = E[len^2] / E[len] =
  // mean + std^2 / mean over all rows (the row length an average nonzero lives in; empty rows do not
  // shrink it), and no row is split. Otherwise the flat walk is used and rows longer than its head are
  // split off: W is then re-derived from the plain mean length of the remaining non-empty rows (long rows
  // would inflate L), at most twice, since the head depends on W. (The bound on the longest row was
  // kSplitFactor * L, which a few huge rows holding most nonzeros pass: 64 rows of 300,000 among a
  // million of 9, mean 28, then ran a warp a row unsplit at 0.03-0.06x cuSPARSE, H200 2026-11-29, once
  // scattered rows of 28 asked for 16 lanes.) Uniform rows also need enough rows to fill the GPU
  // (kWideMinWarpsPerMultiprocessor, kWideMinWarpsWithinChunk): a few hundred rows of 20,000 are split.
  // Mostly empty rows always walk 32 rows a warp (a sub-warp a row idles on every empty one: 0.09-0.6x
  // cuSPARSE at W = 16 on the empty family, H200 2026-11-29), at the width of their non-empty rows when no
  // row is longer than kSplitFactor times those and the groups make kWideMinWarpsPerMultiprocessor warps
  // per SM (H200, 2026-11-29, suite's mostly_empty, 5% of 64 a row: 8 lanes 0.91 / 1.01x the best
  // cuSPARSE f32 / f64, 16 lanes 1.05 / 1.14x, 32 lanes 1.06 / 1.13x; docs/PERFORMANCE.md "Mostly empty
  // rows at their own width"); otherwise at most 8 lanes, rows longer than the head split off (the split
  // kernel's rows then walk in groups too).
  void choose_width(cudaStream_t stream) {
    if (op_ == Operation::Transpose) {  // the SC'09 rule (atomics bound the transposed kernel)
      width_ = pow2_at_least(double(a_.nnz) / double(a_.rows), kMinSubwarp, kMaxSubwarp);
      return;
    }
    const RowStatistics s = row_statistics(a_, stream);
    const double weighted = s.mean > 0 ? s.mean + s.stddev * s.stddev / s.mean : 0.0;
    const double nonempty = double(a_.rows - s.empty_rows);
    const double nonempty_mean = nonempty > 0 ? double(a_.nnz) / nonempty : 0.0;
    group_ = detail::groups_empty_rows(s.empty_rows, a_.rows);
    local_ = csr_vector_policy::local_columns(s.mean_span, double(a_.cols));
    if (group_ && double(s.max) <= kSplitFactor * nonempty_mean &&
        double(a_.rows) / 32.0 >= kWideMinWarpsPerMultiprocessor * device_multiprocessors()) {
      const int own = width_for(nonempty_mean, local_);  // mostly empty rows: 32 rows a warp at any width
      if (own > kFlatMaxWidth) {  // no split (the narrower widths below split, as before)
        width_ = own;
        return;
      }
    }
    if (!group_ && width_for(nonempty_mean, local_) > kFlatMaxWidth && double(s.max) <= kSplitFactor * nonempty_mean) {
      const int wide = width_for(weighted, local_);
      const double warps = nonempty * wide / 32.0;
      const double min_warps_per_sm =
          s.max <= kChunkNnz ? kWideMinWarpsWithinChunk : kWideMinWarpsPerMultiprocessor;
      if (warps >= min_warps_per_sm * device_multiprocessors()) {
        width_ = wide;  // uniformly long rows: a wide sub-warp, no split
        return;
      }
    }
    width_ = std::min(width_for(nonempty_mean, local_), kFlatMaxWidth);
    LongRows long_rows = find_long_rows(head_for(width_), stream);
    for (int iteration = 0; iteration < 2; ++iteration) {
      const double rest = nonempty - double(long_rows.rows.size());
      const double length = rest > 0 ? double(a_.nnz - long_rows.nnz) / rest : 0.0;
      const int w = std::min(width_for(length, local_), kFlatMaxWidth);
      if (w == width_) break;
      width_ = w;
      long_rows = find_long_rows(head_for(width_), stream);
    }
    build_chunks(std::move(long_rows), stream);
  }

  // Rows longer than `head`, with their bounds, on the host (plan time; synchronises `stream`).
  LongRows find_long_rows(std::int64_t head, cudaStream_t stream) const {
    LongRows out;
    out.head = head;
    const std::int64_t max_long = std::int64_t(a_.nnz) / (head + 1);
    if (max_long == 0) return out;
    DeviceBuffer<Index> long_rows(static_cast<std::size_t>(max_long));
    DeviceBuffer<long long> count(1);
    const thrust::counting_iterator<Index> row_ids(0);
    const IsLongRow<Index> is_long{a_.row_ptr, head};
    std::size_t temp_bytes = 0;
    SPMV_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, row_ids, long_rows.data(), count.data(), a_.rows,
                                          is_long, stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    SPMV_CUDA_CHECK(cub::DeviceSelect::If(temp.data(), temp_bytes, row_ids, long_rows.data(), count.data(), a_.rows,
                                          is_long, stream));
    long long n = 0;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(&n, count.data(), sizeof(n), cudaMemcpyDeviceToHost, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (n < 0 || n > max_long) throw InvalidArgument("CsrVector: row_ptr is not a non-decreasing offset array");
    if (n == 0) return out;
    DeviceBuffer<std::int64_t> bounds(static_cast<std::size_t>(2 * n));
    gather_row_bounds_kernel<<<grid_for(n, 256), 256, 0, stream>>>(a_.row_ptr, long_rows.data(), n, bounds.data());
    SPMV_CHECK_LAUNCH("gather_row_bounds_kernel");
    out.rows.resize(static_cast<std::size_t>(n));
    out.bounds.resize(static_cast<std::size_t>(2 * n));
    SPMV_CUDA_CHECK(cudaMemcpyAsync(out.rows.data(), long_rows.data(), out.rows.size() * sizeof(Index),
                                    cudaMemcpyDeviceToHost, stream));
    SPMV_CUDA_CHECK(cudaMemcpyAsync(out.bounds.data(), bounds.data(), out.bounds.size() * sizeof(std::int64_t),
                                    cudaMemcpyDeviceToHost, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < out.rows.size(); ++i) out.nnz += out.bounds[2 * i + 1] - out.bounds[2 * i];
    return out;
  }

  // Every long row cut into chunks, uploaded with zeroed sums and counters (plan time; synchronises
  // `stream`).
  void build_chunks(LongRows long_rows, cudaStream_t stream) {
    if (long_rows.rows.empty()) return;
    const std::int64_t head = long_rows.head;
    std::int64_t long_chunks = 0;  // at kChunkNnz
    for (std::size_t i = 0; i < long_rows.rows.size(); ++i)
      long_chunks += (long_rows.bounds[2 * i + 1] - long_rows.bounds[2 * i] + kChunkNnz - 1) / kChunkNnz;
    const std::int64_t chunk_nnz = split_chunk_nnz(a_.nnz, long_chunks);
    std::vector<RowChunk<Index>> host_chunks;
    shared_chunks_ = false;
    for (std::size_t i = 0; i < long_rows.rows.size(); ++i) {
      const std::int64_t begin = long_rows.bounds[2 * i], end = long_rows.bounds[2 * i + 1];
      const std::int64_t first = static_cast<std::int64_t>(host_chunks.size());
      const std::int64_t count = (end - begin + chunk_nnz - 1) / chunk_nnz;
      if (count > std::numeric_limits<int>::max()) throw InvalidArgument("CsrVector: row too long to split");
      shared_chunks_ = shared_chunks_ || count > 1;
      for (std::int64_t b = begin; b < end; b += chunk_nnz)
        host_chunks.push_back({b, std::min<std::int64_t>(b + chunk_nnz, end), first, long_rows.rows[i],
                               static_cast<int>(count)});
    }
    chunks_ = DeviceBuffer<RowChunk<Index>>(host_chunks.size());
    sums_ = DeviceBuffer<Real>(host_chunks.size());
    arrivals_ = DeviceBuffer<unsigned>(host_chunks.size());
    SPMV_CUDA_CHECK(cudaMemcpyAsync(chunks_.data(), host_chunks.data(), chunks_.bytes(), cudaMemcpyHostToDevice,
                                    stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(sums_.data(), 0, sums_.bytes(), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before host_chunks goes
    num_chunks_ = static_cast<std::int64_t>(host_chunks.size());
    chunk_nnz_ = chunk_nnz;
    chunk_blocks_ = (num_chunks_ * 32 + block_ - 1) / block_;
    split_rows_ = static_cast<long long>(long_rows.rows.size());
    head_ = head;
  }

  CsrView<Value, Index> a_;
  Operation op_;
  int block_ = 0;
  int width_ = 0;
  int elements_per_load_ = 1;
  int unroll_ = 1;
  bool flat_ = false;
  bool group_ = false;  // group_walk: 32 rows per warp (csr_vector_group_kernel, or the split kernel's rows)
  bool one_block_ = false;  // A^T x in one block (csr_vector_transpose_block_kernel)
  bool grid_ = false;       // A^T x in one cooperative launch (csr_vector_transpose_grid_kernel)
  unsigned grid_blocks_ = 0;
  bool local_ = false;  // local columns (width_for)
  bool deterministic_ = false;
  std::int64_t head_ = std::numeric_limits<std::int64_t>::max();  // longer rows are split (chunks only)
  std::int64_t chunk_nnz_ = 0;                                     // their chunks' length
  std::int64_t num_chunks_ = 0;
  bool shared_chunks_ = false;  // some split row has several chunks (they meet in sums_ / arrivals_)
  std::int64_t chunk_blocks_ = 0;
  long long split_rows_ = 0;
  DeviceBuffer<RowChunk<Index>> chunks_;
  DeviceBuffer<Real> sums_;          // per long row (at its first chunk), zero between products
  DeviceBuffer<unsigned> arrivals_;  // likewise
  Kernel<Value, Index> kernel_ = nullptr;
  Kernel<Value, Index> scatter_kernel_ = nullptr;  // the cooperative A^T x's two-launch fallback
  SplitKernel<Value, Index> split_kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_csr_vector(const CsrView<Value, Index>& matrix, Operation op,
                                                      const Options& options, cudaStream_t stream) {
  return std::make_unique<CsrVector<Value, Index>>(matrix, op, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_csr_vector)
SPMV_INSTANTIATE_HALF_FACTORY(make_csr_vector)

}  // namespace spmv::cuda
