#pragma once
// Host copies of the padded and split sparse formats that format-backed algorithms run on (COO is
// CooMatrix in csr.hpp). Each is converted from CSR once by the plan; to_csr() gives the matrix back
// exactly (same values, same columns, explicit zeros kept), which is what the round-trip tests check.
//
// Layouts are column-major in the padded dimension, as the GPU kernels read them: slot k of row r sits at
// k * rows + r, so consecutive rows (threads) read consecutive addresses (Bell & Garland 2009, ELL).
// Slot positions can exceed the range of a 32-bit Index (up to max_padding * nnz): compute them in
// std::size_t / int64.
//
// Padding is never confused with a stored zero: padded slots carry column -1 (ELL, ELL-R, HYB, SELL)
// and value 0, and always follow a row's stored entries. DIA, which has no column array, keeps a
// bitmask of stored slots.
//
// Padded formats (ELL, ELL-R, DIA, the ELL part of HYB, SELL) refuse with spmv::Unsupported, before
// allocating, when they would store more than max_padding * nnz + kPaddingSlack slots.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/operator.hpp"

namespace spmv {

// Absolute slack on top of max_padding * nnz, so that tiny matrices (a 10 x 10 with 3 nonzeros) are never
// refused: below about a thousand slots the padding costs nothing measurable.
inline constexpr std::int64_t kPaddingSlack = 1024;

// Defaults used when the matching Options field is zero / negative (Options' "let the policy decide").
inline constexpr int kDefaultSellC = 32;        // one warp per slice (Kreutzer et al. 2014 use C = 32 on GPUs)
inline constexpr int kDefaultSellSigma = 256;   // sorting window; raised to C when C > 256
inline constexpr double kDefaultMaxPadding = 3.0;

// ELLPACK: every row padded to `width` slots.
template <class Value, class Index>
struct EllMatrix {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  Index width = 0;              // slots per row: the longest row (or the HYB ELL width)
  std::vector<Index> col_idx;   // rows * width, column-major: slot k of row r at k * rows + r; -1 = padding
  std::vector<Value> values;    // same layout; padding holds 0

  std::int64_t slots() const { return static_cast<std::int64_t>(rows) * width; }
};

// ELLPACK-R (Vázquez et al. 2011): ELL plus each row's length, so kernels stop at the row's end
// instead of testing every slot.
template <class Value, class Index>
struct EllRMatrix {
  using value_type = Value;
  using index_type = Index;
  EllMatrix<Value, Index> ell;       // padding as in ELL (column -1, value 0)
  std::vector<Index> row_length;     // rows entries: stored slots of each row, the first row_length[r]
};

// DIA: one column of `rows` slots per occupied diagonal.
template <class Value, class Index>
struct DiaMatrix {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  std::vector<Index> offsets;  // occupied diagonals j - i, strictly increasing
  // rows * offsets.size(), column-major: slot (d, i) at d * rows + i holds A(i, i + offsets[d]).
  // Slots whose column i + offsets[d] is outside [0, cols) and in-range slots holding no entry are
  // padding with value 0.
  std::vector<Value> values;
  // Bit s (word s / 32, bit s % 32) is set when slot s holds a stored entry, so stored zeros and
  // padding differ. A kernel may skip this mask and multiply padding too: that differs only when x
  // holds Inf / NaN (0 * Inf), which the CPU kernel avoids by reading it.
  std::vector<std::uint32_t> stored;

