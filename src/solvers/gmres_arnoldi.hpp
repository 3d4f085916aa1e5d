#pragma once
// Private: one Arnoldi step of the CPU GMRES (src/solvers/gmres.cpp), in a header so that tests can check
// the basis it builds (tests/cpu/gmres_arnoldi_test.cpp). The CUDA GMRES (src/cuda/solvers/gmres.cu)
// runs the same recurrence with every decision taken on the device:
//
//   1. one sweep over the rows: h = V_j^T w and w.w together (a multi-dot over v_0 .. v_j and w;
//      w is column j + 1 of the basis array, or a vector of its own when the basis is compressed);
//   2. Pythagoras: beta1 = sqrt(w.w - h.h) (V_j orthonormal); when w.w - h.h is not above
//      pythagoras_min_share w.w (w numerically in span(V_j)) beta1 = ||w|| (1 for w = 0) and step 4
//      always runs;
//   3. one fused sweep: v = (w - V_j h) / beta1 (in place, or rounded into a compressed basis), and,
//      from the same loads, s = V_j^T v and v.v;
//   4. the measured loss of the new column, max(|s_c|, |v.v - 1|): at most tau = sqrt(eps) of the
//      basis's type (semi-orthogonality) and v is v_{j+1}, the Hessenberg column is h and h_{j+1,j} is
//      beta1. Above it, a second classical Gram-Schmidt pass corrects v: v -= V_j s with ||v||^2 from
//      that sweep, v /= rho, the column becomes h + beta1 s and h_{j+1,j} = beta1 rho
//      (w = V_j h + beta1 v = V_j (h + beta1 s) + beta1 rho v_{j+1}).
//
// Why this test (issue 15): one classical pass leaves v orthogonal to V_j only to about
// eps ||w|| / ||w - V_j h|| plus the basis's own loss amplified by the same factor, so the loss compounds
// from step to step; a per-step threshold on ||w - V_j h|| / ||w|| (DGKS) cannot see the compounding and
// fires at ~97% of the steps on symmetric operators, where that ratio is 0.32-0.45. Step 3 measures the
// loss itself, at no extra read: it keeps |v_a . v_b - delta_ab| <= tau for the whole basis. tau =
// sqrt(eps) is semi-orthogonality (Simon, Math. Comp. 42, 1984; Parlett, The Symmetric Eigenvalue
// Problem, ch. 13): a basis orthogonal to sqrt(eps) spans the same Krylov space with full rank, and the
// Givens residual estimate |g_{j+1}| = ||V_{j+1}(beta e1 - H y)|| / ||...|| is off by at most a factor
// 1 + tau sqrt(m). The corrected step is CGS2, orthogonal to working precision (Kahan's "twice is
// enough", Parlett §6-9).
//
// Vector sweeps per step (solver_setup.hpp's vector_words_per_iteration counts them): the multi-dot
// reads V_j and w (j + 2), the fused sweep reads V_j and w and writes v_{j+1} (j + 3). A corrected step
// adds j + 3 (the subtraction) and 2 (the scaling).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <omp.h>

#include "solvers/gmres_sweeps.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

// What one Arnoldi step decided.
struct ArnoldiStep {
  double beta = 0;         // h_{j+1,j}; not finite when w.w was not (the Givens rotation reports it)
  double loss = 0;         // the measured loss of the single pass, max(|s_c|, |v.v - 1|)
  bool corrected = false;  // the second pass ran
};

