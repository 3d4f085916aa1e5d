// Pipelined CG on the device: the recurrence of src/solvers/cg.cpp's cg_cpu_pipelined (Ghysels &
// Vanroose 2014, Alg. 3 with M = diag), built for distributed solves, where its one reduction per
// iteration is an ncclAllReduce that runs while the next product n = A m does (DeviceRun::
// start_global_rows on a second stream). Every iteration enqueues the same three steps:
//   pcg_sweep_kernel (the updates and the partials of gamma = r.u, delta = w.u, r.r: one sweep)
//   | [all-reduce of the partials, distributed only] || apply n = A m | pcg_scalars_kernel (1 block:
//   the stopping rule, then alpha and beta of the next iteration).
// The scalars never leave the device. A restart from x (when the drifted recurrences imply a
// non-positive curvature, when the residual fell by sqrt(eps) since the last restart, and to confirm a
// convergence by the true residual; the rules of the CPU's) needs three products, r = b - A x, w = A u
// and n = A m, which the host cannot see coming: the device runs it in three iterations' slots instead,
// the same enqueued work with the sweep doing each phase's part (PcgPhase) and the one product of the
// slot applying A to whatever the sweep left in m. So the host never waits, and an iteration can be
// captured in a CUDA graph; slots of a restart do not count as iterations, which is why the host may
// enqueue up to four slots per iteration (set_enqueue_limit). The start is the same three slots before
// the loop.
// Without a preconditioner u = r, m = w and q = s (bitwise, as on the CPU) and are not stored:
// 13 vector words per row instead of 20 (solver_setup.hpp).
#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

// What the next slot's sweep does. kIterate: one CG iteration. A (re)start runs kLoadX (m = x, so that
// the slot's product gives A x), kResidual (r = b - A x, u = M^-1 r, m = u: the product gives w = A u),
// kFresh (w, m = M^-1 w, directions zeroed, the three partials: the product gives n = A m).
enum PcgPhase : int { kIterate = 0, kLoadX, kResidual, kFresh };

struct PcgScalars {
  double alpha = 0, beta = 0;
  double gamma_old = 0, alpha_old = 0;
  double fresh_norm = 0;  // ||r|| at the last (re)start
  double refused = 0;     // the true ||r|| of the last convergence claim it did not confirm
  int phase = kLoadX;
  int started = 0;     // the residual of iteration 0 has been recorded
  int confirming = 0;  // this restart checks the recurrence's convergence with the true residual
};

template <class Value>
struct PcgVectors {
  Value *x, *r, *u, *w, *m, *n, *p, *s, *q, *z;  // without M: u == r, m == w, q == s
  const Value* b;
};

