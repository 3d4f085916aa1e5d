#pragma once
// The y update every kernel ends with. beta == 0 must overwrite y without reading it (y may be NaN),
// matching the BLAS convention.
#include <cuda_runtime.h>

namespace spmv::cuda {

template <class Value>
__device__ __forceinline__ Value axpby(Value alpha, Value sum, Value beta, const Value* y, long long i) {
  return beta == Value(0) ? alpha * sum : alpha * sum + beta * y[i];
}

// Element i of beta * y, y unread when beta == 0 (scale_vector_kernel and the transpose kernels that
// scale y themselves before their scatter).
template <class Value>
__device__ __forceinline__ Value beta_times(Value beta, const Value* y, long long i) {
  return beta == Value(0) ? Value(0) : beta * y[i];
}

// y = beta * y (y = 0 when beta == 0): degenerate matrices, and the first step of scatter
// (transpose) algorithms.
template <class Value, class Index>
void scale_vector(Value beta, Value* y, Index n, cudaStream_t stream);

}  // namespace spmv::cuda
