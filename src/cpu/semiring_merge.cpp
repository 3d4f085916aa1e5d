// The nnz-balanced CPU semiring product (spmv/semiring.hpp, Algorithm::MergeParallel): the merge-path
// split of the SpMV's merge-parallel (Merrill & Garland, SC'16, §4; cpu/merge_path.hpp) over the rows +
// nonzeros, so a hub row of a power-law graph is walked by several threads instead of one. Each segment
// ⊕-folds the rows whose end it consumes into y and the open row it stops inside into a carry; the
// carries are ⊕-added afterwards in segment order, so min, max and or-and give the definition's values
// (exact in any order) and plus-times the same bits for a given thread count.
#include <vector>

#include "cpu/instantiate.hpp"
#include "cpu/merge_path.hpp"
#include "cpu/semiring_kernels.hpp"

namespace spmv::cpu::detail {

// Segments a thread, each of at least kMinSegmentItems merge steps, taken in turn (schedule(dynamic, 1)):
// sixteen, where the SpMV takes four. Two threads on the 2-core Zen 4 VM (another build running), row
// loop time / merge-path time over two interleaved processes, four segments a thread -> sixteen: R-MAT
// scale 16 plus-times 0.88-0.96 -> 0.95-0.98, R-MAT scale 17 (a = 0.75) min-plus 0.93-1.02 -> 1.03-1.04 and
// plus-times 0.89-0.97 -> 0.98-1.03, random 4 a row plus-times 1.09-1.10 -> 1.22-1.24. Equal rows +
// nonzeros are not equal time where some rows' gathers hit the cache and others' miss (R-MAT), or where a
// core is shared; finer pieces let the schedule even that out.
constexpr int kSemiringSegmentsPerThread = 16;

template <class Value, class Index>
SemiringMergeSplit<Index> semiring_merge_split(const CsrMatrix<Value, Index>& a, int threads) {
  SemiringMergeSplit<Index> split;
  if (a.rows == 0) return split;  // nothing to split: no row is written
  const int segments = merge_path_segments(false, threads, a.rows + a.nnz(), kSemiringSegmentsPerThread);
  merge_path_split(a.row_ptr.data(), a.rows, a.nnz(), segments, split.start_row, split.start_nz);
  return split;
}

template <class Value, class Index>
void semiring_merge(Semiring s, const CsrMatrix<Value, Index>& a, const SemiringMergeSplit<Index>& split, const Value* x,
                    Value* y, int threads) {
  const std::int64_t rows = a.rows;
  const int segments = split.segments();
  if (rows == 0 || segments <= 0) return;
  const std::vector<Index>& start_row = split.start_row;
  const std::vector<Index>& start_nz = split.start_nz;
  // The carries are this call's (not the split's): products of one plan may run at once.
  // carry_row[s] == rows: segment s stopped at a row end (nothing open) or holds no entries of its open row.
  std::vector<Index> carry_row(static_cast<std::size_t>(segments));
  std::vector<Value> carry_value(static_cast<std::size_t>(segments));
  const Index* row_ptr = a.row_ptr.data();
  const Index* cols = a.col_idx.data();
  const Value* values = a.values.data();
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int seg = 0; seg < segments; ++seg) {
      Index r = start_row[seg], k = start_nz[seg];
      const Index r_end = start_row[seg + 1], k_end = start_nz[seg + 1];
      // Rows whose end this segment consumes: exactly one segment writes each row, an empty one too.
      for (; r < r_end; ++r) {
        const Index end = row_ptr[r + 1];
        y[r] = semiring_fold<Ops>(values, cols, x, k, end);
        k = end;
      }
      carry_row[seg] = k < k_end ? r_end : static_cast<Index>(rows);
      carry_value[seg] = semiring_fold<Ops>(values, cols, x, k, k_end);
    }
    // In segment order, after the region: deterministic and race-free. A carry's row is written by a
    // later segment (the one that consumes its end), so y holds that row's last piece here. Empty
    // carries are skipped: plus-times would turn a row's -0 into +0.
    for (int seg = 0; seg < segments; ++seg)
      if (carry_row[seg] < rows) y[carry_row[seg]] = Ops::add(y[carry_row[seg]], carry_value[seg]);
  });
}

#define SPMV_INSTANTIATE(V, I)                                                                             \
  template SemiringMergeSplit<I> semiring_merge_split(const CsrMatrix<V, I>&, int);                        \
  template void semiring_merge(Semiring, const CsrMatrix<V, I>&, const SemiringMergeSplit<I>&, const V*, V*, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu::detail
