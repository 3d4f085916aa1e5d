// Preconditioned CG on the device, the recurrence of src/solvers/cg.cpp, in its two variants
// (SolverOptions::fused; docs/SOLVERS.md "Fusion" lists what each kernel reads and writes).
// Unfused (issue 9), per iteration on one stream, 6 kernels, 11 vector words per row (13 with Jacobi):
//   apply q = A p | dot_kernel p.q | cg_alpha_kernel (1 block: alpha = rho / p.q, breakdown test)
//   | cg_update_kernel (x += alpha p, r -= alpha q, z = M^-1 r, partial r.z and r.r: one sweep)
//   | cg_beta_kernel (1 block: stopping rule, beta = rho_new / rho) | cg_direction_kernel (p = z + beta p).
// Fused (issue 15), 4 kernels, 10 words per row (12): the one-block kernels disappear into the last
// block of the sweep before them (reduce_in_last_block), z is never stored, x += alpha p moves into
// the direction sweep, which reads p anyway:
//   apply q = A p | cg_fused_alpha_kernel (p.q; last block: alpha)
//   | cg_fused_residual_kernel (r -= alpha q, r.z and r.r; last block: stopping rule, beta)
//   | cg_fused_direction_kernel (x += alpha p, p = M^-1 r + beta p).
// The direction sweep does nothing once the device stopped, so the last iteration's x update is made
// after the loop by cg_fused_finish_kernel (when the residual kernel set x_pending).
// Distributed solves (SolverOptions::device_global_sum) run the unfused variant, each one-block kernel
// reading partials that DeviceRun::global_rows summed across the processes.
// No host round trip: alpha and beta live in CgScalars on the device; every kernel returns at once
// once the state is no longer running. Both variants enqueue their iteration through
// DeviceRun::iterate, so that it can be captured in a CUDA graph.
#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

struct CgScalars {
  double rho = 0;  // r.z of the current residual
  double alpha = 0;
  double beta = 0;
  int x_pending = 0;  // fused: the stopping iteration's x += alpha p is still to be made
};

// Initial residual r (already b - A x0): z = M^-1 r, partial r.z (row 0) and r.r (row 1).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads) cg_start_partials_kernel(const Value* dinv, const Value* r, Value* z,
                                                                           std::int64_t n, double* partials) {
  double v[2] = {0, 0};
  SPMV_SOLVER_LOOP(i, n) {
    const Value ri = r[i];
    const Value zi = dinv ? dinv[i] * ri : ri;
    if (dinv) z[i] = zi;
    v[0] += static_cast<double>(ri) * zi;
    v[1] += static_cast<double>(ri) * ri;
  }
  store_block_sums<2>(v, partials);
}

__global__ void cg_start_kernel(SolverState* s, CgScalars* c, const double* partials, int count, double* history) {
  const double rz = finish_sum(partials, 0, count);
  const double rr = finish_sum(partials, 1, count);
  if (threadIdx.x == 0) {
    c->rho = rz;
    record_residual(s, sqrt(rr), history);  // iteration 0
  }
}

__global__ void cg_alpha_kernel(SolverState* s, CgScalars* c, const double* partials, int count) {
  if (!running(s)) return;
  const double pq = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) {
    if (!(pq > 0)) stop_on_breakdown(s, isfinite(pq) ? kCgCurvature : kNonFinite);
    else c->alpha = c->rho / pq;
  }
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_update_kernel(const SolverState* s, const CgScalars* c, const Value* dinv, Value* x, Value* r, Value* z,
                     const Value* p, const Value* q, std::int64_t n, double* partials) {
  if (!running(s)) return;
  const auto alpha = static_cast<Value>(c->alpha);
  double v[2] = {0, 0};
  SPMV_SOLVER_LOOP(i, n) {
    x[i] += alpha * p[i];
    const Value ri = r[i] - alpha * q[i];
    r[i] = ri;
    const Value zi = dinv ? dinv[i] * ri : ri;
    if (dinv) z[i] = zi;
    v[0] += static_cast<double>(ri) * zi;
    v[1] += static_cast<double>(ri) * ri;
  }
  store_block_sums<2>(v, partials);
}

