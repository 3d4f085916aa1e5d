// Right-preconditioned BiCGStab on the device, the recurrence of src/solvers/bicgstab.cpp. Per
// iteration, on one stream (partial-sum rows in brackets):
//   bicgstab_direction_kernel (p = r + beta (p - omega v), p^ = M^-1 p) | apply v = A p^
//   | dot_kernel r0.v [0] | bicgstab_alpha_kernel | bicgstab_s_kernel (s = r - alpha v, s^ = M^-1 s, s.s [1])
//   | apply t = A s^ | bicgstab_ts_kernel (t.s [2], t.t [3]) | bicgstab_omega_kernel (half-step test, omega)
//   | bicgstab_update_kernel (x += alpha p^ + omega s^, r = s - omega t, r0.r [0], r.r [1])
//   | bicgstab_end_kernel (stopping rule, rho, beta).
// The half-step exit (||s|| small) sets omega = 0 so that the update kernel does x += alpha p^, r = s.
#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

struct BicgScalars {
  double rho = 0, rho_old = 1, alpha = 1, omega = 1, beta = 0;
  double s_norm = 0;
  int half_step = 0;
};

__global__ void bicgstab_start_kernel(SolverState* s, BicgScalars* c, const double* partials, int count,
                                      double* history) {
  const double rr = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) {
    *c = BicgScalars{};
    c->rho = rr;  // shadow = r0
    c->beta = 0;  // p = r0 in the first direction update (p and v start at 0)
    record_residual(s, sqrt(rr), history);
    if (s->status == kRunning && rr == 0) stop_on_breakdown(s, kRho);
  }
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    bicgstab_direction_kernel(const SolverState* s, const BicgScalars* c, const Value* dinv, const Value* r,
                              const Value* v, Value* p, Value* p_hat, std::int64_t n) {
  if (!running(s)) return;
  const auto beta = static_cast<Value>(c->beta), omega = static_cast<Value>(c->omega);
  SPMV_SOLVER_LOOP(i, n) {
    const Value pi = r[i] + beta * (p[i] - omega * v[i]);
    p[i] = pi;
    p_hat[i] = dinv ? dinv[i] * pi : pi;
  }
}

