// Right-preconditioned GMRES(m) on the device, the recurrence of src/solvers/gmres.cpp (Arnoldi with
// CGS2, Givens rotations). The Hessenberg matrix, the rotations, g and y live on the device; the
// rotation kernel applies the stopping rule and closes the cycle (converged, max iterations, breakdown,
// invariant subspace or m columns), after which the cycle's remaining kernels do nothing. Per Arnoldi
// step, on one stream:
//   scale_kernel (z = M^-1 v_j) | apply w = A z | 2 x (gmres_project_kernel: V^T w partials, one
//   block row per column | gmres_project_finish_kernel: h | gmres_subtract_kernel: w -= V h)
//   | dot_kernel w.w | gmres_rotation_kernel (1 block) | gmres_normalize_kernel (v_{j+1} = w / h).
// Per cycle: gmres_solve_kernel (1 thread: y = R^-1 g) | gmres_update_kernel (x += M^-1 V y), then the
// restart: r = b - A x into v_0 | dot_kernel | gmres_restart_kernel | gmres_normalize_kernel.
#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

struct GmresScalars {
  int cycle_open = 0;     // Arnoldi steps of this cycle still to run
  int cycle_columns = 0;  // Krylov vectors that enter this cycle's update
  double inv_norm = 0;    // 1 / ||w|| for the next normalisation
};

__device__ inline bool arnoldi_running(const SolverState* s, const GmresScalars* g) {
  return running(s) && g->cycle_open;
}

// The residual norm of r = b - A x (partials row 0) opens a cycle: g = beta e1. At the first call it is
// iteration 0's residual; at a restart it replaces the Givens estimate of the last iteration.
__global__ void gmres_restart_kernel(SolverState* s, GmresScalars* c, double* g, int m, const double* partials,
                                     int count, double* history, int first) {
  const double beta = sqrt(finish_sum(partials, 0, count));
  if (threadIdx.x != 0) return;
  c->cycle_columns = 0;  // the previous cycle's update has been applied
  c->cycle_open = 0;
  if (!running(s)) return;
  if (first) {
    record_residual(s, beta, history);
  } else if (!isfinite(beta)) {
    return stop_on_breakdown(s, kNonFinite);
  } else if (beta <= s->stop_norm) {
    s->residual = beta;
    if (history) history[s->iterations] = beta / s->b_norm;
    s->status = kConverged;
  }
  if (!running(s)) return;
  for (int i = 0; i <= m; ++i) g[i] = 0;
  g[0] = beta;
  c->inv_norm = 1.0 / beta;
  c->cycle_open = 1;
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_normalize_kernel(const SolverState* s, const GmresScalars* c, Value* v, std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  const auto scale = static_cast<Value>(c->inv_norm);
  SPMV_SOLVER_LOOP(i, n) v[i] *= scale;
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_scale_kernel(const SolverState* s, const GmresScalars* c, const Value* dinv, const Value* v, Value* z,
                       std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  SPMV_SOLVER_LOOP(i, n) z[i] = dinv[i] * v[i];
}

// Block (x, c) sums its share of V_c . w into partials[c * kMaxReductionBlocks + x].
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_project_kernel(const SolverState* s, const GmresScalars* c, const Value* basis, const Value* w,
                         std::int64_t n, double* partials) {
  if (!arnoldi_running(s, c)) return;
  const Value* v = basis + blockIdx.y * n;
  double sum[1] = {0};
  SPMV_SOLVER_LOOP(i, n) sum[0] += static_cast<double>(v[i]) * w[i];
  store_block_sums<1>(sum, partials + blockIdx.y * kMaxReductionBlocks);
}

// Block c: h[c] = sum of column c's partials; the Hessenberg column j accumulates both CGS passes.
__global__ void gmres_project_finish_kernel(const SolverState* s, const GmresScalars* c, const double* partials,
                                            int count, double* h, double* hess_column, int pass) {
  if (!arnoldi_running(s, c)) return;
  const double sum = finish_sum(partials + blockIdx.x * kMaxReductionBlocks, 0, count);
  if (threadIdx.x == 0) {
    h[blockIdx.x] = sum;
    hess_column[blockIdx.x] = pass == 0 ? sum : hess_column[blockIdx.x] + sum;
  }
}

// w -= V h over `columns` columns.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_subtract_kernel(const SolverState* s, const GmresScalars* c, const Value* basis, int columns,
                          const double* h, Value* w, std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  SPMV_SOLVER_LOOP(i, n) {
    double sum = 0;
    for (int col = 0; col < columns; ++col) sum += h[col] * basis[col * n + i];
    w[i] -= static_cast<Value>(sum);
  }
}

// Arnoldi step j's end: h_{j+1,j} = ||w|| (partials row 0), rotations, g, the stopping rule.
__global__ void gmres_rotation_kernel(SolverState* s, GmresScalars* c, double* hess, double* cs, double* sn,
                                      double* g, int m, int j, const double* partials, int count, double* history) {
  if (!arnoldi_running(s, c)) return;
  const double h_next = sqrt(finish_sum(partials, 0, count));
  if (threadIdx.x != 0) return;
  double* col = hess + static_cast<std::size_t>(j) * (m + 1);
  for (int i = 0; i < j; ++i) {
    const double t = cs[i] * col[i] + sn[i] * col[i + 1];
    col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
    col[i] = t;
  }
  const double denom = hypot(col[j], h_next);
  if (denom == 0 || !isfinite(denom)) {
    c->cycle_open = 0;
    return stop_on_breakdown(s, denom == 0 ? kGmresSingular : kNonFinite);
  }
  cs[j] = col[j] / denom;
  sn[j] = h_next / denom;
  col[j] = denom;
  g[j + 1] = -sn[j] * g[j];
  g[j] = cs[j] * g[j];
  c->cycle_columns = j + 1;
  record_iteration(s, fabs(g[j + 1]), history);
  if (!running(s) || h_next == 0 || j + 1 == m) {
    c->cycle_open = 0;
    return;
  }
  c->inv_norm = 1.0 / h_next;
}

// y = R^-1 g over the cycle's columns (back substitution, one thread: at most m^2/2 flops).
__global__ void gmres_solve_kernel(const GmresScalars* c, const double* hess, const double* g, double* y, int m) {
  const int k = c->cycle_columns;
  for (int i = k - 1; i >= 0; --i) {
    double sum = g[i];
    for (int col = i + 1; col < k; ++col) sum -= hess[static_cast<std::size_t>(col) * (m + 1) + i] * y[col];
    y[i] = sum / hess[static_cast<std::size_t>(i) * (m + 1) + i];
  }
}

// x += M^-1 V y over the cycle's columns.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_update_kernel(const GmresScalars* c, const Value* dinv, const Value* basis, const double* y, Value* x,
                        std::int64_t n) {
  const int k = c->cycle_columns;
  if (k == 0) return;
  SPMV_SOLVER_LOOP(i, n) {
    double sum = 0;
    for (int col = 0; col < k; ++col) sum += y[col] * basis[col * n + i];
    x[i] += dinv ? dinv[i] * static_cast<Value>(sum) : static_cast<Value>(sum);
  }
}

}  // namespace

