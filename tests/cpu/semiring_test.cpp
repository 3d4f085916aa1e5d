// Semiring products on the CPU (issue 11, spmv/semiring.hpp): names and zeros, the differential body
// of common/semiring_check.hpp over the whole zoo for both kernels (the row loop and the merge-path
// kernel; both index types, f32 and f64, 1, 2, 3 and 7 threads), the merge-path kernel's bits against
// the row loop's, Auto's choice between them, size and algorithm refusals, and three graph algorithms
// written with them, checked against plain implementations: BFS levels (or-and), single-source
// shortest paths (Bellman–Ford with min-plus, against Dijkstra) and PageRank (power iteration with
// plus-times).
#include <gtest/gtest.h>

#include <bit>
#include <type_traits>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/semiring.hpp"

namespace spmv::test {
namespace {

TEST(Semiring, NamesAndZeros) {
  for (Semiring s : kSemirings) EXPECT_EQ(parse_semiring(to_string(s)), s);
  EXPECT_EQ(parse_semiring("MIN-PLUS"), Semiring::MinPlus);
  EXPECT_FALSE(parse_semiring("plus-min").has_value());
  EXPECT_EQ(semiring_names(), "plus-times, min-plus, max-times, or-and, max-min");
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(semiring_zero<double>(Semiring::PlusTimes), 0.0);
  EXPECT_EQ(semiring_zero<double>(Semiring::MinPlus), inf);
  EXPECT_EQ(semiring_zero<float>(Semiring::MaxTimes), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(semiring_zero<double>(Semiring::OrAnd), 0.0);
  EXPECT_EQ(semiring_zero<double>(Semiring::MaxMin), -inf);
}

class SemiringZoo : public testing::TestWithParam<std::size_t> {};

// Both kernels, forced. More threads than rows leave segments without a row end (carries only) or empty;
// the zoo's small matrices get one merge-path segment a thread, so rows are split at 2, 3 and 7 threads.
TEST_P(SemiringZoo, MatchesTheDefinition) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name);
  for (Algorithm algorithm : {Algorithm::RowLoop, Algorithm::MergeParallel})
    for (int threads : {1, 2, 3, 7}) {
      if (algorithm == Algorithm::RowLoop && (threads == 2 || threads == 7)) continue;  // its chunks: 1 and 3 suffice
      SCOPED_TRACE(std::string(to_string(algorithm)) + ", threads " + std::to_string(threads));
      const auto run = [threads, algorithm](Semiring s, const auto& m, const auto& x, auto& y) {
        semiring_multiply(s, m, std::span(x), std::span(y), threads, algorithm);
      };
      for (const auto& f : check_semirings(convert<double, std::int32_t>(a), seed, run)) ADD_FAILURE() << "f64/i32 " << f;
      for (const auto& f : check_semirings(convert<float, std::int64_t>(a), seed, run)) ADD_FAILURE() << "f32/i64 " << f;
    }
}

// min, max and or-and from the merge-path kernel against the row loop's: the same bits, except that a
// zero may carry the other sign (a split row's pieces are combined in another order, and max(+0, -0)
// keeps its first operand: docs/SEMIRINGS.md). x mixes signs, zeros, NaN and +-Inf.
template <class Value, class Index>
void expect_merge_bits_equal_rows(const CsrMatrix<Value, Index>& a, std::uint64_t seed) {
  using Bits = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  SplitMix64 rng(seed);
  std::vector<Value> x(static_cast<std::size_t>(a.cols));
  for (std::size_t j = 0; j < x.size(); ++j) {
    x[j] = static_cast<Value>(rng.symmetric());
    if (j % 7 == 3) x[j] = j % 2 ? Value(0) : -Value(0);
    if (j % 11 == 4) x[j] = std::numeric_limits<Value>::quiet_NaN();
    if (j % 13 == 6) x[j] = (j % 2 ? 1 : -1) * std::numeric_limits<Value>::infinity();
  }
  for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin})
    for (int threads : {2, 3, 7}) {
      std::vector<Value> rows(static_cast<std::size_t>(a.rows), std::numeric_limits<Value>::quiet_NaN()), merge(rows);
      semiring_multiply(s, a, std::span<const Value>(x), std::span(rows), threads, Algorithm::RowLoop);
      semiring_multiply(s, a, std::span<const Value>(x), std::span(merge), threads, Algorithm::MergeParallel);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const bool zeros = rows[i] == Value(0) && merge[i] == Value(0);
        if (std::bit_cast<Bits>(rows[i]) != std::bit_cast<Bits>(merge[i]) && !zeros) {
          ADD_FAILURE() << to_string(s) << ", " << threads << " threads, row " << i << ": merge-path " << merge[i]
                        << ", row loop " << rows[i];
          break;
        }
      }
    }
}

