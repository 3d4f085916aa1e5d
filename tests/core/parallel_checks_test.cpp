// The structure checks and statistics that run on every `spmv bench` of a huge matrix are OpenMP-parallel
// (issue 18): their answers must not depend on the thread count. validate names the first violation,
// is_canonical finds an unsorted row wherever it is, compute_stats gives the same fields, and R-MAT's
// parallel in-place compaction equals the sequential one.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/compact_rows.hpp"
#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/stats.hpp"

namespace {

// Runs f() with omp_get_max_threads() == threads, restoring the previous setting.
template <class F>
auto with_threads(int threads, F f) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  struct Restore {
    int saved;
    ~Restore() { omp_set_num_threads(saved); }
  } restore{saved};
  return f();
}

// rows x rows with row r holding columns r, r + 1, r + 2 (cut at the edge): about 3 rows of nonzeros,
// enough for several of validate's 2^16-entry blocks.
spmv::CsrMatrix<float, std::int64_t> three_diagonals(std::int64_t rows) {
  spmv::CsrMatrix<float, std::int64_t> a;
  a.rows = a.cols = rows;
  a.row_ptr.assign(1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = r; c < std::min(rows, r + 3); ++c) {
      a.col_idx.push_back(c);
      a.values.push_back(1.0f);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

std::string validate_message(const spmv::CsrMatrix<float, std::int64_t>& a) {
  try {
    spmv::validate(a);
  } catch (const spmv::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(ParallelChecks, ValidateNamesTheFirstViolationForAnyThreadCount) {
  const auto good = three_diagonals(100000);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    EXPECT_EQ(with_threads(threads, [&] { return validate_message(good); }), "");

    auto bad_columns = good;
    bad_columns.col_idx[250001] = -1;  // in a later block than the first violation
    bad_columns.col_idx[200003] = 100000;
    bad_columns.col_idx[200004] = -7;
    EXPECT_EQ(with_threads(threads, [&] { return validate_message(bad_columns); }),
              "CSR: col_idx[200003] = 100000 is outside [0, 100000)");

    auto bad_pointers = good;
    bad_pointers.row_ptr[90000] = bad_pointers.row_ptr[90001] + 1;  // decreases at 90001
    bad_pointers.row_ptr[70000] = bad_pointers.row_ptr[70001] + 1;  // and first at 70001
    EXPECT_EQ(with_threads(threads, [&] { return validate_message(bad_pointers); }),
              "CSR: row_ptr decreases at row_ptr[70001]");

    auto bad_last_entry = good;
    bad_last_entry.col_idx.back() = 100000;
    EXPECT_NE(with_threads(threads, [&] { return validate_message(bad_last_entry); }).find("col_idx[299996]"),
              std::string::npos);
  }
}

TEST(ParallelChecks, IsCanonicalFindsAnUnsortedRowAnywhere) {
  const auto good = three_diagonals(100000);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    EXPECT_TRUE(with_threads(threads, [&] { return spmv::is_canonical(good); }));
    for (std::int64_t row : {std::int64_t{0}, std::int64_t{65536}, std::int64_t{99997}}) {
      SCOPED_TRACE(row);
      auto swapped = good;
      std::swap(swapped.col_idx[swapped.row_ptr[row]], swapped.col_idx[swapped.row_ptr[row] + 1]);
      EXPECT_FALSE(with_threads(threads, [&] { return spmv::is_canonical(swapped); }));
      auto duplicate = good;
      duplicate.col_idx[duplicate.row_ptr[row] + 1] = duplicate.col_idx[duplicate.row_ptr[row]];
      EXPECT_FALSE(with_threads(threads, [&] { return spmv::is_canonical(duplicate); }));
    }
  }
}

TEST(ParallelChecks, StatsIdenticalForAnyThreadCount) {
  // Row lengths 5 and 2500 (long rows spread evenly), over many 4096-row blocks.
  const auto a = spmv::gen::generate<double, std::int32_t>(
      "long_rows", {{"rows", 50000}, {"cols", 3000}, {"long_rows", 9}, {"long_length", 2500}, {"short_length", 5}});
  const spmv::MatrixStats one = with_threads(1, [&] { return spmv::compute_stats(a); });
  // row_std from the two-pass definition in long double, against the exact-integer formula
  long double sum_squares = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const long double dev = static_cast<long double>(a.row_ptr[r + 1] - a.row_ptr[r]) -
                            static_cast<long double>(a.nnz()) / static_cast<long double>(a.rows);
    sum_squares += dev * dev;
  }
  const double expected_std = static_cast<double>(std::sqrt(sum_squares / static_cast<long double>(a.rows)));
  EXPECT_NEAR(one.row_std, expected_std, 4 * std::numeric_limits<double>::epsilon() * expected_std);
  EXPECT_EQ(one.row_max, 2500);
  EXPECT_EQ(one.row_min, 5);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(threads);
    const spmv::MatrixStats s = with_threads(threads, [&] { return spmv::compute_stats(a); });
    EXPECT_EQ(s.row_std, one.row_std);  // exact: the same value for any thread count is the claim
    EXPECT_EQ(s.row_mean, one.row_mean);
    EXPECT_EQ(s.row_min, one.row_min);
    EXPECT_EQ(s.row_max, one.row_max);
    EXPECT_EQ(s.empty_rows, one.empty_rows);
    EXPECT_EQ(s.diagonals, one.diagonals);
    EXPECT_EQ(s.bandwidth, one.bandwidth);
    EXPECT_EQ(s.structurally_symmetric, one.structurally_symmetric);
  }
}

}  // namespace

