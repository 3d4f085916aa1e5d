#pragma once
// Private: the parts of a GMRES(m) cycle on the CPU that do not depend on how its basis is built, shared
// by the Arnoldi solver (gmres.cpp) and the s-step one (gmres_sstep.cpp): the restart's decisions from the
// true residual, the Givens rotation that closes a Hessenberg column, and the cycle's update of x.
#include <cmath>
#include <cstdint>
#include <span>

#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

// The restart's decisions from beta = ||b - A x|| (at a restart its norm is the true residual, a better test
// than g's): true when the solve ends. `claimed`: the cycle before ended on an estimate that this residual
// must confirm; `refused` keeps the true residual of the last refused estimate.
template <class Value>
bool gmres_restart_ends(CpuRun<Value>& run, double beta, bool first, int k, bool claimed, double& refused) {
  if (first) return run.start(beta);
  if (!std::isfinite(beta)) {
    run.stopped_on_breakdown(kBreakdownNonFinite);
    return true;
  }
  if (run.replace_last_residual(beta)) return true;
  if (k >= run.options().max_iterations) return true;  // only after an estimate that was not confirmed
  if (claimed) {
    // Refused twice without progress: the rounding of b - A x in the working precision, not the basis,
    // bounds the residual, and more cycles would repeat the refusal (a step or two each). Refusals
    // one step apart that still reduce it are normal near the tolerance (poisson2d: 4% a step).
    if (refused > 0 && beta >= refused) {
      run.stopped_on_breakdown(kBreakdownGmresStagnated);
      return true;
    }
    refused = beta;
  }
  return false;
}

// Hessenberg column j (col[0..j]; its subdiagonal entry is h_next): the cycle's earlier rotations, then the
// rotation that zeroes h_next, applied in place, and g rotated with it. False, with the breakdown reported,
// when that rotation does not exist (a singular Hessenberg matrix, or a non-finite entry): the columns
// before j still improve x.
template <class Value>
bool gmres_rotate_column(CpuRun<Value>& run, double* col, int j, double h_next, double* cs, double* sn, double* g) {
  for (int i = 0; i < j; ++i) {
    const double t = cs[i] * col[i] + sn[i] * col[i + 1];
    col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
    col[i] = t;
  }
  const double denom = std::hypot(col[j], h_next);
  if (denom == 0 || !std::isfinite(denom)) {
    run.stopped_on_breakdown(denom == 0 ? kBreakdownGmresSingular : kBreakdownNonFinite);
    return false;
  }
  cs[j] = col[j] / denom;
  sn[j] = h_next / denom;
  col[j] = denom;
  g[j + 1] = -sn[j] * g[j];
  g[j] = cs[j] * g[j];
  return true;
}

// The cycle's update: y = R^-1 g by back substitution (R: the rotated Hessenberg matrix, column-major with
// leading dimension ldh, its first `columns` columns), then x += M^-1 V y (V: `columns` basis vectors of n
// entries in Basis, widened in double; dinv null without Jacobi).
template <class Value, class Basis>
void gmres_update_x(const double* rot, std::int64_t ldh, const double* g, double* y, int columns, const Basis* basis,
                    std::int64_t n, const Value* dinv, std::span<Value> x) {
  for (int i = columns - 1; i >= 0; --i) {
    double sum = g[i];
    for (int c = i + 1; c < columns; ++c) sum -= rot[c * ldh + i] * y[c];
    y[i] = sum / rot[i * ldh + i];
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int c = 0; c < columns; ++c) sum += y[c] * static_cast<double>(basis[c * n + i]);
    x[i] += dinv ? dinv[i] * static_cast<Value>(sum) : static_cast<Value>(sum);
  }
}

}  // namespace spmv::solvers
