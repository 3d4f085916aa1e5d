// CSR <-> ELL, ELL-R, DIA, HYB, SELL-C-sigma, compressed CSR. Every conversion decides its size (and refuses
// excessive padding) before allocating, then fills the arrays in one pass over the CSR input.
#include "spmv/formats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "core/value_bits.hpp"
#include "spmv/error.hpp"
#include "spmv/host_memory.hpp"

namespace spmv {
namespace {

// Bell & Garland's HYB split (CUSP's constants): the ELL part only pays off when enough rows fill a
// column of it (relative_speed = 3: ELL is ~3x faster per entry than COO) and the column is long enough
// to occupy the GPU (breakeven = 4096 rows).
constexpr std::int64_t kHybBreakevenRows = 4096;
constexpr std::int64_t kHybRelativeSpeed = 3;

std::string fmt_double(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

double max_padding_of(const Options& options) {
  if (std::isnan(options.max_padding)) throw InvalidArgument("max_padding is NaN; give a factor such as 3.0");
  return options.max_padding > 0 ? options.max_padding : kDefaultMaxPadding;
}

// Refuses (Unsupported) when `slots` exceed max_padding * nnz + kPaddingSlack. Slots are passed as long
// double because rows * width can overflow int64 for absurd inputs.
void check_padding(const char* format, long double slots, std::int64_t nnz, const Options& options,
                   const char* alternatives) {
  const double allowed = max_padding_of(options);
  const long double limit = static_cast<long double>(allowed) * nnz + kPaddingSlack;
  if (slots <= limit && slots < 4.0e18L) return;
  const std::string factor =
      nnz > 0 ? fmt_double("%.3g", static_cast<double>(slots / nnz)) : std::string("inf");
  throw Unsupported(std::string(format) + " would store " + fmt_double("%.0f", static_cast<double>(slots)) +
                    " slots for " + std::to_string(nnz) + " nonzeros (padding factor " + factor + " > allowed " +
                    fmt_double("%g", allowed) + ", plus " + std::to_string(kPaddingSlack) +
                    " slots of slack); use " + alternatives);
}

template <class Index>
std::int64_t longest_row(const std::vector<Index>& row_ptr) {
  std::int64_t m = 0;
  for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r)
    m = std::max<std::int64_t>(m, row_ptr[r + 1] - row_ptr[r]);
  return m;
}

// Fills an ELL of the given width with the first `width` entries of every row (all of them when the
// width is the longest row). Padding: column -1, value 0, after the row's entries.
template <class Value, class Index>
EllMatrix<Value, Index> fill_ell(const CsrMatrix<Value, Index>& a, std::int64_t width) {
  EllMatrix<Value, Index> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.width = static_cast<Index>(width);
  const auto rows = static_cast<std::size_t>(a.rows);
  const auto slots = rows * static_cast<std::size_t>(width);
  reserve_huge_pages(m.col_idx, slots);
  reserve_huge_pages(m.values, slots);
  m.col_idx.assign(slots, Index{-1});
  m.values.assign(slots, Value{0});
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t begin = a.row_ptr[r];
    const std::int64_t n = std::min<std::int64_t>(a.row_ptr[r + 1] - begin, width);
    for (std::int64_t k = 0; k < n; ++k) {
      m.col_idx[static_cast<std::size_t>(k) * rows + r] = a.col_idx[begin + k];
      m.values[static_cast<std::size_t>(k) * rows + r] = a.values[begin + k];
    }
  }
  return m;
}

// Checks the ELL arrays and returns each row's length (padding must trail the stored entries).
template <class Value, class Index>
std::vector<std::int64_t> ell_row_lengths(const EllMatrix<Value, Index>& m, const char* what) {
  if (m.rows < 0 || m.cols < 0 || m.width < 0)
    throw InvalidArgument(std::string(what) + ": negative size");
  const auto rows = static_cast<std::size_t>(m.rows);
  const auto slots = rows * static_cast<std::size_t>(m.width);
  if (m.col_idx.size() != slots || m.values.size() != slots)
    throw InvalidArgument(std::string(what) + ": col_idx / values hold " + std::to_string(m.col_idx.size()) + " / " +
                          std::to_string(m.values.size()) + " slots, expected rows * width = " +
                          std::to_string(slots));
  std::vector<std::int64_t> length(rows, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    std::int64_t n = 0;
    for (std::int64_t k = 0; k < m.width; ++k) {
      const Index c = m.col_idx[static_cast<std::size_t>(k) * rows + r];
      if (c < -1 || c >= m.cols)
        throw InvalidArgument(std::string(what) + ": column " + std::to_string(c) + " in row " + std::to_string(r) +
                              " is outside [0, " + std::to_string(m.cols) + ") and not padding (-1)");
      if (c >= 0) {
        if (n != k)
          throw InvalidArgument(std::string(what) + ": row " + std::to_string(r) +
                                " has a stored entry after padding");
        ++n;
      }
    }
    length[r] = n;
  }
  return length;
}

template <class Value, class Index>
CsrMatrix<Value, Index> csr_shell(Index rows, Index cols, const std::vector<std::int64_t>& length) {
  CsrMatrix<Value, Index> a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  std::int64_t sum = 0;
  for (std::size_t r = 0; r < length.size(); ++r) {
    sum += length[r];
    a.row_ptr[r + 1] = static_cast<Index>(sum);
  }
  if (!fits_index<Index>(rows, cols, sum))
    throw Unsupported("format holds " + std::to_string(sum) + " entries, more than its index type can address");
  a.col_idx.resize(static_cast<std::size_t>(sum));
  a.values.resize(static_cast<std::size_t>(sum));
  return a;
}

template <class Value, class Index>
void copy_ell_rows(const EllMatrix<Value, Index>& m, CsrMatrix<Value, Index>& a,
                   std::vector<std::int64_t>& cursor) {
  const auto rows = static_cast<std::size_t>(m.rows);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < m.width; ++k) {
      const std::size_t slot = static_cast<std::size_t>(k) * rows + r;
      if (m.col_idx[slot] < 0) break;
      a.col_idx[cursor[r]] = m.col_idx[slot];
      a.values[cursor[r]] = m.values[slot];
      ++cursor[r];
    }
}

