#pragma once
// Private: segmented sum's product kernels and its plan-time tiles (segmented_sum.cu has the design), written once
// for the SpMV (segmented_sum.cu) and the semiring product (semiring_segmented_sum.cu, SemiringPlan with
// Algorithm::SegmentedSum). Templated on the semiring (Ops of core/semiring_ops.hpp: a lane's terms a_k ⊗ x[col_k]
// folded with ⊕ from the zero, the warp's segmented scan and the carries combined with ⊕); a row is written through
// common/row_output.cuh's RowOutput (the SpMV's alpha/beta epilogue for plus-times, y = the ⊕-sum for the others; the
// semiring product over plus-times is the SpMV's kernels with alpha = 1, beta = 0). A tile's carry is ⊕-added into
// the row open at its end, which a later tile has written, by a second kernel: atomicAdd for plus, a compare-and-swap
// loop on the value's bits for min, max and or (row_output.cuh's atomic_add; exact in any order).
#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/common/vector_load.cuh"
#include "cuda/common/warp_launch.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda {
// Internal linkage, as hola_common.cuh's first kernel: segmented_sum.cu and semiring_segmented_sum.cu each own their
// copy of the kernels (the plan-time ones have the same template arguments in both), so no host stub is shared
// between two device modules.
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

// Later partials restart the sum where a row ended in them (associative: a segmented sum, with the semiring's add).
template <class Ops>
struct SegmentedAdd {
  template <class Real>
  __device__ __forceinline__ Partial<Real> operator()(const Partial<Real>& a, const Partial<Real>& b) const {
    return {b.ended ? b.sum : Ops::add(a.sum, b.sum), a.ended | b.ended};
  }
};

template <class Index>
__device__ __forceinline__ std::int64_t row_at(const Index* row_of, std::int64_t n) {
  return row_of ? static_cast<std::int64_t>(__ldg(row_of + n)) : n;
}

// A lane's K terms a_k ⊗ x[col_k]; past the last nonzero, the semiring's zero (x unread).
template <int K, class Ops, class Value, class Index>
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
    for (int i = 0; i < K; ++i) p[i] = Ops::mul(v[i], __ldg(x + c[i]));
  } else {
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const std::int64_t k = k0 + i;
      p[i] = k < static_cast<std::int64_t>(a.nnz) ? Ops::mul(__ldcs(a.values + k), __ldg(x + __ldcs(a.col_idx + k)))
                                                  : Ops::zero();
    }
  }
}

// One product: warps [0, tiles) sum a tile each (grid-stride), the remaining threads write the empty rows (the
// semiring's zero: alpha * 0 + beta * y for the SpMV). alpha and beta: row_output's (unread by the semirings other
// than plus-times).
template <int K, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    segmented_sum_kernel(CsrView<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                         Value* __restrict__ y, Tiles<Value, Index> t, std::int64_t tile_threads) {
  using WarpInt = cub::WarpScan<int>;
  using WarpPartial = cub::WarpScan<Partial<Value>>;
  __shared__ typename WarpInt::TempStorage int_scan[kMaxWarpKernelBlock / 32];
  __shared__ typename WarpPartial::TempStorage partial_scan[kMaxWarpKernelBlock / 32];
  const RowOutput<Ops, Value> out = row_output<Ops>(alpha, beta);
  const std::int64_t g = global_thread();
  if (g >= tile_threads) {  // whole warps: tile_threads is a multiple of the block
    for (std::int64_t e = g - tile_threads; e < t.empty; e += grid_threads() - tile_threads) {
      const std::int64_t r = __ldg(t.row_of + t.nonempty + e);
      out.row(y, r, Ops::zero());
    }
    return;
  }
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp_in_block = static_cast<int>(threadIdx.x) / 32;
  for (std::int64_t tile = g / 32; tile < t.count; tile += tile_threads / 32) {  // warp-uniform
    Value p[K];
    lane_products<K, Ops>(a, x, tile * (32 * K) + std::int64_t(lane) * K, t.aligned, p);
    const unsigned word = __ldg(t.ends + tile * K + (lane * K) / 32);
    const unsigned bits = (word >> ((lane * K) & 31)) & ((1u << K) - 1u);
    int before = 0;  // rows ending in earlier lanes of the tile
    WarpInt(int_scan[warp_in_block]).ExclusiveSum(__popc(bits), before);
    const std::int64_t first = static_cast<std::int64_t>(__ldg(t.first_row + tile)) + before;

    // This lane's rows in order: the first to end may have started before the lane (finished after the
    // scan); the others started and ended inside it.
    Value run = Ops::zero(), lead = Ops::zero();
    int ended = 0;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      run = Ops::add(run, p[i]);
      if ((bits >> i) & 1u) {
        if (ended == 0) {
          lead = run;
        } else {
          const std::int64_t r = row_at(t.row_of, first + ended);
          out.row(y, r, run);
        }
        ++ended;
        run = Ops::zero();
      }
    }
    Partial<Value> open, tile_open;  // the row open at this lane's start; at the tile's end
    WarpPartial(partial_scan[warp_in_block])
        .ExclusiveScan(Partial<Value>{run, ended > 0}, open, Partial<Value>{Ops::zero(), 0}, SegmentedAdd<Ops>{},
                       tile_open);
    if (ended > 0) {
      const std::int64_t r = row_at(t.row_of, first);
      out.row(y, r, Ops::add(open.sum, lead));
    }
    if (lane == 0) t.carries[tile] = tile_open.sum;
  }
}

