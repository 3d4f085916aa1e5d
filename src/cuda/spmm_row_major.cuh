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

// The largest block the SpMM kernels take (their __launch_bounds__): 512 threads allow up to 128
// registers a thread. At 1024 (the SpMV kernels' bound, 64 registers) the f64 32x2 tile spilled
// 116-148 bytes; at 512 ptxas (CUDA 13, sm_90, -Xptxas -v) still keeps most kernels at <= 64
// registers by choice, with spills of at most 48 bytes in the f64 / int64 row-major kernels.
inline constexpr int kSpmmMaxBlock = 512;

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

// Nonzeros of one broadcast batch whose X loads a lane issues before it uses any of them: 8 loads a
// lane (8 nonzeros at R = 1, 4 at R = 2), so that a sub-warp keeps several X rows in flight even on
// rows shorter than its width (a plain loop waits for each load in turn). Not measured yet.
template <int L, int R>
inline constexpr int kBroadcastGroup = L < 8 / R ? L : 8 / R;

// Row `row`'s nonzeros [begin, end) times X's columns, all tiles: Y(row, :) = alpha * sum + beta * Y(row, :),
// or, for a chunk of a long row (Atomic), Y(row, :) += alpha * sum with atomics. The nonzeros are loaded
// L at a time (one per lane) and broadcast in groups of kBroadcastGroup<L, R>: the group's shuffles and X
// loads first, then its FMAs. Broadcast slots past the batch's end carry value 0 and load nothing, so
// NaN or Inf in X rows the row does not touch never reach Y.
template <int L, int R, bool Atomic, class Value, class Index>
__device__ __forceinline__ void row_major_segment(const CsrView<Value, Index>& a, std::int64_t k, Value alpha,
                                                  const Value* __restrict__ x, std::int64_t ldx, Value beta,
                                                  Value* __restrict__ y, Strides ys, std::int64_t row,
                                                  std::int64_t begin, std::int64_t end, int lane) {
  constexpr int G = kBroadcastGroup<L, R>;
  const unsigned mask = subwarp_mask<L>();
  for (std::int64_t c0 = 0; c0 < k; c0 += L * R) {
    const std::int64_t first = c0 + lane;  // this lane's first column
    bool valid[R];
    Value acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      valid[r] = first + r * L < k;
      acc[r] = Value(0);
    }
    for (std::int64_t base = begin; base < end; base += L) {
      const std::int64_t p = base + lane;
      Index my_column = 0;
      Value my_value = 0;
      if (p < end) {
        my_column = __ldg(a.col_idx + p);
        my_value = __ldg(a.values + p);
      }
      const int n = end - base < L ? static_cast<int>(end - base) : L;  // uniform over the sub-warp
      for (int t0 = 0; t0 < n; t0 += G) {
        Value value[G];
        Value xv[G][R];
#pragma unroll
        for (int u = 0; u < G; ++u) {
          const int t = t0 + u;
          const Index column = __shfl_sync(mask, my_column, t, L);
          const Value v = __shfl_sync(mask, my_value, t, L);
          const bool live = t < n;
          value[u] = live ? v : Value(0);
          const Value* xr = x + std::int64_t(column) * ldx + first;
#pragma unroll
          for (int r = 0; r < R; ++r) xv[u][r] = live && valid[r] ? __ldg(xr + r * L) : Value(0);
        }
#pragma unroll
        for (int u = 0; u < G; ++u)
#pragma unroll
          for (int r = 0; r < R; ++r) acc[r] += value[u] * xv[u][r];
      }
    }
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
__global__ void __launch_bounds__(kSpmmMaxBlock)
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
__global__ void __launch_bounds__(kSpmmMaxBlock)
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
__global__ void __launch_bounds__(kSpmmMaxBlock)
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
__global__ void __launch_bounds__(kSpmmMaxBlock)
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
