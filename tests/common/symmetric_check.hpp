#pragma once
// The symmetric route (Algorithm::Symmetric: A^T x run as A x when A == A^T exactly), one body for
// every backend: right on matrices equal to their transpose, refused on every way of breaking it with
// the host check's own words (spmv::symmetry_violation; the CUDA check runs on the device and must find
// the same first entry), offered for A^T x only, and taken by Auto with the expected-applies hint only.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/differential.hpp"
#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {

struct SymmetryCase {
  std::string name;
  CsrMatrix<double, std::int64_t> a;
  std::string words;  // empty when A == A^T, else what symmetry_violation must say
};

inline CsrMatrix<double, std::int64_t> csr_of(std::int64_t rows, std::int64_t cols,
                                             const std::vector<std::vector<std::pair<std::int64_t, double>>>& entries) {
  CsrMatrix<double, std::int64_t> a;
  a.rows = rows;
  a.cols = cols;
  for (const auto& row : entries) {
    for (const auto& [c, v] : row) {
      a.col_idx.push_back(c);
      a.values.push_back(v);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

// A 5 x 5 matrix equal to its transpose (distinct values; -0 facing +0 counts as equal), then one way
// of breaking it per case.
inline std::vector<SymmetryCase> symmetry_cases() {
  using Rows = std::vector<std::vector<std::pair<std::int64_t, double>>>;
  const Rows base = {{{0, 4}, {1, -1}, {3, 2.5}},
                     {{0, -1}, {1, 4.5}, {2, 0.5}},
                     {{1, 0.5}, {2, 5}},
                     {{0, 2.5}, {3, 5.5}, {4, -0.0}},
                     {{3, 0.0}, {4, 6}}};
  std::vector<SymmetryCase> cases;
  cases.push_back({"symmetric", csr_of(5, 5, base), ""});
  Rows r = base;
  r[3][0].second = 2.75;
  cases.push_back({"mirror_differs", csr_of(5, 5, r), "entry (0, 3) = 2.5 but (3, 0) = 2.75"});
  r = base;
  r[2].push_back({4, 1.0});
  cases.push_back({"mirror_missing", csr_of(5, 5, r), "entry (2, 4) is stored but (4, 2) is not"});
  r = base;
  std::swap(r[0][0], r[0][1]);
  cases.push_back(
      {"unsorted_row", csr_of(5, 5, r), "row 0 does not hold strictly increasing columns (column 0 after 1)"});
  r = base;
  r[0].insert(r[0].begin() + 1, {1, -1.0});
  cases.push_back({"duplicate", csr_of(5, 5, r), "row 0 does not hold strictly increasing columns (column 1 after 1)"});
  r = base;
  r[0][2].second = r[3][0].second = std::numeric_limits<double>::quiet_NaN();
  cases.push_back({"nan_mirrors", csr_of(5, 5, r), "entry (0, 3) = "});  // NaN equals nothing
  r = base;
  r[4].push_back({5, 1.0});
  cases.push_back({"not_square", csr_of(5, 6, r), "A is 5 x 6, not square"});
  return cases;
}

// Random square matrices, mirrored or not, some with one perturbed entry: both answers, many shapes.
inline std::vector<CsrMatrix<double, std::int64_t>> random_symmetry_candidates(int count) {
  std::vector<CsrMatrix<double, std::int64_t>> out;
  for (int seed = 0; seed < count; ++seed) {
    std::mt19937 rng(seed);
    const int n = 1 + static_cast<int>(rng() % 300);
    std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
    const bool mirror = rng() % 4 != 0;
    for (int e = 0, m = static_cast<int>(rng() % (6 * n + 1)); e < m; ++e) {
      const std::int64_t i = rng() % n, j = rng() % n;
      const double v = double(rng() % 17) - 8;
      entries[{i, j}] = v;
      if (mirror) entries[{j, i}] = v;
    }
    if (!entries.empty() && rng() % 3 == 0) std::next(entries.begin(), rng() % entries.size())->second += 0.25;
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(static_cast<std::size_t>(n));
    for (const auto& [ij, v] : entries) rows[ij.first].push_back({ij.second, v});
    out.push_back(csr_of(n, n, rows));
  }
  return out;
}

template <class Value, class Index>
void check_symmetric_route_on(Backend backend, const SymmetryCase& c) {
  SCOPED_TRACE(c.name);
  const auto a = convert<Value, Index>(c.a);
  const auto violation = symmetry_violation(a);
  ASSERT_EQ(violation.has_value(), !c.words.empty()) << violation.value_or("A == A^T");
  if (violation) EXPECT_NE(violation->find(c.words), std::string::npos) << *violation;
  EXPECT_THROW(make_operator(backend, a, Algorithm::Symmetric, Operation::NonTranspose), Unsupported);
  Options hint;
  hint.expected_applies = 1000;
  const auto with_hint = make_operator(backend, a, Algorithm::Auto, Operation::Transpose, hint);
  const auto without = make_operator(backend, a, Algorithm::Auto, Operation::Transpose);
  EXPECT_NE(without->algorithm(), Algorithm::Symmetric) << "no value-dependent route without the hint";
  if (violation) {
    try {
      make_operator(backend, a, Algorithm::Symmetric, Operation::Transpose);
      ADD_FAILURE() << "symmetric accepted a matrix that differs from its transpose: " << *violation;
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find(*violation), std::string::npos) << e.what();
    }
    EXPECT_NE(with_hint->algorithm(), Algorithm::Symmetric) << with_hint->policy();
    return;
  }
  EXPECT_EQ(with_hint->algorithm(), Algorithm::Symmetric) << with_hint->policy();
  const auto named = make_operator(backend, a, Algorithm::Symmetric, Operation::Transpose);
  // No copy: what A x's own plan holds, nothing more.
  EXPECT_EQ(named->extra_bytes(), make_operator(backend, a, Algorithm::Auto, Operation::NonTranspose)->extra_bytes());
  for (Operator<Value, Index>* oper : {named.get(), with_hint.get()}) {
    const OperatorCheck check = check_operator(*oper, a, 77);
    EXPECT_GE(check.pairs, 16);
    for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;
  }
}

inline void check_symmetric_route(Backend backend) {
  for (const auto& c : symmetry_cases()) {
    check_symmetric_route_on<float, std::int32_t>(backend, c);
    check_symmetric_route_on<double, std::int64_t>(backend, c);
  }
}

// The backend's check against the host's on random matrices: the same verdict and the same words.
inline void check_symmetry_verdicts(Backend backend) {
  int symmetric = 0, refused = 0;
  for (const auto& m : random_symmetry_candidates(120)) {
    const auto a = convert<double, std::int32_t>(m);
    const auto violation = symmetry_violation(a);
    if (a.nnz() == 0) continue;  // degenerate: no kernel, nothing checked
    try {
      make_operator(backend, a, Algorithm::Symmetric, Operation::Transpose);
      EXPECT_FALSE(violation) << *violation;
      ++symmetric;
    } catch (const Unsupported& e) {
      ASSERT_TRUE(violation) << "refused a matrix equal to its transpose: " << e.what();
      EXPECT_NE(std::string(e.what()).find(*violation), std::string::npos) << e.what() << " vs " << *violation;
      ++refused;
    }
  }
  EXPECT_GT(symmetric, 20);  // both verdicts exercised
  EXPECT_GT(refused, 20);
}

}  // namespace spmv::test
