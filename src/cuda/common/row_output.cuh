#pragma once
// What a CSR kernel writes for a finished row, so that the SpMV and the semiring product run one kernel body
// (csr_scalar.cuh, csr_coop.cuh, lightspmv.cuh, csr_adaptive.cuh): the SpMV's y = alpha * sum + beta * y, y unread
// when beta == 0 (ScaledRow), or the semiring product's y = the row's ⊕-sum, no alpha or beta (PlainRow).
#include <cuda_runtime.h>

#include "cuda/common/epilogue.cuh"

namespace spmv::cuda {

template <class Real>
struct ScaledRow {
  Real alpha, beta;
  template <class Index>
  __device__ __forceinline__ void operator()(Real* y, Index row, Real sum) const {
    y[row] = axpby(alpha, sum, beta, y, row);
  }
};

template <class Real>
struct PlainRow {
  template <class Index>
  __device__ __forceinline__ void operator()(Real* y, Index row, Real sum) const {
    y[row] = sum;
  }
};

}  // namespace spmv::cuda
