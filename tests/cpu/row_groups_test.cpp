// Row groups (src/cpu/row_groups.cpp): consecutive rows with the same columns, x loaded once per run of
// consecutive columns. Auto reaches the kernel only through a timing race, so these tests build it
// directly: the zoo sweep (alpha/beta grid, NaN-poisoned y), block matrices of 1-6 unknowns per node
// (groups of 1-4 rows, runs longer than a vector, runs at x's end), masked lanes that must not read
// Inf from x, the same bits for any thread count, and Auto's race.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "common/zoo.hpp"
#include "cpu/cpu_operator.hpp"
#include "spmv/cpu.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> row_groups_operator(const CsrMatrix<Value, Index>& a, int simd, int threads) {
  Options options;
  options.cpu_simd = simd;
  options.threads = threads;
  return detail::wrap_cpu_kernel(detail::make_row_groups_kernel(a, options), Algorithm::RowLoop,
                                 Operation::NonTranspose, a.rows, a.cols, 0.0);
}

// A finite-element-like matrix: `nodes` nodes of dofs[node % size] unknowns each (0 gives no rows),
// coupled to their neighbours within 2, to one far node, and the last node to itself (runs at the end of
// x); a node's unknowns are consecutive rows with the same columns, its neighbours' unknowns runs of
// consecutive columns. Node 5 is coupled to nothing (empty rows).
CsrMatrix<double, std::int64_t> block_matrix(std::int64_t nodes, const std::vector<int>& dofs, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::int64_t> first(static_cast<std::size_t>(nodes) + 1, 0);
  for (std::int64_t n = 0; n < nodes; ++n) first[n + 1] = first[n] + dofs[static_cast<std::size_t>(n) % dofs.size()];
  CsrMatrix<double, std::int64_t> a;
  a.rows = a.cols = first[nodes];
  a.row_ptr.assign(1, 0);
  for (std::int64_t n = 0; n < nodes; ++n) {
    std::vector<std::int64_t> near;
    if (n != 5) {
      for (std::int64_t m = std::max<std::int64_t>(0, n - 2); m <= std::min(nodes - 1, n + 2); ++m) near.push_back(m);
      near.push_back((n * 37 + 11) % nodes);
      if (n == 0) near.push_back(nodes - 1);
      std::sort(near.begin(), near.end());
      near.erase(std::unique(near.begin(), near.end()), near.end());
    }
    for (std::int64_t row = first[n]; row < first[n + 1]; ++row) {
      for (std::int64_t m : near)
        for (std::int64_t c = first[m]; c < first[m + 1]; ++c) {
          a.col_idx.push_back(c);
          a.values.push_back(rng.symmetric());
        }
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
    }
  }
  return a;
}

// One (simd, threads) setting per call: the sweep below spreads them over the types to keep it short.
template <class Value, class Index>
void check_sweep(const CsrMatrix<double, std::int64_t>& m, const std::string& name, int simd, int threads) {
  const auto a = convert<Value, Index>(m);
  const auto oper = row_groups_operator(a, simd, threads);
  const OperatorCheck check = check_operator(*oper, a, 71);
  EXPECT_GT(check.pairs, 0) << name;
  for (const auto& f : check.failures) ADD_FAILURE() << name << " " << oper->policy() << ": " << f;
}

const std::vector<std::vector<int>> kDofs = {{3}, {1, 2, 3, 4, 5, 6}, {6, 0, 2}, {17}};

TEST(CpuRowGroups, MatchesTheReferenceOnTheZooAndBlockMatrices) {
  for (std::size_t i = 0; i < zoo().size(); ++i) {
    if (!zoo()[i].generated) continue;
    const auto& m = zoo_matrix(i);
    check_sweep<float, std::int32_t>(m, zoo()[i].name, 1, 1);
    check_sweep<double, std::int32_t>(m, zoo()[i].name, 1, 3);
    check_sweep<float, std::int32_t>(m, zoo()[i].name, 0, 2);
    if (zoo()[i].index64) {
      check_sweep<float, std::int64_t>(m, zoo()[i].name, 1, 2);
      check_sweep<double, std::int64_t>(m, zoo()[i].name, 0, 1);
    }
  }
  for (std::size_t d = 0; d < kDofs.size(); ++d) {
    const auto m = block_matrix(60, kDofs[d], 81 + d);
    const std::string name = "block_" + std::to_string(d);
    for (int simd : {1, 0})
      for (int threads : {1, 3}) {
        check_sweep<float, std::int32_t>(m, name, simd, threads);
        check_sweep<double, std::int32_t>(m, name, simd, threads);
        check_sweep<float, std::int64_t>(m, name, simd, threads);
        check_sweep<double, std::int64_t>(m, name, simd, threads);
      }
  }
}

