#pragma once
// Private: the graph of a square matrix's pattern, A + A^T without the diagonal, duplicates removed.
// What reordering (RCM walks it, src/core/reorder.cpp) and graph partitioning (METIS cuts it,
// src/distributed/graph_partition.cpp) both need.
#include <vector>

#include "spmv/csr.hpp"

namespace spmv::detail {

template <class Index>
struct SymmetricGraph {
  std::vector<Index> start;  // rows + 1: vertex v's neighbours are adj[start[v], start[v + 1]), sorted
  std::vector<Index> adj;
  Index degree(Index v) const { return start[v + 1] - start[v]; }
};

// Instantiated for float/double x int32_t/int64_t; a.rows == a.cols is the caller's to check.
template <class Value, class Index>
SymmetricGraph<Index> symmetric_pattern(const CsrMatrix<Value, Index>& a);

}  // namespace spmv::detail
