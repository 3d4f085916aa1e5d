// The symmetrised pattern A + A^T of a square matrix (src/core/symmetric_pattern.hpp).
#include "core/symmetric_pattern.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>

#include "cpu/instantiate.hpp"

namespace spmv::detail {

// Rows split in parallel; the transposed half lands through atomic cursors, so the order within a row
// depends on the threads, and the per-row sort that follows makes the graph deterministic again.
template <class Value, class Index>
SymmetricGraph<Index> symmetric_pattern(const CsrMatrix<Value, Index>& a) {
  const Index n = a.rows;
  SymmetricGraph<Index> g;
  std::vector<Index> count(static_cast<std::size_t>(n) + 1, 0);
  std::vector<Index> own(static_cast<std::size_t>(n), 0);  // off-diagonal entries of row i
#pragma omp parallel for schedule(dynamic, 4096)
  for (Index i = 0; i < n; ++i)
    for (Index k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (const Index j = a.col_idx[k]; j != i) {
        ++own[i];
        std::atomic_ref<Index>(count[j + 1]).fetch_add(1, std::memory_order_relaxed);
      }
  for (Index i = 0; i < n; ++i) count[i + 1] += own[i];
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<Index> cursor(count.begin(), count.end() - 1);  // the transposed entries go after row i's own
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) cursor[i] += own[i];
  g.adj.resize(static_cast<std::size_t>(count[n]));
#pragma omp parallel for schedule(dynamic, 4096)
  for (Index i = 0; i < n; ++i) {
    Index out = count[i];
    for (Index k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (const Index j = a.col_idx[k]; j != i) {
        g.adj[out++] = j;
        g.adj[std::atomic_ref<Index>(cursor[j]).fetch_add(1, std::memory_order_relaxed)] = i;
      }
  }
  // Sort and deduplicate each row in place, then compact.
  std::vector<Index> unique_count(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for schedule(dynamic, 1024)
  for (Index i = 0; i < n; ++i) {
    auto first = g.adj.begin() + count[i], last = g.adj.begin() + count[i + 1];
    std::sort(first, last);
    unique_count[i + 1] = static_cast<Index>(std::unique(first, last) - first);
  }
  std::partial_sum(unique_count.begin(), unique_count.end(), unique_count.begin());
  std::vector<Index> adj(static_cast<std::size_t>(unique_count[n]));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i)
    std::copy_n(g.adj.begin() + count[i], unique_count[i + 1] - unique_count[i], adj.begin() + unique_count[i]);
  g.start = std::move(unique_count);
  g.adj = std::move(adj);
  return g;
}

#define SPMV_INSTANTIATE(V, I) template SymmetricGraph<I> symmetric_pattern(const CsrMatrix<V, I>&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