TEST_P(SemiringZoo, MergePathGivesTheRowLoopsBits) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 5;
  expect_merge_bits_equal_rows(convert<double, std::int32_t>(a), seed);
  expect_merge_bits_equal_rows(convert<float, std::int64_t>(a), seed);
}

INSTANTIATE_TEST_SUITE_P(Zoo, SemiringZoo, zoo_indices(), zoo_case_name);

TEST(Semiring, WrongLengthsAreRefused) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(4));
  std::vector<double> x(16, 1.0), y(15);
  EXPECT_THROW(semiring_multiply(Semiring::MinPlus, a, std::span<const double>(x), std::span(y)), InvalidArgument);
  y.resize(16);
  x.resize(17);
  EXPECT_THROW(semiring_multiply(Semiring::OrAnd, a, std::span<const double>(x), std::span(y)), InvalidArgument);
}

// Matrices large enough for several merge-path segments a thread (up to sixteen, of at least 8192 merge
// steps each; semiring_merge.cpp): R-MAT's hub rows and two rows of 200,000 entries each span many segments, so a
// row collects several carries, ⊕-added after the parallel region; R-MAT at the default thread count
// too (Auto's choice there).
TEST(SemiringMerge, RowsSpanningManySegments) {
  const auto hubs = gen::long_rows(3000, 400000, 2, 200000, 3, 31);
  const auto rmat = gen::rmat(14, 16, 32);
  for (const auto* m : {&hubs, &rmat})
    for (int threads : {1, 2, 3, 7}) {
      SCOPED_TRACE(std::to_string(m->rows) + " rows, threads " + std::to_string(threads));
      const auto run = [threads](Semiring s, const auto& a, const auto& x, auto& y) {
        semiring_multiply(s, a, std::span(x), std::span(y), threads, Algorithm::MergeParallel);
      };
      for (const auto& f : check_semirings(convert<double, std::int32_t>(*m), 33, run)) ADD_FAILURE() << "f64/i32 " << f;
      for (const auto& f : check_semirings(convert<float, std::int64_t>(*m), 34, run)) ADD_FAILURE() << "f32/i64 " << f;
    }
  for (const auto* m : {&hubs, &rmat}) {
    expect_merge_bits_equal_rows(convert<double, std::int32_t>(*m), 35);
    const auto run = [](Semiring s, const auto& a, const auto& x, auto& y) { semiring_multiply(s, a, std::span(x), std::span(y)); };
    for (const auto& f : check_semirings(convert<double, std::int32_t>(*m), 36, run)) ADD_FAILURE() << "Auto " << f;
  }
}

// Plus-times through the merge-path kernel: the same bits on every run with one thread count (the carries
// are added in segment order, whichever thread ran each segment).
TEST(SemiringMerge, PlusTimesIsReproducible) {
  const auto a = convert<double, std::int32_t>(gen::long_rows(3000, 400000, 2, 200000, 3, 37));
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  SplitMix64 rng(38);
  for (auto& v : x) v = rng.symmetric();
  for (int threads : {2, 3}) {
    std::vector<double> first(static_cast<std::size_t>(a.rows)), again(first.size());
    semiring_multiply(Semiring::PlusTimes, a, std::span<const double>(x), std::span(first), threads,
                      Algorithm::MergeParallel);
    for (int run = 0; run < 5; ++run) {
      semiring_multiply(Semiring::PlusTimes, a, std::span<const double>(x), std::span(again), threads,
                        Algorithm::MergeParallel);
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(double)), 0) << threads << " threads";
    }
  }
}

