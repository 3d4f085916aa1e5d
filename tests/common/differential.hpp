#pragma once
// THE differential test body (STYLE.md §8, tier ii): every algorithm a backend offers, on every zoo
// matrix, for both operations, float/double values and 32-bit indices (64-bit on a subset), for all
// 16 (alpha, beta) pairs of {0, 1, -1, 0.5} and for alpha = 0 with NaN/Inf in x, is compared with the double-precision sequential
// reference under the error bound of error_bound.hpp. A backend's test file is just
//
//   #include "common/differential.hpp"
//   SPMV_DIFFERENTIAL_TESTS(Cuda, spmv::Backend::Cuda)
//
// A plan that refuses a matrix with spmv::Unsupported (e.g. ELL padding on the huge row) is a skip
// with its reason; an algorithm that refuses every generated zoo matrix fails the coverage test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/error_bound.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {

inline constexpr double kScalars[] = {0.0, 1.0, -1.0, 0.5};  // alpha and beta each take all four

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else return "int64";
}

struct OperatorCheck {
  int pairs = 0;                      // (alpha, beta) pairs applied
  double worst_ratio = 0;             // largest error / bound over all pairs and rows
  std::vector<std::string> failures;  // one line per failing pair
};

// Applies `oper` (bound to `a`) for all 16 (alpha, beta) pairs with fresh x and y drawn from
// `seed`, y poisoned with NaN when beta == 0, and compares each result with cpu::reference computed
// in double on the same (already rounded) values. Free of gtest so that a test can show that a
// wrong operator is caught.
template <class Value, class Index>
OperatorCheck check_operator(Operator<Value, Index>& oper, const CsrMatrix<Value, Index>& a, std::uint64_t seed) {
  const Operation op = oper.operation();
  const auto a_ref = convert<double, std::int64_t>(a);  // exact: widening
  const auto lengths = output_row_lengths(a, op);
  const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
  const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  OperatorCheck check;
  int pair = 0;
  for (double alpha : kScalars)
    for (double beta : kScalars) {
      SplitMix64 rng(seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(++pair));
      std::vector<Value> x(nx), y0(ny);
      for (auto& v : x) v = static_cast<Value>(rng.symmetric());
      for (auto& v : y0) v = beta == 0 ? std::numeric_limits<Value>::quiet_NaN() : static_cast<Value>(rng.symmetric());
      const std::vector<double> x_ref(x.begin(), x.end());
      std::vector<double> y_ref(y0.begin(), y0.end());
      cpu::reference<double, std::int64_t>(a_ref, op, alpha, x_ref, beta, y_ref);
      const auto magnitude = cpu::reference_magnitude<double, std::int64_t>(a_ref, op, x_ref);

      std::vector<Value> y = y0;
      std::ostringstream where;
      where << "alpha=" << alpha << " beta=" << beta << ": ";
      try {
        oper.apply(static_cast<Value>(alpha), x, static_cast<Value>(beta), y);
      } catch (const std::exception& e) {
        check.failures.push_back(where.str() + "apply threw: " + e.what());
        continue;
      }
      ++check.pairs;
      const auto report = check_error_bound<Value>(y, y_ref, y0, magnitude, lengths, alpha, beta);
      check.worst_ratio = std::max(check.worst_ratio, report.worst_ratio);
      if (!report.passed()) check.failures.push_back(where.str() + report.describe());
    }
  // alpha == 0 references neither A nor x (BLAS): with NaN and +-Inf in every entry of x, y must
  // still be beta * y0 (0 when beta == 0, y0 then NaN). The bound keeps only the beta term.
  const std::vector<double> no_magnitude(ny, 0.0);
  for (double beta : kScalars) {
    SplitMix64 rng(seed ^ 0xA1FA0u ^ static_cast<std::uint64_t>(beta * 8 + 16));
    std::vector<Value> x(nx), y0(ny);
    constexpr Value kInf = std::numeric_limits<Value>::infinity();
    for (std::size_t i = 0; i < nx; ++i)
      x[i] = i % 3 == 0 ? std::numeric_limits<Value>::quiet_NaN() : (i % 3 == 1 ? kInf : -kInf);
    for (auto& v : y0) v = beta == 0 ? std::numeric_limits<Value>::quiet_NaN() : static_cast<Value>(rng.symmetric());
    std::vector<double> y_ref(ny);
    for (std::size_t i = 0; i < ny; ++i) y_ref[i] = beta == 0 ? 0.0 : beta * static_cast<double>(y0[i]);
    std::vector<Value> y = y0;
    std::ostringstream where;
    where << "alpha=0 with NaN/Inf in x, beta=" << beta << ": ";
    try {
      oper.apply(Value(0), x, static_cast<Value>(beta), y);
    } catch (const std::exception& e) {
      check.failures.push_back(where.str() + "apply threw: " + e.what());
      continue;
    }
    ++check.pairs;
    const auto report = check_error_bound<Value>(y, y_ref, y0, no_magnitude, lengths, 0.0, beta);
    check.worst_ratio = std::max(check.worst_ratio, report.worst_ratio);
    if (!report.passed()) check.failures.push_back(where.str() + report.describe());
  }
  return check;
}

