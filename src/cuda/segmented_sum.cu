// Segmented sum over nonzero-balanced warp tiles, with one bit per nonzero marking where rows end (the
// bit-field row descriptors of MERBIT, arXiv 2605.07391, on plain CSR; issue 13's power-law class):
//  - the nonzeros are cut into tiles of 32 * K, one warp each (K = 8 in float, 4 in double: a lane reads
//    32 bytes of values with two 16-byte loads and has K gathers of x in flight): equal work per warp
//    whatever the row lengths, no search at run time;
//  - at plan time a bit marks each row's last nonzero, and each tile gets the number of the row open at
//    its start (a prefix count of those bits): 1/8 byte per nonzero, where COO reads a 4-byte row index
//    and merge-path searches the row offsets;
//  - a lane sums its K products in order and writes the rows that end inside it; a warp segmented scan
//    (cub::WarpScan) hands each lane the partial sum of the row open at its start;
//  - a row spanning tiles (a split row, known at plan time) gets a slot: each of its tiles adds its part
//    there and the last to arrive writes y (csr-vector's split rows), so a product is one launch;
//  - when rows are empty, the bits number the non-empty rows only and a plan-time list maps them to
//    rows (4 bytes per non-empty row, the read that replaces CSR's row offsets); extra warps of the same
//    launch write y = beta * y on the empty ones.
// Split rows meet in atomics: not bit-reproducible for rows that span three or more tiles.
#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <climits>
#include <cstdlib>
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
using format::read_device_value;
using format::run_cub_at_plan_time;

// Launch policy (tuning as data): 128 threads, four tiles a block (as csr-vector's block: small blocks
// retire and refill SMs at a finer grain). Nonzeros per lane: 32 bytes of values.
constexpr int kDefaultBlock = 128;
template <class Value>
constexpr int kLaneItems = sizeof(Value) >= 8 ? 4 : 8;
constexpr int kPlanBlock = 256;

