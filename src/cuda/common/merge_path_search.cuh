#pragma once
// Merge-path diagonal search (Merrill & Garland, "Merge-based Parallel Sparse Matrix-Vector
// Multiplication", SC'16, §4.1; Odeh et al. 2012): the merge of A = row end offsets (row_ptr + 1) with
// B = the natural numbers 0..nnz-1 (nonzero indices) is a path of rows + nnz steps; a 2D binary search
// along one cross diagonal finds where the path crosses it.
#include <cuda_runtime.h>

namespace spmv::cuda {

// A point on the merge path: `row` row ends and `nz` nonzeros consumed.
template <class Offset>
struct MergeCoordinate {
  Offset row;
  Offset nz;
};

// The path's coordinate on `diagonal` (row + nz == diagonal) for `rows` row ends
// `row_ends[0..rows)` against nonzero indices 0..nnz-1. Ties consume the row end first: a row ends
// before the nonzero whose index equals its end offset, so empty rows end where they start.
template <class Offset, class RowEnds>
__host__ __device__ __forceinline__ MergeCoordinate<Offset> merge_path_search(Offset diagonal, const RowEnds& row_ends,
                                                                              Offset rows, Offset nnz) {
  Offset lo = diagonal > nnz ? diagonal - nnz : Offset(0);
  Offset hi = diagonal < rows ? diagonal : rows;
  while (lo < hi) {
    const Offset pivot = lo + (hi - lo) / 2;
    if (static_cast<Offset>(row_ends[pivot]) <= diagonal - pivot - 1)
      lo = pivot + 1;  // row `pivot` ends before nonzero diagonal - pivot - 1: the split lies further along A
    else
      hi = pivot;
  }
  return {hi, diagonal - hi};
}

}  // namespace spmv::cuda
