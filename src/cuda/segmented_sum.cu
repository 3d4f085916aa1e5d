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
#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/vector_load.cuh"
#include "cuda/common/warp_launch.cuh"

namespace spmv::cuda {
namespace {

using format::global_thread;
using format::grid_threads;
using format::run_cub_at_plan_time;

// Launch policy (tuning as data): 128 threads, four tiles a block (as csr-vector's block: small blocks
// retire and refill SMs at a finer grain). Nonzeros per lane, H200 2026-11-29 (docs/PERFORMANCE.md
// "Segmented sum for power-law rows"): 4 / 8 / 16 were fastest on 3 / 15 / 3 of 21 float matrices
// (R-MAT, stencils, random, long and empty rows, three files); in double the two-launch kernel took
// 131.5 / 136.6 us (R-MAT scale 20) and 267.4 / 286.6 us (scale 21) at 4 / 8: 32 bytes of values a lane.
constexpr int kDefaultBlock = 128;
template <class Value>
constexpr int kLaneItems = sizeof(Value) >= 8 ? 4 : 8;
// The fix-up kernel: a thread per tile.
constexpr int kCarryBlock = 256;

// The plan's arrays as the kernels read them.
template <class Real, class Index>
struct Tiles {
  const unsigned* ends;        // bit k: nonzero k is its row's last; K words a tile
  const Index* first_row;      // per tile (+1): the non-empty row open at its start; [count] = non-empty rows
  const Index* row_of;         // non-empty rows then empty ones; null when no row is empty
  Real* carries;               // per tile: the partial sum of the row open at its end
  std::int64_t count;          // tiles
  std::int64_t nonempty;       // rows holding entries
  std::int64_t empty;          // rows holding none
  bool aligned;                // values and col_idx allow 16-byte loads
};

// A partial row sum and whether a row ended in it: the segmented scan's element.
template <class Real>
struct Partial {
  Real sum;
  int ended;
};

// Later partials restart the sum where a row ended in them (associative: a segmented sum).
struct SegmentedPlus {
  template <class Real>
  __device__ __forceinline__ Partial<Real> operator()(const Partial<Real>& a, const Partial<Real>& b) const {
    return {b.ended ? b.sum : a.sum + b.sum, a.ended | b.ended};
  }
};

template <class Index>
__device__ __forceinline__ std::int64_t row_at(const Index* row_of, std::int64_t n) {
  return row_of ? static_cast<std::int64_t>(__ldg(row_of + n)) : n;
}

template <int K, class Value, class Index>
__device__ __forceinline__ void lane_products(const CsrView<Value, Index>& a, const Value* __restrict__ x,
                                              std::int64_t k0, bool aligned, Value (&p)[K]) {
  constexpr int kValueWidth = 16 / static_cast<int>(sizeof(Value));
  constexpr int kIndexWidth = 16 / static_cast<int>(sizeof(Index));
  static_assert(K % kValueWidth == 0 && K % kIndexWidth == 0, "a lane's nonzeros are whole 16-byte loads");
  static_assert(K < 32 && 32 % K == 0, "a lane's row-end bits lie in one 32-bit word");
  if (aligned && k0 + K <= static_cast<std::int64_t>(a.nnz)) {
    Value v[K];
    Index c[K];
#pragma unroll
    for (int h = 0; h < K; h += kValueWidth) {
      const Vector<Value, kValueWidth> w = load_vector_streaming<kValueWidth>(a.values + k0 + h);
#pragma unroll
      for (int j = 0; j < kValueWidth; ++j) v[h + j] = w.item[j];
    }
#pragma unroll
    for (int h = 0; h < K; h += kIndexWidth) {
      const Vector<Index, kIndexWidth> w = load_vector_streaming<kIndexWidth>(a.col_idx + k0 + h);
#pragma unroll
      for (int j = 0; j < kIndexWidth; ++j) c[h + j] = w.item[j];
    }
#pragma unroll
    for (int i = 0; i < K; ++i) p[i] = v[i] * __ldg(x + c[i]);
  } else {
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const std::int64_t k = k0 + i;
      p[i] = k < static_cast<std::int64_t>(a.nnz) ? __ldcs(a.values + k) * __ldg(x + __ldcs(a.col_idx + k)) : Value(0);
    }
  }
}

// One product: warps [0, tiles) sum a tile each (grid-stride), the remaining threads write the empty rows.
template <int K, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    segmented_sum_kernel(CsrView<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                         Value* __restrict__ y, Tiles<Value, Index> t, std::int64_t tile_threads) {
  using WarpInt = cub::WarpScan<int>;
  using WarpPartial = cub::WarpScan<Partial<Value>>;
  __shared__ typename WarpInt::TempStorage int_scan[kMaxWarpKernelBlock / 32];
  __shared__ typename WarpPartial::TempStorage partial_scan[kMaxWarpKernelBlock / 32];
  const std::int64_t g = global_thread();
  if (g >= tile_threads) {  // whole warps: tile_threads is a multiple of the block
    for (std::int64_t e = g - tile_threads; e < t.empty; e += grid_threads() - tile_threads) {
      const std::int64_t r = __ldg(t.row_of + t.nonempty + e);
      y[r] = axpby(alpha, Value(0), beta, y, r);
    }
    return;
  }
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp_in_block = static_cast<int>(threadIdx.x) / 32;
  for (std::int64_t tile = g / 32; tile < t.count; tile += tile_threads / 32) {  // warp-uniform
    Value p[K];
    lane_products<K>(a, x, tile * (32 * K) + std::int64_t(lane) * K, t.aligned, p);
    const unsigned word = __ldg(t.ends + tile * K + (lane * K) / 32);
    const unsigned bits = (word >> ((lane * K) & 31)) & ((1u << K) - 1u);
    int before = 0;  // rows ending in earlier lanes of the tile
    WarpInt(int_scan[warp_in_block]).ExclusiveSum(__popc(bits), before);
    const std::int64_t first = static_cast<std::int64_t>(__ldg(t.first_row + tile)) + before;

    // This lane's rows in order: the first to end may have started before the lane (finished after the
    // scan); the others started and ended inside it.
    Value run = 0, lead = 0;
    int ended = 0;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      run += p[i];
      if ((bits >> i) & 1u) {
        if (ended == 0) {
          lead = run;
        } else {
          const std::int64_t r = row_at(t.row_of, first + ended);
          y[r] = axpby(alpha, run, beta, y, r);
        }
        ++ended;
        run = 0;
      }
    }
    Partial<Value> open, tile_open;  // the row open at this lane's start; at the tile's end
    WarpPartial(partial_scan[warp_in_block])
        .ExclusiveScan(Partial<Value>{run, ended > 0}, open, Partial<Value>{Value(0), 0}, SegmentedPlus{}, tile_open);
    if (ended > 0) {
      const std::int64_t r = row_at(t.row_of, first);
      y[r] = axpby(alpha, open.sum + lead, beta, y, r);
    }
    if (lane == 0) t.carries[tile] = tile_open.sum;
  }
}