template <class T>
std::size_t bytes(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

// Bell & Garland's rule (see hyb_ell_width) on an already validated matrix.
template <class Value, class Index>
std::int64_t hyb_rule_width(const CsrMatrix<Value, Index>& a) {
  const std::int64_t rows = a.rows;
  const std::int64_t longest = longest_row(a.row_ptr);
  std::vector<std::int64_t> histogram(static_cast<std::size_t>(longest) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) ++histogram[a.row_ptr[r + 1] - a.row_ptr[r]];
  std::int64_t at_least = rows;  // rows holding >= k entries
  std::int64_t k = 0;
  while (k < longest) {
    at_least -= histogram[k];  // now: rows holding >= k + 1 entries
    if (at_least < kHybBreakevenRows || kHybRelativeSpeed * at_least < rows) break;
    ++k;
  }
  return k;
}


}  // namespace

int sell_c_of(const Options& options) {
  const int c = options.sell_c == 0 ? kDefaultSellC : options.sell_c;
  if (c < 1 || (c & (c - 1)) != 0)
    throw InvalidArgument("SELL: sell_c = " + std::to_string(options.sell_c) +
                          " is not a power of two (or 0 for the default " + std::to_string(kDefaultSellC) + ")");
  return c;
}

int sell_sigma_of(const Options& options, int c) {
  const int sigma = options.sell_sigma == 0 ? std::max(kDefaultSellSigma, c) : options.sell_sigma;
  if (sigma < 1 || sigma % c != 0)
    throw InvalidArgument("SELL: sell_sigma = " + std::to_string(options.sell_sigma) +
                          " is not a positive multiple of sell_c = " + std::to_string(c) +
                          " (or 0 for the default)");
  return sigma;
}

// --- ELL ---------------------------------------------------------------------------------------------

template <class Value, class Index>
EllMatrix<Value, Index> to_ell(const CsrMatrix<Value, Index>& a, const Options& options) {
  validate(a);
  const std::int64_t width = longest_row(a.row_ptr);
  check_padding("ELL", static_cast<long double>(a.rows) * width, a.nnz(), options, "csr-vector or hyb");
  return fill_ell(a, width);
}

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const EllMatrix<Value, Index>& m) {
  const auto length = ell_row_lengths(m, "ELL");
  auto a = csr_shell<Value, Index>(m.rows, m.cols, length);
  std::vector<std::int64_t> cursor(a.row_ptr.begin(), a.row_ptr.end() - 1);
  copy_ell_rows(m, a, cursor);
  return a;
}

// --- ELL-R -------------------------------------------------------------------------------------------

template <class Value, class Index>
EllRMatrix<Value, Index> to_ellr(const CsrMatrix<Value, Index>& a, const Options& options) {
  validate(a);
  const std::int64_t width = longest_row(a.row_ptr);
  check_padding("ELL-R", static_cast<long double>(a.rows) * width, a.nnz(), options, "csr-vector or hyb");
  EllRMatrix<Value, Index> m;
  m.ell = fill_ell(a, width);
  m.row_length = vector_on_huge_pages<Index>(static_cast<std::size_t>(a.rows));
  for (Index r = 0; r < a.rows; ++r) m.row_length[r] = a.row_ptr[r + 1] - a.row_ptr[r];
  return m;
}

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const EllRMatrix<Value, Index>& m) {
  const auto length = ell_row_lengths(m.ell, "ELL-R");
  if (m.row_length.size() != length.size())
    throw InvalidArgument("ELL-R: row_length has " + std::to_string(m.row_length.size()) + " entries, expected " +
                          std::to_string(length.size()));
  for (std::size_t r = 0; r < length.size(); ++r)
    if (m.row_length[r] != length[r])
      throw InvalidArgument("ELL-R: row_length[" + std::to_string(r) + "] = " + std::to_string(m.row_length[r]) +
                            " but the row stores " + std::to_string(length[r]) + " entries");
  return to_csr(m.ell);
}

// --- DIA ---------------------------------------------------------------------------------------------

