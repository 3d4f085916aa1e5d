// Right-preconditioned GMRES(m) on the device, the recurrence of src/solvers/gmres.cpp (Arnoldi with
// one classical Gram-Schmidt pass, its norm by Pythagoras, a second pass only when the DGKS criterion
// asks for it, fused update + normalisation: src/solvers/gmres_arnoldi.hpp; Givens rotations). The
// Hessenberg matrix, the rotations, g and y live on the device, and so does every decision: the
// finish of the dot products chooses between one pass and two, the rotation kernel applies the
// stopping rule and closes the cycle (converged, max iterations, breakdown, invariant subspace or m
// columns), after which the cycle's remaining kernels do nothing. Per Arnoldi step, on one stream:
//   scale_kernel (z = M^-1 v_j) | apply w = A z
//   | gmres_multi_dot_kernel (V_j^T w and w.w, one sweep: per-block partials)
//   | gmres_dots_finish_kernel (h; last block: h.h, the criterion, beta = sqrt(w.w - h.h))
//   | second pass, each kernel returning at once unless the finish asked for it: gmres_subtract_kernel
//     (w -= V h) | gmres_multi_dot_kernel | gmres_dots_finish_kernel (h2, H(:, j) += h2)
//     | gmres_subtract_kernel (w -= V h2; last block: beta = ||w|| computed)
//   | gmres_rotation_kernel (1 thread) | gmres_orthonormalise_kernel (v_{j+1} = (w - V h) / beta).
// Distributed solves (SolverOptions::device_global_sum) sum every set of partials across the processes
// before its finish (DeviceRun::global_rows), and recompute the second pass's ||w|| globally.
// Per cycle: gmres_solve_kernel (1 thread: y = R^-1 g) | gmres_update_kernel (x += M^-1 V y), then the
// restart: r = b - A x into v_0 | dot_kernel | gmres_restart_kernel | gmres_orthonormalise_kernel.
#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

using spmv::solvers::kGmresDotColumns;
using spmv::solvers::kReorthogonaliseBelow;

struct GmresScalars {
  int cycle_open = 0;        // Arnoldi steps of this cycle still to run
  int cycle_columns = 0;     // Krylov vectors that enter this cycle's update
  int reorthogonalise = 0;   // this step runs the second Gram-Schmidt pass
  int subtract_columns = 0;  // columns gmres_orthonormalise_kernel subtracts (0: it only scales)
  double beta = 0;           // this step's h_{j+1,j} = ||w - V_j H(:, j)||
  double inv_norm = 0;       // 1 / ||w|| for the next normalisation
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
  c->subtract_columns = 0;  // v_0 = r / beta
  c->cycle_open = 1;
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_scale_kernel(const SolverState* s, const GmresScalars* c, const Value* dinv, const Value* v, Value* z,
                       std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  SPMV_SOLVER_LOOP(i, n) z[i] = dinv[i] * v[i];
}

// Block (x, y) sums its share of V_c . w for the columns c = y * kGmresDotColumns + k < columns,
// k < kColumns, into partials[c * kMaxReductionBlocks + x]: one sweep over the rows reads every column
// and w once (kColumns per-thread sums in registers). Column j + 1 of the basis is w itself, so
// columns = j + 2 adds w.w. pass 1 is the second Gram-Schmidt pass: nothing unless asked for.
template <class Value, int kColumns>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_multi_dot_kernel(const SolverState* s, const GmresScalars* c, const Value* basis, const Value* w,
                           int columns, std::int64_t n, double* partials, int pass) {
  if (!arnoldi_running(s, c) || (pass == 1 && !c->reorthogonalise)) return;
  const int first = blockIdx.y * kGmresDotColumns;
  double sum[kColumns] = {};
  SPMV_SOLVER_LOOP(i, n) {
    const double wi = static_cast<double>(w[i]);
#pragma unroll
    for (int k = 0; k < kColumns; ++k)
      if (first + k < columns) sum[k] += static_cast<double>(basis[(first + k) * n + i]) * wi;
  }
  store_block_sums<kColumns>(sum, partials + static_cast<std::size_t>(first) * kMaxReductionBlocks);
}

// Block c: h[c] = the sum of column c's partials, and the Hessenberg column's entry (pass 0 sets it,
// pass 1 adds the second pass's). In pass 0 (grid j + 2, h[j + 1] = w.w) the last block to finish
// applies the criterion of src/solvers/gmres_arnoldi.hpp (single_pass_accepted, the same test):
// beta = sqrt(w.w - h.h) and the fused update subtracts V_j h, or the second pass runs.
__global__ void gmres_dots_finish_kernel(const SolverState* s, GmresScalars* c, const double* partials, int count,
                                         double* h, double* hess_column, int pass, unsigned int* counter) {
  if (!arnoldi_running(s, c) || (pass == 1 && !c->reorthogonalise)) return;
  const double sum = finish_sum(partials + static_cast<std::size_t>(blockIdx.x) * kMaxReductionBlocks, 0, count);
  if (threadIdx.x != 0) return;
  const int j1 = pass == 0 ? static_cast<int>(gridDim.x) - 1 : static_cast<int>(gridDim.x);  // j + 1
  h[blockIdx.x] = sum;
  if (static_cast<int>(blockIdx.x) < j1) hess_column[blockIdx.x] = pass == 0 ? sum : hess_column[blockIdx.x] + sum;
  if (pass == 1) return;
  __threadfence();  // h[blockIdx.x] is visible before this block is counted
  if (atomicAdd(counter, 1u) != gridDim.x - 1) return;
  *counter = 0;
  double hh = 0;
  for (int col = 0; col < j1; ++col) {
    const double v = __ldcg(h + col);  // at L2, where the other blocks' fenced stores are
    hh += v * v;
  }
  const double ww = __ldcg(h + j1);
  const bool accepted = !isfinite(ww) || ww - hh > kReorthogonaliseBelow * ww;
  c->reorthogonalise = accepted ? 0 : 1;
  c->subtract_columns = accepted ? j1 : 0;
  if (accepted) c->beta = sqrt(ww - hh);
}

// The second pass's w -= V h over `columns` columns, with ||w||^2 of the result (last block:
// beta = ||w||, the explicit norm; the first of the two calls' is overwritten by the second's).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_subtract_kernel(const SolverState* s, GmresScalars* c, const Value* basis, int columns, const double* h,
                          Value* w, std::int64_t n, double* partials, unsigned int* counter) {
  if (!arnoldi_running(s, c) || !c->reorthogonalise) return;
  double norm2[1] = {0};
  SPMV_SOLVER_LOOP(i, n) {
    double sum = 0;
    for (int col = 0; col < columns; ++col) sum += h[col] * basis[col * n + i];
    const Value updated = w[i] - static_cast<Value>(sum);
    w[i] = updated;
    norm2[0] += static_cast<double>(updated) * static_cast<double>(updated);
  }
  reduce_in_last_block<1>(norm2, partials, counter, [&](const double* t) { c->beta = sqrt(t[0]); });
}

