#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/auto_rule.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda {

struct RowStatistics {
  double mean = 0;
  double stddev = 0;  // population standard deviation of row lengths
  std::int64_t max = 0;
  std::int64_t empty_rows = 0;
  // Mean over the non-empty rows of |last column - first column| (the row's column span when its
  // columns are sorted): small against the column count for stencils, bands and meshes in a local
  // numbering, about the column count for scattered columns.
  double mean_span = 0;
};

// Synchronises `stream` (plan-time only).
template <class Value, class Index>
RowStatistics row_statistics(const CsrView<Value, Index>& matrix, cudaStream_t stream);

// The row shape Auto's rule reads (core/auto_rule.hpp), from the statistics measured on the device.
template <class Value, class Index>
detail::RowShape row_shape(const CsrView<Value, Index>& matrix, const RowStatistics& s) {
  return {matrix.rows, matrix.cols, matrix.nnz, s.mean, s.stddev, s.max, s.empty_rows};
}

}  // namespace spmv::cuda
