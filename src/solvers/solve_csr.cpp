// solve_csr: the host-vector front door used by `spmv solve` and the Python package. The CPU path
// builds an Operator; the CUDA path lives in the CUDA backend (src/cuda/solvers/solve_csr.cu).
#include <chrono>
#include <string>
#include <vector>

#include "bench/byte_model.hpp"
#include "solvers/solver_setup.hpp"
#include "spmv/reorder.hpp"

namespace spmv {

namespace detail {
template <class Value, class Index>
SolverResult solve_csr_cuda(const CsrMatrix<Value, Index>& a, Algorithm algorithm, const Options& options,
                            std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options);
template <class Value, class Index>
SolverResult solve_lma_cuda(const fem::FemProblem<Value, Index>& problem, const Options& options,
                            std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options);
}  // namespace detail

template <class Value, class Index>
SolverResult solve_csr(Backend backend, const CsrMatrix<Value, Index>& a, Algorithm algorithm, const Options& options,
                       std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options) {
  solvers::check_problem(a.rows, a.cols, b.size(), x.size(), solver_options, sizeof(Value));
  if (options.reorder != Reorder::None) {
    // The whole solve runs on P A P^T with P b and P x0: the vectors are permuted once per solve, not
    // in every product (as a reordered plan must); residuals are invariant under the permutation.
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Index> order = reorder_permutation(a, options.reorder);
    const CsrMatrix<Value, Index> permuted = permute_symmetric(a, order);
    std::vector<Value> pb(b.size()), px(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      pb[i] = b[static_cast<std::size_t>(order[i])];
      px[i] = x[static_cast<std::size_t>(order[i])];
    }
    const double reorder_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    Options inner = options;
    inner.reorder = Reorder::None;
    SolverResult result = solve_csr(backend, permuted, algorithm, inner, std::span<const Value>(pb),
                                    std::span<Value>(px), solver_options);
    for (std::size_t i = 0; i < order.size(); ++i) x[static_cast<std::size_t>(order[i])] = px[i];
    result.algorithm = "reorder=" + std::string(to_string(options.reorder)) + " " + result.algorithm;
    result.total_ms += reorder_ms;
    return result;
  }
  SolverResult result;
  if (backend == Backend::Cuda) {
    result = detail::solve_csr_cuda(a, algorithm, options, b, x, solver_options);
  } else {
    auto op = make_cpu_operator(a, algorithm, Operation::NonTranspose, options);
    std::vector<Value> diagonal;
    if (solver_options.preconditioner == Preconditioner::Jacobi) diagonal = matrix_diagonal(a);
    if (converts_during_solve(algorithm, options)) {  // Auto may convert during the solve
      ConvertingOperator<Value, Index> converting(a, *op, options);
      result = solve<Value>(converting, b, x, solver_options, diagonal);
      result.algorithm = converting.label();
    } else {
      result = solve<Value>(*op, b, x, solver_options, diagonal);
      result.algorithm = algorithm_label(op->algorithm(), op->policy());
    }
  }
  // The floor is the CSR iteration's whatever format Auto or the tuner chose: a format that reads
  // fewer bytes shows below 1x (docs/SOLVERS.md, "The floor").
  result.apply_bytes = csr_apply_bytes(a.rows, a.cols, a.nnz(), sizeof(Value), sizeof(Index));
  return result;
}

template <class Value, class Index>
SolverResult solve_lma(Backend backend, const fem::FemProblem<Value, Index>& problem, const Options& options,
                       std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options) {
  solvers::check_problem(problem.unknowns, problem.unknowns, b.size(), x.size(), solver_options, sizeof(Value));
  SolverResult result;
  if (backend == Backend::Cuda) {
    result = detail::solve_lma_cuda(problem, options, b, x, solver_options);
  } else {
    auto op = fem::make_cpu_lma_operator(problem, options);
    result = solve<Value>(*op, b, x, solver_options, problem.diagonal);
    result.algorithm = "lma (" + op->policy() + ")";
  }
  // The LMA operator's own byte model (spmv bench --lma); the CSR floor of the same problem is the
  // run without --lma.
  result.apply_bytes = bench::lma_minimal_bytes(problem.elements, problem.nodes_per_element, problem.unknowns,
                                                sizeof(Value), sizeof(Index), false);
  return result;
}

#ifndef SPMV_HAS_CUDA
namespace detail {
template <class Value, class Index>
SolverResult solve_csr_cuda(const CsrMatrix<Value, Index>&, Algorithm, const Options&, std::span<const Value>,
                            std::span<Value>, const SolverOptions&) {
  throw Unsupported("spmv was built without the CUDA backend (configure with -DSPMV_ENABLE_CUDA=ON)");
}
template <class Value, class Index>
SolverResult solve_lma_cuda(const fem::FemProblem<Value, Index>&, const Options&, std::span<const Value>,
                            std::span<Value>, const SolverOptions&) {
  throw Unsupported("spmv was built without the CUDA backend (configure with -DSPMV_ENABLE_CUDA=ON)");
}
}  // namespace detail
#endif

#define SPMV_INSTANTIATE_SOLVE_CSR(V, I)                                                                         \
  template SolverResult solve_csr(Backend, const CsrMatrix<V, I>&, Algorithm, const Options&, std::span<const V>, \
                                  std::span<V>, const SolverOptions&);                            \
  template SolverResult solve_lma(Backend, const fem::FemProblem<V, I>&, const Options&, std::span<const V>,       \
                                  std::span<V>, const SolverOptions&);
SPMV_INSTANTIATE_SOLVE_CSR(float, std::int32_t)
SPMV_INSTANTIATE_SOLVE_CSR(float, std::int64_t)
SPMV_INSTANTIATE_SOLVE_CSR(double, std::int32_t)
SPMV_INSTANTIATE_SOLVE_CSR(double, std::int64_t)

}  // namespace spmv
