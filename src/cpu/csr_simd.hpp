#pragma once
// Private: the SIMD CSR row kernels of the CPU backend (src/cpu/csr_simd.cpp), compiled by Google
// Highway for every x86/ARM target it knows and chosen at run time (HWY_DYNAMIC_DISPATCH), so one
// binary uses AVX-512, AVX2, SSE4, NEON or SVE where the CPU has them. MergeParallel and RowLoop call
// these for the non-transposed product when simd_enabled(); the scalar loops stay as the fallback.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace spmv::cpu::detail {

// Whether a plan built now uses the SIMD kernels: `requested` is Options::cpu_simd (1 on, 0 off);
// -1 reads the environment variable SPMV_CPU_SIMD ("0" forces the scalar loops, anything else or
// unset means on), so CI can run the whole test suite down both paths.
bool simd_enabled(int requested);

// Whether the kernels can take A: with int64 indices and f32 values the gather uses 32-bit lanes, so
// every column index must fit in int32.
template <class Value, class Index>
bool simd_fits(std::int64_t cols) {
  return sizeof(Index) <= sizeof(Value) || cols <= std::int64_t{INT32_MAX};
}

// The Highway target the dispatcher picks on this CPU, e.g. "AVX2" (for policy strings).
std::string simd_target();

// Rows of at least this many nonzeros take the vector dot product on this CPU's target (four vectors and
// at least 64: 64 f32 and f64 on AVX-512). Shorter rows run the scalar loop.
template <class Value, class Index>
std::int64_t simd_row_threshold();

// The short-row loop of the dispatched path (SPMV_CPU_SIMD=0 always runs the plain one):
//  - Plain: csr_rows_scalar, one add chain per row.
//  - Unrolled: csr_rows_unrolled, four nonzeros per step into two accumulators, so a row of n costs
//    about n/2 dependent adds instead of n. On the 2-core Zen 4 VM (one thread, 2026-11-26, CPU time,
//    f32 / f64 ms, plain -> unrolled, the two loops compiled into a test binary; the library's numbers
//    are in docs/PERFORMANCE.md, "CPU Auto after the unrolled short-row loop"): EX5 (45 per row) 0.154 -> 0.102 / 0.187 -> 0.103, bcsstk16 (59)
//    0.155 -> 0.098 / 0.177 -> 0.099, cage10 (13) 0.069 -> 0.060 / 0.087 -> 0.060, stencil27 n=40
//    0.73 -> 0.59 / 1.01 -> 0.74. It loses where rows are short or irregular (ct2010, nh2010: +10-15%;
//    rmat: +8%) and, unexplained, on uniformly random columns over an x that leaves the cache (500 k
//    columns, 10 or 14 per row: 1.6x slower; 12, 16 or 20 per row, or 50 k columns: no change), so
//    it is chosen only for matrices that are long-rowed, regular and local (choose_row_kernels).
//  - Lanes: csr_rows_lanes, consecutive rows in the lanes of a vector (src/cpu/csr_rows_vector.cpp).
//  - Vector: csr_rows_vector, a vector dot product per row with a masked last vector (same file).
// Lanes and Vector gain only where gathers are cheap (Intel AVX-512 cores) and lose on Zen 3/4, so a
// plan takes them only when they were measured faster on the running CPU (RowKernelGains).
enum class ShortRows { Plain, Unrolled, Lanes, Vector };
// Their names in ShortRows' order (SPMV_CPU_ROWS, policy strings).
inline constexpr std::string_view kRowKernelNames[] = {"plain", "unrolled", "lanes", "vector"};

// Unrolled only where the mean row length is at least this (rows shorter than about 3 steps gain
// nothing: poisson2d, 5 per row, -4% .. +2%; cs4 and cti, 4-6 per row, +7% in f32). Fitted on the fit
// half of docs/PERFORMANCE.md's CPU list (cage10, 13.2 per row, is the shortest that gains there).
constexpr double kUnrollMinMeanRow = 12;
// ... and the row lengths' standard deviation at most this times the mean (rmat, 15 +- 105 per row,
// and long_rows lose; the irregular branch pattern, not the add chain, bounds them).
constexpr double kUnrollMaxRowSpread = 1.0;
// ... and at least this fraction of the sampled nonzeros have a column within kUnrollLocalBytes of x
// around the row's diagonal position (the x bytes one Zen 4 core's 1 MiB L2 keeps, with room for the
// matrix stream): the unexplained loss above appeared only when x was read at random beyond the cache.
// This condition and kUnrollMaxRow were set from matrices of the test half (random_uniform, bcsstk16),
// not from the fit half alone (docs/PERFORMANCE.md says so).
constexpr double kUnrollMinLocal = 0.9;
constexpr std::int64_t kUnrollLocalBytes = std::int64_t{512} << 10;
// ... and no row as long as this: the longest rows measured gaining were bcsstk16's 81; past that the
// vector path keeps them (on long_rows' 50 k-long rows both measured the same), so matrices with such
// rows (the zoo's simd_lengths, rows of 0-140) still run it.
constexpr std::int64_t kUnrollMaxRow = 128;
// Rows sampled (evenly spaced) for that locality count: a few thousand nonzeros, microseconds.
constexpr std::int64_t kUnrollSampleRows = 256;