// The plan's arrays as the kernels read them.
template <class Real, class Index>
struct Tiles {
  const unsigned* ends;        // bit k: nonzero k is its row's last; K words a tile
  const Index* first_row;      // per tile: the non-empty row open at its start
  const Index* row_of;         // non-empty rows then empty ones; null when no row is empty
  const int* open_slot;        // per tile (+1): the split row open at its start, or -1 (a row starts there)
  const int* slot_tiles;       // per split row: the tiles it spans
  const Index* slot_row;       // per split row: its row
  Real* slot_sums;             // per split row: zero between products
  unsigned* slot_arrivals;     // likewise
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

// One tile's part of a row that spans several: added to the row's slot; the last of its tiles to arrive
// (threadfence reduction, as csr-vector's split rows) writes y and clears the slot for the next product.
// A row over two tiles adds two numbers to zero, the same bits in either order.
template <class Real, class Index>
__device__ __forceinline__ void add_to_split_row(const Tiles<Real, Index>& t, int slot, Real part, Real alpha,
                                                 Real beta, Real* __restrict__ y) {
  atomicAdd(t.slot_sums + slot, part);
  __threadfence();  // the part lands before the arrival is counted
  if (atomicAdd(t.slot_arrivals + slot, 1u) == static_cast<unsigned>(__ldg(t.slot_tiles + slot) - 1)) {
    __threadfence();
    const Real total = __ldcg(t.slot_sums + slot);
    t.slot_sums[slot] = Real(0);
    t.slot_arrivals[slot] = 0u;
    const std::int64_t r = __ldg(t.slot_row + slot);
    y[r] = axpby(alpha, total, beta, y, r);
  }
}

template <int K, class Value, class Index>
__device__ __forceinline__ void lane_products(const CsrView<Value, Index>& a, const Value* __restrict__ x,
                                              std::int64_t k0, bool aligned, Value (&p)[K]) {
  if (aligned && k0 + K <= static_cast<std::int64_t>(a.nnz)) {
    constexpr int kValueWidth = 16 / static_cast<int>(sizeof(Value));
    constexpr int kIndexWidth = 16 / static_cast<int>(sizeof(Index));
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

// One product in one launch: warps [0, tiles) sum a tile each (grid-stride), the remaining threads write
// the empty rows.
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
    int before = 0, tile_ends = 0;  // rows ending in earlier lanes of the tile; in the whole tile
    WarpInt(int_scan[warp_in_block]).ExclusiveSum(__popc(bits), before, tile_ends);
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
    // The row ending first in the tile started before it when the tile opens inside a split row.
    if (ended > 0) {
      const int slot = before == 0 ? __ldg(t.open_slot + tile) : -1;
      if (slot >= 0) {
        add_to_split_row(t, slot, open.sum + lead, alpha, beta, y);
      } else {
        const std::int64_t r = row_at(t.row_of, first);
        y[r] = axpby(alpha, open.sum + lead, beta, y, r);
      }
    }
    // The row open at the tile's end (the whole tile when no row ends in it) goes on in the next tile.
    if (lane == 31) {
      const int slot = __ldg(t.open_slot + tile + 1);
      if (slot >= 0) add_to_split_row(t, slot, tile_open.sum, alpha, beta, y);
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
__global__ void count_row_ends_kernel(const unsigned* __restrict__ ends, std::int64_t tiles, Index* __restrict__ counts) {
  for (std::int64_t tile = global_thread(); tile <= tiles; tile += grid_threads()) {
    int n = 0;
    if (tile < tiles)
      for (int w = 0; w < K; ++w) n += __popc(ends[tile * K + w]);
    counts[tile] = static_cast<Index>(n);
  }
}

// Tile t opens inside a row (its first nonzero is not a row's first) - a split row; new_row[t] = 1 when
// that row did not also open tile t - 1 (a row ended in t - 1, or t - 1 opened on a row's first nonzero).
template <int K>
__global__ void mark_split_rows_kernel(const unsigned* __restrict__ ends, std::int64_t tiles, std::int64_t nnz,
                                       int* __restrict__ opens_inside, int* __restrict__ new_row) {
  constexpr std::int64_t kTile = 32 * K;
  const auto inside = [&](std::int64_t tile) {
    if (tile <= 0 || tile * kTile >= nnz) return false;
    const std::int64_t k = tile * kTile - 1;
    return ((ends[k / 32] >> (k % 32)) & 1u) == 0;
  };
  for (std::int64_t tile = global_thread(); tile <= tiles; tile += grid_threads()) {
    const bool here = inside(tile);
    bool fresh = false;
    if (here) {
      int ended_before = 0;
      for (int w = 0; w < K; ++w) ended_before |= ends[(tile - 1) * K + w] != 0u;
      fresh = ended_before != 0 || !inside(tile - 1);
    }
    opens_inside[tile] = here;
    new_row[tile] = fresh;
  }
}

// open_slot[t] = the split row's number (inclusive count of new rows - 1) where tile t opens inside one,
// else -1; each split row counts its tiles (one more than the tiles opening inside it) and its row.
template <class Index>
__global__ void number_split_rows_kernel(const int* __restrict__ opens_inside, const int* __restrict__ row_number,
                                         const Index* __restrict__ first_row, const Index* __restrict__ row_of,
                                         std::int64_t tiles, int* __restrict__ open_slot, int* __restrict__ slot_tiles,
                                         Index* __restrict__ slot_row) {
  for (std::int64_t tile = global_thread(); tile <= tiles; tile += grid_threads()) {
    const int slot = opens_inside[tile] ? row_number[tile] - 1 : -1;
    open_slot[tile] = slot;
    if (slot < 0) continue;
    atomicAdd(slot_tiles + slot, 1);
    const std::int64_t n = first_row[tile];
    slot_row[slot] = static_cast<Index>(row_of ? static_cast<std::int64_t>(row_of[n]) : n);
  }
}

__global__ void plus_one_kernel(int* __restrict__ v, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) v[i] += 1;
}

template <class Value, class Index>
class SegmentedSum final : public CudaAlgorithm<Value, Index> {
 public:
  SegmentedSum(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a), block_(warp_block_size(options.block_size, kDefaultBlock, "SegmentedSum")) {
    const char* k = std::getenv("SPMV_SEGSUM_K");  // session experiment: lane items 4 or 8
    lane_items_ = k ? std::atoi(k) : kLaneItems<Value>;
    if (lane_items_ == 16) build<16>(stream); else if (lane_items_ == 8) build<8>(stream); else build<4>(stream);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    const Tiles<Value, Index> t{ends_.data(),      first_row_.data(), row_of_.data(),     open_slot_.data(),
                                slot_tiles_.data(), slot_row_.data(),  slot_sums_.data(), slot_arrivals_.data(),
                                count_,             nonempty_,         std::int64_t(a_.rows) - nonempty_, aligned_};
    const std::int64_t tile_blocks = std::min<std::int64_t>(grid_for(count_ * 32, block_), INT_MAX / 2);
    const std::int64_t empty_blocks = t.empty > 0 ? std::min<std::int64_t>(grid_for(t.empty, block_), INT_MAX / 2) : 0;
    const auto grid = static_cast<unsigned>(tile_blocks + empty_blocks);
    if (lane_items_ == 16)
      segmented_sum_kernel<16><<<grid, block_, 0, stream>>>(a_, alpha, x, beta, y, t, tile_blocks * block_);
    else if (lane_items_ == 8)
      segmented_sum_kernel<8><<<grid, block_, 0, stream>>>(a_, alpha, x, beta, y, t, tile_blocks * block_);
    else
      segmented_sum_kernel<4><<<grid, block_, 0, stream>>>(a_, alpha, x, beta, y, t, tile_blocks * block_);
    SPMV_CHECK_LAUNCH("segmented_sum_kernel");
  }

  std::string policy() const override {
    return "block=" + std::to_string(block_) + " nonzeros_per_lane=" + std::to_string(lane_items_) +
           " tiles=" + std::to_string(count_) + " split_rows=" + std::to_string(split_rows_) +
           " empty_rows=" + std::to_string(std::int64_t(a_.rows) - nonempty_) +
           " vector_loads=" + (aligned_ ? "on" : "off") + " (rows over 3+ tiles summed with atomics: not bit-reproducible)";
  }
  std::size_t extra_bytes() const override {
    return ends_.bytes() + first_row_.bytes() + row_of_.bytes() + open_slot_.bytes() + slot_tiles_.bytes() +
           slot_row_.bytes() + slot_sums_.bytes() + slot_arrivals_.bytes();
  }
  // Split rows go through slots that each product uses and clears.
  bool writes_workspace() const override { return split_rows_ > 0; }

 private:
  // The row-end bits, each tile's open row, the non-empty rows' list and the split rows' slots (plan time;
  // synchronises `stream`).
  template <int K>
  void build(cudaStream_t stream) {
    count_ = (std::int64_t(a_.nnz) + 32 * K - 1) / (32 * K);
    if (count_ >= INT_MAX) throw Unsupported("SegmentedSum: more than 2^31 tiles; use merge-path");
    ends_ = DeviceBuffer<unsigned>(static_cast<std::size_t>(count_ * K));
    first_row_ = DeviceBuffer<Index>(static_cast<std::size_t>(count_ + 1));
    row_of_ = DeviceBuffer<Index>(static_cast<std::size_t>(a_.rows));
    nonempty_ = format::partition_rows(a_.row_ptr, a_.rows, Index(0), row_of_.data(), stream);
    if (nonempty_ == a_.rows) row_of_ = DeviceBuffer<Index>();  // no empty row: rows are their own numbers
    SPMV_CUDA_CHECK(cudaMemsetAsync(ends_.data(), 0, ends_.bytes(), stream));
    mark_row_ends_kernel<<<grid_for(a_.rows, kPlanBlock), kPlanBlock, 0, stream>>>(a_.row_ptr, a_.rows, ends_.data());
    SPMV_CHECK_LAUNCH("mark_row_ends_kernel");
    const unsigned tile_grid = grid_for(count_ + 1, kPlanBlock);
    count_row_ends_kernel<K><<<tile_grid, kPlanBlock, 0, stream>>>(ends_.data(), count_, first_row_.data());
    SPMV_CHECK_LAUNCH("count_row_ends_kernel");
    run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveSum(temp, bytes, first_row_.data(), first_row_.data(), count_ + 1, stream);
        },
        stream);
    DeviceBuffer<int> opens_inside(static_cast<std::size_t>(count_ + 1)), row_number(static_cast<std::size_t>(count_ + 1));
    mark_split_rows_kernel<K><<<tile_grid, kPlanBlock, 0, stream>>>(ends_.data(), count_, a_.nnz, opens_inside.data(),
                                                                     row_number.data());
    SPMV_CHECK_LAUNCH("mark_split_rows_kernel");
    run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::InclusiveSum(temp, bytes, row_number.data(), row_number.data(), count_ + 1, stream);
        },
        stream);
    split_rows_ = read_device_value(row_number.data() + count_, stream);
    open_slot_ = DeviceBuffer<int>(static_cast<std::size_t>(count_ + 1));
    slot_tiles_ = DeviceBuffer<int>(static_cast<std::size_t>(split_rows_));
    slot_row_ = DeviceBuffer<Index>(static_cast<std::size_t>(split_rows_));
    slot_sums_ = DeviceBuffer<Value>(static_cast<std::size_t>(split_rows_));
    slot_arrivals_ = DeviceBuffer<unsigned>(static_cast<std::size_t>(split_rows_));
    if (split_rows_ > 0) {
      SPMV_CUDA_CHECK(cudaMemsetAsync(slot_tiles_.data(), 0, slot_tiles_.bytes(), stream));
      SPMV_CUDA_CHECK(cudaMemsetAsync(slot_sums_.data(), 0, slot_sums_.bytes(), stream));
      SPMV_CUDA_CHECK(cudaMemsetAsync(slot_arrivals_.data(), 0, slot_arrivals_.bytes(), stream));
    }
    number_split_rows_kernel<<<tile_grid, kPlanBlock, 0, stream>>>(opens_inside.data(), row_number.data(),
                                                                    first_row_.data(), row_of_.data(), count_,
                                                                    open_slot_.data(), slot_tiles_.data(),
                                                                    slot_row_.data());
    SPMV_CHECK_LAUNCH("number_split_rows_kernel");
    if (split_rows_ > 0) {
      plus_one_kernel<<<grid_for(split_rows_, kPlanBlock), kPlanBlock, 0, stream>>>(slot_tiles_.data(), split_rows_);
      SPMV_CHECK_LAUNCH("plus_one_kernel");
    }
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before opens_inside and row_number go
    aligned_ = is_aligned(a_.values, 16) && is_aligned(a_.col_idx, 16);
  }

  CsrView<Value, Index> a_;
  int block_;
  int lane_items_ = 0;
  std::int64_t count_ = 0;
  std::int64_t nonempty_ = 0;
  std::int64_t split_rows_ = 0;
  bool aligned_ = false;
  DeviceBuffer<unsigned> ends_;
  DeviceBuffer<Index> first_row_;
  DeviceBuffer<Index> row_of_;
  DeviceBuffer<int> open_slot_;
  DeviceBuffer<int> slot_tiles_;
  DeviceBuffer<Index> slot_row_;
  DeviceBuffer<Value> slot_sums_;
  DeviceBuffer<unsigned> slot_arrivals_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_segmented_sum(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                              cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::SegmentedSum, op);
  return std::make_unique<SegmentedSum<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_segmented_sum)

}  // namespace spmv::cuda