template <class Value, class Index>
DiaMatrix<Value, Index> to_dia(const CsrMatrix<Value, Index>& input, const Options& options) {
  validate(input);
  const bool canonical = is_canonical(input);
  CsrMatrix<Value, Index> sorted_copy;
  if (!canonical) {
    sorted_copy = input;
    canonicalize(sorted_copy);
  }
  const CsrMatrix<Value, Index>& a = canonical ? input : sorted_copy;
  const std::int64_t rows = a.rows, nnz = a.nnz();

  // Distinct diagonals, stopping as soon as there are too many: a bitmap over rows + cols - 1 diagonals
  // could be far larger than the matrix (1 x 2^40), a set of at most max_diagonals offsets never is.
  const long double limit = static_cast<long double>(max_padding_of(options)) * nnz + kPaddingSlack;
  const std::int64_t max_diagonals =
      rows > 0 ? static_cast<std::int64_t>(std::min<long double>(limit / rows, 4.0e18L)) : 0;
  std::unordered_set<std::int64_t> seen;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      seen.insert(static_cast<std::int64_t>(a.col_idx[k]) - i);
      if (static_cast<std::int64_t>(seen.size()) > max_diagonals) break;
    }
    if (static_cast<std::int64_t>(seen.size()) > max_diagonals) break;
  }
  if (static_cast<std::int64_t>(seen.size()) > max_diagonals)
    throw Unsupported("DIA would store more than " + std::to_string(max_diagonals) + " diagonals of " +
                      std::to_string(rows) + " rows for " + std::to_string(nnz) + " nonzeros (padding factor > allowed " +
                      fmt_double("%g", max_padding_of(options)) + ", plus " + std::to_string(kPaddingSlack) +
                      " slots of slack); use csr-vector, ell or hyb");

  DiaMatrix<Value, Index> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.offsets.assign(seen.begin(), seen.end());
  std::sort(m.offsets.begin(), m.offsets.end());
  const std::size_t ndiag = m.offsets.size();
  const auto slots = static_cast<std::size_t>(rows) * ndiag;
  m.values.assign(slots, Value{0});
  m.stored.assign((slots + 31) / 32, 0u);
  for (std::int64_t i = 0; i < rows; ++i) {
    // columns ascend within a canonical row, so its diagonals do too: walk the offsets once per row
    std::size_t d = 0;
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t off = static_cast<std::int64_t>(a.col_idx[k]) - i;
      while (m.offsets[d] < off) ++d;
      const std::size_t slot = d * static_cast<std::size_t>(rows) + static_cast<std::size_t>(i);
      m.values[slot] = a.values[k];
      m.stored[slot >> 5] |= 1u << (slot & 31);
    }
  }
  return m;
}

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const DiaMatrix<Value, Index>& m) {
  if (m.rows < 0 || m.cols < 0) throw InvalidArgument("DIA: negative size");
  const auto rows = static_cast<std::size_t>(m.rows);
  const std::size_t ndiag = m.offsets.size();
  const std::size_t slots = rows * ndiag;
  if (m.values.size() != slots || m.stored.size() != (slots + 31) / 32)
    throw InvalidArgument("DIA: values / stored hold " + std::to_string(m.values.size()) + " / " +
                          std::to_string(m.stored.size()) + " entries, expected " + std::to_string(slots) + " / " +
                          std::to_string((slots + 31) / 32));
  for (std::size_t d = 1; d < ndiag; ++d)
    if (m.offsets[d - 1] >= m.offsets[d]) throw InvalidArgument("DIA: offsets are not strictly increasing");
  std::vector<std::int64_t> length(rows, 0);
  for (std::size_t d = 0; d < ndiag; ++d)
    for (std::size_t i = 0; i < rows; ++i) {
      if (!m.is_stored(static_cast<std::int64_t>(d * rows + i))) continue;
      const std::int64_t j = static_cast<std::int64_t>(i) + m.offsets[d];
      if (j < 0 || j >= m.cols)
        throw InvalidArgument("DIA: slot of row " + std::to_string(i) + " on diagonal " +
                              std::to_string(m.offsets[d]) + " is marked stored but lies outside the matrix");
      ++length[i];
    }
  auto a = csr_shell<Value, Index>(m.rows, m.cols, length);
  std::int64_t out = 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t d = 0; d < ndiag; ++d) {
      const std::size_t slot = d * rows + i;
      if (!m.is_stored(static_cast<std::int64_t>(slot))) continue;
      a.col_idx[out] = static_cast<Index>(static_cast<std::int64_t>(i) + m.offsets[d]);
      a.values[out] = m.values[slot];
      ++out;
    }
  return a;
}

// --- HYB ---------------------------------------------------------------------------------------------

// Bell & Garland 2009 ("Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, HYB format): K is the largest width such that at least max(4096, rows / 3) rows
// hold K or more entries, as in CUSP's conversion (relative_speed 3, breakeven_threshold 4096). Matrices
// with fewer than 4096 rows therefore go entirely to COO.
template <class Value, class Index>
Index hyb_ell_width(const CsrMatrix<Value, Index>& a) {
  validate(a);
  return static_cast<Index>(hyb_rule_width(a));
}

