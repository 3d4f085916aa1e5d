#pragma once
// Private: the CPU kernels of the semiring product (spmv/semiring.hpp), chosen by
// src/cpu/semiring_multiply.cpp, and the fold of a run of entries that both use, so that a row
// neither kernel splits gets the same bits from either; the format kernels' shared walks (row chunks,
// ELL's slots, COO's rows) sit below it.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/semiring_ops.hpp"
#include "spmv/csr.hpp"
#include "spmv/formats.hpp"

namespace spmv::cpu::detail {

// The OpenMP threads of a product asked for `threads` (0: the OpenMP default).
inline int semiring_team(int threads) { return threads > 0 ? threads : std::max(1, omp_get_max_threads()); }

// Rows the row loop hands to a thread at a time (schedule(dynamic)); the choice rule reads the nonzeros
// of the same chunks. Dynamic because power-law rows make a static split uneven.
inline constexpr std::int64_t kSemiringRowChunk = 512;

// Entries from which the order-free semirings fold a run in four chains. One thread on the 2-core Zen 4
// VM (docs/SEMIRINGS.md): four chains took R-MAT scale 16 min-plus from 2.77 to 1.72 ms, and slowed
// 5-entry Poisson rows from 0.53 to 0.70 ms, so short runs keep one chain.
inline constexpr std::int64_t kFourChainsFrom = 16;

// ⊕ over k in [begin, end) of values[k] ⊗ x[cols[k]], from `init` (the semiring's zero unless a row is
// continued: HYB's COO part after its ELL part, in storage order, so plus-times keeps the row loop's bits).
template <class Ops, class Value, class Index>
inline Value semiring_fold(const Value* values, const Index* cols, const Value* x, Index begin, Index end,
                           Value init = Ops::zero()) {
  Index k = begin;
  Value acc = init;
  if constexpr (Ops::kOrderFree) if (end - k >= kFourChainsFrom) {
    // min, max and or give the same value in any order (a zero's sign aside: max(+0, -0) keeps its
    // first operand; tests/cpu/edge_probe_test.cpp): four independent chains on long runs, so that the
    // compare-and-select latency of one term does not serialise the run.
    Value part[3] = {Ops::zero(), Ops::zero(), Ops::zero()};
    for (; k + 4 <= end; k += 4) {
      acc = Ops::add(acc, Ops::mul(values[k], x[cols[k]]));
      part[0] = Ops::add(part[0], Ops::mul(values[k + 1], x[cols[k + 1]]));
      part[1] = Ops::add(part[1], Ops::mul(values[k + 2], x[cols[k + 2]]));
      part[2] = Ops::add(part[2], Ops::mul(values[k + 3], x[cols[k + 3]]));
    }
    acc = Ops::add(Ops::add(acc, part[0]), Ops::add(part[1], part[2]));
  }
  for (; k < end; ++k) acc = Ops::add(acc, Ops::mul(values[k], x[cols[k]]));
  return acc;
}

// y = A ⊕.⊗ x, rows in chunks of kSemiringRowChunk handed out on demand (semiring_rows.cpp).
template <class Value, class Index>
void semiring_rows(Semiring s, const CsrMatrix<Value, Index>& a, const Value* x, Value* y, int threads);

// The merge-path split of rows + nonzeros for `threads` threads: segments + 1 starts (row, nonzero), empty for a
// matrix without rows. Made once by a plan (semiring_plan.cpp), read by every product.
template <class Index>
struct SemiringMergeSplit {
  std::vector<Index> start_row, start_nz;
  int segments() const { return start_row.empty() ? 0 : static_cast<int>(start_row.size()) - 1; }
};
template <class Value, class Index>
SemiringMergeSplit<Index> semiring_merge_split(const CsrMatrix<Value, Index>& a, int threads);

// y = A ⊕.⊗ x over that split (semiring_merge.cpp); its carries are allocated by each call.
template <class Value, class Index>
void semiring_merge(Semiring s, const CsrMatrix<Value, Index>& a, const SemiringMergeSplit<Index>& split, const Value* x,
                    Value* y, int threads);

// y = A ⊕.⊗ x on A converted to SELL-C-sigma (to_sell): slices of C rows on demand, one accumulator a lane,
// padding slots (column -1) skipped by a select, results written through the permutation (semiring_sell.cpp).
template <class Value, class Index>
void semiring_sell(Semiring s, const SellMatrix<Value, Index>& m, const Value* x, Value* y, int threads);

// The format kernels (Algorithm::Ell, EllR, Hyb, Coo, Dia, CompressedCsr; docs/SEMIRINGS.md "ELL, ELL-R, HYB, COO and
// DIA over a semiring", "Compressed CSR over a semiring"), each on a matrix converted by the plan
// (semiring_plan.cpp):
//   ELL / ELL-R: slot by slot over a chunk of rows, padding (column -1) skipped by a select; ELL-R stops each
//                chunk at its longest row (row_length), ELL walks every slot (semiring_ell.cpp);
//   COO:         entries sorted by row, each chunk's first entry found by binary search (semiring_coo.cpp);
//   HYB:         the ELL part, then the row's COO overflow continuing the same fold (semiring_hyb.cpp);
//   DIA:         diagonal by diagonal over a chunk of rows, slots outside the matrix never visited and slots
//                without a stored entry (the conversion's bit mask) skipped by a select (semiring_dia.cpp).
template <class Value, class Index>
void semiring_ell(Semiring s, const EllMatrix<Value, Index>& m, const Index* row_length, const Value* x, Value* y,
                  int threads);
template <class Value, class Index>
void semiring_coo(Semiring s, const CooMatrix<Value, Index>& m, const Value* x, Value* y, int threads);
template <class Value, class Index>
void semiring_hyb(Semiring s, const HybMatrix<Value, Index>& m, const Value* x, Value* y, int threads);
template <class Value, class Index>
void semiring_dia(Semiring s, const DiaMatrix<Value, Index>& m, const Value* x, Value* y, int threads);
// Compressed CSR (Algorithm::CompressedCsr; to_compressed_csr): slices of 32 rows on demand, slot by slot with one
// accumulator a lane, each lane stopping at its row's length (padding kept out by a select), values from the
// pattern, the table or raw (semiring_compressed_csr.cpp).
template <class Value, class Index>
void semiring_compressed_csr(Semiring s, const CompressedCsrMatrix<Value, Index>& m, const Value* x, Value* y,
                             int threads);

// Chunks of kSemiringRowChunk rows handed out to OpenMP threads on demand: fold(first, lanes, acc) folds rows
// [first, first + lanes) into acc[0, lanes), which start at the semiring's zero (an empty row gives it), then
// the chunk's y is written, each row once by one thread: the values do not depend on the thread count.
template <class Ops, class Value, class Fold>
inline void semiring_row_chunks(std::int64_t rows, int threads, Value* y, Fold&& fold) {
  const std::int64_t chunks = (rows + kSemiringRowChunk - 1) / kSemiringRowChunk;
#pragma omp parallel num_threads(threads)
  {
    std::vector<Value> acc(static_cast<std::size_t>(kSemiringRowChunk));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t first = c * kSemiringRowChunk, lanes = std::min(kSemiringRowChunk, rows - first);
      std::fill_n(acc.data(), lanes, Ops::zero());
      fold(first, lanes, acc.data());
      std::copy_n(acc.data(), lanes, y + first);
    }
  }
}

