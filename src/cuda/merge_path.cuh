#pragma once
// The merge-based product's kernels (merge_path.cu has the design), generic over the semiring (Ops:
// zero, add and mul of core/semiring_ops.hpp) and over what a finished row and a tile's carry write
// (Output): the SpMV's alpha / beta epilogue (ScaledRows, merge_path.cu) or the semiring plan's plain
// result (SemiringRows, semiring_plan.cu). One kernel for both, so the semiring products get the same
// load balance as the fastest power-law SpMV.
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "core/semiring_ops.hpp"
#include "cuda/common/adaptive_products.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/merge_path_search.cuh"
#include "cuda/common/row_output.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::merge_path {

// Launch policy (tuning as data). Items per thread from CUB 1.x's AgentSpmv policy for sm_60+ (odd
// counts keep the threads' shared-memory walks on distinct banks). H200, 2026-11-21, % of copy
// bandwidth (rmat:scale=20 / mostly_empty 4M rows / long_rows / dense_rows): double 64 threads x 5
// items 34.5 / 38.1 / 38.2 / 37.8, x 9 items 33.8 / 35.8 / 38.8 / 47.4 (dense_rows only: fewer
// tiles carrying into its 500k-long rows), x 3 items 33.8 / 29.9 / 36.9 / 36.2; float x 7 items at
// 256 threads 26.3 / 28.8 / 30.1 / 37.2 vs 128 threads 26.4 / 28.2 / 28.3 / 35.8, x 11 items
// 24.1 / 28.8 / 30.2 / 39.1, x 5 items 26.4 / 28.1 / 29.7 / 34.8. Merge-path is Auto's choice
// for none of these since Hola's tuning (dispatch.cu); block 256 for float.
struct Policy {
  int block_threads;
  int items_per_thread;
};
constexpr Policy policy_for(int value_bytes) {
  return value_bytes > 4 ? Policy{64, 5} : Policy{256, 7};
}

// Static shared memory per block for the tile (row ends + products), below the 48 KiB static limit
// with the scan storage: large block sizes (Options.block_size) get fewer items per thread.
constexpr int kTileSharedBytes = 40 * 1024;

template <int Threads, class Value>
constexpr int items_per_thread() {
  constexpr int fit = kTileSharedBytes / (Threads * static_cast<int>(sizeof(int) + sizeof(Value)));
  constexpr int policy = policy_for(sizeof(Value)).items_per_thread;
  return fit < 1 ? 1 : (fit < policy ? fit : policy);
}

// Tile boundaries (§4.1, one search per tile): coords[t] = path coordinate on diagonal t * tile_items.
template <class Index>
__global__ void tile_search_kernel(const Index* row_ptr, Index rows, Index nnz, long long tile_items,
                                   long long num_tiles, MergeCoordinate<Index>* coords) {
  const long long path = static_cast<long long>(rows) + nnz;
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t <= num_tiles;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long diagonal = t * tile_items < path ? t * tile_items : path;
    const MergeCoordinate<long long> c = merge_path_search<long long>(diagonal, row_ptr + 1, rows, nnz);
    coords[t] = {static_cast<Index>(c.row), static_cast<Index>(c.nz)};
  }
}

// A partial row sum keyed by tile-local row.
template <class Value>
struct RowCarry {
  int row;
  Value value;
};

// Reduce-by-key combine (CUB's ReduceByKeyOp): adds (the semiring's add) runs of equal rows.
// Associative because the keys are non-decreasing along the path.
template <class Ops>
struct ReduceByRow {
  template <class Value>
  __device__ __forceinline__ RowCarry<Value> operator()(const RowCarry<Value>& a, const RowCarry<Value>& b) const {
    return {b.row, a.row == b.row ? Ops::add(a.value, b.value) : b.value};
  }
};

// The outputs (what a finished row and a carry write) live in common/row_output.cuh, shared with the other kernels
// written for both products.
using cuda::atomic_add;
using cuda::ScaledRows;
using cuda::SemiringRows;