// Adds (⊕) each tile's carry into the row open at its end, which a later tile has written (or no row: past the
// last one). A carry equal to the zero changes nothing and is skipped.
template <class Ops, class Value, class Index>
__global__ void carry_kernel(Tiles<Value, Index> t, Value alpha, Value* __restrict__ y) {
  const RowOutput<Ops, Value> out = row_output<Ops>(alpha, Value(0));
  for (std::int64_t tile = global_thread(); tile < t.count; tile += grid_threads()) {
    const std::int64_t n = t.first_row[tile + 1];
    const Value carry = t.carries[tile];
    if (n < t.nonempty && carry != Ops::zero()) out.carry(y, row_at(t.row_of, n), carry);
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

// One matrix's warp tiles of K nonzeros a lane (the row-end bits, each tile's first row and the list of non-empty
// rows, built once on `stream`) and, with `carries`, each tile's carry, the workspace every non-transposed product
// writes: the host side of both products (SegmentedSum in segmented_sum.cu, SemiringSegmentedSum in
// semiring_segmented_sum.cu).
template <int K, class Value, class Index>
class SegmentedTiles {
 public:
  SegmentedTiles(const CsrView<Value, Index>& a, bool carries, cudaStream_t stream)
      : rows_(a.rows),
        count_((std::int64_t(a.nnz) + 32 * K - 1) / (32 * K)),
        ends_(static_cast<std::size_t>(count_ * K)),
        first_row_(static_cast<std::size_t>(count_ + 1)),
        carries_(static_cast<std::size_t>(carries ? count_ : 0)) {
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

  // The arrays as the kernels read them.
  Tiles<Value, Index> view() {
    return {ends_.data(), first_row_.data(), row_of_.data(), carries_.data(), count_,
            nonempty_,    rows_ - nonempty_, aligned_};
  }

  // y = op(A) x for the non-transposed product (`block` threads a block): the tile kernel, whose spare warps write the
  // empty rows, then the carries' fix-up. alpha and beta as row_output reads them.
  template <class Ops>
  void run(const CsrView<Value, Index>& a, Value alpha, const Value* x, Value beta, Value* y, int block,
           cudaStream_t stream) {
    const Tiles<Value, Index> t = view();
    const std::int64_t tile_blocks = std::min<std::int64_t>(grid_for(count_ * 32, block), INT_MAX / 2);
    const std::int64_t empty_blocks = t.empty > 0 ? std::min<std::int64_t>(grid_for(t.empty, block), INT_MAX / 2) : 0;
    segmented_sum_kernel<K, Ops><<<static_cast<unsigned>(tile_blocks + empty_blocks), block, 0, stream>>>(
        a, alpha, x, beta, y, t, tile_blocks * block);
    SPMV_CHECK_LAUNCH("segmented_sum_kernel");
    if (count_ > 1) {  // one tile's carry belongs to no row
      carry_kernel<Ops><<<grid_for(count_, kCarryBlock), kCarryBlock, 0, stream>>>(t, alpha, y);
      SPMV_CHECK_LAUNCH("segmented_sum carry_kernel");
    }
  }

  std::int64_t count() const { return count_; }
  std::int64_t empty_rows() const { return rows_ - nonempty_; }
  bool aligned() const { return aligned_; }
  std::size_t bytes() const { return ends_.bytes() + first_row_.bytes() + carries_.bytes() + row_of_.bytes(); }

 private:
  std::int64_t rows_;
  std::int64_t count_;
  DeviceBuffer<unsigned> ends_;
  DeviceBuffer<Index> first_row_;
  DeviceBuffer<Value> carries_;
  DeviceBuffer<Index> row_of_;
  std::int64_t nonempty_ = 0;
  bool aligned_ = false;
};

}  // namespace
}  // namespace spmv::cuda
