#pragma once
// SpMM kernels for row-major X whose rows are 16-byte aligned (docs/ALGORITHMS.md "SpMM"): an L-lane
// sub-warp owns one row of A. C of its lanes span a tile of C*V columns of X, V = 16 bytes / value
// (4 floats, 2 doubles) contiguous columns a lane, read with one 16-byte load; the G = L / C groups of
// C lanes split the row's nonzeros (group g takes every G-th from g) and their sums are added with
// xor shuffles at the end. Against spmm_row_major.cuh (lanes across columns, one column each, the
// nonzeros broadcast by shuffles) a nonzero costs one vector load and V FMAs a lane instead of two
// shuffles, a scalar load and one FMA per column, and short rows keep several X rows in flight per lane.
// Lanes never load X entries outside the columns [0, k) or rows the row does not reference, so NaN/Inf
// elsewhere in X never reach Y.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/epilogue.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/spmm_row_major.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::spmm {

// A 16-byte load of X as the CUDA vector type itself (float4, double2), not vector_load.cuh's
// load_vector: its uint4 copy costs these kernels 1-3 more registers in f64 (ptxas -v, 30 of the f64
// tile kernels, 2026-11-26), enough to move some across an occupancy step.
template <class Value>
struct Vector16;
template <>
struct Vector16<float> {
  using type = float4;
  static constexpr int width = 4;
};
template <>
struct Vector16<double> {
  using type = double2;
  static constexpr int width = 2;
};

// The V columns [first, first + live) of X's row `column` (zeros past live).
template <class Value, class Index>
__device__ __forceinline__ void load_x_vector(const Value* __restrict__ x, std::int64_t ldx, Index column,
                                              std::int64_t first, int live, Value (&out)[Vector16<Value>::width]) {
  constexpr int V = Vector16<Value>::width;
  const Value* p = x + std::int64_t(column) * ldx + first;
  if (live == V) {
    const auto v = __ldg(reinterpret_cast<const typename Vector16<Value>::type*>(p));
    if constexpr (V == 4) {
      out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
    } else {
      out[0] = v.x, out[1] = v.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = i < live ? __ldg(p + i) : Value(0);
  }
}

// Nonzeros a lane loads before it uses any of them (several X rows in flight per lane).
inline constexpr int kVectorUnroll = 4;

// Row `row`'s nonzeros [begin, end) times all of X's column tiles: Y(row, :) = alpha * sum + beta * Y(row, :),
// or for a chunk of a long row (Atomic) Y(row, :) += alpha * sum.
template <int C, int L, bool Atomic, class Value, class Index>
__device__ __forceinline__ void vector_segment(const CsrView<Value, Index>& a, std::int64_t k, Value alpha,
                                               const Value* __restrict__ x, std::int64_t ldx, Value beta,
                                               Value* __restrict__ y, Strides ys, std::int64_t row, std::int64_t begin,
                                               std::int64_t end, int lane) {
  constexpr int V = Vector16<Value>::width;
  constexpr int G = L / C;
  static_assert(L % C == 0 && L <= 32, "C lanes across columns must divide the sub-warp");
  const int c = lane % C, g = lane / C;
  for (std::int64_t c0 = 0; c0 < k; c0 += std::int64_t(C) * V) {
    const std::int64_t first = c0 + std::int64_t(c) * V;
    const int live = k - first >= V ? V : (k > first ? int(k - first) : 0);
    Value acc[V];
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] = Value(0);
    std::int64_t p = begin + g;
    if (live > 0) {
      for (; p + std::int64_t(kVectorUnroll - 1) * G < end; p += std::int64_t(kVectorUnroll) * G) {
        Index column[kVectorUnroll];
        Value value[kVectorUnroll];
#pragma unroll
        for (int u = 0; u < kVectorUnroll; ++u) {
          column[u] = __ldg(a.col_idx + p + u * G);
          value[u] = __ldg(a.values + p + u * G);
        }
        Value xv[kVectorUnroll][V];
#pragma unroll
        for (int u = 0; u < kVectorUnroll; ++u) load_x_vector(x, ldx, column[u], first, live, xv[u]);
#pragma unroll
        for (int u = 0; u < kVectorUnroll; ++u)
#pragma unroll
          for (int i = 0; i < V; ++i) acc[i] += value[u] * xv[u][i];
      }
      for (; p < end; p += G) {
        Value xv[V];
        load_x_vector(x, ldx, __ldg(a.col_idx + p), first, live, xv);
        const Value value = __ldg(a.values + p);
#pragma unroll
        for (int i = 0; i < V; ++i) acc[i] += value * xv[i];
      }
    }
    if constexpr (G > 1) {
      const unsigned mask = subwarp_mask<L>();
#pragma unroll
      for (int offset = C; offset < L; offset *= 2)
#pragma unroll
        for (int i = 0; i < V; ++i) acc[i] += __shfl_xor_sync(mask, acc[i], offset, L);
    }
    if (g == 0)
#pragma unroll
      for (int i = 0; i < V; ++i)
        if (i < live) {
          const std::int64_t at = row * ys.row + (first + i) * ys.col;
          if constexpr (Atomic) atomicAdd(y + at, alpha * acc[i]);
          else y[at] = axpby(alpha, acc[i], beta, y, at);
        }
  }
}

// Y = alpha * A * X + beta * Y; rows longer than long_row are left to vector_chunk_kernel.
template <int C, int L, class Value, class Index>
__global__ void __launch_bounds__(kSpmmMaxBlock)
    vector_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x, std::int64_t ldx,
                  Value beta, Value* __restrict__ y, Strides ys, std::int64_t long_row) {
  const int lane = threadIdx.x & (L - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / L;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / L; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    if (end - begin > long_row) continue;  // uniform over the sub-warp
    vector_segment<C, L, false>(a, k, alpha, x, ldx, beta, y, ys, row, begin, end, lane);
  }
}

// The long rows' chunks, a whole warp each (after the plan set those rows of Y to beta * Y).
template <int C, class Value, class Index>
__global__ void __launch_bounds__(kSpmmMaxBlock)
    vector_chunk_kernel(CsrView<Value, Index> a, std::int64_t k, Value alpha, const Value* __restrict__ x,
                        std::int64_t ldx, Value* __restrict__ y, Strides ys, const Chunk<Index>* __restrict__ chunks,
                        std::int64_t num_chunks) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < num_chunks; i += stride) {
    const Chunk<Index> chunk = chunks[i];
    vector_segment<C, 32, true>(a, k, alpha, x, ldx, Value(0), y, ys, chunk.row, chunk.begin, chunk.end, lane);
  }
}

}  // namespace spmv::cuda::spmm