template <class Value, class Index>
HybMatrix<Value, Index> to_hyb(const CsrMatrix<Value, Index>& a, const Options& options) {
  validate(a);
  const std::int64_t longest = longest_row(a.row_ptr);
  // An explicit width above the longest row would only add all-padding columns: lowered to it.
  const std::int64_t width = options.hyb_ell_width < 0
                                 ? hyb_rule_width(a)
                                 : std::min<std::int64_t>(options.hyb_ell_width, longest);
  check_padding("HYB's ELL part", static_cast<long double>(a.rows) * width, a.nnz(), options,
                "a smaller hyb_ell_width or -1 for the Bell & Garland rule");
  HybMatrix<Value, Index> m;
  m.ell = fill_ell(a, width);
  std::int64_t overflow = 0;
  for (Index r = 0; r < a.rows; ++r) overflow += std::max<std::int64_t>(0, a.row_ptr[r + 1] - a.row_ptr[r] - width);
  m.coo.rows = a.rows;
  m.coo.cols = a.cols;
  reserve_huge_pages(m.coo.row_idx, static_cast<std::size_t>(overflow));
  reserve_huge_pages(m.coo.col_idx, static_cast<std::size_t>(overflow));
  reserve_huge_pages(m.coo.values, static_cast<std::size_t>(overflow));
  for (Index r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r] + width; k < a.row_ptr[r + 1]; ++k) {
      m.coo.row_idx.push_back(r);
      m.coo.col_idx.push_back(a.col_idx[k]);
      m.coo.values.push_back(a.values[k]);
    }
  return m;
}

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const HybMatrix<Value, Index>& m) {
  auto length = ell_row_lengths(m.ell, "HYB");
  if (m.coo.rows != m.ell.rows || m.coo.cols != m.ell.cols)
    throw InvalidArgument("HYB: the ELL part is " + std::to_string(m.ell.rows) + " x " + std::to_string(m.ell.cols) +
                          " but the COO part " + std::to_string(m.coo.rows) + " x " + std::to_string(m.coo.cols));
  validate(m.coo);
  for (std::size_t k = 0; k < m.coo.row_idx.size(); ++k) {
    if (k > 0 && m.coo.row_idx[k] < m.coo.row_idx[k - 1])
      throw InvalidArgument("HYB: the COO part is not sorted by row at entry " + std::to_string(k));
    ++length[m.coo.row_idx[k]];
  }
  auto a = csr_shell<Value, Index>(m.ell.rows, m.ell.cols, length);
  std::vector<std::int64_t> cursor(a.row_ptr.begin(), a.row_ptr.end() - 1);
  copy_ell_rows(m.ell, a, cursor);  // a row's ELL entries precede its COO entries, as in the input
  for (std::size_t k = 0; k < m.coo.row_idx.size(); ++k) {
    const auto r = m.coo.row_idx[k];
    a.col_idx[cursor[r]] = m.coo.col_idx[k];
    a.values[cursor[r]] = m.coo.values[k];
    ++cursor[r];
  }
  return a;
}

// --- SELL-C-sigma --------------------------------------------------------------------------------------

