#include "spmv/csr.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "core/symmetry_violation.hpp"
#include "spmv/error.hpp"
#include "spmv/host_memory.hpp"

namespace spmv {
namespace {

std::string at(const char* what, std::int64_t i) { return std::string(what) + "[" + std::to_string(i) + "]"; }

// The smallest i in [0, n) with bad(i), or n: OpenMP threads over blocks (these checks run on every
// plan and verification, and a serial pass over 2.4 G nonzeros costs seconds: issue 18), the answer
// the same for any thread count. A block is first tested without an early exit (so that the compiler
// can vectorise the common, valid case), and searched only when it holds a hit; blocks after a hit
// this thread already found are skipped. Blocks hold 2^14 indices, fewer when n would give each thread
// under 64 of them, and are handed out dynamically: for symmetry_violation, whose test of a row costs
// a binary search per entry, one block of R-MAT's first, longest rows or one of bcsstk16's 4884 rows
// of 60 per thread took 2-3x the time of small dynamic blocks (2-core VM, 2026-11-27).
template <class Bad>
std::int64_t first_index_where(std::int64_t n, Bad bad) {
  const std::int64_t block =
      std::clamp<std::int64_t>(n / (64 * std::int64_t{omp_get_max_threads()}), 64, std::int64_t{1} << 14);
  std::int64_t first = n;
#pragma omp parallel for schedule(dynamic) reduction(min : first)
  for (std::int64_t b = 0; b < (n + block - 1) / block; ++b) {
    if (b * block >= first) continue;
    const std::int64_t begin = b * block, end = std::min(n, begin + block);
    bool any = false;
    for (std::int64_t i = begin; i < end; ++i) any |= bad(i);
    if (!any) continue;
    for (std::int64_t i = begin; i < end; ++i)
      if (bad(i)) {
        first = std::min(first, i);
        break;
      }
  }
  return first;
}

}  // namespace

template <class Index>
void detail::refuse_if_too_large(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  if (!fits_index<Index>(rows, cols, nnz))
    throw Unsupported("matrix of " + std::to_string(rows) + " x " + std::to_string(cols) + " with " +
                      std::to_string(nnz) + " nonzeros does not fit " +
                      std::to_string(8 * sizeof(Index)) + "-bit indices; use 64-bit indices");
}

template <class Index>
bool fits_index(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  constexpr auto max = static_cast<std::int64_t>(std::numeric_limits<Index>::max());
  return rows >= 0 && cols >= 0 && nnz >= 0 && rows <= max && cols <= max && nnz <= max &&
         rows < max;  // row_ptr holds rows + 1 entries, indexed by Index
}

template <class Value, class Index>
void validate(const CsrMatrix<Value, Index>& a) {
  if (a.rows < 0 || a.cols < 0)
    throw InvalidArgument("CSR: negative size " + std::to_string(a.rows) + " x " + std::to_string(a.cols));
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1)
    throw InvalidArgument("CSR: row_ptr has " + std::to_string(a.row_ptr.size()) + " entries, expected rows + 1 = " +
                          std::to_string(static_cast<std::int64_t>(a.rows) + 1));
  if (a.col_idx.size() != a.values.size())
    throw InvalidArgument("CSR: col_idx has " + std::to_string(a.col_idx.size()) + " entries but values has " +
                          std::to_string(a.values.size()));
  if (a.row_ptr[0] != 0) throw InvalidArgument("CSR: row_ptr[0] is " + std::to_string(a.row_ptr[0]) + ", expected 0");
  const Index* ptr = a.row_ptr.data();  // raw pointers and values: the per-entry tests stay in registers
  const std::int64_t decrease = first_index_where(a.rows, [ptr](std::int64_t r) { return ptr[r + 1] < ptr[r]; });
  if (decrease < a.rows) throw InvalidArgument("CSR: row_ptr decreases at " + at("row_ptr", decrease + 1));
  if (static_cast<std::size_t>(a.row_ptr[a.rows]) != a.col_idx.size())
    throw InvalidArgument("CSR: row_ptr[rows] is " + std::to_string(a.row_ptr[a.rows]) + " but there are " +
                          std::to_string(a.col_idx.size()) + " nonzeros");
  const auto nnz = static_cast<std::int64_t>(a.col_idx.size());
  const Index* col = a.col_idx.data();
  const Index cols = a.cols;
  const std::int64_t k = first_index_where(nnz, [col, cols](std::int64_t i) { return col[i] < 0 || col[i] >= cols; });
  if (k < nnz)
    throw InvalidArgument("CSR: " + at("col_idx", k) + " = " + std::to_string(a.col_idx[k]) + " is outside [0, " +
                          std::to_string(a.cols) + ")");
}

