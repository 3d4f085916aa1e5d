#pragma once
// The type a matrix's values are stored in, and the type products compute in. Kernels are templated on
// the stored type (float, double, or the half types of Options::values); x, y, alpha, beta and every
// sum are compute_t of it, and each value is widened where it is used. For float and double both
// types are the same and widen() is the identity, so their kernels are unchanged.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace spmv::cuda {

template <class Stored>
struct ComputeOf {
  using type = Stored;
};
template <>
struct ComputeOf<__half> {
  using type = float;
};
template <>
struct ComputeOf<__nv_bfloat16> {
  using type = float;
};
template <class Stored>
using compute_t = typename ComputeOf<Stored>::type;

template <class Stored>
inline constexpr bool kHalfStored = !std::is_same_v<compute_t<Stored>, Stored>;

template <class T>
__host__ __device__ __forceinline__ T widen(T value) {
  return value;
}
__device__ __forceinline__ float widen(__half value) { return __half2float(value); }
__device__ __forceinline__ float widen(__nv_bfloat16 value) { return __bfloat162float(value); }

// A stored zero (masked loads).
template <class Stored>
__device__ __forceinline__ Stored stored_zero() {
  if constexpr (std::is_same_v<Stored, __half>)
    return __half(__half_raw{});  // all bits zero: +0
  else if constexpr (std::is_same_v<Stored, __nv_bfloat16>)
    return __nv_bfloat16(__nv_bfloat16_raw{});
  else
    return Stored(0);
}

}  // namespace spmv::cuda
