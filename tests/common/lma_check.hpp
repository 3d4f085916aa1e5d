#pragma once
// The LMA operator's oracle, shared by the CPU and CUDA tests: the product of the assembled matrix
// (GMA, built in double) compared with the operator's result under the error bound of
// error_bound.hpp, taken over the LMA's own terms.
//
// Why the LMA's terms: y_i = sum_{e at i} sum_b K_e[a][b] x_b is not a reordering of sum_j a_ij x_j
// (a_ij = sum_e K_e[a][b] is summed first in the GMA), and with cancellation sum_e sum_b |K_e x| can
// exceed sum_j |a_ij x_j|. Against the exact product the LMA's error is at most gamma_{n+2} times
// M_i = sum |K_e[a][b] x_b| (n = terms of row i), its stored K_e in Value are within eps/2 of the
// double ones (one more eps * M_i), and the double GMA's own assembly and product add
// gamma_{24 + 15} * M_i in double. check_error_bound allows 2 * (n + 2) * eps(Value) * (|beta y0_i| +
// |alpha| M_i) (plus underflow), which covers all of them (n >= 3 for every row with an element).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <span>
#include <vector>

#include "common/error_bound.hpp"
#include "spmv/csr.hpp"
#include "spmv/fem.hpp"

namespace spmv::test {

// y_ref = alpha * A x + beta * y0 in double; alpha == 0 reads no x, beta == 0 no y0 (both may be NaN).
template <class Value>
std::vector<double> gma_product(const CsrMatrix<double, std::int64_t>& a, double alpha, std::span<const Value> x,
                                double beta, std::span<const Value> y0) {
  std::vector<double> y(static_cast<std::size_t>(a.rows), 0.0);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double s = 0;
    if (alpha != 0)
      for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) s += a.values[k] * static_cast<double>(x[a.col_idx[k]]);
    y[i] = (alpha == 0 ? 0.0 : alpha * s) + (beta == 0 ? 0.0 : beta * static_cast<double>(y0[i]));
  }
  return y;
}

template <class Value, class Index>
BoundReport check_lma(const fem::FemProblem<Value, Index>& p, const CsrMatrix<double, std::int64_t>& gma,
                      double alpha, std::span<const Value> x, double beta, std::span<const Value> y0,
                      std::span<const Value> y) {
  const std::vector<double> ref = gma_product(gma, alpha, x, beta, y0);
  const fem::LmaReference lma = fem::lma_reference(p, alpha, x, beta, y0);
  return check_error_bound(y, std::span<const double>(ref), y0, std::span<const double>(lma.magnitude),
                           std::span<const std::int64_t>(lma.terms), alpha, beta);
}

// Fixed pseudo-random values in [-1, 1] (three decimals) per seed.
template <class Value>
std::vector<Value> lma_random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-1000, 1000);
  std::vector<Value> v(n);
  for (auto& e : v) e = static_cast<Value>(d(rng) / 1000.0);
  return v;
}

// The operator against the GMA product for alpha, beta in {0, 1, -1, 0.5}; x is all NaN when alpha
// is 0 (it must not be read) and y0 all NaN when beta is 0 (it must not be read either).
template <class Value, class Index, class LmaOperator>
void expect_lma_equals_gma(const fem::FemProblem<Value, Index>& p, const CsrMatrix<double, std::int64_t>& gma,
                           LmaOperator& op) {
  constexpr Value nan = std::numeric_limits<Value>::quiet_NaN();
  const auto n = static_cast<std::size_t>(p.unknowns);
  for (double alpha : {0.0, 1.0, -1.0, 0.5})
    for (double beta : {0.0, 1.0, -1.0, 0.5}) {
      SCOPED_TRACE("alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta));
      const std::vector<Value> x = alpha == 0 ? std::vector<Value>(n, nan) : lma_random_values<Value>(n, 1);
      const std::vector<Value> y0 = beta == 0 ? std::vector<Value>(n, nan) : lma_random_values<Value>(n, 2);
      std::vector<Value> y = y0;
      op.apply(static_cast<Value>(alpha), x, static_cast<Value>(beta), y);
      const auto report = check_lma<Value, Index>(p, gma, alpha, x, beta, y0, y);
      EXPECT_TRUE(report.passed()) << report.describe();
    }
}

}  // namespace spmv::test
