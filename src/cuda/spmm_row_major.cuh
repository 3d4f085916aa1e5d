#pragma once
// SpMM kernels for row-major X (docs/ALGORITHMS.md "SpMM"). A sub-warp of L lanes owns one row of A
// and a tile of L*R columns of X: lane l holds the sums of columns c0 + l + r*L (r < R). The row's
// nonzeros are loaded L at a time, one per lane (coalesced), and broadcast over the sub-warp with
// shuffles; for each, the L lanes read L consecutive entries of X's row (coalesced) and do R FMAs.
// The matrix is read once per tile (once in all for k <= L*R), not once per column. This is the
// row-splitting SpMM of Yang, Buluc & Owens ("Design principles for sparse matrix multiplication on
// the GPU", Euro-Par 2018: a warp per row, nonzeros shared by shuffles, coalesced row-major B), at
// sub-warp grain so that k = 4 or 8 does not idle 3/4 of a warp. Lanes whose column is >= k (k not a
// multiple of L) neither load nor store.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/epilogue.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::spmm {

// Strides of Y: entry (i, j) at y[i * row + j * col] (either layout).
struct Strides {
  std::int64_t row;
  std::int64_t col;
};

// A piece [begin, end) of a long row (rows longer than the plan's split threshold): the row kernels skip
// such rows and the chunk kernels run their pieces, one sub-warp each, adding into Y with atomics.
template <class Index>
struct Chunk {
  std::int64_t begin;
  std::int64_t end;
  Index row;
};

// Calls step(column, value) for the nonzeros of [begin, end) in order, on every lane of the L-lane
// sub-warp (the same nonzero on all lanes at once): L loads per batch, then L broadcasts.
template <int L, class Value, class Index, class Step>
__device__ __forceinline__ void broadcast_row(const Index* __restrict__ col_idx, const Value* __restrict__ values,
                                              std::int64_t begin, std::int64_t end, int lane, Step&& step) {
  const unsigned mask = subwarp_mask<L>();
  for (std::int64_t base = begin; base < end; base += L) {
    const std::int64_t p = base + lane;
    Index my_column = 0;
    Value my_value = 0;
    if (p < end) {
      my_column = __ldg(col_idx + p);
      my_value = __ldg(values + p);
    }
    if (end - base >= L) {  // a whole batch: unrolled, so the X loads of several nonzeros are in flight
#pragma unroll
      for (int t = 0; t < L; ++t) step(__shfl_sync(mask, my_column, t, L), __shfl_sync(mask, my_value, t, L));
    } else {
      const int n = static_cast<int>(end - base);
      for (int t = 0; t < n; ++t) step(__shfl_sync(mask, my_column, t, L), __shfl_sync(mask, my_value, t, L));
    }
  }
}

// Row `row`'s nonzeros [begin, end) times X's columns, all tiles: Y(row, :) = alpha * sum + beta * Y(row, :),
// or, for a chunk of a long row (Atomic), Y(row, :) += alpha * sum with atomics.
template <int L, int R, bool Atomic, class Value, class Index>
__device__ __forceinline__ void row_major_segment(const CsrView<Value, Index>& a, std::int64_t k, Value alpha,
                                                  const Value* __restrict__ x, std::int64_t ldx, Value beta,
                                                  Value* __restrict__ y, Strides ys, std::int64_t row,
                                                  std::int64_t begin, std::int64_t end, int lane) {
  for (std::int64_t c0 = 0; c0 < k; c0 += L * R) {
    const std::int64_t first = c0 + lane;  // this lane's first column
    bool valid[R];
    Value acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      valid[r] = first + r * L < k;
      acc[r] = Value(0);
    }
    broadcast_row<L>(a.col_idx, a.values, begin, end, lane, [&](Index column, Value value) {
      const Value* xr = x + std::int64_t(column) * ldx + first;
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (valid[r]) acc[r] += value * __ldg(xr + r * L);
    });
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (valid[r]) {
        const std::int64_t at = row * ys.row + (first + r * L) * ys.col;
        if constexpr (Atomic) atomicAdd(y + at, alpha * acc[r]);
        else y[at] = axpby(alpha, acc[r], beta, y, at);
      }
  }
}

// Y = alpha * A * X + beta * Y, X row-major (leading dimension ldx); rows longer than long_row are left
// to row_major_chunk_kernel.
template <int L, int R, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    row_major_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                     std::int64_t ldx, Value beta, Value* __restrict__ y, Strides ys, std::int64_t long_row) {
  const int lane = threadIdx.x & (L - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / L;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / L; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    if (end - begin > long_row) continue;  // uniform over the sub-warp
    row_major_segment<L, R, false>(a, k, alpha, x, ldx, beta, y, ys, row, begin, end, lane);
  }
}

// The long rows' chunks, one sub-warp each: Y(row, :) += alpha * (chunk's part of the row) X, after the
// plan set those rows of Y to beta * Y.
template <int L, int R, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    row_major_chunk_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                           std::int64_t ldx, Value* __restrict__ y, Strides ys, const Chunk<Index>* __restrict__ chunks,
                           std::int64_t num_chunks) {
  const int lane = threadIdx.x & (L - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / L;
  for (std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / L; c < num_chunks; c += stride) {
    const Chunk<Index> chunk = chunks[c];
    row_major_segment<L, R, true>(a, k, alpha, x, ldx, Value(0), y, ys, chunk.row, chunk.begin, chunk.end, lane);
  }
}

// Y += alpha * A^T * X (after Y = beta * Y), X row-major: nonzeros [begin, end) of row `row` of A scatter
// a_ij * alpha * X(row, tile) into Y(j, tile) with atomics, the lanes across the tile's columns
// (coalesced atomics).
template <int L, int R, class Value, class Index>
__device__ __forceinline__ void row_major_scatter(const CsrView<Value, Index>& a, std::int64_t k, Value alpha,
                                                  const Value* __restrict__ x, std::int64_t ldx, Value* __restrict__ y,
                                                  Strides ys, std::int64_t row, std::int64_t begin, std::int64_t end,
                                                  int lane) {
  for (std::int64_t c0 = 0; c0 < k; c0 += L * R) {
    const std::int64_t first = c0 + lane;
    bool valid[R];
    Value scaled[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      valid[r] = first + r * L < k;
      scaled[r] = valid[r] ? alpha * __ldg(x + row * ldx + first + r * L) : Value(0);
    }
    broadcast_row<L>(a.col_idx, a.values, begin, end, lane, [&](Index column, Value value) {
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (valid[r]) atomicAdd(y + std::int64_t(column) * ys.row + (first + r * L) * ys.col, value * scaled[r]);
    });
  }
}

template <int L, int R, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    row_major_transpose_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                               std::int64_t ldx, Value* __restrict__ y, Strides ys, std::int64_t long_row) {
  const int lane = threadIdx.x & (L - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / L;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / L; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    if (begin == end || end - begin > long_row) continue;  // uniform over the sub-warp
    row_major_scatter<L, R>(a, k, alpha, x, ldx, y, ys, row, begin, end, lane);
  }
}

template <int L, int R, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    row_major_transpose_chunk_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                                     std::int64_t ldx, Value* __restrict__ y, Strides ys,
                                     const Chunk<Index>* __restrict__ chunks, std::int64_t num_chunks) {
  const int lane = threadIdx.x & (L - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / L;
  for (std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / L; c < num_chunks; c += stride) {
    const Chunk<Index> chunk = chunks[c];
    row_major_scatter<L, R>(a, k, alpha, x, ldx, y, ys, chunk.row, chunk.begin, chunk.end, lane);
  }
}

}  // namespace spmv::cuda::spmm