// The body of one differential case.
template <class Value, class Index>
void check_against_reference(Backend backend, Algorithm algorithm, Operation op,
                             const CsrMatrix<double, std::int64_t>& matrix, const std::string& name,
                             const Options& options = {}) {
  if (backend == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";
  CsrMatrix<Value, Index> a;
  try {
    a = convert<Value, Index>(matrix);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << "matrix does not fit the index type: " << e.what();
  }
  std::unique_ptr<Operator<Value, Index>> oper;
  try {
    oper = make_operator(backend, a, algorithm, op, options);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << to_string(algorithm) << " refused " << name << ": " << e.what();
  }
  ASSERT_NE(oper, nullptr);
  EXPECT_EQ(oper->backend(), backend);
  if (algorithm != Algorithm::Auto && algorithm != Algorithm::Tune) EXPECT_EQ(oper->algorithm(), algorithm);
  EXPECT_EQ(oper->operation(), op);
  ::testing::Test::RecordProperty("policy", oper->policy());

  const std::uint64_t seed =
      hash_name(name + "/" + std::string(to_string(op)) + "/" + type_name<Value>() + "/" + type_name<Index>());
  const OperatorCheck check = check_operator(*oper, a, seed);
  for (const auto& f : check.failures)
    ADD_FAILURE() << to_string(backend) << " " << to_string(algorithm) << " [" << oper->policy() << "] on " << name
                  << " (" << a.rows << " x " << a.cols << ", nnz " << a.nnz() << "), op " << to_string(op) << ", "
                  << type_name<Value>() << "/" << type_name<Index>() << ", " << f;

  // Wrong vector sizes are refused, not read past.
  const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
  const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  std::vector<Value> x(nx + 1, Value(1)), y(ny, Value(0));
  EXPECT_THROW(oper->apply(Value(1), x, Value(0), y), InvalidArgument);
}

// ---- The sweep as gtest value-parameterized tests ------------------------------------------------

enum class TypeCombo { FloatInt32, DoubleInt32, FloatInt64, DoubleInt64 };

struct DifferentialCase {
  Algorithm algorithm;
  std::size_t matrix;  // index into zoo()
  Operation op;
  TypeCombo types;
};

inline const char* to_string(TypeCombo t) {
  switch (t) {
    case TypeCombo::FloatInt32: return "float_int32";
    case TypeCombo::DoubleInt32: return "double_int32";
    case TypeCombo::FloatInt64: return "float_int64";
    default: return "double_int64";
  }
}

// Readable parameters in gtest's output (instead of a byte dump).
inline void PrintTo(const DifferentialCase& c, std::ostream* os) {
  *os << to_string(c.algorithm) << " on " << zoo()[c.matrix].name << ", op " << spmv::to_string(c.op) << ", "
      << to_string(c.types);
}

inline bool offers(Backend backend, Algorithm algorithm, Operation op) {
  for (Algorithm a : backend_algorithms(backend, op))
    if (a == algorithm) return true;
  return false;
}

// Algorithms in declaration order, then matrices in zoo order, then N before T, then types.
inline std::vector<DifferentialCase> differential_cases(Backend backend) {
  std::vector<DifferentialCase> cases;
  for (Algorithm algorithm : all_algorithms())
    for (std::size_t m = 0; m < zoo().size(); ++m)
      for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
        if (!offers(backend, algorithm, op)) continue;
        cases.push_back({algorithm, m, op, TypeCombo::FloatInt32});
        cases.push_back({algorithm, m, op, TypeCombo::DoubleInt32});
        if (zoo()[m].index64) {
          cases.push_back({algorithm, m, op, TypeCombo::FloatInt64});
          cases.push_back({algorithm, m, op, TypeCombo::DoubleInt64});
        }
      }
  return cases;
}

