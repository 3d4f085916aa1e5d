// Auto's A*x rule (src/core/auto_rule.hpp) on the row statistics of generated matrices of each class,
// and the repayment model's behaviour: conversions need enough expected products, more for smaller
// matrices, and never happen without the hint.
#include "core/auto_rule.hpp"

#include <gtest/gtest.h>

#include "spmv/generators.hpp"
#include "spmv/stats.hpp"

namespace spmv::detail {
namespace {

RowShape shape_of(const gen::Matrix& a) {
  const MatrixStats s = compute_stats(a);
  return {s.rows, s.cols, s.nnz, s.row_mean, s.row_std, s.row_max, s.empty_rows};
}

TEST(AutoRule, ClassesOfGeneratedMatrices) {
  EXPECT_EQ(classify_rows(shape_of(gen::poisson2d(20))), RowClass::Small);
  EXPECT_EQ(classify_rows(shape_of(gen::poisson2d(300))), RowClass::Short);
  EXPECT_EQ(classify_rows(shape_of(gen::stencil27(30))), RowClass::Long);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(400000, 400000, 0.05, 16, 1))), RowClass::MostlyEmpty);
  // Over 90% empty with non-empty rows of 32 and more (from 2^20 nonzeros): csr-vector's walk of 32 rows a
  // warp at their own width; in launch-bound products merge-path still.
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(1000000, 1000000, 0.05, 32, 1))), RowClass::MostlyEmptyLongRows);
  EXPECT_EQ(csr_kernel_for(RowClass::MostlyEmptyLongRows), Algorithm::CsrVector);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(1000000, 1000000, 0.05, 16, 1))), RowClass::MostlyEmpty);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(200000, 200000, 0.05, 64, 1))), RowClass::MostlyEmpty);
  EXPECT_EQ(classify_rows(shape_of(gen::long_rows(100000, 100000, 4, 50000, 4, 1))), RowClass::FewHugeRows);
  // R-MAT's default skew (a = 0.57) gives a coefficient of variation of 5-12: power law (segmented-sum),
  // not the few huge rows of long_rows (cv 30 and more, csr-vector's split).
  EXPECT_EQ(classify_rows(shape_of(gen::rmat(18, 16, 1))), RowClass::PowerLaw);
  EXPECT_EQ(classify_rows(shape_of(gen::rmat(18, 8, 1, 0.5, 0.1667, 0.1667))), RowClass::PowerLaw);
  EXPECT_EQ(csr_kernel_for(RowClass::PowerLaw), Algorithm::SegmentedSum);
  EXPECT_EQ(classify_rows(shape_of(gen::rmat(16, 16, 1))), RowClass::LaunchBoundLongRows);
  // The same long rows in a launch-bound product (under 2^20 nonzeros): csr-vector's short chunks.
  EXPECT_EQ(classify_rows(shape_of(gen::rmat(14, 16, 1))), RowClass::LaunchBoundLongRows);
  EXPECT_EQ(csr_kernel_for(RowClass::LaunchBoundLongRows), Algorithm::CsrVector);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(200000, 200000, 0.5, 8, 1))), RowClass::Irregular);
  // Three quarters empty: non-empty rows up to 40 long stay with csr-vector, longer ones go to
  // segmented-sum; in launch-bound products (under 2^20 nonzeros) those over 20 go to merge-path.
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(200000, 200000, 0.25, 16, 1))), RowClass::Irregular);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(200000, 200000, 0.25, 32, 1))), RowClass::Irregular);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(200000, 200000, 0.25, 64, 1))), RowClass::HalfEmptyLongRows);
  EXPECT_EQ(csr_kernel_for(RowClass::HalfEmptyLongRows), Algorithm::SegmentedSum);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(40000, 40000, 0.25, 64, 1))), RowClass::MostlyEmpty);
  EXPECT_EQ(csr_kernel_for(RowClass::MostlyEmpty), Algorithm::MergePath);
  // Launch-bound products keep the first fit's bound of 20: rows of 32 there take merge-path.
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(40000, 40000, 0.25, 32, 1))), RowClass::MostlyEmpty);
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(40000, 40000, 0.25, 16, 1))), RowClass::Irregular);
  // Long rows but under half empty: csr-vector.
  EXPECT_EQ(classify_rows(shape_of(gen::mostly_empty(200000, 200000, 0.6, 32, 1))), RowClass::Irregular);
}

