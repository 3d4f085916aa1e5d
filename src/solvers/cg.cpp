// Preconditioned Conjugate Gradient (Hestenes & Stiefel 1952; Saad, "Iterative Methods for Sparse
// Linear Systems", 2nd ed., Alg. 9.1) on the CPU, in two variants of the same recurrence
// (SolverOptions::fused, docs/SOLVERS.md "Fusion"):
// - unfused (issue 9): apply q = A p, dot p.q, one sweep x += alpha p, r -= alpha q, z = M^-1 r with
//   r.z and r.r, then p = z + beta p; three OpenMP regions per iteration, z stored.
// - fused (issue 15): the same passes in one OpenMP region per iteration (the reductions are the
//   `omp for reduction` of the update loops), z never stored (recomputed as dinv * r where needed), and
//   x += alpha p moved into the direction sweep, which reads p anyway: 10 vector words per row instead
//   of 11 (12 instead of 13 with Jacobi). The x update of the last iteration is made there too, so x
//   is the same as the unfused variant's up to rounding.
#include <algorithm>
#include <exception>
#include <functional>
#include <limits>
#include <tuple>
#include <vector>

#include "solvers/cpu_vector_ops.hpp"
#include "solvers/pipelined_gap.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {
namespace {

template <class Value>
void cg_cpu_unfused(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                    std::span<const Value> inverse_diagonal) {
  const auto n = static_cast<std::int64_t>(b.size());
  const bool jacobi = !inverse_diagonal.empty();
  std::vector<Value> r(b.begin(), b.end()), p(n), q(n), z_storage(jacobi ? n : 0);
  std::span<Value> z = jacobi ? std::span<Value>(z_storage) : std::span<Value>(r);  // z = r without M

  run.apply(Value(-1), x, Value(1), r);  // r = b - A x0
  cpu::scale_by<Value>(inverse_diagonal, r, z);
  const auto [rr, rz] = run.sum(cpu::dot<Value>(r, r), jacobi ? cpu::dot<Value>(r, z) : 0.0);
  double rho = jacobi ? rz : rr;
  if (run.start(std::sqrt(rr))) return;
  cpu::copy<Value>(z, p);

  for (int k = 1;; ++k) {
    run.apply(Value(1), p, Value(0), q);
    const double pq = run.sum(cpu::dot<Value>(p, q));
    if (!(pq > 0)) {  // also catches NaN
      run.stopped_on_breakdown(std::isfinite(pq) ? kBreakdownCgCurvature : kBreakdownNonFinite);
      return;
    }
    const auto alpha = static_cast<Value>(rho / pq);
    double rz_new = 0, rr_new = 0;
    const Value* dinv = inverse_diagonal.data();
#pragma omp parallel for schedule(static) reduction(+ : rz_new, rr_new)
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      const Value ri = r[i] - alpha * q[i];
      r[i] = ri;
      const Value zi = jacobi ? dinv[i] * ri : ri;
      if (jacobi) z[i] = zi;
      rr_new += static_cast<double>(ri) * ri;
      rz_new += static_cast<double>(ri) * zi;
    }
    std::tie(rr_new, rz_new) = run.sum(rr_new, rz_new);
    if (!jacobi) rz_new = rr_new;
    if (run.step(k, std::sqrt(rr_new))) return;
    if (rz_new == 0) {  // r != 0 here (not converged), so M is not positive definite
      run.stopped_on_breakdown(kBreakdownCgRho);
      return;
    }
    const auto beta = static_cast<Value>(rz_new / rho);
    rho = rz_new;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
}

template <class Value>
void cg_cpu_fused(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                  std::span<const Value> inverse_diagonal) {
  const auto n = static_cast<std::int64_t>(b.size());
  const bool jacobi = !inverse_diagonal.empty();
  const Value* dinv = inverse_diagonal.data();
  std::vector<Value> r(b.begin(), b.end()), p(n), q(n);
  const auto z_at = [&](std::int64_t i) { return jacobi ? dinv[i] * r[i] : r[i]; };

  run.apply(Value(-1), x, Value(1), r);  // r = b - A x0
  double rr = 0, rho = 0;
#pragma omp parallel for schedule(static) reduction(+ : rr, rho)
  for (std::int64_t i = 0; i < n; ++i) {
    const Value zi = z_at(i);
    p[i] = zi;
    rr += static_cast<double>(r[i]) * r[i];
    rho += static_cast<double>(r[i]) * zi;
  }
  std::tie(rr, rho) = run.sum(rr, rho);
  if (run.start(std::sqrt(rr))) return;

  for (int k = 1;; ++k) {
    run.apply(Value(1), p, Value(0), q);  // itself parallel: outside the iteration's region
    double pq = 0, rr_new = 0, rz_new = 0;
    bool stop = false;
    std::exception_ptr error;  // a progress callback that throws must not leave the region
    const bool distributed = run.distributed();
#pragma omp parallel
    {
#pragma omp for schedule(static) reduction(+ : pq)
      for (std::int64_t i = 0; i < n; ++i) pq += static_cast<double>(p[i]) * q[i];
      if (distributed) {  // uniform: every thread takes it or none
#pragma omp master
        {
          try {
            pq = run.sum(pq);
          } catch (...) {
            error = std::current_exception();
            pq = 0;  // leaves the iteration; the error is rethrown after the region
          }
        }
#pragma omp barrier
      }
      // The loop's barrier (and the sum's) completed pq for every thread: the branch is uniform.
      if (pq > 0) {
        const auto alpha = static_cast<Value>(rho / pq);
#pragma omp for schedule(static) reduction(+ : rr_new, rz_new)
        for (std::int64_t i = 0; i < n; ++i) {
          const Value ri = r[i] - alpha * q[i];
          r[i] = ri;
          rr_new += static_cast<double>(ri) * ri;
          rz_new += static_cast<double>(ri) * (jacobi ? dinv[i] * ri : ri);
        }
#pragma omp master
        {
          try {
            std::tie(rr_new, rz_new) = run.sum(rr_new, rz_new);
            stop = run.step(k, std::sqrt(rr_new));
            if (!stop && rz_new == 0) stop = run.stopped_on_breakdown(kBreakdownCgRho);  // M not SPD
          } catch (...) {
            error = std::current_exception();
            stop = true;
          }
        }
#pragma omp barrier
        const auto beta = static_cast<Value>(rz_new / rho);
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
          x[i] += alpha * p[i];
          if (!stop) p[i] = z_at(i) + beta * p[i];
        }
      }
    }
    if (error) std::rethrow_exception(error);
    if (!(pq > 0)) {  // also catches NaN
      run.stopped_on_breakdown(std::isfinite(pq) ? kBreakdownCgCurvature : kBreakdownNonFinite);
      return;
    }
    if (stop) return;
    rho = rz_new;
  }
}

