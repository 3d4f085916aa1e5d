// The CPU Krylov solvers (spmv/solvers.hpp): convergence to the stated tolerance on 2D/3D Poisson, a
// nonsymmetric convection-diffusion matrix and an SPD SuiteSparse matrix, agreement with the textbook
// reference solvers of tests/common/solver_problems.hpp, the true residual, every bad-input path, b = 0,
// progress and history, and a matrix-free LinearOperator test double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/paths.hpp"
#include "common/solver_problems.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/operator.hpp"
#include "spmv/reorder.hpp"
#include "spmv/solvers.hpp"

namespace spmv::test {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using Case = SolverCase;

class CpuSolvers : public testing::TestWithParam<Case> {};

TEST_P(CpuSolvers, ConvergeAndAgreeWithTheReference) {
  const Case& c = GetParam();
  const SolverMatrix a = solver_problem_matrix(c.matrix);
  const auto b = random_rhs(a.rows, 42);
  SolverOptions o;
  o.method = c.method;
  o.preconditioner = c.jacobi ? Preconditioner::Jacobi : Preconditioner::None;
  // f32 cannot reach 1e-10: its attainable accuracy on these problems is ~1e-6 (the bound below).
  o.tolerance = c.single ? 1e-5 : 1e-10;
  o.max_iterations = 2000;
  o.restart = 20;
  o.record_history = true;
  std::vector<double> x;
  const SolverResult r = c.single ? solve_cpu<float>(a, b, x, o) : solve_cpu<double>(a, b, x, o);

  ASSERT_TRUE(r.converged) << r.breakdown << " after " << r.iterations;
  EXPECT_TRUE(r.breakdown.empty());
  EXPECT_LE(r.recurrence_residual, o.tolerance);
  ASSERT_EQ(r.history.size(), static_cast<std::size_t>(r.iterations) + 1);
  EXPECT_DOUBLE_EQ(r.history.back(), r.recurrence_residual);
  EXPECT_DOUBLE_EQ(r.history.front(), 1.0);  // x0 = 0: r0 = b

  // The reported true residual is the real one (recomputed here in double) and within the bound.
  const auto ax = reference_product(a, x);
  double rr = 0, xx = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) rr += (b[i] - ax[i]) * (b[i] - ax[i]), xx += x[i] * x[i];
  const double b_norm = std::sqrt(reference_dot(b, b));
  const double eps = c.single ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double bound = true_residual_bound(o.tolerance, eps, r.iterations, norm_inf_matrix(a), std::sqrt(xx), b_norm);
  EXPECT_LE(r.residual, bound);
  // r.residual was computed in Value; the double recomputation differs by rounding of one product.
  EXPECT_NEAR(r.residual, std::sqrt(rr) / b_norm, 10 * eps * norm_inf_matrix(a) * std::sqrt(xx) / b_norm);

  // The textbook solver in double takes about as many iterations and lands on the same x (both
  // residuals are below the bound, so ||x - x_ref|| <= ||A^-1|| (|r| + |r_ref|); we compare in the
  // relative form with kappa <= 1000 for these matrices).
  const ReferenceRun ref = reference_solve(c.method, a, b, c.jacobi, o.tolerance, o.max_iterations, o.restart);
  ASSERT_TRUE(ref.converged);
  EXPECT_NEAR(r.iterations, ref.iterations, iteration_slack(ref.iterations));
  double dx = 0, xr = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) dx += (x[i] - ref.x[i]) * (x[i] - ref.x[i]), xr += ref.x[i] * ref.x[i];
  EXPECT_LE(std::sqrt(dx / xr), 1000.0 * 2.0 * bound);

  EXPECT_GT(r.applies, r.iterations);
  EXPECT_GT(r.total_ms, 0);
  EXPECT_GE(r.apply_share, 0);
  EXPECT_LE(r.apply_share, 1);
}

INSTANTIATE_TEST_SUITE_P(Cpu, CpuSolvers, testing::ValuesIn(solver_cases()), solver_case_name);

