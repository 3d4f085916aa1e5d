#pragma once
// Private: splits a rank's rows into the local block (columns it owns, renumbered from 0) and the
// remote block (other ranks' columns, renumbered into a compact ghost vector in increasing global
// order, so that the ghosts of one owner are contiguous and arrive in place).
#include <cstdint>
#include <vector>

#include "spmv/csr.hpp"

namespace spmv::dist::detail {

template <class Value, class Index>
struct Blocks {
  CsrMatrix<Value, Index> local;         // rows x (col_end - col_begin)
  CsrMatrix<Value, Index> remote;        // rows x ghost_cols.size()
  std::vector<std::int64_t> ghost_cols;  // global column of each ghost entry, increasing
};

// Entries keep their order within each row (duplicates and explicit zeros too). Unsupported when a
// block does not fit Index.
template <class Value, class Index>
Blocks<Value, Index> split_blocks(const CsrMatrix<Value, std::int64_t>& rows, std::int64_t col_begin,
                                  std::int64_t col_end);

}  // namespace spmv::dist::detail
