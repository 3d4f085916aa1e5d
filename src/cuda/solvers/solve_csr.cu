// solve_csr on CUDA: upload A, b, x0 (and the diagonal for Jacobi) once, solve on the device through a
// Plan, download x.
#include <string>
#include <vector>

#include "cuda/solvers/solver_kernels.cuh"
#include "spmv/cuda/lma.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/tuned_plan.hpp"

namespace spmv::detail {
namespace {

// A tuned plan seen as the solver's device operator (the plan must outlive it).
template <class Value, class Index>
class TunedPlanOperator final : public cuda::LinearOperator<Value> {
 public:
  explicit TunedPlanOperator(cuda::TunedPlan<Value, Index>& plan) : plan_(plan) {}
  std::int64_t rows() const override { return plan_.y_size(); }
  std::int64_t cols() const override { return plan_.x_size(); }
  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    plan_.apply(alpha, x, beta, y, stream);
  }

 private:
  cuda::TunedPlan<Value, Index>& plan_;
};

}  // namespace

template <class Value, class Index>
SolverResult solve_csr_cuda(const CsrMatrix<Value, Index>& a, Algorithm algorithm, const Options& options,
                            std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options) {
  SPMV_CUDA_CHECK(cudaSetDevice(options.device));
  cudaStream_t stream = nullptr;
  cuda::DeviceCsr<Value, Index> csr(a, stream);
  cuda::DeviceBuffer<Value> db(b, stream), dx(std::span<const Value>(x.data(), x.size()), stream), diagonal;
  if (solver_options.preconditioner == Preconditioner::Jacobi)
    diagonal = cuda::DeviceBuffer<Value>(std::span<const Value>(matrix_diagonal(a)), stream);
  const Value* d = diagonal.size() ? diagonal.data() : nullptr;
  SolverResult result;
  if (algorithm == Algorithm::Tune) {  // the solver's first products tune the plan (docs/algorithms/tuning.md)
    if (solver_options.graph)
      throw InvalidArgument("graph capture needs a fixed plan; --algo tune changes its plan during the first applies");
    cuda::TunedPlan<Value, Index> plan(csr.view(), Operation::NonTranspose, options, stream);
    TunedPlanOperator<Value, Index> op(plan);
    result = cuda::solve<Value>(op, db.data(), dx.data(), solver_options, d, stream);
    result.algorithm = "tune: " + plan.policy();
  } else if (converts_during_solve(algorithm, options)) {
    cuda::Plan<Value, Index> plan(csr.view(), algorithm, Operation::NonTranspose, options, stream);
    cuda::ConvertingPlanOperator<Value, Index> op(csr.view(), plan, options);
    result = cuda::solve<Value>(op, db.data(), dx.data(), solver_options, d, stream);
    result.algorithm = op.label();
  } else {
    cuda::Plan<Value, Index> plan(csr.view(), algorithm, Operation::NonTranspose, options, stream);
    cuda::PlanOperator<Value, Index> op(plan);
    result = cuda::solve<Value>(op, db.data(), dx.data(), solver_options, d, stream);
    result.algorithm = algorithm_label(plan.algorithm(), plan.policy());
  }
  dx.download(x, stream);
  return result;
}

template <class Value, class Index>
SolverResult solve_lma_cuda(const fem::FemProblem<Value, Index>& problem, const Options& options,
                            std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options) {
  SPMV_CUDA_CHECK(cudaSetDevice(options.device));
  cudaStream_t stream = nullptr;
  auto op = cuda::make_lma_operator(problem);
  cuda::DeviceBuffer<Value> db(b, stream), dx(std::span<const Value>(x.data(), x.size()), stream), diagonal;
  if (solver_options.preconditioner == Preconditioner::Jacobi)
    diagonal = cuda::DeviceBuffer<Value>(std::span<const Value>(problem.diagonal), stream);
  SolverResult result = cuda::solve<Value>(*op, db.data(), dx.data(), solver_options,
                                           diagonal.size() ? diagonal.data() : nullptr, stream);
  dx.download(x, stream);
  result.algorithm = "lma (device, one thread per element, by colour)";
  return result;
}

#define SPMV_INSTANTIATE_SOLVE_CSR_CUDA(V, I)                                                                  \
  template SolverResult solve_csr_cuda(const CsrMatrix<V, I>&, Algorithm, const Options&, std::span<const V>, \
                                       std::span<V>, const SolverOptions&);                                   \
  template SolverResult solve_lma_cuda(const fem::FemProblem<V, I>&, const Options&, std::span<const V>,      \
                                       std::span<V>, const SolverOptions&);
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(float, std::int32_t)
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(float, std::int64_t)
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(double, std::int32_t)
SPMV_INSTANTIATE_SOLVE_CSR_CUDA(double, std::int64_t)

}  // namespace spmv::detail