__global__ void cg_beta_kernel(SolverState* s, CgScalars* c, const double* partials, int count, double* history) {
  if (!running(s)) return;
  const double rz = finish_sum(partials, 0, count);
  const double rr = finish_sum(partials, 1, count);
  if (threadIdx.x == 0) {
    record_iteration(s, sqrt(rr), history);
    if (s->status != kRunning) return;
    if (rz == 0) return stop_on_breakdown(s, kCgRho);
    c->beta = rz / c->rho;
    c->rho = rz;
  }
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_direction_kernel(const SolverState* s, const CgScalars* c, const Value* z, Value* p, std::int64_t n) {
  if (!running(s)) return;
  const auto beta = static_cast<Value>(c->beta);
  SPMV_SOLVER_LOOP(i, n) p[i] = z[i] + beta * p[i];
}

// ----- Fused variant. -----

// r = b - A x0 on entry: p = M^-1 r, and (last block) rho = r.z and the residual of iteration 0.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_fused_start_kernel(SolverState* s, CgScalars* c, const Value* dinv, const Value* r, Value* p, std::int64_t n,
                          double* partials, unsigned int* counter, double* history) {
  double v[2] = {0, 0};
  SPMV_SOLVER_LOOP(i, n) {
    const Value ri = r[i];
    const Value zi = dinv ? dinv[i] * ri : ri;
    p[i] = zi;
    v[0] += static_cast<double>(ri) * zi;
    v[1] += static_cast<double>(ri) * ri;
  }
  reduce_in_last_block<2>(v, partials, counter, [&](const double* t) {
    c->rho = t[0];
    record_residual(s, sqrt(t[1]), history);
  });
}

// p.q; last block: alpha = rho / p.q or the curvature breakdown. Reads p, q.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_fused_alpha_kernel(SolverState* s, CgScalars* c, const Value* p, const Value* q, std::int64_t n,
                          double* partials, unsigned int* counter) {
  if (!running(s)) return;
  double v[1] = {0};
  SPMV_SOLVER_LOOP(i, n) v[0] += static_cast<double>(p[i]) * static_cast<double>(q[i]);
  reduce_in_last_block<1>(v, partials, counter, [&](const double* t) {
    const double pq = t[0];
    if (!(pq > 0)) stop_on_breakdown(s, isfinite(pq) ? kCgCurvature : kNonFinite);
    else c->alpha = c->rho / pq;
  });
}

// r -= alpha q with r.z (z = M^-1 r, not stored) and r.r; last block: the stopping rule, beta, rho.
// Reads r, q (and dinv), writes r.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_fused_residual_kernel(SolverState* s, CgScalars* c, const Value* dinv, Value* r, const Value* q, std::int64_t n,
                             double* partials, unsigned int* counter, double* history) {
  if (!running(s)) return;
  const auto alpha = static_cast<Value>(c->alpha);
  double v[2] = {0, 0};
  struct Inputs {
    Value r, q, d;
  };
  unrolled_sweep(
      n, [&](std::int64_t i) { return Inputs{r[i], q[i], dinv ? dinv[i] : Value(1)}; },
      [&](std::int64_t i, const Inputs& in) {
        const Value ri = in.r - alpha * in.q;
        r[i] = ri;
        v[0] += static_cast<double>(ri) * (dinv ? in.d * ri : ri);
        v[1] += static_cast<double>(ri) * ri;
      });
  reduce_in_last_block<2>(v, partials, counter, [&](const double* t) {
    record_iteration(s, sqrt(t[1]), history);
    if (s->status == kRunning && t[0] == 0) stop_on_breakdown(s, kCgRho);
    if (s->status != kRunning) {
      c->x_pending = 1;  // this iteration's x update is made after the loop
      return;
    }
    c->beta = t[0] / c->rho;
    c->rho = t[0];
  });
}

// x += alpha p, p = M^-1 r + beta p. Reads x, p, r (and dinv), writes x, p.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_fused_direction_kernel(const SolverState* s, const CgScalars* c, const Value* dinv, const Value* r, Value* x,
                              Value* p, std::int64_t n) {
  if (!running(s)) return;
  const auto alpha = static_cast<Value>(c->alpha), beta = static_cast<Value>(c->beta);
  struct Inputs {
    Value p, x, z;
  };
  unrolled_sweep(
      n, [&](std::int64_t i) { return Inputs{p[i], x[i], dinv ? dinv[i] * r[i] : r[i]}; },
      [&](std::int64_t i, const Inputs& in) {
        x[i] = in.x + alpha * in.p;
        p[i] = in.z + beta * in.p;
      });
}

// After the loop: the stopping iteration's x += alpha p (p is still that iteration's direction).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    cg_fused_finish_kernel(const CgScalars* c, const Value* p, Value* x, std::int64_t n) {
  if (!c->x_pending) return;
  const auto alpha = static_cast<Value>(c->alpha);
  SPMV_SOLVER_LOOP(i, n) x[i] += alpha * p[i];
}

}  // namespace

