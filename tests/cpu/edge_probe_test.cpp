// Edge probes of the CPU backend's newer features, written as a demanding user would try them: the
// unusual paths where an earlier release gave silent wrong answers (alpha = 0 with NaN in x; one
// matrix used from several threads at once).
//  * SpMM (include/spmv/spmm.hpp), through SpmmPlan and both CPU SpmmOperator kernels (spmm and the
//    k-SpMV baseline): alpha, beta in {0, 1, -1, 2.5}, k = 0, 1, 7, 257, both layouts with NaN padding,
//    N and T, empty shapes and empty rows; alpha = 0 gives exactly beta*Y; a NaN in one entry of X
//    stays in its own column of Y; concurrent applies on one plan / operator.
//  * Semiring products (include/spmv/semiring.hpp): the identity on empty rows whatever x holds,
//    NaN/Inf in x against an independent reference written with std::fmin / std::fmax, length
//    mismatches refused before y is touched, Backend::Cuda without a device.
// Tolerances: tests/common/error_bound.hpp (c*eps*(|beta||y0| + |alpha| sum |a_ij x_j|), c = 2(n+2),
// Higham §3.1); everything else is exact (bits) because the operation involved rounds once or not at all.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/spmm_check.hpp"
#include "spmv/error.hpp"
#include "spmv/operator.hpp"
#include "spmv/semiring.hpp"
#include "spmv/spmm.hpp"

