#pragma once
// Private: cooperative CSR's fixed rule and row walk (Reguly & Giles, InPar 2012; csr_coop.cu has the design),
// generic over the semiring (Ops: zero, add and mul of core/semiring_ops.hpp) and over what a finished row writes
// (Output, common/row_output.cuh), so that the SpMV (csr_coop.cu) and the semiring product
// (semiring_csr_coop.cu) are one kernel body with one launch rule.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "cuda/common/stored_value.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::csr_coop {

// The fixed rule's constants (Reguly & Giles).
// Threads per block.
constexpr int kFixedBlockSize = 128;
// coop = the power of two at or above sqrt(mean row length), clamped to [kMinCoop, kMaxCoop]: long
// rows get more threads, but fewer than CSR-vector's W ~ mean, so each thread keeps several loads.
constexpr int kMinCoop = 1;
constexpr int kMaxCoop = 32;
// repeat = max(1, rows * coop / (block * kTargetBlocks)): enough blocks to fill the GPU and balance
// the tail, and as many rows per group as that allows (fewer, larger blocks amortise row_ptr reads).
constexpr std::int64_t kTargetBlocks = 1500;

// Launch policy (tuning as data): unroll = whole steps in flight per thread. First value, to be tuned
// on the H100/H200; the paper's kernel has no unrolling.
struct Policy {
  int block_size;
  int unroll;
};
constexpr Policy policy_for(int /*value_bytes*/) { return {kFixedBlockSize, 4}; }

// The three parameters of a product: Options.block_size, coop and repeat where set, else the fixed rule's.
struct Launch {
  int block = 0;
  int coop = 1;
  int repeat = 1;
};
inline Launch launch_for(std::int64_t rows, std::int64_t nnz, int value_bytes, const Options& options) {
  Launch l;
  const double mean = double(nnz) / double(rows);
  l.block = warp_block_size(options.block_size, policy_for(value_bytes).block_size, "CsrCoop");
  l.coop = checked_width(options.coop, pow2_at_least(std::sqrt(mean), kMinCoop, kMaxCoop), kMinCoop, "CsrCoop: coop");
  if (options.repeat > 0) {
    l.repeat = options.repeat;
  } else {
    const std::int64_t r = rows * l.coop / (std::int64_t(l.block) * kTargetBlocks);
    l.repeat = static_cast<int>(std::clamp<std::int64_t>(r, 1, 1 << 20));
  }
  return l;
}

inline std::string policy_string(const Launch& l, int value_bytes) {
  return "block=" + std::to_string(l.block) + " coop=" + std::to_string(l.coop) + " repeat=" +
         std::to_string(l.repeat) + " unroll=" + std::to_string(policy_for(value_bytes).unroll);
}

// Each block owns tiles of (block / C) * repeat consecutive rows; pass i of a tile covers the i-th
// slab of block / C rows, one row per group of C threads, so a warp's row_ptr reads are contiguous.
// A group's lanes fold their strided share of the row from Ops::zero() (subwarp_row_fold), then combine
// their partial results with Ops::add (a shuffle butterfly), so an empty row gives the semiring's zero.
template <int C, class Ops, class Value, class Index, class Output>
__device__ __forceinline__ void rows(const CsrView<Value, Index>& a, const compute_t<Value>* __restrict__ x,
                                     compute_t<Value>* __restrict__ y, int repeat, const Output& output) {
  using Real = compute_t<Value>;
  constexpr int unroll = policy_for(sizeof(Value)).unroll;
  const int lane = threadIdx.x & (C - 1);
  const std::int64_t groups_per_block = blockDim.x / C;
  const std::int64_t group = threadIdx.x / C;
  const std::int64_t rows_per_tile = groups_per_block * repeat;
  const std::int64_t tiles = (std::int64_t(a.rows) + rows_per_tile - 1) / rows_per_tile;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    for (int i = 0; i < repeat; ++i) {
      const std::int64_t row = tile * rows_per_tile + i * groups_per_block + group;
      if (row >= a.rows) break;  // later passes only hold larger rows
      const std::int64_t begin = __ldg(a.row_ptr + row);
      const std::int64_t end = __ldg(a.row_ptr + row + 1);
      Real acc = subwarp_row_fold<C, 1, unroll, Ops>(a.col_idx, a.values, x, begin, end, a.nnz, lane);
      acc = subwarp_reduce<C>(acc, [](Real p, Real q) { return Ops::add(p, q); });
      if (lane == 0) output(y, row, acc);
    }
  }
}

}  // namespace spmv::cuda::csr_coop
