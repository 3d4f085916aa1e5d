// Row-length statistics, diagonal structure and symmetry in O(nnz) (O(nnz log) when a row needs sorting).
#include "spmv/stats.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "core/phase_log.hpp"
#include "core/prefault.hpp"

namespace spmv {
namespace {

// Distinct j - i over the nonzeros. A byte per possible diagonal (rows + cols - 1 of them) is fastest
// and parallel, and is used while it costs at most a byte per nonzero (under 10% of the matrix); a
// matrix with far more diagonals than nonzeros (1 x 2^40 with three entries) uses a hash set of the
// offsets seen. Threads read before they write, so the cache lines of common diagonals stay shared.
template <class Value, class Index>
std::int64_t count_diagonals(const CsrMatrix<Value, Index>& a) {
  const std::int64_t rows = a.rows, cols = a.cols, nnz = a.nnz();
  if (nnz == 0) return 0;
  if (rows + cols <= nnz + 4096) {
    std::vector<unsigned char> seen;
    detail::reserve_prefaulted(seen, static_cast<std::size_t>(rows + cols - 1), 0);
    seen.assign(static_cast<std::size_t>(rows + cols - 1), 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        std::atomic_ref<unsigned char> flag(seen[static_cast<std::size_t>(a.col_idx[k] - i + rows - 1)]);
        if (!flag.load(std::memory_order_relaxed)) flag.store(1, std::memory_order_relaxed);
      }
    std::int64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count)
    for (std::size_t d = 0; d < seen.size(); ++d) count += seen[d];
    return count;
  }
  std::unordered_set<std::int64_t> seen;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) seen.insert(static_cast<std::int64_t>(a.col_idx[k]) - i);
  return static_cast<std::int64_t>(seen.size());
}

// Compares A with A^T. Structural symmetry compares the stored patterns (explicit zeros count).
// Numerical symmetry compares the matrices as values: an entry stored on one side only must be zero,
// so a stored zero facing an absent entry is still symmetric; NaN is never equal to itself.
// On canonical A (sorted rows, no duplicates) every stored a_ij looks up a_ji by binary search in row
// j: no transposed copy, which doubled the peak host memory of `spmv bench --gen` (issue 18: 64 GB
// for a 31.5 GB matrix), and parallel. Pattern(A) == pattern(A^T) holds iff every stored (i, j) has a
// stored (j, i), since both patterns have nnz entries.
template <class Value, class Index>
void symmetry(const CsrMatrix<Value, Index>& input, MatrixStats& s) {
  detail::PhaseLog phase("stats/canonical");
  const bool canonical = is_canonical(input);
  CsrMatrix<Value, Index> sorted_copy;
  if (!canonical) {
    sorted_copy = input;
    canonicalize(sorted_copy);  // duplicates summed: A's entry is their sum
  }
  const auto& a = canonical ? input : sorted_copy;
  phase.next("stats/symmetry");
  const std::int64_t rows = a.rows;
  bool structural = true, numerical = true;
#pragma omp parallel for schedule(dynamic, 4096) reduction(&& : structural, numerical)
  for (std::int64_t i = 0; i < rows; ++i) {
    if (!structural && !numerical) continue;  // both settled: the other rows cannot change them
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t j = a.col_idx[k];
      const Index* begin = a.col_idx.data() + a.row_ptr[j];
      const Index* end = a.col_idx.data() + a.row_ptr[j + 1];
      const Index* partner = std::lower_bound(begin, end, static_cast<Index>(i));
      if (partner != end && *partner == static_cast<Index>(i)) {
        numerical = numerical && a.values[k] == a.values[partner - a.col_idx.data()];
      } else {
        structural = false;
        numerical = numerical && a.values[k] == Value{0};
      }
    }
  }
  s.structurally_symmetric = structural;
  s.numerically_symmetric = numerical;
}

}  // namespace

template <class Value, class Index>
MatrixStats compute_stats(const CsrMatrix<Value, Index>& a) {
  detail::PhaseLog phase("stats/validate");
  validate(a);
  phase.next("stats/row lengths");
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  if (s.rows > 0) {
    // One parallel pass in integers: the sum of squared lengths is exact (below 2^80, in 128 bits), so
    // the variance (rows * sum len^2 - nnz^2) / rows^2 has no cancellation and the same value for any
    // thread count (a sum of doubles would depend on how the rows are shared).
    std::int64_t row_min = s.nnz, row_max = 0, empty_rows = 0;
    unsigned __int128 sum_squares = 0;
    const std::int64_t rows = s.rows;
#pragma omp parallel
    {
      std::int64_t lo = s.nnz, hi = 0, empty = 0;
      unsigned __int128 squares = 0;
#pragma omp for schedule(static) nowait
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t len = a.row_ptr[r + 1] - a.row_ptr[r];
        lo = std::min(lo, len);
        hi = std::max(hi, len);
        empty += len == 0;
        squares += static_cast<unsigned __int128>(static_cast<std::uint64_t>(len)) * static_cast<std::uint64_t>(len);
      }
#pragma omp critical(spmv_row_stats)
      {
        row_min = std::min(row_min, lo);
        row_max = std::max(row_max, hi);
        empty_rows += empty;
        sum_squares += squares;
      }
    }
    s.row_min = row_min;
    s.row_max = row_max;
    s.empty_rows = empty_rows;
    s.row_mean = static_cast<double>(s.nnz) / static_cast<double>(s.rows);
    const auto nnz = static_cast<unsigned __int128>(static_cast<std::uint64_t>(s.nnz));
    const unsigned __int128 scaled_variance =  // rows^2 * variance >= 0 (Cauchy-Schwarz), below 2^120
        static_cast<unsigned __int128>(static_cast<std::uint64_t>(rows)) * sum_squares - nnz * nnz;
    const long double variance = static_cast<long double>(scaled_variance) / static_cast<long double>(rows) /
                                 static_cast<long double>(rows);
    s.row_std = static_cast<double>(std::sqrt(variance));
  }
  phase.next("stats/bandwidth, diagonals");
  std::int64_t bandwidth = 0;
#pragma omp parallel for schedule(static) reduction(max : bandwidth)
  for (std::int64_t i = 0; i < s.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      bandwidth = std::max<std::int64_t>(bandwidth, std::abs(static_cast<std::int64_t>(a.col_idx[k]) - i));
  s.bandwidth = bandwidth;
  s.diagonals = count_diagonals(a);
  s.ell_padding = s.nnz > 0 ? static_cast<double>(s.rows) * static_cast<double>(s.row_max) / static_cast<double>(s.nnz)
                            : 0.0;
  phase.next("stats/symmetry total");
  if (s.rows == s.cols) symmetry(a, s);
  return s;
}

template MatrixStats compute_stats(const CsrMatrix<float, std::int32_t>&);
template MatrixStats compute_stats(const CsrMatrix<float, std::int64_t>&);
template MatrixStats compute_stats(const CsrMatrix<double, std::int32_t>&);
template MatrixStats compute_stats(const CsrMatrix<double, std::int64_t>&);

}  // namespace spmv
