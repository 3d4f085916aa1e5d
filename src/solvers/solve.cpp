// The public entry of the CPU solvers: validates the problem, handles b = 0, builds the Jacobi
// inverse diagonal, dispatches to the method, then computes the true residual with one more apply.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "bench/byte_model.hpp"
#include "solvers/cpu_vector_ops.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv {

std::string_view to_string(SolverMethod m) {
  switch (m) {
    case SolverMethod::Cg: return "cg";
    case SolverMethod::BiCgStab: return "bicgstab";
    case SolverMethod::Gmres: return "gmres";
  }
  return "?";
}

std::string_view to_string(Preconditioner p) { return p == Preconditioner::Jacobi ? "jacobi" : "none"; }

std::string_view to_string(GmresBasis b) {
  switch (b) {
    case GmresBasis::Float32: return "f32";
    case GmresBasis::Float16: return "f16";
    case GmresBasis::Working: break;
  }
  return "working";
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}
}  // namespace

std::optional<SolverMethod> parse_solver_method(std::string_view name) {
  const std::string n = lower(name);
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres})
    if (n == to_string(m)) return m;
  return std::nullopt;
}

std::optional<Preconditioner> parse_preconditioner(std::string_view name) {
  const std::string n = lower(name);
  for (Preconditioner p : {Preconditioner::None, Preconditioner::Jacobi})
    if (n == to_string(p)) return p;
  return std::nullopt;
}

std::optional<GmresBasis> parse_gmres_basis(std::string_view name) {
  const std::string n = lower(name);
  for (GmresBasis b : {GmresBasis::Working, GmresBasis::Float32, GmresBasis::Float16})
    if (n == to_string(b)) return b;
  return std::nullopt;
}

std::string algorithm_label(Algorithm algorithm, const std::string& policy) {
  std::string label(to_string(algorithm));
  if (!policy.empty()) {
    label += ' ';
    label += policy;
  }
  return label;
}

template <class Value, class Index>
std::vector<Value> matrix_diagonal(const CsrMatrix<Value, Index>& a) {
  if (a.rows != a.cols)
    throw InvalidArgument("matrix_diagonal: the matrix is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                          ", not square");
  std::vector<Value> d(static_cast<std::size_t>(a.rows), Value(0));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(a.rows); ++i)
    for (Index k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) d[i] += a.values[k];
  return d;
}

template std::vector<float> matrix_diagonal(const CsrMatrix<float, std::int32_t>&);
template std::vector<float> matrix_diagonal(const CsrMatrix<float, std::int64_t>&);
template std::vector<double> matrix_diagonal(const CsrMatrix<double, std::int32_t>&);
template std::vector<double> matrix_diagonal(const CsrMatrix<double, std::int64_t>&);

