#pragma once
// Symmetric reordering of a square matrix, B = P A P^T, for the locality of the x gathers: rows that
// share columns are numbered close together, so a block of rows reads fewer distinct cache sectors
// of x. Options::reorder makes a plan do this once and permute x and y on the way in and out of each
// product (its cost is part of every product; docs/ALGORITHMS.md "Reordering"); solvers and
// researchers who keep their vectors in the new numbering call these functions themselves.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "spmv/csr.hpp"

namespace spmv {

enum class Reorder {
  None,
  Rcm,     // reverse Cuthill-McKee on the pattern of A + A^T (a breadth-first numbering from a
           // pseudo-peripheral row of each connected component; narrows the band)
  Degree,  // rows by decreasing length (stable): the long rows, and in graphs the hubs, first
};

std::string_view to_string(Reorder r);
// Accepts the names printed by to_string ("none", "rcm", "degree"), case-insensitive.
std::optional<Reorder> parse_reorder(std::string_view name);

// The new order: entry i is the old index of new row (and column) i, a permutation of 0 .. rows-1.
// Throws Unsupported unless A is square (a symmetric permutation needs rows == cols).
template <class Value, class Index>
std::vector<Index> reorder_permutation(const CsrMatrix<Value, Index>& a, Reorder how);

// B = P A P^T with B(i, j) = A(order[i], order[j]): row i of B is row order[i] of A with its columns
// renumbered and sorted (duplicates kept, values unchanged). Throws InvalidArgument unless `order` is
// a permutation of 0 .. rows-1 of a square A.
template <class Value, class Index>
CsrMatrix<Value, Index> permute_symmetric(const CsrMatrix<Value, Index>& a, const std::vector<Index>& order);

// A "half bandwidth" of A: max |i - j| over its nonzeros; what RCM narrows. For logs and tests.
template <class Value, class Index>
std::int64_t bandwidth(const CsrMatrix<Value, Index>& a);

}  // namespace spmv