// SolverOptions::pipelined: the same Krylov iterates as CG in exact arithmetic, so on every CG case of
// the grid it converges (in f64 within the textbook reference's iteration slack), and the true residual
// of its x (recomputed in double) meets the same bound as plain CG's; other methods refuse it.
TEST(CpuSolvers, PipelinedCgAgreesWithTheReference) {
  for (const Case& c : solver_cases()) {
    if (c.method != SolverMethod::Cg) continue;
    SCOPED_TRACE(c.matrix + (c.jacobi ? " jacobi" : "") + (c.single ? " f32" : " f64"));
    const SolverMatrix a = solver_problem_matrix(c.matrix);
    const auto b = random_rhs(a.rows, 42);
    SolverOptions o;
    o.preconditioner = c.jacobi ? Preconditioner::Jacobi : Preconditioner::None;
    o.tolerance = c.single ? 1e-5 : 1e-10;
    o.max_iterations = 2000;
    o.pipelined = true;
    std::vector<double> x;
    const SolverResult r = c.single ? solve_cpu<float>(a, b, x, o) : solve_cpu<double>(a, b, x, o);
    ASSERT_TRUE(r.converged) << r.breakdown << " after " << r.iterations;
    EXPECT_EQ(r.variant, "pipelined");
    const ReferenceRun ref = reference_solve(SolverMethod::Cg, a, b, c.jacobi, o.tolerance, o.max_iterations, 20);
    ASSERT_TRUE(ref.converged);
    // f64: the iterates of CG. f32: near the attainable accuracy the recurrences drift until the
    // iteration restarts from x (docs/SOLVERS.md: 96 iterations against 59 on 2D Poisson); a restart
    // repeats at most the iterations done before it, hence twice the reference plus the slack.
    if (!c.single) EXPECT_NEAR(r.iterations, ref.iterations, iteration_slack(ref.iterations));
    else EXPECT_LE(r.iterations, 2 * ref.iterations + iteration_slack(ref.iterations));
    const auto ax = reference_product(a, x);
    double rr = 0, xx = 0;
    for (std::int64_t i = 0; i < a.rows; ++i) rr += (b[i] - ax[i]) * (b[i] - ax[i]), xx += x[i] * x[i];
    const double b_norm = std::sqrt(reference_dot(b, b));
    const double eps = c.single ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    EXPECT_LE(std::sqrt(rr) / b_norm,
              true_residual_bound(o.tolerance, eps, r.iterations, norm_inf_matrix(a), std::sqrt(xx), b_norm));
  }
  const SolverMatrix a = solver_problem_matrix("poisson2d");
  const auto b = random_rhs(a.rows, 1);
  SolverOptions o;
  o.method = SolverMethod::Gmres;
  o.pipelined = true;
  std::vector<double> x;
  EXPECT_THROW(solve_cpu<double>(a, b, x, o), InvalidArgument);
}

// b = A * 1: the exact solution is known, so the error itself is checked (kappa * residual bound).
TEST(CpuSolvers, RecoversTheKnownSolution) {
  const SolverMatrix a = gen::poisson2d(30);
  const std::vector<double> ones(a.rows, 1.0);
  const auto b = reference_product(a, ones);
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    SolverOptions o;
    o.method = m;
    o.tolerance = 1e-12;
    o.max_iterations = 3000;
    std::vector<double> x;
    const SolverResult r = solve_cpu<double>(a, b, x, o);
    ASSERT_TRUE(r.converged) << to_string(m);
    // kappa(poisson2d 30) = cot^2(pi/62) ~ 390; 1e-12 * 390 * (a few) < 1e-8.
    for (double v : x) ASSERT_NEAR(v, 1.0, 1e-8) << to_string(m);
  }
}

// Options::reorder in solve_csr: the solve runs on P A P^T with permuted vectors and must return x in
// the caller's numbering. A scrambled grid (RCM has something to undo) and a known solution that is
// not constant (so that a wrongly permuted x cannot pass).
TEST(CpuSolvers, ReorderedSolveReturnsXInTheCallersNumbering) {
  const auto [a, truth, b] = scrambled_poisson_problem();
  for (Reorder how : {Reorder::Rcm, Reorder::Degree})
    for (SolverMethod m : {SolverMethod::Cg, SolverMethod::Gmres}) {
      SolverOptions o;
      o.method = m;
      o.tolerance = 1e-12;
      o.max_iterations = 3000;
      Options options;
      options.reorder = how;
      std::vector<double> x(truth.size(), 0.0);
      const SolverResult r = solve_csr<double, std::int64_t>(Backend::Cpu, a, Algorithm::Auto, options, b, x, o);
      ASSERT_TRUE(r.converged) << to_string(how) << " " << to_string(m);
      EXPECT_TRUE(contains(r.algorithm, "reorder=" + std::string(to_string(how)))) << r.algorithm;
      // kappa(poisson2d 24) ~ 250; 1e-12 * 250 * (a few) < 1e-8.
      for (std::size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], truth[i], 1e-8) << "row " << i;
    }
}