template <class Value, bool kJacobi>
__global__ void __launch_bounds__(kSolverThreads)
    pcg_sweep_kernel(const SolverState* state, const PcgScalars* c, PcgVectors<Value> v, const Value* dinv,
                     std::int64_t n, double* partials) {
  if (!running(state)) return;
  const int phase = c->phase;
  if (phase == kLoadX) {
    SPMV_SOLVER_LOOP(i, n) v.m[i] = v.x[i];
    return;
  }
  if (phase == kResidual) {  // n holds A x
    SPMV_SOLVER_LOOP(i, n) {
      const Value ri = v.b[i] - v.n[i];
      v.r[i] = ri;
      if constexpr (kJacobi) {
        const Value ui = dinv[i] * ri;
        v.u[i] = ui;
        v.m[i] = ui;
      } else {
        v.m[i] = ri;  // m is w: the slot's product reads it
      }
    }
    return;
  }
  double sums[3] = {0, 0, 0};  // gamma = r.u, delta = w.u, r.r
  if (phase == kFresh) {       // n holds A u = w
    SPMV_SOLVER_LOOP(i, n) {
      const Value wi = v.n[i], ri = v.r[i];
      const Value ui = kJacobi ? v.u[i] : ri;
      v.w[i] = wi;
      if constexpr (kJacobi) v.m[i] = dinv[i] * wi, v.q[i] = Value(0);
      v.p[i] = v.s[i] = v.z[i] = Value(0);
      sums[0] += static_cast<double>(ri) * ui;
      sums[1] += static_cast<double>(wi) * ui;
      sums[2] += static_cast<double>(ri) * ri;
    }
    store_block_sums<3>(sums, partials);
    return;
  }
  const auto alpha = static_cast<Value>(c->alpha), beta = static_cast<Value>(c->beta);
  struct Inputs {
    Value n, z, m, q, w, s, u, p, x, r, d;
  };
  unrolled_sweep(
      n,
      [&](std::int64_t i) {
        Inputs in;
        in.n = v.n[i], in.z = v.z[i], in.w = v.w[i], in.s = v.s[i], in.p = v.p[i], in.x = v.x[i], in.r = v.r[i];
        if constexpr (kJacobi) in.m = v.m[i], in.q = v.q[i], in.u = v.u[i], in.d = dinv[i];
        else in.m = in.w, in.q = in.s, in.u = in.r, in.d = Value(1);
        return in;
      },
      [&](std::int64_t i, const Inputs& in) {
        const Value zi = in.n + beta * in.z, qi = in.m + beta * in.q, si = in.w + beta * in.s,
                    pi = in.u + beta * in.p;
        v.z[i] = zi, v.s[i] = si, v.p[i] = pi;
        v.x[i] = in.x + alpha * pi;
        const Value ri = in.r - alpha * si, ui = in.u - alpha * qi, wi = in.w - alpha * zi;
        v.r[i] = ri, v.w[i] = wi;
        if constexpr (kJacobi) v.q[i] = qi, v.u[i] = ui, v.m[i] = in.d * wi;
        sums[0] += static_cast<double>(ri) * ui;
        sums[1] += static_cast<double>(wi) * ui;
        sums[2] += static_cast<double>(ri) * ri;
      });
  store_block_sums<3>(sums, partials);
}

// After the slot's product: advances a restart's phases; after kFresh and kIterate reads the three sums
// (`count` partials each, or their global totals), records the iteration (or, at the start, iteration
// 0; or, after a convergence claim, the true residual that decides it), and computes the next alpha
// and beta, or asks for a restart, or stops. The rules of src/solvers/cg.cpp's cg_cpu_pipelined:
// restart on a drifted curvature, on a residual below `replace_below` (sqrt(eps)) of the last fresh
// one, and to confirm a convergence; stop on a refused claim no better than the previous refusal.
__global__ void pcg_scalars_kernel(SolverState* s, PcgScalars* c, const double* partials, int count,
                                   double* history, double replace_below) {
  if (!running(s)) return;
  const int phase = c->phase;
  if (phase == kLoadX || phase == kResidual) {
    if (threadIdx.x == 0) c->phase = phase + 1;
    return;
  }
  const double gamma = finish_sum(partials, 0, count);
  const double delta = finish_sum(partials, 1, count);
  const double rr = finish_sum(partials, 2, count);
  if (threadIdx.x != 0) return;
  const bool fresh = phase == kFresh;
  const double norm = sqrt(rr);
  if (!fresh) {
    record_iteration(s, norm, history);
    if (s->status == kConverged) {  // the recurrence's claim: a restart's true residual decides
      s->status = kRunning;
      c->confirming = 1;
      c->phase = kLoadX;
      return;
    }
    if (s->status != kRunning) return;
    if (gamma == 0) return stop_on_breakdown(s, kCgRho);  // r != 0 but r.M^-1 r = 0: M not positive definite
    if (norm <= replace_below * c->fresh_norm) {  // residual replacement: fresh recurrences from x
      c->phase = kLoadX;
      return;
    }
  } else {
    if (!c->started) {
      c->started = 1;
      record_residual(s, norm, history);  // iteration 0
      if (s->status != kRunning) return;
    } else if (c->confirming) {  // norm is the true residual of x
      c->confirming = 0;
      s->residual = norm;
      if (history) history[s->iterations] = norm / s->b_norm;
      if (!isfinite(norm)) return stop_on_breakdown(s, kNonFinite);
      if (norm <= s->stop_norm) {
        s->status = kConverged;
        return;
      }
      if (s->iterations >= s->max_iterations) {
        s->status = kMaxIterations;
        return;
      }
      if (c->refused > 0 && norm >= c->refused) return stop_on_breakdown(s, kCgStagnated);
      c->refused = norm;
    }
    c->fresh_norm = norm;
  }
  double beta = 0, denominator = delta;
  if (!fresh) {
    beta = gamma / c->gamma_old;
    denominator = delta - beta * gamma / c->alpha_old;
  }
  if (!(denominator > 0)) {
    if (!fresh && isfinite(denominator)) {  // drifted: restart from x in the next three slots
      c->phase = kLoadX;
      return;
    }
    return stop_on_breakdown(s, isfinite(denominator) ? kCgCurvature : kNonFinite);  // A or M not SPD, or NaN
  }
  c->phase = kIterate;
  c->alpha = gamma / denominator;
  c->beta = beta;
  c->gamma_old = gamma;
  c->alpha_old = c->alpha;
}

}  // namespace

