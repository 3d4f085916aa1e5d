// ConvertingOperator (include/spmv/solvers.hpp), the CPU twin of tests/cuda/cuda_converting_operator_test.cpp:
// Auto's operator without the hint converts the matrix during a solve at the first check (16, 32, 64, ...
// products) where Auto with that many products as its hint chooses another algorithm; its products after the
// conversion agree with the first operator's within the rounding bound; solves through solve_csr report the
// conversion and converge as with the fixed operator; a caller's hint, another algorithm, reordering, half
// values or a matrix without nonzeros never convert.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/solver_problems.hpp"
#include "spmv/operator.hpp"
#include "spmv/solvers.hpp"

namespace spmv::test {
namespace {

using Converting = ConvertingOperator<double, std::int32_t>;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Deterministic and two threads: the CPU rule then measures nothing and weighs the same thread count on any
// host (on 16 threads merge-parallel is fast enough that DIA does not repay itself on these matrices).
Options deterministic() {
  Options o;
  o.deterministic = true;
  o.threads = 2;
  return o;
}

// The first check at which Auto with that hint chooses another algorithm than without it, or 0 up to `limit`.
std::int64_t first_converting_check(const CsrMatrix<double, std::int32_t>& a, std::int64_t limit) {
  const auto plain = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose, deterministic());
  for (std::int64_t n = ConversionChecks::kFirstCheck; n <= limit; n *= 2) {
    Options hinted = deterministic();
    hinted.expected_applies = n;
    if (make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose, hinted)->algorithm() != plain->algorithm())
      return n;
  }
  return 0;
}

TEST(ConvertingOperator, ConvertsAtTheFirstCheckWhereAutoWithTheHintDiffers) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(300));  // 90,000 rows, 449,400 nonzeros
  const std::int64_t expected = first_converting_check(a, 1 << 16);
  ASSERT_GT(expected, 0) << "the CPU rule no longer converts this matrix: pick another";
  const auto first = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose, deterministic());
  Converting op(a, *first, deterministic());
  EXPECT_FALSE(op.reconsider(ConversionChecks::kFirstCheck - 1));
  std::int64_t converted = 0;
  for (std::int64_t applies = 0; applies <= expected && !converted; ++applies)
    if (op.reconsider(applies)) converted = applies;
  EXPECT_EQ(converted, expected);
  EXPECT_EQ(op.converted_after(), expected);
  EXPECT_NE(op.current().algorithm(), first->algorithm());
  EXPECT_TRUE(contains(op.label(), "converted after " + std::to_string(expected) + " products")) << op.label();
  EXPECT_FALSE(op.reconsider(1 << 20));  // one conversion a solve

  // Its products against the first operator's: two sums of the same <= 5 products in different orders differ
  // by at most 2 gamma_5 sum_j |a_ij x_j| (Higham, Accuracy and Stability, §3.1).
  std::vector<double> x(static_cast<std::size_t>(a.cols)), y1(static_cast<std::size_t>(a.rows)), y2(y1.size());
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = std::sin(0.37 * double(j)) + 0.25;
  first->apply(1.0, x, 0.0, y1);
  op.apply(1.0, x, 0.0, y2);
  const double eps = std::numeric_limits<double>::epsilon(), gamma5 = 5 * eps / (1 - 5 * eps);
  for (std::int32_t i = 0; i < a.rows; ++i) {
    double bound = 0;
    for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      bound += 2 * gamma5 * std::fabs(a.values[k] * x[static_cast<std::size_t>(a.col_idx[k])]);
    ASSERT_LE(std::fabs(y1[i] - y2[i]), bound) << "row " << i;
  }
}

TEST(ConvertingOperator, EmptyMatricesAndOtherOperatorsNeverConvert) {
  // The CPU rule has no size floor (a 1,920-nonzero stencil converts to DIA after 63 products), so the
  // matrix that never converts is one without nonzeros: its operator runs no kernel.
  CsrMatrix<double, std::int32_t> empty;
  empty.rows = empty.cols = 1000;
  empty.row_ptr.assign(1001, 0);
  const auto first = make_cpu_operator(empty, Algorithm::Auto, Operation::NonTranspose, deterministic());
  Converting op(empty, *first, deterministic());
  for (std::int64_t applies = 0; applies <= (1 << 20); applies = applies * 2 + 1) EXPECT_FALSE(op.reconsider(applies));
  EXPECT_EQ(op.label(), algorithm_label(first->algorithm(), first->policy()));
  Options o;
  EXPECT_TRUE(converts_during_solve(Algorithm::Auto, o));
  EXPECT_FALSE(converts_during_solve(Algorithm::MergeParallel, o));
  EXPECT_FALSE(converts_during_solve(Algorithm::Tune, o));
  o.expected_applies = 10;
  EXPECT_FALSE(converts_during_solve(Algorithm::Auto, o));
  o = Options{};
  o.reorder = Reorder::Rcm;
  EXPECT_FALSE(converts_during_solve(Algorithm::Auto, o));
  o = Options{};
  o.values = ValueStorage::F16;
  EXPECT_FALSE(converts_during_solve(Algorithm::Auto, o));
}

// CG, BiCGStab and GMRES through solve_csr: Auto converts during the solve (reported in the algorithm) and
// the solve converges as on the fixed operator: CG and GMRES within iteration_slack (the conversion changes
// only the products' rounding), BiCGStab, whose residual is not monotone, within 10% + 3 (its count moved by
// 7% here, 580 against 542); with the caller's hint nothing converts during the solve.
TEST(ConvertingOperator, SolvesConvertDuringTheSolveAndConvergeAsWithTheFixedOperator) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(300));
  const auto b = random_rhs(a.rows, 21);
  const Algorithm plain = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose, deterministic())->algorithm();
  for (SolverMethod method : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres}) {
    SCOPED_TRACE(std::string(to_string(method)));
    SolverOptions o;
    o.method = method;
    o.tolerance = method == SolverMethod::Gmres ? 1e-4 : 1e-7;  // restarted GMRES(30) is slow on a Laplacian
    o.max_iterations = 3000;
    std::vector<double> x_auto(b.size(), 0.0), x_fixed(b.size(), 0.0), x_hint(b.size(), 0.0);
    const SolverResult converting =
        solve_csr<double, std::int32_t>(Backend::Cpu, a, Algorithm::Auto, deterministic(), b, x_auto, o);
    EXPECT_TRUE(contains(converting.algorithm, "converted after")) << converting.algorithm;
    const SolverResult fixed = solve_csr<double, std::int32_t>(Backend::Cpu, a, plain, deterministic(), b, x_fixed, o);
    EXPECT_FALSE(contains(fixed.algorithm, "converted")) << fixed.algorithm;
    ASSERT_EQ(converting.converged, fixed.converged) << converting.breakdown;
    EXPECT_NEAR(converting.iterations, fixed.iterations,
                method == SolverMethod::BiCgStab ? 3 + fixed.iterations / 10 : iteration_slack(fixed.iterations));
    EXPECT_LE(converting.residual, 10 * o.tolerance);
    Options hinted = deterministic();
    hinted.expected_applies = 3;  // the caller's own forecast stands
    const SolverResult with_hint = solve_csr<double, std::int32_t>(Backend::Cpu, a, Algorithm::Auto, hinted, b, x_hint, o);
    EXPECT_FALSE(contains(with_hint.algorithm, "converted")) << with_hint.algorithm;
  }
}

}  // namespace
}  // namespace spmv::test