// An SPD matrix of the SuiteSparse set (bcsstk16, structural FEM, 4884 rows): CG with Jacobi.
TEST(CpuSolvers, SpdSuiteSparseMatrixWithJacobi) {
  const auto path = shared_matrices_dir() / "bcsstk16.mtx.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const auto a = read_csr<double, std::int64_t>(path.string());
  const auto b = random_rhs(a.rows, 7);
  SolverOptions o;
  o.preconditioner = Preconditioner::Jacobi;
  o.tolerance = 1e-8;
  o.max_iterations = 5000;
  std::vector<double> x;
  const SolverResult r = solve_cpu<double>(a, b, x, o);
  ASSERT_TRUE(r.converged) << r.iterations << " " << r.breakdown;
  const ReferenceRun ref = reference_cg(a, b, true, o.tolerance, o.max_iterations);
  ASSERT_TRUE(ref.converged);
  EXPECT_NEAR(r.iterations, ref.iterations, iteration_slack(ref.iterations));
  EXPECT_LE(r.residual, 10 * o.tolerance);  // kappa(D^-1 A) is moderate: no drift beyond 10x here
}

// ----- A matrix-free operator: the 1D Laplacian tridiag(-1, 2, -1) applied without storing it. -----
template <class Value>
class Laplacian1d final : public LinearOperator<Value> {
 public:
  explicit Laplacian1d(std::int64_t n) : n_(n) {}
  std::int64_t rows() const override { return n_; }
  std::int64_t cols() const override { return n_; }
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    ++applies;
    for (std::int64_t i = 0; i < n_; ++i) {
      Value ax = 2 * x[i];
      if (i > 0) ax -= x[i - 1];
      if (i + 1 < n_) ax -= x[i + 1];
      y[i] = alpha * ax + (beta == Value(0) ? Value(0) : beta * y[i]);
    }
  }
  int applies = 0;

 private:
  std::int64_t n_;
};

TEST(CpuSolvers, MatrixFreeOperatorWithItsOwnDiagonal) {
  const std::int64_t n = 200;
  Laplacian1d<double> op(n);
  const auto b = random_rhs(n, 3);
  std::vector<double> x(n, 0.0);
  const std::vector<double> diagonal(n, 2.0);
  SolverOptions o;
  o.preconditioner = Preconditioner::Jacobi;
  o.tolerance = 1e-10;
  o.max_iterations = 1000;
  const SolverResult r = solve<double>(op, b, x, o, diagonal);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(op.applies, r.applies);
  // CG on the 1D Laplacian converges in at most n iterations in exact arithmetic; n/2 + 1 distinct
  // eigenvalue pairs for a random b: expect close to n with a well-defined reference.
  CooMatrix<double, std::int64_t> coo;
  coo.rows = coo.cols = n;
  for (std::int64_t i = 0; i < n; ++i) {
    coo.row_idx.push_back(i), coo.col_idx.push_back(i), coo.values.push_back(2.0);
    if (i > 0) coo.row_idx.push_back(i), coo.col_idx.push_back(i - 1), coo.values.push_back(-1.0);
    if (i + 1 < n) coo.row_idx.push_back(i), coo.col_idx.push_back(i + 1), coo.values.push_back(-1.0);
  }
  const auto a = to_csr<double, std::int64_t>(coo);
  const ReferenceRun ref = reference_cg(a, b, true, o.tolerance, o.max_iterations);
  EXPECT_NEAR(r.iterations, ref.iterations, iteration_slack(ref.iterations));
  EXPECT_LE(r.residual, 1e-8);
}

// ----- Bad input: clear errors, never a hang or a silent wrong answer. -----

template <class Value = double>
SolverMatrix small_matrix(std::int64_t rows, std::int64_t cols, std::vector<double> dense) {
  CooMatrix<double, std::int64_t> coo;
  coo.rows = rows, coo.cols = cols;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      if (dense[i * cols + j] != 0) coo.row_idx.push_back(i), coo.col_idx.push_back(j), coo.values.push_back(dense[i * cols + j]);
  return to_csr<double, std::int64_t>(coo);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no InvalidArgument)";
}

