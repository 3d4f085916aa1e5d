// The CPU semiring product on SELL-C-sigma (spmv/semiring.hpp, Algorithm::Sell; src/cpu/semiring_sell.cpp):
// a hand-computed matrix whose padding would change every semiring but plus-times if it entered a row, the
// differential body of common/semiring_check.hpp over the whole zoo through semiring_multiply (1 and 3
// threads, f64/i32 and f32/i64) and through the kernel on conversions with other slice heights and sorting
// windows (C = 1, 4 and 16; sigma = C, 8 and the whole matrix), the row loop's bits (plus-times included),
// and the padding rule's refusal.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/semiring_kernels.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/semiring.hpp"

namespace spmv::test {
namespace {

// Whether semiring_multiply's conversion (C the CPU's SIMD width, the default sigma and padding bound)
// refuses `a`.
template <class Value, class Index>
bool sell_refuses(const CsrMatrix<Value, Index>& a) {
  Options sell;
  sell.sell_c = spmv::detail::cpu_sell_c<Value, Index>(Options{});
  return to_sell_refuses(a, sell);
}

// padding_bait() (common/semiring_check.hpp): C = 4, sigma = 4 sorts its rows 1, 3, 0, 2 into one slice of
// width 3, so row 0 has two padding slots, row 2 three, row 3 one.
TEST(SemiringSell, PaddingNeverEntersARow) {
  const PaddingBait bait = padding_bait();
  Options options;
  options.sell_c = 4;
  options.sell_sigma = 4;
  const auto m = to_sell(bait.a, options);
  ASSERT_EQ(m.perm, (std::vector<std::int32_t>{1, 3, 0, 2}));  // sigma sorted the rows
  ASSERT_EQ(m.slice_width, (std::vector<std::int32_t>{3}));
  for (const auto& [s, want] : bait.want)
    for (int threads : {1, 2}) {
      std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
      cpu::detail::semiring_sell(s, m, bait.x.data(), y.data(), threads);
      EXPECT_EQ(y, want) << to_string(s) << ", " << threads << " threads";
    }
}

class SemiringSellZoo : public testing::TestWithParam<std::size_t> {};

// semiring_multiply with Algorithm::Sell on every zoo matrix: the definition's values, or Unsupported exactly
// where the SELL conversion's padding rule refuses (the product never falls back to another kernel).
TEST_P(SemiringSellZoo, MatchesTheDefinition) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 11;
  const auto check = [&](const auto& m, const char* types) {
    using Value = typename std::decay_t<decltype(m)>::value_type;
    for (int threads : {1, 3}) {
      SCOPED_TRACE(std::string(types) + ", threads " + std::to_string(threads));
      if (sell_refuses(m)) {
        std::vector<Value> x(static_cast<std::size_t>(m.cols), Value(1)), y(static_cast<std::size_t>(m.rows));
        EXPECT_THROW(semiring_multiply(Semiring::MinPlus, m, std::span<const Value>(x), std::span(y), threads,
                                       Algorithm::Sell),
                     Unsupported);
        continue;
      }
      const auto run = [threads](Semiring s, const auto& mm, const auto& x, auto& y) {
        semiring_multiply(s, mm, std::span(x), std::span(y), threads, Algorithm::Sell);
      };
      for (const auto& f : check_semirings(m, seed, run)) ADD_FAILURE() << f;
    }
  };
  check(convert<double, std::int32_t>(a), "f64/i32");
  check(convert<float, std::int64_t>(a), "f32/i64");
}

// The kernel on conversions with other slice heights and windows, the padding bound lifted (the zoo's huge
// rows included): one row a slice (C = 1), slices of 4 sorted within 8 rows, and slices of 16 sorted over
// the whole matrix (the most permuted).
TEST_P(SemiringSellZoo, OtherSlicesAndWindows) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 12;
  struct Shape {
    int c, sigma;
  };
  const auto whole = static_cast<int>(std::max<std::int64_t>(16, (a.rows + 15) / 16 * 16));
  for (const Shape shape : {Shape{1, 1}, Shape{4, 8}, Shape{16, whole}}) {
    SCOPED_TRACE("C " + std::to_string(shape.c) + ", sigma " + std::to_string(shape.sigma));
    Options options;
    options.sell_c = shape.c;
    options.sell_sigma = shape.sigma;
    options.max_padding = 1e9;
    const auto run = [&options](Semiring s, const auto& m, const auto& x, auto& y) {
      const auto sell = to_sell(m, options);
      cpu::detail::semiring_sell(s, sell, x.data(), y.data(), 2);
    };
    for (const auto& f : check_semirings(convert<double, std::int32_t>(a), seed, run)) ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f : check_semirings(convert<float, std::int64_t>(a), seed, run)) ADD_FAILURE() << "f32/i64 " << f;
  }
}