namespace spmv::test {
namespace {

constexpr double kProbeScalars[] = {0.0, 1.0, -1.0, 2.5};

// Matrices whose shapes are the unusual ones: empty rows (first, last, a run), 0 x n, n x 0, no
// nonzeros, one column, unsorted columns with duplicates and an explicit zero, and every row length
// 0..140 (each tile width's remainders).
constexpr const char* kProbeMatrices[] = {"tiny_unsorted_duplicates", "empty_rows", "empty_0x0", "empty_0x7",
                                          "empty_7x0", "no_nonzeros_5x6", "one_column", "simd_lengths"};

enum class Runner { Plan, SpmmOperatorSpmm, SpmmOperatorColumnSpmv };
constexpr Runner kRunners[] = {Runner::Plan, Runner::SpmmOperatorSpmm, Runner::SpmmOperatorColumnSpmv};

const char* runner_name(Runner r) {
  return r == Runner::Plan ? "SpmmPlan" : r == Runner::SpmmOperatorSpmm ? "SpmmOperator(spmm)" : "SpmmOperator(k-spmv)";
}

template <class Value, class Index>
Product<Value> make_product(Runner r, const CsrMatrix<Value, Index>& a, Operation op, int threads = 0) {
  if (r == Runner::Plan) {
    auto plan = std::make_shared<cpu::SpmmPlan<Value, Index>>(a, op, threads);
    return [plan](Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) { plan->apply(alpha, x, beta, y); };
  }
  Options options;
  options.threads = threads;
  std::shared_ptr<SpmmOperator<Value, Index>> oper = make_spmm_operator(
      Backend::Cpu, a, op, r == Runner::SpmmOperatorSpmm ? SpmmKernel::Spmm : SpmmKernel::ColumnSpmv, options);
  return [oper](Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) { oper->apply(alpha, x, beta, y); };
}

// Every (alpha, beta) of kProbeScalars x k in {0, 1, 7} x both layouts (leading dimension 3 past the
// contiguous extent, the padding NaN: check_spmm_case verifies it is never written and, being NaN,
// would show in Y if read), NaN/Inf everywhere in X when alpha == 0, Y NaN when beta == 0; then k = 257
// (one past a multiple of every tile width) for two scalar pairs.
std::vector<SpmmCase> scalar_sweep_cases() {
  std::vector<SpmmCase> cases;
  for (double alpha : kProbeScalars)
    for (double beta : kProbeScalars)
      for (std::int64_t k : {0, 1, 7})
        for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
          cases.push_back({k, layout, 3, alpha, beta, alpha == 0.0, k == 7 && layout == Layout::ColMajor});
  for (Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
    cases.push_back({257, layout, 5, 2.5, -1.0, false});
    cases.push_back({257, layout, 0, -1.0, 0.0, false});
    cases.push_back({257, layout, 1, 0.0, 2.5, true});
  }
  return cases;
}

template <class Value, class Index>
void run_scalar_sweep() {
  const auto cases = scalar_sweep_cases();
  for (const char* name : kProbeMatrices) {
    const auto a = convert<Value, Index>(zoo_matrix(name));
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (Runner r : kRunners) {
        const auto product = make_product(r, a, op);
        std::uint64_t seed = hash_name(name) + static_cast<std::uint64_t>(op);
        int failures = 0;
        for (const SpmmCase& c : cases) {
          const std::string failure = check_spmm_case<Value, Index>(a, op, c, product, ++seed);
          if (!failure.empty() && failures++ < 3)
            ADD_FAILURE() << name << " " << to_string(op) << " " << runner_name(r) << ": " << failure;
        }
      }
  }
}

TEST(EdgeProbeSpmm, ScalarSweepOnUnusualShapesF64I32) { run_scalar_sweep<double, std::int32_t>(); }
TEST(EdgeProbeSpmm, ScalarSweepOnUnusualShapesF32I64) { run_scalar_sweep<float, std::int64_t>(); }

// alpha = 0 reads neither A nor X: with X all NaN/Inf (padding included), Y must be exactly beta*Y0
// (one rounding, the same in any implementation: compared bit for bit), +0 when beta == 0 even where
// Y0 was NaN, and Y's padding untouched.
template <class Value>
void check_alpha_zero(const char* name) {
  const auto a = convert<Value, std::int32_t>(zoo_matrix(name));
  constexpr Value kNaN = std::numeric_limits<Value>::quiet_NaN(), kInf = std::numeric_limits<Value>::infinity();
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (Runner r : kRunners) {
      const auto product = make_product(r, a, op);
      const std::int64_t n_in = op == Operation::NonTranspose ? a.cols : a.rows;
      const std::int64_t n_out = op == Operation::NonTranspose ? a.rows : a.cols;
      for (std::int64_t k : {1, 5, 257})
        for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
          for (double beta : kProbeScalars) {
            DenseStorage<Value> x(n_in, k, layout, 2), y(n_out, k, layout, 2);
            for (std::size_t p = 0; p < x.data.size(); ++p) x.data[p] = p % 3 == 0 ? kNaN : (p % 3 == 1 ? kInf : -kInf);
            SplitMix64 rng(static_cast<std::uint64_t>(k) * 7 + static_cast<std::uint64_t>(beta * 4 + 8));
            for (std::int64_t i = 0; i < n_out; ++i)
              for (std::int64_t j = 0; j < k; ++j)
                y.view(i, j) = (i + j) % 17 == 3 ? kNaN : static_cast<Value>(rng.symmetric() * 1e3);
            const std::vector<Value> y0 = y.data;
            const auto b = static_cast<Value>(beta);
            product(Value(0), DenseView<const Value>(x.view), b, y.view);
            std::vector<Value> want = y0;  // padding: unchanged
            for (std::int64_t i = 0; i < n_out; ++i)
              for (std::int64_t j = 0; j < k; ++j) {
                const auto o = static_cast<std::size_t>(y.view.offset(i, j));
                want[o] = beta == 0.0 ? Value(0) : b * y0[o];
              }
            for (std::size_t p = 0; p < want.size(); ++p)
              if (std::memcmp(&want[p], &y.data[p], sizeof(Value)) != 0) {
                ADD_FAILURE() << name << " " << to_string(op) << " " << runner_name(r) << " k=" << k << " "
                              << to_string(layout) << " beta=" << beta << ": offset " << p << " is " << y.data[p]
                              << ", beta*y0 is " << want[p];
                break;
              }
          }
    }
}

TEST(EdgeProbeSpmm, AlphaZeroIsExactlyBetaY) {
  check_alpha_zero<double>("simd_lengths");
  check_alpha_zero<float>("empty_rows");
  check_alpha_zero<double>("empty_7x0");
}

// One NaN in X, at (r0, c): with alpha != 0 it may reach only column c of Y, and there exactly the
// outputs whose row of op(A) stores an entry in column r0 (0 * NaN is NaN, so explicit zeros count).
// Every other entry is finite and within the error bound. A tile loop that mixed columns (a vector
// lane read past the tile, a gather with the wrong stride) would spread the NaN.
template <class Value, class Index>
void check_nan_stays_in_its_column(const char* name) {
  const auto a = convert<Value, Index>(zoo_matrix(name));
  const auto a_ref = convert<double, std::int64_t>(a);
  constexpr Value kNaN = std::numeric_limits<Value>::quiet_NaN();
  const std::int64_t k = 37;  // tiles 32 + 4 + 1 (f32) or 16 + 16 + 4 + 1 (f64)
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const std::int64_t n_in = op == Operation::NonTranspose ? a.cols : a.rows;
    const std::int64_t n_out = op == Operation::NonTranspose ? a.rows : a.cols;
    const auto lengths = output_row_lengths(a, op);
    for (Runner r : kRunners) {
      const auto product = make_product(r, a, op);
      for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
        for (std::int64_t c : {std::int64_t{0}, std::int64_t{5}, std::int64_t{16}, k - 1}) {
          const std::int64_t r0 = (c * 131 + 7) % n_in;
          DenseStorage<Value> x(n_in, k, layout, 3), y(n_out, k, layout, 1);
          SplitMix64 rng(static_cast<std::uint64_t>(c) + 99);
          for (std::int64_t i = 0; i < n_in; ++i)
            for (std::int64_t j = 0; j < k; ++j) x.view(i, j) = static_cast<Value>(rng.symmetric());
          for (std::int64_t i = 0; i < n_out; ++i)
            for (std::int64_t j = 0; j < k; ++j) y.view(i, j) = static_cast<Value>(rng.symmetric());
          x.view(r0, c) = kNaN;
          const std::vector<Value> y0 = y.data;
          const DenseView<const Value> y0_view{y0.data(), y.view.rows, y.view.cols, y.view.ld, y.view.layout};
          const double alpha = -2.5, beta = 0.5;
          product(static_cast<Value>(alpha), DenseView<const Value>(x.view), static_cast<Value>(beta), y.view);
          // Which outputs touch X's row r0, and the double reference with magnitudes, per column.
          std::vector<bool> touches(static_cast<std::size_t>(n_out), false);
          for (std::int64_t i = 0; i < a_ref.rows; ++i)
            for (std::int64_t p = a_ref.row_ptr[i]; p < a_ref.row_ptr[i + 1]; ++p) {
              const std::int64_t out = op == Operation::NonTranspose ? i : a_ref.col_idx[p];
              const std::int64_t in = op == Operation::NonTranspose ? a_ref.col_idx[p] : i;
              if (in == r0) touches[static_cast<std::size_t>(out)] = true;
            }
          int failures = 0;
          for (std::int64_t j = 0; j < k && failures == 0; ++j) {
            std::vector<double> ref(static_cast<std::size_t>(n_out)), mag(static_cast<std::size_t>(n_out), 0.0);
            for (std::int64_t i = 0; i < n_out; ++i) ref[i] = beta * static_cast<double>(y0_view(i, j));
            for (std::int64_t i = 0; i < a_ref.rows; ++i)
              for (std::int64_t p = a_ref.row_ptr[i]; p < a_ref.row_ptr[i + 1]; ++p) {
                const std::int64_t out = op == Operation::NonTranspose ? i : a_ref.col_idx[p];
                const std::int64_t in = op == Operation::NonTranspose ? a_ref.col_idx[p] : i;
                const double term = a_ref.values[p] * static_cast<double>(x.view(in, j));
                ref[out] += alpha * term;
                mag[out] += std::abs(term);
              }
            for (std::int64_t i = 0; i < n_out; ++i) {
              const double got = static_cast<double>(y.view(i, j));
              const bool want_nan = j == c && touches[static_cast<std::size_t>(i)];
              const double bound = bound_factor(lengths[i]) * std::numeric_limits<Value>::epsilon() *
                                       (std::abs(beta * static_cast<double>(y0_view(i, j))) + std::abs(alpha) * mag[i]) +
                                   bound_factor(lengths[i]) * std::numeric_limits<Value>::min();
              const bool ok = want_nan ? std::isnan(got) : (!std::isnan(got) && std::abs(got - ref[i]) <= bound);
              if (!ok) {
                ADD_FAILURE() << name << " " << to_string(op) << " " << runner_name(r) << " " << to_string(layout)
                              << ", NaN at X(" << r0 << ", " << c << "): Y(" << i << ", " << j << ") = " << got
                              << ", expected " << (want_nan ? "NaN" : std::to_string(ref[i])) << " (bound " << bound
                              << ")";
                ++failures;
                break;
              }
            }
          }
        }
    }
  }
}

TEST(EdgeProbeSpmm, NanInOneEntryOfXStaysInItsColumn) {
  check_nan_stays_in_its_column<double, std::int32_t>("simd_lengths");
  check_nan_stays_in_its_column<float, std::int64_t>("tiny_unsorted_duplicates");
  check_nan_stays_in_its_column<float, std::int32_t>("explicit_zeros");
}

// Empty rows of op(A) with X all +Inf: alpha*(empty sum) + beta*y0 = beta*y0 exactly (alpha*0 = 0, one
// rounding for beta*y0), never NaN from Inf*0.
TEST(EdgeProbeSpmm, EmptyRowsWithInfiniteXKeepBetaY) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("empty_rows"));
  const auto lengths = output_row_lengths(a, Operation::NonTranspose);
  const std::int64_t k = 9;
  for (Runner r : kRunners)
    for (Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
      DenseStorage<double> x(a.cols, k, layout, 0), y(a.rows, k, layout, 0);
      for (std::int64_t i = 0; i < a.cols; ++i)
        for (std::int64_t j = 0; j < k; ++j) x.view(i, j) = std::numeric_limits<double>::infinity();
      for (std::int64_t i = 0; i < a.rows; ++i)
        for (std::int64_t j = 0; j < k; ++j) y.view(i, j) = static_cast<double>(i * k + j) / 8.0 - 3.0;
      const std::vector<double> y0 = y.data;
      make_product(r, a, Operation::NonTranspose)(2.5, DenseView<const double>(x.view), -1.0, y.view);
      std::int64_t empty_rows = 0;
      for (std::int64_t i = 0; i < a.rows; ++i) {
        if (lengths[i] != 0) continue;
        ++empty_rows;
        for (std::int64_t j = 0; j < k; ++j)
          EXPECT_EQ(y.view(i, j), -y0[static_cast<std::size_t>(y.view.offset(i, j))])
              << runner_name(r) << " " << to_string(layout) << " row " << i << " column " << j;
      }
      EXPECT_GT(empty_rows, 10);
    }
}

