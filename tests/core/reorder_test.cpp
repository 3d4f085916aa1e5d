// include/spmv/reorder.hpp: orders are permutations, RCM restores the band of scrambled grids and
// paths, the degree order sorts row lengths, permute_symmetric moves every entry where it belongs,
// and bad input is refused. Products through Options::reorder are in the differential sweeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/reorder.hpp"

namespace spmv {
namespace {

using M = CsrMatrix<double, std::int64_t>;

bool is_permutation_of_rows(const std::vector<std::int64_t>& order, std::int64_t n) {
  std::vector<std::int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> identity(static_cast<std::size_t>(n));
  std::iota(identity.begin(), identity.end(), 0);
  return sorted == identity;
}

// A random symmetric relabelling: what a mesh or graph looks like with meaningless vertex numbers.
M scrambled(const M& a, std::uint64_t seed) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(a.rows));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  return permute_symmetric(a, order);
}

M path(std::int64_t n) {  // tridiagonal: the graph is a path
  M a;
  a.rows = a.cols = n;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = std::max<std::int64_t>(0, i - 1); j <= std::min(n - 1, i + 1); ++j) {
      a.col_idx.push_back(j);
      a.values.push_back(i == j ? 2.0 : -1.0);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

TEST(Reorder, NamesRoundTrip) {
  for (Reorder r : {Reorder::None, Reorder::Rcm, Reorder::Degree}) EXPECT_EQ(parse_reorder(to_string(r)), r);
  EXPECT_EQ(parse_reorder("RCM"), Reorder::Rcm);
  EXPECT_FALSE(parse_reorder("metis").has_value());
}

TEST(Reorder, RcmRestoresTheBandOfAScrambledGrid) {
  const std::int64_t n = 30;
  const M grid = gen::poisson2d(n);  // bandwidth n
  const M shuffled = scrambled(grid, 7);
  ASSERT_GT(bandwidth(shuffled), 10 * n) << "the scrambling must destroy the band for the test to mean anything";
  const auto order = reorder_permutation(shuffled, Reorder::Rcm);
  ASSERT_TRUE(is_permutation_of_rows(order, shuffled.rows));
  // A breadth-first numbering of an n x n grid from a corner has levels of at most n rows, so no
  // neighbour is more than two levels' worth of rows away.
  EXPECT_LE(bandwidth(permute_symmetric(shuffled, order)), 2 * n);
}

TEST(Reorder, RcmNumbersAScrambledPathInOrder) {
  const M shuffled = scrambled(path(1000), 3);
  const auto order = reorder_permutation(shuffled, Reorder::Rcm);
  ASSERT_TRUE(is_permutation_of_rows(order, 1000));
  EXPECT_EQ(bandwidth(permute_symmetric(shuffled, order)), 1);  // from one end of the path to the other
}

TEST(Reorder, RcmHandlesComponentsIsolatedRowsAndUnsymmetricPatterns) {
  // Two scrambled paths, three isolated rows (one with only a diagonal), one one-way edge 7 -> 2.
  M a;
  a.rows = a.cols = 12;
  std::vector<std::vector<std::int64_t>> rows = {{1}, {0, 3}, {}, {1}, {5}, {4, 6}, {5}, {2}, {8}, {}, {}, {11}};
  for (const auto& r : rows) {
    for (auto c : r) {
      a.col_idx.push_back(c);
      a.values.push_back(1.0);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  const auto order = reorder_permutation(a, Reorder::Rcm);
  ASSERT_TRUE(is_permutation_of_rows(order, 12));
  EXPECT_LE(bandwidth(permute_symmetric(a, order)), 1);  // every component numbered contiguously
}

TEST(Reorder, DegreePutsLongRowsFirst) {
  const M a = gen::generate("rmat", {{"scale", 10}, {"edge_factor", 8}, {"seed", 5}});
  const auto order = reorder_permutation(a, Reorder::Degree);
  ASSERT_TRUE(is_permutation_of_rows(order, a.rows));
  const M b = permute_symmetric(a, order);
  for (std::int64_t i = 0; i + 1 < b.rows; ++i) ASSERT_GE(b.row_length(i), b.row_length(i + 1)) << "row " << i;
}

TEST(Reorder, PermuteMovesEveryEntryAndKeepsDuplicates) {
  // 4 x 4 with an unsorted row and a duplicate (1, 2) twice.
  const M a = make_csr<double, std::int64_t>(4, 4, {0, 2, 5, 5, 7}, {3, 0, 2, 1, 2, 0, 3},
                                              {1, 2, 3, 4, 5, 6, 7});
  const std::vector<std::int64_t> order = {2, 0, 3, 1};  // new i = old order[i]
  const M b = permute_symmetric(a, order);
  std::vector<std::int64_t> new_of(4);
  for (std::int64_t i = 0; i < 4; ++i) new_of[order[i]] = i;
  ASSERT_EQ(b.nnz(), a.nnz());
  // Every entry of A, with its multiplicity, appears in B at (new_of[i], new_of[j]).
  std::map<std::tuple<std::int64_t, std::int64_t, double>, int> expected, got;
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) ++expected[{new_of[i], new_of[a.col_idx[k]], a.values[k]}];
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t k = b.row_ptr[i]; k < b.row_ptr[i + 1]; ++k) {
      ++got[{i, b.col_idx[k], b.values[k]}];
      if (k > b.row_ptr[i]) EXPECT_LE(b.col_idx[k - 1], b.col_idx[k]) << "row " << i << " sorted";
    }
  EXPECT_EQ(got, expected);
}

TEST(Reorder, RefusesWhatIsNotASymmetricPermutation) {
  const M rect = make_csr<double, std::int64_t>(2, 3, {0, 1, 2}, {0, 2}, {1, 1});
  EXPECT_THROW(reorder_permutation(rect, Reorder::Rcm), Unsupported);
  EXPECT_THROW(reorder_permutation(rect, Reorder::Degree), Unsupported);
  const M square = path(3);
  EXPECT_THROW(permute_symmetric(square, {0, 1}), InvalidArgument);      // too short
  EXPECT_THROW(permute_symmetric(square, {0, 1, 1}), InvalidArgument);   // repeated
  EXPECT_THROW(permute_symmetric(square, {0, 1, 3}), InvalidArgument);   // out of range
  EXPECT_THROW(permute_symmetric(rect, {0, 1}), InvalidArgument);
}

TEST(Reorder, EmptyAndTinyMatrices) {
  const M empty = make_csr<double, std::int64_t>(0, 0, {0}, {}, {});
  EXPECT_TRUE(reorder_permutation(empty, Reorder::Rcm).empty());
  EXPECT_EQ(permute_symmetric(empty, {}).rows, 0);
  const M no_entries = make_csr<double, std::int64_t>(3, 3, {0, 0, 0, 0}, {}, {});
  EXPECT_TRUE(is_permutation_of_rows(reorder_permutation(no_entries, Reorder::Rcm), 3));
  EXPECT_TRUE(is_permutation_of_rows(reorder_permutation(no_entries, Reorder::Degree), 3));
}

}  // namespace
}  // namespace spmv
