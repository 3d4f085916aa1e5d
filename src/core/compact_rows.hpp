#pragma once
// In-place, parallel compaction of CSR rows towards the front (R-MAT's last step in
// src/core/generators.cpp, after duplicates were summed at the front of each row's range).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace spmv::detail {

// Moves row r's first to[r + 1] - to[r] entries from data + from[r] to data + to[r], for every row, in
// place. from and to are row offsets (rows + 1 entries, from[0] = to[0] = 0) with to[r + 1] - to[r]
// <= from[r + 1] - from[r], so to[r] <= from[r]: no row moves right; threads > 0. Rows are moved in
// stretches [r0, r1) whose targets all end before from[r0], where the sources not yet moved begin:
// within a stretch no target overlaps a source still to be read, so its rows are copied by OpenMP
// threads. The stretch grows with the gap from[r0] - to[r0] (the duplicates summed so far); where the
// gap is smaller than row r0's new length, that row moves alone (memmove), and short stretches are
// moved by the calling thread, in row order. A sequential row-by-row memmove of the 2^31 edges of
// R-MAT scale 27 costs seconds on one core (issue 18).
template <class Index>
void compact_rows(Index* data, const std::vector<Index>& from, const std::vector<Index>& to, int threads) {
  // Stretches that move fewer entries are moved by this thread: a memmove of 2^20 entries takes well
  // under a millisecond, and a parallel region (fork and barrier) cost up to one on the loaded 2-core
  // dev VM, where R-MAT scale 22 spent 10x the serial time in a few hundred small regions.
  constexpr std::int64_t kParallelEntries = std::int64_t{1} << 20;
  const auto rows = static_cast<std::int64_t>(from.size()) - 1;
  // The gap from[r] - to[r] never decreases: the rows before the first nonzero gap stay where they are.
  std::int64_t r0 = 0;
  for (std::int64_t hi = rows; r0 < hi;) {
    const std::int64_t mid = r0 + (hi - r0) / 2;
    if (from[mid] == to[mid])
      r0 = mid + 1;
    else
      hi = mid;
  }
  while (r0 < rows) {
    // r1: the last row with to[r1] <= from[r0] (to is non-decreasing), at least r0 + 1; galloping, so
    // that a one-row stretch costs O(1)
    std::int64_t r1 = r0 + 1, step = 1;
    while (r1 + step <= rows && to[r1 + step] <= from[r0]) {
      r1 += step;
      step *= 2;
    }
    r1 = std::upper_bound(to.begin() + r1 + 1, to.begin() + std::min(rows, r1 + step) + 1, from[r0]) - to.begin() - 1;
    const auto move = [&](std::int64_t r) {
      if (to[r + 1] > to[r] && to[r] != from[r])
        std::memmove(data + to[r], data + from[r], static_cast<std::size_t>(to[r + 1] - to[r]) * sizeof(Index));
    };
    if (to[r1] - to[r0] < kParallelEntries) {
      for (std::int64_t r = r0; r < r1; ++r) move(r);  // in row order: always safe
    } else {
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads)
      for (std::int64_t r = r0; r < r1; ++r) move(r);
    }
    r0 = r1;
  }
}

}  // namespace spmv::detail