// Adds each tile's carry into the row open at its end, which a later tile has written (or no row: past
// the last one).
template <class Value, class Index>
__global__ void carry_kernel(Tiles<Value, Index> t, Value alpha, Value* __restrict__ y) {
  for (std::int64_t tile = global_thread(); tile < t.count; tile += grid_threads()) {
    const std::int64_t n = t.first_row[tile + 1];
    const Value carry = t.carries[tile];
    if (n < t.nonempty && carry != Value(0)) atomicAdd(y + row_at(t.row_of, n), alpha * carry);
  }
}

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

// --- plan time ---------------------------------------------------------------------------------------

template <class Index>
__global__ void mark_row_ends_kernel(const Index* __restrict__ row_ptr, Index rows, unsigned* __restrict__ ends) {
  for (std::int64_t r = global_thread(); r < rows; r += grid_threads()) {
    const std::int64_t end = row_ptr[r + 1];
    if (end > static_cast<std::int64_t>(row_ptr[r])) atomicOr(ends + (end - 1) / 32, 1u << ((end - 1) % 32));
  }
}

template <int K, class Index>
__global__ void count_row_ends_kernel(const unsigned* __restrict__ ends, std::int64_t tiles,
                                      Index* __restrict__ counts) {
  for (std::int64_t tile = global_thread(); tile <= tiles; tile += grid_threads()) {
    int n = 0;
    if (tile < tiles)
      for (int w = 0; w < K; ++w) n += __popc(ends[tile * K + w]);
    counts[tile] = static_cast<Index>(n);
  }
}

