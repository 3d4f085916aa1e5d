#include "core/auto_rule.hpp"

namespace spmv::detail {
namespace {

// ---- Step 1: row classes and their CSR kernels ----------------------------------------------------
// Fitted on the even members of bench/auto_families.py's families (H200, 2026-11-23, 94 matrix x
// precision cases: grid search over these constants, each class then given the kernel with the best
// harmonic-mean speed-up over the best cuSPARSE algorithm); on the odd members, which the fit never
// saw, the rule ran at 1.22x the best cuSPARSE (hmean, 88 cases; the rule before the fit: 1.19x) and
// below 1.0x on 20 cases (before: 27), all power-law, mostly-empty, long-row or random-column
// matrices on which no CSR kernel of spmv beats cuSPARSE (docs/ALGORITHMS.md has the table).
//
// Below this many nonzeros launch latency dominates: the one-launch csr-vector.
constexpr std::int64_t kSmallMatrixNnz = std::int64_t(1) << 16;
// A longest row above this multiple of the mean (plus one) makes long rows ...
constexpr double kLongRowFactor = 128.0;
// ... of which a few hold most nonzeros when the coefficient of variation exceeds this (csr-vector
// splits them over warps); otherwise the lengths follow a power law (merge-path).
constexpr double kFewHugeRowsCv = 5.0;
// More than this share of empty rows: merge-path (its diagonal search skips them at no cost).
constexpr double kMostlyEmptyFraction = 0.9;
// Row lengths varying more than this relative to the mean: csr-vector with its long-row split.
constexpr double kIrregularCv = 0.5;
// Regular rows this short: a thread per row (csr-scalar); longer ones a sub-warp (csr-vector).
constexpr double kScalarMaxMean = 6.0;

// ---- Step 2: the repayment model ---------------------------------------------------------------
// applies * (estimated CSR product time * the format's typical gain) >= estimated setup. Measured on
// the same sweep (all members above 1 M nonzeros): Auto's CSR kernels ran at a median 1.34 / 1.68 TB/s
// (f32 / f64) of CSR bytes, plus a launch; DIA saved a median 49% / 39% of Auto's time where it was
// accepted (17 cases each), ELL 15% / 16% (34); setup = a fixed part (0.7 ms in f64, which includes
// the first use's module load; 0.2 ms in f32) + a per-nonzero part (least squares).
constexpr double kLaunchMs = 0.005;
constexpr double kCsrBytesPerMs = 1.5e9;
constexpr double kDiaGain = 0.4;
constexpr double kEllGain = 0.15;
constexpr double kSetupFixedMs = 0.7;
constexpr double kDiaSetupMsPerMnnz = 0.035;
constexpr double kEllSetupMsPerMnnz = 0.02;

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

std::string_view to_string(RowClass c) {
  switch (c) {
    case RowClass::Small: return "small";
    case RowClass::FewHugeRows: return "few-huge-rows";
    case RowClass::PowerLaw: return "power-law";
    case RowClass::MostlyEmpty: return "mostly-empty";
    case RowClass::Irregular: return "irregular";
    case RowClass::Short: return "short";
    case RowClass::Long: return "long";
  }
  return "?";
}

RowClass classify_rows(const RowShape& s) {
  if (s.nnz < kSmallMatrixNnz) return RowClass::Small;
  if (double(s.max) > kLongRowFactor * (s.mean + 1))
    return s.stddev > kFewHugeRowsCv * s.mean ? RowClass::FewHugeRows : RowClass::PowerLaw;
  if (double(s.empty_rows) > kMostlyEmptyFraction * double(s.rows)) return RowClass::MostlyEmpty;
  if (s.stddev > kIrregularCv * s.mean) return RowClass::Irregular;
  return s.mean <= kScalarMaxMean ? RowClass::Short : RowClass::Long;
}

Algorithm csr_kernel_for(RowClass c) {
  switch (c) {
    case RowClass::PowerLaw:
    case RowClass::MostlyEmpty: return Algorithm::MergePath;
    case RowClass::Short: return Algorithm::CsrScalar;
    default: return Algorithm::CsrVector;
  }
}

bool conversion_repaid(Algorithm format, const RowShape& s, int value_bytes, std::int64_t expected_applies) {
  if (expected_applies <= 0 || s.nnz <= 0) return false;
  double gain = 0, per_mnnz = 0;
  if (format == Algorithm::Dia) {
    gain = kDiaGain;
    per_mnnz = kDiaSetupMsPerMnnz;
  } else if (format == Algorithm::Ell) {
    gain = kEllGain;
    per_mnnz = kEllSetupMsPerMnnz;
  } else {
    return false;
  }
  const double saved = double(expected_applies) * csr_product_ms(s, value_bytes) * gain;
  return saved >= kSetupFixedMs + per_mnnz * double(s.nnz) / 1e6;
}

Algorithm format_for(RowClass c, const RowShape& s, int value_bytes, std::int64_t expected_applies) {
  if (c != RowClass::Short || s.nnz <= 0) return Algorithm::Auto;
  if (double(s.rows) * double(s.max) > kEllMaxPadding * double(s.nnz)) return Algorithm::Auto;
  return conversion_repaid(Algorithm::Ell, s, value_bytes, expected_applies) ? Algorithm::Ell : Algorithm::Auto;
}

}  // namespace spmv::detail