template <class Value>
void cg_pipelined_device(DeviceRun<Value>& run, const Value* b, Value* x) {
  const std::int64_t n = run.n();
  const Value* dinv = run.inverse_diagonal();
  const bool jacobi = dinv != nullptr;
  const std::size_t extra = jacobi ? static_cast<std::size_t>(n) : 0;
  DeviceBuffer<Value> r(n), w(n), nv(n), p(n), s(n), z(n), u(extra), m(extra), q(extra);
  PcgVectors<Value> v{x,         r.data(),  jacobi ? u.data() : r.data(), w.data(), jacobi ? m.data() : w.data(),
                      nv.data(), p.data(),  s.data(), jacobi ? q.data() : s.data(), z.data(), b};
  DeviceBuffer<PcgScalars> scalars(1);
  const PcgScalars start{};
  SPMV_CUDA_CHECK(cudaMemcpyAsync(scalars.data(), &start, sizeof start, cudaMemcpyHostToDevice, run.stream()));
  const int blocks = run.blocks();
  const double replace_below = std::sqrt(static_cast<double>(std::numeric_limits<Value>::epsilon()));
  const auto slot = [&](cudaStream_t st) {
    if (jacobi)
      pcg_sweep_kernel<Value, true><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), v, dinv, n,
                                                                       run.partials());
    else
      pcg_sweep_kernel<Value, false><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), v, dinv, n,
                                                                        run.partials());
    SPMV_CHECK_LAUNCH(pcg_sweep_kernel);
    const int count = run.start_global_rows(run.partials(), 3);  // distributed: overlaps the product
    run.apply(Value(1), v.m, Value(0), nv.data());
    run.join_global_rows();
    pcg_scalars_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), count,
                                                     run.history(), replace_below);
    SPMV_CHECK_LAUNCH(pcg_scalars_kernel);
  };
  for (int i = kLoadX; i <= kFresh; ++i) slot(run.stream());  // the start's three phases: iteration 0's residual
  run.start_loop();
  // Slots of restarts are enqueued like iterations but do not count as such: at most three per iteration.
  run.set_enqueue_limit(4 * static_cast<std::int64_t>(run.max_iterations()));
  if (run.after_iteration(0)) return;
  for (int k = 1;; ++k) {
    run.iterate(slot);
    if (run.after_iteration(k)) return;
  }
}

template void cg_pipelined_device(DeviceRun<float>&, const float*, float*);
template void cg_pipelined_device(DeviceRun<double>&, const double*, double*);

}  // namespace spmv::cuda::solvers