template <class Value, class Index>
void validate(const CooMatrix<Value, Index>& a) {
  if (a.rows < 0 || a.cols < 0)
    throw InvalidArgument("COO: negative size " + std::to_string(a.rows) + " x " + std::to_string(a.cols));
  if (a.row_idx.size() != a.col_idx.size() || a.col_idx.size() != a.values.size())
    throw InvalidArgument("COO: row_idx, col_idx and values have different lengths");
  for (std::size_t k = 0; k < a.row_idx.size(); ++k) {
    if (a.row_idx[k] < 0 || a.row_idx[k] >= a.rows)
      throw InvalidArgument("COO: " + at("row_idx", k) + " = " + std::to_string(a.row_idx[k]) + " is outside [0, " +
                            std::to_string(a.rows) + ")");
    if (a.col_idx[k] < 0 || a.col_idx[k] >= a.cols)
      throw InvalidArgument("COO: " + at("col_idx", k) + " = " + std::to_string(a.col_idx[k]) + " is outside [0, " +
                            std::to_string(a.cols) + ")");
  }
}

template <class Value, class Index>
CsrMatrix<Value, Index> make_csr(Index rows, Index cols, std::vector<Index> row_ptr, std::vector<Index> col_idx,
                                 std::vector<Value> values) {
  CsrMatrix<Value, Index> a{rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values)};
  validate(a);
  return a;
}

template <class Value, class Index>
bool is_canonical(const CsrMatrix<Value, Index>& a) {
  const std::int64_t rows = a.rows;
  const Index* ptr = a.row_ptr.data();
  const Index* col = a.col_idx.data();
  return first_index_where(rows, [ptr, col](std::int64_t r) {
           for (Index k = ptr[r] + 1; k < ptr[r + 1]; ++k)
             if (col[k - 1] >= col[k]) return true;
           return false;
         }) == rows;
}

std::string detail::describe_symmetry_break(SymmetryBreak why, std::int64_t row, std::int64_t col, double value,
                                            double mirror, std::int64_t previous) {
  char text[160];
  const auto r = static_cast<long long>(row), c = static_cast<long long>(col);
  if (why == SymmetryBreak::ColumnsNotIncreasing)
    std::snprintf(text, sizeof text, "row %lld does not hold strictly increasing columns (column %lld after %lld)", r,
                  c, static_cast<long long>(previous));
  else if (why == SymmetryBreak::MirrorMissing)
    std::snprintf(text, sizeof text, "entry (%lld, %lld) is stored but (%lld, %lld) is not", r, c, c, r);
  else
    std::snprintf(text, sizeof text, "entry (%lld, %lld) = %.17g but (%lld, %lld) = %.17g", r, c, value, c, r, mirror);
  return text;
}

template <class Value, class Index>
std::optional<std::string> symmetry_violation(const CsrMatrix<Value, Index>& a) {
  validate(a);  // the searches below index by stored columns
  if (a.rows != a.cols)
    return "A is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", not square";
  const Index* ptr = a.row_ptr.data();
  const Index* col = a.col_idx.data();
  const Value* val = a.values.data();
  // Row r's entries in order: the first that breaks A == A^T (k, and p the position of its mirror).
  // Rows that are not sorted are caught by their own check, so the binary searches in the others hold.
  using detail::SymmetryBreak;
  auto check_row = [ptr, col, val](std::int64_t r, Index& k, Index& p) {
    for (k = ptr[r]; k < ptr[r + 1]; ++k) {
      if (k > ptr[r] && col[k - 1] >= col[k]) return SymmetryBreak::ColumnsNotIncreasing;
      const Index j = col[k];
      const Index* end = col + ptr[j + 1];
      const Index* mirror = std::lower_bound(col + ptr[j], end, static_cast<Index>(r));
      if (mirror == end || *mirror != static_cast<Index>(r)) return SymmetryBreak::MirrorMissing;
      p = static_cast<Index>(mirror - col);
      if (!(val[p] == val[k])) return SymmetryBreak::MirrorDiffers;
    }
    return SymmetryBreak::None;
  };
  const std::int64_t r = first_index_where(a.rows, [&check_row](std::int64_t row) {
    Index k = 0, p = 0;
    return check_row(row, k, p) != SymmetryBreak::None;
  });
  if (r == a.rows) return std::nullopt;
  Index k = 0, p = 0;
  const SymmetryBreak why = check_row(r, k, p);
  return detail::describe_symmetry_break(why, r, col[k], static_cast<double>(val[k]),
                                         why == SymmetryBreak::MirrorDiffers ? static_cast<double>(val[p]) : 0.0,
                                         k > ptr[r] ? col[k - 1] : -1);
}

