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
// Padded formats (ELL, ELL-R, DIA, the ELL part of HYB, SELL, compressed CSR) refuse with spmv::Unsupported, before
// allocating, when they would store more than max_padding * nnz + kPaddingSlack slots.
#include <cstddef>
#include <cstdint>
#include <string>
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

// Compressed CSR (Algorithm::CompressedCsr): an exact format that reads fewer bytes per nonzero than CSR
// (value + 32-bit column). Rows are cut into slices of kCompressedSliceRows = 32 consecutive rows (one warp
// on the GPU, a thread per row; no sorting, so y is written in row order); a slice of `lanes` rows (32, or
// what is left for the last slice) padded to its longest row `width` is stored column-major: entry k of lane
// l at slot slice_ptr[s] + k * lanes + l (compressed_slot). Kernels loop to each row's own length, so padding
// slots (column offset 0, code 0) are never read and cannot leak Inf / NaN from x.
// - Row lengths: uint16 (a row above kCompressedMaxRowLength entries is refused with Unsupported); no row
//   pointer: a slice's start is slice_ptr (int64, one per 32 rows).
// - Columns: per slice a base (the slice's smallest column) and offsets from it, uint16 when the slice's
//   span max - min < 2^16 ("narrow"), else uint32 ("wide"; a span >= 2^32 is refused). Narrow and wide
//   slices keep their offsets in col16 / col32 at col_start[s] with the same slot layout.
// - Values, chosen at conversion by bit-exact comparison of the value bits: Pattern when every value is
//   exactly 1.0 (nothing stored: an empty matrix counts as one), Code8 (<= 256 distinct values: table +
//   uint8 codes), Code16 (<= 65536 distinct: table + uint16 codes), else Raw values. The table holds the
//   distinct values in ascending order of their bits (unsigned), so the round trip is bit-exact (-0.0, NaN
//   payloads too) and the CUDA conversion (sort + unique on the device) builds the same arrays.
// - Refused like the padded formats (Options.max_padding, kPaddingSlack) when the slots exceed the rule.
inline constexpr int kCompressedSliceRows = 32;
inline constexpr std::int64_t kCompressedMaxRowLength = 65535;      // uint16 row length
inline constexpr std::int64_t kCompressedNarrowSpan = 65536;        // narrow slice: max - min < 2^16
inline constexpr std::int64_t kCompressedWideSpan = 4294967296LL;   // wide slice: max - min < 2^32
inline constexpr std::size_t kCompressedMaxCode8 = 256;             // distinct values for uint8 codes
inline constexpr std::size_t kCompressedMaxCode16 = 65536;          // distinct values for uint16 codes

enum class CompressedValues : std::uint8_t { Pattern, Code8, Code16, Raw };

// Rows held by slice s (32, or fewer for the last slice): the stride of its column-major layout.
constexpr std::int64_t compressed_slice_lanes(std::int64_t rows, std::int64_t slice) {
  const std::int64_t left = rows - slice * kCompressedSliceRows;
  return left < kCompressedSliceRows ? left : kCompressedSliceRows;
}
// Slot of entry k of lane `lane` relative to the slice's first slot; shared by the conversion, the CPU
// kernel and the CUDA kernel (constexpr: callable from device code with --expt-relaxed-constexpr).
constexpr std::int64_t compressed_slot(std::int64_t k, std::int64_t lanes, std::int64_t lane) {
  return k * lanes + lane;
}

template <class Value, class Index>
struct CompressedCsrMatrix {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  CompressedValues value_mode = CompressedValues::Pattern;
  std::vector<std::uint16_t> row_length;   // rows entries
  // num_slices + 1: slice s holds lanes(s) * width(s) slots in [slice_ptr[s], slice_ptr[s + 1]) of the
  // code / value arrays (width = (slice_ptr[s + 1] - slice_ptr[s]) / lanes).
  std::vector<std::int64_t> slice_ptr{0};
  std::vector<std::int64_t> col_start;     // num_slices: first slot of slice s in col16 (narrow) or col32 (wide)
  std::vector<Index> col_base;             // num_slices: smallest column of the slice (0 for an empty slice)
  std::vector<std::uint8_t> wide;          // num_slices: 1 = offsets in col32, 0 = in col16
  std::vector<std::uint16_t> col16;        // column - col_base, narrow slices; padding holds 0
  std::vector<std::uint32_t> col32;        // column - col_base, wide slices; padding holds 0
  std::vector<Value> table;                // Code8 / Code16: the distinct values
  std::vector<std::uint8_t> code8;         // Code8: index into table per slot; padding holds 0
  std::vector<std::uint16_t> code16;       // Code16: likewise
  std::vector<Value> values;               // Raw: the value per slot; padding holds 0

  std::int64_t num_slices() const { return static_cast<std::int64_t>(col_start.size()); }
  std::int64_t slots() const { return slice_ptr.back(); }
};

// A short description of the widths a conversion chose, used as (part of) both backends' policy string:
// "slices=S cols=16bit(97% slices) values=u8 table(5) slots=N".
template <class Value, class Index>
std::string compressed_csr_summary(const CompressedCsrMatrix<Value, Index>& m);
// The same from the counts (the CUDA conversion builds no host matrix).
std::string compressed_csr_summary(std::int64_t slices, std::int64_t narrow_slices, CompressedValues mode,
                                   std::size_t table_size, std::int64_t slots);

// --- Conversions -------------------------------------------------------------------------------------
// Inputs are validated (InvalidArgument on malformed CSR). ELL, ELL-R, HYB, SELL, compressed CSR and COO keep
// each row's entries in their stored order, so to_csr returns the input itself (canonical or not). DIA holds one
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
template <class Value, class Index>
CompressedCsrMatrix<Value, Index> to_compressed_csr(const CsrMatrix<Value, Index>& a, const Options& options = {});

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
template <class Value, class Index>
CsrMatrix<Value, Index> to_csr(const CompressedCsrMatrix<Value, Index>& m);

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
template <class Value, class Index>
std::size_t storage_bytes(const CompressedCsrMatrix<Value, Index>& m);

}  // namespace spmv
