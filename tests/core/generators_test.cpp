// Generators: sizes, exact nonzero counts, canonical output, determinism, and the row-length shape each
// generator promises; the name registry and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::gen::Matrix;

std::int64_t len(const Matrix& a, std::int64_t r) { return a.row_ptr[r + 1] - a.row_ptr[r]; }

void expect_canonical(const Matrix& a) {
  ASSERT_NO_THROW(spmv::validate(a));
  EXPECT_TRUE(spmv::is_canonical(a));
}

bool same(const Matrix& a, const Matrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values == b.values;
}

// Value at (i, j), 0 when absent.
double at(const Matrix& a, std::int64_t i, std::int64_t j) {
  for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
    if (a.col_idx[k] == j) return a.values[k];
  return 0.0;
}

bool is_symmetric(const Matrix& a) {
  const auto t = spmv::transpose(a);
  return t.row_ptr == a.row_ptr && t.col_idx == a.col_idx && t.values == a.values;
}

TEST(Generators, Poisson2dShapeAndValues) {
  const std::int64_t n = 7;
  const auto a = spmv::gen::poisson2d(n);
  expect_canonical(a);
  EXPECT_EQ(a.rows, n * n);
  EXPECT_EQ(a.cols, n * n);
  EXPECT_EQ(a.nnz(), 5 * n * n - 4 * n);  // each of the 4 sides drops n neighbours
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      const std::int64_t i = y * n + x;
      const int expected = 5 - (x == 0) - (x == n - 1) - (y == 0) - (y == n - 1);
      EXPECT_EQ(len(a, i), expected) << "row " << i;
      EXPECT_EQ(at(a, i, i), 4.0);
      if (x > 0) {
        EXPECT_EQ(at(a, i, i - 1), -1.0);
      }
      if (y > 0) {
        EXPECT_EQ(at(a, i, i - n), -1.0);
      }
      if (x + 1 < n) {
        EXPECT_EQ(at(a, i, i + 1), -1.0);
      }
      if (y + 1 < n) {
        EXPECT_EQ(at(a, i, i + n), -1.0);
      }
    }
  EXPECT_TRUE(is_symmetric(a));
  // no wrap-around between the end of one grid line and the start of the next
  EXPECT_EQ(at(a, n - 1, n), 0.0);
}

TEST(Generators, Poisson2dDegenerate) {
  const auto a0 = spmv::gen::poisson2d(0);
  expect_canonical(a0);
  EXPECT_EQ(a0.rows, 0);
  EXPECT_EQ(a0.nnz(), 0);
  const auto a1 = spmv::gen::poisson2d(1);
  EXPECT_EQ(a1.nnz(), 1);
  EXPECT_EQ(a1.values[0], 4.0);
}