template <class Value, class Index>
void canonicalize(CsrMatrix<Value, Index>& a) {
  std::vector<Index> new_ptr(a.row_ptr.size(), 0);
  std::vector<std::pair<Index, Value>> row;
  Index out = 0;
  for (Index r = 0; r < a.rows; ++r) {
    row.clear();
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) row.emplace_back(a.col_idx[k], a.values[k]);
    // stable: duplicates are summed in input order, so the result does not depend on the sort
    std::stable_sort(row.begin(), row.end(), [](auto& x, auto& y) { return x.first < y.first; });
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0 && row[i].first == a.col_idx[out - 1]) {
        a.values[out - 1] += row[i].second;
      } else {
        a.col_idx[out] = row[i].first;
        a.values[out] = row[i].second;
        ++out;
      }
    }
    new_ptr[r + 1] = out;
  }
  a.row_ptr = std::move(new_ptr);
  a.col_idx.resize(out);
  a.values.resize(out);
}

template <class ToValue, class ToIndex, class Value, class Index>
CsrMatrix<ToValue, ToIndex> to_csr(const CooMatrix<Value, Index>& coo, Duplicates duplicates) {
  validate(coo);
  const auto nnz = static_cast<std::int64_t>(coo.row_idx.size());
  detail::refuse_if_too_large<ToIndex>(coo.rows, coo.cols, nnz);
  CsrMatrix<ToValue, ToIndex> a;
  a.rows = static_cast<ToIndex>(coo.rows);
  a.cols = static_cast<ToIndex>(coo.cols);
  reserve_huge_pages(a.row_ptr, static_cast<std::size_t>(a.rows) + 1);  // before the first write
  reserve_huge_pages(a.col_idx, static_cast<std::size_t>(nnz));
  reserve_huge_pages(a.values, static_cast<std::size_t>(nnz));
  a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  for (auto r : coo.row_idx) ++a.row_ptr[r + 1];
  std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
  a.col_idx.resize(nnz);
  a.values.resize(nnz);
  std::vector<ToIndex> cursor(a.row_ptr.begin(), a.row_ptr.end() - 1);
  for (std::int64_t k = 0; k < nnz; ++k) {
    const ToIndex pos = cursor[coo.row_idx[k]]++;
    a.col_idx[pos] = static_cast<ToIndex>(coo.col_idx[k]);
    a.values[pos] = static_cast<ToValue>(coo.values[k]);
  }
  if (duplicates == Duplicates::Sum) canonicalize(a);
  return a;
}

template <class Value, class Index>
CooMatrix<Value, Index> to_coo(const CsrMatrix<Value, Index>& a) {
  CooMatrix<Value, Index> coo{a.rows, a.cols, {}, copy_on_huge_pages(a.col_idx), copy_on_huge_pages(a.values)};
  coo.row_idx = vector_on_huge_pages<Index>(a.col_idx.size());
  for (Index r = 0; r < a.rows; ++r)
    std::fill(coo.row_idx.begin() + a.row_ptr[r], coo.row_idx.begin() + a.row_ptr[r + 1], r);
  return coo;
}

