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
    "bytes = nnz*(sizeof stored value + sizeof index) + (rows+1)*sizeof index + x_len*sizeof value + "
    "y_len*sizeof value [+ y_len*sizeof value when beta != 0, y is read]; x_len = cols and y_len = rows "
    "for A*x, swapped for A^T*x; stored value = value except f16/bf16 (2 bytes, x and y float)";

// `stored_value_size` is the bytes of one of A's values as the plan stores them (2 for fp16 / bfloat16
// storage), `value_size` those of x and y.
inline std::uint64_t minimal_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                   std::size_t stored_value_size, std::size_t value_size, std::size_t index_size,
                                   Operation op, bool beta_nonzero) {
  const auto n = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const std::uint64_t x_len = op == Operation::NonTranspose ? n(cols) : n(rows);
  const std::uint64_t y_len = op == Operation::NonTranspose ? n(rows) : n(cols);
  std::uint64_t bytes = n(nnz) * (stored_value_size + index_size) + (n(rows) + 1) * index_size +
                        x_len * value_size + y_len * value_size;
  if (beta_nonzero) bytes += y_len * value_size;
  return bytes;
}

// A's values stored in the vectors' type.
inline std::uint64_t minimal_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_size,
                                   std::size_t index_size, Operation op, bool beta_nonzero) {
  return minimal_bytes(rows, cols, nnz, value_size, value_size, index_size, op, beta_nonzero);
}

// The FEM local-matrix-assembly operator (`spmv bench --lma`, docs/algorithms/lma.md): every element's
// dense matrix and unknown map once, x and y once (the gathers of x and the scatters into y are counted
// once per entry, as the CSR model counts x once).
inline constexpr std::string_view kLmaByteModelDescription =
    "lma: bytes = elements*npe^2*sizeof value + elements*npe*sizeof index + 2*unknowns*sizeof value "
    "[+ unknowns*sizeof value when beta != 0]; GFLOP/s = 2*(sum over elements of its unknowns^2)/time";

inline std::uint64_t lma_minimal_bytes(std::int64_t elements, int nodes_per_element, std::int64_t unknowns,
                                       std::size_t value_size, std::size_t index_size, bool beta_nonzero) {
  const auto n = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const auto npe = static_cast<std::uint64_t>(nodes_per_element);
  std::uint64_t bytes = n(elements) * npe * (npe * value_size + index_size) + 2 * n(unknowns) * value_size;
  if (beta_nonzero) bytes += n(unknowns) * value_size;
  return bytes;
}

}  // namespace spmv::bench
