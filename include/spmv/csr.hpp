#pragma once
// Host sparse matrices in the two interchange formats: CSR (primary) and COO (triplets, as read from
// files). Value types: float, double. Index types: int32_t, int64_t (one type for row pointers and
// column indices; to_csr refuses sizes that overflow it with a message naming the 64-bit alternative).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spmv {

template <class Value, class Index>
struct CsrMatrix {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  std::vector<Index> row_ptr{0};  // rows + 1 entries, row_ptr[0] == 0, non-decreasing
  std::vector<Index> col_idx;     // nnz entries in [0, cols)
  std::vector<Value> values;      // nnz entries

  Index nnz() const { return static_cast<Index>(col_idx.size()); }
  Index row_length(Index r) const { return row_ptr[r + 1] - row_ptr[r]; }
};

template <class Value, class Index>
struct CooMatrix {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  std::vector<Index> row_idx;
  std::vector<Index> col_idx;
  std::vector<Value> values;

  Index nnz() const { return static_cast<Index>(row_idx.size()); }
};

// Throws InvalidArgument naming the first violation: negative sizes, row_ptr of the wrong length,
// not starting at 0, decreasing, not ending at nnz, columns out of range, array lengths that differ.
template <class Value, class Index>
void validate(const CsrMatrix<Value, Index>& a);
template <class Value, class Index>
void validate(const CooMatrix<Value, Index>& a);

// Builds a CSR matrix from user arrays and validates it.
template <class Value, class Index>
CsrMatrix<Value, Index> make_csr(Index rows, Index cols, std::vector<Index> row_ptr,
                                 std::vector<Index> col_idx, std::vector<Value> values);

// True when every row's columns are strictly increasing (sorted, no duplicates).
template <class Value, class Index>
bool is_canonical(const CsrMatrix<Value, Index>& a);

// std::nullopt when A equals its transpose exactly, so that A^T x is A x term for term: A is square,
// every row's columns are strictly increasing, and every stored a_ij faces a stored a_ji of equal value
// (NaN equals nothing; +0 equals -0). Otherwise the first row that breaks it, described (the entry
// and what faces it). Validates A first. Parallel, no copy; stops early at a violation.
template <class Value, class Index>
std::optional<std::string> symmetry_violation(const CsrMatrix<Value, Index>& a);

// Sorts columns within each row and sums duplicates (explicit zeros are kept).
template <class Value, class Index>
void canonicalize(CsrMatrix<Value, Index>& a);

enum class Duplicates { Keep, Sum };

// COO -> CSR, converting value and index types. Entries keep their input order within a row unless
// duplicates are summed (which also sorts). Throws Unsupported when rows, cols or nnz do not fit
// ToIndex, InvalidArgument when an entry is out of range.
template <class ToValue, class ToIndex, class Value, class Index>
CsrMatrix<ToValue, ToIndex> to_csr(const CooMatrix<Value, Index>& coo,
                                   Duplicates duplicates = Duplicates::Keep);

// CSR -> COO (row-major order as stored).
template <class Value, class Index>
CooMatrix<Value, Index> to_coo(const CsrMatrix<Value, Index>& a);

// Converts value and/or index type, refusing (Unsupported) sizes that do not fit the new index type.
template <class ToValue, class ToIndex, class Value, class Index>
CsrMatrix<ToValue, ToIndex> convert(const CsrMatrix<Value, Index>& a);

// A^T as a CSR matrix (i.e. A in CSC), columns sorted; values moved exactly.
template <class Value, class Index>
CsrMatrix<Value, Index> transpose(const CsrMatrix<Value, Index>& a);

// True when the given sizes fit Index (used to pick 32- or 64-bit indices automatically).
template <class Index>
bool fits_index(std::int64_t rows, std::int64_t cols, std::int64_t nnz);

namespace detail {
// Unsupported naming the sizes when they do not fit Index (to_csr, convert, read_csr).
template <class Index>
void refuse_if_too_large(std::int64_t rows, std::int64_t cols, std::int64_t nnz);
}  // namespace detail

}  // namespace spmv
