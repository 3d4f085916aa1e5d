#include "core/auto_rule.hpp"

#include <algorithm>
#include <cmath>

namespace spmv::detail {
namespace {

// ---- Step 1: row classes and their CSR kernels ----------------------------------------------------
// Fitted on the even members of bench/auto_families.py's families (H200, 2026-11-23, 94 matrix x
// precision cases: grid search over these constants, each class then given the kernel with the best
// harmonic-mean speed-up over the best cuSPARSE algorithm); on the odd members, which the fit never
// saw, the rule ran at 1.22x the best cuSPARSE (hmean, 88 cases; the rule before the fit: 1.19x) and
// below 1.0x on 20 cases (before: 27), all power-law, mostly-empty, long-row or random-column
// matrices on which no CSR kernel of spmv beat cuSPARSE then (docs/ALGORITHMS.md has the table). Later
// refits of single constants say so where they sit (kFewHugeRowsCv with segmented-sum, 2026-11-29).
//
// Below this many nonzeros launch latency dominates: the one-launch csr-vector.
constexpr std::int64_t kSmallMatrixNnz = std::int64_t(1) << 16;
// A longest row above this multiple of the mean (plus one) makes long rows ...
constexpr double kLongRowFactor = 128.0;
// ... of which a few hold most nonzeros when the coefficient of variation exceeds this (csr-vector
// splits them over warps); otherwise the lengths follow a power law: segmented-sum, or csr-vector below
// kLaunchBoundNnz (R-MAT scale 14-15, 0.23 M nonzeros: 5.5-5.7 us against merge-path's 8.0-8.4 and
// cuSPARSE's 7.1-7.8, H200 2026-11-27, once csr-vector's chunks there were one warp pass long).
// Refitted for segmented-sum (H200, 2026-11-29) on the even members of bench/auto_families.py's skew and
// longrow families: R-MAT's long rows (cv 4.1-8.2) ran faster in segmented-sum, the long_rows and
// dense_rows members (cv 38-85) in csr-vector; 18 is the geometric middle of that gap, rounded
// (docs/PERFORMANCE.md, "Segmented sum for power-law rows"). It was 5, which sent R-MAT's default skew
// (cv 5-12) to csr-vector at 0.81-0.97x cuSPARSE.
constexpr double kFewHugeRowsCv = 18.0;
// More than this share of empty rows: merge-path (its diagonal search skips them at no cost) ...
constexpr double kMostlyEmptyFraction = 0.9;
// ... unless the non-empty rows hold at least this many nonzeros on average (from kLaunchBoundNnz on):
// then csr-vector, whose walk of 32 rows a warp takes their own width (up to 32 lanes) since 2026-11-29.
// Fitted on the even members of bench/auto_families.py's empty family that fall in the class (H200,
// 2026-11-29; speed-up over the best cuSPARSE f32 / f64, merge-path against csr-vector): 16 a row 0.94 /
// 0.95 against 0.72 / 0.83 and 0.94 / 0.94 against 0.92 / 1.06; 64 a row 0.96 / 0.92 against 1.01 / 1.06.
// 32 is the geometric middle of that gap. On the odd members: hmean 0.949 / 0.944 -> 0.997 / 1.031 (the
// one miss: 24 a row, where csr-vector's 1.04 / 1.16 beat merge-path's 0.93 / 0.94); on six more in the
// class (2-8 M rows, 2-5% non-empty, 16-256 a row) 0.915 / 0.920 -> 0.951 / 1.026. docs/PERFORMANCE.md,
// "Mostly empty rows at their own width". Launch-bound products were not measured: merge-path stays.
constexpr double kMostlyEmptyVectorLength = 32.0;
// Above csr-vector's kCsrVectorGroupEmptyFraction of empty rows (0.5, where it walks 32 rows per warp), non-empty rows
// holding more than this many nonzeros on average go to segmented-sum (from 2^20 nonzeros; below,
// kLaunchBoundEmptyLongLength). First fitted at 20 (H100, 2026-11-26: csr-vector's 4 lanes a row of 24-32 lost,
// merge-path won); refitted when csr-vector took 8 lanes for such rows (H200, 2026-11-29, even members of
// bench/auto_families.py's empty family: csr-vector won at 24-32 a row, 1.02 / 1.04 and 0.99 / 1.00x the best cuSPARSE,
// segmented-sum at 48-64, 1.01-1.03 / 0.94-0.95x against merge-path's 0.96-0.97 / 0.87-0.89x; 40 is the geometric
// middle of that gap, rounded). Rule on the odd members: 0.965x -> 0.988x the best cuSPARSE (hmean of 18; these kernels
// all sit at the gather rate of x, docs/PERFORMANCE.md "Half-empty and scattered rows").
constexpr double kEmptyLongLength = 40.0;
// Below kLaunchBoundNnz the first fit's bound stays (merge-path above it): the refit's members all had
// 8 M nonzeros, and launch-bound products were not measured again.
constexpr double kLaunchBoundEmptyLongLength = 20.0;
// Row lengths varying more than this relative to the mean: csr-vector with its long-row split.
constexpr double kIrregularCv = 0.5;
// Regular rows this short: a thread per row (csr-scalar); longer ones a sub-warp (csr-vector).
constexpr double kScalarMaxMean = 6.0;

// ---- Step 2: the repayment model ---------------------------------------------------------------
// applies * (estimated CSR product time * the format's typical gain) >= estimated setup. Measured on
// the same sweep (all members above 1 M nonzeros): Auto's CSR kernels ran at a median 1.34 / 1.68 TB/s
// (f32 / f64) of CSR bytes, plus a launch; DIA saved a median 49% / 39% of Auto's time where it was
// accepted (17 cases each), ELL 15% / 16% (34); setup = a fixed part (0.7 ms in f64, which includes
// the first use's module load; 0.2 ms in f32) + a per-nonzero part (least squares). DIA's per-nonzero
// part was refitted when it gained bits and value codes (2026-11-27): finding them made its setup
// 1.3-4.1 ms on the 19-20 M-nonzero stencils (H200, after the first use; the codes' sort costs most),
// about 0.12 ms per million nonzeros; its gain stays the raw format's (bits and codes gain more).
constexpr double kLaunchMs = 0.005;
constexpr double kCsrBytesPerMs = 1.5e9;
constexpr double kDiaGain = 0.4;
constexpr double kEllGain = 0.15;
constexpr double kSetupFixedMs = 0.7;
constexpr double kDiaSetupMsPerMnnz = 0.12;
// DIA only from kLaunchBoundNnz (2^20) nonzeros: below it a product is launch-bound, and DIA's kernel
// ran slower than CSR there (H200, 2026-11-29, 1000 expected products, Auto as it runs, against Auto's
// CSR kernel without the hint; us per product f32 / f64): on the fit half of bench/auto_families.py's
// size family stencil27 of 0.86 M nonzeros 9.6 / 11.1 against 4.7 / 4.9 and of 14 k 9.3 against 5.6
// (f32), poisson2d / poisson3d of 20-330 k 0.88-1.16x CSR's speed, the members of 5-19 M all won by DIA
// (poisson2d of 5.2 M 6.6 / 9.3 against 18.9 / 26.5). Test half: stencil27 of 110 k 8.9 / 10.3 against
// 5.2 / 5.2 (0.97x cuSPARSE with DIA); poisson2d of 1.3 M and poisson3d of 1.8 M keep DIA and win (4.4 /
// 4.9 against 4.9 / 5.7, 5.5 / 5.9 against 6.8 / 7.9).
// ELL's per-nonzero part refitted with its long rows (2026-11-27): the median f64 setup on the rowlen
// family's 8 M-nonzero members was 1.9 ms (f32 0.6 ms), i.e. 0.15 ms per million nonzeros above the
// fixed part (it was 0.02, which let 100 expected products convert at a loss: rowlen 0.93x then).
constexpr double kEllSetupMsPerMnnz = 0.15;
// SELL for rows of which more than half are empty: sorted within its windows, the non-empty rows fill
// whole slices and the empty ones leave them (src/cuda/format_sell.cu). Its setup grows with the rows
// (the sort), its gain is the median 5%. A lower bound on the non-empty share, fitted on the even members
// of bench/auto_families.py's empty family (setup / 1000 added), was 0.1 (f32) and 0.15 (f64) when the
// empty rows sat in the slices (H200, 2026-11-27); once they left them it fell to none in f64 and 8% in
// f32 (2026-11-28, the two-launch kernel), and with the one-launch kernel to none in f32 too (H200,
// 2026-11-28, 2-35% non-empty rows of 16-64: the fit half's best; test half 1.020x -> 1.024x the best
// cuSPARSE, seven held-out matrices 0.991x -> 1.049x, below 1.0x 4 -> 1; docs/PERFORMANCE.md).
constexpr double kSellGain = 0.05;
constexpr double kSellSetupMsPerMrows = 0.5;

double csr_product_ms(const RowShape& s, int value_bytes) {
  const double bytes = double(s.nnz) * (value_bytes + 4) + double(s.rows + 1) * 4 + double(s.cols) * value_bytes +
                       double(s.rows) * value_bytes;
  return kLaunchMs + bytes / kCsrBytesPerMs;
}

}  // namespace

// DIA stores at most this many slots per nonzero so that it reads clearly fewer bytes than CSR
// ((value + index) / value = 1.5 in f64, 2 in f32; H200 stencils 2.0-2.4x cuSPARSE, 2026-11-23).
double dia_max_padding(int value_bytes) { return value_bytes == 8 ? 1.2 : 1.5; }
// ELL's padding limit, fitted with the classes (grid 1.1 .. 3: 1.1 won; above it the padded slots
// cost what the missing row pointers save).
const double kEllMaxPadding = 1.1;
// ELL for *long* regular rows too, up to this mean: a thread per row walking column-major slots beat
// csr-vector's sub-warps on uniform random columns of 8-128 a row (H100, 1.04-2.2x cuSPARSE against
// csr-vector's 0.86-1.06x) but not at 256-512 (0.37-1.16x against 1.08-1.62x). Fitted on the even
// members of bench/auto_families.py's rowlen family (grid 8 .. 256 and none; 128 and 256 tie there, the
// smaller kept), with 1000 expected products: on the odd members 1.07x -> 1.22x the best cuSPARSE
// (hmean of 14, none below 1.0x; before, 5). docs/PERFORMANCE.md, "ELL for long regular rows".
constexpr double kEllMaxMean = 128.0;
// ... and only with this many rows: a thread per row leaves a small matrix few threads. EX5 (6,545 rows
// of 45, the files family's fit half) ran at 1.28x cuSPARSE as ELL against csr-vector's 2.03x (f64,
// H200); the rowlen members, 62,500 rows and more, gained. Set in that gap (no member lies inside it).
constexpr std::int64_t kEllLongMinRows = std::int64_t(1) << 15;

// Column chunks: a chunk of x may take this share of L2 ...
constexpr double kColumnChunkL2Share = 1.0;
// ... and chunks stop where a block's rows would hold fewer nonzeros than this on average (short rows
// make each block's product slower per nonzero, and every block adds a pass over the rows and y).
// Both fitted on the even members of a sweep of 13 matrices whose x exceeds L2 (random columns 4-64 a
// row, 1-32 M rows, 16-128 M columns; R-MAT; a Poisson grid), K = 2..16 chunks measured each, grid
// 0.2-1.0 x 1-4, the plan's race counted (a losing chunking keeps the whole matrix); on the odd members
// the rule ran 1.31x Auto on the whole matrix (0.94 of the best K), H200, 2026-11-30 (docs/PERFORMANCE.md
// "Column chunks where x exceeds L2"). Shares 0.75-1.0 tie on the fit half.
constexpr double kColumnChunkMinRowLength = 2.0;
// The blocks' device conversion took 3.6-28.6 ms on that sweep, repaid by their gain after 12-151
// products (median ~40); below this hint Auto does not build them, and the race in the plan checks the
// measured setup against the gain over the expected applies.
const std::int64_t kColumnChunkedMinApplies = 100;

std::int64_t column_span_for(std::int64_t rows, std::int64_t cols, std::int64_t nnz, int value_bytes,
                             std::int64_t l2_bytes) {
  if (rows <= 0 || cols <= 0 || nnz <= 0 || l2_bytes <= 0) return std::max<std::int64_t>(cols, 1);
  const double x_bytes = double(cols) * value_bytes;
  const double by_cache = std::ceil(x_bytes / (kColumnChunkL2Share * double(l2_bytes)));
  const double by_rows = std::floor(double(nnz) / double(rows) / kColumnChunkMinRowLength);
  const std::int64_t chunks = static_cast<std::int64_t>(std::min(by_cache, by_rows));
  if (chunks < 2) return cols;
  return (cols + chunks - 1) / chunks;
}

bool column_chunks_may_pay(std::int64_t rows, std::int64_t cols, std::int64_t nnz, int value_bytes,
                           std::int64_t l2_bytes, std::int64_t expected_applies) {
  return expected_applies >= kColumnChunkedMinApplies &&
         column_span_for(rows, cols, nnz, value_bytes, l2_bytes) < cols;
}

std::string_view to_string(RowClass c) {
  switch (c) {
    case RowClass::Small: return "small";
    case RowClass::FewHugeRows: return "few-huge-rows";
    case RowClass::PowerLaw: return "power-law";
    case RowClass::LaunchBoundLongRows: return "launch-bound-long-rows";
    case RowClass::MostlyEmpty: return "mostly-empty";
    case RowClass::MostlyEmptyLongRows: return "mostly-empty-long-rows";
    case RowClass::HalfEmptyLongRows: return "half-empty-long-rows";
    case RowClass::Irregular: return "irregular";
    case RowClass::Short: return "short";
    case RowClass::Long: return "long";
  }
  return "?";
}

RowClass classify_rows(const RowShape& s) {
  if (s.nnz < kSmallMatrixNnz) return RowClass::Small;
  if (double(s.max) > kLongRowFactor * (s.mean + 1)) {
    if (s.stddev > kFewHugeRowsCv * s.mean) return RowClass::FewHugeRows;
    return s.nnz < kLaunchBoundNnz ? RowClass::LaunchBoundLongRows : RowClass::PowerLaw;
  }
  const double empty = double(s.empty_rows);
  if (empty > kMostlyEmptyFraction * double(s.rows)) {
    const bool long_rows = double(s.nnz) >= kMostlyEmptyVectorLength * (double(s.rows) - empty);
    return long_rows && s.nnz >= kLaunchBoundNnz ? RowClass::MostlyEmptyLongRows : RowClass::MostlyEmpty;
  }
  if (groups_empty_rows(s.empty_rows, s.rows)) {  // long non-empty rows: a bound and a class by size
    const bool launch_bound = s.nnz < kLaunchBoundNnz;
    const double long_length = launch_bound ? kLaunchBoundEmptyLongLength : kEmptyLongLength;
    if (double(s.nnz) > long_length * (double(s.rows) - empty))
      return launch_bound ? RowClass::MostlyEmpty : RowClass::HalfEmptyLongRows;
  }
  if (s.stddev > kIrregularCv * s.mean) return RowClass::Irregular;
  return s.mean <= kScalarMaxMean ? RowClass::Short : RowClass::Long;
}

Algorithm csr_kernel_for(RowClass c) {
  switch (c) {
    case RowClass::PowerLaw:
    case RowClass::HalfEmptyLongRows: return Algorithm::SegmentedSum;
    case RowClass::MostlyEmpty: return Algorithm::MergePath;
    case RowClass::Short: return Algorithm::CsrScalar;
    default: return Algorithm::CsrVector;
  }
}

bool conversion_repaid(Algorithm format, const RowShape& s, int value_bytes, std::int64_t expected_applies) {
  if (expected_applies <= 0 || s.nnz <= 0) return false;
  double gain = 0, per_mnnz = 0, per_mrows = 0;
  if (format == Algorithm::Dia) {
    if (s.nnz < kLaunchBoundNnz) return false;  // launch-bound products: DIA gains nothing (above)
    gain = kDiaGain;
    per_mnnz = kDiaSetupMsPerMnnz;
  } else if (format == Algorithm::Ell) {
    gain = kEllGain;
    per_mnnz = kEllSetupMsPerMnnz;
  } else if (format == Algorithm::Sell) {
    gain = kSellGain;
    per_mrows = kSellSetupMsPerMrows;
  } else {
    return false;
  }
  const double saved = double(expected_applies) * csr_product_ms(s, value_bytes) * gain;
  return saved >= kSetupFixedMs + per_mnnz * double(s.nnz) / 1e6 + per_mrows * double(s.rows) / 1e6;
}

Algorithm format_for(RowClass c, const RowShape& s, int value_bytes, std::int64_t expected_applies) {
  if (s.nnz <= 0) return Algorithm::Auto;
  if (groups_empty_rows(s.empty_rows, s.rows))
    return conversion_repaid(Algorithm::Sell, s, value_bytes, expected_applies) ? Algorithm::Sell : Algorithm::Auto;
  const bool long_enough = c == RowClass::Long && s.mean <= kEllMaxMean && s.rows >= kEllLongMinRows;
  if (c != RowClass::Short && !long_enough) return Algorithm::Auto;
  if (double(s.rows) * double(s.max) > kEllMaxPadding * double(s.nnz)) return Algorithm::Auto;
  return conversion_repaid(Algorithm::Ell, s, value_bytes, expected_applies) ? Algorithm::Ell : Algorithm::Auto;
}

}  // namespace spmv::detail

