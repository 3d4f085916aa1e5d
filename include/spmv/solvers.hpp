#pragma once
// Krylov solvers for A x = b over any spmv::LinearOperator (an Operator bound to a CSR matrix, or a
// matrix-free operator): Conjugate Gradient, BiCGStab and restarted GMRES(m), each with an optional
// Jacobi (diagonal) preconditioner. The CPU path here runs on host vectors with OpenMP; the CUDA path
// (spmv/cuda/solvers.hpp) runs the same recurrences on device vectors with the scalars on the device.
// docs/SOLVERS.md gives the methods, the stopping rule and what is fused.
//
// Conventions shared by every method and backend:
// - x holds the initial guess x0 on entry and the approximate solution on return.
// - Stopping rule: the recurrence residual ||r_k|| <= tolerance * ||b|| (unpreconditioned 2-norms: CG's
//   updated r, BiCGStab's r (or its half-step s), GMRES's Givens estimate of ||b - A x_k|| with right
//   preconditioning), or max_iterations reached, or a breakdown.
// - One iteration is one step of the method: CG and GMRES apply the operator once per iteration
//   (GMRES once more per restart), BiCGStab twice.
// - After the loop one more apply computes the true relative residual ||b - A x|| / ||b||.
// - ||b|| = 0: x = 0, converged at iteration 0 (the exact solution), whatever x0 was.
// - Dot products and norms accumulate in double for both value types; vector updates are in Value.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/conversion_checks.hpp"
#include "spmv/csr.hpp"
#include "spmv/fem.hpp"
#include "spmv/linear_operator.hpp"
#include "spmv/operator.hpp"

struct CUstream_st;  // CUDA's stream (cudaStream_t is CUstream_st*), named without CUDA's headers

