// Issue 15's fused and pipelined CG on the device: the shared bodies of tests/common/
// solver_fusion_checks.hpp (fused vs unfused vs the textbook after N steps, pipelined vs the textbook,
// pipelined restarts), each variant against the CPU's, breakdowns, the CUDA graph of the iteration
// (bitwise the same solve as without it; refused for a tuning plan), and that the check interval still
// changes nothing. Skipped without a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/solver_fusion_checks.hpp"
#include "spmv/cuda/linear_operator.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/solvers.hpp"
#include "spmv/error.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device"

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CudaSolverFusion, FusedMatchesUnfusedAndTheTextbookAfterNSteps) {
  SKIP_WITHOUT_CUDA();
  for (bool jacobi : {false, true}) {
    SCOPED_TRACE(jacobi ? "jacobi" : "none");
    expect_fused_matches_unfused<double>(Backend::Cuda, 2, 24, jacobi, 40);
    expect_fused_matches_unfused<float>(Backend::Cuda, 2, 24, jacobi, 20);
    expect_fused_matches_unfused<double>(Backend::Cuda, 3, 9, jacobi, 30);
    // Large enough for a full grid of reduction blocks (kMaxReductionBlocks) and grid-stride loops.
    expect_fused_matches_unfused<double>(Backend::Cuda, 2, 700, jacobi, 10);
  }
}

TEST(CudaSolverFusion, PipelinedMatchesTheTextbookAfterNSteps) {
  SKIP_WITHOUT_CUDA();
  for (bool jacobi : {false, true}) {
    SCOPED_TRACE(jacobi ? "jacobi" : "none");
    expect_pipelined_matches_textbook<double>(Backend::Cuda, 2, 24, jacobi, 40);
    expect_pipelined_matches_textbook<float>(Backend::Cuda, 2, 24, jacobi, 20);
    expect_pipelined_matches_textbook<double>(Backend::Cuda, 3, 9, jacobi, 30);
    expect_pipelined_matches_textbook<double>(Backend::Cuda, 2, 700, jacobi, 10);
  }
}

TEST(CudaSolverFusion, PipelinedRestartsInsteadOfBreakingDown) {
  SKIP_WITHOUT_CUDA();
  expect_pipelined_restarts_instead_of_breaking_down(Backend::Cuda);
}

TEST(CudaSolverFusion, PipelinedFloatKeepsTheTrueResidual) {
  SKIP_WITHOUT_CUDA();
  expect_pipelined_float_keeps_the_true_residual(Backend::Cuda);
}

// The fused and the pipelined variant on the device against the same variant on the CPU.
TEST(CudaSolverFusion, FusedDeviceMatchesFusedCpu) {
  SKIP_WITHOUT_CUDA();
  const SolverMatrix a = gen::poisson3d(14);
  const auto b = random_rhs(a.rows, 8);
  for (bool pipelined : {false, true})
    for (bool jacobi : {false, true})
      for (bool single : {false, true}) {
        SCOPED_TRACE(std::string(pipelined ? "pipelined" : "fused") + (jacobi ? " jacobi" : "") +
                     (single ? " f32" : " f64"));
        SolverOptions o;
        o.preconditioner = jacobi ? Preconditioner::Jacobi : Preconditioner::None;
        o.tolerance = single ? 1e-5 : 1e-10;
        o.max_iterations = 2000;
        o.pipelined = pipelined;
        const FusionRun cpu = single ? run_cg<float>(Backend::Cpu, a, b, o) : run_cg<double>(Backend::Cpu, a, b, o);
        const FusionRun gpu = single ? run_cg<float>(Backend::Cuda, a, b, o) : run_cg<double>(Backend::Cuda, a, b, o);
        ASSERT_TRUE(gpu.result.converged) << gpu.result.breakdown;
        EXPECT_NEAR(gpu.result.iterations, cpu.result.iterations, iteration_slack(cpu.result.iterations));
        EXPECT_LE(gpu.result.residual, 10 * o.tolerance);  // the last iteration's x update was made
        EXPECT_EQ(gpu.result.variant, pipelined ? "pipelined" : "fused");
      }
}

