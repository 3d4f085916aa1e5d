#pragma once
// The device LMA operator: y = alpha * sum_e P_e^T K_e P_e x + beta * y on device arrays, for the
// solvers' spmv::cuda::LinearOperator (docs/algorithms/lma.md).
//
// One thread per element; the elements are reordered by colour at construction (fem::colour_elements:
// no two elements of a colour share an unknown) and each colour is one kernel, after one kernel that
// scales y by beta. So no atomics: every y entry receives its element contributions in colour order,
// and the result is the same bit for bit on every run. The element arrays stay element-major, so the
// threads of a warp read each K_e slot and each map slot as one coalesced access.
//
// Construction uploads the element data to the current device (refused with MemoryLimitExceeded when
// it does not fit); the problem may be destroyed afterwards. apply() allocates nothing and only
// enqueues kernels on `stream`, so it can be captured in a CUDA graph; it writes nothing but y, so
// products on several streams (into different y) may run at once.
#include <cuda_runtime_api.h>

#include <memory>

#include "spmv/cuda/linear_operator.hpp"
#include "spmv/fem.hpp"

namespace spmv::cuda {

// Instantiated for float/double x int32_t/int64_t.
template <class Value, class Index>
std::unique_ptr<LinearOperator<Value>> make_lma_operator(const fem::FemProblem<Value, Index>& p);

}  // namespace spmv::cuda