// Null data pointers are allowed for views without entries: k = 0, and X of a matrix with no
// columns. Y = beta*Y for the latter (the empty sum), not a crash and not NaN from an unread Y.
TEST(EdgeProbeSpmm, EmptyViewsWithNullPointers) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("empty_7x0"));
  for (Runner r : kRunners)
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      const auto product = make_product(r, a, op);
      const std::int64_t n_in = op == Operation::NonTranspose ? 0 : 7;
      const std::int64_t n_out = op == Operation::NonTranspose ? 7 : 0;
      EXPECT_NO_THROW(product(1.0, {nullptr, n_in, 0, 1, Layout::RowMajor}, 0.0, {nullptr, n_out, 0, 1, Layout::RowMajor}))
          << runner_name(r);
      if (op == Operation::NonTranspose) {
        std::vector<double> y(7 * 3, std::numeric_limits<double>::quiet_NaN());
        product(1.0, {nullptr, 0, 3, 3, Layout::RowMajor}, 0.0, row_major(y.data(), 7, 3));
        for (double v : y) EXPECT_EQ(v, 0.0) << runner_name(r);
        std::fill(y.begin(), y.end(), 2.0);
        product(1.0, {nullptr, 0, 3, 7, Layout::ColMajor}, 2.5, col_major(y.data(), 7, 3));
        for (double v : y) EXPECT_EQ(v, 5.0) << runner_name(r);
      } else {
        std::vector<double> x(7 * 3, 1.0);
        EXPECT_NO_THROW(product(1.0, row_major<const double>(x.data(), 7, 3), 0.0, {nullptr, 0, 3, 3, Layout::RowMajor}))
            << runner_name(r);
      }
    }
}

