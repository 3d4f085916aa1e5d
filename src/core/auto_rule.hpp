#pragma once
// Auto's rule for y = A*x on the GPU, CUDA-free so that CI tests it and the run-time tuner starts from
// it (issue 13 §2). Two steps, both from row statistics the plan computes on the device:
//  1. the CSR kernel, by row class (no conversion, no extra memory);
//  2. with Options::expected_applies, a conversion to DIA or ELL when a cost model predicts that the
//     products it speeds up repay its setup within those applies.
// The constants were fitted on the even members of matrix families with swept parameters and checked
// on the odd members (bench/auto_families.py; docs/ALGORITHMS.md "Auto's cross-validation").
#include <cstdint>
#include <string_view>

#include "spmv/algorithm.hpp"

namespace spmv::detail {

struct RowShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  double mean = 0;    // nonzeros per row, empty rows included
  double stddev = 0;  // population standard deviation of the row lengths
  std::int64_t max = 0;
  std::int64_t empty_rows = 0;
};

// Above this fraction of empty rows csr-vector walks 32 rows per warp (csr_vector_group_kernel) instead
// of a sub-warp per row (H200, mostly_empty 90% empty rows: 37.5% / 26.7% of copy bandwidth vs 17.5% /
// 19.3%; on stencil27 it loses, 66% vs 80%); the mostly-empty row class starts at the same fraction.
inline constexpr double kCsrVectorGroupEmptyFraction = 0.5;
inline bool groups_empty_rows(std::int64_t empty_rows, std::int64_t rows) {
  return double(empty_rows) > kCsrVectorGroupEmptyFraction * double(rows);
}
// Below this many nonzeros a product is launch-bound (a few microseconds on the H200), and csr-vector cuts
// its long rows into chunks of one warp pass (128 nonzeros, instead of 2048) so that a long row is summed
// by many warps at once rather than by one warp's chain of dependent passes (src/cuda/csr_vector.cu); the
// rule then sends long power-law rows there too (class LaunchBoundLongRows). H200, 2026-11-27,
// docs/PERFORMANCE.md "Long rows in launch-bound products".
inline constexpr std::int64_t kLaunchBoundNnz = std::int64_t(1) << 20;

enum class RowClass {
  Small,
  FewHugeRows,
  PowerLaw,
  LaunchBoundLongRows,
  MostlyEmpty,
  MostlyEmptyLongRows,
  HalfEmptyLongRows,
  Irregular,
  Short,
  Long
};
std::string_view to_string(RowClass c);

RowClass classify_rows(const RowShape& s);
// Step 1: the CSR kernel for A*x.
Algorithm csr_kernel_for(RowClass c);
// Step 2: whether converting to `format` (Dia, Ell or Sell) is repaid within `expected_applies` products
// of a matrix of this shape with `value_bytes`-byte values (4-byte indices assumed for the estimate).
bool conversion_repaid(Algorithm format, const RowShape& s, int value_bytes, std::int64_t expected_applies);
// The padded format Auto tries after DIA for this class, or Auto when none: SELL for matrices with more
// than half of their rows empty (no lower bound on the non-empty share since 2026-11-28); ELL for short regular
// rows, and long ones of at most 128 a row in matrices of at least 2^15 rows, whose longest row is within
// kEllMaxPadding of the mean (ELL then reads no row pointers and stores almost no padding).
Algorithm format_for(RowClass c, const RowShape& s, int value_bytes, std::int64_t expected_applies);
// Padding Auto allows the formats it converts to (DIA: slots per nonzero, by value size; ELL).
double dia_max_padding(int value_bytes);
extern const double kEllMaxPadding;

// Column chunks (CUDA's Algorithm::ColumnChunked, issue 13 §3): where x exceeds L2, scattered gathers miss
// to DRAM; one CSR block per chunk of columns keeps each block's piece of x in L2, but every block reads
// the row offsets and y again and leaves shorter rows. The span (columns per chunk) for A*x: x's chunk
// within a share of L2, but no more chunks than leave a minimum row length per block; `cols` (one
// chunk: nothing to gain) where x fits that share or the rows are too short for two chunks.
std::int64_t column_span_for(std::int64_t rows, std::int64_t cols, std::int64_t nnz, int value_bytes,
                             std::int64_t l2_bytes);