inline std::string identifier(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return out;
}

struct DifferentialCaseName {
  std::string operator()(const ::testing::TestParamInfo<DifferentialCase>& info) const {
    const auto& c = info.param;
    return identifier(to_string(c.algorithm)) + "_" + zoo()[c.matrix].name + "_" + std::string(spmv::to_string(c.op)) +
           "_" + to_string(c.types);
  }
};

inline void run_differential_case(Backend backend, const DifferentialCase& c) {
  const auto& entry = zoo()[c.matrix];
  if (backend == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto& m = zoo_matrix(c.matrix);
  switch (c.types) {
    case TypeCombo::FloatInt32: return check_against_reference<float, std::int32_t>(backend, c.algorithm, c.op, m, entry.name);
    case TypeCombo::DoubleInt32: return check_against_reference<double, std::int32_t>(backend, c.algorithm, c.op, m, entry.name);
    case TypeCombo::FloatInt64: return check_against_reference<float, std::int64_t>(backend, c.algorithm, c.op, m, entry.name);
    case TypeCombo::DoubleInt64: return check_against_reference<double, std::int64_t>(backend, c.algorithm, c.op, m, entry.name);
  }
}

// Options::reorder: the plan of P A P^T behind the permutations of x and y must give A's products.
// A few algorithms per backend (Auto, one without and one with a workspace of its own) carry the
// reordering; the kernels themselves are swept above. Non-square matrices must be refused.
struct ReorderCase {
  Reorder reorder;
  Algorithm algorithm;
  std::size_t matrix;
  Operation op;
  TypeCombo types;
};

inline void PrintTo(const ReorderCase& c, std::ostream* os) {
  *os << spmv::to_string(c.reorder) << " " << to_string(c.algorithm) << " on " << zoo()[c.matrix].name << ", op "
      << spmv::to_string(c.op) << ", " << to_string(c.types);
}

inline std::vector<ReorderCase> reorder_cases(Backend backend) {
  const std::vector<Algorithm> carriers =
      backend == Backend::Cpu ? std::vector{Algorithm::Auto, Algorithm::MergeParallel, Algorithm::Sell}
                              : std::vector{Algorithm::Auto, Algorithm::CsrVector, Algorithm::MergePath};
  std::vector<ReorderCase> cases;
  for (Reorder reorder : {Reorder::Rcm, Reorder::Degree})
    for (Algorithm algorithm : carriers) {
      if (reorder == Reorder::Degree && algorithm != Algorithm::Auto) continue;
      for (std::size_t m = 0; m < zoo().size(); ++m)
        for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
          if (algorithm != Algorithm::Auto && !offers(backend, algorithm, op)) continue;
          cases.push_back({reorder, algorithm, m, op, TypeCombo::FloatInt32});
          cases.push_back({reorder, algorithm, m, op, zoo()[m].index64 ? TypeCombo::DoubleInt64 : TypeCombo::DoubleInt32});
        }
    }
  return cases;
}

struct ReorderCaseName {
  std::string operator()(const ::testing::TestParamInfo<ReorderCase>& info) const {
    const auto& c = info.param;
    return std::string(spmv::to_string(c.reorder)) + "_" + identifier(to_string(c.algorithm)) + "_" +
           zoo()[c.matrix].name + "_" + std::string(spmv::to_string(c.op)) + "_" + to_string(c.types);
  }
};

template <class Value, class Index>
void check_reordered(Backend backend, const ReorderCase& c) {
  const auto& m = zoo_matrix(c.matrix);
  Options options;
  options.reorder = c.reorder;
  if (m.rows != m.cols) {
    const auto a = convert<Value, Index>(m);
    EXPECT_THROW(make_operator(backend, a, c.algorithm, c.op, options), Unsupported)
        << "a non-square matrix must be refused by reorder " << spmv::to_string(c.reorder);
    return;
  }
  check_against_reference<Value, Index>(backend, c.algorithm, c.op, m, zoo()[c.matrix].name, options);
}