// Several threads at once on one plan / one operator, each with its own (alpha, beta, k, layout) and
// its own Y, one of them alpha = 0 with X all NaN: every result equals, bit for bit, what the same
// object computes alone (every CPU SpMM output is summed by one thread in row order). The plan uses
// 2 OpenMP threads, so the products nest parallel regions inside std::threads.
TEST(EdgeProbeSpmm, ConcurrentAppliesOnOneObject) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("power_law_rmat12"));
  struct Job {
    double alpha, beta;
    std::int64_t k;
    Layout layout;
    bool nan_x;
  };
  const Job jobs[] = {{1.0, 0.0, 8, Layout::RowMajor, false},
                      {-1.0, 2.5, 5, Layout::ColMajor, false},
                      {0.0, -1.0, 7, Layout::RowMajor, true},
                      {2.5, 1.0, 33, Layout::ColMajor, false}};
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (Runner r : kRunners) {
      const auto product = make_product(r, a, op, 2);
      const std::int64_t n = a.rows;  // square
      std::vector<DenseStorage<double>> xs, y0s, alone;
      xs.reserve(std::size(jobs)), y0s.reserve(std::size(jobs)), alone.reserve(std::size(jobs));  // views point into them
      for (const Job& job : jobs) {
        xs.emplace_back(n, job.k, job.layout, 1);
        y0s.emplace_back(n, job.k, job.layout, 1);
        SplitMix64 rng(static_cast<std::uint64_t>(job.k));
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < job.k; ++j) {
            xs.back().view(i, j) = job.nan_x ? std::numeric_limits<double>::quiet_NaN() : rng.symmetric();
            y0s.back().view(i, j) = rng.symmetric();
          }
        alone.push_back(y0s.back());
        alone.back().view.data = alone.back().data.data();
        product(job.alpha, DenseView<const double>(xs.back().view), job.beta, alone.back().view);
      }
      std::atomic<int> mismatches{0};
      std::vector<std::thread> threads;
      for (std::size_t t = 0; t < std::size(jobs); ++t)
        threads.emplace_back([&, t] {
          for (int rep = 0; rep < 6; ++rep) {
            DenseStorage<double> y = y0s[t];
            y.view.data = y.data.data();
            product(jobs[t].alpha, DenseView<const double>(xs[t].view), jobs[t].beta, y.view);
            if (std::memcmp(y.data.data(), alone[t].data.data(), y.data.size() * sizeof(double)) != 0) ++mismatches;
          }
        });
      for (auto& t : threads) t.join();
      EXPECT_EQ(mismatches.load(), 0) << to_string(op) << " " << runner_name(r);
    }
}