// The layout the kernel sees: rows of a node in groups of at most 4, runs at most a vector long (counted
// here position by position), and the count that stops early.
TEST(CpuRowGroups, GroupsRowsWithTheSameColumnsAndCutsRunsAtAVector) {
  const auto a = convert<float, std::int32_t>(block_matrix(60, {6}, 91));  // nodes of 6 rows: groups of 4 + 2
  const std::int64_t lanes = detail::row_group_lanes<float, std::int32_t>();
  std::int64_t runs = 0;
  for (std::int32_t r = 0; r < a.rows; r += r % 6 == 0 ? 4 : 2)  // the first row of each group
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1];) {
      std::int32_t length = 1;
      while (k + length < a.row_ptr[r + 1] && length < lanes && a.col_idx[k + length] == a.col_idx[k] + length)
        ++length;
      ++runs;
      k += length;
    }
  const detail::RowGroupsShape shape = detail::row_groups_shape(a);
  EXPECT_EQ(shape.groups, 120);
  EXPECT_EQ(shape.runs, runs);
  EXPECT_EQ(shape.lanes, lanes);
  const detail::RowGroupsShape capped = detail::row_groups_shape(a, 3);
  EXPECT_GT(capped.runs, 3);
  EXPECT_LT(capped.runs, shape.runs);
}

// Masked lanes of a run load 0 instead of x past the run, and groups that end at x's last entries run the
// scalar loop: an infinite x entry reaches only the rows that hold its column, for every thread count, and
// the bits do not depend on the thread count.
TEST(CpuRowGroups, MaskedLanesDoNotReadWhatIsNotTheirs) {
  const auto a = block_matrix(40, {3, 5}, 93);
  for (std::int64_t inf_col : {std::int64_t{0}, std::int64_t{7}, a.cols - 1}) {
    std::vector<double> x(static_cast<std::size_t>(a.cols), 0.5);
    x[static_cast<std::size_t>(inf_col)] = std::numeric_limits<double>::infinity();
    for (int simd : {1, 0}) {
      std::vector<double> first;
      for (int threads : {1, 2, 3}) {
        const auto oper = row_groups_operator(a, simd, threads);
        std::vector<double> y(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
        oper->apply(1.0, x, 0.0, y);
        for (std::int64_t r = 0; r < a.rows; ++r) {
          bool holds = false;
          for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) holds = holds || a.col_idx[k] == inf_col;
          EXPECT_EQ(std::isfinite(y[static_cast<std::size_t>(r)]), !holds)
              << oper->policy() << " row " << r << " inf at " << inf_col;
        }
        if (threads == 1) first = y;
        else EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(double)), 0) << oper->policy();
      }
    }
  }
}

// Auto tries row groups with the hint only where a load of x serves at least a gather's lanes of
// nonzeros (a block matrix of 3 unknowns per node: yes; a random matrix: no), never with the
// deterministic option; whichever plan it keeps matches the reference.
TEST(CpuRowGroups, AutoRacesThemOnlyWhereTheyMayPay) {
  const auto blocks = convert<float, std::int32_t>(block_matrix(3000, {3}, 95));
  const auto random = convert<float, std::int32_t>(zoo_matrix("size_4193"));
  Options hint;
  hint.expected_applies = 1000;
  hint.threads = 1;
  hint.cpu_simd = 1;
  const auto raced = make_cpu_operator(blocks, Algorithm::Auto, Operation::NonTranspose, hint);
  const detail::RowGroupsShape shape = detail::row_groups_shape(blocks);
  EXPECT_EQ(contains(raced->policy(), "row groups raced"),
            detail::cpu_measuring_allowed() && shape.runs * shape.lanes <= blocks.nnz())
      << raced->policy();
  if (contains(raced->policy(), "; groups)")) {
    EXPECT_EQ(raced->algorithm(), Algorithm::RowLoop);
    EXPECT_TRUE(contains(raced->policy(), ") row groups=")) << raced->policy();
  }
  const OperatorCheck check = check_operator(*raced, blocks, 97);
  for (const auto& f : check.failures) ADD_FAILURE() << raced->policy() << ": " << f;
  EXPECT_FALSE(contains(make_cpu_operator(random, Algorithm::Auto, Operation::NonTranspose, hint)->policy(),
                        "row groups"));
  Options deterministic = hint;
  deterministic.deterministic = true;
  EXPECT_FALSE(contains(make_cpu_operator(blocks, Algorithm::Auto, Operation::NonTranspose, deterministic)->policy(),
                        "row groups"));
}

}  // namespace
}  // namespace spmv::test
