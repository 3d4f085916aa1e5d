#pragma once
// Block-cooperative loops over a contiguous range of nonzeros, shared by CSR-Adaptive, PCSR and
// merge-path SpMV: the products a_k * x[col_k] (or precomputed products) are read one vector group
// (Loader::width consecutive nonzeros) per thread per step, with 8/16-byte loads where the arrays
// allow, and either staged to memory (shared-memory tiles, the PCSR products array) or summed.
// Groups are aligned to the array start, so a range's first and last groups may hold nonzeros outside
// it: those read as zero and cost no x gather.
#include <cuda_runtime.h>

#include <cstring>

#include "core/semiring_ops.hpp"
#include "cuda/common/stored_value.cuh"
#include "cuda/common/vector_load.cuh"

namespace spmv::cuda {

// Stores N consecutive elements with one 8- or 16-byte store; p must be aligned to N * sizeof(T).
template <int N, class T>
__device__ __forceinline__ void store_vector(T* p, const T (&v)[N]) {
  constexpr int bytes = static_cast<int>(sizeof(T)) * N;
  static_assert(N == 1 || bytes == 8 || bytes == 16, "vector stores move 8 or 16 bytes");
  if constexpr (N == 1) {
    p[0] = v[0];
  } else if constexpr (bytes == 16) {
    uint4 raw;
    std::memcpy(&raw, v, sizeof(raw));
    *reinterpret_cast<uint4*>(p) = raw;
  } else {
    uint2 raw;
    std::memcpy(&raw, v, sizeof(raw));
    *reinterpret_cast<uint2*>(p) = raw;
  }
}

// a_k * x[col_k] (Ops::mul: a semiring's multiply) for the nonzeros of a CSR matrix. `aligned`: values
// and col_idx start on 16-byte boundaries (checked on the host), so whole groups inside [0, nnz) use
// vector loads; the partial group at the end of the arrays (and every group of an unaligned matrix) is
// read element by element, never past nnz. Slots outside the range hold the semiring's zero.
template <class Value, class Index, class Ops = semiring_ops::PlusTimes<compute_t<Value>>>
struct CsrProducts {
  static constexpr int width = kVectorWidth<Value, Index>;
  const Value* values;
  const Index* col_idx;
  const compute_t<Value>* x;
  long long nnz;
  bool aligned;

  // out[j] = product of nonzero group*width + j when it lies in [begin, end), else 0.
  __device__ __forceinline__ void operator()(long long group, long long begin, long long end,
                                             compute_t<Value> (&out)[width]) const {
    const long long k0 = group * width;
    if (aligned && k0 + width <= nnz) {
      // Streaming (evict-first) loads of the matrix, read once, so x keeps its L1/L2 lines. H200,
      // 2026-11-21, % of copy bandwidth with / without: merge-path rmat 35.4 / 34.5 (f64), 26.9 / 26.4
      // (f32); CSR-adaptive dense_rows 50.6 / 49.9 (f64), 37.8 / 37.1 (f32), mostly_empty 28.0 / 27.7
      // (f32), 38.9 / 39.0 (f64): small, one direction.
      const Vector<Value, width> v = load_vector_streaming<width>(values + k0);
      const Vector<Index, width> c = load_vector_streaming<width>(col_idx + k0);
#pragma unroll
      for (int j = 0; j < width; ++j)
        out[j] = (k0 + j >= begin && k0 + j < end) ? Ops::mul(widen(v.item[j]), __ldg(x + c.item[j])) : Ops::zero();
    } else {
#pragma unroll
      for (int j = 0; j < width; ++j) {
        const long long k = k0 + j;
        out[j] = (k >= begin && k < end) ? Ops::mul(widen(__ldg(values + k)), __ldg(x + __ldg(col_idx + k)))
                                         : Ops::zero();
      }
    }
  }
};

// Precomputed products (PCSR's first kernel output): a dense array from cudaMalloc, so 16-byte
// aligned; the partial group at its end is read element by element. Slots outside the range hold the
// semiring's zero (Ops::zero: 0 for the SpMV).
template <class Value, class Ops = semiring_ops::PlusTimes<Value>>
struct DenseValues {
  static constexpr int width = 16 / static_cast<int>(sizeof(Value));
  const Value* data;
  long long size;

  __device__ __forceinline__ void operator()(long long group, long long begin, long long end,
                                             Value (&out)[width]) const {
    const long long k0 = group * width;
    if (k0 + width <= size) {
      const Vector<Value, width> v = load_vector<width>(data + k0);
#pragma unroll
      for (int j = 0; j < width; ++j) out[j] = (k0 + j >= begin && k0 + j < end) ? v.item[j] : Ops::zero();
    } else {
#pragma unroll
      for (int j = 0; j < width; ++j) {
        const long long k = k0 + j;
        out[j] = (k >= begin && k < end) ? __ldg(data + k) : Ops::zero();
      }
    }
  }
};

// Writes item k of [begin, end) to dst[k - base] and returns base = begin rounded down to the group
// width. Whole groups are stored (zeros outside the range), so dst needs end - begin + 2 * width - 2
// slots and 16-byte alignment. Threads tid = 0..threads-1 of the calling group cooperate; the caller
// synchronises before reading dst.
template <class Loader, class Value>
__device__ __forceinline__ long long stage_range(Value* dst, const Loader& load, long long begin, long long end,
                                                 int tid, int threads) {
  constexpr int width = Loader::width;
  const long long first = begin / width;
  for (long long group = first + tid; group * width < end; group += threads) {
    Value items[width];
    load(group, begin, end, items);
    store_vector<width>(dst + (group - first) * width, items);
  }
  return first * width;
}

// This thread's share of the ⊕-sum (Ops::add, from Ops::zero()) of items [begin, end); reduce across threads
// afterwards. The loader fills slots outside the range with the semiring's zero (CsrProducts with the same Ops).
template <class Ops, class Value, class Loader>
__device__ __forceinline__ Value range_fold(const Loader& load, long long begin, long long end, int tid,
                                            int threads) {
  constexpr int width = Loader::width;
  Value acc = Ops::zero();
  for (long long group = begin / width + tid; group * width < end; group += threads) {
    Value items[width];
    load(group, begin, end, items);
#pragma unroll
    for (int j = 0; j < width; ++j) acc = Ops::add(acc, items[j]);
  }
  return acc;
}

// This thread's share of the sum of items [begin, end); reduce across threads afterwards.
template <class Value, class Loader>
__device__ __forceinline__ Value range_sum(const Loader& load, long long begin, long long end, int tid,
                                           int threads) {
  return range_fold<semiring_ops::PlusTimes<Value>, Value>(load, begin, end, tid, threads);
}

}  // namespace spmv::cuda