// Pipelined CG (Ghysels & Vanroose, "Hiding global synchronization latency in the preconditioned
// Conjugate Gradient algorithm", Parallel Computing 40, 2014, Alg. 3 with the preconditioner M = diag):
// the same Krylov iterates as CG in exact arithmetic, from recurrences for u = M^-1 r, w = A u, m = M^-1 w,
// and for the products of the directions (s = A p, q = M^-1 s, z = A q), so that the three reductions
// of an iteration (gamma = r.u, delta = w.u, r.r) are one message, computed in the same sweep as the
// updates: one global reduction per iteration instead of CG's two, which is what a distributed solve
// waits for. When the run can start a sum without waiting (SolverOptions::global_sum_start: MPI_Iallreduce
// in distributed solves), the next product n = A m runs while the reduction is in flight, as in the paper;
// the product of the last iteration is then one apply more than needed.
// Its recurrences drift from their definitions by rounding (the residual gap: in f32 the recurrence
// residual fell 1000x below the true one), so the iteration watches the gap and replaces the residual
// (pipelined_gap.hpp): every few iterations t = b - A x is computed and the next sweep measures
// ||t - r|| in its reduction (no extra message); past kGapTolerance of ||r|| the recurrences are
// recomputed from x and the kept direction p (Cools et al.'s p-CG-rr), which keeps CG's convergence
// where restarting (directions dropped) lost it. A convergence claim is confirmed the same way (the
// true residual decides), and drifted recurrences that imply a non-positive curvature restart from x.
// Sweep per iteration (one OpenMP loop): reads w, r, u, m, n, p, s, q, z, x and dinv (11) and writes
// p, s, q, z, x, r, u, w and m (9): 20 vector words, against CG's 10 (12 with Jacobi). Without a
// preconditioner u = r, m = w and q = s hold the same values bit for bit (the same operations on the
// same inputs), so they are not stored: 13 words (w, r, n, p, s, z, x read; p, s, z, x, r, w written);
// a sweep after a gap check also reads t.
template <class Value>
void cg_cpu_pipelined(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                      std::span<const Value> inverse_diagonal) {
  const auto n_rows = static_cast<std::int64_t>(b.size());
  const bool jacobi = !inverse_diagonal.empty();
  const Value* dinv = inverse_diagonal.data();
  std::vector<Value> r(n_rows), w(n_rows), nv(n_rows), p(n_rows), s(n_rows), z(n_rows), t(n_rows);
  std::vector<Value> u_storage(jacobi ? n_rows : 0), m_storage(jacobi ? n_rows : 0), q_storage(jacobi ? n_rows : 0);
  // Without M, u is r, m is w and q is s: the sweep's second store of a value to the same address and its
  // second load of it cost no memory traffic.
  const std::span<Value> u = jacobi ? std::span<Value>(u_storage) : std::span<Value>(r);
  const std::span<Value> m = jacobi ? std::span<Value>(m_storage) : std::span<Value>(w);
  const std::span<Value> q = jacobi ? std::span<Value>(q_storage) : std::span<Value>(s);
  const auto precondition = [&](std::int64_t i, Value v) { return jacobi ? dinv[i] * v : v; };
  double sums[4] = {0, 0, 0, 0};  // gamma = r.u, delta = w.u, r.r, and ||t - r||^2 after a gap check
  bool fresh = true;      // the directions are zero (start or restart): beta = 0
  double fresh_norm = 0;  // ||r|| when the recurrences were last recomputed from x
  bool need_n = true;     // n = A m is to be computed for the current m
  GapWatch watch;
  const auto b_minus_ax = [&](std::span<Value> out) {
    std::copy(b.begin(), b.end(), out.begin());
    run.apply(Value(-1), x, Value(1), out);
  };
  // r = b - A x, u = M^-1 r, w = A u.
  const auto residual_from_x = [&] {
    b_minus_ax(r);
    if (jacobi) {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n_rows; ++i) u[i] = dinv[i] * r[i];
    }
    run.apply(Value(1), u, Value(0), w);
  };
  // m = M^-1 w and the three scalars (one reduction); fresh_norm = ||r||; n and the gap watch start over.
  const auto reduce_scalars = [&] {
    double gamma = 0, delta = 0, rr = 0;
#pragma omp parallel for schedule(static) reduction(+ : gamma, delta, rr)
    for (std::int64_t i = 0; i < n_rows; ++i) {
      gamma += static_cast<double>(r[i]) * u[i];
      delta += static_cast<double>(w[i]) * u[i];
      rr += static_cast<double>(r[i]) * r[i];
      m[i] = precondition(i, w[i]);
    }
    sums[0] = gamma, sums[1] = delta, sums[2] = rr, sums[3] = 0;
    run.global_sum(sums);
    fresh_norm = std::sqrt(sums[2]);
    need_n = true;
    watch.recomputed();
  };
  // Restart from x, the directions dropped (the start, and a drifted curvature).
  const auto restart = [&] {
    residual_from_x();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_rows; ++i) p[i] = s[i] = q[i] = z[i] = Value(0);
    reduce_scalars();
    fresh = true;
  };
  // Residual replacement keeping the direction: also s = A p, q = M^-1 s, z = A q (four products).
  const auto replace = [&] {
    residual_from_x();
    run.apply(Value(1), p, Value(0), s);
    if (jacobi) {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n_rows; ++i) q[i] = dinv[i] * s[i];
    }
    run.apply(Value(1), q, Value(0), z);
    reduce_scalars();
  };
  restart();
  if (run.start(fresh_norm)) return;
  const bool overlap = static_cast<bool>(run.options().global_sum_start);
  double gamma_old = 0, alpha_old = 0;
  double refused = 0;  // the true ||r|| of the last convergence it did not confirm
  for (int k = 1;; ++k) {
    const double gamma = sums[0], delta = sums[1];
    if (need_n || !overlap) run.apply(Value(1), m, Value(0), nv);  // n = A m (else done during the sum)
    need_n = false;
    double beta = 0, denominator = delta;
    if (!fresh) {
      beta = gamma / gamma_old;
      denominator = delta - beta * gamma / alpha_old;
    }
    if (!(denominator > 0) && !fresh && std::isfinite(denominator)) {  // drifted: restart from x
      restart();
      --k;  // a restart is not an iteration
      continue;
    }
    fresh = false;
    if (!(denominator > 0)) {  // p.Ap <= 0 from fresh recurrences (or NaN): A or M not SPD
      run.stopped_on_breakdown(std::isfinite(denominator) ? kBreakdownCgCurvature : kBreakdownNonFinite);
      return;
    }
    const double alpha = gamma / denominator;
    const auto a = static_cast<Value>(alpha), bt = static_cast<Value>(beta);
    const bool measure = watch.measuring();
    const double rr_before = sums[2];
    double gamma_new = 0, delta_new = 0, rr_new = 0, gap = 0;
#pragma omp parallel for schedule(static) reduction(+ : gamma_new, delta_new, rr_new, gap)
    for (std::int64_t i = 0; i < n_rows; ++i) {
      if (measure) {  // uniform
        const double g = static_cast<double>(t[i]) - r[i];
        gap += g * g;
      }
      const Value zi = nv[i] + bt * z[i], qi = m[i] + bt * q[i], si = w[i] + bt * s[i], pi = u[i] + bt * p[i];
      z[i] = zi, q[i] = qi, s[i] = si, p[i] = pi;
      x[i] += a * pi;
      const Value ri = r[i] - a * si, ui = u[i] - a * qi, wi = w[i] - a * zi;
      r[i] = ri, u[i] = ui, w[i] = wi;
      m[i] = precondition(i, wi);
      gamma_new += static_cast<double>(ri) * ui;
      delta_new += static_cast<double>(wi) * ui;
      rr_new += static_cast<double>(ri) * ri;
    }
    sums[0] = gamma_new, sums[1] = delta_new, sums[2] = rr_new, sums[3] = gap;
    if (overlap) {  // the one reduction of the iteration, hidden behind the next product
      const std::function<void()> wait = run.options().global_sum_start(sums);
      run.apply(Value(1), m, Value(0), nv);
      wait();
    } else {
      run.global_sum(sums);  // the one reduction of the iteration
    }
    if (run.step(k, std::sqrt(sums[2]))) {
      if (!run.converged()) return;  // max_iterations, or a non-finite residual
      // The recurrence residual met the tolerance; the true one decides: replace the residual by
      // b - A x, keeping the direction, and go on from there if it falls short.
      gamma_old = gamma, alpha_old = alpha;
      replace();
      const double true_norm = fresh_norm;
      if (run.replace_last_residual(true_norm)) return;
      if (!std::isfinite(true_norm)) {
        run.stopped_on_breakdown(kBreakdownNonFinite);
        return;
      }
      if (k >= run.options().max_iterations) return;
      if (refused > 0 && true_norm >= refused) {  // refused again without progress: the attainable accuracy
        run.stopped_on_breakdown(kBreakdownCgStagnated);
        return;
      }
      refused = true_norm;
      continue;
    }
    if (sums[0] == 0) {  // r != 0 (not converged) but r.M^-1 r = 0: M is not positive definite
      run.stopped_on_breakdown(kBreakdownCgRho);
      return;
    }
    gamma_old = gamma, alpha_old = alpha;
    if (measure && watch.measured(std::sqrt(sums[3]), std::sqrt(rr_before))) {  // the gap grew past its bound
      replace();
    } else if (!measure && watch.check_due()) {  // t = b - A x of this iterate, for the next sweep
      b_minus_ax(t);
      watch.checked();
    }
  }
}

}  // namespace

template <class Value>
void cg_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
            std::span<const Value> inverse_diagonal) {
  if (run.options().pipelined) cg_cpu_pipelined(run, b, x, inverse_diagonal);
  else if (run.options().fused) cg_cpu_fused(run, b, x, inverse_diagonal);
  else cg_cpu_unfused(run, b, x, inverse_diagonal);
}

template void cg_cpu(CpuRun<float>&, std::span<const float>, std::span<float>, std::span<const float>);
template void cg_cpu(CpuRun<double>&, std::span<const double>, std::span<double>, std::span<const double>);

}  // namespace spmv::solvers
