#pragma once
// The y update every kernel ends with. beta == 0 must overwrite y without reading it (y may be NaN),
// matching the BLAS convention.
#include <cuda_runtime.h>

namespace spmv::cuda {

template <class Value>
__device__ __forceinline__ Value axpby(Value alpha, Value sum, Value beta, const Value* y, long long i) {
  return beta == Value(0) ? alpha * sum : alpha * sum + beta * y[i];
}

// y = beta * y (y = 0 when beta == 0): degenerate matrices, and the first step of scatter
// (transpose) algorithms.
template <class Value, class Index>
void scale_vector(Value beta, Value* y, Index n, cudaStream_t stream);

}  // namespace spmv::cuda
