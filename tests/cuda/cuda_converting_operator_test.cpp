// ConvertingPlanOperator (include/spmv/cuda/linear_operator.hpp): Auto's plan without the hint converts the
// matrix during a solve at the first check (16, 32, 64, ... products) where Auto with that many products as
// its hint plans differently; its products after the conversion agree with the first plan's within the
// rounding bound; solves through the front door (solve_csr) report the conversion and converge as the fixed
// plan's solve does; a graph re-captures the converted apply (the same solve bit for bit as without graph);
// a caller's hint, another algorithm, or a small matrix never converts. Skipped without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/solver_fusion_checks.hpp"
#include "spmv/cuda/linear_operator.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/solvers.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device"

using Op = cuda::ConvertingPlanOperator<double, std::int32_t>;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The first check (16, 32, ...) at which Auto with that hint chooses another plan than without it, or 0 up
// to `limit`: what the operator must do, asked of the Plan itself.
std::int64_t first_converting_check(const cuda::CsrView<double, std::int32_t>& view, std::int64_t limit) {
  cuda::Plan<double, std::int32_t> plain(view);
  for (std::int64_t n = ConversionChecks::kFirstCheck; n <= limit; n *= 2) {
    Options hinted;
    hinted.expected_applies = n;
    cuda::Plan<double, std::int32_t> plan(view, Algorithm::Auto, Operation::NonTranspose, hinted);
    if (plan.algorithm() != plain.algorithm()) return n;
  }
  return 0;
}

TEST(CudaConvertingOperator, ConvertsAtTheFirstCheckWhereAutoWithTheHintDiffers) {
  SKIP_WITHOUT_CUDA();
  // A 5-point Laplacian of 250,000 rows (1.25 M nonzeros): DIA repays its conversion within ~10^2 products.
  const auto a = convert<double, std::int32_t>(gen::poisson2d(500));
  const cuda::DeviceCsr<double, std::int32_t> csr(a);
  const std::int64_t expected = first_converting_check(csr.view(), 1 << 14);
  ASSERT_GT(expected, 0) << "the rule no longer converts this matrix: pick another";
  cuda::Plan<double, std::int32_t> plan(csr.view());
  Op op(csr.view(), plan, Options{});
  EXPECT_FALSE(op.reconsider(ConversionChecks::kFirstCheck - 1, nullptr));
  std::int64_t converted = 0;
  for (std::int64_t applies = 0; applies <= expected && !converted; ++applies)
    if (op.reconsider(applies, nullptr)) converted = applies;
  EXPECT_EQ(converted, expected);
  EXPECT_EQ(op.converted_after(), expected);
  EXPECT_NE(op.current().algorithm(), plan.algorithm());
  EXPECT_TRUE(contains(op.label(), "converted after " + std::to_string(expected) + " products")) << op.label();
  EXPECT_FALSE(op.reconsider(1 << 20, nullptr));  // one conversion a solve

  // Its products against the first plan's: two sums of the same <= 5 products in different orders differ by
  // at most 2 gamma_5 sum_j |a_ij x_j| (Higham, Accuracy and Stability, §3.1).
  std::vector<double> x(static_cast<std::size_t>(a.cols)), bound(static_cast<std::size_t>(a.rows), 0.0);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = std::sin(0.37 * double(j)) + 0.25;
  const double eps = std::numeric_limits<double>::epsilon(), gamma5 = 5 * eps / (1 - 5 * eps);
  for (std::int32_t i = 0; i < a.rows; ++i)
    for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      bound[i] += 2 * gamma5 * std::fabs(a.values[k] * x[static_cast<std::size_t>(a.col_idx[k])]);
  cuda::DeviceBuffer<double> dx{std::span<const double>(x)}, y1(static_cast<std::size_t>(a.rows)),
      y2(static_cast<std::size_t>(a.rows));
  plan.apply(1.0, dx.data(), 0.0, y1.data());
  op.apply(1.0, dx.data(), 0.0, y2.data(), nullptr);
  const std::vector<double> h1 = y1.to_host(), h2 = y2.to_host();
  for (std::size_t i = 0; i < h1.size(); ++i) ASSERT_LE(std::fabs(h1[i] - h2[i]), bound[i]) << "row " << i;
}

