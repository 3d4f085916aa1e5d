// The local / remote split of a rank's rows (PETSc MatMPIAIJ's A and B blocks): two passes over the
// rows (counts, then entries in place), the ghost columns sorted once and found by binary search.
#include "distributed/block_split.hpp"

#include <algorithm>

#include "cpu/instantiate.hpp"

namespace spmv::dist::detail {

template <class Value, class Index>
Blocks<Value, Index> split_blocks(const CsrMatrix<Value, std::int64_t>& a, std::int64_t col_begin,
                                  std::int64_t col_end) {
  const std::int64_t rows = a.rows;
  const auto owned = [&](std::int64_t c) { return c >= col_begin && c < col_end; };
  Blocks<Value, Index> b;
  for (std::int64_t k = 0; k < a.nnz(); ++k)
    if (!owned(a.col_idx[k])) b.ghost_cols.push_back(a.col_idx[k]);
  std::sort(b.ghost_cols.begin(), b.ghost_cols.end());
  b.ghost_cols.erase(std::unique(b.ghost_cols.begin(), b.ghost_cols.end()), b.ghost_cols.end());
  const auto ghosts = static_cast<std::int64_t>(b.ghost_cols.size());

  std::vector<std::int64_t> local_ptr(static_cast<std::size_t>(rows) + 1, 0), remote_ptr(local_ptr);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t n = 0;
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) n += owned(a.col_idx[k]);
    local_ptr[r + 1] = n;
    remote_ptr[r + 1] = a.row_ptr[r + 1] - a.row_ptr[r] - n;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    local_ptr[r + 1] += local_ptr[r];
    remote_ptr[r + 1] += remote_ptr[r];
  }
  spmv::detail::refuse_if_too_large<Index>(rows, col_end - col_begin, local_ptr.back());
  spmv::detail::refuse_if_too_large<Index>(rows, ghosts, remote_ptr.back());

  auto init = [](CsrMatrix<Value, Index>& m, std::int64_t cols, const std::vector<std::int64_t>& ptr) {
    m.rows = static_cast<Index>(ptr.size() - 1);
    m.cols = static_cast<Index>(cols);
    m.row_ptr.assign(ptr.begin(), ptr.end());
    m.col_idx.resize(static_cast<std::size_t>(ptr.back()));
    m.values.resize(static_cast<std::size_t>(ptr.back()));
  };
  init(b.local, col_end - col_begin, local_ptr);
  // The remote block's rows: those with remote entries, their pointers taken from remote_ptr.
  std::vector<std::int64_t> compressed_ptr{0};
  for (std::int64_t r = 0; r < rows; ++r)
    if (remote_ptr[r + 1] > remote_ptr[r]) {
      b.remote_rows.push_back(static_cast<Index>(r));
      compressed_ptr.push_back(remote_ptr[r + 1]);
    }
  init(b.remote, ghosts, compressed_ptr);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t l = local_ptr[r], g = remote_ptr[r];
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const std::int64_t c = a.col_idx[k];
      if (owned(c)) {
        b.local.col_idx[l] = static_cast<Index>(c - col_begin);
        b.local.values[l++] = a.values[k];
      } else {
        const auto at = std::lower_bound(b.ghost_cols.begin(), b.ghost_cols.end(), c) - b.ghost_cols.begin();
        b.remote.col_idx[g] = static_cast<Index>(at);
        b.remote.values[g++] = a.values[k];
      }
    }
  }
  return b;
}

template <class Value, class Index>
std::vector<Index> chunk_boundaries(const CsrMatrix<Value, Index>& a, int chunks) {
  const std::int64_t rows = a.rows, total = rows + a.nnz();
  std::vector<Index> bounds{0};
  for (int k = 1; k < chunks; ++k) {
    // The first row r with r + row_ptr[r] >= k * total / chunks (increasing in r: a binary search).
    const std::int64_t target = k * total / chunks;
    std::int64_t lo = 0, hi = rows;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (mid + static_cast<std::int64_t>(a.row_ptr[mid]) < target) lo = mid + 1;
      else hi = mid;
    }
    if (lo > bounds.back() && lo < rows) bounds.push_back(static_cast<Index>(lo));
  }
  if (rows > 0) bounds.push_back(a.rows);
  return bounds;
}

template <class Value, class Index>
CsrMatrix<Value, Index> row_range(const CsrMatrix<Value, Index>& a, Index begin, Index end) {
  CsrMatrix<Value, Index> m;
  m.rows = end - begin;
  m.cols = a.cols;
  const Index first = a.row_ptr[begin];
  m.row_ptr.resize(static_cast<std::size_t>(m.rows) + 1);
  for (Index r = 0; r <= m.rows; ++r) m.row_ptr[r] = a.row_ptr[begin + r] - first;
  m.col_idx.assign(a.col_idx.begin() + first, a.col_idx.begin() + a.row_ptr[end]);
  m.values.assign(a.values.begin() + first, a.values.begin() + a.row_ptr[end]);
  return m;
}

#define SPMV_INSTANTIATE(V, I)                                                                              \
  template Blocks<V, I> split_blocks<V, I>(const CsrMatrix<V, std::int64_t>&, std::int64_t, std::int64_t); \
  template std::vector<I> chunk_boundaries<V, I>(const CsrMatrix<V, I>&, int);                              \
  template CsrMatrix<V, I> row_range<V, I>(const CsrMatrix<V, I>&, I, I);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::dist::detail
