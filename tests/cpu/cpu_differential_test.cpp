// The CPU backend under the shared differential sweep, plus the tests that show the sweep can fail
// and exact (integer) checks of the parallel algorithms' splitting logic at many thread counts.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "common/determinism.hpp"
#include "common/differential.hpp"
#include "common/error_bound.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"

SPMV_DIFFERENTIAL_TESTS(Cpu, spmv::Backend::Cpu);

namespace spmv::test {
namespace {

// ---- Options::deterministic (tests/common/determinism.hpp) ----------------------------------------

TEST(CpuDeterministic, EveryAlgorithmRefusesOrRepeatsItsBits) { check_deterministic_mode(Backend::Cpu); }
TEST(CpuDeterministic, AutoPicksAReproducibleAlgorithmN) { check_deterministic_auto(Backend::Cpu, Operation::NonTranspose); }
TEST(CpuDeterministic, AutoPicksAReproducibleAlgorithmT) { check_deterministic_auto(Backend::Cpu, Operation::Transpose); }
TEST(CpuDeterministic, TuneRefuses) {
  Options options;
  options.deterministic = true;
  const auto a = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  EXPECT_THROW(make_operator(Backend::Cpu, a, Algorithm::Tune, Operation::NonTranspose, options), Unsupported);
}

// ---- The checker rejects wrong kernels -----------------------------------------------------------

enum class Fault { OffByUlps, Nan, ReadsYWhenBetaIsZero, ReadsXWhenAlphaIsZero };

// A correct operator with one injected fault, to prove check_operator can fail.
template <class Value, class Index>
class FaultyOperator final : public Operator<Value, Index> {
 public:
  FaultyOperator(std::unique_ptr<Operator<Value, Index>> inner, Fault fault, int ulps = 0)
      : inner_(std::move(inner)), fault_(fault), ulps_(ulps) {}
  Backend backend() const override { return inner_->backend(); }
  Algorithm algorithm() const override { return inner_->algorithm(); }
  Operation operation() const override { return inner_->operation(); }
  std::string policy() const override { return "faulty " + inner_->policy(); }
  double setup_ms() const override { return inner_->setup_ms(); }
  std::size_t extra_bytes() const override { return inner_->extra_bytes(); }
  std::int64_t rows() const override { return inner_->rows(); }
  std::int64_t cols() const override { return inner_->cols(); }
  Timing time(Value, std::span<const Value>, Value, std::span<Value>, const TimingOptions&) override { return {}; }

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    const std::vector<Value> y0(y.begin(), y.end());
    inner_->apply(alpha, x, beta, y);
    if (y.empty()) return;
    // The row with the largest |y|: where a relative error is least hidden by cancellation.
    std::size_t row = 0;
    for (std::size_t i = 1; i < y.size(); ++i)
      if (std::abs(y[i]) > std::abs(y[row])) row = i;
    switch (fault_) {
      case Fault::OffByUlps:
        for (int k = 0; k < ulps_; ++k) y[row] = std::nextafter(y[row], std::numeric_limits<Value>::infinity());
        break;
      case Fault::Nan:
        y[row] = std::numeric_limits<Value>::quiet_NaN();
        break;
      case Fault::ReadsYWhenBetaIsZero:  // the classic bug: alpha*s + beta*y even when beta == 0
        if (beta == 0)
          for (std::size_t i = 0; i < y.size(); ++i) y[i] += beta * y0[i];
        break;
      case Fault::ReadsXWhenAlphaIsZero:  // issue 20: 0 * sum(a*x) + beta*y lets NaN/Inf in x through
        if (alpha == 0) {
          Value sum = 0;
          for (Value v : x) sum += v;
          y[row] += alpha * sum;
        }
        break;
    }
  }

 private:
  std::unique_ptr<Operator<Value, Index>> inner_;
  Fault fault_;
  int ulps_;
};

template <class Value>
OperatorCheck check_faulty(Fault fault, int ulps, Operation op) {
  const auto a = convert<Value, std::int32_t>(gen::poisson2d(20));
  FaultyOperator<Value, std::int32_t> faulty(make_cpu_operator(a, Algorithm::RowLoop, op), fault, ulps);
  return check_operator(faulty, a, 12345);
}

TEST(DifferentialChecker, RejectsOneRowOffByThousandUlps) {
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const auto f = check_faulty<float>(Fault::OffByUlps, 1000, op);
    const auto d = check_faulty<double>(Fault::OffByUlps, 1000, op);
    // 12 of the 16 pairs have alpha != 0 or beta != 0 with a nonzero row... every pair whose output
    // is not identically zero must be caught; alpha = beta = 0 gives y = 0, where nextafter moves by
    // a subnormal step that the absolute underflow term allows.
    EXPECT_GE(f.failures.size(), 12u) << "float";
    EXPECT_GE(d.failures.size(), 12u) << "double";
    EXPECT_GT(f.worst_ratio, 10.0);
    EXPECT_GT(d.worst_ratio, 10.0);
  }
}

