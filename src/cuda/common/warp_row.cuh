#pragma once
// One CSR row walked by a sub-warp of W lanes: the inner loop of CSR-vector (Bell & Garland SC'09
// §3.4), CSR-coop (Reguly & Giles 2012) and LightSpMV (Liu & Schmidt 2015). Lanes stride the row so a
// sub-warp's loads are contiguous. Beyond the papers, for Hopper:
//  * E > 1: each lane reads E consecutive nonzeros with one 8/16-byte load (vector_load.cuh);
//  * U steps unrolled: a lane issues U independent loads before it consumes any, keeping more
//    bytes in flight per warp;
//  * when one sub-warp step covers at least a 128-byte line of values, a row longer than one step is
//    walked from the step-aligned position at or below its first nonzero (CUSP's csr_vector trick),
//    so every step reads whole lines; lanes before the row's start skip.
// Positions are 64-bit: begin + U*W*E never overflows even for 32-bit matrices near INT_MAX nonzeros.
#include <cstdint>

#include "core/semiring_ops.hpp"
#include "cuda/common/stored_value.cuh"
#include "cuda/common/vector_load.cuh"

namespace spmv::cuda {

// Calls visit(column, value) (value widened to compute_t<Value>) once for every nonzero in [begin, end),
// each on exactly one lane of the
// calling sub-warp (lane in [0, W)). Requires E == 1 or col_idx and values aligned to 16 bytes
// (vector_load.cuh); nnz bounds every vector load, so nothing is read past the arrays' ends.
template <int W, int E, int U, class Value, class Index, class Visit>
__device__ __forceinline__ void subwarp_row_walk(const Index* __restrict__ col_idx, const Value* __restrict__ values,
                                                 std::int64_t begin, std::int64_t end, std::int64_t nnz, int lane,
                                                 Visit&& visit) {
  static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "W: a power of two <= 32");
  static_assert(E >= 1 && (E & (E - 1)) == 0, "E: a power of two");
  static_assert(U >= 1, "U: at least one step per iteration");
  constexpr std::int64_t span = std::int64_t(W) * E;  // nonzeros per sub-warp step
  constexpr bool align_lines = W * E * sizeof(Value) >= 128;

  std::int64_t first_step = begin & ~std::int64_t(E - 1);  // vector loads start at multiples of E
  if constexpr (align_lines) {
    if (end - begin > span) first_step = begin & ~(span - 1);
  }
  const std::int64_t lane_offset = std::int64_t(lane) * E;

  // One masked step: the nonzeros of [c, c + E) that belong to the row.
  auto masked_step = [&](std::int64_t c) {
    if (c >= end) return;
    if constexpr (E == 1) {
      if (c >= begin) visit(__ldg(col_idx + c), widen(__ldg(values + c)));
    } else if (c + E <= nnz) {
      const Vector<Index, E> cols = load_vector<E>(col_idx + c);
      const Vector<Value, E> vals = load_vector<E>(values + c);
#pragma unroll
      for (int j = 0; j < E; ++j)
        if (c + j >= begin && c + j < end) visit(cols.item[j], widen(vals.item[j]));
    } else {  // the arrays' last partial vector: scalar loads, never past nnz
#pragma unroll
      for (int j = 0; j < E; ++j)
        if (c + j >= begin && c + j < end) visit(__ldg(col_idx + c + j), widen(__ldg(values + c + j)));
    }
  };

  // The first step may start before `begin` (alignment); later ones start inside the row.
  masked_step(first_step + lane_offset);
  std::int64_t step = first_step + span;
  // Whole steps: no masks, U vector loads per array in flight before the first use.
  for (; step + U * span <= end; step += U * span) {
    Vector<Index, E> cols[U];
    Vector<Value, E> vals[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      cols[u] = load_vector<E>(col_idx + step + u * span + lane_offset);
      vals[u] = load_vector<E>(values + step + u * span + lane_offset);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int j = 0; j < E; ++j) visit(cols[u].item[j], widen(vals[u].item[j]));
  }
  // Fewer than U whole steps remain (plus a partial one): unrolled masked steps, still independent.
#pragma unroll
  for (int u = 0; u < U; ++u) masked_step(step + u * span + lane_offset);
}

