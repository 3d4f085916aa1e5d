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

// Tile boundaries (§4.1, one search per tile, at plan time): coords[t] = path coordinate on diagonal t * tile_items.
template <class Index>
__global__ void merge_path_tile_search_kernel(const Index* row_ptr, Index rows, Index nnz, long long tile_items,
                                              long long num_tiles, MergeCoordinate<Index>* coords) {
  const long long path = static_cast<long long>(rows) + nnz;
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t <= num_tiles;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long diagonal = t * tile_items < path ? t * tile_items : path;
    const MergeCoordinate<long long> c = merge_path_search<long long>(diagonal, row_ptr + 1, rows, nnz);
    coords[t] = {static_cast<Index>(c.row), static_cast<Index>(c.nz)};
  }
}

}  // namespace spmv::cuda