template <class Value>
void gmres_device(DeviceRun<Value>& run, const Value* b, Value* x, int m) {
  const std::int64_t n = run.n();
  const cudaStream_t st = run.stream();
  const Value* dinv = run.inverse_diagonal();
  const auto bytes = static_cast<std::size_t>(n) * sizeof(Value);
  DeviceBuffer<Value> basis(static_cast<std::size_t>(m + 1) * n), z(dinv ? n : 0);
  DeviceBuffer<double> hess(static_cast<std::size_t>(m + 1) * m), cs(m), sn(m), g(m + 1), y(m), h(m + 1);
  DeviceBuffer<double> projections(static_cast<std::size_t>(m + 1) * kMaxReductionBlocks);
  DeviceBuffer<GmresScalars> scalars(1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(scalars.data(), 0, sizeof(GmresScalars), st));
  const int blocks = run.blocks();
  Value* v0 = basis.data();
  const auto column = [&](int c) { return basis.data() + static_cast<std::size_t>(c) * n; };

  const auto residual_and_open_cycle = [&](int first) {
    SPMV_CUDA_CHECK(cudaMemcpyAsync(v0, b, bytes, cudaMemcpyDeviceToDevice, st));
    run.apply(Value(-1), x, Value(1), v0);
    dot_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), v0, v0, n, run.partials());
    SPMV_CHECK_LAUNCH(dot_kernel);
    gmres_restart_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), g.data(), m, run.partials(),
                                                       blocks, run.history(), first);
    SPMV_CHECK_LAUNCH(gmres_restart_kernel);
    gmres_normalize_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), v0, n);
    SPMV_CHECK_LAUNCH(gmres_normalize_kernel);
  };

  residual_and_open_cycle(1);
  run.start_loop();
  if (run.after_iteration(0)) return;
  for (int k = 0;;) {
    bool stop = false;
    for (int j = 0; j < m && !stop; ++j) {
      Value* w = column(j + 1);
      const Value* input = column(j);
      if (dinv) {
        gmres_scale_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), dinv, column(j),
                                                                     z.data(), n);
        SPMV_CHECK_LAUNCH(gmres_scale_kernel);
        input = z.data();
      }
      run.apply(Value(1), input, Value(0), w);
      for (int pass = 0; pass < 2; ++pass) {  // CGS2
        gmres_project_kernel<Value><<<dim3(blocks, j + 1), kSolverThreads, 0, st>>>(
            run.state(), scalars.data(), basis.data(), w, n, projections.data());
        SPMV_CHECK_LAUNCH(gmres_project_kernel);
        gmres_project_finish_kernel<<<j + 1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), projections.data(),
                                                                       blocks, h.data(),
                                                                       hess.data() + static_cast<std::size_t>(j) * (m + 1), pass);
        SPMV_CHECK_LAUNCH(gmres_project_finish_kernel);
        gmres_subtract_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), basis.data(),
                                                                        j + 1, h.data(), w, n);
        SPMV_CHECK_LAUNCH(gmres_subtract_kernel);
      }
      dot_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), w, w, n, run.partials());
      SPMV_CHECK_LAUNCH(dot_kernel);
      gmres_rotation_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), hess.data(), cs.data(),
                                                          sn.data(), g.data(), m, j, run.partials(), blocks,
                                                          run.history());
      SPMV_CHECK_LAUNCH(gmres_rotation_kernel);
      gmres_normalize_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), w, n);
      SPMV_CHECK_LAUNCH(gmres_normalize_kernel);
      stop = run.after_iteration(++k);
    }
    // The cycle's update runs whatever stopped it (its columns are counted on the device).
    gmres_solve_kernel<<<1, 1, 0, st>>>(scalars.data(), hess.data(), g.data(), y.data(), m);
    SPMV_CHECK_LAUNCH(gmres_solve_kernel);
    gmres_update_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(scalars.data(), dinv, basis.data(), y.data(), x, n);
    SPMV_CHECK_LAUNCH(gmres_update_kernel);
    residual_and_open_cycle(0);
    if (stop) return;
  }
}

template void gmres_device(DeviceRun<float>&, const float*, float*, int);
template void gmres_device(DeviceRun<double>&, const double*, double*, int);

}  // namespace spmv::cuda::solvers