template <int Threads, class Value, class Index, class Ops, class Output>
__global__ void __launch_bounds__(Threads)
    tile_kernel(CsrView<Value, Index> a, const MergeCoordinate<Index>* __restrict__ coords, long long num_tiles,
                bool aligned, Output output, const compute_t<Value>* __restrict__ x, compute_t<Value>* __restrict__ y,
                Index* __restrict__ carry_rows, compute_t<Value>* __restrict__ carry_values) {
  using Real = compute_t<Value>;  // products, sums and carries
  constexpr int kItems = items_per_thread<Threads, Real>();
  constexpr int kTileItems = Threads * kItems;
  using Products = CsrProducts<Value, Index, Ops>;
  using Carry = RowCarry<Real>;
  // Warp-scan based (as CUB's AgentSpmv): its storage is a few words per warp, not one item per thread.
  using BlockScan = cub::BlockScan<Carry, Threads, cub::BLOCK_SCAN_WARP_SCANS>;
  // Tile-local row end offsets (one extra: the row still open at the tile end), then the products;
  // after the walk `values` collects the tile's row totals. Staging whole vector groups needs
  // 2 * width slots of slack.
  __shared__ int row_end[kTileItems + 1];
  __shared__ alignas(16) Real values[kTileItems + 2 * Products::width];
  __shared__ typename BlockScan::TempStorage scan;

  const Products products{a.values, a.col_idx, x, a.nnz, aligned};
  const int tid = static_cast<int>(threadIdx.x);
  for (long long tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const MergeCoordinate<Index> start = coords[tile];
    const MergeCoordinate<Index> end = coords[tile + 1];
    const int tile_rows = static_cast<int>(end.row - start.row);
    const int tile_nnz = static_cast<int>(end.nz - start.nz);

    // Stage the tile's row ends relative to its first nonzero. Rows ending inside the tile end
    // at most at tile_nnz; the open row's end (or nnz past the last row) is clamped to tile_nnz, which
    // keeps every comparison of the walk unchanged.
    for (int i = tid; i <= tile_rows; i += Threads) {
      const long long row = static_cast<long long>(start.row) + i;
      const long long row_end_offset = row < a.rows ? static_cast<long long>(a.row_ptr[row + 1]) : a.nnz;
      const long long local = row_end_offset - start.nz;
      row_end[i] = local < tile_nnz ? static_cast<int>(local) : tile_nnz;
    }
    const int shift = static_cast<int>(start.nz - stage_range(values, products, start.nz, end.nz, tid, Threads));
    __syncthreads();

    // Diagonal search (§4.1) within the tile for this thread's first step, then its steps along the path.
    const int tile_items = tile_rows + tile_nnz;
    const int diagonal = min(tid * kItems, tile_items);
    const int diagonal_end = min(diagonal + kItems, tile_items);
    const MergeCoordinate<int> here = merge_path_search<int>(diagonal, row_end, tile_rows, tile_nnz);
    int row = here.row, nz = here.nz;
    Real running = Ops::zero();
    int emitted_row[kItems];
    Real emitted_sum[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      emitted_row[i] = -1;
      emitted_sum[i] = Ops::zero();
      if (diagonal + i < diagonal_end) {
        if (nz < row_end[row]) {  // move down: accumulate a nonzero
          running = Ops::add(running, values[shift + nz]);
          ++nz;
        } else {  // move right: the row ends here
          emitted_row[i] = row;
          emitted_sum[i] = running;
          running = Ops::zero();
          ++row;
        }
      }
    }

    // Carry fix-up: reduce-by-key over the threads' carry-outs; `prefix` is the sum of the earlier threads'
    // carries into the row this thread starts in, `tile_carry` the open row at the tile end.
    Carry prefix, tile_carry;
    BlockScan(scan).ExclusiveScan(Carry{row, running}, prefix, Carry{-1, Ops::zero()}, ReduceByRow<Ops>{}, tile_carry);
    __syncthreads();  // every walk has finished reading `values`
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (emitted_row[i] >= 0)
        values[emitted_row[i]] = emitted_row[i] == prefix.row ? Ops::add(emitted_sum[i], prefix.value) : emitted_sum[i];
    __syncthreads();
    for (int i = tid; i < tile_rows; i += Threads) {
      const Index r = start.row + i;
      output.row(y, r, values[i]);
    }
    if (tid == 0) {
      carry_rows[tile] = start.row + tile_carry.row;
      carry_values[tile] = tile_carry.value;
    }
    __syncthreads();  // shared memory is reused by the next tile
  }
}

