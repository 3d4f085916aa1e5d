#pragma once
// Matrix statistics that an algorithm selector and a person choosing a format need (the seeds
// classify matrices by mean and standard deviation of the row length).
#include <cstdint>

#include "spmv/csr.hpp"

namespace spmv {

struct MatrixStats {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  double row_mean = 0;  // nnz / rows (0 for 0 rows)
  double row_std = 0;   // population standard deviation of row lengths
  std::int64_t row_min = 0;
  std::int64_t row_max = 0;
  std::int64_t empty_rows = 0;
  std::int64_t diagonals = 0;  // occupied diagonals (distinct j - i)
  double ell_padding = 0;      // rows * row_max / nnz: stored slots per nonzero in ELL (0 if nnz == 0)
  std::int64_t bandwidth = 0;  // max |i - j| over nonzeros
  bool structurally_symmetric = false;  // square and pattern(A) == pattern(A^T)
  bool numerically_symmetric = false;   // square and A == A^T exactly
};

template <class Value, class Index>
MatrixStats compute_stats(const CsrMatrix<Value, Index>& a);

}  // namespace spmv