TEST(Generators, Poisson3dAndStencil27) {
  const std::int64_t n = 5;
  const auto p = spmv::gen::poisson3d(n);
  expect_canonical(p);
  EXPECT_EQ(p.rows, n * n * n);
  EXPECT_EQ(p.nnz(), 7 * n * n * n - 6 * n * n);
  const std::int64_t center = (2 * n + 2) * n + 2;
  EXPECT_EQ(len(p, center), 7);
  EXPECT_EQ(at(p, center, center), 6.0);
  EXPECT_EQ(at(p, center, center - n * n), -1.0);
  EXPECT_EQ(len(p, 0), 4);
  EXPECT_TRUE(is_symmetric(p));

  const auto s = spmv::gen::stencil27(n);
  expect_canonical(s);
  EXPECT_EQ(s.rows, n * n * n);
  EXPECT_EQ(s.nnz(), (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
  EXPECT_EQ(len(s, center), 27);
  EXPECT_EQ(at(s, center, center), 26.0);
  EXPECT_EQ(at(s, center, center - n * n - n - 1), -1.0);
  EXPECT_EQ(len(s, 0), 8);
  EXPECT_TRUE(is_symmetric(s));
}

TEST(Generators, RandomUniformRowsAndDeterminism) {
  const auto a = spmv::gen::random_uniform(1000, 500, 20, 7);
  expect_canonical(a);
  EXPECT_EQ(a.rows, 1000);
  EXPECT_EQ(a.cols, 500);
  EXPECT_EQ(a.nnz(), 20000);
  for (std::int64_t r = 0; r < a.rows; ++r) EXPECT_EQ(len(a, r), 20);
  for (double v : a.values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  EXPECT_TRUE(same(a, spmv::gen::random_uniform(1000, 500, 20, 7)));
  const auto b = spmv::gen::random_uniform(1000, 500, 20, 8);
  EXPECT_NE(a.col_idx, b.col_idx);
  EXPECT_NE(a.values, b.values);

  // Columns are uniform: Pearson chi-square over 500 columns (df = 499, mean 499, sd sqrt(998) ~ 31.6);
  // sampling without replacement within a row only lowers the variance. 6 sd above the mean.
  std::vector<double> count(500, 0);
  for (auto c : a.col_idx) count[c] += 1;
  const double expected = 20000.0 / 500;
  double chi2 = 0;
  for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 499 + 6 * std::sqrt(2.0 * 499));
}

TEST(Generators, RandomUniformDenseRowsUseTheComplement) {
  // per_row > cols / 2 draws the excluded columns instead; per_row == cols gives full rows
  const auto a = spmv::gen::random_uniform(50, 40, 37, 3);
  expect_canonical(a);
  for (std::int64_t r = 0; r < a.rows; ++r) EXPECT_EQ(len(a, r), 37);
  const auto full = spmv::gen::random_uniform(5, 9, 9, 3);
  for (std::int64_t r = 0; r < 5; ++r)
    for (std::int64_t j = 0; j < 9; ++j) EXPECT_EQ(full.col_idx[r * 9 + j], j);
  const auto none = spmv::gen::random_uniform(5, 0, 0, 3);
  EXPECT_EQ(none.nnz(), 0);
  EXPECT_THROW(spmv::gen::random_uniform(5, 9, 10, 3), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::random_uniform(-1, 9, 1, 3), spmv::InvalidArgument);
}

TEST(Generators, RmatIsPowerLaw) {
  const int scale = 10;
  const auto a = spmv::gen::rmat(scale, 16, 1);
  expect_canonical(a);
  EXPECT_EQ(a.rows, 1 << scale);
  EXPECT_EQ(a.cols, 1 << scale);
  double edges = 0;
  for (double v : a.values) {
    EXPECT_GE(v, 1.0);
    EXPECT_EQ(v, std::floor(v));
    edges += v;
  }
  EXPECT_EQ(edges, 16.0 * (1 << scale));  // values count the draws of each edge
  EXPECT_LT(a.nnz(), 16 * (1 << scale));  // skewed draws repeat edges
  std::int64_t max_len = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, len(a, r));
  const double mean = static_cast<double>(a.nnz()) / a.rows;
  EXPECT_GT(max_len, 8 * mean) << "max " << max_len << " mean " << mean;
  EXPECT_TRUE(same(a, spmv::gen::rmat(scale, 16, 1)));
  EXPECT_NE(a.col_idx, spmv::gen::rmat(scale, 16, 2).col_idx);

  // a = b = c = d = 1/4 is uniform: no heavy rows
  const auto u = spmv::gen::rmat(scale, 16, 1, 0.25, 0.25, 0.25);
  std::int64_t umax = 0;
  for (std::int64_t r = 0; r < u.rows; ++r) umax = std::max(umax, len(u, r));
  EXPECT_LT(umax, 3 * 16);
}

TEST(Generators, RmatRejectsBadParameters) {
  EXPECT_THROW(spmv::gen::rmat(-1, 16, 1), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::rmat(33, 16, 1), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::rmat(30, 1 << 11, 1), spmv::InvalidArgument);  // 2^41 edges
  EXPECT_THROW(spmv::gen::rmat(4, -1, 1), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::rmat(4, 4, 1, 0.6, 0.3, 0.3), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::rmat(4, 4, 1, -0.1, 0.3, 0.3), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::rmat(4, 4, 1, std::nan(""), 0.3, 0.3), spmv::InvalidArgument);
  const auto e = spmv::gen::rmat(0, 3, 1);  // one vertex: a self loop drawn three times
  EXPECT_EQ(e.nnz(), 1);
  EXPECT_EQ(e.values[0], 3.0);
}

TEST(Generators, Banded) {
  const std::int64_t n = 50, h = 3;
  const auto a = spmv::gen::banded(n, h, 5);
  expect_canonical(a);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t lo = std::max<std::int64_t>(0, i - h), hi = std::min<std::int64_t>(n - 1, i + h);
    ASSERT_EQ(len(a, i), hi - lo + 1);
    for (std::int64_t k = 0; k < len(a, i); ++k) EXPECT_EQ(a.col_idx[a.row_ptr[i] + k], lo + k);
  }
  EXPECT_TRUE(same(a, spmv::gen::banded(n, h, 5)));
  EXPECT_NE(a.values, spmv::gen::banded(n, h, 6).values);
  EXPECT_EQ(spmv::gen::banded(4, 1000, 1).nnz(), 16);  // the band covers the whole matrix
}