// ==== CPU Auto (issue 17) ============================================================================
namespace spmv::detail {
namespace {

// Per-product cost on one thread, ns: CSR = per nonzero + per row (the row loop's bookkeeping, y write)
// + per length change (a mispredicted row end); DIA = per stored slot (value + contiguous x, no index);
// SELL = per padded slot (value + index + gather) + per row (the write through the permutation).
// Conversion (to_dia / to_sell and the plan, sequential): per nonzero. Indexed by value size: [0] f32,
// [1] f64. Least squares on relative error over the "fit" half of the matrices of docs/PERFORMANCE.md
// ("CPU Auto with the expected-applies hint", bench/cpu_vs_vendor.cpp, 2-core AMD EPYC Zen 3 with AVX2,
// one thread, CPU time, best of 2 runs x 3 rounds): poisson2d, rmat, long_rows, fem2d, EX5, cage10,
// nh2010, bayer10, cs4; the other half only checked the choices.
struct CpuCosts {
  double csr_ns_per_nnz, csr_ns_per_row, csr_ns_per_length_change;
  double dia_ns_per_slot;
  double sell_ns_per_slot, sell_ns_per_row;
  double dia_setup_ns_per_nnz, sell_setup_ns_per_nnz;
};
constexpr CpuCosts kCpuCosts[2] = {
    {0.58, 1.4, 7.9, 0.41, 0.60, 1.1, 16.0, 11.0},  // f32
    {0.66, 1.0, 5.9, 0.69, 0.70, 2.4, 16.0, 18.0},  // f64
};
// A conversion must save at least this share of the CSR time per product: the fitted model misses
// single matrices by about this much (and random-access matrices by more, for CSR and SELL alike), and
// a conversion that saves nothing measurable only costs memory.
constexpr double kCpuMinGain = 0.1;
const CpuCosts& cpu_costs(int value_bytes) { return kCpuCosts[value_bytes == 8 ? 1 : 0]; }

}  // namespace

// DIA is not considered above this many slots per nonzero: with many short diagonals its segments get
// short (bcsstk16, 3 slots per nonzero in 177 diagonals, ran 10x slower than CSR); 1.5 is where its
// bytes (value only) match CSR's (value + index) in f64.
const double kCpuDiaMaxPadding = 1.5;
// SELL is not considered above this many slots per nonzero: the rule prices padding slots like stored
// ones, and on power-law rows read at random that undercounts them (one thread, Sapphire Rapids, with
// the CPU's measured scales: rmat scale 18 f64, 1.62 slots per nonzero, took 14.0 ms in SELL against
// 9.5 in CSR; at 1.27-1.43, mostly_empty, SELL and CSR were within 4%). The same limit as DIA's.
const double kCpuSellMaxPadding = 1.5;

double cpu_product_ms(Algorithm format, const RowShape& s, const CpuFormatSlots& slots, int value_bytes,
                      const CpuFormatScales& scales) {
  const CpuCosts& k = cpu_costs(value_bytes);
  switch (format) {
    case Algorithm::Dia:
      return slots.dia < 0 || double(slots.dia) > kCpuDiaMaxPadding * double(s.nnz)
                 ? -1
                 : scales.dia * k.dia_ns_per_slot * double(slots.dia) * 1e-6;
    case Algorithm::Sell:
      if (slots.sell < 0 || double(slots.sell) > kCpuSellMaxPadding * double(s.nnz)) return -1;
      return scales.sell * (k.sell_ns_per_slot * double(slots.sell) + k.sell_ns_per_row * double(s.rows)) * 1e-6;
    default:
      return (k.csr_ns_per_nnz * double(s.nnz) + k.csr_ns_per_row * double(s.rows) +
              scales.length_change * k.csr_ns_per_length_change * double(slots.length_changes)) * 1e-6;
  }
}

double cpu_conversion_ms(Algorithm format, const RowShape& s, int value_bytes) {
  const CpuCosts& k = cpu_costs(value_bytes);
  return (format == Algorithm::Dia ? k.dia_setup_ns_per_nnz : k.sell_setup_ns_per_nnz) * double(s.nnz) * 1e-6;
}

bool cpu_conversion_may_repay(const RowShape& s, int value_bytes, std::int64_t expected_applies, int threads) {
  if (expected_applies <= 0 || s.nnz <= 0) return false;
  // Even a format that took no time at all saves at most the CSR products.
  const double csr = cpu_product_ms(Algorithm::RowLoop, s, CpuFormatSlots{}, value_bytes);
  const double cheapest = std::min(cpu_conversion_ms(Algorithm::Dia, s, value_bytes),
                                   cpu_conversion_ms(Algorithm::Sell, s, value_bytes));
  return double(expected_applies) * csr / std::max(1, threads) >= cheapest;
}

Algorithm cpu_format_for(const RowShape& s, const CpuFormatSlots& slots, int value_bytes,
                         std::int64_t expected_applies, int threads, const CpuFormatScales& scales) {
  if (!cpu_conversion_may_repay(s, value_bytes, expected_applies, threads)) return Algorithm::Auto;
  const double csr = cpu_product_ms(Algorithm::RowLoop, s, slots, value_bytes, scales);
  Algorithm best = Algorithm::Auto;
  double best_net = 0;
  for (Algorithm format : {Algorithm::Dia, Algorithm::Sell}) {
    const double t = cpu_product_ms(format, s, slots, value_bytes, scales);
    if (t < 0 || t > (1 - kCpuMinGain) * csr) continue;
    // Products split over the threads; the conversion runs on one.
    const double net = double(expected_applies) * (csr - t) / std::max(1, threads) -
                       cpu_conversion_ms(format, s, value_bytes);
    if (net > best_net) {
      best = format;
      best_net = net;
    }
  }
  return best;
}

CpuFormatBand cpu_format_band(const RowShape& s, const CpuFormatSlots& slots, int value_bytes,
                              std::int64_t expected_applies, int threads, const CpuFormatScales& scales, double band) {
  CpuFormatBand out;
  out.format = cpu_format_for(s, slots, value_bytes, expected_applies, threads, scales);
  const auto scaled = [&](double f) {
    return CpuFormatScales{scales.dia * f, scales.sell * f, scales.length_change / f};
  };
  const Algorithm cheaper = cpu_format_for(s, slots, value_bytes, expected_applies, threads, scaled(1 / band));
  const Algorithm dearer = cpu_format_for(s, slots, value_bytes, expected_applies, threads, scaled(band));
  if (cheaper != dearer && cheaper != Algorithm::Auto) {
    out.near_boundary = true;
    out.format = cheaper;
    if (dearer != Algorithm::Auto) out.rival = dearer;
  }
  return out;
}

}  // namespace spmv::detail
