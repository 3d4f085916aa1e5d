// Reverse Cuthill-McKee and degree orderings, and the symmetric permutation they feed
// (include/spmv/reorder.hpp). RCM after George & Liu, "Computer Solution of Large Sparse Positive
// Definite Systems" (1981), §4.3: per connected component, a pseudo-peripheral start row found by
// repeated breadth-first searches, then a breadth-first numbering that visits neighbours by
// increasing degree, reversed at the end.
#include "spmv/reorder.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>
#include <string>
#include <utility>

#include "core/phase_log.hpp"
#include "core/symmetric_pattern.hpp"
#include "spmv/error.hpp"

namespace spmv {
namespace {

// The pattern of A + A^T without the diagonal: the graph RCM walks.
template <class Index>
using Graph = detail::SymmetricGraph<Index>;

struct Search {
  std::size_t end;         // one past the last row reached
  std::size_t last_level;  // where the last level begins in `order`
  int levels;
};

// Breadth-first search over the unnumbered rows reachable from `root`, written to `order` from
// position `head` on; neighbours are visited by increasing degree (then index) when `by_degree`.
// mark[v] < 0: numbered already (never visited); otherwise the stamp of the last search reaching v.
template <class Index>
Search breadth_first(const Graph<Index>& g, Index root, std::vector<Index>& order, std::size_t head,
                     std::vector<std::int64_t>& mark, std::int64_t stamp, bool by_degree) {
  std::size_t tail = head;
  order[tail++] = root;
  mark[root] = stamp;
  std::size_t level_begin = head, level_end = tail;
  int levels = 1;
  while (head < tail) {
    if (head == level_end) {
      level_begin = head;
      level_end = tail;
      ++levels;
    }
    const Index v = order[head++];
    const std::size_t first_new = tail;
    for (Index k = g.start[v]; k < g.start[v + 1]; ++k)
      if (const Index w = g.adj[k]; mark[w] >= 0 && mark[w] < stamp) {
        mark[w] = stamp;
        order[tail++] = w;
      }
    if (by_degree)
      std::sort(order.begin() + first_new, order.begin() + tail, [&](Index p, Index q) {
        return std::pair(g.degree(p), p) < std::pair(g.degree(q), q);
      });
  }
  return {tail, level_begin, levels};
}

template <class Index>
std::vector<Index> rcm(const Graph<Index>& g, Index n) {
  std::vector<Index> order(static_cast<std::size_t>(n));
  std::vector<Index> scratch(static_cast<std::size_t>(n));
  std::vector<std::int64_t> mark(static_cast<std::size_t>(n), 0);
  std::int64_t stamp = 0;
  // Each component starts from its row of least degree (ties: lowest index).
  std::vector<Index> by_degree(static_cast<std::size_t>(n));
  std::iota(by_degree.begin(), by_degree.end(), Index(0));
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](Index p, Index q) { return g.degree(p) < g.degree(q); });
  std::size_t numbered = 0;
  for (Index candidate : by_degree) {
    if (mark[candidate] < 0) continue;
    // Pseudo-peripheral root: move to a least-degree row of the last level while that deepens the
    // level structure (a few searches in practice; capped at 8).
    Index root = candidate;
    int levels = 0;
    for (int round = 0; round < 8; ++round) {
      const Search s = breadth_first(g, root, scratch, 0, mark, ++stamp, false);
      if (s.levels <= levels) break;
      levels = s.levels;
      Index best = scratch[s.last_level];
      for (std::size_t k = s.last_level; k < s.end; ++k)
        if (std::pair(g.degree(scratch[k]), scratch[k]) < std::pair(g.degree(best), best)) best = scratch[k];
      if (best == root) break;
      root = best;
    }
    const Search s = breadth_first(g, root, order, numbered, mark, ++stamp, true);
    for (std::size_t k = numbered; k < s.end; ++k) mark[order[k]] = -1;
    numbered = s.end;
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

std::string_view to_string(Reorder r) {
  switch (r) {
    case Reorder::None: return "none";
    case Reorder::Rcm: return "rcm";
    case Reorder::Degree: return "degree";
  }
  return "?";
}

std::optional<Reorder> parse_reorder(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Reorder r : {Reorder::None, Reorder::Rcm, Reorder::Degree})
    if (lower == to_string(r)) return r;
  return std::nullopt;
}

template <class Value, class Index>
std::vector<Index> reorder_permutation(const CsrMatrix<Value, Index>& a, Reorder how) {
  if (a.rows != a.cols)
    throw Unsupported("reorder " + std::string(to_string(how)) + " needs a square matrix (a symmetric permutation), got " +
                      std::to_string(a.rows) + " x " + std::to_string(a.cols));
  validate(a);
  if (how == Reorder::Rcm) {
    detail::PhaseLog phase("reorder/pattern");
    const Graph<Index> g = detail::symmetric_pattern(a);
    phase.next("reorder/rcm");
    return rcm(g, a.rows);
  }
  std::vector<Index> order(static_cast<std::size_t>(a.rows));
  std::iota(order.begin(), order.end(), Index(0));
  if (how == Reorder::Degree)
    std::stable_sort(order.begin(), order.end(), [&](Index p, Index q) { return a.row_length(p) > a.row_length(q); });
  return order;
}

template <class Value, class Index>
CsrMatrix<Value, Index> permute_symmetric(const CsrMatrix<Value, Index>& a, const std::vector<Index>& order) {
  if (a.rows != a.cols || order.size() != static_cast<std::size_t>(a.rows))
    throw InvalidArgument("permute_symmetric: needs a square matrix and one entry per row (" + std::to_string(a.rows) +
                          " x " + std::to_string(a.cols) + ", " + std::to_string(order.size()) + " entries)");
  const Index n = a.rows;
  std::vector<Index> new_of(static_cast<std::size_t>(n), Index(-1));
  for (Index i = 0; i < n; ++i) {
    const Index old = order[i];
    if (old < 0 || old >= n || new_of[old] >= 0)
      throw InvalidArgument("permute_symmetric: order is not a permutation (entry " + std::to_string(i) + " = " +
                            std::to_string(old) + ")");
    new_of[old] = i;
  }
  detail::PhaseLog phase("reorder/permute");
  CsrMatrix<Value, Index> b;
  b.rows = b.cols = n;
  b.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (Index i = 0; i < n; ++i) b.row_ptr[i + 1] = b.row_ptr[i] + a.row_length(order[i]);
  b.col_idx.resize(a.col_idx.size());
  b.values.resize(a.values.size());
#pragma omp parallel
  {
    std::vector<std::pair<Index, Value>> row;
#pragma omp for schedule(dynamic, 1024)
    for (Index i = 0; i < n; ++i) {
      const Index old = order[i];
      row.clear();
      for (Index k = a.row_ptr[old]; k < a.row_ptr[old + 1]; ++k) row.emplace_back(new_of[a.col_idx[k]], a.values[k]);
      std::stable_sort(row.begin(), row.end(), [](const auto& p, const auto& q) { return p.first < q.first; });
      Index out = b.row_ptr[i];
      for (const auto& [col, value] : row) {
        b.col_idx[out] = col;
        b.values[out++] = value;
      }
    }
  }
  return b;
}

template <class Value, class Index>
std::int64_t bandwidth(const CsrMatrix<Value, Index>& a) {
  std::int64_t widest = 0;
  for (Index i = 0; i < a.rows; ++i)
    for (Index k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      widest = std::max<std::int64_t>(widest, std::abs(static_cast<std::int64_t>(a.col_idx[k]) - i));
  return widest;
}

#define SPMV_INSTANTIATE(V, I)                                                                          \
  template std::vector<I> reorder_permutation(const CsrMatrix<V, I>&, Reorder);                         \
  template CsrMatrix<V, I> permute_symmetric(const CsrMatrix<V, I>&, const std::vector<I>&);           \
  template std::int64_t bandwidth(const CsrMatrix<V, I>&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv
