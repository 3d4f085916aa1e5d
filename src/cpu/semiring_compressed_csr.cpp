// Compressed CSR of the CPU semiring product (spmv/semiring.hpp, Algorithm::CompressedCsr): the matrix converted by
// to_compressed_csr (spmv/formats.hpp, docs/algorithms/formats.md: slices of 32 rows stored column-major, uint16 row
// lengths, a base column a slice with 16- or 32-bit offsets, values as pattern, table + 8/16-bit codes or raw), the
// layout the CUDA kernel reads, so that CI runs the semiring's walk over it. Slices are handed out to OpenMP threads
// on demand (the row loop's chunk of rows at a time); a slice is walked slot by slot, its lanes (rows) advancing
// together over consecutive slots, each lane stopping at its own length: a slot past it is padding (offset 0, code
// 0, which would bring x[base] into the row) and keeps the lane's value by a select, never folded. Accumulators
// start at the semiring's zero, so an empty row gives it. A lane folds its row's entries in storage order in one
// chain: the row loop's order, so plus-times gives the row loop's sum within rounding and min, max and or-and its
// bits (a zero's sign aside, docs/SEMIRINGS.md). A pattern matrix's entries are 1; a code's value is the table's
// entry with the stored value's bits. The value mode and the offset width are fixed per matrix and per slice, so the
// slot loop is compiled for each and carries no branch on them.
#include <algorithm>
#include <cstdint>

#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {
namespace {

// Slice s's rows folded into acc[0, lanes): slot k of lane l at compressed_slot(k, lanes, l) of the slice, its
// column col_base + offsets[slot], its value value(slice_ptr[s] + slot).
template <class Ops, class Value, class Index, class Offset, class ValueAt>
void fold_slice(const CompressedCsrMatrix<Value, Index>& m, std::int64_t s, const Offset* offsets, ValueAt&& value,
                const Value* x, Value* acc) {
  const std::int64_t lanes = compressed_slice_lanes(m.rows, s);
  const std::int64_t first_row = s * kCompressedSliceRows;
  const std::int64_t first_slot = m.slice_ptr[s];
  const std::int64_t width = lanes > 0 ? (m.slice_ptr[s + 1] - first_slot) / lanes : 0;
  const std::int64_t base = m.col_base[s];
  const std::uint16_t* length = m.row_length.data() + first_row;
  for (std::int64_t k = 0; k < width; ++k) {
    const std::int64_t slot = compressed_slot(k, lanes, 0);
    for (std::int64_t l = 0; l < lanes; ++l) {
      const Value t = Ops::add(acc[l], Ops::mul(value(first_slot + slot + l), x[base + offsets[slot + l]]));
      acc[l] = k < length[l] ? t : acc[l];  // padding keeps the lane's value
    }
  }
}

template <class Ops, class Value, class Index, class ValueAt>
void fold_slices(const CompressedCsrMatrix<Value, Index>& m, ValueAt&& value, const Value* x, Value* y, int threads) {
  const std::int64_t slices = m.num_slices();
  const std::int64_t chunk = std::max<std::int64_t>(1, kSemiringRowChunk / kCompressedSliceRows);
#pragma omp parallel for num_threads(threads) schedule(dynamic, chunk)
  for (std::int64_t s = 0; s < slices; ++s) {
    Value acc[kCompressedSliceRows];
    std::fill_n(acc, kCompressedSliceRows, Ops::zero());
    if (m.wide[s])
      fold_slice<Ops>(m, s, m.col32.data() + m.col_start[s], value, x, acc);
    else
      fold_slice<Ops>(m, s, m.col16.data() + m.col_start[s], value, x, acc);
    std::copy_n(acc, compressed_slice_lanes(m.rows, s), y + s * kCompressedSliceRows);
  }
}

}  // namespace

template <class Value, class Index>
void semiring_compressed_csr(Semiring s, const CompressedCsrMatrix<Value, Index>& m, const Value* x, Value* y,
                             int threads) {
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    const Value* table = m.table.data();
    switch (m.value_mode) {
      case CompressedValues::Pattern:
        return fold_slices<Ops>(m, [](std::int64_t) { return Value(1); }, x, y, threads);
      case CompressedValues::Code8: {
        const std::uint8_t* code = m.code8.data();
        return fold_slices<Ops>(m, [=](std::int64_t at) { return table[code[at]]; }, x, y, threads);
      }
      case CompressedValues::Code16: {
        const std::uint16_t* code = m.code16.data();
        return fold_slices<Ops>(m, [=](std::int64_t at) { return table[code[at]]; }, x, y, threads);
      }
      case CompressedValues::Raw: {
        const Value* values = m.values.data();
        return fold_slices<Ops>(m, [=](std::int64_t at) { return values[at]; }, x, y, threads);
      }
    }
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_compressed_csr(Semiring, const CompressedCsrMatrix<V, I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