TEST(Generators, LongRowsAreWhereDocumented) {
  const std::int64_t rows = 1000, cols = 2000, nlong = 7;
  const auto a = spmv::gen::long_rows(rows, cols, nlong, 1500, 5, 11);
  expect_canonical(a);
  std::set<std::int64_t> long_positions;
  for (std::int64_t k = 0; k < nlong; ++k) long_positions.insert(k * rows / nlong);
  ASSERT_EQ(static_cast<std::int64_t>(long_positions.size()), nlong);
  for (std::int64_t r = 0; r < rows; ++r) EXPECT_EQ(len(a, r), long_positions.count(r) ? 1500 : 5) << "row " << r;
  EXPECT_EQ(a.nnz(), nlong * 1500 + (rows - nlong) * 5);
  EXPECT_TRUE(same(a, spmv::gen::long_rows(rows, cols, nlong, 1500, 5, 11)));
  EXPECT_THROW(spmv::gen::long_rows(rows, cols, rows + 1, 10, 5, 1), spmv::InvalidArgument);
  EXPECT_THROW(spmv::gen::long_rows(rows, cols, 1, cols + 1, 5, 1), spmv::InvalidArgument);
  // every row long
  const auto all = spmv::gen::long_rows(10, 20, 10, 15, 1, 1);
  for (std::int64_t r = 0; r < 10; ++r) EXPECT_EQ(len(all, r), 15);
}

TEST(Generators, MostlyEmptyFractionIsBinomial) {
  const std::int64_t rows = 100000;
  const double p = 0.1;
  const auto a = spmv::gen::mostly_empty(rows, 1000, p, 4, 3);
  expect_canonical(a);
  std::int64_t nonempty = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto l = len(a, r);
    ASSERT_TRUE(l == 0 || l == 4) << "row " << r;
    nonempty += l > 0;
  }
  // Binomial(rows, p): within 6 standard deviations (sd = sqrt(rows p (1 - p)) ~ 95 rows)
  const double sd = std::sqrt(rows * p * (1 - p));
  EXPECT_LT(std::abs(nonempty - rows * p), 6 * sd) << nonempty;
  EXPECT_TRUE(same(a, spmv::gen::mostly_empty(rows, 1000, p, 4, 3)));
  EXPECT_EQ(spmv::gen::mostly_empty(100, 10, 0.0, 4, 1).nnz(), 0);
  EXPECT_EQ(spmv::gen::mostly_empty(100, 10, 1.0, 4, 1).nnz(), 400);
  EXPECT_THROW(spmv::gen::mostly_empty(100, 10, 1.5, 4, 1), spmv::InvalidArgument);
}

TEST(Generators, DenseRowsAreDiagonallyDominant) {
  const std::int64_t n = 1000, ndense = 3;
  const auto a = spmv::gen::dense_rows(n, ndense, 0.5, 4, 9);
  expect_canonical(a);
  std::set<std::int64_t> dense;
  for (std::int64_t k = 0; k < ndense; ++k) dense.insert(k * n / ndense);
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(len(a, i), dense.count(i) ? 501 : 5) << "row " << i;
    double off = 0, diag = 0;
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (a.col_idx[k] == i) diag = a.values[k];
      else off += std::abs(a.values[k]);
    }
    EXPECT_GT(diag, off) << "row " << i;
  }
  EXPECT_TRUE(same(a, spmv::gen::dense_rows(n, ndense, 0.5, 4, 9)));
  const auto one = spmv::gen::dense_rows(1, 1, 1.0, 0, 1);
  EXPECT_EQ(one.nnz(), 1);
  EXPECT_THROW(spmv::gen::dense_rows(10, 2, 0.5, 10, 1), spmv::InvalidArgument);  // per_row > n - 1
}