template <class ToValue, class ToIndex, class Value, class Index>
CsrMatrix<ToValue, ToIndex> convert(const CsrMatrix<Value, Index>& a) {
  detail::refuse_if_too_large<ToIndex>(a.rows, a.cols, a.nnz());
  CsrMatrix<ToValue, ToIndex> b;
  b.rows = static_cast<ToIndex>(a.rows);
  b.cols = static_cast<ToIndex>(a.cols);
  reserve_huge_pages(b.row_ptr, a.row_ptr.size());
  reserve_huge_pages(b.col_idx, a.col_idx.size());
  reserve_huge_pages(b.values, a.values.size());
  b.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  b.col_idx.assign(a.col_idx.begin(), a.col_idx.end());
  b.values.assign(a.values.begin(), a.values.end());
  return b;
}

template <class Value, class Index>
CsrMatrix<Value, Index> transpose(const CsrMatrix<Value, Index>& a) {
  CsrMatrix<Value, Index> t;
  t.rows = a.cols;
  t.cols = a.rows;
  reserve_huge_pages(t.row_ptr, static_cast<std::size_t>(t.rows) + 1);
  reserve_huge_pages(t.col_idx, a.col_idx.size());
  reserve_huge_pages(t.values, a.values.size());
  t.row_ptr.assign(static_cast<std::size_t>(t.rows) + 1, 0);
  for (auto c : a.col_idx) ++t.row_ptr[c + 1];
  std::partial_sum(t.row_ptr.begin(), t.row_ptr.end(), t.row_ptr.begin());
  t.col_idx.resize(a.col_idx.size());
  t.values.resize(a.values.size());
  std::vector<Index> cursor(t.row_ptr.begin(), t.row_ptr.end() - 1);
  // rows visited in order, so each column of A^T comes out sorted
  for (Index r = 0; r < a.rows; ++r)
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const Index pos = cursor[a.col_idx[k]]++;
      t.col_idx[pos] = r;
      t.values[pos] = a.values[k];
    }
  return t;
}

#define SPMV_INSTANTIATE_VI(V, I)                                                                  \
  template void validate(const CsrMatrix<V, I>&);                                                \
  template void validate(const CooMatrix<V, I>&);                                                \
  template CsrMatrix<V, I> make_csr(I, I, std::vector<I>, std::vector<I>, std::vector<V>);       \
  template bool is_canonical(const CsrMatrix<V, I>&);                                            \
  template std::optional<std::string> symmetry_violation(const CsrMatrix<V, I>&);                \
  template void canonicalize(CsrMatrix<V, I>&);                                                  \
  template CooMatrix<V, I> to_coo(const CsrMatrix<V, I>&);                                       \
  template CsrMatrix<V, I> transpose(const CsrMatrix<V, I>&);                                    \
  template CsrMatrix<float, std::int32_t> to_csr(const CooMatrix<V, I>&, Duplicates);            \
  template CsrMatrix<float, std::int64_t> to_csr(const CooMatrix<V, I>&, Duplicates);            \
  template CsrMatrix<double, std::int32_t> to_csr(const CooMatrix<V, I>&, Duplicates);           \
  template CsrMatrix<double, std::int64_t> to_csr(const CooMatrix<V, I>&, Duplicates);           \
  template CsrMatrix<float, std::int32_t> convert(const CsrMatrix<V, I>&);                       \
  template CsrMatrix<float, std::int64_t> convert(const CsrMatrix<V, I>&);                       \
  template CsrMatrix<double, std::int32_t> convert(const CsrMatrix<V, I>&);                      \
  template CsrMatrix<double, std::int64_t> convert(const CsrMatrix<V, I>&);

SPMV_INSTANTIATE_VI(float, std::int32_t)
SPMV_INSTANTIATE_VI(float, std::int64_t)
SPMV_INSTANTIATE_VI(double, std::int32_t)
SPMV_INSTANTIATE_VI(double, std::int64_t)

template bool fits_index<std::int32_t>(std::int64_t, std::int64_t, std::int64_t);
template void detail::refuse_if_too_large<std::int32_t>(std::int64_t, std::int64_t, std::int64_t);
template void detail::refuse_if_too_large<std::int64_t>(std::int64_t, std::int64_t, std::int64_t);
template bool fits_index<std::int64_t>(std::int64_t, std::int64_t, std::int64_t);

}  // namespace spmv