  std::int64_t slots() const { return static_cast<std::int64_t>(rows) * static_cast<std::int64_t>(offsets.size()); }
  bool is_stored(std::int64_t slot) const { return (stored[slot >> 5] >> (slot & 31)) & 1u; }
};

// HYB (Bell & Garland 2009): the first `ell.width` entries of every row in ELL, the rest in COO.
template <class Value, class Index>
struct HybMatrix {
  using value_type = Value;
  using index_type = Index;
  EllMatrix<Value, Index> ell;   // padding as in ELL
  CooMatrix<Value, Index> coo;   // overflow entries, sorted by row, in the row's original order
};

// SELL-C-sigma (Kreutzer, Hager, Wellein, Fehske & Bishop 2014): rows sorted by length (descending,
// stable) within windows of sigma rows, cut into slices of C consecutive sorted rows; each slice is
// padded to its longest row and stored column-major. The last slice is padded to C rows (the missing
// rows are all padding) so kernels need no bounds test on the lane.
template <class Value, class Index>
struct SellMatrix {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  int c = kDefaultSellC;          // slice height, a power of two
  int sigma = kDefaultSellSigma;  // sorting window, a multiple of c
  std::vector<Index> perm;        // rows entries: perm[p] = original row at sorted position p
  std::vector<Index> slice_width; // slots per row in each slice (its longest row)
  // num_slices + 1 entries: slice s occupies [slice_ptr[s], slice_ptr[s + 1]) = c * slice_width[s] slots.
  // Positions are int64 because the padded size may not fit a 32-bit Index.
  std::vector<std::int64_t> slice_ptr{0};
  // Slot k of lane l (sorted position s * c + l) in slice s at slice_ptr[s] + k * c + l; -1 = padding.
  std::vector<Index> col_idx;
  std::vector<Value> values;      // same layout; padding holds 0

  std::int64_t num_slices() const { return static_cast<std::int64_t>(slice_width.size()); }
};

// --- Conversions -------------------------------------------------------------------------------------
// Inputs are validated (InvalidArgument on malformed CSR). ELL, ELL-R, HYB, SELL and COO keep each row's
// entries in their stored order, so to_csr returns the input itself (canonical or not). DIA holds one
// value per (row, diagonal): a non-canonical input is canonicalized first (columns sorted, duplicates
// summed) and to_csr returns that canonical form.
//
// Options read: max_padding (<= 0: 3.0; NaN: InvalidArgument), sell_c, sell_sigma (0: defaults above;
// sell_c must be a power of two, sell_sigma a multiple of sell_c, else InvalidArgument), hyb_ell_width
// (negative: the Bell & Garland rule below; otherwise the explicit width).

template <class Value, class Index>
EllMatrix<Value, Index> to_ell(const CsrMatrix<Value, Index>& a, const Options& options = {});
template <class Value, class Index>
EllRMatrix<Value, Index> to_ellr(const CsrMatrix<Value, Index>& a, const Options& options = {});
template <class Value, class Index>
DiaMatrix<Value, Index> to_dia(const CsrMatrix<Value, Index>& a, const Options& options = {});
template <class Value, class Index>
HybMatrix<Value, Index> to_hyb(const CsrMatrix<Value, Index>& a, const Options& options = {});
template <class Value, class Index>
SellMatrix<Value, Index> to_sell(const CsrMatrix<Value, Index>& a, const Options& options = {});

// The SELL slice height and sorting window `options` asks for (0: the defaults above), validated
// (InvalidArgument): the one rule both backends apply.
int sell_c_of(const Options& options);
int sell_sigma_of(const Options& options, int c);

template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const EllMatrix<Value, Index>& m);
template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const EllRMatrix<Value, Index>& m);
template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const DiaMatrix<Value, Index>& m);
template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const HybMatrix<Value, Index>& m);
template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const SellMatrix<Value, Index>& m);

// The HYB ELL width chosen by the Bell & Garland rule for this matrix: the largest K such that at least
// max(4096, rows / 3) rows hold K or more entries (0 when no K qualifies).
template <class Value, class Index>
Index hyb_ell_width(const CsrMatrix<Value, Index>& a);

// Bytes held by every array of the format (what a plan stores beyond the CSR input).
template <class Value, class Index>
std::size_t storage_bytes(const CooMatrix<Value, Index>& m);
template <class Value, class Index>
std::size_t storage_bytes(const EllMatrix<Value, Index>& m);
template <class Value, class Index>
std::size_t storage_bytes(const EllRMatrix<Value, Index>& m);
template <class Value, class Index>
std::size_t storage_bytes(const DiaMatrix<Value, Index>& m);
template <class Value, class Index>
std::size_t storage_bytes(const HybMatrix<Value, Index>& m);
template <class Value, class Index>
std::size_t storage_bytes(const SellMatrix<Value, Index>& m);

}  // namespace spmv
