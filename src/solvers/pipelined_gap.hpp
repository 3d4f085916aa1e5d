#pragma once
// Private: when pipelined CG (src/solvers/cg.cpp, src/cuda/solvers/cg_pipelined.cu) checks its residual gap and when it
// replaces the residual. The recurrence residual r drifts from the true b - A x by rounding, faster than CG's (Cools et
// al., "Analyzing the effect of local rounding error propagation on the maximal attainable accuracy of the pipelined
// Conjugate Gradient method", SIAM J. Matrix Anal. Appl. 39, 2018). `interval` iterations after the last measuring
// sweep the solver computes t = b - A x (one product) and the next sweep adds ||t - r||^2 to its reduction; the gap
// past kGapTolerance of ||r|| asks for a replacement (the recurrences recomputed from x and the kept direction:
// p-CG-rr), unless it is within twice the gap first measured after the last replacement (mostly the rounding of b - A x
// in the working precision near the attainable accuracy, where replacing gains nothing; so the first measurement never
// replaces). The interval starts at kGapFirstInterval and doubles while the gap stays far below the bound (f64 solves
// check rarely), back to the first interval when it nears it. Measured on the CPU, f32 poisson3d (2026-11-28,
// docs/SOLVERS.md): with checks every 8 iterations a tolerance of 1e-2 and 3e-2 replaced too late (true residual 8.6e-5
// and 3.9e-3 after 300 iterations at n = 150, against CG's 1.1e-5), 1e-3 held CG's trajectory (7.4e-6 with this
// policy); the gap grew 5-13x between checks before a replacement.
#if defined(__CUDACC__)
#define SPMV_GAP_HD __host__ __device__
#else
#define SPMV_GAP_HD
#endif

namespace spmv::solvers {

inline constexpr double kGapTolerance = 1e-3;
inline constexpr int kGapFirstInterval = 8;
inline constexpr int kGapMaxInterval = 512;
inline constexpr double kGapRelaxBelow = kGapTolerance / 64;   // the interval doubles below this ratio
inline constexpr double kGapTightenAbove = kGapTolerance / 8;  // and restarts from the first above it

struct GapWatch {
  int interval = kGapFirstInterval;
  int until_check = kGapFirstInterval;  // iterations to the next t = b - A x
  int pending = 0;                      // t holds b - A x of the iterate the next sweep starts from
  int first = 1;                        // the next measured gap is the first since a replacement
  double floor = 0;                     // that first gap

  SPMV_GAP_HD bool measuring() const { return pending != 0; }
  // After an iteration with no measurement: is t = b - A x of this iterate due now?
  SPMV_GAP_HD bool check_due() { return --until_check <= 0; }
  SPMV_GAP_HD void checked() {
    pending = 1;
    until_check = interval;
  }
  // The sweep's ||t - r|| against the ||r|| it compared with: true when the residual is to be replaced.
  SPMV_GAP_HD bool measured(double gap, double residual) {
    pending = 0;
    if (first) floor = gap, first = 0;
    const double ratio = residual > 0 ? gap / residual : 0;
    if (ratio > kGapTightenAbove) interval = kGapFirstInterval;
    else if (ratio < kGapRelaxBelow && interval < kGapMaxInterval) interval *= 2;
    until_check = interval;
    return ratio > kGapTolerance && gap > 2 * floor;
  }
  // The recurrences were recomputed from x (start, restart, replacement): a pending t is stale.
  SPMV_GAP_HD void recomputed() {
    pending = 0;
    first = 1;
    interval = kGapFirstInterval;
    until_check = kGapFirstInterval;
  }
};

}  // namespace spmv::solvers
