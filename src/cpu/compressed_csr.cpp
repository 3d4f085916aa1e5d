// CPU twin of the compressed CSR format (spmv/formats.hpp, docs/algorithms/formats.md): the host conversion
// plus simple loops over the same slot layout the CUDA kernel reads (compressed_slot), so CI tests the
// layout the GPU runs on. NonTranspose: OpenMP over slices, each row summed in its stored order up to its
// own length (padding never read). Transpose: sequential scatter after y = beta * y (no atomics needed).
// alpha == 0 never reads A or x and beta == 0 never reads y (make_cpu_format_kernel's wrapper and
// combine_row below).
#include <cstdint>
#include <string>

#include "cpu/cpu_operator.hpp"
#include "spmv/formats.hpp"

namespace spmv::detail {
namespace {

// The value of slot `at`: one branch per slot on a mode that is fixed for the whole matrix.
template <class Value, class Index>
Value value_at(const CompressedCsrMatrix<Value, Index>& m, std::int64_t at) {
  switch (m.value_mode) {
    case CompressedValues::Pattern: return Value{1};
    case CompressedValues::Code8: return m.table[m.code8[at]];
    case CompressedValues::Code16: return m.table[m.code16[at]];
    default: return m.values[at];
  }
}

// Calls visit(row, column, value) for every entry of the rows of slice s, in each row's stored order.
template <class Value, class Index, class Visit>
void for_each_entry(const CompressedCsrMatrix<Value, Index>& m, std::int64_t s, Visit&& visit) {
  const std::int64_t lanes = compressed_slice_lanes(m.rows, s);
  const std::int64_t base = m.col_base[s];
  for (std::int64_t lane = 0; lane < lanes; ++lane) {
    const std::int64_t r = s * kCompressedSliceRows + lane;
    for (std::int64_t k = 0; k < m.row_length[r]; ++k) {
      const std::int64_t slot = compressed_slot(k, lanes, lane);
      const std::int64_t col = base + (m.wide[s] ? std::int64_t{m.col32[m.col_start[s] + slot]}
                                                 : std::int64_t{m.col16[m.col_start[s] + slot]});
      visit(r, col, value_at(m, m.slice_ptr[s] + slot));
    }
  }
}

}  // namespace

template <class Value, class Index>
void compressed_csr_apply(const CompressedCsrMatrix<Value, Index>& m, Operation op, Value alpha, const Value* x,
                          Value beta, Value* y) {
  const std::int64_t slices = m.num_slices();
  if (op == Operation::NonTranspose) {
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t s = 0; s < slices; ++s) {
      // Row sums of the slice, then one y update per row; rows of a slice are consecutive.
      Value sum[kCompressedSliceRows] = {};
      const std::int64_t first = s * kCompressedSliceRows;
      for_each_entry(m, s, [&](std::int64_t r, std::int64_t col, Value v) { sum[r - first] += v * x[col]; });
      for (std::int64_t lane = 0; lane < compressed_slice_lanes(m.rows, s); ++lane)
        y[first + lane] = beta == Value{0} ? alpha * sum[lane] : alpha * sum[lane] + beta * y[first + lane];
    }
    return;
  }
  const std::int64_t cols = m.cols;
  for (std::int64_t j = 0; j < cols; ++j) y[j] = beta == Value{0} ? Value{0} : beta * y[j];
  for (std::int64_t s = 0; s < slices; ++s)
    for_each_entry(m, s, [&](std::int64_t r, std::int64_t col, Value v) { y[col] += v * (alpha * x[r]); });
}

#define SPMV_INSTANTIATE(V, I)                                                                             \
  template void compressed_csr_apply(const CompressedCsrMatrix<V, I>&, Operation, V, const V*, V, V*);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