namespace solvers {

std::string row_name(std::int64_t row) { return "row " + std::to_string(row) + " (0-based)"; }

void check_problem(std::int64_t rows, std::int64_t cols, std::size_t b_size, std::size_t x_size,
                   const SolverOptions& o, std::size_t value_size) {
  const std::string method(to_string(o.method));
  if (rows != cols)
    throw InvalidArgument(method + ": the operator is " + std::to_string(rows) + " x " + std::to_string(cols) +
                          "; Krylov solvers need a square operator");
  if (static_cast<std::int64_t>(b_size) != rows)
    throw InvalidArgument(method + ": b has " + std::to_string(b_size) + " entries, the operator has " +
                          std::to_string(rows) + " rows");
  if (static_cast<std::int64_t>(x_size) != cols)
    throw InvalidArgument(method + ": x (the initial guess x0) has " + std::to_string(x_size) +
                          " entries, the operator has " + std::to_string(cols) + " columns");
  if (!(o.tolerance >= 0) || !std::isfinite(o.tolerance))
    throw InvalidArgument(method + ": tolerance must be finite and >= 0, got " + std::to_string(o.tolerance));
  if (o.max_iterations < 0)
    throw InvalidArgument(method + ": max_iterations must be >= 0, got " + std::to_string(o.max_iterations));
  if (o.method == SolverMethod::Gmres && o.restart < 1)
    throw InvalidArgument("gmres: restart must be >= 1, got " + std::to_string(o.restart));
  if (o.progress_every < 0)
    throw InvalidArgument(method + ": progress_every must be >= 0, got " + std::to_string(o.progress_every));
  if (o.check_every < 1)
    throw InvalidArgument(method + ": check_every must be >= 1, got " + std::to_string(o.check_every));
  if (o.graph && o.method == SolverMethod::Gmres)
    throw InvalidArgument(method + ": graph capture of the iteration is implemented for cg and bicgstab only");
  if (o.pipelined && o.method != SolverMethod::Cg)
    throw InvalidArgument(method + ": the pipelined recurrence is implemented for cg only");
  if (o.gmres_basis != GmresBasis::Working && o.method != SolverMethod::Gmres)
    throw InvalidArgument(method + ": a compressed Krylov basis (gmres_basis) is a gmres option");
  if (o.gmres_s_step != 1 && o.method != SolverMethod::Gmres)
    throw InvalidArgument(method + ": the s-step basis (gmres_s_step) is a gmres option");
  if (o.gmres_s_step < 1 || o.gmres_s_step > kGmresMaxSStep)
    throw InvalidArgument("gmres: gmres_s_step must be in [1, " + std::to_string(kGmresMaxSStep) + "], got " +
                          std::to_string(o.gmres_s_step));
  if (o.gmres_s_step > 1 && o.gmres_basis != GmresBasis::Working)
    throw InvalidArgument("gmres: the s-step basis (gmres_s_step > 1) is stored in the working precision; a " +
                          std::string(to_string(o.gmres_basis)) +
                          " basis would round the block's Newton vectors before its Cholesky QR, which amplifies "
                          "that rounding by the block's condition number (docs/SOLVERS.md, \"s-step GMRES\")");
  if (o.gmres_basis == GmresBasis::Float16 && value_size != sizeof(float))
    throw InvalidArgument("gmres: an f16 basis is for float solves; a double solve compresses its basis to f32");
}

double vector_words_per_iteration(const SolverOptions& o, double basis_word) {
  const bool jacobi = o.preconditioner == Preconditioner::Jacobi;
  switch (o.method) {
    case SolverMethod::Cg: return o.pipelined ? (jacobi ? 20 : 13) : (o.fused ? 10 : 11) + (jacobi ? 2 : 0);
    case SolverMethod::BiCgStab: return jacobi ? 23 : 21;
    case SolverMethod::Gmres: {
      if (o.gmres_s_step > 1) {  // the later cycles' steps (solver_setup.hpp; the first cycle is Arnoldi's)
        const int s = o.gmres_s_step;
        double words = 0;
        for (int j0 = 0; j0 < o.restart; j0 += s) {
          const int sb = std::min(s, o.restart - j0);
          words += sb >= 2 ? 2.0 * (j0 + 1) + 5.0 * sb + sb * (jacobi ? 5.0 : 3.0)
                           : 2.0 * j0 + 5 + (jacobi ? 3 : 0);  // a block of one step is an Arnoldi step
        }
        return words / o.restart + 1;
      }
      const double b = basis_word;  // a basis entry, in words of the value type
      const bool compressed = b != 1.0;
      double step_words = 0;  // summed over a cycle's steps j = 0..m-1 (solver_setup.hpp)
      for (int j = 0; j < o.restart; ++j)
        step_words += (2.0 * j + 3) * b + 2 + ((j + 2 + kGmresDotColumns - 1) / kGmresDotColumns - 1) +
                      (j + 1 > kGmresDotColumns ? (j + 2) * b : 0);
      // The SpMV's input: M^-1 v_j (read dinv and v, write z), or with a compressed basis v widened.
      const double input = compressed ? b + (jacobi ? 2 : 1) : (jacobi ? 3 : 0);
      return step_words / o.restart + b + input;
    }
  }
  return 0;
}

void describe_iteration(const SolverOptions& o, std::int64_t n, std::size_t value_size, SolverResult& result) {
  result.variant = o.method == SolverMethod::Cg ? (o.pipelined ? "pipelined" : o.fused ? "fused" : "unfused") : "";
  if (o.graph) result.variant += result.variant.empty() ? "graph" : ", graph";
  if (o.method == SolverMethod::Gmres && o.gmres_s_step > 1) result.variant = "s-step " + std::to_string(o.gmres_s_step);
  result.applies_per_iteration = o.method == SolverMethod::BiCgStab ? 2 : 1;
  const double basis_word =
      o.method == SolverMethod::Gmres ? static_cast<double>(gmres_basis_size(o, value_size)) / value_size : 1.0;
  result.vector_bytes = static_cast<std::uint64_t>(std::llround(vector_words_per_iteration(o, basis_word) *
                                                                static_cast<double>(n) * value_size));
}

}  // namespace solvers