TEST(DifferentialChecker, AcceptsOneUlp) {
  // The bound is not so tight that a correctly rounded neighbour fails.
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    EXPECT_TRUE(check_faulty<float>(Fault::OffByUlps, 1, op).failures.empty());
    EXPECT_TRUE(check_faulty<double>(Fault::OffByUlps, 1, op).failures.empty());
  }
}

TEST(DifferentialChecker, RejectsNan) {
  const auto check = check_faulty<double>(Fault::Nan, 0, Operation::NonTranspose);
  EXPECT_EQ(check.failures.size(), 20u);  // the 16 pairs and the 4 alpha = 0 products with NaN/Inf in x
  EXPECT_TRUE(std::isinf(check.worst_ratio));
}

TEST(DifferentialChecker, RejectsReadingYWhenBetaIsZero) {
  const auto check = check_faulty<float>(Fault::ReadsYWhenBetaIsZero, 0, Operation::Transpose);
  EXPECT_EQ(check.failures.size(), 5u);  // the pairs with beta == 0, where y holds NaN (one has NaN x)
}

TEST(DifferentialChecker, RejectsReadingXWhenAlphaIsZero) {
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const auto check = check_faulty<double>(Fault::ReadsXWhenAlphaIsZero, 0, op);
    // The 4 products with NaN/Inf in x; the 4 alpha = 0 pairs of finite x pass (0 * finite sum).
    EXPECT_EQ(check.failures.size(), 4u);
  }
}

TEST(DifferentialChecker, WorstRowIsTheFaultyRow) {
  const std::vector<double> y_ref{1.0, 2.0, -3.0};
  const std::vector<float> y0{0.f, 0.f, 0.f};
  const std::vector<double> magnitude{1.0, 2.0, 3.0};
  const std::vector<std::int64_t> lengths{1, 1, 1};
  std::vector<float> y{1.f, 2.f, -3.f};
  EXPECT_TRUE(check_error_bound<float>(y, y_ref, y0, magnitude, lengths, 1.0, 0.0).passed());
  y[1] = std::nextafter(2.f, 3.f);  // 1 ulp: inside c(1) = 6 eps
  EXPECT_TRUE(check_error_bound<float>(y, y_ref, y0, magnitude, lengths, 1.0, 0.0).passed());
  y[1] = 2.f * (1 + 16 * std::numeric_limits<float>::epsilon());  // 32 ulps over 2: outside 6 eps * 2
  const auto report = check_error_bound<float>(y, y_ref, y0, magnitude, lengths, 1.0, 0.0);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.worst_row, 1);
  EXPECT_EQ(report.rows_over, 1u);
  // beta == 0: the NaN in y0 must not enter the bound.
  const std::vector<float> nan_y0(3, std::numeric_limits<float>::quiet_NaN());
  y[1] = 2.f;
  EXPECT_TRUE(check_error_bound<float>(y, y_ref, nan_y0, magnitude, lengths, 1.0, 0.0).passed());
}

// ---- Exact checks of the splitting logic ---------------------------------------------------------

// Small integer values, x and y: every partial sum is an integer below 2^24, so every summation
// order gives the exact result in float and double, and == is the right comparison here.
template <class Value, class Index>
CsrMatrix<Value, Index> integer_valued(const ZooMatrix& m, std::uint64_t seed) {
  auto a = convert<Value, Index>(m);
  SplitMix64 rng(seed);
  for (auto& v : a.values) v = static_cast<Value>(static_cast<int>(rng.below(17)) - 8);
  return a;
}

template <class Value>
std::vector<Value> integer_vector(std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Value> v(n);
  for (auto& e : v) e = static_cast<Value>(static_cast<int>(rng.below(9)) - 4);
  return v;
}

template <class Value, class Index, class Apply>
void expect_exact(const CsrMatrix<Value, Index>& a, Operation op, Apply&& apply, const std::string& what) {
  const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
  const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  for (Value alpha : {Value(0), Value(1), Value(-1), Value(2)})
    for (Value beta : {Value(0), Value(1), Value(-2)}) {
      const auto x = integer_vector<Value>(nx, 7);
      auto y0 = integer_vector<Value>(ny, 8);
      if (beta == 0) std::fill(y0.begin(), y0.end(), std::numeric_limits<Value>::quiet_NaN());
      auto want = y0;
      cpu::reference<Value, Index>(a, op, alpha, x, beta, want);
      auto got = y0;
      apply(alpha, std::span<const Value>(x), beta, std::span<Value>(got));
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < ny; ++i)
        if (!(got[i] == want[i]) && wrong++ == 0) first = i;
      EXPECT_EQ(wrong, 0u) << what << " op " << to_string(op) << " alpha " << alpha << " beta " << beta
                           << ": first wrong entry " << first << " got " << got[first] << " want " << want[first];
    }
}

const std::vector<std::string>& split_stress_matrices() {
  static const std::vector<std::string> names{"huge_row", "empty_rows", "one_row", "one_column", "tall_5000x37",
                                              "power_law_rmat12", "empty_0x7", "empty_7x0", "no_nonzeros_5x6",
                                              "tiny_unsorted_duplicates", "unsorted_columns", "simd_lengths"};
  return names;
}

