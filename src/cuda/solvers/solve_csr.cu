// solve_csr on CUDA: upload A, b, x0 (and the diagonal for Jacobi) once, solve on the device through a
// Plan, download x.
#include <string>
#include <vector>

#include "cuda/solvers/solver_kernels.cuh"
#include "spmv/cuda/plan.hpp"

namespace spmv::detail {

template <class Value, class Index>
SolverResult solve_csr_cuda(const CsrMatrix<Value, Index>& a, Algorithm algorithm, const Options& options,
                            std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options) {
  SPMV_CUDA_CHECK(cudaSetDevice(options.device));
  cudaStream_t stream = nullptr;
  cuda::DeviceCsr<Value, Index> csr(a, stream);
  cuda::Plan<Value, Index> plan(csr.view(), algorithm, Operation::NonTranspose, options, stream);
  cuda::PlanOperator<Value, Index> op(plan);
  cuda::DeviceBuffer<Value> db(b, stream), dx(std::span<const Value>(x.data(), x.size()), stream), diagonal;
  if (solver_options.preconditioner == Preconditioner::Jacobi)
    diagonal = cuda::DeviceBuffer<Value>(std::span<const Value>(matrix_diagonal(a)), stream);
  SolverResult result =
      cuda::solve<Value>(op, db.data(), dx.data(), solver_options, diagonal.size() ? diagonal.data() : nullptr, stream);
  dx.download(x, stream);
  result.algorithm = algorithm_label(plan.algorithm(), plan.policy());
  return result;
}

#define SPMV_INSTANTIATE_SOLVE_CSR_CUDA(V, I)                                                                  \
  template SolverResult solve_csr_cuda(const CsrMatrix<V, I>&, Algorithm, const Options&, std::span<const V>, \
                                       std::span<V>, const SolverOptions&);
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(float, std::int32_t)
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(float, std::int64_t)
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(double, std::int32_t)
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(double, std::int64_t)

}  // namespace spmv::detail
