// Semiring products on the CPU (issue 11, spmv/semiring.hpp): names and zeros, the differential body
// of common/semiring_check.hpp over the whole zoo (both index types, f32 and f64, one and three
// threads), size refusal, and three graph algorithms written with them, checked against plain
// implementations: BFS levels (or-and), single-source shortest paths (Bellman–Ford with min-plus,
// against Dijkstra) and PageRank (power iteration with plus-times).
#include <gtest/gtest.h>

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

TEST_P(SemiringZoo, MatchesTheDefinition) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name);
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const auto run = [threads](Semiring s, const auto& m, const auto& x, auto& y) {
      semiring_multiply(s, m, std::span(x), std::span(y), threads);
    };
    for (const auto& f : check_semirings(convert<double, std::int32_t>(a), seed, run)) ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f : check_semirings(convert<float, std::int64_t>(a), seed, run)) ADD_FAILURE() << "f32/i64 " << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, SemiringZoo, testing::Range<std::size_t>(0, zoo().size()),
                         [](const testing::TestParamInfo<std::size_t>& info) { return zoo()[info.param].name; });

TEST(Semiring, WrongLengthsAreRefused) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(4));
  std::vector<double> x(16, 1.0), y(15);
  EXPECT_THROW(semiring_multiply(Semiring::MinPlus, a, std::span<const double>(x), std::span(y)), InvalidArgument);
  y.resize(16);
  x.resize(17);
  EXPECT_THROW(semiring_multiply(Semiring::OrAnd, a, std::span<const double>(x), std::span(y)), InvalidArgument);
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