// Whether Auto builds the chunks for A*x (and races them against the whole matrix): the caller's hint is at
// least kColumnChunkedMinApplies and column_span_for cuts the columns.
bool column_chunks_may_pay(std::int64_t rows, std::int64_t cols, std::int64_t nnz, int value_bytes,
                           std::int64_t l2_bytes, std::int64_t expected_applies);
extern const std::int64_t kColumnChunkedMinApplies;

}  // namespace spmv::detail

// ==== CPU Auto (issue 17): conversions on the CPU backend =========================================
// Separate from the GPU rule above (own constants, own functions). Without Options::expected_applies
// the CPU Auto runs CSR (row-loop or merge-parallel, src/cpu/cpu_dispatch.cpp) and converts nothing;
// with it, the dispatch counts the slots DIA and SELL-C-sigma would store and this rule converts when
// the products' predicted saving repays the conversion. Constants: src/core/auto_rule.cpp, "CPU".
namespace spmv::detail {

struct CpuFormatSlots {
  std::int64_t dia = -1;   // rows * occupied diagonals; -1: not counted (far too many diagonals)
  std::int64_t sell = -1;  // padded slots of SELL-C-sigma at the CPU's slice height C; -1: not counted
  // Rows whose length differs from the previous row's: where CSR's row loop mispredicts its exit
  // branch, its main cost on short irregular rows (which SELL does not pay: a slice has one width).
  std::int64_t length_changes = 0;
};

// DIA's padding limit on the CPU (slots per nonzero); the dispatch stops counting diagonals past it.
extern const double kCpuDiaMaxPadding;
// SELL's padding limit on the CPU (slots per nonzero).
extern const double kCpuSellMaxPadding;

// How much faster or slower the converted formats run, relative to the CSR row loop, on the CPU in use
// than on the machine the rule's costs were fitted on: multipliers of the fitted DIA and SELL costs and
// of the row loop's cost per length change (1: as fitted). They differ most where SELL's gathers are
// concerned: SELL ran 1.4-2.8x faster than the row loop on a Sapphire Rapids core, but on the Zen 4 VM
// slower than it on small files. src/cpu/cpu_calibration.cpp measures them on the running CPU
// (docs/ALGORITHMS.md, "CPU Auto").
struct CpuFormatScales {
  double dia = 1;
  double sell = 1;
  double length_change = 1;  // the row loop's cost per change of row length (a mispredicted row end)
};

// Predicted time of one product on one thread, ms: `format` is RowLoop (CSR), Dia or Sell.
double cpu_product_ms(Algorithm format, const RowShape& s, const CpuFormatSlots& slots, int value_bytes,
                      const CpuFormatScales& scales = {});
// Predicted (sequential) conversion time, ms, for Dia or Sell.
double cpu_conversion_ms(Algorithm format, const RowShape& s, int value_bytes);
// Whether any conversion could be repaid (from the row statistics alone): the dispatch counts the
// formats' slots only then, since counting costs about as much as ten CSR products.
bool cpu_conversion_may_repay(const RowShape& s, int value_bytes, std::int64_t expected_applies, int threads);
// Dia or Sell for A*x when `expected_applies` products on `threads` threads save more than the
// conversion costs (the larger net saving wins); Auto when neither does, or without the hint.
Algorithm cpu_format_for(const RowShape& s, const CpuFormatSlots& slots, int value_bytes,
                         std::int64_t expected_applies, int threads, const CpuFormatScales& scales = {});
// The same choice asked with the formats' scales `band` times cheaper and dearer. Where the two answers
// differ the choice is near the rule's boundary: `format` is the cheaper end's answer (to be raced against
// the unconverted plan), and where both ends convert, to different formats, `rival` is the other format
// (both are built and raced); otherwise `format` is cpu_format_for's answer and `rival` Auto.
struct CpuFormatBand {
  Algorithm format = Algorithm::Auto;
  bool near_boundary = false;
  Algorithm rival = Algorithm::Auto;
};
CpuFormatBand cpu_format_band(const RowShape& s, const CpuFormatSlots& slots, int value_bytes,
                              std::int64_t expected_applies, int threads, const CpuFormatScales& scales, double band);

}  // namespace spmv::detail