// Kreutzer et al. 2014, §2: sorting within sigma-row windows groups rows of similar length into the same
// slice (less padding) while keeping them near their original position (locality of y and x).
template <class Value, class Index>
SellMatrix<Value, Index> to_sell(const CsrMatrix<Value, Index>& a, const Options& options) {
  validate(a);
  const int c = sell_c_of(options);
  const int sigma = sell_sigma_of(options, c);
  const std::int64_t rows = a.rows;
  auto length = [&](Index r) { return static_cast<std::int64_t>(a.row_ptr[r + 1] - a.row_ptr[r]); };

  SellMatrix<Value, Index> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.c = c;
  m.sigma = sigma;
  m.perm.resize(static_cast<std::size_t>(rows));
  std::iota(m.perm.begin(), m.perm.end(), Index{0});
  for (std::int64_t w = 0; w < rows; w += sigma) {
    const auto end = std::min<std::int64_t>(w + sigma, rows);
    // stable: equal lengths keep their order, so the permutation is deterministic
    std::stable_sort(m.perm.begin() + w, m.perm.begin() + end,
                     [&](Index x, Index y) { return length(x) > length(y); });
  }
  const std::int64_t num_slices = (rows + c - 1) / c;
  m.slice_width.resize(static_cast<std::size_t>(num_slices));
  long double slots = 0;
  for (std::int64_t s = 0; s < num_slices; ++s) {
    // sorted descending within a window, and windows are multiples of c: the slice's first row is longest
    m.slice_width[s] = static_cast<Index>(length(m.perm[s * c]));
    slots += static_cast<long double>(c) * m.slice_width[s];
  }
  check_padding("SELL", slots, a.nnz(), options, "a smaller sell_c, a larger sell_sigma, or csr-vector");

  m.slice_ptr.resize(static_cast<std::size_t>(num_slices) + 1);
  m.slice_ptr[0] = 0;
  for (std::int64_t s = 0; s < num_slices; ++s)
    m.slice_ptr[s + 1] = m.slice_ptr[s] + static_cast<std::int64_t>(c) * m.slice_width[s];
  const auto total = static_cast<std::size_t>(m.slice_ptr[num_slices]);
  m.col_idx.assign(total, Index{-1});
  m.values.assign(total, Value{0});
  for (std::int64_t p = 0; p < rows; ++p) {
    const Index r = m.perm[p];
    const std::int64_t base = m.slice_ptr[p / c] + p % c;
    for (std::int64_t k = 0, src = a.row_ptr[r]; src < a.row_ptr[r + 1]; ++k, ++src) {
      m.col_idx[base + k * c] = a.col_idx[src];
      m.values[base + k * c] = a.values[src];
    }
  }
  return m;
}

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const SellMatrix<Value, Index>& m) {
  if (m.rows < 0 || m.cols < 0) throw InvalidArgument("SELL: negative size");
  if (m.c < 1 || (m.c & (m.c - 1)) != 0) throw InvalidArgument("SELL: c = " + std::to_string(m.c) + " is not a power of two");
  const std::int64_t rows = m.rows, c = m.c;
  const std::int64_t num_slices = (rows + c - 1) / c;
  if (static_cast<std::int64_t>(m.perm.size()) != rows || m.num_slices() != num_slices ||
      static_cast<std::int64_t>(m.slice_ptr.size()) != num_slices + 1)
    throw InvalidArgument("SELL: perm / slice_width / slice_ptr have " + std::to_string(m.perm.size()) + " / " +
                          std::to_string(m.slice_width.size()) + " / " + std::to_string(m.slice_ptr.size()) +
                          " entries, expected " + std::to_string(rows) + " / " + std::to_string(num_slices) + " / " +
                          std::to_string(num_slices + 1));
  if (m.slice_ptr[0] != 0) throw InvalidArgument("SELL: slice_ptr[0] is not 0");
  for (std::int64_t s = 0; s < num_slices; ++s)
    if (m.slice_width[s] < 0 || m.slice_ptr[s + 1] - m.slice_ptr[s] != c * m.slice_width[s])
      throw InvalidArgument("SELL: slice " + std::to_string(s) + " does not hold c * slice_width slots");
  if (m.col_idx.size() != static_cast<std::size_t>(m.slice_ptr[num_slices]) || m.values.size() != m.col_idx.size())
    throw InvalidArgument("SELL: col_idx / values do not hold slice_ptr[num_slices] slots");

  std::vector<char> seen(static_cast<std::size_t>(rows), 0);
  std::vector<std::int64_t> length(static_cast<std::size_t>(rows), 0);
  for (std::int64_t p = 0; p < rows; ++p) {
    const Index r = m.perm[p];
    if (r < 0 || r >= rows || seen[r]) throw InvalidArgument("SELL: perm is not a permutation of the rows");
    seen[r] = 1;
    const std::int64_t base = m.slice_ptr[p / c] + p % c;
    std::int64_t n = 0;
    for (std::int64_t k = 0; k < m.slice_width[p / c]; ++k) {
      const Index col = m.col_idx[base + k * c];
      if (col < -1 || col >= m.cols)
        throw InvalidArgument("SELL: column " + std::to_string(col) + " of row " + std::to_string(r) +
                              " is outside [0, " + std::to_string(m.cols) + ") and not padding (-1)");
      if (col >= 0) {
        if (n != k) throw InvalidArgument("SELL: row " + std::to_string(r) + " has a stored entry after padding");
        ++n;
      }
    }
    length[r] = n;
  }
  auto a = csr_shell<Value, Index>(m.rows, m.cols, length);
  for (std::int64_t p = 0; p < rows; ++p) {
    const Index r = m.perm[p];
    const std::int64_t base = m.slice_ptr[p / c] + p % c;
    for (std::int64_t k = 0, dst = a.row_ptr[r]; dst < a.row_ptr[r + 1]; ++k, ++dst) {
      a.col_idx[dst] = m.col_idx[base + k * c];
      a.values[dst] = m.values[base + k * c];
    }
  }
  return a;
}

// --- Compressed CSR ----------------------------------------------------------------------------------

namespace {

using detail::ValueBits;

// Chooses the value encoding and fills `table` (Code8 / Code16): the distinct values in ascending order of
// their bits (as the CUDA conversion's sort + unique gives them), counted only up to kCompressedMaxCode16 + 1
// so that a matrix of unique values stops early.
template <class Value, class Index>
CompressedValues choose_value_mode(const CsrMatrix<Value, Index>& a, std::vector<Value>& table,
                                   std::unordered_map<ValueBits<Value>, std::uint32_t>& code_of) {
  const auto one = detail::value_bits(Value{1});
  if (std::all_of(a.values.begin(), a.values.end(), [&](Value v) { return detail::value_bits(v) == one; }))
    return CompressedValues::Pattern;
  for (Value v : a.values) {
    const auto [it, inserted] = code_of.try_emplace(detail::value_bits(v), static_cast<std::uint32_t>(table.size()));
    if (!inserted) continue;
    table.push_back(v);
    if (table.size() > kCompressedMaxCode16) {
      table.clear();
      code_of.clear();
      return CompressedValues::Raw;
    }
  }
  std::sort(table.begin(), table.end(), [](Value p, Value q) { return detail::value_bits(p) < detail::value_bits(q); });
  for (std::size_t i = 0; i < table.size(); ++i) code_of[detail::value_bits(table[i])] = static_cast<std::uint32_t>(i);
  return table.size() <= kCompressedMaxCode8 ? CompressedValues::Code8 : CompressedValues::Code16;
}

}  // namespace