TEST(CpuSolversBadInput, NonSquareOperator) {
  const auto a = small_matrix(2, 3, {1, 0, 0, 0, 1, 0});
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b(2, 1.0), x(3, 0.0);
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    SolverOptions o;
    o.method = m;
    EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, o); }), "square")) << to_string(m);
  }
}

TEST(CpuSolversBadInput, SizesOptionsNaNAndDiagonal) {
  const SolverMatrix a = gen::poisson2d(4);
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b(16, 1.0), x(16, 0.0), short_x(15, 0.0);
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, short_x); }), "x (the initial guess x0) has 15"));
  std::vector<double> short_b(15, 1.0);
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, short_b, x); }), "b has 15"));
  auto nan_b = b;
  nan_b[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, nan_b, x); }), "b holds NaN or Inf at row 5"));
  auto inf_b = b;
  inf_b[0] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, inf_b, x); }), "row 0"));
  auto nan_x = x;
  nan_x[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, nan_x); }), "x0 holds NaN or Inf at row 3"));

  SolverOptions o;
  o.preconditioner = Preconditioner::Jacobi;
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, o); }), "needs the operator's diagonal"));
  auto diagonal = matrix_diagonal(a);
  diagonal[9] = 0;
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, o, diagonal); }), "row 9 (0-based) has 0"));

  SolverOptions bad;
  bad.tolerance = -1;
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, bad); }), "tolerance"));
  bad = {};
  bad.max_iterations = -1;
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, bad); }), "max_iterations"));
  bad = {};
  bad.method = SolverMethod::Gmres;
  bad.restart = 0;
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, bad); }), "restart"));
}

TEST(CpuSolversBadInput, ZeroDiagonalOfACsrMatrixIsNamed) {
  const auto a = small_matrix(3, 3, {2, 1, 0, 1, 0, 1, 0, 1, 2});  // row 1 has no diagonal entry
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b(3, 1.0), x(3, 0.0);
  SolverOptions o;
  o.method = SolverMethod::Gmres;
  o.preconditioner = Preconditioner::Jacobi;
  EXPECT_TRUE(contains(error_of([&] { solve<double>(*op, b, x, o, matrix_diagonal(a)); }), "row 1 (0-based) has 0"));
}

// Breakdowns end the solve with a reason, converged false, and a finite x.
TEST(CpuSolversBreakdown, CgOnAnIndefiniteMatrix) {
  const auto a = small_matrix(2, 2, {1, 0, 0, -1});
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b{1, 1}, x(2, 0.0);
  const SolverResult r = solve<double>(*op, b, x);  // p.Ap = 1 - 1 = 0
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(contains(r.breakdown, "p.Ap <= 0")) << r.breakdown;
  EXPECT_EQ(r.iterations, 0);
  for (double v : x) EXPECT_TRUE(std::isfinite(v));
}

TEST(CpuSolversBreakdown, BiCgStabAlphaAndGmresSingular) {
  // A rotation by 90 degrees: A r0 is orthogonal to r0 = shadow, so r0.v = 0 at once.
  const auto rot = small_matrix(2, 2, {0, 1, -1, 0});
  auto op = make_cpu_operator(rot, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b{1, 0}, x(2, 0.0);
  SolverOptions o;
  o.method = SolverMethod::BiCgStab;
  SolverResult r = solve<double>(*op, b, x, o);
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(contains(r.breakdown, "r0.v = 0")) << r.breakdown;

  // A singular matrix with b outside its range: GMRES finds A v0 = 0.
  const auto singular = small_matrix(2, 2, {0, 0, 0, 1});
  auto op2 = make_cpu_operator(singular, Algorithm::Auto, Operation::NonTranspose);
  std::fill(x.begin(), x.end(), 0.0);
  o.method = SolverMethod::Gmres;
  r = solve<double>(*op2, b, x, o);
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(contains(r.breakdown, "singular")) << r.breakdown;
  EXPECT_EQ(x[0], 0.0);
}

TEST(CpuSolversBreakdown, BiCgStabRhoZero) {
  // Found by an exact (rational) search: with b = e1 and x0 = 0, alpha = 1, omega = 1/2 and
  // r1 = (0, -1, -1), all dyadic and so exact in floating point; r0.r1 = 0, the next rho is 0.
  const auto a = small_matrix(3, 3, {1, 0, 1, 2, 1, -1, 0, -1, -2});
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b{1, 0, 0}, x(3, 0.0);
  SolverOptions o;
  o.method = SolverMethod::BiCgStab;
  o.record_history = true;
  const SolverResult r = solve<double>(*op, b, x, o);
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(contains(r.breakdown, "rho = 0")) << r.breakdown;
  EXPECT_EQ(r.iterations, 1);
  EXPECT_DOUBLE_EQ(r.recurrence_residual, std::sqrt(2.0));
  // x1 = alpha p + omega s = e1 + (0, -2, 0) / 2, and the solve stopped there.
  EXPECT_EQ(x, (std::vector<double>{1, -1, 0}));
  EXPECT_NEAR(r.residual, std::sqrt(2.0), 1e-15);
}

TEST(CpuSolversBreakdown, NaNFromTheOperatorIsReported) {
  Laplacian1d<double> good(8);
  struct Poisoned final : LinearOperator<double> {
    std::int64_t rows() const override { return 8; }
    std::int64_t cols() const override { return 8; }
    void apply(double alpha, std::span<const double> x, double beta, std::span<double> y) override {
      inner.apply(alpha, x, beta, y);
      if (++calls == 3) y[2] = std::numeric_limits<double>::quiet_NaN();
    }
    Laplacian1d<double> inner{8};
    int calls = 0;
  } op;
  const auto b = random_rhs(8, 1);
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    op.calls = 0;
    std::vector<double> x(8, 0.0);
    SolverOptions o;
    o.method = m;
    o.tolerance = 1e-14;
    const SolverResult r = solve<double>(op, b, x, o);
    EXPECT_FALSE(r.converged) << to_string(m);
    EXPECT_FALSE(r.breakdown.empty()) << to_string(m);
  }
}