// Distributed solves: the second pass's beta = ||w|| from the norm partials that gmres_subtract_kernel
// stored and DeviceRun::global_rows summed across the processes (its last block saw only this
// process's part).
__global__ void gmres_global_beta_kernel(const SolverState* s, GmresScalars* c, const double* partials, int count) {
  if (!arnoldi_running(s, c) || !c->reorthogonalise) return;
  const double sum = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) c->beta = sqrt(sum);
}

// v = (v - V h) / ||.|| over the step's subtract_columns columns, in place: v_{j+1} from w in one sweep
// after a single pass, a plain scaling after two passes and for v_0 at a restart.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_orthonormalise_kernel(const SolverState* s, const GmresScalars* c, const Value* basis, const double* h,
                                Value* v, std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  const int columns = c->subtract_columns;
  const auto scale = static_cast<Value>(c->inv_norm);
  SPMV_SOLVER_LOOP(i, n) {
    double sum = 0;
    for (int col = 0; col < columns; ++col) sum += h[col] * basis[col * n + i];
    v[i] = (v[i] - static_cast<Value>(sum)) * scale;
  }
}

// Arnoldi step j's end (one thread): h_{j+1,j} = beta, rotations, g, the stopping rule.
__global__ void gmres_rotation_kernel(SolverState* s, GmresScalars* c, double* hess, double* cs, double* sn,
                                      double* g, int m, int j, double* history) {
  if (!arnoldi_running(s, c)) return;
  const double h_next = c->beta;
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

// The multi-dot over `columns` columns: the variant of the smallest register tile that holds them (a
// bounded set, so that the early steps of a cycle keep more blocks per SM), one grid row per
// kGmresDotColumns columns beyond.
template <class Value>
void launch_multi_dot(cudaStream_t st, int blocks, const SolverState* s, const GmresScalars* c, const Value* basis,
                      const Value* w, int columns, std::int64_t n, double* partials, int pass) {
  const dim3 grid(blocks, (columns + kGmresDotColumns - 1) / kGmresDotColumns);
  const auto launch = [&](auto kernel) {
    kernel<<<grid, kSolverThreads, 0, st>>>(s, c, basis, w, columns, n, partials, pass);
    SPMV_CHECK_LAUNCH(gmres_multi_dot_kernel);
  };
  if (columns <= 4) launch(gmres_multi_dot_kernel<Value, 4>);
  else if (columns <= 8) launch(gmres_multi_dot_kernel<Value, 8>);
  else if (columns <= 16) launch(gmres_multi_dot_kernel<Value, 16>);
  else launch(gmres_multi_dot_kernel<Value, kGmresDotColumns>);
}

}  // namespace