// SELL's lanes fold their rows in storage order in one chain, as the row loop does for plus-times (the same
// bits) and on rows under 16 entries for the others; min, max and or give the row loop's values on longer rows
// too (its four chains), a zero's sign aside. x with signed zeros, NaN and +-Inf; a NaN result may carry another
// sign (x86's add of two NaN returns one operand, and the compiler may put either first: the row loop gave -nan
// where SELL gave nan for plus-times on cage8).
template <class Value, class Index>
void expect_sell_bits_equal_rows(const CsrMatrix<Value, Index>& a, std::uint64_t seed) {
  if (sell_refuses(a)) return;  // MatchesTheDefinition checks the refusal
  const std::vector<Value> x = bits_probe_x<Value>(a.cols, seed);
  for (Semiring s : kSemirings) {
    std::vector<Value> rows(static_cast<std::size_t>(a.rows), std::numeric_limits<Value>::quiet_NaN()), sell(rows);
    semiring_multiply(s, a, std::span<const Value>(x), std::span(rows), 2, Algorithm::RowLoop);
    semiring_multiply(s, a, std::span<const Value>(x), std::span(sell), 2, Algorithm::Sell);
    if (const std::int64_t i = first_bits_difference(s, rows, sell); i >= 0)
      ADD_FAILURE() << to_string(s) << ", row " << i << ": sell " << sell[i] << ", row loop " << rows[i];
  }
}

TEST_P(SemiringSellZoo, GivesTheRowLoopsBits) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 13;
  expect_sell_bits_equal_rows(convert<double, std::int32_t>(a), seed);
  expect_sell_bits_equal_rows(convert<float, std::int64_t>(a), seed);
}

INSTANTIATE_TEST_SUITE_P(Zoo, SemiringSellZoo, zoo_indices(), zoo_case_name);

// The zoo's huge_row (one row of 100,000 among 999 of 3) is what the padding rule refuses, rather than
// a kernel falling back; R-MAT scale 14 and a 2D grid are converted and run, and Auto never picks SELL.
TEST(SemiringSell, RefusalAndAuto) {
  const auto huge = convert<double, std::int32_t>(gen::long_rows(1000, 100003, 1, 100000, 3, 104));
  ASSERT_TRUE(sell_refuses(huge));
  std::vector<double> x(static_cast<std::size_t>(huge.cols), 1.0), y(static_cast<std::size_t>(huge.rows));
  EXPECT_THROW(semiring_multiply(Semiring::MinPlus, huge, std::span<const double>(x), std::span(y), 2,
                                 Algorithm::Sell),
               Unsupported);
  const auto rmat = convert<double, std::int32_t>(gen::rmat(14, 16, 32));
  const auto grid = convert<float, std::int64_t>(gen::poisson2d(200));
  ASSERT_FALSE(sell_refuses(rmat));
  ASSERT_FALSE(sell_refuses(grid));
  const auto run = [](Semiring s, const auto& m, const auto& xx, auto& yy) {
    semiring_multiply(s, m, std::span(xx), std::span(yy), 2, Algorithm::Sell);
  };
  for (const auto& f : check_semirings(rmat, 51, run)) ADD_FAILURE() << "rmat " << f;
  for (const auto& f : check_semirings(grid, 52, run)) ADD_FAILURE() << "grid " << f;
  for (int threads : {1, 2, 4}) {
    EXPECT_NE(semiring_cpu_algorithm(rmat, threads), Algorithm::Sell);
    EXPECT_NE(semiring_cpu_algorithm(grid, threads), Algorithm::Sell);
  }
}

}  // namespace
}  // namespace spmv::test
