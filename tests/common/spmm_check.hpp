#pragma once
// THE SpMM differential test body, shared by the CPU and CUDA tests (STYLE.md §8): Y = alpha*op(A)*X
// + beta*Y is compared, column by column, with the double sequential SpMV reference
// (cpu::reference) under the per-row bound of error_bound.hpp, c*eps*(|beta||y0| + |alpha|
// sum_j |a_ij x_j|) with c = 2(n + 2) (each output entry of SpMM is one SpMV output entry: the same
// sum of n products in some order, then alpha, beta and one addition). Beyond SpMV's checks:
//  * both layouts, leading dimensions larger than the contiguous extent, and the padding between
//    rows/columns filled with NaN in X (it must never be read) and in Y (it must never be written:
//    compared bit for bit afterwards);
//  * Y poisoned with NaN when beta == 0; X full of NaN/Inf when alpha == 0 (Y = beta*Y exactly);
//  * k in {1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 64, 256}.
// A backend's test file defines a runner type with
//   template <class V, class I> static Product<V> make(const CsrMatrix<V, I>& a, Operation op);
// where Product<V> runs the product on HOST views (the CUDA runner copies to the device and back), and
// instantiates SPMV_SPMM_TESTS(Prefix, Runner).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/error_bound.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/dense.hpp"
#include "spmv/error.hpp"