// Auto's rule (src/cpu/semiring_multiply.cpp), on more than one thread: merge-path from 2^16 nonzeros
// (R-MAT, a large stencil), and below that when a 512-row chunk holds more than a thread's share of rows +
// nonzeros (one row of 50,000 among 999 rows of 3); the row loop on a small stencil, small random rows and
// one row of 10,000 among 19,999 of 2 (a third of a thread's share on two threads, two thirds on four), on
// one thread and on a matrix without rows.
TEST(SemiringMerge, AutoChoosesByRowStatistics) {
  const auto rmat = convert<double, std::int32_t>(gen::rmat(16, 16, 39));
  const auto big_grid = convert<float, std::int64_t>(gen::poisson2d(300));  // 448,800 nonzeros
  const auto huge_row = convert<double, std::int32_t>(gen::long_rows(1000, 60000, 1, 50000, 3, 40));
  const auto long_row = convert<double, std::int32_t>(gen::long_rows(20000, 60000, 1, 10000, 2, 42));
  const auto grid = convert<double, std::int32_t>(gen::poisson2d(100));  // 49,600 nonzeros
  const auto uniform = convert<double, std::int64_t>(gen::random_uniform(10000, 10000, 4, 41));
  for (const auto* m : {&huge_row, &long_row, &grid}) ASSERT_LT(m->nnz(), std::int64_t(1) << 16);
  for (int threads : {2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_EQ(semiring_cpu_algorithm(rmat, threads), Algorithm::MergeParallel);
    EXPECT_EQ(semiring_cpu_algorithm(big_grid, threads), Algorithm::MergeParallel);
    EXPECT_EQ(semiring_cpu_algorithm(huge_row, threads), Algorithm::MergeParallel);
    EXPECT_EQ(semiring_cpu_algorithm(long_row, threads), Algorithm::RowLoop);
    EXPECT_EQ(semiring_cpu_algorithm(grid, threads), Algorithm::RowLoop);
    EXPECT_EQ(semiring_cpu_algorithm(uniform, threads), Algorithm::RowLoop);
  }
  for (const auto* m : {&rmat, &huge_row}) EXPECT_EQ(semiring_cpu_algorithm(*m, 1), Algorithm::RowLoop);
  EXPECT_EQ(semiring_cpu_algorithm(convert<double, std::int32_t>(zoo_detail::empty(0, 5)), 2), Algorithm::RowLoop);
}

TEST(SemiringMerge, OtherAlgorithmsAreRefused) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(4));
  std::vector<double> x(16, 1.0), y(16);
  for (Algorithm bad : {Algorithm::CsrVector, Algorithm::MergePath, Algorithm::Reference, Algorithm::Tune})
    EXPECT_THROW(semiring_multiply(Semiring::MinPlus, a, std::span<const double>(x), std::span(y), 2, bad), Unsupported)
        << to_string(bad);
}

// The backend-taking overload: Backend::Cpu is the CPU kernel (the same bits); Backend::Cuda checks the
// lengths before touching a device, and without one fails with spmv's error (CudaError, or Unsupported
// in a build without CUDA), never a wrong y. With a device, tests/cuda/cuda_semiring_test.cpp runs it.
TEST(Semiring, BackendOverload) {
  const auto a = convert<double, std::int32_t>(gen::rmat(8, 6, 5));
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = static_cast<double>((j * 37) % 11) - 3.0;
  std::vector<double> plain(static_cast<std::size_t>(a.rows)), via_backend(plain.size());
  for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
    semiring_multiply(s, a, std::span<const double>(x), std::span(plain));
    semiring_multiply(Backend::Cpu, s, a, std::span<const double>(x), std::span(via_backend));
    EXPECT_EQ(std::memcmp(plain.data(), via_backend.data(), plain.size() * sizeof(double)), 0) << to_string(s);
  }
  std::vector<double> short_y(plain.size() - 1);
  EXPECT_THROW(semiring_multiply(Backend::Cuda, Semiring::MinPlus, a, std::span<const double>(x), std::span(short_y)),
               InvalidArgument);
  if (!cuda_available())
    EXPECT_THROW(semiring_multiply(Backend::Cuda, Semiring::MinPlus, a, std::span<const double>(x), std::span(plain)),
                 Error);
}

// A directed graph with nonnegative weights: R-MAT (power-law out-degrees, duplicates summed), its
// values made positive. Edge i -> j is a_ij.
CsrMatrix<double, std::int32_t> weighted_graph() {
  auto g = convert<double, std::int32_t>(gen::rmat(10, 6, 17));
  for (std::size_t k = 0; k < g.values.size(); ++k) g.values[k] = 0.25 + static_cast<double>((k * 7919) % 97) / 13.0;
  return g;
}