namespace arnoldi {

// The `count` sums of every thread's block partials, added in thread order (deterministic for a given
// thread count): body(i0, i1, local) adds a block's contributions to local[0..count).
template <class Body>
void sum_over_blocks(std::int64_t n, int count, double* out, Body&& body) {
  const std::int64_t blocks = (n + kRowBlock - 1) / kRowBlock;
  std::vector<std::vector<double>> partial;
#pragma omp parallel
  {
#pragma omp single
    partial.assign(static_cast<std::size_t>(omp_get_num_threads()), std::vector<double>(count, 0.0));
    std::vector<double>& local = partial[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) body(b * kRowBlock, std::min(n, (b + 1) * kRowBlock), local.data());
  }
  for (int c = 0; c < count; ++c) out[c] = 0;
  for (const auto& local : partial)
    for (int c = 0; c < count; ++c) out[c] += local[c];
}

// h[c] = V_c . w for the first `columns` columns of V (column c at V + c*n) and h[columns] = w.w, in one
// sweep over the rows (this process's parts; gmres_sweeps.hpp has the per-block arithmetic).
template <class Basis, class W>
void multi_dot(const Basis* v, std::int64_t n, int columns, const W* w, double* h) {
  sum_over_blocks(n, columns + 1, h, [&](std::int64_t i0, std::int64_t i1, double* local) {
    multi_dot_block(v, n, columns, w, i0, i1 - i0, local);
  });
}

// out = (w - V h) * scale over the first `columns` columns (rounded once to the basis's type), and
// s[c] = V_c . out, s[columns] = out.out, in one sweep (this process's parts): per block, the
// projection column by column into a buffer, the update, then the dots against the block's columns
// (read again from cache). `out` may be `w` itself (a basis in the value type: w is its column j + 1).
template <class Basis, class W>
void subtract_scale_and_dot(const Basis* v, std::int64_t n, int columns, const double* h, double scale, const W* w,
                            Basis* out, double* s) {
  sum_over_blocks(n, columns + 1, s, [&](std::int64_t i0, std::int64_t i1, double* local) {
    update_block(v, n, columns, h, scale, w, out, i0, i1 - i0, local);
  });
}

// w = (w - V h) over the first `columns` columns; returns this process's part of ||w||^2 after it (the
// correction, taken at few steps: plain loops).
template <class Value>
double subtract(const Value* v, std::int64_t n, int columns, const double* h, Value* w) {
  using Arithmetic = basis_arithmetic_t<Value>;
  double norm2 = 0;
  sum_over_blocks(n, 1, &norm2, [&](std::int64_t i0, std::int64_t i1, double* local) {
    const std::int64_t len = i1 - i0;
    double projection[kRowBlock];
    project_block(v, n, columns, h, i0, len, projection);
    Value* out = w + i0;
    for (std::int64_t i = 0; i < len; ++i)
      out[i] = static_cast<Value>(static_cast<Arithmetic>(out[i]) - static_cast<Arithmetic>(projection[i]));
    local[0] += block_dot(out, out, len);
  });
  return norm2;
}

}  // namespace arnoldi

// Orthogonalises w against columns 0..j of `basis` (n rows per column) and stores the normalised
// result, v_{j+1}, as column j + 1. With a basis in the value type w is that column itself (in place);
// with a compressed one (GmresBasis::Float32, Float16) w is the product A z and v_{j+1} is rounded once
// to the basis's type, whose loss of orthogonality the fused sweep then measures. Fills
// hess_column[0..j] and returns h_{j+1,j} (step.beta); h and s are scratch of j + 2 entries.
// `global_sum(span)` sums partial reductions across processes in place (a no-op for one process): two
// calls per step, three when corrected, so every process takes the same branch.
template <class Basis, class W, class GlobalSum>
ArnoldiStep arnoldi_step(Basis* basis, std::int64_t n, int j, const W* w, double* h, double* s, double* hess_column,
                         GlobalSum&& global_sum) {
  Basis* v = basis + static_cast<std::size_t>(j + 1) * n;
  const int columns = j + 1;
  arnoldi::multi_dot(basis, n, columns, w, h);  // h[j + 1] = w.w
  global_sum(std::span<double>(h, columns + 1));
  double hh = 0;
  for (int c = 0; c < columns; ++c) hh += h[c] * h[c];
  const double ww = h[columns];
  ArnoldiStep step;
  if (!std::isfinite(ww)) {  // no sweep can repair it: the rotation reports the non-finite value
    step.beta = ww;
    return step;
  }
  const bool pythagoras = ww - hh > pythagoras_min_share<Basis>() * ww;
  const double beta1 = pythagoras ? std::sqrt(ww - hh) : ww > 0 ? std::sqrt(ww) : 1.0;
  arnoldi::subtract_scale_and_dot(basis, n, columns, h, 1.0 / beta1, w, v, s);
  global_sum(std::span<double>(s, columns + 1));
  step.loss = std::abs(s[columns] - 1.0);
  for (int c = 0; c < columns; ++c) step.loss = std::max(step.loss, std::abs(s[c]));
  std::copy(h, h + columns, hess_column);
  if (pythagoras && step.loss <= orthogonality_tolerance<Basis>()) {
    step.beta = beta1;
    return step;
  }
  double norm2 = arnoldi::subtract(basis, n, columns, s, v);
  global_sum(std::span<double>(&norm2, 1));
  const double rho = std::sqrt(norm2);
  if (rho > 0 && std::isfinite(rho)) {
    using Arithmetic = basis_arithmetic_t<Basis>;
    const auto inv = static_cast<Arithmetic>(1.0 / rho);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<Basis>(static_cast<Arithmetic>(v[i]) * inv);
  }
  for (int c = 0; c < columns; ++c) hess_column[c] += beta1 * s[c];
  step.beta = beta1 * rho;
  step.corrected = true;
  return step;
}

}  // namespace spmv::solvers
