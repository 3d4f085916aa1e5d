// Pipelined CG on the device: the recurrence of src/solvers/cg.cpp's cg_cpu_pipelined (Ghysels &
// Vanroose 2014, Alg. 3 with M = diag), built for distributed solves, where its one reduction per
// iteration is an ncclAllReduce that runs while the next product n = A m does (DeviceRun::
// start_global_rows on a second stream). Every iteration enqueues the same three steps:
//   pcg_sweep_kernel (the updates and the partials of gamma = r.u, delta = w.u, r.r: one sweep)
//   | [all-reduce of the partials, distributed only] || apply n = A m | pcg_scalars_kernel (1 block:
//   the stopping rule, then alpha and beta of the next iteration).
// The scalars never leave the device. The iteration watches its residual gap as the CPU's does
// (src/solvers/pipelined_gap.hpp): every few iterations a check measures ||b - A x - r||, and past the
// bound the recurrences are recomputed from x and the kept direction (p-CG-rr); a convergence claim is
// confirmed by the same replacement, and a drifted curvature restarts from x (directions dropped). These
// need products the host cannot see coming: the device runs them in iterations' slots instead, the
// same enqueued work with the sweep doing each phase's part (PcgPhase) and the one product of the slot
// applying A to whatever the sweep left in m: a check takes one slot (A x, the iteration's n = A m kept
// aside for the next sweep, which measures the gap in its reduction), a restart three, a replacement
// five. So the host never waits, and an iteration can be captured in a CUDA graph; slots that are not
// iterations do not count as such, which is why the host may enqueue up to ten slots per iteration
// (set_enqueue_limit; a refused convergence claim's replacement and a restart after it take nine). The
// start is a restart's three slots before the loop. Two vectors more than CG's
// recurrences need: t and t2 (a replacement's saved w, a check's saved m and A m).
// Without a preconditioner u = r, m = w and q = s (bitwise, as on the CPU) and are not stored:
// 13 vector words per row instead of 20 (solver_setup.hpp).
#include "cuda/solvers/solver_kernels.cuh"
#include "solvers/pipelined_gap.hpp"

