#pragma once
// SpMM kernels for column-major X (docs/ALGORITHMS.md "SpMM"). Columns of X are far apart (ld), so
// lanes cannot run across them with coalesced loads; instead a sub-warp of W lanes strides the row's
// nonzeros as CSR-vector does (Bell & Garland SC'09 §3.4), and each lane keeps a register tile of R
// columns: per nonzero it gathers X(col, c0..c0+R) and does R FMAs, so the nonzero (index and value)
// is loaded once per tile of R columns instead of once per column. The R sums are reduced over the
// sub-warp with shuffles (warp_reduce.cuh) and written by R different lanes.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/epilogue.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/spmm_row_major.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::spmm {

// Row `row`'s nonzeros [begin, end) times X's columns, all tiles of R: Y(row, :) = alpha * sum + beta *
// Y(row, :), or, for a chunk of a long row (Atomic), Y(row, :) += alpha * sum with atomics.
template <int W, int R, bool Atomic, class Value, class Index>
__device__ __forceinline__ void col_major_segment(const CsrView<Value, Index>& a, std::int64_t k, Value alpha,
                                                  const Value* __restrict__ x, std::int64_t ldx, Value beta,
                                                  Value* __restrict__ y, Strides ys, std::int64_t row,
                                                  std::int64_t begin, std::int64_t end, int lane) {
  for (std::int64_t c0 = 0; c0 < k; c0 += R) {
    const Value* xt = x + c0 * ldx;
    Value acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = Value(0);
    if (k - c0 >= R) {  // a whole tile: R independent gathers per nonzero
#pragma unroll 2
      for (std::int64_t p = begin + lane; p < end; p += W) {
        const Value* xc = xt + __ldg(a.col_idx + p);
        const Value value = __ldg(a.values + p);
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += value * __ldg(xc + r * ldx);
      }
    } else {
      const int width = static_cast<int>(k - c0);
      for (std::int64_t p = begin + lane; p < end; p += W) {
        const Value* xc = xt + __ldg(a.col_idx + p);
        const Value value = __ldg(a.values + p);
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (r < width) acc[r] += value * __ldg(xc + r * ldx);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = subwarp_sum<W>(acc[r]);
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r % W == lane && c0 + r < k) {
        const std::int64_t at = row * ys.row + (c0 + r) * ys.col;
        if constexpr (Atomic) atomicAdd(y + at, alpha * acc[r]);
        else y[at] = axpby(alpha, acc[r], beta, y, at);
      }
  }
}

// Y = alpha * A * X + beta * Y, X column-major (leading dimension ldx); rows longer than long_row are
// left to col_major_chunk_kernel.
template <int W, int R, class Value, class Index>
__global__ void __launch_bounds__(kSpmmMaxBlock)
    col_major_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                     std::int64_t ldx, Value beta, Value* __restrict__ y, Strides ys, std::int64_t long_row) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    if (end - begin > long_row) continue;  // uniform over the sub-warp
    col_major_segment<W, R, false>(a, k, alpha, x, ldx, beta, y, ys, row, begin, end, lane);
  }
}

template <int W, int R, class Value, class Index>
__global__ void __launch_bounds__(kSpmmMaxBlock)
    col_major_chunk_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                           std::int64_t ldx, Value* __restrict__ y, Strides ys, const Chunk<Index>* __restrict__ chunks,
                           std::int64_t num_chunks) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; c < num_chunks; c += stride) {
    const Chunk<Index> chunk = chunks[c];
    col_major_segment<W, R, true>(a, k, alpha, x, ldx, Value(0), y, ys, chunk.row, chunk.begin, chunk.end, lane);
  }
}

// Y += alpha * A^T * X (after Y = beta * Y), X column-major: lanes stride nonzeros [begin, end) of row
// `row` of A, each scattering a_ij * alpha * X(row, c0..c0+R) into Y(j, c0..c0+R) with atomics.
template <int W, int R, class Value, class Index>
__device__ __forceinline__ void col_major_scatter(const CsrView<Value, Index>& a, std::int64_t k, Value alpha,
                                                  const Value* __restrict__ x, std::int64_t ldx, Value* __restrict__ y,
                                                  Strides ys, std::int64_t row, std::int64_t begin, std::int64_t end,
                                                  int lane) {
  for (std::int64_t c0 = 0; c0 < k; c0 += R) {
    const int width = k - c0 >= R ? R : static_cast<int>(k - c0);
    Value scaled[R];
#pragma unroll
    for (int r = 0; r < R; ++r) scaled[r] = r < width ? alpha * __ldg(x + row + (c0 + r) * ldx) : Value(0);
    for (std::int64_t p = begin + lane; p < end; p += W) {
      const std::int64_t column = __ldg(a.col_idx + p);
      const Value value = __ldg(a.values + p);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < width) atomicAdd(y + column * ys.row + (c0 + r) * ys.col, value * scaled[r]);
    }
  }
}

template <int W, int R, class Value, class Index>
__global__ void __launch_bounds__(kSpmmMaxBlock)
    col_major_transpose_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                               std::int64_t ldx, Value* __restrict__ y, Strides ys, std::int64_t long_row) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    if (begin == end || end - begin > long_row) continue;
    col_major_scatter<W, R>(a, k, alpha, x, ldx, y, ys, row, begin, end, lane);
  }
}

template <int W, int R, class Value, class Index>
__global__ void __launch_bounds__(kSpmmMaxBlock)
    col_major_transpose_chunk_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                                     std::int64_t ldx, Value* __restrict__ y, Strides ys,
                                     const Chunk<Index>* __restrict__ chunks, std::int64_t num_chunks) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; c < num_chunks; c += stride) {
    const Chunk<Index> chunk = chunks[c];
    col_major_scatter<W, R>(a, k, alpha, x, ldx, y, ys, chunk.row, chunk.begin, chunk.end, lane);
  }
}

}  // namespace spmv::cuda::spmm
