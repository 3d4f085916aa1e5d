#pragma once
// Private: the CPU kernels of the semiring product (spmv/semiring.hpp), chosen by
// src/cpu/semiring_multiply.cpp, and the fold of a run of entries that both use, so that a row
// neither kernel splits gets the same bits from either.
#include <cstdint>

#include "core/semiring_ops.hpp"
#include "spmv/csr.hpp"
#include "spmv/formats.hpp"

namespace spmv::cpu::detail {

// Rows the row loop hands to a thread at a time (schedule(dynamic)); the choice rule reads the nonzeros
// of the same chunks. Dynamic because power-law rows make a static split uneven.
inline constexpr std::int64_t kSemiringRowChunk = 512;

// Entries from which the order-free semirings fold a run in four chains. One thread on the 2-core Zen 4
// VM (docs/SEMIRINGS.md): four chains took R-MAT scale 16 min-plus from 2.77 to 1.72 ms, and slowed
// 5-entry Poisson rows from 0.53 to 0.70 ms, so short runs keep one chain.
inline constexpr std::int64_t kFourChainsFrom = 16;

// ⊕ over k in [begin, end) of values[k] ⊗ x[cols[k]], from the semiring's zero.
template <class Ops, class Value, class Index>
inline Value semiring_fold(const Value* values, const Index* cols, const Value* x, Index begin, Index end) {
  Index k = begin;
  Value acc = Ops::zero();
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

// y = A ⊕.⊗ x, the merge-path split of rows + nonzeros (semiring_merge.cpp).
template <class Value, class Index>
void semiring_merge(Semiring s, const CsrMatrix<Value, Index>& a, const Value* x, Value* y, int threads);

// y = A ⊕.⊗ x on A converted to SELL-C-sigma (to_sell): slices of C rows on demand, one accumulator a lane,
// padding slots (column -1) skipped by a select, results written through the permutation (semiring_sell.cpp).
template <class Value, class Index>
void semiring_sell(Semiring s, const SellMatrix<Value, Index>& m, const Value* x, Value* y, int threads);

}  // namespace spmv::cpu::detail