TEST(AutoRule, EveryClassHasACsrKernel) {
  for (RowClass c : {RowClass::Small, RowClass::FewHugeRows, RowClass::PowerLaw, RowClass::LaunchBoundLongRows,
                     RowClass::MostlyEmpty, RowClass::MostlyEmptyLongRows, RowClass::HalfEmptyLongRows, RowClass::Irregular, RowClass::Short,
                     RowClass::Long}) {
    const Algorithm a = csr_kernel_for(c);
    EXPECT_TRUE(a == Algorithm::CsrScalar || a == Algorithm::CsrVector || a == Algorithm::MergePath ||
                a == Algorithm::SegmentedSum)
        << to_string(c);
  }
  EXPECT_EQ(csr_kernel_for(RowClass::Short), Algorithm::CsrScalar);
}

TEST(AutoRule, ConversionsNeedTheHintAndEnoughProducts) {
  const RowShape big = shape_of(gen::poisson2d(1000));  // 5 M nonzeros
  const RowShape small = shape_of(gen::poisson2d(40));  // 8 k nonzeros: launch-bound products
  for (int bytes : {4, 8}) {
    EXPECT_FALSE(conversion_repaid(Algorithm::Dia, big, bytes, 0));
    EXPECT_FALSE(conversion_repaid(Algorithm::Dia, big, bytes, 1));
    EXPECT_TRUE(conversion_repaid(Algorithm::Dia, big, bytes, 100));
    // A launch-bound product (under 2^20 nonzeros) never converts to DIA, however many are expected.
    EXPECT_FALSE(conversion_repaid(Algorithm::Dia, small, bytes, 100));
    EXPECT_FALSE(conversion_repaid(Algorithm::Dia, small, bytes, 1 << 30));
    EXPECT_TRUE(conversion_repaid(Algorithm::Ell, small, bytes, 100000));
    // Monotone in the number of products.
    std::int64_t first = 0;
    for (std::int64_t n = 1; n <= (1 << 20); n *= 2)
      if (conversion_repaid(Algorithm::Ell, big, bytes, n)) {
        if (first == 0) first = n;
      } else {
        EXPECT_EQ(first, 0) << "repaid at " << first << " but not at " << n;
      }
    EXPECT_GT(first, 1);
    // DIA, ELL and SELL have a model; the others are never converted to by Auto.
    EXPECT_TRUE(conversion_repaid(Algorithm::Sell, big, bytes, 1 << 20));
    EXPECT_FALSE(conversion_repaid(Algorithm::Sell, small, bytes, 1000));
    EXPECT_FALSE(conversion_repaid(Algorithm::Hyb, big, bytes, 1 << 30));
  }
}

TEST(AutoRule, SellForRowsMoreThanHalfEmpty) {
  const RowShape quarter = shape_of(gen::mostly_empty(1000000, 1000000, 0.25, 32, 1));  // 8 M nonzeros
  for (int bytes : {4, 8}) {
    EXPECT_EQ(format_for(classify_rows(quarter), quarter, bytes, 1000), Algorithm::Sell);
    EXPECT_EQ(format_for(classify_rows(quarter), quarter, bytes, 0), Algorithm::Auto);   // no hint: none
    EXPECT_EQ(format_for(classify_rows(quarter), quarter, bytes, 10), Algorithm::Auto);  // not repaid
  }
  // 5% and 3% non-empty: SELL in both precisions (no lower bound on the non-empty share).
  for (double fraction : {0.05, 0.03}) {
    const RowShape sparse = shape_of(gen::mostly_empty(4000000, 4000000, fraction, 64, 1));
    EXPECT_EQ(format_for(classify_rows(sparse), sparse, 4, 1000), Algorithm::Sell) << fraction;
    EXPECT_EQ(format_for(classify_rows(sparse), sparse, 8, 1000), Algorithm::Sell) << fraction;
  }
  // At most half empty: no SELL.
  const RowShape full = shape_of(gen::mostly_empty(1000000, 1000000, 0.6, 16, 1));
  EXPECT_NE(format_for(classify_rows(full), full, 4, 1000), Algorithm::Sell);
  EXPECT_NE(format_for(classify_rows(full), full, 8, 1000), Algorithm::Sell);
}

