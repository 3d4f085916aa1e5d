#pragma once
// Private: the merge-path split of a CSR matrix (Merrill & Garland, "Merge-based parallel sparse
// matrix-vector multiplication", SC'16, §4), shared by the f32/f64 merge-parallel plan
// (merge_parallel.cpp) and its half-precision-values twin (half_merge_parallel.cpp), so that both
// split a matrix at the same coordinates, and by the semiring product's merge-path kernel
// (semiring_merge.cpp).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace spmv::cpu::detail {

// A x's segments for `threads` threads over `items` = rows + nnz merge steps: four a thread, each at least
// kMinSegmentItems steps, which the threads take in turn (schedule(dynamic, 1)), so that a thread held
// back by a busy core leaves its later segments to the others instead of making them wait at the end
// (docs/PERFORMANCE.md "Merge-parallel's f32 rows and segments"). A^T x keeps one a thread (one private y
// each). Both merge-parallel plans take their split from here, so that they sum in the same order. The
// semiring kernel (semiring_merge.cpp) asks for its own number a thread (`per_thread`).
inline constexpr int kSegmentsPerThread = 4;
inline constexpr std::int64_t kMinSegmentItems = 8192;
inline int merge_path_segments(bool transpose, int threads, std::int64_t items, int per_thread = kSegmentsPerThread) {
  if (transpose) return threads;
  return threads * static_cast<int>(std::clamp<std::int64_t>(items / kMinSegmentItems / threads, 1, per_thread));
}

// Merrill & Garland, Algorithm 3 (MergePathSearch): the (row, nonzero) coordinate where `diagonal`
// crosses the merge path of A = row_ptr[1..rows] and B = 0..nnz-1. A row end e comes before the
// nonzero index e, so empty rows are consumed before the next nonzero.
template <class Index>
void merge_path_search(std::int64_t diagonal, const Index* row_end, std::int64_t rows, std::int64_t nnz,
                       Index& row, Index& nz) {
  std::int64_t lo = std::max<std::int64_t>(diagonal - nnz, 0);
  std::int64_t hi = std::min<std::int64_t>(diagonal, rows);
  while (lo < hi) {
    const std::int64_t pivot = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(row_end[pivot]) <= diagonal - pivot - 1) lo = pivot + 1;
    else hi = pivot;
  }
  row = static_cast<Index>(std::min(lo, rows));
  nz = static_cast<Index>(diagonal - lo);
}

// The rows + nnz merge steps cut into `segments` equal pieces: segment s runs from coordinate
// (start_row[s], start_nz[s]) to (start_row[s + 1], start_nz[s + 1]). rows + nnz may overflow a
// 32-bit Index; the diagonals are 64-bit.
template <class Index>
void merge_path_split(const Index* row_ptr, std::int64_t rows, std::int64_t nnz, int segments,
                      std::vector<Index>& start_row, std::vector<Index>& start_nz) {
  const std::int64_t total = rows + nnz;
  const std::int64_t per_segment = (total + segments - 1) / segments;
  start_row.resize(static_cast<std::size_t>(segments) + 1);
  start_nz.resize(static_cast<std::size_t>(segments) + 1);
  for (int s = 0; s <= segments; ++s)
    merge_path_search(std::min(per_segment * s, total), row_ptr + 1, rows, nnz, start_row[s], start_nz[s]);
}

}  // namespace spmv::cpu::detail
