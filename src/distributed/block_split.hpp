#pragma once
// Private: splits a rank's rows into the local block (columns it owns, renumbered from 0) and the
// remote block (other ranks' columns, renumbered into a compact ghost vector in increasing global
// order, so that the ghosts of one owner are contiguous and arrive in place). The remote block keeps
// only the rows that have remote entries (PETSc's compressed rows of B): a 3D mesh block of 44 M rows
// has ~0.3 M of them, and a product over every row would read and write all of y for nothing.
#include <cstdint>
#include <vector>

#include "spmv/csr.hpp"

namespace spmv::dist::detail {

template <class Value, class Index>
struct Blocks {
  CsrMatrix<Value, Index> local;         // rows x (col_end - col_begin)
  CsrMatrix<Value, Index> remote;        // remote_rows.size() x ghost_cols.size()
  std::vector<Index> remote_rows;        // the rank's row of each remote block row, increasing
  std::vector<std::int64_t> ghost_cols;  // global column of each ghost entry, increasing
};

// Entries keep their order within each row (duplicates and explicit zeros too). Unsupported when a
// block does not fit Index.
template <class Value, class Index>
Blocks<Value, Index> split_blocks(const CsrMatrix<Value, std::int64_t>& rows, std::int64_t col_begin,
                                  std::int64_t col_end);

// The row boundaries (increasing, from 0 to a.rows, no empty chunk) of at most `chunks` chunks of
// about equal rows + nonzeros (partition_nonzeros' weight), and the rows [begin, end) of `a` as a matrix
// of their own (all of a's columns). The local block's progress chunks (docs/DISTRIBUTED.md "Threads,
// progress and overlap").
template <class Value, class Index>
std::vector<Index> chunk_boundaries(const CsrMatrix<Value, Index>& a, int chunks);
template <class Value, class Index>
CsrMatrix<Value, Index> row_range(const CsrMatrix<Value, Index>& a, Index begin, Index end);

}  // namespace spmv::dist::detail