// One slot of `lanes` consecutive rows of a padded column-major layout (SELL's slices, ELL) folded into acc. A
// padding slot (column -1, value 0) keeps its lane's value by a select (no branch): 0 ⊗ x0 is not the semiring's
// zero (min-plus: 0 + x0; max-times: 0 * x0 > -inf); its x read is clamped to column 0, which exists whenever a
// slot does.
template <class Ops, class Value, class Index>
inline void fold_padded_slot(const Index* cols, const Value* values, const Value* x, std::int64_t lanes, Value* acc) {
  for (std::int64_t l = 0; l < lanes; ++l) {
    const Index col = cols[l];
    const Value t = Ops::add(acc[l], Ops::mul(values[l], x[col < 0 ? Index(0) : col]));
    acc[l] = col < 0 ? acc[l] : t;  // padding keeps the lane's value
  }
}

// ELL rows [first, first + lanes) folded into acc over slots [0, width), slot by slot so that the lanes read
// consecutive addresses of the column-major layout, padding skipped (fold_padded_slot). One chain a row in
// storage order: the row loop's bits for plus-times.
template <class Ops, class Value, class Index>
inline void ell_fold_rows(const EllMatrix<Value, Index>& m, std::int64_t width, std::int64_t first,
                          std::int64_t lanes, const Value* x, Value* acc) {
  const auto rows = static_cast<std::size_t>(m.rows);
  for (std::int64_t k = 0; k < width; ++k) {
    const std::size_t base = static_cast<std::size_t>(k) * rows + static_cast<std::size_t>(first);
    fold_padded_slot<Ops>(m.col_idx.data() + base, m.values.data() + base, x, lanes, acc);
  }
}

// COO rows [first, first + lanes) folded into acc, continuing each lane's value. Entries must be sorted by row
// (to_coo keeps CSR's order; HYB's overflow is sorted by row), so a row's entries are one run, folded with
// semiring_fold in storage order; the chunk's first entry is found by binary search.
template <class Ops, class Value, class Index>
inline void coo_fold_rows(const CooMatrix<Value, Index>& m, std::int64_t first, std::int64_t lanes, const Value* x,
                          Value* acc) {
  const Index* row_idx = m.row_idx.data();
  const auto nnz = static_cast<std::int64_t>(m.row_idx.size());
  std::int64_t p = std::lower_bound(row_idx, row_idx + nnz, static_cast<Index>(first)) - row_idx;
  for (std::int64_t l = 0; l < lanes; ++l) {
    std::int64_t q = p;
    while (q < nnz && row_idx[q] == first + l) ++q;
    if (q > p)
      acc[l] = semiring_fold<Ops>(m.values.data(), m.col_idx.data(), x, static_cast<Index>(p), static_cast<Index>(q),
                                  acc[l]);
    p = q;
  }
}

}  // namespace spmv::cpu::detail