template <class Value>
void cg_device(DeviceRun<Value>& run, const Value* b, Value* x) {
  const std::int64_t n = run.n();
  const cudaStream_t st = run.stream();
  const Value* dinv = run.inverse_diagonal();
  const auto bytes = static_cast<std::size_t>(n) * sizeof(Value);
  DeviceBuffer<Value> r(n), p(n), q(n), z_storage(dinv ? n : 0);
  Value* z = dinv ? z_storage.data() : r.data();
  DeviceBuffer<CgScalars> scalars(1);
  const int blocks = run.blocks();

  SPMV_CUDA_CHECK(cudaMemcpyAsync(r.data(), b, bytes, cudaMemcpyDeviceToDevice, st));
  run.apply(Value(-1), x, Value(1), r.data());
  cg_start_partials_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(dinv, r.data(), z, n, run.partials());
  SPMV_CHECK_LAUNCH(cg_start_partials_kernel);
  const int start_count = run.global_rows(run.partials(), 2);
  cg_start_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), start_count,
                                                run.history());
  SPMV_CHECK_LAUNCH(cg_start_kernel);
  SPMV_CUDA_CHECK(cudaMemcpyAsync(p.data(), z, bytes, cudaMemcpyDeviceToDevice, st));
  run.start_loop();
  if (run.after_iteration(0)) return;
  const auto iteration = [&](cudaStream_t s) {
    run.apply(Value(1), p.data(), Value(0), q.data());
    dot_kernel<Value><<<blocks, kSolverThreads, 0, s>>>(run.state(), p.data(), q.data(), n, run.partials());
    SPMV_CHECK_LAUNCH(dot_kernel);
    const int pq_count = run.global_rows(run.partials(), 1);
    cg_alpha_kernel<<<1, kSolverThreads, 0, s>>>(run.state(), scalars.data(), run.partials(), pq_count);
    SPMV_CHECK_LAUNCH(cg_alpha_kernel);
    cg_update_kernel<Value><<<blocks, kSolverThreads, 0, s>>>(run.state(), scalars.data(), dinv, x, r.data(), z,
                                                              p.data(), q.data(), n, run.partials());
    SPMV_CHECK_LAUNCH(cg_update_kernel);
    const int rz_count = run.global_rows(run.partials(), 2);
    cg_beta_kernel<<<1, kSolverThreads, 0, s>>>(run.state(), scalars.data(), run.partials(), rz_count, run.history());
    SPMV_CHECK_LAUNCH(cg_beta_kernel);
    cg_direction_kernel<Value><<<blocks, kSolverThreads, 0, s>>>(run.state(), scalars.data(), z, p.data(), n);
    SPMV_CHECK_LAUNCH(cg_direction_kernel);
  };
  for (int k = 1;; ++k) {
    run.iterate(iteration);
    if (run.after_iteration(k)) return;
  }
}

template <class Value>
void cg_fused_device(DeviceRun<Value>& run, const Value* b, Value* x) {
  const std::int64_t n = run.n();
  const cudaStream_t st = run.stream();
  const Value* dinv = run.inverse_diagonal();
  DeviceBuffer<Value> r(n), p(n), q(n);
  DeviceBuffer<CgScalars> scalars(1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(scalars.data(), 0, sizeof(CgScalars), st));
  const int blocks = run.blocks();

  SPMV_CUDA_CHECK(cudaMemcpyAsync(r.data(), b, r.bytes(), cudaMemcpyDeviceToDevice, st));
  run.apply(Value(-1), x, Value(1), r.data());
  cg_fused_start_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), dinv, r.data(),
                                                                  p.data(), n, run.partials(), run.counter(),
                                                                  run.history());
  SPMV_CHECK_LAUNCH(cg_fused_start_kernel);
  run.start_loop();
  const auto iteration = [&](cudaStream_t s) {
    run.apply(Value(1), p.data(), Value(0), q.data());
    cg_fused_alpha_kernel<Value><<<blocks, kSolverThreads, 0, s>>>(run.state(), scalars.data(), p.data(), q.data(), n,
                                                                   run.partials(), run.counter());
    SPMV_CHECK_LAUNCH(cg_fused_alpha_kernel);
    cg_fused_residual_kernel<Value><<<blocks, kSolverThreads, 0, s>>>(
        run.state(), scalars.data(), dinv, r.data(), q.data(), n, run.partials(), run.counter(), run.history());
    SPMV_CHECK_LAUNCH(cg_fused_residual_kernel);
    cg_fused_direction_kernel<Value><<<blocks, kSolverThreads, 0, s>>>(run.state(), scalars.data(), dinv, r.data(), x,
                                                                       p.data(), n);
    SPMV_CHECK_LAUNCH(cg_fused_direction_kernel);
  };
  if (!run.after_iteration(0))
    for (int k = 1;; ++k) {
      run.iterate(iteration);
      if (run.after_iteration(k)) break;
    }
  cg_fused_finish_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(scalars.data(), p.data(), x, n);
  SPMV_CHECK_LAUNCH(cg_fused_finish_kernel);
}

template void cg_device(DeviceRun<float>&, const float*, float*);
template void cg_device(DeviceRun<double>&, const double*, double*);
template void cg_fused_device(DeviceRun<float>&, const float*, float*);
template void cg_fused_device(DeviceRun<double>&, const double*, double*);

}  // namespace spmv::cuda::solvers