namespace spmv::test {

template <class Value>
using Product = std::function<void(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y)>;

inline constexpr std::int64_t kSpmmColumns[] = {1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 64, 256};

struct SpmmCase {
  std::int64_t k = 1;
  Layout layout = Layout::RowMajor;
  std::int64_t ld_pad = 0;  // leading dimension = contiguous extent + ld_pad
  double alpha = 1, beta = 0;
  bool nan_x = false;       // with alpha == 0: X holds NaN and +-Inf everywhere
  bool other_y_layout = false;  // Y in the other layout than X
  Layout y_layout() const {
    return other_y_layout ? (layout == Layout::RowMajor ? Layout::ColMajor : Layout::RowMajor) : layout;
  }
  std::string describe() const {
    std::ostringstream s;
    s << "k=" << k << " " << to_string(layout) << (other_y_layout ? " (Y " + std::string(to_string(y_layout())) + ")" : "")
      << " ld_pad=" << ld_pad << " alpha=" << alpha << " beta=" << beta << (nan_x ? " (NaN/Inf in X)" : "");
    return s.str();
  }
};

// Host storage of a dense view: `rows` x `k` in `layout`, leading dimension extent + pad, padding NaN.
template <class Value>
struct DenseStorage {
  std::vector<Value> data;
  DenseView<Value> view;
  DenseStorage(std::int64_t rows, std::int64_t k, Layout layout, std::int64_t pad) {
    const std::int64_t inner = layout == Layout::RowMajor ? k : rows;
    const std::int64_t outer = layout == Layout::RowMajor ? rows : k;
    const std::int64_t ld = std::max<std::int64_t>(inner + pad, 1);
    data.assign(static_cast<std::size_t>(std::max<std::int64_t>(outer * ld, 0)), std::numeric_limits<Value>::quiet_NaN());
    view = DenseView<Value>{data.data(), rows, k, ld, layout};
  }
};

// Runs one case; returns an empty string when it passes, else what failed.
template <class Value, class Index>
std::string check_spmm_case(const CsrMatrix<Value, Index>& a, Operation op, const SpmmCase& c,
                            const Product<Value>& product, std::uint64_t seed) {
  const auto a_ref = convert<double, std::int64_t>(a);
  const auto lengths = output_row_lengths(a, op);
  const std::int64_t n_in = op == Operation::NonTranspose ? a.cols : a.rows;
  const std::int64_t n_out = op == Operation::NonTranspose ? a.rows : a.cols;
  SplitMix64 rng(seed);
  DenseStorage<Value> x(n_in, c.k, c.layout, c.ld_pad), y(n_out, c.k, c.y_layout(), c.ld_pad);
  constexpr Value kNaN = std::numeric_limits<Value>::quiet_NaN();
  constexpr Value kInf = std::numeric_limits<Value>::infinity();
  for (std::int64_t i = 0; i < n_in; ++i)
    for (std::int64_t j = 0; j < c.k; ++j)
      x.view(i, j) = c.nan_x ? ((i + j) % 3 == 0 ? kNaN : ((i + j) % 3 == 1 ? kInf : -kInf))
                             : static_cast<Value>(rng.symmetric());
  for (std::int64_t i = 0; i < n_out; ++i)
    for (std::int64_t j = 0; j < c.k; ++j) y.view(i, j) = c.beta == 0 ? kNaN : static_cast<Value>(rng.symmetric());
  const std::vector<Value> y0 = y.data;  // padding included (NaN)

  try {
    product(static_cast<Value>(c.alpha), DenseView<const Value>(x.view), static_cast<Value>(c.beta), y.view);
  } catch (const std::exception& e) {
    return c.describe() + ": product threw: " + e.what();
  }

  // The padding is untouched (bit for bit: NaN != NaN).
  const DenseView<const Value> y0_view{y0.data(), y.view.rows, y.view.cols, y.view.ld, y.view.layout};
  std::vector<bool> inside(y.data.size(), false);
  for (std::int64_t i = 0; i < n_out; ++i)
    for (std::int64_t j = 0; j < c.k; ++j) inside[static_cast<std::size_t>(y.view.offset(i, j))] = true;
  for (std::size_t p = 0; p < y.data.size(); ++p)
    if (!inside[p] && std::memcmp(&y.data[p], &y0[p], sizeof(Value)) != 0)
      return c.describe() + ": padding of Y at offset " + std::to_string(p) + " was written";

  std::vector<double> xj(static_cast<std::size_t>(n_in)), y_ref(static_cast<std::size_t>(n_out));
  std::vector<Value> got(static_cast<std::size_t>(n_out)), y0j(static_cast<std::size_t>(n_out));
  const std::vector<double> no_magnitude(static_cast<std::size_t>(n_out), 0.0);
  for (std::int64_t j = 0; j < c.k; ++j) {
    for (std::int64_t i = 0; i < n_out; ++i) {
      got[i] = y.view(i, j);
      y0j[i] = y0_view(i, j);
    }
    std::vector<double> magnitude;
    if (c.alpha == 0) {
      for (std::int64_t i = 0; i < n_out; ++i) y_ref[i] = c.beta == 0 ? 0.0 : c.beta * static_cast<double>(y0j[i]);
      magnitude = no_magnitude;
    } else {
      for (std::int64_t i = 0; i < n_in; ++i) xj[i] = static_cast<double>(x.view(i, j));
      for (std::int64_t i = 0; i < n_out; ++i) y_ref[i] = static_cast<double>(y0j[i]);
      // The oracle's body without its O(nnz) validation per column (a_ref is valid: a converted
      // copy of a validated matrix); the magnitude is reference_magnitude's loop.
      cpu::detail::reference_kernel<double, std::int64_t>(a_ref, op, c.alpha, xj.data(), c.beta, y_ref.data());
      magnitude.assign(static_cast<std::size_t>(n_out), 0.0);
      for (std::int64_t r = 0; r < a_ref.rows; ++r)
        for (std::int64_t p = a_ref.row_ptr[r]; p < a_ref.row_ptr[r + 1]; ++p) {
          const std::int64_t out = op == Operation::NonTranspose ? r : a_ref.col_idx[p];
          const std::int64_t in = op == Operation::NonTranspose ? a_ref.col_idx[p] : r;
          magnitude[out] += std::abs(a_ref.values[p] * xj[in]);
        }
    }
    const auto report = check_error_bound<Value>(got, y_ref, y0j, magnitude, lengths, c.alpha, c.beta);
    if (!report.passed()) return c.describe() + ", column " + std::to_string(j) + ": " + report.describe();
  }
  return {};
}

inline constexpr double kSpmmScalars[] = {0.0, 1.0, -1.0, 0.5};

// The cases run on every zoo matrix: all 16 (alpha, beta) pairs at k = 3 (row-major, padded ld) and
// k = 5 (column-major), alpha = 0 with NaN/Inf in X, k = 1, 8, 33 in both layouts, and row-major k
// of 3 to 36 with 4-aligned leading dimensions.
inline std::vector<SpmmCase> zoo_spmm_cases() {
  std::vector<SpmmCase> cases;
  for (double alpha : kSpmmScalars)
    for (double beta : kSpmmScalars) {
      cases.push_back({3, Layout::RowMajor, 2, alpha, beta, false});
      cases.push_back({5, Layout::ColMajor, 0, alpha, beta, false});
    }
  for (double beta : {0.0, -1.0}) {
    cases.push_back({4, Layout::RowMajor, 1, 0.0, beta, true});
    cases.push_back({4, Layout::ColMajor, 3, 0.0, beta, true});
  }
  for (std::int64_t k : {1, 8, 33})
    for (Layout layout : {Layout::RowMajor, Layout::ColMajor}) cases.push_back({k, layout, k == 8 ? 3 : 0, 0.5, -1.0, false});
  // Row-major leading dimensions that are multiples of 4 while k is not: CUDA's 16-byte vector tiles
  // with partial vectors at the tile's edge, next to NaN padding they must not read.
  for (auto [k, pad] : {std::pair<std::int64_t, std::int64_t>{3, 1}, {5, 3}, {6, 2}, {7, 1}, {13, 3}, {20, 4}, {36, 0}})
    cases.push_back({k, Layout::RowMajor, pad, k % 2 ? -1.0 : 0.5, k % 3 ? 0.0 : 0.5, false});
  // X and Y in different layouts (each view carries its own).
  cases.push_back({6, Layout::RowMajor, 1, 1.0, 0.5, false, true});
  cases.push_back({9, Layout::ColMajor, 0, -1.0, 0.0, false, true});
  return cases;
}

// Every k of kSpmmColumns in both layouts, with and without padding, beta = 0 and beta != 0.
inline std::vector<SpmmCase> k_sweep_cases() {
  std::vector<SpmmCase> cases;
  for (std::int64_t k : kSpmmColumns)
    for (Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
      cases.push_back({k, layout, 0, 1.0, 0.0, false});
      cases.push_back({k, layout, 7, -0.5, 2.0, false});
    }
  return cases;
}

template <class Value, class Index, class Runner>
void check_spmm_matrix(const CsrMatrix<double, std::int64_t>& matrix, Operation op,
                       const std::vector<SpmmCase>& cases, std::uint64_t seed) {
  CsrMatrix<Value, Index> a;
  try {
    a = convert<Value, Index>(matrix);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << "matrix does not fit the index type: " << e.what();
  }
  Product<Value> product;
  try {
    product = Runner::template make<Value, Index>(a, op);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << e.what();
  }
  int failures = 0;
  std::uint64_t s = seed;
  for (const SpmmCase& c : cases) {
    const std::string failure = check_spmm_case<Value, Index>(a, op, c, product, ++s);
    if (!failure.empty()) {
      ADD_FAILURE() << failure;
      if (++failures >= 5) return;
    }
  }
}

struct SpmmZooParam {
  std::size_t zoo_index;
  Operation op;
  int types;  // 0 float/int32, 1 double/int32, 2 float/int64, 3 double/int64
};

inline std::vector<SpmmZooParam> spmm_zoo_params() {
  std::vector<SpmmZooParam> params;
  const auto& z = zoo();
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (!z[i].generated) continue;  // the SuiteSparse files: the CUDA sweep and the benchmark
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      params.push_back({i, op, 0});
      params.push_back({i, op, 1});
      if (z[i].index64) params.push_back({i, op, 3});
    }
  }
  return params;
}