// Tile fix-up (CUB's segment fix-up pass): each tile's open row was finished and written by a later
// tile in the main kernel, so its carry is only added (Output::carry). The row ending the path (rows)
// is no row.
template <class Real, class Index, class Output>
__global__ void fixup_kernel(const Index* __restrict__ carry_rows, const Real* __restrict__ carry_values,
                             long long num_tiles, Index rows, Output output, Real* __restrict__ y) {
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < num_tiles;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Index row = carry_rows[t];
    if (row < rows) output.carry(y, row, carry_values[t]);
  }
}

// One matrix's merge path cut into tiles of `tile_items` steps (the boundaries searched once, on
// `stream`) and the tiles' carries, the workspace every product writes: the host side of both
// products (MergePath, SemiringPlan).
template <class Real, class Index>
class Tiles {
 public:
  Tiles() = default;
  Tiles(const Index* row_ptr, Index rows, Index nnz, long long tile_items, cudaStream_t stream)
      : count_((static_cast<long long>(rows) + nnz + tile_items - 1) / tile_items),
        coords_(static_cast<std::size_t>(count_ + 1)),
        carry_rows_(static_cast<std::size_t>(count_)),
        carry_values_(static_cast<std::size_t>(count_)) {
    tile_search_kernel<<<grid_for(count_ + 1, kSetupBlock), kSetupBlock, 0, stream>>>(row_ptr, rows, nnz, tile_items,
                                                                                      count_, coords_.data());
    SPMV_CHECK_LAUNCH("merge_path::tile_search_kernel");
  }

  // One product: the tile kernel, then the fix-up of the carries.
  template <int Threads, class Ops, class Value, class Output>
  void run(const CsrView<Value, Index>& a, bool aligned, const Output& output, const Real* x, Real* y,
           cudaStream_t stream) {
    const auto grid = static_cast<unsigned>(std::min<long long>(count_, INT_MAX));
    tile_kernel<Threads, Value, Index, Ops><<<grid, Threads, 0, stream>>>(a, coords_.data(), count_, aligned, output, x,
                                                                          y, carry_rows_.data(), carry_values_.data());
    SPMV_CHECK_LAUNCH("merge_path::tile_kernel");
    if (count_ > 1) {  // with one tile the only carry is the path's end, which belongs to no row
      fixup_kernel<<<grid_for(count_, kSetupBlock), kSetupBlock, 0, stream>>>(carry_rows_.data(), carry_values_.data(),
                                                                              count_, a.rows, output, y);
      SPMV_CHECK_LAUNCH("merge_path::fixup_kernel");
    }
  }

  long long count() const { return count_; }
  std::size_t bytes() const { return coords_.bytes() + carry_rows_.bytes() + carry_values_.bytes(); }

 private:
  static constexpr int kSetupBlock = 256;  // tile search and fix-up: one thread per tile
  long long count_ = 0;
  DeviceBuffer<MergeCoordinate<Index>> coords_;  // count + 1 tile boundaries on the path
  DeviceBuffer<Index> carry_rows_;               // per tile: the row open at its end
  DeviceBuffer<Real> carry_values_;              // per tile: that row's partial sum inside the tile
};

}  // namespace spmv::cuda::merge_path
