// BiCGStab (van der Vorst 1992; Saad, 2nd ed., Alg. 7.7) with right Jacobi preconditioning, so that
// the residual the stopping rule reads is the true one of A x = b (not of M^-1 A). The shadow residual
// r0^ = r0. Two applies per iteration; the early exit on the half-step residual s follows the
// "Templates" book (Barrett et al. 1994, Fig. 2.10): when ||s|| already meets the tolerance, x +=
// alpha p^ and the second apply is skipped.
#include <tuple>
#include <vector>

#include "solvers/cpu_vector_ops.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

template <class Value>
void bicgstab_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                  std::span<const Value> inverse_diagonal) {
  const auto n = static_cast<std::int64_t>(b.size());
  std::vector<Value> r(b.begin(), b.end()), shadow(n), p(n, Value(0)), v(n, Value(0)), p_hat(n), s(n), s_hat(n),
      t(n);

  run.apply(Value(-1), x, Value(1), r);  // r = b - A x0
  cpu::copy<Value>(r, shadow);
  double rr = run.sum(cpu::dot<Value>(r, r));
  if (run.start(std::sqrt(rr))) return;
  double rho = rr;  // shadow . r with shadow = r
  double alpha = 1, omega = 1, rho_old = 1;
  const Value* dinv = inverse_diagonal.data();
  const bool jacobi = !inverse_diagonal.empty();

  for (int k = 1;; ++k) {
    if (rho == 0) {
      run.stopped_on_breakdown(kBreakdownRho);
      return;
    }
    // p = r + beta (p - omega v); p^ = M^-1 p (one sweep)
    const auto beta = static_cast<Value>((rho / rho_old) * (alpha / omega));
    const auto om = static_cast<Value>(omega);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const Value pi = r[i] + beta * (p[i] - om * v[i]);
      p[i] = pi;
      p_hat[i] = jacobi ? dinv[i] * pi : pi;
    }
    run.apply(Value(1), p_hat, Value(0), v);
    const double shadow_v = run.sum(cpu::dot<Value>(shadow, v));
    if (shadow_v == 0 || !std::isfinite(shadow_v)) {
      run.stopped_on_breakdown(shadow_v == 0 ? kBreakdownBicgAlpha : kBreakdownNonFinite);
      return;
    }
    alpha = rho / shadow_v;
    const auto al = static_cast<Value>(alpha);
    // s = r - alpha v; s^ = M^-1 s; s.s (one sweep)
    double ss = 0;
#pragma omp parallel for schedule(static) reduction(+ : ss)
    for (std::int64_t i = 0; i < n; ++i) {
      const Value si = r[i] - al * v[i];
      s[i] = si;
      s_hat[i] = jacobi ? dinv[i] * si : si;
      ss += static_cast<double>(si) * si;
    }
    ss = run.sum(ss);
    if (std::sqrt(ss) <= run.stop_norm()) {  // half-step convergence: x += alpha p^, r = s
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) x[i] += al * p_hat[i];
      run.step(k, std::sqrt(ss));
      return;
    }
    run.apply(Value(1), s_hat, Value(0), t);
    double ts = 0, tt = 0;
#pragma omp parallel for schedule(static) reduction(+ : ts, tt)
    for (std::int64_t i = 0; i < n; ++i) {
      ts += static_cast<double>(t[i]) * s[i];
      tt += static_cast<double>(t[i]) * t[i];
    }
    std::tie(ts, tt) = run.sum(ts, tt);
    omega = tt > 0 ? ts / tt : 0;
    if (omega == 0 || !std::isfinite(omega)) {
      run.stopped_on_breakdown(std::isfinite(omega) ? kBreakdownOmega : kBreakdownNonFinite);
      return;
    }
    // x += alpha p^ + omega s^; r = s - omega t; shadow.r and r.r (one sweep)
    const auto om_new = static_cast<Value>(omega);
    double rho_new = 0;
    rr = 0;
#pragma omp parallel for schedule(static) reduction(+ : rho_new, rr)
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] += al * p_hat[i] + om_new * s_hat[i];
      const Value ri = s[i] - om_new * t[i];
      r[i] = ri;
      rho_new += static_cast<double>(shadow[i]) * ri;
      rr += static_cast<double>(ri) * ri;
    }
    std::tie(rho_new, rr) = run.sum(rho_new, rr);
    if (run.step(k, std::sqrt(rr))) return;
    rho_old = rho;
    rho = rho_new;
  }
}

template void bicgstab_cpu(CpuRun<float>&, std::span<const float>, std::span<float>, std::span<const float>);
template void bicgstab_cpu(CpuRun<double>&, std::span<const double>, std::span<double>, std::span<const double>);

}  // namespace spmv::solvers