// The lane's partial fold of the row's a_k ⊗ x[col_k] with a semiring's ⊕, from its zero (Ops:
// core/semiring_ops.hpp; reduce it over the sub-warp with subwarp_reduce and Ops::add). x is gathered through
// the read-only path: it is the only array reused across rows.
template <int W, int E, int U, class Ops, class Value, class Index>
__device__ __forceinline__ compute_t<Value> subwarp_row_fold(const Index* __restrict__ col_idx,
                                                             const Value* __restrict__ values,
                                                             const compute_t<Value>* __restrict__ x,
                                                             std::int64_t begin, std::int64_t end, std::int64_t nnz,
                                                             int lane) {
  compute_t<Value> acc = Ops::zero();
  subwarp_row_walk<W, E, U>(col_idx, values, begin, end, nnz, lane, [&](Index column, compute_t<Value> value) {
    acc = Ops::add(acc, Ops::mul(value, __ldg(x + column)));
  });
  return acc;
}

// The lane's partial dot product of the row with x (reduce it over the sub-warp with subwarp_sum).
template <int W, int E, int U, class Value, class Index>
__device__ __forceinline__ compute_t<Value> subwarp_row_dot(const Index* __restrict__ col_idx,
                                                            const Value* __restrict__ values,
                                                            const compute_t<Value>* __restrict__ x, std::int64_t begin,
                                                            std::int64_t end, std::int64_t nnz, int lane) {
  return subwarp_row_fold<W, E, U, semiring_ops::PlusTimes<compute_t<Value>>>(col_idx, values, x, begin, end, nnz,
                                                                              lane);
}

// Short-row walk for narrow sub-warps (W <= 8, scalar loads): each lane issues the column and value
// loads of U strided positions (predicated, no branches), then their U x gathers, then the U steps, so a
// row of up to U * W nonzeros costs one memory round trip for A and one for x. subwarp_row_dot's
// masked head step and rolled/unrolled split cost two to three (H200, stencil27:n=100: W = 4 walked
// this way keeps 27-nonzero rows in one pass).
// Streaming = true reads col_idx and values with ld.global.cs (evict-first: read once), so they do
// not displace the x lines the gathers reuse.
// acc = step(acc, value, x[column], in_row) for each of the lane's U positions per pass; positions past
// the row's end come with value 0, x 0 and in_row false (a sum may add them, other folds skip them).
template <int W, int U, bool Streaming = false, class Value, class Index, class Acc, class Step>
__device__ __forceinline__ Acc subwarp_row_fold_flat(const Index* __restrict__ col_idx,
                                                     const Value* __restrict__ values,
                                                     const compute_t<Value>* __restrict__ x, std::int64_t begin,
                                                     std::int64_t end, int lane, Acc acc, Step&& step) {
  static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "W: a power of two <= 32");
  for (std::int64_t base = begin + lane; base < end; base += std::int64_t(U) * W) {
    Index cols[U];
    Value vals[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t k = base + std::int64_t(u) * W;
      if constexpr (Streaming) {
        cols[u] = k < end ? __ldcs(col_idx + k) : Index(0);
        vals[u] = k < end ? __ldcs(values + k) : stored_zero<Value>();
      } else {
        cols[u] = k < end ? __ldg(col_idx + k) : Index(0);
        vals[u] = k < end ? __ldg(values + k) : stored_zero<Value>();
      }
    }
    compute_t<Value> xs[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      xs[u] = base + std::int64_t(u) * W < end ? __ldg(x + cols[u]) : compute_t<Value>(0);
#pragma unroll
    for (int u = 0; u < U; ++u) acc = step(acc, widen(vals[u]), xs[u], base + std::int64_t(u) * W < end);
  }
  return acc;
}

// The lane's partial dot product of a short row (reduce it over the sub-warp with subwarp_sum).
template <int W, int U, bool Streaming = false, class Value, class Index>
__device__ __forceinline__ compute_t<Value> subwarp_row_dot_flat(const Index* __restrict__ col_idx,
                                                                 const Value* __restrict__ values,
                                                                 const compute_t<Value>* __restrict__ x,
                                                                 std::int64_t begin, std::int64_t end, int lane) {
  using Real = compute_t<Value>;
  return subwarp_row_fold_flat<W, U, Streaming>(col_idx, values, x, begin, end, lane, Real(0),
                                                [](Real sum, Real value, Real xv, bool) { return sum + value * xv; });
}

}  // namespace spmv::cuda
