#pragma once
// CSR-vector's measured row-walk policy (csr_vector.cu, docs/algorithms/csr_vector.md): the sub-warp width
// rule (lanes per row from a row length and whether the columns are local), and the flat walk's loads in
// flight and streaming loads. SemiringPlan's row kernel (semiring_multiply.cu, semiring_plan.cu) walks
// rows the same way and takes the same widths.
#include "cuda/common/warp_launch.cuh"

namespace spmv::cuda::csr_vector_policy {

// Sub-warp width rule (width_for): from L, the nnz-weighted mean length of the rows the row kernel
// walks, measured on the H200 (% of copy bandwidth, f64 / f32, flat walk, U = 4):
//  L <= 14: W = pow2 >= L / 4 (long_rows short rows L = 8: W = 2 45.3 / 35.9, W = 8 40.1 / 34.7);
//  14 < L <= 20: W = 8 (random_uniform per_row = 16, x gathers from L2: W = 8 38.1 / 27.1, W = 4
//    35.0 / 26.6, W = 2 33.0 / 25.4; dense_rows' short rows, L = 12: W = 4 48.3 / 37.0 beat W = 8);
//  L > 20: W = pow2 >= L / 8 (stencil27:n=100, L = 26.7: W = 4 79.6 / 77.5; the SC'09 W = 32: 32 / 21).
// Measured, not derived: gather-bound rows of ~16 want more lanes per row than streaming ones.
//  Scattered columns (not local, below) past L = 14: W = pow2 >= L / kGatherLengthPerLane, 3 gathers a
//  lane. Fitted on the even members of bench/auto_families.py's rowlen family (H200, 2026-11-29, speed-up
//  over the best cuSPARSE f32 / f64 at W = 4 / 8 / 16 / 32): L = 24 0.97 / 0.90, 1.02 / 1.05, 0.99 / 0.94,
//  0.80 / 0.87; L = 48 -, 0.95 / 0.97, 1.05 / 1.05, 1.07 / 1.05; L = 128 W = 16 and 32 within 1%: any
//  divisor in [3, 6) is within 1% of each best; 3 takes the wider width of the ties. On the odd members
//  it picks the best width each time: L = 16 W = 8 (1.06 / 1.07), L = 32 W = 16 (1.01 / 1.03; the L / 8
//  rule's W = 4 0.91 / 0.87), L = 64 W = 32 (1.16 / 1.07; L / 8: 0.98 / 0.98). docs/PERFORMANCE.md,
//  "Half-empty and scattered rows".
//  Local columns (RowStatistics::mean_span <= cols / kLocalSpanDivisor: meshes, bands, stencils in a
//  local numbering) keep L / 4 up to L = 16 (H200, 2026-11-26, ms f64 / f32 at W = 4 against W = 8:
//  fem3d:n=100 (L = 14.8) 0.0482 / 0.0389 against 0.0653 / 0.0538; fem3d:n=120 0.0946 / 0.0649 against
//  0.1350 / 0.0904; banded half_bandwidth=7 (L = 15) 0.1125 / 0.0749 against 0.1619 / 0.1054; at L = 17
//  and 19 the two split by precision, so W = 8 stays; random columns at L = 15: W = 8 0.1208 / 0.1143
//  against 0.1301 / 0.1154).
constexpr int kMinSubwarp = 2;
constexpr int kMaxSubwarp = 32;
constexpr double kLocalSpanDivisor = 8.0;
constexpr double kGatherLengthPerLane = 3.0;
inline int width_for(double length, bool local) {
  if (length <= 14.0 || (local && length <= 16.0)) return pow2_at_least(length / 4.0, kMinSubwarp, kMaxSubwarp);
  if (!local) return pow2_at_least(length / kGatherLengthPerLane, kMinSubwarp, kMaxSubwarp);
  if (length <= 20.0) return 8;
  return pow2_at_least(length / 8.0, kMinSubwarp, kMaxSubwarp);
}
// Columns are local when the non-empty rows' mean column span (RowStatistics::mean_span) is at most
// cols / kLocalSpanDivisor.
inline bool local_columns(double mean_span, double cols) { return mean_span * kLocalSpanDivisor <= cols; }

// Narrow sub-warps (W <= 8, scalar loads) walk rows with subwarp_row_dot_flat, kFlatUnroll
// predicated loads per lane per pass (H200: U = 4 beat U = 8 on every matrix of the benchmark, e.g.
// stencil27 f32 77.5% vs 69.6%: 42 instead of 54 registers, more warps per SM).
constexpr int kFlatUnroll = 4;
// Flat walks read col_idx and values with streaming (evict-first) loads for double only. H200,
// 2026-11-21, % of copy bandwidth streaming / not: stencil27 f64 87.0 / 83.2, f32 76.3 / 79.3;
// random_uniform f64 39.2 / 38.6, f32 27.6 / 27.2; long_rows f64 45.5 / 45.8; dense_rows f64
// 49.4 / 49.8 (f32 equal); float rows keep their L1 lines, which the stencil's x reuse hits.
template <class Value>
constexpr bool kStreamLoads = sizeof(Value) == 8;

}  // namespace spmv::cuda::csr_vector_policy
