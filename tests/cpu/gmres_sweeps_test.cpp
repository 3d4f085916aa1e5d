// The CPU GMRES's two Arnoldi sweeps (src/solvers/gmres_sweeps_simd.cpp, dispatched by Highway) against a
// plain evaluation in long double: the multi-dot h = V^T w and w.w, and the fused update
// v = (w - V h) * scale with s = V^T v and v.v, on every Highway target this CPU runs, for the bases GMRES
// stores in f64 and f32 (and a double w against a float basis, GmresBasis::Float32), on 1..34 columns
// (j = 0..33) and row counts that are not multiples of a vector or of the 256-row block (the tails), through
// the OpenMP sweep as the solver runs it.
//
// Bounds (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1): a dot product of k terms
// summed in any order, each product and sum rounded in double (unit roundoff u = 2^-53; a fused
// multiply-add rounds less), is within gamma_k * sum |a_i b_i| of the exact one, gamma_k = k u / (1 - k u).
// An entry of v: the projection (columns products and sums), the subtraction and the scaling in double,
// gamma_{columns + 2} * scale * (|w_i| + sum_c |h_c V_ci|), then one rounding to the basis's type (u_B |v_i|).
// The reference's own error (long double, u = 2^-64) is added to each bound.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/zoo.hpp"
#include "solvers/gmres_arnoldi.hpp"

namespace spmv::test {
namespace {

template <class BasisType, class WType>
struct SweepTypes {
  using Basis = BasisType;
  using W = WType;
};

template <class T>
class GmresSweeps : public testing::Test {};
using SweepTypeList = testing::Types<SweepTypes<double, double>, SweepTypes<float, float>, SweepTypes<float, double>>;
TYPED_TEST_SUITE(GmresSweeps, SweepTypeList);

double gamma(std::int64_t k) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return static_cast<double>(k) * u / (1 - static_cast<double>(k) * u);
}

// The long double reference's own error on a sum of magnitude `magnitude` of k terms.
double reference_error(std::int64_t k, double magnitude) {
  return 2.0 * static_cast<double>(k) * std::numeric_limits<long double>::epsilon() * magnitude;
}

// sums[c] = V_c . x for c < columns and sums[columns] = x . x, against the long double sums.
template <class Basis, class X>
void check_dots(const std::vector<Basis>& v, std::int64_t n, int columns, const X* x, const double* sums,
                const std::string& where) {
  for (int c = 0; c <= columns; ++c) {
    long double exact = 0;
    double magnitude = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const long double a = c < columns ? static_cast<long double>(v[c * n + i]) : static_cast<long double>(x[i]);
      exact += a * static_cast<long double>(x[i]);
      magnitude += std::abs(static_cast<double>(a * static_cast<long double>(x[i])));
    }
    const double bound = gamma(n) * magnitude + reference_error(n, magnitude);
    ASSERT_LE(std::abs(sums[c] - static_cast<double>(exact)), bound) << where << " sum " << c;
  }
}

// 1, a vector's width and around it, a block and around it, 2^11 + 97, and a tail of 3 past 16 blocks.
const std::int64_t kRowCounts[] = {1, 5, 8, 31, 255, 256, 257, 353, 2145, 4099};
constexpr int kMaxColumns = 34;

// The sweeps of the target dispatched now against the plain sums, on every row count and column count.
template <class Basis, class W>
void check_sweeps() {
  const double basis_unit = std::numeric_limits<Basis>::epsilon() / 2;
  const double scale = 1.0 / 3.0;
  for (const std::int64_t n : kRowCounts) {
    SplitMix64 rng(static_cast<std::uint64_t>(n) * 7919 + sizeof(Basis) * 31 + sizeof(W));
    std::vector<Basis> v(static_cast<std::size_t>(kMaxColumns) * n);
    std::vector<W> w(n);
    std::vector<double> h(kMaxColumns);
    for (auto& x : v) x = static_cast<Basis>(rng.symmetric());
    for (auto& x : w) x = static_cast<W>(rng.symmetric());
    for (auto& x : h) x = rng.symmetric();
    for (int columns = 1; columns <= kMaxColumns; ++columns) {
      const std::string where = "n=" + std::to_string(n) + " columns=" + std::to_string(columns);
      // The multi-dot.
      std::vector<double> got(columns + 1);
      solvers::arnoldi::multi_dot(v.data(), n, columns, w.data(), got.data());
      check_dots(v, n, columns, w.data(), got.data(), where + " multi-dot");
      if (testing::Test::HasFatalFailure()) return;
      // The fused update.
      std::vector<Basis> out(n);
      std::vector<double> s(columns + 1);
      solvers::arnoldi::subtract_scale_and_dot(v.data(), n, columns, h.data(), scale, w.data(), out.data(), s.data());
      for (std::int64_t i = 0; i < n; ++i) {
        long double projection = 0;
        double magnitude = std::abs(static_cast<double>(w[i]));
        for (int c = 0; c < columns; ++c) {
          projection += static_cast<long double>(h[c]) * static_cast<long double>(v[c * n + i]);
          magnitude += std::abs(h[c] * static_cast<double>(v[c * n + i]));
        }
        const auto exact = static_cast<double>((static_cast<long double>(w[i]) - projection) * scale);
        const double before_rounding = gamma(columns + 2) * scale * magnitude;
        const double bound = basis_unit * std::abs(exact) + (1 + basis_unit) * before_rounding +
                             reference_error(columns + 2, scale * magnitude);
        ASSERT_LE(std::abs(static_cast<double>(out[i]) - exact), bound) << where << " update row " << i;
      }
      check_dots(v, n, columns, out.data(), s.data(), where + " update");
      if (testing::Test::HasFatalFailure()) return;
      // In place (a basis in the value type: w is the basis's column j + 1): the same entries and sums.
      if constexpr (std::is_same_v<Basis, W>) {
        std::vector<W> in_place = w;
        std::vector<double> s_in_place(columns + 1);
        solvers::arnoldi::subtract_scale_and_dot(v.data(), n, columns, h.data(), scale, in_place.data(),
                                                 in_place.data(), s_in_place.data());
        ASSERT_EQ(std::memcmp(in_place.data(), out.data(), n * sizeof(W)), 0) << where << " in place";
        ASSERT_EQ(std::memcmp(s_in_place.data(), s.data(), s.size() * sizeof(double)), 0) << where << " in place";
      }
    }
  }
}

// Every Highway target compiled in and supported by this CPU (on x86: AVX-512, AVX2, SSE4: 8, 4 and 2
// double lanes, so each leaves other tails), forced in turn as tests/cpu/cpu_dispatch_test.cpp does.
TYPED_TEST(GmresSweeps, EqualThePlainSumsWithinTheirBound) {
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (const std::int64_t target : targets) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    check_sweeps<typename TypeParam::Basis, typename TypeParam::W>();
    if (testing::Test::HasFatalFailure()) break;
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace spmv::test