template <class Value, class Index>
CompressedCsrMatrix<Value, Index> to_compressed_csr(const CsrMatrix<Value, Index>& a, const Options& options) {
  validate(a);
  const std::int64_t rows = a.rows;
  const std::int64_t num_slices = (rows + kCompressedSliceRows - 1) / kCompressedSliceRows;
  auto length = [&](std::int64_t r) { return static_cast<std::int64_t>(a.row_ptr[r + 1] - a.row_ptr[r]); };

  // Sizes first (row lengths, slice widths, the padding rule), then allocation.
  CompressedCsrMatrix<Value, Index> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.slice_ptr.assign(static_cast<std::size_t>(num_slices) + 1, 0);
  for (std::int64_t s = 0; s < num_slices; ++s) {
    const std::int64_t lanes = compressed_slice_lanes(rows, s);
    std::int64_t width = 0;
    for (std::int64_t r = s * kCompressedSliceRows; r < s * kCompressedSliceRows + lanes; ++r) {
      if (length(r) > kCompressedMaxRowLength)
        throw Unsupported("compressed-csr: row " + std::to_string(r) + " holds " + std::to_string(length(r)) +
                          " entries, more than the " + std::to_string(kCompressedMaxRowLength) +
                          " a 16-bit row length holds; use csr-vector, merge-path or hola");
      width = std::max(width, length(r));
    }
    m.slice_ptr[s + 1] = m.slice_ptr[s] + lanes * width;
  }
  check_padding("compressed-csr", static_cast<long double>(m.slice_ptr[num_slices]), a.nnz(), options,
                "sell, csr-vector or hola");

  // Per slice: base column and offset width.
  m.col_start.resize(static_cast<std::size_t>(num_slices));
  m.col_base.resize(static_cast<std::size_t>(num_slices));
  m.wide.resize(static_cast<std::size_t>(num_slices));
  std::int64_t narrow_slots = 0, wide_slots = 0;
  for (std::int64_t s = 0; s < num_slices; ++s) {
    const std::int64_t first_row = s * kCompressedSliceRows;
    const std::int64_t end_row = first_row + compressed_slice_lanes(rows, s);
    std::int64_t lo = 0, hi = 0;
    if (a.row_ptr[end_row] > a.row_ptr[first_row]) {
      const auto [min_it, max_it] =
          std::minmax_element(a.col_idx.begin() + a.row_ptr[first_row], a.col_idx.begin() + a.row_ptr[end_row]);
      lo = *min_it;
      hi = *max_it;
    }
    if (hi - lo >= kCompressedWideSpan)
      throw Unsupported("compressed-csr: rows " + std::to_string(first_row) + ".." + std::to_string(end_row - 1) +
                        " span " + std::to_string(hi - lo + 1) + " columns, more than 32-bit offsets reach; use sell, "
                        "csr-vector or hola");
    m.col_base[s] = static_cast<Index>(lo);
    m.wide[s] = hi - lo >= kCompressedNarrowSpan ? 1 : 0;
    const std::int64_t slots = m.slice_ptr[s + 1] - m.slice_ptr[s];
    std::int64_t& cursor = m.wide[s] ? wide_slots : narrow_slots;
    m.col_start[s] = cursor;
    cursor += slots;
  }
  m.col16 = vector_on_huge_pages<std::uint16_t>(static_cast<std::size_t>(narrow_slots));
  m.col32 = vector_on_huge_pages<std::uint32_t>(static_cast<std::size_t>(wide_slots));

  std::unordered_map<ValueBits<Value>, std::uint32_t> code_of;
  m.value_mode = choose_value_mode(a, m.table, code_of);
  const auto total = static_cast<std::size_t>(m.slots());
  if (m.value_mode == CompressedValues::Code8) m.code8 = vector_on_huge_pages<std::uint8_t>(total);
  if (m.value_mode == CompressedValues::Code16) m.code16 = vector_on_huge_pages<std::uint16_t>(total);
  if (m.value_mode == CompressedValues::Raw) m.values = vector_on_huge_pages<Value>(total);

  m.row_length.resize(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t s = r / kCompressedSliceRows;
    const std::int64_t lanes = compressed_slice_lanes(rows, s);
    const std::int64_t lane = r % kCompressedSliceRows;
    m.row_length[r] = static_cast<std::uint16_t>(length(r));
    for (std::int64_t k = 0; k < length(r); ++k) {
      const std::int64_t src = a.row_ptr[r] + k;
      const std::int64_t slot = compressed_slot(k, lanes, lane);
      const std::int64_t offset = static_cast<std::int64_t>(a.col_idx[src]) - m.col_base[s];
      if (m.wide[s])
        m.col32[m.col_start[s] + slot] = static_cast<std::uint32_t>(offset);
      else
        m.col16[m.col_start[s] + slot] = static_cast<std::uint16_t>(offset);
      const std::size_t at = static_cast<std::size_t>(m.slice_ptr[s] + slot);
      if (m.value_mode == CompressedValues::Code8)
        m.code8[at] = static_cast<std::uint8_t>(code_of.at(detail::value_bits(a.values[src])));
      else if (m.value_mode == CompressedValues::Code16)
        m.code16[at] = static_cast<std::uint16_t>(code_of.at(detail::value_bits(a.values[src])));
      else if (m.value_mode == CompressedValues::Raw)
        m.values[at] = a.values[src];
    }
  }
  return m;
}

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const CompressedCsrMatrix<Value, Index>& m) {
  if (m.rows < 0 || m.cols < 0) throw InvalidArgument("compressed-csr: negative size");
  const std::int64_t rows = m.rows;
  const std::int64_t num_slices = (rows + kCompressedSliceRows - 1) / kCompressedSliceRows;
  if (static_cast<std::int64_t>(m.row_length.size()) != rows || m.num_slices() != num_slices ||
      static_cast<std::int64_t>(m.slice_ptr.size()) != num_slices + 1 ||
      static_cast<std::int64_t>(m.col_base.size()) != num_slices ||
      static_cast<std::int64_t>(m.wide.size()) != num_slices)
    throw InvalidArgument("compressed-csr: row_length / slice_ptr / col_start / col_base / wide do not hold rows / "
                          "slices + 1 / slices / slices / slices entries");
  if (m.slice_ptr[0] != 0) throw InvalidArgument("compressed-csr: slice_ptr[0] is not 0");
  const auto total = static_cast<std::size_t>(m.slots());
  const bool values_ok =
      m.value_mode == CompressedValues::Pattern ? m.values.empty() && m.code8.empty() && m.code16.empty()
      : m.value_mode == CompressedValues::Code8  ? m.code8.size() == total && m.table.size() <= kCompressedMaxCode8
      : m.value_mode == CompressedValues::Code16 ? m.code16.size() == total && m.table.size() <= kCompressedMaxCode16
                                                 : m.values.size() == total;
  if (!values_ok) throw InvalidArgument("compressed-csr: the value arrays do not match the value mode");
  std::vector<std::int64_t> length(static_cast<std::size_t>(rows));
  for (std::int64_t s = 0; s < num_slices; ++s) {
    const std::int64_t lanes = compressed_slice_lanes(rows, s);
    const std::int64_t slots = m.slice_ptr[s + 1] - m.slice_ptr[s];
    if (slots < 0 || slots % lanes != 0)
      throw InvalidArgument("compressed-csr: slice " + std::to_string(s) + " does not hold lanes * width slots");
    const std::size_t column_slots = m.wide[s] ? m.col32.size() : m.col16.size();
    if (m.col_start[s] < 0 || static_cast<std::size_t>(m.col_start[s] + slots) > column_slots)
      throw InvalidArgument("compressed-csr: slice " + std::to_string(s) + "'s columns lie outside its column array");
    for (std::int64_t lane = 0; lane < lanes; ++lane) {
      const std::int64_t r = s * kCompressedSliceRows + lane;
      length[r] = m.row_length[r];
      if (length[r] > slots / lanes)
        throw InvalidArgument("compressed-csr: row " + std::to_string(r) + " is longer than its slice");
    }
  }
  auto a = csr_shell<Value, Index>(m.rows, m.cols, length);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t s = r / kCompressedSliceRows;
    const std::int64_t lanes = compressed_slice_lanes(rows, s);
    for (std::int64_t k = 0; k < length[r]; ++k) {
      const std::int64_t slot = compressed_slot(k, lanes, r % kCompressedSliceRows);
      const std::int64_t col = static_cast<std::int64_t>(m.col_base[s]) +
                               (m.wide[s] ? std::int64_t{m.col32[m.col_start[s] + slot]}
                                          : std::int64_t{m.col16[m.col_start[s] + slot]});
      if (col < 0 || col >= m.cols)
        throw InvalidArgument("compressed-csr: column " + std::to_string(col) + " of row " + std::to_string(r) +
                              " is outside [0, " + std::to_string(m.cols) + ")");
      const std::size_t at = static_cast<std::size_t>(m.slice_ptr[s] + slot);
      Value v{1};
      if (m.value_mode == CompressedValues::Code8 || m.value_mode == CompressedValues::Code16) {
        const std::size_t code = m.value_mode == CompressedValues::Code8 ? m.code8[at] : m.code16[at];
        if (code >= m.table.size())
          throw InvalidArgument("compressed-csr: code " + std::to_string(code) + " of row " + std::to_string(r) +
                                " is outside the value table of " + std::to_string(m.table.size()));
        v = m.table[code];
      } else if (m.value_mode == CompressedValues::Raw) {
        v = m.values[at];
      }
      a.col_idx[a.row_ptr[r] + k] = static_cast<Index>(col);
      a.values[a.row_ptr[r] + k] = v;
    }
  }
  return a;
}