// ---- semirings ------------------------------------------------------------------------------------

constexpr Semiring kAllSemirings[] = {Semiring::PlusTimes, Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd,
                                      Semiring::MaxMin};

template <class Value>
std::vector<Value> awkward_x(std::int64_t n) {
  constexpr Value kNaN = std::numeric_limits<Value>::quiet_NaN(), kInf = std::numeric_limits<Value>::infinity();
  const Value pattern[] = {kNaN, kInf, -kInf, Value(0), Value(-0.0), Value(1.5), Value(-2), kNaN, Value(3)};
  std::vector<Value> x(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = pattern[j % std::size(pattern)];
  return x;
}

// An empty row gives the semiring's zero (its add's identity), bit for bit, whatever x holds, and
// every row is written (y poisoned first). Both overloads; 1 and 3 threads.
TEST(EdgeProbeSemiring, EmptyRowsGiveTheIdentityWhateverXHolds) {
  for (const char* name : {"empty_rows", "no_nonzeros_5x6", "empty_7x0", "tiny_3x4", "simd_lengths"}) {
    const auto a = convert<double, std::int64_t>(zoo_matrix(name));
    const auto x = awkward_x<double>(a.cols);
    for (Semiring s : kAllSemirings)
      for (int threads : {1, 3}) {
        std::vector<double> y(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
        Options options;
        options.threads = threads;
        semiring_multiply(Backend::Cpu, s, a, std::span<const double>(x), std::span(y), options);
        const double zero = semiring_zero<double>(s);
        for (std::int64_t i = 0; i < a.rows; ++i)
          if (a.row_ptr[i] == a.row_ptr[i + 1])
            EXPECT_EQ(std::memcmp(&y[i], &zero, sizeof zero), 0)
                << name << " " << to_string(s) << " threads=" << threads << " empty row " << i << ": " << y[i];
      }
  }
}

// The semiring's definition written independently of src/core/semiring_ops.hpp: std::fmin / std::fmax
// (NaN loses to any number, the identity included) folded from the identity in storage order.
template <class Value>
Value fold_reference(Semiring s, const CsrMatrix<Value, std::int32_t>& a, const std::vector<Value>& x, std::int32_t i) {
  Value acc = semiring_zero<Value>(s);
  for (std::int32_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
    const Value v = a.values[p], xj = x[static_cast<std::size_t>(a.col_idx[p])];
    switch (s) {
      case Semiring::PlusTimes: acc += v * xj; break;
      case Semiring::MinPlus: acc = std::fmin(acc, v + xj); break;
      case Semiring::MaxTimes: acc = std::fmax(acc, v * xj); break;
      case Semiring::OrAnd: acc = (acc != 0 || (v != 0 && xj != 0)) ? Value(1) : Value(0); break;
      case Semiring::MaxMin: acc = std::fmax(acc, std::fmin(v, xj)); break;
    }
  }
  return acc;
}

// Hand rows with NaN / +-Inf in x: a row whose only term is NaN, NaN first then numbers, numbers then
// NaN, +Inf beside -Inf (Inf - Inf = NaN in min-plus, 0 * Inf = NaN in max-times), and rows of 16 and
// 37 entries (the CPU kernel's four-chain path) with the NaN at every position modulo 4. min, max and
// or are exact: compared by value (NaN equal to NaN). A row whose terms are all NaN gives the
// identity, as the fold above does.
template <class Value>
void check_nan_inf_rows() {
  constexpr Value kNaN = std::numeric_limits<Value>::quiet_NaN(), kInf = std::numeric_limits<Value>::infinity();
  // x: 0 NaN, 1 +Inf, 2 -Inf, 3 0, 4 2, 5 -3, 6.. finite ramp
  const std::int64_t n = 48;
  std::vector<Value> x(static_cast<std::size_t>(n));
  x[0] = kNaN, x[1] = kInf, x[2] = -kInf, x[3] = 0, x[4] = 2, x[5] = -3;
  for (std::int64_t j = 6; j < n; ++j) x[j] = static_cast<Value>((j * 7) % 23) - Value(11);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows = {
      {{0, 1.0}},                       // only NaN
      {{0, 1.0}, {4, 2.0}, {5, -1.0}},  // NaN first
      {{4, 2.0}, {5, -1.0}, {0, 1.0}},  // NaN last
      {{1, 1.0}, {2, 1.0}},             // +Inf, -Inf
      {{1, 0.0}, {3, 5.0}},             // 0 * Inf, an explicit zero
      {{2, -1.0}, {1, -1.0}, {0, 0.0}},
      {},
  };
  for (std::int64_t len : {16, 37})
    for (std::int64_t nan_at = 0; nan_at < 4; ++nan_at) {
      std::vector<std::pair<std::int64_t, double>> row;
      for (std::int64_t t = 0; t < len; ++t)
        row.emplace_back(t == nan_at || t == len - 1 - nan_at ? 0 : 6 + (t * 5) % (n - 6), 0.5 + 0.25 * static_cast<double>(t % 7) - 1.0);
      rows.push_back(row);
    }
  {  // 16 and 37 NaN terms: all NaN on the four-chain path
    rows.emplace_back(16, std::pair<std::int64_t, double>{0, 1.0});
    rows.emplace_back(37, std::pair<std::int64_t, double>{0, -1.0});
  }
  const auto a = convert<Value, std::int32_t>(zoo_detail::from_rows(n, rows));
  for (Semiring s : kAllSemirings) {
    if (s == Semiring::PlusTimes) continue;  // NaN/Inf in sums: IEEE arithmetic, tested by the SpMV suites
    for (int threads : {1, 2}) {
      std::vector<Value> y(static_cast<std::size_t>(a.rows), Value(12345));
      semiring_multiply(s, a, std::span<const Value>(x), std::span(y), threads);
      for (std::int32_t i = 0; i < a.rows; ++i) {
        const Value want = fold_reference(s, a, x, i);
        const bool same = (std::isnan(want) && std::isnan(y[i])) || want == y[i];
        EXPECT_TRUE(same) << to_string(s) << " threads=" << threads << " row " << i << ": got " << y[i]
                          << ", fmin/fmax fold gives " << want;
      }
    }
  }
}

TEST(EdgeProbeSemiring, NanAndInfInXMatchAnFminFmaxFold) {
  check_nan_inf_rows<double>();
  check_nan_inf_rows<float>();
}

// Wrong lengths are refused with InvalidArgument naming the semiring and the sizes, before y is
// written, by both overloads and on both backends (the CUDA overload checks before any device call).
TEST(EdgeProbeSemiring, LengthMismatchesAreRefusedBeforeYIsTouched) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("tiny_3x4"));  // 3 x 4
  const auto e = convert<double, std::int32_t>(zoo_matrix("empty_0x7"));
  struct Sizes {
    const CsrMatrix<double, std::int32_t>* m;
    std::size_t x, y;
  };
  const Sizes bad[] = {{&a, 3, 3}, {&a, 5, 3}, {&a, 4, 2}, {&a, 4, 4}, {&a, 0, 0}, {&e, 0, 0}, {&e, 7, 1}};
  for (Semiring s : kAllSemirings)
    for (const Sizes& b : bad)
      for (int route = 0; route < 3; ++route) {
        std::vector<double> x(b.x, 1.0), y(b.y, -7.0);
        try {
          if (route == 0) semiring_multiply(s, *b.m, std::span<const double>(x), std::span(y));
          else if (route == 1) semiring_multiply(Backend::Cpu, s, *b.m, std::span<const double>(x), std::span(y));
          else semiring_multiply(Backend::Cuda, s, *b.m, std::span<const double>(x), std::span(y));
          ADD_FAILURE() << to_string(s) << " route " << route << ": x " << b.x << ", y " << b.y << " accepted";
        } catch (const InvalidArgument& err) {
          const std::string what = err.what();
          EXPECT_NE(what.find(std::string(to_string(s))), std::string::npos) << what;
          EXPECT_NE(what.find("x has " + std::to_string(b.x)), std::string::npos) << what;
        }
        for (double v : y) EXPECT_EQ(v, -7.0) << to_string(s) << " route " << route << ": y written";
      }
}