// The graph replays the very kernels of the stream path in the same order: the same x bit for bit,
// the same iteration count and applies; the apply share is not measured (-1).
TEST(CudaSolverFusion, GraphCaptureGivesTheSameSolve) {
  SKIP_WITHOUT_CUDA();
  const SolverMatrix a = gen::poisson2d(60);
  const auto b = random_rhs(a.rows, 2);
  const auto expect_same_solve_in_graph = [&](SolverOptions o) {
    o.tolerance = 1e-9;
    o.record_history = true;
    const FusionRun stream = run_cg<double>(Backend::Cuda, a, b, o);
    o.graph = true;
    const FusionRun graph = run_cg<double>(Backend::Cuda, a, b, o);
    ASSERT_TRUE(graph.result.converged) << graph.result.breakdown;
    EXPECT_EQ(graph.result.iterations, stream.result.iterations);
    EXPECT_EQ(graph.x, stream.x);
    EXPECT_EQ(graph.result.history, stream.result.history);
    EXPECT_EQ(graph.result.applies, stream.result.applies);
    EXPECT_EQ(graph.result.apply_share, -1);
    EXPECT_TRUE(contains(graph.result.variant, "graph")) << graph.result.variant;
  };
  for (const char* variant : {"fused", "unfused", "pipelined", "bicgstab"})
    for (bool jacobi : {false, true})
      for (int check_every : {1, 5}) {
        SCOPED_TRACE(std::string(variant) + (jacobi ? " jacobi" : "") + " check " + std::to_string(check_every));
        SolverOptions o;
        o.method = std::string(variant) == "bicgstab" ? SolverMethod::BiCgStab : SolverMethod::Cg;
        o.fused = std::string(variant) == "fused";
        o.pipelined = std::string(variant) == "pipelined";
        o.preconditioner = jacobi ? Preconditioner::Jacobi : Preconditioner::None;
        o.check_every = check_every;
        expect_same_solve_in_graph(o);
      }
  // A tuning plan cannot be captured; GMRES has no graph.
  const auto af = convert<double, std::int32_t>(a);
  std::vector<double> bx(b), x(a.rows, 0.0);
  SolverOptions o;
  o.graph = true;
  const auto solve_with = [&](Algorithm algorithm) {
    solve_csr<double, std::int32_t>(Backend::Cuda, af, algorithm, Options{}, bx, x, o);
  };
  EXPECT_THROW(solve_with(Algorithm::Tune), InvalidArgument);
  o.method = SolverMethod::Gmres;
  EXPECT_THROW(solve_with(Algorithm::Auto), InvalidArgument);
}

TEST(CudaSolverFusion, BreakdownsAndMaxIterationsInTheFusedKernels) {
  SKIP_WITHOUT_CUDA();
  CooMatrix<double, std::int64_t> coo;
  coo.rows = coo.cols = 2;
  coo.row_idx = {0, 1}, coo.col_idx = {0, 1}, coo.values = {1, -1};
  const auto indefinite = to_csr<double, std::int64_t>(coo);
  for (const char* variant : {"fused", "unfused", "pipelined"}) {
    SCOPED_TRACE(variant);
    SolverOptions o;
    o.fused = std::string(variant) == "fused";
    o.pipelined = std::string(variant) == "pipelined";
    std::vector<double> b{1, 1}, x(2, 0.0);
    const SolverResult r =
        solve_csr<double, std::int64_t>(Backend::Cuda, indefinite, Algorithm::Auto, Options{}, b, x, o);
    EXPECT_TRUE(contains(r.breakdown, "p.Ap <= 0")) << r.breakdown;
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(x, (std::vector<double>{0, 0}));  // no x update without an alpha
  }
  // Stopped by max_iterations: the fused x holds the last iteration's update (as the unfused one).
  const SolverMatrix a = gen::poisson2d(30);
  const auto b = random_rhs(a.rows, 6);
  SolverOptions o;
  o.tolerance = 0;
  o.max_iterations = 7;
  o.check_every = 3;
  const FusionRun fused = run_cg<double>(Backend::Cuda, a, b, o);
  o.fused = false;
  const FusionRun unfused = run_cg<double>(Backend::Cuda, a, b, o);
  o.pipelined = true;
  const FusionRun pipelined = run_cg<double>(Backend::Cuda, a, b, o);
  EXPECT_EQ(fused.result.iterations, 7);
  EXPECT_EQ(pipelined.result.iterations, 7);
  EXPECT_LE(relative_difference(pipelined.x, unfused.x), fusion_bound(1.1e-16, 7, poisson_condition(30)));
  EXPECT_LE(relative_difference(fused.x, unfused.x), fusion_bound(1.1e-16, 7, poisson_condition(30)));
  EXPECT_NEAR(fused.result.residual, unfused.result.residual, 1e-12);
}

}  // namespace
}  // namespace spmv::test
