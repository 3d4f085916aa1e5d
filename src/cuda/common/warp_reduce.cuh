#pragma once
// Sub-warp reductions in registers. Bell & Garland (SC'09 §3.4) reduce a row's partial sums through
// shared memory; since Kepler the shuffle intrinsics do it without shared memory or __syncthreads.
// A sub-warp is an aligned group of W lanes of one warp, W a power of two in [1, 32]; blocks must hold
// whole warps (warp_launch.cuh checks block sizes).
#include <cuda_runtime.h>

namespace spmv::cuda {

// The calling lane's sub-warp, as the member mask of the *_sync intrinsics. Sub-warps of one warp
// may diverge (one still walks a long row while its neighbour is done), so each synchronises only
// its own lanes.
template <int W>
__device__ __forceinline__ unsigned subwarp_mask() {
  static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "sub-warp width must be a power of two <= 32");
  if constexpr (W == 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << W) - 1u) << (lane & ~unsigned(W - 1));
  }
}

// Sum over the W lanes of the calling sub-warp; every lane receives the total (xor butterfly, log2 W
// shuffles, as many as cub::WarpReduce's shuffle path, without its shared TempStorage per logical
// warp). All W lanes must call it.
template <int W, class Value>
__device__ __forceinline__ Value subwarp_sum(Value v) {
  if constexpr (W > 1) {
    const unsigned mask = subwarp_mask<W>();
#pragma unroll
    for (int offset = W / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(mask, v, offset, W);
  }
  return v;
}

// The same butterfly for any associative, commutative `op` (the semirings' min, max, or): every lane of
// the sub-warp receives op over its W lanes.
template <int W, class Value, class Op>
__device__ __forceinline__ Value subwarp_reduce(Value v, Op op) {
  if constexpr (W > 1) {
    const unsigned mask = subwarp_mask<W>();
#pragma unroll
    for (int offset = W / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(mask, v, offset, W));
  }
  return v;
}

}  // namespace spmv::cuda