template <int K, class Value, class Index>
class SegmentedSum final : public CudaAlgorithm<Value, Index> {
 public:
  SegmentedSum(const CsrView<Value, Index>& a, Operation op, const Options& options, cudaStream_t stream)
      : a_(a),
        op_(op),
        block_(warp_block_size(options.block_size, kDefaultBlock, "SegmentedSum")),
        count_((std::int64_t(a.nnz) + 32 * K - 1) / (32 * K)),
        ends_(static_cast<std::size_t>(count_ * K)),
        first_row_(static_cast<std::size_t>(count_ + 1)),
        carries_(static_cast<std::size_t>(op == Operation::NonTranspose ? count_ : 0)) {
    row_of_ = DeviceBuffer<Index>(static_cast<std::size_t>(a.rows));
    nonempty_ = format::partition_rows(a.row_ptr, a.rows, Index(0), row_of_.data(), stream);
    if (nonempty_ == a.rows) row_of_ = DeviceBuffer<Index>();  // no empty row: rows are their own numbers
    SPMV_CUDA_CHECK(cudaMemsetAsync(ends_.data(), 0, ends_.bytes(), stream));
    constexpr int block = format::kPlanBlock;
    mark_row_ends_kernel<<<grid_for(a.rows, block), block, 0, stream>>>(a.row_ptr, a.rows, ends_.data());
    SPMV_CHECK_LAUNCH("mark_row_ends_kernel");
    const unsigned tile_grid = grid_for(count_ + 1, block);
    count_row_ends_kernel<K><<<tile_grid, block, 0, stream>>>(ends_.data(), count_, first_row_.data());
    SPMV_CHECK_LAUNCH("count_row_ends_kernel");
    run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveSum(temp, bytes, first_row_.data(), first_row_.data(), count_ + 1, stream);
        },
        stream);
    aligned_ = is_aligned(a.values, 16) && is_aligned(a.col_idx, 16);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    const Tiles<Value, Index> t{ends_.data(), first_row_.data(), row_of_.data(), carries_.data(), count_,
                                nonempty_,    std::int64_t(a_.rows) - nonempty_, aligned_};
    const std::int64_t tile_blocks = std::min<std::int64_t>(grid_for(count_ * 32, block_), INT_MAX / 2);
    if (op_ == Operation::Transpose) {
      scale_vector(beta, y, a_.cols, stream);
      if (count_ == 0) return;
      segmented_sum_transpose_kernel<K><<<static_cast<unsigned>(tile_blocks), block_, 0, stream>>>(a_, alpha, x, y, t);
      SPMV_CHECK_LAUNCH("segmented_sum_transpose_kernel");
      return;
    }
    const std::int64_t empty_blocks = t.empty > 0 ? std::min<std::int64_t>(grid_for(t.empty, block_), INT_MAX / 2) : 0;
    segmented_sum_kernel<K><<<static_cast<unsigned>(tile_blocks + empty_blocks), block_, 0, stream>>>(
        a_, alpha, x, beta, y, t, tile_blocks * block_);
    SPMV_CHECK_LAUNCH("segmented_sum_kernel");
    if (count_ > 1) {  // one tile's carry belongs to no row
      carry_kernel<<<grid_for(count_, kCarryBlock), kCarryBlock, 0, stream>>>(t, alpha, y);
      SPMV_CHECK_LAUNCH("segmented_sum carry_kernel");
    }
  }

  std::string policy() const override {
    return "block=" + std::to_string(block_) + " nonzeros_per_lane=" + std::to_string(K) +
           " tiles=" + std::to_string(count_) + " empty_rows=" + std::to_string(std::int64_t(a_.rows) - nonempty_) +
           (op_ == Operation::Transpose ? std::string(" transpose=stripes (atomic scatter: not bit-reproducible)")
                                        : " vector_loads=" + std::string(aligned_ ? "on" : "off") +
                                              " (carries added with atomics: not bit-reproducible)");
  }
  std::size_t extra_bytes() const override {
    return ends_.bytes() + first_row_.bytes() + carries_.bytes() + row_of_.bytes();
  }

 private:
  CsrView<Value, Index> a_;
  Operation op_;
  int block_;
  std::int64_t count_;
  DeviceBuffer<unsigned> ends_;
  DeviceBuffer<Index> first_row_;
  DeviceBuffer<Value> carries_;
  DeviceBuffer<Index> row_of_;
  std::int64_t nonempty_ = 0;
  bool aligned_ = false;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_segmented_sum(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                              cudaStream_t stream) {
  return std::make_unique<SegmentedSum<kLaneItems<Value>, Value, Index>>(matrix, op, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_segmented_sum)

}  // namespace spmv::cuda