namespace {

// compact_rows (R-MAT's last step) against row-by-row memmove: rows of random lengths keeping a random
// prefix, with early heavy duplicates (a large gap at once, as in R-MAT's first rows), a gap of one
// entry (one-row stretches), and rows that keep everything (no gap at all at the start).
TEST(ParallelChecks, CompactRowsMatchesTheSequentialMove) {
  for (int pattern = 0; pattern < 3; ++pattern) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(testing::Message() << "pattern " << pattern << ", threads " << threads);
      std::mt19937_64 rng(17 + pattern);
      const std::int64_t rows = 120000;  // pattern 0: a gap of 2.25 M entries, then 2.4 M entries to move
      std::vector<std::int64_t> from{0}, to{0};
      for (std::int64_t r = 0; r < rows; ++r) {
        // pattern 0's first rows leave a gap above compact_rows' 2^20-entry threshold for threads
        const std::int64_t length = r < 3 && pattern == 0 ? 1000000 : static_cast<std::int64_t>(rng() % 40);
        std::int64_t kept = length;
        if (pattern == 0) kept = r < 3 ? length / 4 : length - static_cast<std::int64_t>(rng() % (length / 2 + 1));
        if (pattern == 1) kept = r % 500 == 7 && length > 0 ? length - 1 : length;  // a gap of 1, rarely growing
        if (pattern == 2) kept = r < rows / 2 ? length : static_cast<std::int64_t>(rng() % (length + 1));
        from.push_back(from.back() + length);
        to.push_back(to.back() + kept);
      }
      std::vector<std::int64_t> data(static_cast<std::size_t>(from.back()));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t k = from[r]; k < from[r + 1]; ++k) data[k] = r * 100000 + (k - from[r]);
      std::vector<std::int64_t> expected = data;
      for (std::int64_t r = 0; r < rows; ++r)
        std::memmove(expected.data() + to[r], expected.data() + from[r], (to[r + 1] - to[r]) * sizeof(std::int64_t));
      spmv::detail::compact_rows(data.data(), from, to, threads);
      ASSERT_TRUE(std::equal(data.begin(), data.begin() + to.back(), expected.begin()));
    }
  }
}

}  // namespace