std::string compressed_csr_summary(std::int64_t slices, std::int64_t narrow_slices, CompressedValues mode,
                                   std::size_t table_size, std::int64_t slots) {
  const int percent = slices > 0 ? static_cast<int>(100 * narrow_slices / slices) : 100;
  std::string values;
  switch (mode) {
    case CompressedValues::Pattern: values = "none(pattern)"; break;
    case CompressedValues::Code8: values = "u8 table(" + std::to_string(table_size) + ")"; break;
    case CompressedValues::Code16: values = "u16 table(" + std::to_string(table_size) + ")"; break;
    case CompressedValues::Raw: values = "raw"; break;
  }
  return "slices=" + std::to_string(slices) + " cols=16bit(" + std::to_string(percent) + "% slices) values=" + values +
         " slots=" + std::to_string(slots);
}

template <class Value, class Index>
std::string compressed_csr_summary(const CompressedCsrMatrix<Value, Index>& m) {
  const std::int64_t slices = m.num_slices();
  const std::int64_t narrow = slices - std::count(m.wide.begin(), m.wide.end(), std::uint8_t{1});
  return compressed_csr_summary(slices, narrow, m.value_mode, m.table.size(), m.slots());
}

// --- storage -----------------------------------------------------------------------------------------

template <class Value, class Index>
std::size_t storage_bytes(const CooMatrix<Value, Index>& m) {
  return bytes(m.row_idx) + bytes(m.col_idx) + bytes(m.values);
}
template <class Value, class Index>
std::size_t storage_bytes(const EllMatrix<Value, Index>& m) {
  return bytes(m.col_idx) + bytes(m.values);
}
template <class Value, class Index>
std::size_t storage_bytes(const EllRMatrix<Value, Index>& m) {
  return storage_bytes(m.ell) + bytes(m.row_length);
}
template <class Value, class Index>
std::size_t storage_bytes(const DiaMatrix<Value, Index>& m) {
  return bytes(m.offsets) + bytes(m.values) + bytes(m.stored);
}
template <class Value, class Index>
std::size_t storage_bytes(const HybMatrix<Value, Index>& m) {
  return storage_bytes(m.ell) + storage_bytes(m.coo);
}
template <class Value, class Index>
std::size_t storage_bytes(const SellMatrix<Value, Index>& m) {
  return bytes(m.perm) + bytes(m.slice_width) + bytes(m.slice_ptr) + bytes(m.col_idx) + bytes(m.values);
}
template <class Value, class Index>
std::size_t storage_bytes(const CompressedCsrMatrix<Value, Index>& m) {
  return bytes(m.row_length) + bytes(m.slice_ptr) + bytes(m.col_start) + bytes(m.col_base) + bytes(m.wide) +
         bytes(m.col16) + bytes(m.col32) + bytes(m.table) + bytes(m.code8) + bytes(m.code16) + bytes(m.values);
}

