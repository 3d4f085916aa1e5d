#pragma once
// The minimal byte model behind the "effective GB/s" of `spmv bench`: every array an SpMV must touch,
// read or written exactly once, nothing else (no x re-reads, no plan data). A kernel at 100 % of copy
// bandwidth under this model cannot go faster; formats with padding or extra arrays pay for them by
// showing a lower figure, which is the point.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spmv/algorithm.hpp"

namespace spmv::bench {

inline constexpr std::string_view kByteModelDescription =
    "bytes = nnz*(sizeof value + sizeof index) + (rows+1)*sizeof index + x_len*sizeof value + "
    "y_len*sizeof value [+ y_len*sizeof value when beta != 0, y is read]; x_len = cols and y_len = rows "
    "for A*x, swapped for A^T*x";

inline std::uint64_t minimal_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_size,
                                   std::size_t index_size, Operation op, bool beta_nonzero) {
  const auto n = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const std::uint64_t x_len = op == Operation::NonTranspose ? n(cols) : n(rows);
  const std::uint64_t y_len = op == Operation::NonTranspose ? n(rows) : n(cols);
  std::uint64_t bytes = n(nnz) * (value_size + index_size) + (n(rows) + 1) * index_size + x_len * value_size +
                        y_len * value_size;
  if (beta_nonzero) bytes += y_len * value_size;
  return bytes;
}

}  // namespace spmv::bench