namespace spmv {

enum class SolverMethod { Cg, BiCgStab, Gmres };
enum class Preconditioner { None, Jacobi };
// GMRES: the precision its Krylov basis is stored in. Working: the value type. Float32: float for a
// double solve (a compressed basis: Aliaga, Anzt et al., "Compressed basis GMRES on high-performance
// graphics processing units", IJHPCA 2023), which halves the bytes of the orthogonalisation sweeps, the
// bulk of a step; every sum, w = A v, the Hessenberg matrix, x and the residual stay in double.
// For a float solve Float32 is Working. Float16: IEEE half (scaled by 2^7) for a float solve, the same
// halving again; double solves reject it. docs/SOLVERS.md says what each costs in convergence.
enum class GmresBasis { Working, Float32, Float16 };

std::string_view to_string(SolverMethod m);
std::string_view to_string(Preconditioner p);
std::string_view to_string(GmresBasis b);
// "cg", "bicgstab", "gmres" / "none", "jacobi" / "working", "f32", "f16" (case-insensitive); nullopt
// otherwise.
std::optional<SolverMethod> parse_solver_method(std::string_view name);
std::optional<Preconditioner> parse_preconditioner(std::string_view name);
std::optional<GmresBasis> parse_gmres_basis(std::string_view name);

// What the progress callback sees: the iteration just finished and its recurrence residual / ||b||.
struct SolverProgress {
  int iteration = 0;
  double relative_residual = 0;
};

struct SolverOptions {
  SolverMethod method = SolverMethod::Cg;
  Preconditioner preconditioner = Preconditioner::None;
  double tolerance = 1e-8;   // relative: stop when ||r|| <= tolerance * ||b||; must be >= 0
  int max_iterations = 1000;  // >= 0; 0 only computes the initial residual
  int restart = 30;           // GMRES: Krylov vectors per cycle (m of GMRES(m)), >= 1
  GmresBasis gmres_basis = GmresBasis::Working;  // GMRES only (other methods reject the others)
  // GMRES: Krylov vectors per s-step block (docs/SOLVERS.md, "s-step GMRES"), 1..8. 1: one Arnoldi step at a
  // time (the default). S > 1: after a first cycle of Arnoldi steps, whose Hessenberg matrix gives the Newton
  // shifts, every cycle builds its basis S vectors at a time (S products, then one block Gram-Schmidt pass over
  // V and a Cholesky QR of the block), the last block of a cycle shorter when the restart is not a multiple of
  // S. The working-precision basis only (a compressed gmres_basis with S > 1 is refused); other methods reject
  // S != 1.
  int gmres_s_step = 1;
  bool record_history = false;  // fill SolverResult::history
  // Called every `progress_every` iterations (0: never). The CUDA path calls it when it reads the
  // residual back, so possibly a few iterations late but with the values of that iteration.
  int progress_every = 0;
  std::function<void(const SolverProgress&)> progress;
  // CUDA: the host reads the device's stopping state every `check_every` iterations, one read behind
  // (docs/SOLVERS.md). The iterate and the iteration count do not depend on it (the device stops
  // itself); up to 2*check_every iterations' kernels may be enqueued after the stop and do nothing.
  int check_every = 1;
  // CG: the fused iteration of issue 15 (docs/SOLVERS.md, "Fusion"): 10 vector sweeps instead of 11
  // (12 instead of 13 with Jacobi), the reductions finished inside the sweeps on CUDA (no one-block
  // scalar kernels), one OpenMP region per iteration on the CPU. false: issue 9's kernels, kept so
  // that tests and benchmarks can compare. Both give the same iterates up to rounding. BiCGStab and
  // GMRES have one implementation each and ignore it.
  bool fused = true;
  // CUDA, CG and BiCGStab: capture one iteration in a CUDA graph on its first call and launch the graph
  // for every iteration (fewer launch gaps). The operator's apply must be capturable (a Plan, the LMA
  // operator, or a distributed matrix on the CUDA backend, whose halo exchange and all-reduces are NCCL
  // calls on forked streams; not a TunedPlan, which tunes on its first applies); a capture that fails
  // throws Unsupported. The applies are then not timed separately: apply_share is -1. GMRES (whose
  // Arnoldi step differs with its index) and the CPU path reject it (InvalidArgument).
  bool graph = false;
  // CG, both backends: the pipelined recurrence of Ghysels & Vanroose (src/solvers/cg.cpp,
  // src/cuda/solvers/cg_pipelined.cu), one global reduction per iteration instead of two, hidden behind
  // the next product in distributed solves, for up to six more vectors (three without a
  // preconditioner) and a recurrence residual that may drift from the true one by rounding. Other
  // methods reject it (InvalidArgument).
  bool pipelined = false;
  // Distributed solves (spmv::dist::solve sets it): sums the per-process parts of every reduction (dot
  // products, norms) across the processes, in place, so that every process takes the same decisions
  // with the same scalars. Empty: one process. The CPU solvers call it from the calling thread only
  // (MPI_THREAD_FUNNELED is enough); the CUDA solvers reject it (they take device_global_sum).
  std::function<void(std::span<double>)> global_sum;
  // Optional, with global_sum: starts the same sum without waiting (MPI_Iallreduce) and returns the
  // wait. Pipelined CG runs the next product between the two, hiding the reduction behind it.
  std::function<std::function<void()>(std::span<double>)> global_sum_start;
  // The CUDA solvers' global_sum (spmv::dist::solve sets it for a matrix on the CUDA backend): sums
  // `count` doubles of device memory across the processes in place, enqueued on `stream` without
  // waiting (DistributedMatrix::all_reduce_sum: ncclAllReduce). Every reduction's per-block partial sums
  // are first summed on the device, then passed here, and the scalar kernels read the result, so the
  // scalars and decisions stay on the device and equal on every process. It needs the unfused CG
  // (fused = false: the fused kernels finish their sums inside the sweep); with graph, the all-reduces
  // are captured with the rest of the iteration.
  std::function<void(double* values, int count, CUstream_st* stream)> device_global_sum;
};

struct SolverResult {
  bool converged = false;   // the stopping rule was met (by the recurrence residual)
  int iterations = 0;
  std::int64_t applies = 0;  // operator applies, including the initial and the final residual
  double residual = 0;            // true ||b - A x|| / ||b|| after the last iteration (0 when b = 0)
  double recurrence_residual = 0; // the method's own estimate at the last iteration, / ||b||
  std::vector<double> history;    // recurrence residual / ||b||, entry k after iteration k (entry 0: x0)
  double total_ms = 0;            // wall time of the solve, setup and final residual included
  double ms_per_iteration = 0;    // time of the iteration loop / iterations
  double apply_share = 0;         // share of the loop's time spent in the operator's apply (0..1)
  std::string breakdown;          // empty unless the method stopped on a breakdown: which quantity
  std::string algorithm;          // solve_csr: the SpMV algorithm and policy that ran (empty otherwise)
  std::string variant;            // "fused", "unfused", "fused, graph" ... (what the loop ran)
  // The memory floor of one iteration (docs/SOLVERS.md, "The floor"): the bytes an iteration must move
  // divided by the measured copy bandwidth. apply_bytes and applies_per_iteration come from the operator
  // (solve_csr / solve_lma fill apply_bytes; 0 for a user's operator), vector_bytes from the method's
  // kernels as implemented (fused or not); set_iteration_floor() divides by a bandwidth.
  std::uint64_t apply_bytes = 0;     // one apply by spmv bench's byte model of the operator used
  int applies_per_iteration = 0;     // CG and GMRES 1, BiCGStab 2
  std::uint64_t vector_bytes = 0;    // vector reads + writes of one iteration's kernels (GMRES: mean per step)
  std::uint64_t floor_bytes = 0;     // applies_per_iteration * apply_bytes + vector_bytes
  double bandwidth_gbs = 0;          // copy bandwidth the floor divides by (0: not measured)
  double floor_ms = 0;               // floor_bytes / bandwidth (0: not measured)
  double floor_multiple = 0;         // ms_per_iteration / floor_ms (0: not measured)
};

// Fills bandwidth_gbs, floor_bytes, floor_ms and floor_multiple of `result` from its byte counts and a
// measured copy bandwidth in GB/s (1e9 bytes; spmv::cuda_copy_bandwidth_gbs on CUDA, the STREAM-like
// host copy of `spmv bench` on the CPU). copy_gbs <= 0 leaves the times at 0.
void set_iteration_floor(SolverResult& result, double copy_gbs);

// The CSR byte model of one apply y = A x (spmv bench's: nnz values and column indices, rows + 1 row
// pointers, x read once, y written once): what solve_csr stores in SolverResult::apply_bytes.
std::uint64_t csr_apply_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_size,
                              std::size_t index_size);