TEST(Generators, RegistryCoversEveryGenerator) {
  std::set<std::string> names;
  for (const auto& g : spmv::gen::generators()) {
    names.insert(g.name);
    EXPECT_FALSE(g.description.empty());
    EXPECT_FALSE(g.defaults.empty());
  }
  const std::set<std::string> expected{"poisson2d", "poisson3d", "stencil27", "random_uniform", "rmat",
                                       "banded",    "long_rows", "mostly_empty", "dense_rows",
                                       "fem2d",     "fem3d"};
  EXPECT_EQ(names, expected);
  const auto& rmat = *std::find_if(spmv::gen::generators().begin(), spmv::gen::generators().end(),
                                   [](auto& g) { return g.name == "rmat"; });
  EXPECT_EQ(rmat.defaults.at("scale"), 16);
  EXPECT_EQ(rmat.defaults.at("edge_factor"), 16);
  EXPECT_EQ(rmat.defaults.at("seed"), 1);
  EXPECT_EQ(rmat.defaults.at("a"), 0.57);
}

TEST(Generators, RegistryMatchesDirectCalls) {
  EXPECT_TRUE(same(spmv::gen::generate("poisson2d", {{"n", 6}}), spmv::gen::poisson2d(6)));
  EXPECT_TRUE(same(spmv::gen::generate("poisson3d", {{"n", 4}}), spmv::gen::poisson3d(4)));
  EXPECT_TRUE(same(spmv::gen::generate("stencil27", {{"n", 4}}), spmv::gen::stencil27(4)));
  EXPECT_TRUE(same(spmv::gen::generate("random_uniform", {{"rows", 30}, {"cols", 20}, {"per_row", 3}, {"seed", 4}}),
                   spmv::gen::random_uniform(30, 20, 3, 4)));
  EXPECT_TRUE(same(spmv::gen::generate("rmat", {{"scale", 6}, {"edge_factor", 4}, {"seed", 2}, {"a", 0.5}}),
                   spmv::gen::rmat(6, 4, 2, 0.5, 0.19, 0.19)));
  EXPECT_TRUE(same(spmv::gen::generate("banded", {{"n", 30}, {"half_bandwidth", 2}, {"seed", 3}}),
                   spmv::gen::banded(30, 2, 3)));
  EXPECT_TRUE(same(spmv::gen::generate("long_rows", {{"rows", 40},
                                                     {"cols", 50},
                                                     {"long_rows", 2},
                                                     {"long_length", 30},
                                                     {"short_length", 2},
                                                     {"seed", 5}}),
                   spmv::gen::long_rows(40, 50, 2, 30, 2, 5)));
  EXPECT_TRUE(same(spmv::gen::generate("mostly_empty", {{"rows", 40},
                                                        {"cols", 50},
                                                        {"nonempty_fraction", 0.25},
                                                        {"per_row", 3},
                                                        {"seed", 6}}),
                   spmv::gen::mostly_empty(40, 50, 0.25, 3, 6)));
  EXPECT_TRUE(same(spmv::gen::generate("dense_rows", {{"n", 40},
                                                      {"dense_rows", 2},
                                                      {"dense_fraction", 0.5},
                                                      {"per_row", 3},
                                                      {"seed", 7}}),
                   spmv::gen::dense_rows(40, 2, 0.5, 3, 7)));
}

TEST(Generators, RegistryDefaultsGenerate) {
  for (const auto& g : spmv::gen::generators()) {
    SCOPED_TRACE(g.name);
    const auto a = spmv::gen::generate(g.name);
    expect_canonical(a);
    EXPECT_GT(a.nnz(), 0);
  }
}