template <class Value>
void gmres_device(DeviceRun<Value>& run, const Value* b, Value* x, int m) {
  const std::int64_t n = run.n();
  const cudaStream_t st = run.stream();
  const Value* dinv = run.inverse_diagonal();
  const auto bytes = static_cast<std::size_t>(n) * sizeof(Value);
  DeviceBuffer<Value> basis(static_cast<std::size_t>(m + 1) * n), z(dinv ? n : 0);
  // h holds j + 2 dots (the last is w.w); the multi-dot's partials have a row per column, rounded up
  // to its register tile (store_block_sums writes whole tiles).
  DeviceBuffer<double> hess(static_cast<std::size_t>(m + 1) * m), cs(m), sn(m), g(m + 1), y(m), h(m + 2);
  const int dot_rows = (m + 2 + kGmresDotColumns - 1) / kGmresDotColumns * kGmresDotColumns;
  DeviceBuffer<double> dot_partials(static_cast<std::size_t>(dot_rows) * kMaxReductionBlocks);
  DeviceBuffer<GmresScalars> scalars(1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(scalars.data(), 0, sizeof(GmresScalars), st));
  const int blocks = run.blocks();
  Value* v0 = basis.data();
  const auto column = [&](int c) { return basis.data() + static_cast<std::size_t>(c) * n; };
  const auto orthonormalise = [&](Value* v) {
    gmres_orthonormalise_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), basis.data(),
                                                                          h.data(), v, n);
    SPMV_CHECK_LAUNCH(gmres_orthonormalise_kernel);
  };
  const auto dots = [&](const Value* w, int j, int pass) {  // pass 0: V_j^T w and w.w; pass 1: V_j^T w
    const int columns = pass == 0 ? j + 2 : j + 1;
    launch_multi_dot<Value>(st, blocks, run.state(), scalars.data(), basis.data(), w, columns, n, dot_partials.data(),
                            pass);
    const int count = run.global_rows(dot_partials.data(), columns);
    gmres_dots_finish_kernel<<<columns, kSolverThreads, 0, st>>>(run.state(), scalars.data(), dot_partials.data(),
                                                                 count, h.data(),
                                                                 hess.data() + static_cast<std::size_t>(j) * (m + 1),
                                                                 pass, run.counter());
    SPMV_CHECK_LAUNCH(gmres_dots_finish_kernel);
  };
  const auto subtract = [&](Value* w, int j) {  // second pass only: w -= V_j h, beta = ||w||
    gmres_subtract_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), basis.data(), j + 1,
                                                                    h.data(), w, n, run.partials(), run.counter());
    SPMV_CHECK_LAUNCH(gmres_subtract_kernel);
  };
  const auto global_beta = [&] {  // distributed: the second pass's ||w|| over every process's rows
    if (!run.distributed()) return;
    const int count = run.global_rows(run.partials(), 1);
    gmres_global_beta_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), count);
    SPMV_CHECK_LAUNCH(gmres_global_beta_kernel);
  };

  const auto residual_and_open_cycle = [&](int first) {
    SPMV_CUDA_CHECK(cudaMemcpyAsync(v0, b, bytes, cudaMemcpyDeviceToDevice, st));
    run.apply(Value(-1), x, Value(1), v0);
    dot_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), v0, v0, n, run.partials());
    SPMV_CHECK_LAUNCH(dot_kernel);
    const int count = run.global_rows(run.partials(), 1);
    gmres_restart_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), g.data(), m, run.partials(),
                                                       count, run.history(), first);
    SPMV_CHECK_LAUNCH(gmres_restart_kernel);
    orthonormalise(v0);
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
      dots(w, j, 0);
      // The second Gram-Schmidt pass: always enqueued (no host round trip), skipped on the device
      // unless the finish kernel found w.w - h.h <= w.w / 2 (kReorthogonaliseBelow).
      subtract(w, j);
      dots(w, j, 1);
      subtract(w, j);
      global_beta();
      gmres_rotation_kernel<<<1, 1, 0, st>>>(run.state(), scalars.data(), hess.data(), cs.data(), sn.data(), g.data(),
                                             m, j, run.history());
      SPMV_CHECK_LAUNCH(gmres_rotation_kernel);
      orthonormalise(w);
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