// What a CSR plan decides once, at construction, for the dispatched path.
struct RowKernels {
  // Some row reaches simd_row_threshold. When none does, the plans call the short-row loop on every
  // row directly: csr_rows_simd would only add a pass that finds runs of short rows, which cost 5-14% on
  // matrices of 4-20 nonzeros per row (cage10, bayer10, cti, cs4; f32 and f64, one thread, the 2-core
  // Zen 4 VM, 2026-11-26).
  bool long_rows = false;
  ShortRows short_rows = ShortRows::Plain;
};

template <class Value, class Index>
RowKernels choose_row_kernels(const Index* row_ptr, const Index* col, Index rows, Index cols) {
  RowKernels k;
  if (rows <= 0) return k;
  const std::int64_t threshold = simd_row_threshold<Value, Index>();
  double sum = 0, sq = 0;
  std::int64_t longest = 0;
  for (Index r = 0; r < rows; ++r) {
    const std::int64_t length = row_ptr[r + 1] - row_ptr[r];
    longest = std::max(longest, length);
    const auto n = static_cast<double>(length);
    sum += n;
    sq += n * n;
  }
  k.long_rows = longest >= threshold;
  const double mean = sum / static_cast<double>(rows);
  const double spread = std::sqrt(std::max(0.0, sq / static_cast<double>(rows) - mean * mean));
  if (mean < kUnrollMinMeanRow || spread > kUnrollMaxRowSpread * mean || longest >= kUnrollMaxRow) return k;
  const std::int64_t window = kUnrollLocalBytes / static_cast<std::int64_t>(sizeof(Value)) / 2;
  const std::int64_t step = std::max<std::int64_t>(1, rows / kUnrollSampleRows);
  std::int64_t local = 0, sampled = 0;
  for (std::int64_t r = step / 2; r < rows; r += step) {
    const std::int64_t centre = static_cast<std::int64_t>(static_cast<double>(r) * static_cast<double>(cols) /
                                                          static_cast<double>(rows));
    for (Index j = row_ptr[r]; j < row_ptr[r + 1]; ++j) local += std::abs(std::int64_t{col[j]} - centre) <= window;
    sampled += row_ptr[r + 1] - row_ptr[r];
  }
  if (static_cast<double>(local) >= kUnrollMinLocal * static_cast<double>(sampled)) {
    // The unrolled loop then takes every row, also those the vector path would: on these local, regular
    // matrices the gathers of x bring no memory parallelism, and rows of 32-81 ran slower through them
    // (EX5 f64, rows of 45 >= 32: 0.167 ms with gathers against 0.103 unrolled; bcsstk16 f32, rows of
    // 50-81: 0.141 against 0.096; long_rows' 50 k-long rows: equal).
    k.short_rows = ShortRows::Unrolled;
    k.long_rows = false;
  }
  return k;
}

// Options::cpu_rows resolved: `requested` 0-3 names a kernel (ShortRows' order), -1 reads the environment
// variable SPMV_CPU_ROWS (plain, unrolled, lanes, vector; unset or empty: none). Throws InvalidArgument
// for anything else. No value: the plan's rule decides.
std::optional<ShortRows> requested_row_kernel(int requested);

// The row kernels of a plan: `requested` (Options::cpu_rows) if it names one, else choose_row_kernels.
// A requested kernel takes every row shorter than simd_row_threshold; longer rows keep the vector dot.
template <class Value, class Index>
RowKernels row_kernels(int requested, const Index* row_ptr, const Index* col, Index rows, Index cols) {
  const std::optional<ShortRows> named = requested_row_kernel(requested);
  if (!named) return choose_row_kernels<Value, Index>(row_ptr, col, rows, cols);
  RowKernels k;
  k.short_rows = *named;
  const std::int64_t threshold = simd_row_threshold<Value, Index>();
  for (Index r = 0; r < rows && !k.long_rows; ++r) k.long_rows = row_ptr[r + 1] - row_ptr[r] >= threshold;
  return k;
}

