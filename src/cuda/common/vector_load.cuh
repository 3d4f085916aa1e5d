#pragma once
// Read-only vector loads: N consecutive elements with one 8- or 16-byte load (ld.global.nc.v2/v4).
// Hopper needs many bytes in flight per SM to reach HBM bandwidth; one 16-byte load per lane moves
// four times the bytes of a 4-byte load for the same instruction count.
#include <cuda_runtime.h>

#include <cstring>

namespace spmv::cuda {

// N elements held in registers; the alignment lets the compiler keep them in one vector register.
template <class T, int N>
struct alignas(sizeof(T) * N) Vector {
  T item[N];
};

// Widest vector (elements per load) both of a matrix's arrays can use with 16-byte loads: 4 for
// float values with 32-bit indices, 2 otherwise.
template <class Value, class Index>
inline constexpr int kVectorWidth = 16 / (sizeof(Value) > sizeof(Index) ? sizeof(Value) : sizeof(Index));

// True when `p` may be read with loads of `bytes` bytes (a power of two).
inline bool is_aligned(const void* p, unsigned bytes) {
  return reinterpret_cast<unsigned long long>(p) % bytes == 0;
}

// Loads p[0..N) through the read-only path. p must be aligned to N * sizeof(T) bytes and all N
// elements must lie inside the allocation (callers check against the array's end).
template <int N, class T>
__device__ __forceinline__ Vector<T, N> load_vector(const T* p) {
  constexpr int bytes = static_cast<int>(sizeof(T)) * N;
  static_assert(N == 1 || bytes == 8 || bytes == 16, "vector loads move 8 or 16 bytes");
  Vector<T, N> v;
  if constexpr (N == 1) {
    v.item[0] = __ldg(p);
  } else if constexpr (bytes == 16) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
    std::memcpy(&v, &raw, sizeof(raw));
  } else {
    const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p));
    std::memcpy(&v, &raw, sizeof(raw));
  }
  return v;
}

// Streaming variant (ld.global.cs, evict-first): values and column indices are read once per product,
// so they should not push x (the only reused array) out of L2.
template <int N, class T>
__device__ __forceinline__ Vector<T, N> load_vector_streaming(const T* p) {
  constexpr int bytes = static_cast<int>(sizeof(T)) * N;
  static_assert(N == 1 || bytes == 8 || bytes == 16, "vector loads move 8 or 16 bytes");
  Vector<T, N> v;
  if constexpr (N == 1) {
    v.item[0] = __ldcs(p);
  } else if constexpr (bytes == 16) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    std::memcpy(&v, &raw, sizeof(raw));
  } else {
    const uint2 raw = __ldcs(reinterpret_cast<const uint2*>(p));
    std::memcpy(&v, &raw, sizeof(raw));
  }
  return v;
}

}  // namespace spmv::cuda