// Thread counts beyond the 2 cores of CI are included for the split logic (more segments than
// rows, segments inside one row); they are kept small because oversubscribed OpenMP barriers spin.
TEST(MergeParallelExact, AnyThreadCount) {
  for (const auto& name : split_stress_matrices()) {
    const auto a = integer_valued<float, std::int32_t>(zoo_matrix(name), 1);
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (int threads : {1, 2, 3, 5, 8})
        for (int simd : {0, 1}) {  // the scalar loops and the SIMD row kernels (same sums: integers)
          cpu::MergeParallelPlan<float, std::int32_t> plan(a, op, threads, simd);
          expect_exact(a, op, [&](auto alpha, auto x, auto beta, auto y) { plan.apply(alpha, x, beta, y); },
                       "merge-parallel threads=" + std::to_string(threads) + " simd=" + std::to_string(simd) +
                           " on " + name);
        }
  }
}

// Products of at least 4 * 8192 merge-path steps a thread are cut into four segments a thread, which the
// threads take in turn (a held-back thread leaves its later ones to the others); the sums stay exact and
// the fix-up in segment order makes the result independent of which thread ran which segment.
TEST(MergeParallelExact, FourSegmentsAThreadTakenInTurn) {
  const auto a = integer_valued<float, std::int32_t>(gen::random_uniform(20000, 20000, 8, 3), 1);
  for (int threads : {1, 2, 3}) {
    cpu::MergeParallelPlan<float, std::int32_t> plan(a, Operation::NonTranspose, threads, 1);
    EXPECT_NE(plan.policy().find("threads=" + std::to_string(threads) + " segments=" + std::to_string(4 * threads)),
              std::string::npos)
        << plan.policy();
    expect_exact(a, Operation::NonTranspose, [&](auto alpha, auto x, auto beta, auto y) { plan.apply(alpha, x, beta, y); },
                 "merge-parallel threads=" + std::to_string(threads));
  }
  // A^T keeps one segment (one private y) a thread.
  cpu::MergeParallelPlan<float, std::int32_t> transposed(a, Operation::Transpose, 2, 1);
  EXPECT_NE(transposed.policy().find("threads=2 segments=2 "), std::string::npos) << transposed.policy();
}

// Spans relative to the column count keep the number of chunks (and so the run time) bounded while
// still cutting every row into several pieces; span 1 is covered on the hand examples.
TEST(ColumnChunkedExact, AnySpanAndThreadCount) {
  for (const auto& name : split_stress_matrices()) {
    const auto a = integer_valued<double, std::int64_t>(zoo_matrix(name), 2);
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (int threads : {1, 3})
        for (std::int64_t span : {a.cols / 13 + 1, a.cols / 3 + 1, std::int64_t{0}}) {
          cpu::ColumnChunkedPlan<double, std::int64_t> plan(a, op, span, threads);
          expect_exact(a, op, [&](auto alpha, auto x, auto beta, auto y) { plan.apply(alpha, x, beta, y); },
                       "column-chunked threads=" + std::to_string(threads) + " span=" + std::to_string(span) +
                           " on " + name);
        }
  }
}

TEST(FreeFunctionsExact, MatchReference) {
  for (const auto& name : split_stress_matrices()) {
    const auto a = integer_valued<float, std::int64_t>(zoo_matrix(name), 3);
    const std::int64_t span = a.cols / 7 + 1;
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      expect_exact(a, op, [&](auto alpha, auto x, auto beta, auto y) { cpu::row_loop(a, op, alpha, x, beta, y); },
                   "row_loop on " + name);
      expect_exact(a, op,
                   [&](auto alpha, auto x, auto beta, auto y) { cpu::column_chunked(a, op, alpha, x, beta, y, span, 2); },
                   "column_chunked on " + name);
      expect_exact(a, op,
                   [&](auto alpha, auto x, auto beta, auto y) { cpu::merge_parallel(a, op, alpha, x, beta, y, 3); },
                   "merge_parallel on " + name);
    }
  }
}

// ---- Determinism ---------------------------------------------------------------------------------

TEST(CpuDeterminism, RepeatedProductsAreBitwiseEqual) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("power_law_rmat12"));
  for (Algorithm algorithm : {Algorithm::MergeParallel, Algorithm::ColumnChunked})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      Options options;
      options.threads = 4;
      options.column_span = 333;
      auto oper = make_cpu_operator(a, algorithm, op, options);
      const auto n = static_cast<std::size_t>(a.rows);
      std::vector<double> x(n), first(n), again(n);
      SplitMix64 rng(9);
      for (auto& v : x) v = rng.symmetric();
      oper->apply(1.0, x, 0.0, first);
      for (int rep = 0; rep < 5; ++rep) {
        oper->apply(1.0, x, 0.0, again);
        EXPECT_EQ(std::memcmp(first.data(), again.data(), n * sizeof(double)), 0)
            << to_string(algorithm) << " op " << to_string(op) << " repetition " << rep;
      }
    }
}

}  // namespace
}  // namespace spmv::test