namespace spmv::cuda::solvers {
namespace {

// What the next slot's sweep does. kIterate: one CG iteration. A restart or a replacement runs kLoadX
// (m = x, so that the slot's product gives A x), kResidual (r = b - A x, u = M^-1 r, m = u: the product
// gives w = A u), then a restart kFresh (w, m = M^-1 w, directions zeroed, the three partials: the
// product gives n = A m), a replacement kKeepS (w saved in t, m = p: the product gives s = A p), kKeepZ
// (s, q = M^-1 s, m = q: z = A q) and kKept (z, w back from t, m = M^-1 w, the three partials: n = A m).
// A gap check runs kCheckX (m saved in t, n = A m in t2, m = x: A x); the next slot's kChecked is the
// iteration's sweep reading m (or w) from t and A m from t2, which also sums ||b - A x - r||^2.
enum PcgPhase : int { kIterate = 0, kLoadX, kResidual, kFresh, kKeepS, kKeepZ, kKept, kCheckX, kChecked };

struct PcgScalars {
  double alpha = 0, beta = 0;
  double gamma_old = 0, alpha_old = 0;
  double norm = 0;        // ||r|| of the last iteration (the recurrence's)
  double refused = 0;     // the true ||r|| of the last convergence claim it did not confirm
  int phase = kLoadX;
  int keep = 0;        // the recomputation under way keeps the direction (replacement, not restart)
  int started = 0;     // the residual of iteration 0 has been recorded
  int confirming = 0;  // this replacement checks the recurrence's convergence with the true residual
  spmv::solvers::GapWatch watch;
};

template <class Value>
struct PcgVectors {
  Value *x, *r, *u, *w, *m, *n, *p, *s, *q, *z;  // without M: u == r, m == w, q == s
  Value *t, *t2;  // a replacement's saved w, a check's saved m (w without M) and A m
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
  if (phase == kKeepS) {  // n holds A u = w
    SPMV_SOLVER_LOOP(i, n) v.t[i] = v.n[i], v.m[i] = v.p[i];
    return;
  }
  if (phase == kKeepZ) {  // n holds A p = s
    SPMV_SOLVER_LOOP(i, n) {
      const Value si = v.n[i];
      v.s[i] = si;
      if constexpr (kJacobi) v.q[i] = dinv[i] * si, v.m[i] = dinv[i] * si;
      else v.m[i] = si;  // q is s
    }
    return;
  }
  if (phase == kCheckX) {  // n holds A m
    SPMV_SOLVER_LOOP(i, n) v.t[i] = v.m[i], v.t2[i] = v.n[i], v.m[i] = v.x[i];
    return;
  }
  double sums[4] = {0, 0, 0, 0};  // gamma = r.u, delta = w.u, r.r; kChecked: ||b - A x - r||^2
  if (phase == kFresh || phase == kKept) {  // kFresh: n holds A u = w; kKept: n holds A q = z, w is in t
    const bool kept = phase == kKept;
    SPMV_SOLVER_LOOP(i, n) {
      const Value wi = kept ? v.t[i] : v.n[i], ri = v.r[i];
      const Value ui = kJacobi ? v.u[i] : ri;
      if (kept) {
        v.z[i] = v.n[i];
      } else {  // the directions dropped
        v.p[i] = v.s[i] = v.z[i] = Value(0);
        if constexpr (kJacobi) v.q[i] = Value(0);
      }
      v.w[i] = wi;
      if constexpr (kJacobi) v.m[i] = dinv[i] * wi;
      sums[0] += static_cast<double>(ri) * ui;
      sums[1] += static_cast<double>(wi) * ui;
      sums[2] += static_cast<double>(ri) * ri;
    }
    store_block_sums<4>(sums, partials);
    return;
  }
  const auto alpha = static_cast<Value>(c->alpha), beta = static_cast<Value>(c->beta);
  const bool checked = phase == kChecked;
  struct Inputs {
    Value n, z, m, q, w, s, u, p, x, r, d;
  };
  unrolled_sweep(
      n,
      [&](std::int64_t i) {
        Inputs in;
        in.z = v.z[i], in.s = v.s[i], in.p = v.p[i], in.x = v.x[i], in.r = v.r[i];
        if (checked) {  // uniform: m (w without M) and A m were set aside by kCheckX, n holds A x
          in.n = v.t2[i], in.w = kJacobi ? v.w[i] : v.t[i];
          const double g = static_cast<double>(v.b[i]) - v.n[i] - in.r;
          sums[3] += g * g;
        } else {
          in.n = v.n[i], in.w = v.w[i];
        }
        if constexpr (kJacobi) in.m = checked ? v.t[i] : v.m[i], in.q = v.q[i], in.u = v.u[i], in.d = dinv[i];
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
  store_block_sums<4>(sums, partials);
}

// After the slot's product: advances the phases of a recomputation or a check; after kFresh, kKept,
// kIterate and kChecked reads the sums (`count` partials each, or their global totals), records the
// iteration (or, at the start, iteration 0; or, after a convergence claim, the true residual that
// decides it), and computes the next alpha and beta, or asks for a restart or a replacement (kChecked:
// the gap it measured past its bound), or stops. The rules of src/solvers/cg.cpp's cg_cpu_pipelined: replace when
// the gap grew past its bound and to confirm a convergence, restart on a drifted curvature, stop on a
// refused claim no better than the previous refusal.
__global__ void pcg_scalars_kernel(SolverState* s, PcgScalars* c, const double* partials, int count,
                                   double* history) {
  if (!running(s)) return;
  __shared__ int phase_read;  // one read for the block: thread 0 rewrites c->phase below
  if (threadIdx.x == 0) phase_read = c->phase;
  __syncthreads();
  const int phase = phase_read;
  if (phase == kLoadX || phase == kKeepS || phase == kKeepZ || phase == kCheckX) {  // kCheckX: on to kChecked
    if (threadIdx.x == 0) c->phase = phase + 1;
    return;
  }
  if (phase == kResidual) {
    if (threadIdx.x == 0) c->phase = c->keep ? kKeepS : kFresh;
    return;
  }
  const double gamma = finish_sum(partials, 0, count);
  const double delta = finish_sum(partials, 1, count);
  const double rr = finish_sum(partials, 2, count);
  const double gap = phase == kChecked ? sqrt(finish_sum(partials, 3, count)) : 0;  // ||b - A x - r|| before
  if (threadIdx.x != 0) return;
  const bool recomputed = phase == kFresh || phase == kKept;
  const double norm = sqrt(rr), norm_before = c->norm;
  if (!recomputed) {
    record_iteration(s, norm, history);
    c->norm = norm;
    if (s->status == kConverged) {  // the recurrence's claim: a replacement's true residual decides
      s->status = kRunning;
      c->confirming = 1;
      c->keep = 1;
      c->phase = kLoadX;
      return;
    }
    if (s->status != kRunning) return;
    if (gamma == 0) return stop_on_breakdown(s, kCgRho);  // r != 0 but r.M^-1 r = 0: M not positive definite
    if (phase == kChecked && c->watch.measured(gap, norm_before)) {  // the gap grew past its bound: replace,
      c->keep = 1;                                                 // keeping the direction this sweep made
      c->phase = kLoadX;
      return;
    }
  } else {
    c->watch.recomputed();
    c->norm = norm;
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
  }
  const bool fresh = phase == kFresh;  // the directions are zero
  double beta = 0, denominator = delta;
  if (!fresh) {
    beta = gamma / c->gamma_old;
    denominator = delta - beta * gamma / c->alpha_old;
  }
  if (!(denominator > 0)) {
    if (!fresh && isfinite(denominator)) {  // drifted: restart from x, the directions dropped
      c->keep = 0;
      c->phase = kLoadX;
      return;
    }
    return stop_on_breakdown(s, isfinite(denominator) ? kCgCurvature : kNonFinite);  // A or M not SPD, or NaN
  }
  c->alpha = gamma / denominator;
  c->beta = beta;
  c->gamma_old = gamma;
  c->alpha_old = c->alpha;
  c->phase = phase == kIterate && c->watch.check_due() ? kCheckX : kIterate;  // not after a measuring sweep
  if (c->phase == kCheckX) c->watch.checked();
}

}  // namespace

template <class Value>
void cg_pipelined_device(DeviceRun<Value>& run, const Value* b, Value* x) {
  const std::int64_t n = run.n();
  const Value* dinv = run.inverse_diagonal();
  const bool jacobi = dinv != nullptr;
  const std::size_t extra = jacobi ? static_cast<std::size_t>(n) : 0;
  DeviceBuffer<Value> r(n), w(n), nv(n), p(n), s(n), z(n), t(n), t2(n), u(extra), m(extra), q(extra);
  PcgVectors<Value> v{x,        r.data(), jacobi ? u.data() : r.data(), w.data(),
                      jacobi ? m.data() : w.data(), nv.data(), p.data(), s.data(),
                      jacobi ? q.data() : s.data(), z.data(), t.data(), t2.data(), b};
  DeviceBuffer<PcgScalars> scalars(1);
  const PcgScalars start{};
  SPMV_CUDA_CHECK(cudaMemcpyAsync(scalars.data(), &start, sizeof start, cudaMemcpyHostToDevice, run.stream()));
  const int blocks = run.blocks();
  const auto slot = [&](cudaStream_t st) {
    if (jacobi)
      pcg_sweep_kernel<Value, true><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), v, dinv, n,
                                                                       run.partials());
    else
      pcg_sweep_kernel<Value, false><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), v, dinv, n,
                                                                        run.partials());
    SPMV_CHECK_LAUNCH(pcg_sweep_kernel);
    const int count = run.start_global_rows(run.partials(), 4);  // distributed: overlaps the product
    run.apply(Value(1), v.m, Value(0), nv.data());
    run.join_global_rows();
    pcg_scalars_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), count,
                                                     run.history());
    SPMV_CHECK_LAUNCH(pcg_scalars_kernel);
  };
  for (int i = kLoadX; i <= kFresh; ++i) slot(run.stream());  // the start's three phases: iteration 0's residual
  run.start_loop();
  // Slots of checks, restarts and replacements are enqueued like iterations but do not count as such.
  run.set_enqueue_limit(10 * static_cast<std::int64_t>(run.max_iterations()));
  if (run.after_iteration(0)) return;
  for (int k = 1;; ++k) {
    run.iterate(slot);
    if (run.after_iteration(k)) return;
  }
}

template void cg_pipelined_device(DeviceRun<float>&, const float*, float*);
template void cg_pipelined_device(DeviceRun<double>&, const double*, double*);

}  // namespace spmv::cuda::solvers