TEST(CudaConvertingOperator, SmallMatricesAndOtherPlansNeverConvert) {
  SKIP_WITHOUT_CUDA();
  const auto small = convert<double, std::int32_t>(gen::poisson2d(60));  // 18 k nonzeros: Auto's small class
  const cuda::DeviceCsr<double, std::int32_t> csr(small);
  cuda::Plan<double, std::int32_t> plan(csr.view());
  Op op(csr.view(), plan, Options{});
  for (std::int64_t applies = 0; applies <= (1 << 20); applies = applies * 2 + 1) EXPECT_FALSE(op.reconsider(applies, nullptr));
  EXPECT_EQ(op.label(), algorithm_label(plan.algorithm(), plan.policy()));
  // Wanted only for Auto without the hint, native values and no reordering.
  Options o;
  EXPECT_TRUE(converts_during_solve(Algorithm::Auto, o));
  EXPECT_FALSE(converts_during_solve(Algorithm::CsrVector, o));
  o.expected_applies = 10;
  EXPECT_FALSE(converts_during_solve(Algorithm::Auto, o));
  o = Options{};
  o.reorder = Reorder::Rcm;
  EXPECT_FALSE(converts_during_solve(Algorithm::Auto, o));
  o = Options{};
  o.values = ValueStorage::F16;
  EXPECT_FALSE(converts_during_solve(Algorithm::Auto, o));
}

// CG, BiCGStab and GMRES through solve_csr on the 250,000-row Laplacian: Auto converts during the solve
// (reported in the algorithm), and the solve converges in the iterations of the same solve with the fixed
// plan (iteration_slack: the conversion changes only the products' rounding); with the caller's hint or a
// named algorithm nothing converts.
TEST(CudaConvertingOperator, SolvesConvertDuringTheSolveAndConvergeAsWithTheFixedPlan) {
  SKIP_WITHOUT_CUDA();
  const auto a = convert<double, std::int32_t>(gen::poisson2d(500));
  const auto b64 = random_rhs(a.rows, 21);
  const std::vector<double> b(b64.begin(), b64.end());
  for (SolverMethod method : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    SCOPED_TRACE(std::string(to_string(method)));
    SolverOptions o;
    o.method = method;
    o.tolerance = method == SolverMethod::Gmres ? 1e-4 : 1e-7;  // restarted GMRES(30) is slow on a Laplacian
    o.max_iterations = 5000;
    std::vector<double> x_auto(b.size(), 0.0), x_fixed(b.size(), 0.0), x_hint(b.size(), 0.0);
    const SolverResult converting = solve_csr<double, std::int32_t>(Backend::Cuda, a, Algorithm::Auto, Options{},
                                                                    b, x_auto, o);
    EXPECT_TRUE(contains(converting.algorithm, "converted after")) << converting.algorithm;
    // The fixed plan: Auto's plain choice, named.
    const cuda::DeviceCsr<double, std::int32_t> csr(a);
    const Algorithm plain = cuda::Plan<double, std::int32_t>(csr.view()).algorithm();
    const SolverResult fixed = solve_csr<double, std::int32_t>(Backend::Cuda, a, plain, Options{}, b, x_fixed, o);
    EXPECT_FALSE(contains(fixed.algorithm, "converted")) << fixed.algorithm;
    ASSERT_EQ(converting.converged, fixed.converged) << converting.breakdown;
    EXPECT_NEAR(converting.iterations, fixed.iterations, iteration_slack(fixed.iterations));
    EXPECT_LE(converting.residual, 10 * o.tolerance);
    Options hinted;
    hinted.expected_applies = 3;  // the caller's own forecast stands
    const SolverResult with_hint = solve_csr<double, std::int32_t>(Backend::Cuda, a, Algorithm::Auto, hinted, b, x_hint, o);
    EXPECT_FALSE(contains(with_hint.algorithm, "converted")) << with_hint.algorithm;
  }
}

// The graph path re-captures after the conversion at the same iteration as the stream path converts: the
// same solve bit for bit.
TEST(CudaConvertingOperator, GraphCaptureAcrossTheConversionGivesTheSameSolve) {
  SKIP_WITHOUT_CUDA();
  const SolverMatrix a = gen::poisson2d(500);
  const auto b = random_rhs(a.rows, 5);
  for (bool bicgstab : {false, true}) {
    SCOPED_TRACE(bicgstab ? "bicgstab" : "cg");
    SolverOptions o;
    o.method = bicgstab ? SolverMethod::BiCgStab : SolverMethod::Cg;
    o.tolerance = 1e-8;
    o.max_iterations = 400;
    o.record_history = true;
    const FusionRun stream = run_cg<double>(Backend::Cuda, a, b, o);
    o.graph = true;
    const FusionRun graph = run_cg<double>(Backend::Cuda, a, b, o);
    EXPECT_TRUE(contains(stream.result.algorithm, "converted after")) << stream.result.algorithm;
    EXPECT_EQ(graph.result.algorithm, stream.result.algorithm);
    EXPECT_EQ(graph.result.iterations, stream.result.iterations);
    EXPECT_EQ(graph.x, stream.x);
    EXPECT_EQ(graph.result.history, stream.result.history);
  }
}

}  // namespace
}  // namespace spmv::test
