#pragma once
// Private: CSR-scalar's policy and row loop (Bell & Garland SC'09 §3.4: one thread per row), generic over the
// semiring (Ops: zero, add and mul of core/semiring_ops.hpp) and over what a finished row writes (Output,
// common/row_output.cuh), so that the SpMV (csr_scalar.cu: plus-times, alpha / beta, half-precision values widened
// to compute_t) and the semiring product (semiring_csr_scalar.cu: y = the row's ⊕-sum) are one loop.
#include <cuda_runtime.h>

#include "cuda/common/stored_value.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::csr_scalar {

// Launch policy (tuning as data). block_size: first value, to be tuned on the H100/H200.
struct Policy {
  int block_size;
};
constexpr Policy policy_for(int /*value_bytes*/) { return {256}; }

// The block size a product runs with: Options.block_size, else the policy's.
inline int block_size(int requested, int value_bytes) {
  return requested > 0 ? requested : policy_for(value_bytes).block_size;
}

// Grid-stride over rows, so any grid size is correct. Each row folds its entries in storage order in one chain
// from Ops::zero() (plus-times: 0, the SpMV's sum), so an empty row gives the semiring's zero.
template <class Ops, class Value, class Index, class Output>
__device__ __forceinline__ void rows(const CsrView<Value, Index>& a, const compute_t<Value>* __restrict__ x,
                                     compute_t<Value>* __restrict__ y, const Output& output) {
  for (Index row = blockIdx.x * Index(blockDim.x) + threadIdx.x; row < a.rows; row += Index(gridDim.x) * blockDim.x) {
    compute_t<Value> acc = Ops::zero();
    const Index end = a.row_ptr[row + 1];
    for (Index k = a.row_ptr[row]; k < end; ++k)
      acc = Ops::add(acc, Ops::mul(widen(a.values[k]), __ldg(x + a.col_idx[k])));
    output(y, row, acc);
  }
}

}  // namespace spmv::cuda::csr_scalar