__global__ void bicgstab_alpha_kernel(SolverState* s, BicgScalars* c, const double* partials, int count) {
  if (!running(s)) return;
  const double shadow_v = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) {
    if (shadow_v == 0 || !isfinite(shadow_v)) stop_on_breakdown(s, shadow_v == 0 ? kBicgAlpha : kNonFinite);
    else c->alpha = c->rho / shadow_v;
  }
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    bicgstab_s_kernel(const SolverState* st, const BicgScalars* c, const Value* dinv, const Value* r, const Value* v,
                      Value* s, Value* s_hat, std::int64_t n, double* partials) {
  if (!running(st)) return;
  const auto alpha = static_cast<Value>(c->alpha);
  double sum[1] = {0};
  SPMV_SOLVER_LOOP(i, n) {
    const Value si = r[i] - alpha * v[i];
    s[i] = si;
    s_hat[i] = dinv ? dinv[i] * si : si;
    sum[0] += static_cast<double>(si) * si;
  }
  store_block_sums<1>(sum, partials);
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    bicgstab_ts_kernel(const SolverState* st, const Value* t, const Value* s, std::int64_t n, double* partials) {
  if (!running(st)) return;
  double sum[2] = {0, 0};
  SPMV_SOLVER_LOOP(i, n) {
    sum[0] += static_cast<double>(t[i]) * s[i];
    sum[1] += static_cast<double>(t[i]) * t[i];
  }
  store_block_sums<2>(sum, partials);
}

__global__ void bicgstab_omega_kernel(SolverState* s, BicgScalars* c, const double* partials, int count) {
  if (!running(s)) return;
  const double ss = finish_sum(partials, 1, count);
  const double ts = finish_sum(partials, 2, count);
  const double tt = finish_sum(partials, 3, count);
  if (threadIdx.x == 0) {
    c->s_norm = sqrt(ss);
    c->half_step = c->s_norm <= s->stop_norm;
    if (c->half_step) {
      c->omega = 0;  // x += alpha p^, r = s
      return;
    }
    const double omega = tt > 0 ? ts / tt : 0;
    if (omega == 0 || !isfinite(omega)) return stop_on_breakdown(s, isfinite(omega) ? kOmega : kNonFinite);
    c->omega = omega;
  }
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    bicgstab_update_kernel(const SolverState* st, const BicgScalars* c, Value* x, Value* r, const Value* shadow,
                           const Value* p_hat, const Value* s, const Value* s_hat, const Value* t, std::int64_t n,
                           double* partials) {
  if (!running(st)) return;
  const auto alpha = static_cast<Value>(c->alpha), omega = static_cast<Value>(c->omega);
  double sum[2] = {0, 0};
  SPMV_SOLVER_LOOP(i, n) {
    x[i] += alpha * p_hat[i] + omega * s_hat[i];
    const Value ri = s[i] - omega * t[i];
    r[i] = ri;
    sum[0] += static_cast<double>(shadow[i]) * ri;
    sum[1] += static_cast<double>(ri) * ri;
  }
  store_block_sums<2>(sum, partials);
}

__global__ void bicgstab_end_kernel(SolverState* s, BicgScalars* c, const double* partials, int count, double* history) {
  if (!running(s)) return;
  const double rho_new = finish_sum(partials, 0, count);
  const double rr = finish_sum(partials, 1, count);
  if (threadIdx.x == 0) {
    record_iteration(s, c->half_step ? c->s_norm : sqrt(rr), history);
    if (s->status != kRunning) return;
    if (rho_new == 0) return stop_on_breakdown(s, kRho);
    c->beta = (rho_new / c->rho) * (c->alpha / c->omega);
    c->rho_old = c->rho;
    c->rho = rho_new;
  }
}

}  // namespace

template <class Value>
void bicgstab_device(DeviceRun<Value>& run, const Value* b, Value* x) {
  const std::int64_t n = run.n();
  const cudaStream_t st = run.stream();
  const Value* dinv = run.inverse_diagonal();
  const auto bytes = static_cast<std::size_t>(n) * sizeof(Value);
  DeviceBuffer<Value> r(n), shadow(n), p(n), v(n), p_hat(n), s(n), s_hat(n), t(n);
  DeviceBuffer<BicgScalars> scalars(1);
  const int blocks = run.blocks();
  double* part = run.partials();
  const auto row = [&](int d) { return part + d * kMaxReductionBlocks; };

  SPMV_CUDA_CHECK(cudaMemsetAsync(p.data(), 0, bytes, st));
  SPMV_CUDA_CHECK(cudaMemsetAsync(v.data(), 0, bytes, st));
  SPMV_CUDA_CHECK(cudaMemcpyAsync(r.data(), b, bytes, cudaMemcpyDeviceToDevice, st));
  run.apply(Value(-1), x, Value(1), r.data());
  SPMV_CUDA_CHECK(cudaMemcpyAsync(shadow.data(), r.data(), bytes, cudaMemcpyDeviceToDevice, st));
  // r.r of the initial residual through the generic dot kernel (state is running after setup).
  dot_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), r.data(), r.data(), n, part);
  SPMV_CHECK_LAUNCH(dot_kernel);
  const int start_count = run.global_rows(row(0), 1);
  bicgstab_start_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), part, start_count, run.history());
  SPMV_CHECK_LAUNCH(bicgstab_start_kernel);
  run.start_loop();
  if (run.after_iteration(0)) return;
  // One iteration, enqueued on `stream` (the solver's stream, or the capturing one with SolverOptions::graph).
  const auto iteration = [&](cudaStream_t stream) {
    bicgstab_direction_kernel<Value><<<blocks, kSolverThreads, 0, stream>>>(run.state(), scalars.data(), dinv, r.data(),
                                                                        v.data(), p.data(), p_hat.data(), n);
    SPMV_CHECK_LAUNCH(bicgstab_direction_kernel);
    run.apply(Value(1), p_hat.data(), Value(0), v.data());
    dot_kernel<Value><<<blocks, kSolverThreads, 0, stream>>>(run.state(), shadow.data(), v.data(), n, row(0));
    SPMV_CHECK_LAUNCH(dot_kernel);
    const int alpha_count = run.global_rows(row(0), 1);
    bicgstab_alpha_kernel<<<1, kSolverThreads, 0, stream>>>(run.state(), scalars.data(), part, alpha_count);
    SPMV_CHECK_LAUNCH(bicgstab_alpha_kernel);
    bicgstab_s_kernel<Value><<<blocks, kSolverThreads, 0, stream>>>(run.state(), scalars.data(), dinv, r.data(), v.data(),
                                                                s.data(), s_hat.data(), n, row(1));
    SPMV_CHECK_LAUNCH(bicgstab_s_kernel);
    run.global_rows(row(1), 1);  // s.s, read with t.s and t.t by the omega kernel
    // The second apply runs even when ||s|| already met the tolerance (the device decides that in
    // the omega kernel; skipping it would need the host to know): one wasted apply on the last iteration.
    run.apply(Value(1), s_hat.data(), Value(0), t.data());
    bicgstab_ts_kernel<Value><<<blocks, kSolverThreads, 0, stream>>>(run.state(), t.data(), s.data(), n, row(2));
    SPMV_CHECK_LAUNCH(bicgstab_ts_kernel);
    const int omega_count = run.global_rows(row(2), 2);
    bicgstab_omega_kernel<<<1, kSolverThreads, 0, stream>>>(run.state(), scalars.data(), part, omega_count);
    SPMV_CHECK_LAUNCH(bicgstab_omega_kernel);
    bicgstab_update_kernel<Value><<<blocks, kSolverThreads, 0, stream>>>(run.state(), scalars.data(), x, r.data(),
                                                                     shadow.data(), p_hat.data(), s.data(),
                                                                     s_hat.data(), t.data(), n, part);
    SPMV_CHECK_LAUNCH(bicgstab_update_kernel);
    const int end_count = run.global_rows(row(0), 2);
    bicgstab_end_kernel<<<1, kSolverThreads, 0, stream>>>(run.state(), scalars.data(), part, end_count, run.history());
    SPMV_CHECK_LAUNCH(bicgstab_end_kernel);
  };
  for (int k = 1;; ++k) {
    run.iterate(iteration);
    if (run.after_iteration(k)) return;
  }
}

template void bicgstab_device(DeviceRun<float>&, const float*, float*);
template void bicgstab_device(DeviceRun<double>&, const double*, double*);

}  // namespace spmv::cuda::solvers