std::string error_of(std::string_view kind, const std::map<std::string, double>& params) {
  try {
    spmv::gen::generate(kind, params);
  } catch (const spmv::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Generators, RegistryErrors) {
  const auto unknown = error_of("poisson4d", {});
  EXPECT_NE(unknown.find("poisson4d"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("poisson2d"), std::string::npos) << unknown;  // lists the valid kinds
  EXPECT_NE(unknown.find("rmat"), std::string::npos) << unknown;

  const auto param = error_of("rmat", {{"scal", 4}});
  EXPECT_NE(param.find("scal"), std::string::npos) << param;
  EXPECT_NE(param.find("edge_factor"), std::string::npos) << param;  // lists the valid parameters

  EXPECT_NE(error_of("poisson2d", {{"n", 2.5}}).find("integer"), std::string::npos);
  EXPECT_FALSE(error_of("poisson2d", {{"n", std::nan("")}}).empty());
  EXPECT_FALSE(error_of("poisson2d", {{"n", std::numeric_limits<double>::infinity()}}).empty());
  EXPECT_FALSE(error_of("poisson2d", {{"n", -3}}).empty());
  EXPECT_FALSE(error_of("poisson2d", {{"n", 1e7}}).empty());  // 5e14 nonzeros > 2^40
  EXPECT_FALSE(error_of("random_uniform", {{"rows", 1e12}, {"per_row", 2}}).empty());
  EXPECT_FALSE(error_of("random_uniform", {{"seed", -1}}).empty());
  EXPECT_FALSE(error_of("random_uniform", {{"seed", 0.5}}).empty());
  EXPECT_FALSE(error_of("rmat", {{"scale", 1e10}}).empty());
  EXPECT_FALSE(error_of("mostly_empty", {{"nonempty_fraction", -0.5}}).empty());
  EXPECT_FALSE(error_of("banded", {{"half_bandwidth", 1.0000001}}).empty());
  EXPECT_FALSE(error_of("stencil27", {{"n", 1e5}}).empty());  // 2.7e16 nonzeros
}

}  // namespace

// --- typed, parallel generation (issue 18) -----------------------------------------------------------

using Params = std::map<std::string, double>;

// Every kind with parameters large enough to span several row blocks (4096 rows) and R-MAT chunks
// (2^14 edges), so that 2 and 3 threads really share the work.
std::vector<std::pair<std::string, Params>> multi_block_cases() {
  return {{"poisson2d", {{"n", 150}}},
          {"poisson3d", {{"n", 25}}},
          {"stencil27", {{"n", 20}}},
          {"random_uniform", {{"rows", 20000}, {"cols", 3000}, {"per_row", 9}, {"seed", 3}}},
          {"rmat", {{"scale", 14}, {"edge_factor", 8}, {"seed", 5}}},
          {"banded", {{"n", 12000}, {"half_bandwidth", 3}, {"seed", 2}}},
          {"long_rows", {{"rows", 15000}, {"cols", 9000}, {"long_rows", 7}, {"long_length", 5000}, {"short_length", 3}}},
          {"mostly_empty", {{"rows", 30000}, {"cols", 500}, {"nonempty_fraction", 0.2}, {"per_row", 4}}},
          {"dense_rows", {{"n", 10000}, {"dense_rows", 5}, {"dense_fraction", 0.3}, {"per_row", 3}}}};
}

template <class Value, class Index>
bool same_typed(const spmv::CsrMatrix<Value, Index>& a, const spmv::CsrMatrix<Value, Index>& b) {
  // Exact equality is the claim here (the same draws rounded once), not a numerical tolerance.
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values == b.values;
}

TEST(GeneratorsTyped, IdenticalForOneTwoAndThreeThreads) {
  for (const auto& [kind, params] : multi_block_cases()) {
    SCOPED_TRACE(kind);
    const auto one = spmv::gen::generate<double, std::int64_t>(kind, params, {0, 1});
    expect_canonical(one);
    EXPECT_GT(one.rows, 4096);
    for (int threads : {2, 3}) {
      SCOPED_TRACE(threads);
      EXPECT_TRUE(same_typed(one, spmv::gen::generate<double, std::int64_t>(kind, params, {0, threads})));
    }
    EXPECT_TRUE(same_typed(spmv::gen::generate<float, std::int32_t>(kind, params, {0, 1}),
                           spmv::gen::generate<float, std::int32_t>(kind, params, {0, 3})));
  }
}

// Values are computed in double and rounded once when stored, so every typed matrix equals the
// conversion of the double / int64 one.
TEST(GeneratorsTyped, EqualTheConversionOfTheDoubleMatrix) {
  for (const auto& [kind, params] : multi_block_cases()) {
    SCOPED_TRACE(kind);
    const Matrix wide = spmv::gen::generate(kind, params);
    EXPECT_TRUE(same_typed(wide, spmv::gen::generate<double, std::int64_t>(kind, params)));
    EXPECT_TRUE(same_typed(spmv::convert<float, std::int32_t>(wide), spmv::gen::generate<float, std::int32_t>(kind, params)));
    EXPECT_TRUE(same_typed(spmv::convert<float, std::int64_t>(wide), spmv::gen::generate<float, std::int64_t>(kind, params)));
    EXPECT_TRUE(same_typed(spmv::convert<double, std::int32_t>(wide), spmv::gen::generate<double, std::int32_t>(kind, params)));
  }
}

TEST(GeneratorsTyped, SizeBoundIsExactOrAnUpperBound) {
  for (const auto& [kind, params] : multi_block_cases()) {
    SCOPED_TRACE(kind);
    const auto bound = spmv::gen::size_bound(kind, params);
    ASSERT_TRUE(bound.has_value());
    const Matrix a = spmv::gen::generate(kind, params);
    EXPECT_EQ(bound->rows, a.rows);
    EXPECT_EQ(bound->cols, a.cols);
    if (kind == "rmat" || kind == "mostly_empty") {
      EXPECT_GE(bound->nnz, a.nnz());
    } else {
      EXPECT_EQ(bound->nnz, a.nnz());
    }
  }
  EXPECT_EQ(spmv::gen::size_bound("rmat", {{"scale", 27}, {"edge_factor", 16}})->nnz, std::int64_t{1} << 31);
  EXPECT_EQ(spmv::gen::size_bound("poisson3d", {{"n", 700}})->nnz, 7LL * 700 * 700 * 700 - 6LL * 700 * 700);
  EXPECT_THROW(spmv::gen::size_bound("poisson4d"), spmv::InvalidArgument);
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const spmv::MemoryLimitExceeded& e) {
    return e.what();
  }
  return "";
}