inline std::string spmm_param_name(const testing::TestParamInfo<SpmmZooParam>& info) {
  static const char* kTypes[] = {"f32_i32", "f64_i32", "f32_i64", "f64_i64"};
  return zoo()[info.param.zoo_index].name + (info.param.op == Operation::NonTranspose ? "_N_" : "_T_") +
         kTypes[info.param.types];
}

template <class Runner>
void run_spmm_zoo_param(const SpmmZooParam& p, const std::vector<SpmmCase>& cases) {
  const auto& m = zoo_matrix(p.zoo_index);
  const std::uint64_t seed = hash_name(zoo()[p.zoo_index].name) + static_cast<std::uint64_t>(p.op) * 131 + p.types;
  switch (p.types) {
    case 0: check_spmm_matrix<float, std::int32_t, Runner>(m, p.op, cases, seed); break;
    case 1: check_spmm_matrix<double, std::int32_t, Runner>(m, p.op, cases, seed); break;
    case 2: check_spmm_matrix<float, std::int64_t, Runner>(m, p.op, cases, seed); break;
    default: check_spmm_matrix<double, std::int64_t, Runner>(m, p.op, cases, seed); break;
  }
}

// Matrices of the k sweep: rows of every shape the kernels tell apart.
inline constexpr const char* kSpmmSweepMatrices[] = {"power_law_rmat12", "huge_row", "empty_rows", "tall_5000x37",
                                                     "tiny_unsorted_duplicates", "one_column"};

}  // namespace spmv::test

// Prefix: a name (Cpu, Cuda); Runner: the backend's runner type (see the top of this file); Skip: an
// expression that, when true, skips (no device).
#define SPMV_SPMM_TESTS(Prefix, Runner, Skip)                                                                    \
  namespace spmv::test {                                                                                         \
  class Prefix##SpmmZoo : public testing::TestWithParam<SpmmZooParam> {};                                        \
  TEST_P(Prefix##SpmmZoo, MatchesReference) {                                                                    \
    if (Skip) GTEST_SKIP() << "no CUDA device";                                                                  \
    run_spmm_zoo_param<Runner>(GetParam(), zoo_spmm_cases());                                                    \
  }                                                                                                              \
  INSTANTIATE_TEST_SUITE_P(Prefix, Prefix##SpmmZoo, testing::ValuesIn(spmm_zoo_params()), spmm_param_name);     \
  class Prefix##SpmmColumns : public testing::TestWithParam<const char*> {};                                   \
  TEST_P(Prefix##SpmmColumns, EveryKBothLayoutsAndOperations) {                                                  \
    if (Skip) GTEST_SKIP() << "no CUDA device";                                                                  \
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})                                         \
      for (int types : {0, 1}) {                                                                                 \
        SCOPED_TRACE(std::string(op == Operation::NonTranspose ? "N " : "T ") + (types == 0 ? "float" : "double")); \
        run_spmm_zoo_param<Runner>({zoo_index(GetParam()), op, types}, k_sweep_cases());                         \
      }                                                                                                          \
  }                                                                                                              \
  INSTANTIATE_TEST_SUITE_P(Prefix, Prefix##SpmmColumns, testing::ValuesIn(kSpmmSweepMatrices));                 \
  }  // namespace spmv::test
