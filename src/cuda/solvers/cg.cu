// Preconditioned CG on the device, the recurrence of src/solvers/cg.cpp. Per iteration, on one stream:
//   apply q = A p | dot_kernel p.q | cg_alpha_kernel (1 block: alpha = rho / p.q, breakdown test)
//   | cg_update_kernel (x += alpha p, r -= alpha q, z = M^-1 r, partial r.z and r.r: one sweep)
//   | cg_beta_kernel (1 block: stopping rule, beta = rho_new / rho) | cg_direction_kernel (p = z + beta p).
// No host round trip: alpha and beta live in CgScalars on the device; every kernel returns at once
// once the state is no longer running.
#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

struct CgScalars {
  double rho = 0;  // r.z of the current residual
  double alpha = 0;
  double beta = 0;
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
  cg_start_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), blocks, run.history());
  SPMV_CHECK_LAUNCH(cg_start_kernel);
  SPMV_CUDA_CHECK(cudaMemcpyAsync(p.data(), z, bytes, cudaMemcpyDeviceToDevice, st));
  run.start_loop();
  if (run.after_iteration(0)) return;
  for (int k = 1;; ++k) {
    run.apply(Value(1), p.data(), Value(0), q.data());
    dot_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), p.data(), q.data(), n, run.partials());
    SPMV_CHECK_LAUNCH(dot_kernel);
    cg_alpha_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), blocks);
    SPMV_CHECK_LAUNCH(cg_alpha_kernel);
    cg_update_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), dinv, x, r.data(), z,
                                                               p.data(), q.data(), n, run.partials());
    SPMV_CHECK_LAUNCH(cg_update_kernel);
    cg_beta_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), blocks, run.history());
    SPMV_CHECK_LAUNCH(cg_beta_kernel);
    cg_direction_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), z, p.data(), n);
    SPMV_CHECK_LAUNCH(cg_direction_kernel);
    if (run.after_iteration(k)) return;
  }
}

template void cg_device(DeviceRun<float>&, const float*, float*);
template void cg_device(DeviceRun<double>&, const double*, double*);

}  // namespace spmv::cuda::solvers