// The diagonal of a square CSR matrix (duplicates summed, absent entries 0), for Jacobi.
template <class Value, class Index>
std::vector<Value> matrix_diagonal(const CsrMatrix<Value, Index>& a);

// Solves op x = b on host vectors. `diagonal` is required for Preconditioner::Jacobi (the operator's
// diagonal: matrix_diagonal(A) for a CSR matrix, the operator's own for matrix-free ones) and ignored
// otherwise. Throws InvalidArgument for: a non-square operator, b or x of the wrong length, NaN or Inf
// in b or x0, a diagonal of the wrong length or with a zero / non-finite entry (named by row), bad
// options. Breakdowns (rho = 0, p.Ap <= 0 for CG, omega = 0 ...) end the solve with
// result.breakdown set and converged false; a NaN produced by the operator is reported the same way.
template <class Value>
SolverResult solve(LinearOperator<Value>& op, std::span<const Value> b, std::span<Value> x,
                   const SolverOptions& options = {}, std::span<const Value> diagonal = {});

// "merge-path <policy>": an algorithm and its policy as SolverResult::algorithm holds them.
std::string algorithm_label(Algorithm algorithm, const std::string& policy);

// Auto's CPU operator for A x made without Options::expected_applies, allowed to convert the matrix during
// a solve (the twin of cuda::ConvertingPlanOperator; docs/SOLVERS.md "Conversion during a solve"): at each
// of its ConversionChecks it asks whether Auto, told to expect as many products again as were made so far,
// may convert (src/core/auto_rule.hpp, "CPU Auto"), and if so builds that operator and applies it from then
// on, once the products made would have repaid the conversion (the ski-rental rule). solve_csr and the
// Python Matrix use it where converts_during_solve says so; `a` and `first` (Auto's operator for A x) must
// outlive it.
template <class Value, class Index>
class ConvertingOperator final : public LinearOperator<Value> {
 public:
  ConvertingOperator(const CsrMatrix<Value, Index>& a, Operator<Value, Index>& first, const Options& options);
  ~ConvertingOperator() override;
  std::int64_t rows() const override { return current().rows(); }
  std::int64_t cols() const override { return current().cols(); }
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    active().apply(alpha, x, beta, y);
  }
  bool reconsider(std::int64_t applies) override;
  const Operator<Value, Index>& current() const { return converted_ ? *converted_ : first_; }
  std::int64_t converted_after() const { return checks_.converted_after(); }
  // algorithm_label of the operator in use, with the first one's and the product count after a conversion.
  std::string label() const;

 private:
  Operator<Value, Index>& active() { return converted_ ? *converted_ : first_; }
  struct Shape;
  const CsrMatrix<Value, Index>& a_;
  Operator<Value, Index>& first_;
  Options options_;
  std::unique_ptr<Shape> shape_;  // measured at the first check
  std::unique_ptr<Operator<Value, Index>> converted_;
  ConversionChecks checks_;
};

// A CSR matrix on a backend, vectors on the host: builds the operator (`algorithm`, Auto resolved
// by its rule, with `options`: pass options.expected_applies to let Auto convert formats), takes the
// diagonal from the matrix when Jacobi is asked for, and solves. On CUDA, A, b, x0 and the diagonal
// are uploaded once, the solve runs on the device (spmv::cuda::solve) and x is downloaded at the end.
// result.algorithm names what ran. Without the CUDA backend, Backend::Cuda throws Unsupported.
template <class Value, class Index>
SolverResult solve_csr(Backend backend, const CsrMatrix<Value, Index>& a, Algorithm algorithm, const Options& options,
                       std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options = {});

// The same FEM problem matrix-free: the local-matrix-assembly operator (fem::make_lma_operator) with
// the problem's own diagonal for Jacobi. On CUDA the element data, b, x0 and the diagonal are uploaded
// once and the solve runs on the device. result.algorithm names the operator ("lma ...").
template <class Value, class Index>
SolverResult solve_lma(Backend backend, const fem::FemProblem<Value, Index>& problem, const Options& options,
                       std::span<const Value> b, std::span<Value> x, const SolverOptions& solver_options = {});

}  // namespace spmv