// Backend::Cuda without a usable device: Unsupported with a message that says why (as
// make_operator and make_spmm_operator on CUDA do), never a crash, never a y written with garbage;
// the same in a build without CUDA. With a device, tests/cuda/cuda_semiring_test.cpp runs it.
TEST(EdgeProbeSemiring, CudaBackendWithoutADeviceIsUnsupported) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  const auto a = convert<float, std::int64_t>(zoo_matrix("empty_rows"));
  const auto x = awkward_x<float>(a.cols);
  for (Semiring s : kAllSemirings) {
    std::vector<float> y(static_cast<std::size_t>(a.rows), -7.0f);
    try {
      semiring_multiply(Backend::Cuda, s, a, std::span<const float>(x), std::span(y));
      ADD_FAILURE() << to_string(s) << ": Backend::Cuda without a device did not throw";
    } catch (const Unsupported& err) {
      EXPECT_NE(std::string(err.what()).find("CUDA"), std::string::npos) << err.what();
    } catch (const std::exception& err) {
      ADD_FAILURE() << to_string(s) << ": expected spmv::Unsupported, got: " << err.what();
    }
    for (float v : y) EXPECT_EQ(v, -7.0f) << to_string(s);
  }
  // Degenerate shapes go the same way (a 0 x 0 product is no excuse to touch the runtime).
  const auto e = convert<double, std::int32_t>(zoo_matrix("empty_0x0"));
  std::vector<double> none;
  EXPECT_THROW(semiring_multiply(Backend::Cuda, Semiring::OrAnd, e, std::span<const double>(none), std::span(none)),
               Unsupported);
}