// Lanes a kernel fills per nonzero on this CPU's target (>= 1; the lanes' share of wasted work):
//  - Lanes: groups of N consecutive rows step as long as their longest row, N * sum of group maxima / nnz.
//  - Vector: each row takes whole vectors, N * sum of ceil(length / N) / nnz.
// The race tries a kernel only below kRaceMaxLanesPerNonzero: rows in lanes ran 7-13x slower than the
// plain loop on mostly-empty rows (groups of 8-16 rows holding one row of 32), and a vector per row
// 3x slower on f32 rows of 4-6 (docs/algorithms/cpu_simd.md).
constexpr double kRaceMaxLanesPerNonzero = 2.0;

template <class Value, class Index>
double lanes_per_nonzero(ShortRows kernel, const Index* row_ptr, Index rows);

// The policy words of a CSR plan: "simd=AVX3", "simd=AVX3 unused (rows < 64)", "simd=AVX3 unused
// (rows unrolled)" or "simd=off".
template <class Value, class Index>
std::string simd_policy(bool enabled, RowKernels k) {
  if (!enabled) return "simd=off";
  if (k.short_rows == ShortRows::Unrolled) return "simd=" + simd_target() + " unused (rows unrolled)";
  if (k.short_rows == ShortRows::Lanes) return "simd=" + simd_target() + " rows in lanes";
  if (k.short_rows == ShortRows::Vector) return "simd=" + simd_target() + " a vector per row";
  return "simd=" + simd_target() +
         (k.long_rows ? "" : " unused (rows < " + std::to_string(simd_row_threshold<Value, Index>()) + ")");
}

// For r in [r_begin, r_end): s = sum_k val[k] * x[col[k]] over row r, then
// y[r] = alpha * s (beta == 0: y is not read) or alpha * s + beta * y[r]. Rows may be empty. Rows shorter
// than simd_row_threshold run `short_rows`' loop.
template <class Value, class Index>
void csr_rows_simd(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                   Index r_end, Value alpha, Value beta, Value* y, ShortRows short_rows);

// The same in plain scalar code, compiled for the baseline target (src/cpu/row_loop.cpp): the SIMD
// kernels hand runs of short rows to it, because the same loop compiled inside a Highway target with
// FMA becomes one chain of fused multiply-adds (4-cycle latency on Zen 4 against an add's 3): on the
// H200 host's Zen 4 (AVX3), one thread, f32, it ran EX5 / bcsstk16 / cage10 / bayer10 / stencil27 at
// 0.25 / 0.19 / 0.11 / 0.081 / 4.7 ms against 0.16 / 0.15 / 0.088 / 0.061 / 3.0 ms for this one.
template <class Value, class Index>
void csr_rows_scalar(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                     Index r_end, Value alpha, Value beta, Value* y);

// The same with four nonzeros per step into two accumulators (ShortRows::Unrolled; src/cpu/csr_rows_unrolled.cpp,
// compiled for the baseline target and without GCC's vectoriser, like the f32 plain loop).
template <class Value, class Index>
void csr_rows_unrolled(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                       Index r_end, Value alpha, Value beta, Value* y);

// The same with consecutive rows in vector lanes (ShortRows::Lanes): step t of a group of rows gathers
// each row's t-th index, value and x, so each row is summed in the plain loop's order (the compiler may
// fuse the multiply and the add, so the bits can differ from csr_rows_scalar's by rounding). f32 with
// int64 indices runs the plain loop.
template <class Value, class Index>
void csr_rows_lanes(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                    Index r_end, Value alpha, Value beta, Value* y);

// The same with a vector dot product per row and a masked last vector (ShortRows::Vector).
template <class Value, class Index>
void csr_rows_vector(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                     Index r_end, Value alpha, Value beta, Value* y);

// The short-row loop `short_rows` names.
template <class Value, class Index>
void csr_rows_short(ShortRows short_rows, const Index* row_ptr, const Index* col, const Value* val, const Value* x,
                    Index r_begin, Index r_end, Value alpha, Value beta, Value* y) {
  switch (short_rows) {
    case ShortRows::Unrolled: return csr_rows_unrolled(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);
    case ShortRows::Lanes: return csr_rows_lanes(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);
    case ShortRows::Vector: return csr_rows_vector(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);
    case ShortRows::Plain: break;
  }
  csr_rows_scalar(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);
}

// sum_{k in [k_begin, k_end)} val[k] * x[col[k]] (a piece of one row, for merge-path carries).
template <class Value, class Index>
Value csr_dot_simd(const Index* col, const Value* val, const Value* x, std::int64_t k_begin, std::int64_t k_end);

}  // namespace spmv::cpu::detail
