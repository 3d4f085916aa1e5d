// Row-length statistics, diagonal structure and symmetry in O(nnz) (O(nnz log) when a row needs sorting).
#include "spmv/stats.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <vector>

namespace spmv {
namespace {

// Distinct j - i over the nonzeros. A bitmap over the rows + cols - 1 possible diagonals is fastest but
// can dwarf the matrix (1 x 2^40 with three entries); then a hash set of the offsets seen is used.
template <class Value, class Index>
std::int64_t count_diagonals(const CsrMatrix<Value, Index>& a) {
  const std::int64_t rows = a.rows, cols = a.cols, nnz = a.nnz();
  if (nnz == 0) return 0;
  if (rows + cols <= 8 * nnz + 4096) {
    std::vector<bool> seen(static_cast<std::size_t>(rows + cols - 1), false);
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const auto d = static_cast<std::size_t>(a.col_idx[k] - i + rows - 1);
        if (!seen[d]) {
          seen[d] = true;
          ++count;
        }
      }
    return count;
  }
  std::unordered_set<std::int64_t> seen;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) seen.insert(static_cast<std::int64_t>(a.col_idx[k]) - i);
  return static_cast<std::int64_t>(seen.size());
}

// Compares canonical A with A^T. Structural symmetry compares the stored patterns (explicit zeros
// count). Numerical symmetry compares the matrices as values: an entry stored on one side only must be
// zero, so a stored zero facing an absent entry is still symmetric; NaN is never equal to itself.
template <class Value, class Index>
void symmetry(const CsrMatrix<Value, Index>& input, MatrixStats& s) {
  const bool canonical = is_canonical(input);
  CsrMatrix<Value, Index> sorted_copy;
  if (!canonical) {
    sorted_copy = input;
    canonicalize(sorted_copy);  // duplicates summed: A's entry is their sum
  }
  const auto& a = canonical ? input : sorted_copy;
  const auto t = transpose(a);
  s.structurally_symmetric = a.row_ptr == t.row_ptr && a.col_idx == t.col_idx;
  s.numerically_symmetric = true;
  for (Index i = 0; i < a.rows && s.numerically_symmetric; ++i) {
    Index p = a.row_ptr[i], q = t.row_ptr[i];
    const Index p_end = a.row_ptr[i + 1], q_end = t.row_ptr[i + 1];
    while (p < p_end || q < q_end) {
      bool equal;
      if (q == q_end || (p < p_end && a.col_idx[p] < t.col_idx[q])) {
        equal = a.values[p++] == Value{0};
      } else if (p == p_end || t.col_idx[q] < a.col_idx[p]) {
        equal = t.values[q++] == Value{0};
      } else {
        equal = a.values[p++] == t.values[q++];
      }
      if (!equal) {
        s.numerically_symmetric = false;
        break;
      }
    }
  }
}

}  // namespace

template <class Value, class Index>
MatrixStats compute_stats(const CsrMatrix<Value, Index>& a) {
  validate(a);
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  if (s.rows > 0) {
    s.row_min = s.nnz;
    for (std::int64_t r = 0; r < s.rows; ++r) {
      const std::int64_t len = a.row_ptr[r + 1] - a.row_ptr[r];
      s.row_min = std::min(s.row_min, len);
      s.row_max = std::max(s.row_max, len);
      s.empty_rows += len == 0;
    }
    s.row_mean = static_cast<double>(s.nnz) / static_cast<double>(s.rows);
    double sum_sq = 0;  // two-pass: no cancellation of E[x^2] - E[x]^2
    for (std::int64_t r = 0; r < s.rows; ++r) {
      const double dev = static_cast<double>(a.row_ptr[r + 1] - a.row_ptr[r]) - s.row_mean;
      sum_sq += dev * dev;
    }
    s.row_std = std::sqrt(sum_sq / static_cast<double>(s.rows));
  }
  for (std::int64_t i = 0; i < s.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      s.bandwidth = std::max<std::int64_t>(s.bandwidth, std::abs(static_cast<std::int64_t>(a.col_idx[k]) - i));
  s.diagonals = count_diagonals(a);
  s.ell_padding = s.nnz > 0 ? static_cast<double>(s.rows) * static_cast<double>(s.row_max) / static_cast<double>(s.nnz)
                            : 0.0;
  if (s.rows == s.cols) symmetry(a, s);
  return s;
}

template MatrixStats compute_stats(const CsrMatrix<float, std::int32_t>&);
template MatrixStats compute_stats(const CsrMatrix<float, std::int64_t>&);
template MatrixStats compute_stats(const CsrMatrix<double, std::int32_t>&);
template MatrixStats compute_stats(const CsrMatrix<double, std::int64_t>&);

}  // namespace spmv