// Zero results built from +0 and -0 terms at every position of long rows (the four-chain path) and
// short ones: the value is 0, never NaN and never the identity. The SIGN of such a zero depends on the
// order the terms are combined in (max(+0, -0) keeps its first operand, as fmax may), so the CPU's four
// chains and the CUDA sub-warp can give -0 where a sequential fold gives +0: compared by value only.
TEST(EdgeProbeSemiring, SignedZeroTermsGiveZero) {
  for (std::int64_t len : {5, 16, 19, 37})
    for (std::int64_t plus_at = 0; plus_at < 4; ++plus_at) {
      // max-times: a_ij = 0 times x = +3 (+0) or -3 (-0), and -1 * 1 (-1) elsewhere.
      // min-plus: +0 + -0 = +0, -0 + -0 = -0, 1 + 1 = 2 elsewhere.
      std::vector<std::pair<std::int64_t, double>> times_row, plus_row;
      for (std::int64_t t = 0; t < len; ++t) {
        const bool plus = t == plus_at, minus = t == plus_at + 3 || t == len - 1;
        times_row.emplace_back(plus ? 0 : minus ? 1 : 2, plus || minus ? 0.0 : -1.0);
        plus_row.emplace_back(plus ? 3 : minus ? 3 : 2, plus ? 0.0 : minus ? -0.0 : 1.0);
      }
      const std::vector<double> x = {3.0, -3.0, 1.0, -0.0};
      for (auto [s, row] : {std::pair{Semiring::MaxTimes, times_row}, std::pair{Semiring::MinPlus, plus_row}}) {
        const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(4, {row, row}));
        std::vector<double> y(2, std::numeric_limits<double>::quiet_NaN());
        semiring_multiply(s, a, std::span<const double>(x), std::span(y), 2);
        for (double v : y) EXPECT_EQ(v, 0.0) << to_string(s) << " len " << len << " +0 at " << plus_at << ": " << v;
      }
    }
}

}  // namespace
}  // namespace spmv::test