// A limit below the need is refused before the arrays exist, naming both sizes.
TEST(GeneratorsTyped, RefusesMoreThanTheMemoryLimit) {
  // poisson3d n = 50: 125,000 rows, 860,000 nonzeros: 0.5 MB of row pointers + 12 bytes a nonzero in
  // float / int64.
  const std::string message = refusal([] { spmv::gen::generate<float, std::int64_t>("poisson3d", {{"n", 50}}, {2000000, 0}); });
  EXPECT_NE(message.find("poisson3d: the 125000 x 125000 matrix with 860000 nonzeros (float values, 64-bit indices) "
                         "needs 11.3 MB"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the max_memory limit of 2.0 MB"), std::string::npos) << message;
  EXPECT_NO_THROW((spmv::gen::generate<float, std::int64_t>("poisson3d", {{"n", 50}}, {12000000, 0})));
  // The row pointers alone, before pass 1: 10^9 rows of 8 bytes.
  EXPECT_NE(refusal([] { spmv::gen::generate<double, std::int64_t>("random_uniform", {{"rows", 1e9}, {"per_row", 0}},
                                                                    {1000000, 0}); })
                .find("for its row pointers alone"),
            std::string::npos);
  // R-MAT counts its edges before duplicates are summed: 2^20 edges of 8 + 8 bytes, 2^16 + 1 rows twice.
  const std::string rmat = refusal([] {
    spmv::gen::generate<double, std::int64_t>("rmat", {{"scale", 16}, {"edge_factor", 16}}, {10000000, 0});
  });
  EXPECT_NE(rmat.find("needs 17.8 MB at most while its edges are drawn"), std::string::npos) << rmat;
}

TEST(GeneratorsTyped, RefusesSizesBeyondTheIndexTypeBeforeAllocating) {
  // 3e9 rows do not fit int32: refused at once (a 24 GB row pointer array would otherwise be built).
  EXPECT_THROW((spmv::gen::generate<float, std::int32_t>("random_uniform", {{"rows", 3e9}, {"per_row", 0}})),
               spmv::Unsupported);
  // 2^31 R-MAT edges do not fit int32 before their duplicates are summed.
  EXPECT_THROW((spmv::gen::generate<float, std::int32_t>("rmat", {{"scale", 27}, {"edge_factor", 16}})),
               spmv::Unsupported);
}