TEST(AutoRule, EllForRegularRowsUpToTheLongRowBound) {
  const RowShape uniform = shape_of(gen::random_uniform(500000, 500000, 4, 1));  // every row 4 long
  EXPECT_EQ(format_for(classify_rows(uniform), uniform, 8, 100000), Algorithm::Ell);
  EXPECT_EQ(format_for(classify_rows(uniform), uniform, 8, 0), Algorithm::Auto);
  const RowShape poisson = shape_of(gen::poisson2d(1000));  // boundary rows of 3-4: padding 1.0-1.25
  EXPECT_EQ(format_for(classify_rows(poisson), poisson, 8, 100000),
            double(poisson.rows) * poisson.max <= kEllMaxPadding * poisson.nnz ? Algorithm::Ell : Algorithm::Auto);
  // Long rows whose longest is 1.05x the mean (27 against 25.7): ELL as far as this step goes (the
  // dispatch tries DIA first, and takes it for a stencil).
  const RowShape stencil = shape_of(gen::stencil27(40));
  ASSERT_EQ(classify_rows(stencil), RowClass::Long);
  EXPECT_EQ(format_for(classify_rows(stencil), stencil, 8, 100000), Algorithm::Ell);
  // Long rows of one length: ELL up to 128 a row (when repaid), not above.
  const RowShape sixteen = shape_of(gen::random_uniform(200000, 200000, 16, 1));
  ASSERT_EQ(classify_rows(sixteen), RowClass::Long);
  EXPECT_EQ(format_for(classify_rows(sixteen), sixteen, 4, 100000), Algorithm::Ell);
  EXPECT_EQ(format_for(classify_rows(sixteen), sixteen, 8, 100000), Algorithm::Ell);
  EXPECT_EQ(format_for(classify_rows(sixteen), sixteen, 8, 0), Algorithm::Auto);
  const RowShape wide = shape_of(gen::random_uniform(40000, 40000, 256, 1));
  ASSERT_EQ(classify_rows(wide), RowClass::Long);
  EXPECT_EQ(format_for(classify_rows(wide), wide, 4, 100000), Algorithm::Auto);
  // Long rows in a matrix of fewer than 2^15 rows (EX5-like): a thread per row would leave too few threads.
  const RowShape few = shape_of(gen::random_uniform(20000, 20000, 32, 1));
  ASSERT_EQ(classify_rows(few), RowClass::Long);
  EXPECT_EQ(format_for(classify_rows(few), few, 8, 100000), Algorithm::Auto);
  // 100 products do not repay ELL on 8 M nonzeros (measured setup ~2 ms in f64; the gain ~0.1 ms).
  const RowShape eight_m = shape_of(gen::random_uniform(500000, 500000, 16, 1));
  EXPECT_EQ(format_for(classify_rows(eight_m), eight_m, 8, 100), Algorithm::Auto);
  EXPECT_EQ(format_for(classify_rows(eight_m), eight_m, 8, 1000), Algorithm::Ell);
}

// Column chunks: x within the L2 share keeps one chunk; beyond it each chunk's piece of x fits the share,
// unless the rows would get shorter than the minimum per block; the hint gates the conversion.
TEST(ColumnChunkRule, ChunksKeepXInL2AndRowsLongEnough) {
  const std::int64_t l2 = 60 << 20;  // the H200's 60 MiB
  // 4 M float columns (16 MB): within L2, one chunk.
  EXPECT_EQ(column_span_for(1 << 20, 4 << 20, 16 << 20, 4, l2), 4 << 20);
  // 64 M float columns (256 MB) and 16 a row: chunks of x within L2 each, and at least 2.
  const std::int64_t cols = std::int64_t(64) << 20, rows = 2 << 20, nnz = 16 * rows;
  const std::int64_t span = column_span_for(rows, cols, nnz, 4, l2);
  EXPECT_LT(span, cols);
  EXPECT_LE(double(span) * 4, double(l2));
  const std::int64_t chunks = (cols + span - 1) / span;
  EXPECT_GE(chunks, 2);
  EXPECT_LE(double(nnz) / double(rows) / double(chunks), 16.0);
  // The same x with 1 nonzero a row: two chunks would leave rows shorter than the minimum.
  EXPECT_EQ(column_span_for(rows, cols, rows, 4, l2), cols);
  // In double, x is twice the bytes: the span halves (or the row limit binds).
  EXPECT_LE(column_span_for(rows, cols, nnz, 8, l2), span);
  // Degenerate shapes never chunk.
  EXPECT_EQ(column_span_for(0, cols, 0, 4, l2), cols);
  EXPECT_EQ(column_span_for(rows, cols, nnz, 4, 0), cols);
  // The hint gates Auto's attempt.
  EXPECT_FALSE(column_chunks_may_pay(rows, cols, nnz, 4, l2, 0));
  EXPECT_FALSE(column_chunks_may_pay(rows, cols, nnz, 4, l2, kColumnChunkedMinApplies - 1));
  EXPECT_TRUE(column_chunks_may_pay(rows, cols, nnz, 4, l2, kColumnChunkedMinApplies));
  EXPECT_FALSE(column_chunks_may_pay(1 << 20, 4 << 20, 16 << 20, 4, l2, 100000));
}

}  // namespace
}  // namespace spmv::detail