// BFS levels from `source` with or-and: frontier' = A^T (or.and) frontier, minus the visited vertices.
TEST(SemiringExamples, BreadthFirstSearchLevels) {
  const auto g = weighted_graph();
  const auto gt = transpose(g);  // y_j = OR_i (a_ij AND f_i): the vertices one edge from the frontier
  const std::int32_t n = g.rows, source = 0;
  std::vector<double> frontier(n, 0.0), next(n);
  std::vector<int> level(n, -1);
  frontier[source] = 1;
  level[source] = 0;
  for (int depth = 1;; ++depth) {
    semiring_multiply(Semiring::OrAnd, gt, std::span<const double>(frontier), std::span(next));
    bool any = false;
    for (std::int32_t v = 0; v < n; ++v) {
      frontier[v] = (next[v] != 0 && level[v] < 0) ? 1.0 : 0.0;
      if (frontier[v] != 0) level[v] = depth, any = true;
    }
    if (!any) break;
  }
  // Plain queue BFS.
  std::vector<int> want(n, -1);
  std::queue<std::int32_t> q;
  want[source] = 0;
  q.push(source);
  while (!q.empty()) {
    const auto u = q.front();
    q.pop();
    for (auto k = g.row_ptr[u]; k < g.row_ptr[u + 1]; ++k)
      if (want[g.col_idx[k]] < 0) want[g.col_idx[k]] = want[u] + 1, q.push(g.col_idx[k]);
  }
  EXPECT_EQ(level, want);
  EXPECT_GT(*std::max_element(want.begin(), want.end()), 1);  // the search went past the first ring
}

// Single-source shortest paths: Bellman–Ford d = min(d, A^T (min.+) d) until nothing changes, against
// Dijkstra. Both add the same weights along a path, but in different orders, so distances agree to
// rounding (a path of L edges: L roundings of each sum).
TEST(SemiringExamples, ShortestPathsMatchDijkstra) {
  const auto g = weighted_graph();
  const auto gt = transpose(g);
  const std::int32_t n = g.rows, source = 3;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> d(n, inf), relaxed(n);
  d[source] = 0;
  int rounds = 0;
  for (bool changed = true; changed && rounds < n; ++rounds) {
    semiring_multiply(Semiring::MinPlus, gt, std::span<const double>(d), std::span(relaxed));
    changed = false;
    for (std::int32_t v = 0; v < n; ++v)
      if (relaxed[v] < d[v]) d[v] = relaxed[v], changed = true;
  }
  std::vector<double> want(n, inf);
  using Item = std::pair<double, std::int32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  want[source] = 0;
  heap.push({0.0, source});
  while (!heap.empty()) {
    const auto [du, u] = heap.top();
    heap.pop();
    if (du > want[u]) continue;
    for (auto k = g.row_ptr[u]; k < g.row_ptr[u + 1]; ++k)
      if (du + g.values[k] < want[g.col_idx[k]]) {
        want[g.col_idx[k]] = du + g.values[k];
        heap.push({want[g.col_idx[k]], g.col_idx[k]});
      }
  }
  int reached = 0;
  for (std::int32_t v = 0; v < n; ++v) {
    if (std::isinf(want[v])) {
      EXPECT_TRUE(std::isinf(d[v])) << v;
      continue;
    }
    ++reached;
    EXPECT_NEAR(d[v], want[v], 1e-12 * (1 + want[v])) << v;
  }
  EXPECT_GT(reached, n / 4);
}

// PageRank by power iteration, r = (1 - c)/n + c * (P^T r + dangling mass / n) with P the out-degree
// normalised adjacency, against the same iteration written as plain loops (same operation order per
// entry up to the product's summation: agreement to 1e-12).
TEST(SemiringExamples, PageRank) {
  auto g = weighted_graph();
  const std::int32_t n = g.rows;
  std::vector<bool> dangling(n, false);
  for (std::int32_t i = 0; i < n; ++i) {
    const auto len = g.row_ptr[i + 1] - g.row_ptr[i];
    dangling[i] = len == 0;
    for (auto k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) g.values[k] = 1.0 / len;
  }
  const auto pt = transpose(g);
  constexpr double c = 0.85;
  std::vector<double> r(n, 1.0 / n), pr(n), want(n, 1.0 / n), next(n);
  for (int it = 0; it < 50; ++it) {
    double lost = 0, lost_want = 0;
    for (std::int32_t i = 0; i < n; ++i) lost += dangling[i] ? r[i] : 0, lost_want += dangling[i] ? want[i] : 0;
    semiring_multiply(Semiring::PlusTimes, pt, std::span<const double>(r), std::span(pr));
    for (std::int32_t i = 0; i < n; ++i) r[i] = (1 - c) / n + c * (pr[i] + lost / n);
    std::fill(next.begin(), next.end(), 0.0);
    for (std::int32_t i = 0; i < n; ++i)
      for (auto k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) next[g.col_idx[k]] += g.values[k] * want[i];
    for (std::int32_t i = 0; i < n; ++i) want[i] = (1 - c) / n + c * (next[i] + lost_want / n);
  }
  double total = 0;
  for (std::int32_t i = 0; i < n; ++i) {
    EXPECT_NEAR(r[i], want[i], 1e-12) << i;
    total += r[i];
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
}

}  // namespace
}  // namespace spmv::test
