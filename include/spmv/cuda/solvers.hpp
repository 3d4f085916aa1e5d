#pragma once
// The Krylov solvers of spmv/solvers.hpp on device vectors: the same CG, BiCGStab and GMRES(m)
// recurrences, driven by any spmv::cuda::LinearOperator (PlanOperator for a Plan; matrix-free ones),
// every kernel enqueued on one stream. The scalars (dots, alpha, beta, omega, the Givens rotations)
// stay in device memory and are computed there by small kernels; the device also applies the stopping
// rule itself (kernels after the stop do nothing), so the iterate and the iteration count never depend
// on when the host looks. The host reads the stopping state asynchronously into pinned memory every
// options.check_every iterations, one read behind: up to 2*check_every iterations' kernels may be
// enqueued after the stop and do nothing but their operator applies. docs/SOLVERS.md has the kernels.
//
// Setup reads three things back synchronously once (b's norm and whether b, x0 or the diagonal hold a
// bad entry, to throw the errors of spmv::solve with the same messages); the end reads the result
// once. The solver allocates its vectors at the start of each call (no allocation inside the loop).
#include <cuda_runtime_api.h>

#include <span>

#include "spmv/cuda/linear_operator.hpp"
#include "spmv/solvers.hpp"

namespace spmv::cuda {

// b, x (x0 on entry) and diagonal (required for Jacobi, else ignored) are device arrays of op.rows()
// entries on the current device; the call returns when x holds the solution. Errors and breakdowns
// as spmv::solve. Timing: ms_per_iteration and apply_share are measured with CUDA events over the
// enqueued loop, including the iterations enqueued after the stop.
template <class Value>
SolverResult solve(LinearOperator<Value>& op, const Value* b, Value* x, const SolverOptions& options = {},
                   const Value* diagonal = nullptr, cudaStream_t stream = nullptr);

}  // namespace spmv::cuda
