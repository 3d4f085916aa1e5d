#pragma once
// Private: LightSpMV's policy, vector-size rule and row loop (Liu & Schmidt, ASAP 2015; lightspmv.cu has the
// design), generic over the semiring (Ops: zero, add and mul of core/semiring_ops.hpp) and over what a finished row
// writes (Output, common/row_output.cuh), so that the SpMV (lightspmv.cu) and the semiring product
// (semiring_lightspmv.cu) are one kernel body with one launch rule. The row counter is the product's workspace.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/common/launch.cuh"
#include "cuda/common/stored_value.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::lightspmv {

// Launch policy (tuning as data). First values, to be tuned on the H100/H200: block_size 256 (the grid
// comes from occupancy, so the block size only sets the granularity); unroll = whole steps in flight
// per lane (the paper has none).
struct Policy {
  int block_size;
  int unroll;
};
constexpr Policy policy_for(int /*value_bytes*/) { return {256, 4}; }

// Vector size rule of the LightSpMV code, from the rounded mean row length: <= 2 -> 2 lanes, <= 4 -> 4,
// <= 64 -> 8, longer -> 32 (16 only through Options.subwarp).
constexpr int kMeanForVector2 = 2;
constexpr int kMeanForVector4 = 4;
constexpr int kMeanForVector8 = 64;

inline int vector_size(double mean) {
  const double rounded = std::nearbyint(mean);
  if (rounded <= kMeanForVector2) return 2;
  if (rounded <= kMeanForVector4) return 4;
  if (rounded <= kMeanForVector8) return 8;
  return 32;
}

// The row counter: 32 bits for 32-bit matrices, 64 bits otherwise. Unsigned because the last round of
// every warp overshoots `rows` by up to one fetch per warp, which must not wrap for rows near INT_MAX.
template <class Index>
using RowCounter = std::conditional_t<sizeof(Index) == 4, unsigned int, unsigned long long>;

// A product's block, lanes per row (Options.block_size and subwarp where set, else the policy and the rule) and
// grid: as many blocks as `kernel` keeps resident at once, but no more than the rows need (persistent grid).
struct Launch {
  int block = 0;
  int vector = 0;
  unsigned grid = 1;
};
inline Launch launch_for(std::int64_t rows, std::int64_t nnz, int value_bytes, const Options& options) {
  Launch l;
  const double mean = double(nnz) / double(rows);
  l.block = warp_block_size(options.block_size, policy_for(value_bytes).block_size, "LightSpmv");
  l.vector = checked_width(options.subwarp, vector_size(mean), 2, "LightSpmv: subwarp");
  return l;
}
template <class Kernel>
void size_grid(Launch& l, std::int64_t rows, Kernel kernel) {
  int blocks_per_sm = 0;
  SPMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, l.block, 0));
  if (blocks_per_sm < 1)
    throw Unsupported("LightSpmv: block_size " + std::to_string(l.block) + " cannot be resident on this device");
  const std::int64_t resident = std::int64_t(blocks_per_sm) * device_multiprocessors();
  l.grid = static_cast<unsigned>(std::min<std::int64_t>(resident, grid_for(rows * l.vector, l.block)));
}

inline std::string policy_string(const Launch& l, int value_bytes) {
  return "block=" + std::to_string(l.block) + " grid=" + std::to_string(l.grid) + " vector=" +
         std::to_string(l.vector) + " unroll=" + std::to_string(policy_for(value_bytes).unroll) +
         " rows_per_atomic=" + std::to_string(32 / l.vector);
}

// Warp-level dynamic row distribution: lane 0 of a warp fetches rows for all the warp's vectors with one
// atomicAdd on the counter (zeroed on the stream before the launch), a shuffle broadcasts the first row, each
// vector of V lanes folds its row from Ops::zero() (subwarp_row_fold) and combines its lanes with Ops::add. Which
// vector takes a row depends on timing, but a row's walk and combine do not: every product gives the same bits.
template <int V, class Ops, class Value, class Index, class Output>
__device__ __forceinline__ void rows(const CsrView<Value, Index>& a, const compute_t<Value>* __restrict__ x,
                                     compute_t<Value>* __restrict__ y, RowCounter<Index>* __restrict__ row_counter,
                                     const Output& output) {
  using Counter = RowCounter<Index>;
  using Real = compute_t<Value>;
  constexpr int unroll = policy_for(sizeof(Value)).unroll;
  constexpr int vectors_per_warp = 32 / V;
  const int warp_lane = threadIdx.x & 31;
  const int lane = warp_lane & (V - 1);
  const int vector = warp_lane / V;
  const Counter rows = static_cast<Counter>(a.rows);
  for (;;) {
    // One atomic per warp per round (warp-level dynamic distribution), then a broadcast.
    Counter first = 0;
    if (warp_lane == 0) first = atomicAdd(row_counter, Counter(vectors_per_warp));
    first = __shfl_sync(0xffffffffu, first, 0);
    if (first >= rows) break;  // uniform across the warp
    const std::int64_t row = std::int64_t(first) + vector;
    if (row < a.rows) {
      const std::int64_t begin = __ldg(a.row_ptr + row);
      const std::int64_t end = __ldg(a.row_ptr + row + 1);
      Real acc = subwarp_row_fold<V, 1, unroll, Ops>(a.col_idx, a.values, x, begin, end, a.nnz, lane);
      acc = subwarp_reduce<V>(acc, [](Real p, Real q) { return Ops::add(p, q); });
      if (lane == 0) output(y, row, acc);
    }
  }
}

}  // namespace spmv::cuda::lightspmv
