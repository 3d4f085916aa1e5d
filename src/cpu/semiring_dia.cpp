// DIA of the CPU semiring product (spmv/semiring.hpp, Algorithm::Dia): the matrix converted by to_dia (one column
// of rows slots per occupied diagonal, spmv/formats.hpp), chunks of rows on demand, each walked diagonal by
// diagonal with one accumulator a row, so the rows of a chunk read consecutive slots and consecutive x.
//
// A DIA slot holding 0 may be padding or a stored zero, and only the stored ones may enter a row (min-plus:
// 0 + x_j is a wrong answer, not a zero term). Slots whose column falls outside [0, cols) are never visited (each
// diagonal's row range is clipped), and in-range slots are kept or skipped by the conversion's bit mask of stored
// slots (DiaMatrix::stored), with a select, as SELL's padding. A row's diagonals ascend, so a canonical row is
// folded in storage order in one chain (the row loop's bits for plus-times). semiring_multiply.cpp refuses the
// inputs the conversion cannot represent for a semiring (duplicates, which to_dia sums).
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

template <class Value, class Index>
void semiring_dia(Semiring s, const DiaMatrix<Value, Index>& m, const Value* x, Value* y, int threads) {
  const std::int64_t rows = m.rows, cols = m.cols;
  const auto diagonals = static_cast<std::int64_t>(m.offsets.size());
  const Value* values = m.values.data();
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    semiring_row_chunks<Ops>(rows, threads, y, [&](std::int64_t first, std::int64_t lanes, Value* acc) {
      for (std::int64_t d = 0; d < diagonals; ++d) {
        const std::int64_t offset = m.offsets[d];
        // Rows i of the chunk whose column i + offset lies in [0, cols).
        const std::int64_t begin = std::max(first, -offset), end = std::min(first + lanes, cols - offset);
        for (std::int64_t i = begin; i < end; ++i) {
          const std::int64_t slot = d * rows + i;
          const bool kept = m.is_stored(slot);
          const Value t = Ops::add(acc[i - first], Ops::mul(values[slot], x[i + offset]));
          acc[i - first] = kept ? t : acc[i - first];  // a slot without a stored entry keeps the row's value
        }
      }
    });
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_dia(Semiring, const DiaMatrix<V, I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
