#pragma once
// Private: the per-block work of the CPU GMRES's two Arnoldi sweeps (src/solvers/gmres_arnoldi.hpp, steps
// 1 and 3), compiled by Google Highway for every target it knows and chosen at run time
// (src/solvers/gmres_sweeps_simd.cpp, as src/cpu/csr_simd.cpp), so that one binary runs them with AVX-512,
// AVX2, SSE4, NEON or SVE where the CPU has them (issue 15: the baseline build gave them two doubles a
// vector, and left the f32 GMRES at 0.80-0.94x scipy's sgemv).
//
// Arithmetic: every sum and product in double (float entries widened exactly); each dot over a block
// keeps four vectors of partial sums (8 on SSE4 / NEON, 16 on AVX2, 32 on AVX-512), adds them, then the
// vector's lanes, then the block's last len % Lanes rows one by one. The summation order thus depends on
// the dispatched target, not on the data or the run: a solve is reproducible for a given machine and
// thread count (gmres_arnoldi.hpp's sum_over_blocks adds the threads' partial sums in thread order).
// The ScaledHalf basis (GmresBasis::Float16) runs the same blocks with plain loops. There is no plain path for
// the f32 and f64 bases (Highway always compiles a baseline target), so SPMV_CPU_SIMD / Options::cpu_simd,
// which choose the SpMV kernels, do not change the sweeps; tests/cpu/gmres_sweeps_test.cpp forces each target.
#include <cstdint>

namespace spmv::solvers::arnoldi {

// The sweeps work on blocks of kRowBlock rows: each column's slice of a block is contiguous, so a block
// reads V column by column (one stream at a time, vectorisable, prefetched) instead of a row at a time
// across j + 1 columns (as many streams, each a scalar load). A block of 32 columns (64 KB in f64) stays
// in L2 between the fused sweep's two passes over it. Measured against the row-at-a-time loops (2-core
// Zen 4, docs/PERFORMANCE.md "Solvers on the CPU against scipy": 1.2-2.9x faster per GMRES step). A
// multiple of every target's lane count (the block buffers are whole vectors).
inline constexpr std::int64_t kRowBlock = 256;

// The plain loops (the correction of gmres_arnoldi.hpp, the ScaledHalf basis):

// sum_i a[i] * b[i] over [0, len) with eight partial sums, so that the additions do not wait on each
// other (one chain is bound by the add latency).
template <class A, class B>
double block_dot(const A* a, const B* b, std::int64_t len) {
  double part[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= len; i += 8)
    for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(a[i + k]) * static_cast<double>(b[i + k]);
  for (; i < len; ++i) part[0] += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// projection[i] = sum_c h[c] V_c[i0 + i] for i < len (<= kRowBlock), column by column, in column order
// for each row.
template <class Value>
void project_block(const Value* v, std::int64_t n, int columns, const double* h, std::int64_t i0, std::int64_t len,
                   double* projection) {
  for (std::int64_t i = 0; i < len; ++i) projection[i] = 0;
  for (int c = 0; c < columns; ++c) {
    const double hc = h[c];
    const Value* col = v + c * n + i0;
    for (std::int64_t i = 0; i < len; ++i) projection[i] += hc * static_cast<double>(col[i]);
  }
}

// Rows [i0, i0 + len) (len <= kRowBlock) of the multi-dot: local[c] += V_c . w for c < columns (column c
// at v + c * n) and local[columns] += w . w.
template <class Basis, class W>
void multi_dot_block(const Basis* v, std::int64_t n, int columns, const W* w, std::int64_t i0, std::int64_t len,
                     double* local);

// Rows [i0, i0 + len) of the fused update: out = (w - sum_c h[c] V_c) * scale, the projection summed in
// column order for each row and the result rounded once to Basis (the ScaledHalf basis keeps its float
// subtraction); then local[c] += V_c . out and local[columns] += out . out, of the rounded entries.
// `out` may be `w` itself.
template <class Basis, class W>
void update_block(const Basis* v, std::int64_t n, int columns, const double* h, double scale, const W* w, Basis* out,
                  std::int64_t i0, std::int64_t len, double* local);

}  // namespace spmv::solvers::arnoldi