// ----- Conventions -----

TEST(CpuSolvers, ZeroRightHandSideGivesZeroAtIterationZero) {
  const SolverMatrix a = gen::poisson2d(5);
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b(25, 0.0), x(25, 3.0);
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    SolverOptions o;
    o.method = m;
    const SolverResult r = solve<double>(*op, b, x, o);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(r.residual, 0.0);
    for (double v : x) EXPECT_EQ(v, 0.0);
  }
}

TEST(CpuSolvers, MaxIterationsProgressAndHistory) {
  const SolverMatrix a = gen::poisson2d(20);
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  const auto b = random_rhs(a.rows, 5);
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    std::vector<double> x(a.rows, 0.0);
    std::vector<int> seen;
    SolverOptions o;
    o.method = m;
    o.tolerance = 1e-14;
    o.max_iterations = 12;
    o.restart = 5;  // GMRES crosses two restarts
    o.record_history = true;
    o.progress_every = 4;
    o.progress = [&](const SolverProgress& p) {
      seen.push_back(p.iteration);
      EXPECT_GT(p.relative_residual, 0);
    };
    const SolverResult r = solve<double>(*op, b, x, o);
    EXPECT_FALSE(r.converged) << to_string(m);
    EXPECT_TRUE(r.breakdown.empty()) << to_string(m);
    EXPECT_EQ(r.iterations, 12) << to_string(m);
    EXPECT_EQ(seen, (std::vector<int>{4, 8, 12})) << to_string(m);
    EXPECT_EQ(r.history.size(), 13u) << to_string(m);
    EXPECT_LT(r.residual, 1.0) << to_string(m);  // progress was made
  }
  // max_iterations = 0: only the initial residual.
  std::vector<double> x(a.rows, 0.0);
  SolverOptions o;
  o.max_iterations = 0;
  const SolverResult r = solve<double>(*op, b, x, o);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_FALSE(r.converged);
  EXPECT_NEAR(r.residual, 1.0, 1e-15);
}

TEST(CpuSolvers, InitialGuessIsUsed) {
  const SolverMatrix a = gen::poisson2d(10);
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  const std::vector<double> ones(a.rows, 1.0);
  const auto b = reference_product(a, ones);
  std::vector<double> x = ones;  // the exact solution: converged at iteration 0
  const SolverResult r = solve<double>(*op, b, x);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 0);
}

TEST(CpuSolvers, NamesRoundTrip) {
  for (SolverMethod m : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres})
    EXPECT_EQ(parse_solver_method(to_string(m)), m);
  EXPECT_EQ(parse_solver_method("BiCGStab"), SolverMethod::BiCgStab);
  EXPECT_FALSE(parse_solver_method("minres"));
  EXPECT_EQ(parse_preconditioner("Jacobi"), Preconditioner::Jacobi);
  EXPECT_FALSE(parse_preconditioner("ilu"));
}

}  // namespace
}  // namespace spmv::test