inline void run_reorder_case(Backend backend, const ReorderCase& c) {
  if (backend == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";
  switch (c.types) {
    case TypeCombo::FloatInt32: return check_reordered<float, std::int32_t>(backend, c);
    case TypeCombo::DoubleInt32: return check_reordered<double, std::int32_t>(backend, c);
    case TypeCombo::FloatInt64: return check_reordered<float, std::int64_t>(backend, c);
    case TypeCombo::DoubleInt64: return check_reordered<double, std::int64_t>(backend, c);
  }
}

// Coverage: each (algorithm, op) must accept at least one generated zoo matrix, so that an
// algorithm refusing everything cannot pass as "all skipped".
struct CoverageCase {
  Algorithm algorithm;
  Operation op;
};

inline std::vector<CoverageCase> coverage_cases(Backend backend) {
  std::vector<CoverageCase> cases;
  for (Algorithm algorithm : all_algorithms())
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      if (offers(backend, algorithm, op)) cases.push_back({algorithm, op});
  return cases;
}

inline void PrintTo(const CoverageCase& c, std::ostream* os) {
  *os << to_string(c.algorithm) << ", op " << spmv::to_string(c.op);
}

struct CoverageCaseName {
  std::string operator()(const ::testing::TestParamInfo<CoverageCase>& info) const {
    return identifier(to_string(info.param.algorithm)) + "_" + std::string(spmv::to_string(info.param.op));
  }
};

inline void run_coverage_case(Backend backend, const CoverageCase& c) {
  if (backend == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";
  int accepted = 0;
  std::string refusals;
  for (std::size_t m = 0; m < zoo().size(); ++m) {
    if (!zoo()[m].generated) continue;
    try {
      make_operator(backend, convert<double, std::int32_t>(zoo_matrix(m)), c.algorithm, c.op);
      ++accepted;
    } catch (const Unsupported& e) {
      refusals += "  " + zoo()[m].name + ": " + e.what() + "\n";
    }
  }
  EXPECT_GT(accepted, 0) << to_string(c.algorithm) << " (op " << spmv::to_string(c.op)
                         << ") refused every generated zoo matrix:\n"
                         << refusals;
}

}  // namespace spmv::test

// Instantiates the whole sweep for one backend: <prefix>Differential.MatchesReference/<algorithm>_
// <matrix>_<op>_<value>_<index> and <prefix>DifferentialCoverage.AcceptsSomeMatrix/<algorithm>_<op>.
// A backend built without any algorithm (CUDA off) instantiates nothing, which is allowed.
#define SPMV_DIFFERENTIAL_TESTS(prefix, backend)                                                              \
  class prefix##Differential : public ::testing::TestWithParam<::spmv::test::DifferentialCase> {};            \
  TEST_P(prefix##Differential, MatchesReference) { ::spmv::test::run_differential_case(backend, GetParam()); } \
  INSTANTIATE_TEST_SUITE_P(prefix, prefix##Differential,                                                      \
                           ::testing::ValuesIn(::spmv::test::differential_cases(backend)),                    \
                           ::spmv::test::DifferentialCaseName{});                                             \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(prefix##Differential);                                        \
  class prefix##DifferentialCoverage : public ::testing::TestWithParam<::spmv::test::CoverageCase> {};        \
  TEST_P(prefix##DifferentialCoverage, AcceptsSomeMatrix) {                                                   \
    ::spmv::test::run_coverage_case(backend, GetParam());                                                     \
  }                                                                                                           \
  INSTANTIATE_TEST_SUITE_P(prefix, prefix##DifferentialCoverage,                                              \
                           ::testing::ValuesIn(::spmv::test::coverage_cases(backend)),                        \
                           ::spmv::test::CoverageCaseName{});                                                 \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(prefix##DifferentialCoverage);                                \
  class prefix##Reordered : public ::testing::TestWithParam<::spmv::test::ReorderCase> {};                    \
  TEST_P(prefix##Reordered, MatchesReference) { ::spmv::test::run_reorder_case(backend, GetParam()); }         \
  INSTANTIATE_TEST_SUITE_P(prefix, prefix##Reordered, ::testing::ValuesIn(::spmv::test::reorder_cases(backend)), \
                           ::spmv::test::ReorderCaseName{});                                                  \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(prefix##Reordered)