#define SPMV_INSTANTIATE_FORMATS(V, I)                                          \
  template EllMatrix<V, I> to_ell(const CsrMatrix<V, I>&, const Options&);     \
  template EllRMatrix<V, I> to_ellr(const CsrMatrix<V, I>&, const Options&);   \
  template DiaMatrix<V, I> to_dia(const CsrMatrix<V, I>&, const Options&);     \
  template HybMatrix<V, I> to_hyb(const CsrMatrix<V, I>&, const Options&);     \
  template SellMatrix<V, I> to_sell(const CsrMatrix<V, I>&, const Options&);   \
  template CompressedCsrMatrix<V, I> to_compressed_csr(const CsrMatrix<V, I>&, const Options&); \
  template CsrMatrix<V, I> to_csr(const CompressedCsrMatrix<V, I>&);           \
  template std::string compressed_csr_summary(const CompressedCsrMatrix<V, I>&); \
  template std::size_t storage_bytes(const CompressedCsrMatrix<V, I>&);        \
  template CsrMatrix<V, I> to_csr(const EllMatrix<V, I>&);                     \
  template CsrMatrix<V, I> to_csr(const EllRMatrix<V, I>&);                    \
  template CsrMatrix<V, I> to_csr(const DiaMatrix<V, I>&);                     \
  template CsrMatrix<V, I> to_csr(const HybMatrix<V, I>&);                     \
  template CsrMatrix<V, I> to_csr(const SellMatrix<V, I>&);                    \
  template I hyb_ell_width(const CsrMatrix<V, I>&);                            \
  template std::size_t storage_bytes(const CooMatrix<V, I>&);                  \
  template std::size_t storage_bytes(const EllMatrix<V, I>&);                  \
  template std::size_t storage_bytes(const EllRMatrix<V, I>&);                 \
  template std::size_t storage_bytes(const DiaMatrix<V, I>&);                  \
  template std::size_t storage_bytes(const HybMatrix<V, I>&);                  \
  template std::size_t storage_bytes(const SellMatrix<V, I>&);

SPMV_INSTANTIATE_FORMATS(float, std::int32_t)
SPMV_INSTANTIATE_FORMATS(float, std::int64_t)
SPMV_INSTANTIATE_FORMATS(double, std::int32_t)
SPMV_INSTANTIATE_FORMATS(double, std::int64_t)
#undef SPMV_INSTANTIATE_FORMATS

}  // namespace spmv
