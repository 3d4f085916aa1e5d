#pragma once
// The tolerance of every floating-point comparison in the tests, derived from an error bound rather
// than picked (STYLE.md §9).
//
// Higham, "Accuracy and Stability of Numerical Algorithms" (2nd ed.), §3.1: a sum of n products
// computed in ANY order satisfies |fl(s) - s| <= gamma_n * sum |a_j x_j|, gamma_n = n*u / (1 - n*u),
// u = eps/2 the unit roundoff. An output entry y_i = alpha*s_i + beta*y0_i adds the multiplications
// by alpha and beta, the final addition, and, in split algorithms, one more addition per piece a row
// was split into (carry-outs, column chunks, HYB/COO parts: at most n pieces for n entries).
// Everything together stays below gamma_{2n+4} ~ (n+2)*eps, and the double reference contributes at
// most (n+2)*eps_double/2 more. We allow
//
//   |y_i - y_ref_i| <= c(n) * eps(Value) * (|beta|*|y0_i| + |alpha| * sum_j |a_ij * x_j|) + c(n) * tiny
//   c(n) = 2 * (n + 2),  n = stored entries of output row i of op(A),
//
// twice the estimate, which covers the 1/(1 - n*u) factor for n*u <= 1/2 (n up to 8e6 in float).
// `tiny` (the smallest normal number) absorbs underflow, where relative bounds do not hold.
// NaN never passes; infinities pass only when equal.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"

namespace spmv::test {

inline double bound_factor(std::int64_t row_length) { return 2.0 * (static_cast<double>(row_length) + 2.0); }

// Entries per output row of op(A): row lengths for N, column counts for T.
template <class Value, class Index>
std::vector<std::int64_t> output_row_lengths(const CsrMatrix<Value, Index>& a, Operation op) {
  if (op == Operation::NonTranspose) {
    std::vector<std::int64_t> n(static_cast<std::size_t>(a.rows));
    for (Index r = 0; r < a.rows; ++r) n[r] = a.row_ptr[r + 1] - a.row_ptr[r];
    return n;
  }
  std::vector<std::int64_t> n(static_cast<std::size_t>(a.cols), 0);
  for (auto c : a.col_idx) ++n[c];
  return n;
}

struct BoundReport {
  double worst_ratio = 0;      // max over rows of |y - y_ref| / bound; +inf when a NaN was met
  std::int64_t worst_row = -1;  // -1 when there are no rows
  double value = 0, expected = 0, bound = 0, error = 0;  // at worst_row
  std::size_t rows_over = 0;   // rows whose ratio exceeds 1

  bool passed() const { return worst_ratio <= 1.0; }
  std::string describe() const {
    std::ostringstream s;
    s.precision(17);
    s << rows_over << " row(s) over the bound; worst row " << worst_row << ": got " << value << ", reference "
      << expected << ", error " << error << " vs bound " << bound << " (ratio " << worst_ratio << ")";
    return s.str();
  }
};

// y: the result under test; y_ref: the double reference; y0: y before the product (ignored when
// beta == 0, where it may be NaN); magnitude: sum_j |a_ij*x_j| per row (cpu::reference_magnitude).
template <class Value>
BoundReport check_error_bound(std::span<const Value> y, std::span<const double> y_ref, std::span<const Value> y0,
                              std::span<const double> magnitude, std::span<const std::int64_t> row_lengths,
                              double alpha, double beta) {
  constexpr double eps = std::numeric_limits<Value>::epsilon();
  constexpr double tiny = std::numeric_limits<Value>::min();
  BoundReport report;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double got = static_cast<double>(y[i]);
    const double want = y_ref[i];
    const double c = bound_factor(row_lengths[i]);
    const double scale = (beta == 0 ? 0.0 : std::abs(beta) * std::abs(static_cast<double>(y0[i]))) +
                         std::abs(alpha) * magnitude[i];
    const double bound = c * eps * scale + c * tiny;
    double error, ratio;
    if (std::isnan(got) || std::isnan(want)) {
      error = ratio = std::numeric_limits<double>::infinity();
    } else if (std::isinf(got) || std::isinf(want)) {
      error = ratio = got == want ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      error = std::abs(got - want);
      ratio = error / bound;
    }
    if (ratio > 1.0) ++report.rows_over;
    if (report.worst_row < 0 || ratio > report.worst_ratio) {
      report.worst_ratio = ratio;
      report.worst_row = static_cast<std::int64_t>(i);
      report.value = got;
      report.expected = want;
      report.bound = bound;
      report.error = error;
    }
  }
  return report;
}

}  // namespace spmv::test
