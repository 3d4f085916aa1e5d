// Issue 15's fused and pipelined CG on the CPU against issue 9's unfused one and the textbook algorithm
// (tests/common/solver_fusion_checks.hpp), the pipelined one's restarts, the floor's fields, and that
// breakdowns and bad input are still reported the same way by the fused and the unfused variant.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/solver_fusion_checks.hpp"
#include "spmv/error.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CpuSolverFusion, FusedMatchesUnfusedAndTheTextbookAfterNSteps) {
  for (bool jacobi : {false, true}) {
    SCOPED_TRACE(jacobi ? "jacobi" : "none");
    expect_fused_matches_unfused<double>(Backend::Cpu, 2, 24, jacobi, 40);
    expect_fused_matches_unfused<float>(Backend::Cpu, 2, 24, jacobi, 20);
    expect_fused_matches_unfused<double>(Backend::Cpu, 3, 9, jacobi, 30);
  }
}

TEST(CpuSolverFusion, PipelinedMatchesTheTextbookAfterNSteps) {
  for (bool jacobi : {false, true}) {
    SCOPED_TRACE(jacobi ? "jacobi" : "none");
    expect_pipelined_matches_textbook<double>(Backend::Cpu, 2, 24, jacobi, 40);
    expect_pipelined_matches_textbook<float>(Backend::Cpu, 2, 24, jacobi, 20);
    expect_pipelined_matches_textbook<double>(Backend::Cpu, 3, 9, jacobi, 30);
  }
}

TEST(CpuSolverFusion, PipelinedRestartsInsteadOfBreakingDown) {
  expect_pipelined_restarts_instead_of_breaking_down(Backend::Cpu);
}

TEST(CpuSolverFusion, PipelinedFloatKeepsTheTrueResidual) {
  expect_pipelined_float_keeps_the_true_residual(Backend::Cpu);
}

TEST(CpuSolverFusion, BothVariantsConvergeToTheSameIterationCount) {
  const SolverMatrix a = gen::poisson3d(10);
  const auto b = random_rhs(a.rows, 3);
  SolverOptions o;
  o.tolerance = 1e-10;
  o.max_iterations = 1000;
  for (bool jacobi : {false, true}) {
    o.preconditioner = jacobi ? Preconditioner::Jacobi : Preconditioner::None;
    o.fused = true;
    const FusionRun fused = run_cg<double>(Backend::Cpu, a, b, o);
    o.fused = false;
    const FusionRun unfused = run_cg<double>(Backend::Cpu, a, b, o);
    ASSERT_TRUE(fused.result.converged);
    ASSERT_TRUE(unfused.result.converged);
    EXPECT_EQ(fused.result.iterations, unfused.result.iterations);
    // Both stop on the same recurrence residual; their x (last update included) meet the same bound.
    EXPECT_LE(fused.result.residual, 10 * o.tolerance);
    EXPECT_NEAR(fused.result.residual, unfused.result.residual, o.tolerance);
  }
}

TEST(CpuSolverFusion, FloorFields) {
  const SolverMatrix a = gen::poisson2d(16);
  const auto b = random_rhs(a.rows, 1);
  SolverOptions o;
  o.tolerance = 1e-8;
  FusionRun r = run_cg<double>(Backend::Cpu, a, b, o);
  // 5-point stencil: nnz * 12 + (rows + 1) * 4 + 2 * rows * 8 bytes per apply.
  EXPECT_EQ(r.result.apply_bytes, static_cast<std::uint64_t>(a.nnz()) * 12 + (a.rows + 1) * 4 + 2 * a.rows * 8);
  set_iteration_floor(r.result, 100.0);
  EXPECT_EQ(r.result.floor_bytes, r.result.apply_bytes + r.result.vector_bytes);
  EXPECT_DOUBLE_EQ(r.result.floor_ms, static_cast<double>(r.result.floor_bytes) / 100e9 * 1e3);
  EXPECT_DOUBLE_EQ(r.result.floor_multiple, r.result.ms_per_iteration / r.result.floor_ms);
  set_iteration_floor(r.result, 0);
  EXPECT_EQ(r.result.floor_ms, 0);
  // BiCGStab: two applies per iteration, no CG variant.
  o.method = SolverMethod::BiCgStab;
  r = run_cg<double>(Backend::Cpu, a, b, o);
  EXPECT_EQ(r.result.applies_per_iteration, 2);
  EXPECT_EQ(r.result.variant, "");
}

// Breakdowns, NaN from the operator and NaN in b: the same report from both variants.
TEST(CpuSolverFusion, BreakdownAndNaNReportedByBothVariants) {
  CooMatrix<double, std::int64_t> coo;
  coo.rows = coo.cols = 2;
  coo.row_idx = {0, 1}, coo.col_idx = {0, 1}, coo.values = {1, -1};
  const auto indefinite = to_csr<double, std::int64_t>(coo);
  auto op = make_cpu_operator(indefinite, Algorithm::Auto, Operation::NonTranspose);
  const SolverMatrix a = gen::poisson2d(6);
  auto poisson = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  for (bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "fused" : "unfused");
    SolverOptions o;
    o.fused = fused;
    std::vector<double> b{1, 1}, x(2, 0.0);
    const SolverResult r = solve<double>(*op, b, x, o);  // p.Ap = 1 - 1 = 0
    EXPECT_FALSE(r.converged);
    EXPECT_TRUE(contains(r.breakdown, "p.Ap <= 0")) << r.breakdown;
    EXPECT_EQ(r.iterations, 0);

    // The operator returns NaN on its third apply (iteration 2): the residual turns non-finite.
    struct Poisoned final : LinearOperator<double> {
      explicit Poisoned(LinearOperator<double>& inner) : inner(inner) {}
      std::int64_t rows() const override { return inner.rows(); }
      std::int64_t cols() const override { return inner.cols(); }
      void apply(double alpha, std::span<const double> x, double beta, std::span<double> y) override {
        inner.apply(alpha, x, beta, y);
        if (++calls == 3) y[2] = std::numeric_limits<double>::quiet_NaN();
      }
      LinearOperator<double>& inner;
      int calls = 0;
    } poisoned(*poisson);
    std::vector<double> pb(a.rows, 1.0), px(a.rows, 0.0);
    const SolverResult rn = solve<double>(poisoned, pb, px, o);
    EXPECT_FALSE(rn.converged);
    EXPECT_TRUE(contains(rn.breakdown, "NaN or Inf")) << rn.breakdown;

    pb[4] = std::numeric_limits<double>::quiet_NaN();
    try {
      solve<double>(*poisson, pb, px, o);
      ADD_FAILURE() << "NaN in b accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), "b holds NaN or Inf at row 4")) << e.what();
    }
  }
  // graph capture is a CUDA option.
  SolverOptions g;
  g.graph = true;
  std::vector<double> b(a.rows, 1.0), x(a.rows, 0.0);
  try {
    solve<double>(*poisson, b, x, g);
    ADD_FAILURE() << "graph accepted on the CPU";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "graph")) << e.what();
  }
}

// A progress callback that throws inside the fused iteration's OpenMP region reaches the caller.
TEST(CpuSolverFusion, ProgressExceptionLeavesTheParallelRegion) {
  const SolverMatrix a = gen::poisson2d(10);
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<double> b(a.rows, 1.0), x(a.rows, 0.0);
  SolverOptions o;
  o.progress_every = 2;
  o.progress = [](const SolverProgress&) { throw std::runtime_error("stop here"); };
  EXPECT_THROW(solve<double>(*op, b, x, o), std::runtime_error);
}

}  // namespace
}  // namespace spmv::test