void set_iteration_floor(SolverResult& r, double copy_gbs) {
  r.floor_bytes = static_cast<std::uint64_t>(r.applies_per_iteration) * r.apply_bytes + r.vector_bytes;
  r.bandwidth_gbs = copy_gbs > 0 ? copy_gbs : 0;
  r.floor_ms = copy_gbs > 0 ? static_cast<double>(r.floor_bytes) / (copy_gbs * 1e9) * 1e3 : 0;
  r.floor_multiple = r.floor_ms > 0 ? r.ms_per_iteration / r.floor_ms : 0;
}

std::uint64_t csr_apply_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_size,
                              std::size_t index_size) {
  return bench::minimal_bytes(rows, cols, nnz, value_size, index_size, Operation::NonTranspose, false);
}

template <class Value>
SolverResult solve(LinearOperator<Value>& op, std::span<const Value> b, std::span<Value> x,
                   const SolverOptions& options, std::span<const Value> diagonal) {
  using namespace solvers;
  const auto t0 = Clock::now();
  check_problem(op.rows(), op.cols(), b.size(), x.size(), options, sizeof(Value));
  const std::string method(to_string(options.method));
  if (options.graph) throw InvalidArgument(method + ": graph capture is a CUDA option; the CPU solvers have no graph");
  if (const auto i = cpu::first_non_finite(b); i >= 0)
    throw InvalidArgument(method + ": b holds NaN or Inf at " + row_name(i));
  if (const auto i = cpu::first_non_finite<Value>(x); i >= 0)
    throw InvalidArgument(method + ": the initial guess x0 holds NaN or Inf at " + row_name(i));

  std::vector<Value> inverse_diagonal;
  if (options.preconditioner == Preconditioner::Jacobi) {
    if (static_cast<std::int64_t>(diagonal.size()) != op.rows())
      throw InvalidArgument(method + ": the Jacobi preconditioner needs the operator's diagonal (" +
                            std::to_string(op.rows()) + " entries; matrix_diagonal(A) for a CSR matrix), got " +
                            std::to_string(diagonal.size()));
    inverse_diagonal.resize(diagonal.size());
    for (std::size_t i = 0; i < diagonal.size(); ++i) {
      if (diagonal[i] == Value(0) || !std::isfinite(diagonal[i]))
        throw InvalidArgument(method + ": the Jacobi preconditioner needs a nonzero finite diagonal; " +
                              row_name(static_cast<std::int64_t>(i)) + " has " +
                              (diagonal[i] == Value(0) ? std::string("0") : std::string("NaN or Inf")));
      inverse_diagonal[i] = Value(1) / diagonal[i];
    }
  }

  SolverResult result;
  describe_iteration(options, op.rows(), sizeof(Value), result);
  // A distributed solve's vectors are this process's parts: norms sum over the processes.
  const auto global_norm = [&](std::span<const Value> v) {
    double squares = cpu::dot<Value>(v, v);
    global_sum(options, {&squares, 1});
    return std::sqrt(squares);
  };
  const double b_norm = global_norm(b);
  if (b_norm == 0) {  // the exact solution is 0, whatever x0 was
    std::fill(x.begin(), x.end(), Value(0));
    result.converged = true;
    if (options.record_history) result.history.push_back(0.0);
    result.total_ms = ms_since(t0);
    return result;
  }

  CpuRun<Value> run(op, options, b_norm, result);
  const std::span<const Value> dinv(inverse_diagonal);
  switch (options.method) {
    case SolverMethod::Cg: cg_cpu<Value>(run, b, x, dinv); break;
    case SolverMethod::BiCgStab: bicgstab_cpu<Value>(run, b, x, dinv); break;
    case SolverMethod::Gmres: gmres_cpu<Value>(run, b, x, dinv, options.restart); break;
  }
  run.finish();

  std::vector<Value> r(b.begin(), b.end());  // the true residual, one more apply
  op.apply(Value(-1), x, Value(1), r);
  ++result.applies;
  result.residual = global_norm(r) / b_norm;
  result.total_ms = ms_since(t0);
  return result;
}

template SolverResult solve(LinearOperator<float>&, std::span<const float>, std::span<float>, const SolverOptions&,
                            std::span<const float>);
template SolverResult solve(LinearOperator<double>&, std::span<const double>, std::span<double>,
                            const SolverOptions&, std::span<const double>);

}  // namespace spmv
