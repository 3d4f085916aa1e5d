// Right-preconditioned GMRES(m) on the device, the recurrence of src/solvers/gmres.cpp (Arnoldi with
// one classical Gram-Schmidt pass, its norm by Pythagoras, a fused update + normalisation that also
// measures the new vector's loss of orthogonality, a second pass only when that loss exceeds sqrt(eps):
// src/solvers/gmres_arnoldi.hpp; Givens rotations). The Hessenberg matrix, the rotations, g and y live on
// the device, and so does every decision: the finish kernels choose beta and whether to correct, the
// rotation kernel applies the stopping rule and closes the cycle (converged, max iterations, breakdown,
// invariant subspace or m columns), after which the cycle's remaining kernels do nothing. Per Arnoldi
// step, on one stream:
//   scale_kernel (z = M^-1 v_j) | apply w = A z
//   | gmres_multi_dot_kernel (V_j^T w and w.w, one sweep: per-block partials)
//   | gmres_finish_kernel (h, the Hessenberg column; last block: beta1 = sqrt(w.w - h.h))
//   | gmres_orthonormalise_kernel (v = (w - V_j h) / beta1 in place, with V_j^T v and v.v: one sweep
//     while j + 1 <= kGmresDotColumns, else the update and then a multi-dot)
//   | gmres_finish_kernel (s; last block: the loss, the correction's decision and Hessenberg column)
//   | the correction, each kernel returning at once unless the finish asked for it:
//     gmres_subtract_kernel (v -= V_j s; last block: rho = ||v||) | gmres_rescale_kernel (v /= rho)
//   | gmres_rotation_kernel (1 thread).
// Distributed solves (SolverOptions::device_global_sum) sum every set of partials across the processes
// before its finish (DeviceRun::global_rows), and recompute the correction's ||v|| globally.
// Per cycle: gmres_solve_kernel (1 thread: y = R^-1 g) | gmres_update_kernel (x += M^-1 V y), then the
// restart: r = b - A x into v_0 | dot_kernel | gmres_restart_kernel | gmres_rescale_kernel.
// With SolverOptions::gmres_s_step > 1 (a basis in the value type) the cycles after the first build their
// columns in s-step blocks (the s-step section below; src/solvers/gmres_sstep.hpp), falling back to the
// Arnoldi steps above for the rest of a cycle when a block is refused.
#include <cstdio>
#include <string>

#include "core/debug_log.hpp"
#include "cuda/solvers/solver_kernels.cuh"
#include "solvers/gmres_sstep.hpp"

namespace spmv::cuda::solvers {
namespace {

using spmv::solvers::kGmresDotColumns;

struct GmresScalars {
  int cycle_open = 0;     // Arnoldi steps of this cycle still to run
  int cycle_columns = 0;  // Krylov vectors that enter this cycle's update
  int pythagoras = 0;     // w.w - h.h was positive: beta1 is the norm of w - V_j h
  int correct = 0;        // this step runs the second Gram-Schmidt pass
  int rescale = 0;        // gmres_rescale_kernel multiplies by inv_norm (v_0, or a corrected step)
  double beta1 = 0;       // the single pass's ||w - V_j h|| (||w||, or 1 for w = 0, when Pythagoras failed)
  double beta = 0;        // this step's h_{j+1,j}
  double inv_norm = 0;    // the scaling of the next update or rescale
  int claimed = 0;        // the cycle ended on an estimate the restart must confirm (compressed basis)
  double refused = 0;     // the true residual of the last refused estimate
};

__device__ inline bool arnoldi_running(const SolverState* s, const GmresScalars* g) {
  return running(s) && g->cycle_open;
}

// After the correction's subtraction: rho = ||v||, h_{j+1,j} = beta1 rho, and v /= rho unless rho is 0.
__device__ inline void set_corrected_norm(GmresScalars* c, double norm2) {
  const double rho = sqrt(norm2);
  c->beta = c->beta1 * rho;
  c->rescale = rho > 0 && isfinite(rho) ? 1 : 0;
  c->inv_norm = 1.0 / rho;
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
  } else if (s->iterations >= s->max_iterations) {  // only after an estimate that was not confirmed
    s->residual = beta;
    s->status = kMaxIterations;
  } else if (c->claimed) {  // a refused estimate: no progress since the last one ends the solve (gmres.cpp)
    if (c->refused > 0 && beta >= c->refused) {
      s->residual = beta;
      stop_on_breakdown(s, kGmresStagnated);
    }
    c->refused = beta;
  }
  c->claimed = 0;
  if (!running(s)) return;
  for (int i = 0; i <= m; ++i) g[i] = 0;
  g[0] = beta;
  c->inv_norm = 1.0 / beta;  // v_0 = r / beta
  c->rescale = 1;
  c->cycle_open = 1;
}

// z = M^-1 v_j, the product's input: dinv .* v, or v widened from a compressed basis (dinv null).
template <class Value, class Basis>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_scale_kernel(const SolverState* s, const GmresScalars* c, const Value* dinv, const Basis* v, Value* z,
                       std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  SPMV_SOLVER_LOOP(i, n) z[i] = dinv ? dinv[i] * static_cast<Value>(v[i]) : static_cast<Value>(v[i]);
}

// How the two sweeps over the basis (multi-dot, fused update) lay a register tile of kColumns columns
// over their threads. Each thread owns kVector = kWide consecutive rows, read with one 16-byte load per
// column (the basis's column stride is padded to keep them aligned), and kPerLane = 4 columns of the
// tile; kLanes adjacent lanes (up to 8) share the rows and split the columns. Why: with a thread per row
// and all 32 columns in its registers the fused update took 226 registers (one block per SM), both
// sweeps issued 4- or 8-byte loads, and they ran at 37-70% of the copy bandwidth (H200, ncu; the f32
// sweeps, with half the bytes per load, slowest). Here every load moves 16 bytes per lane and a tile
// keeps few registers, so more warps keep loads in flight.
// Rows per thread of the sweeps: one 16-byte load. For an fp16 basis (8 rows) the fused update spills
// 48 bytes at its 64 registers, yet ran 3% faster a GMRES step than with 8-byte loads of 4 rows and no
// spill (H100, f32 GMRES(30): poisson2d 2000^2 0.281 against 0.290 ms, fem3d 160^3 0.388 against 0.397).
template <class Value>
inline constexpr int kWide = 16 / sizeof(Value);

template <int kTileColumns, int kWidth>
struct SweepTile {
  static constexpr int kColumns = kTileColumns;
  static constexpr int kVector = kWidth;                   // rows per thread, one load per column
  // 4 columns a lane (1-4 lanes; 8 in the 32-column tile), 3 in the 24-column one (8 lanes).
  static constexpr int kLanes = kColumns >= 24 ? 8 : kColumns >= 16 ? 4 : kColumns >= 4 ? kColumns / 4 : 1;
  static constexpr int kPerLane = kColumns / kLanes;
  static constexpr int kGroups = kSolverThreads / kLanes;  // row groups of a block
};

template <class Value, int kVector>
struct alignas(sizeof(Value) * kVector) Packed {
  Value v[kVector];
};

template <class Value, int kVector>
__device__ inline Packed<Value, kVector> load_packed(const Value* p) {
  return *reinterpret_cast<const Packed<Value, kVector>*>(p);
}

// sum_r a.v[r] * b.v[r] in Sum, widened to double.
template <class Sum, class A, class B, int kVector>
__device__ inline double row_dot(const Packed<A, kVector>& a, const Packed<B, kVector>& b) {
  Sum total = 0;
#pragma unroll
  for (int r = 0; r < kVector; ++r) total += static_cast<Sum>(a.v[r]) * static_cast<Sum>(b.v[r]);
  return static_cast<double>(total);
}

// The row range of a sweep: this thread's first row and the grid's stride (both multiples of kVector).
template <class Tile>
__device__ inline std::int64_t first_row() {
  return (blockIdx.x * std::int64_t(Tile::kGroups) + threadIdx.x / Tile::kLanes) * Tile::kVector;
}
template <class Tile>
__device__ inline std::int64_t row_stride() {
  return std::int64_t(gridDim.x) * Tile::kGroups * Tile::kVector;
}

// Block sums of the per-thread column sums: lane q of a row group holds columns q * kPerLane + k of the
// tile, and lane q = 0 also `extra`. Warp shuffles sum the lanes of the same q into one shared-memory row
// per warp; then thread t sums tile column t < count over the warps into
// partials[row(t) * kMaxReductionBlocks + blockIdx.x], and with has_extra (block-uniform) the extra
// into row(count).
template <class Tile, class Row>
__device__ inline void store_tile_sums(double (&sum)[Tile::kPerLane], double extra, bool has_extra, int count,
                                       double* partials, Row&& row) {
  constexpr int kWarps = kSolverThreads / 32;
  constexpr int kExtra = 1;
  __shared__ double warp_sums[kWarps][Tile::kColumns + kExtra];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int o = 16; o >= Tile::kLanes; o >>= 1) {
#pragma unroll
    for (int k = 0; k < Tile::kPerLane; ++k) sum[k] += __shfl_xor_sync(0xffffffffu, sum[k], o);
    extra += __shfl_xor_sync(0xffffffffu, extra, o);
  }
  if (lane < Tile::kLanes) {  // lane q holds the sums of q's columns
#pragma unroll
    for (int k = 0; k < Tile::kPerLane; ++k) warp_sums[warp][lane * Tile::kPerLane + k] = sum[k];
    if (lane == 0) warp_sums[warp][Tile::kColumns] = extra;
  }
  __syncthreads();
  for (int t = threadIdx.x; t < count + (has_extra ? 1 : 0); t += kSolverThreads) {
    const int slot = t < count ? t : Tile::kColumns;
    double total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w][slot];
    partials[static_cast<std::size_t>(row(t)) * kMaxReductionBlocks + blockIdx.x] = total;
  }
}

// Block (x, y) sums its share of V_c . w for the columns c = y * kGmresDotColumns + t < columns of its
// tile into partials[c * kMaxReductionBlocks + x], and the blocks of grid row 0 w.w into row `columns`:
// one sweep over the rows reads every column and w once. The basis is Basis, w is W (the value type, or
// Basis when w is a basis column); w.w is summed from w's own values.
template <class Basis, class W, int kColumns, int kVector>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_multi_dot_kernel(const SolverState* s, const GmresScalars* c, const Basis* basis, const W* w,
                           int columns, std::int64_t n, double* partials) {
  if (!arnoldi_running(s, c)) return;
  using Tile = SweepTile<kColumns, kVector>;
  const int tile_first = blockIdx.y * kGmresDotColumns;
  const int q = threadIdx.x % Tile::kLanes;
  const int first = tile_first + q * Tile::kPerLane;  // this lane's columns
  const bool self = blockIdx.y == 0;                  // this block also sums w.w (lane q = 0)
  double sum[Tile::kPerLane] = {}, ww = 0;
  for (std::int64_t i = first_row<Tile>(); i < n; i += row_stride<Tile>()) {
    const auto wv = load_packed<W, kVector>(w + i);
    Packed<Basis, kVector> col[Tile::kPerLane];
#pragma unroll
    for (int k = 0; k < Tile::kPerLane; ++k)
      if (first + k < columns) col[k] = load_packed<Basis, kVector>(basis + (first + k) * n + i);
#pragma unroll
    for (int k = 0; k < Tile::kPerLane; ++k)
      if (first + k < columns)
#pragma unroll
        for (int r = 0; r < kVector; ++r) sum[k] += static_cast<double>(col[k].v[r]) * static_cast<double>(wv.v[r]);
    if (self && q == 0)
#pragma unroll
      for (int r = 0; r < kVector; ++r) ww += static_cast<double>(wv.v[r]) * static_cast<double>(wv.v[r]);
  }
  const int count = max(0, min(kColumns, columns - tile_first));
  store_tile_sums<Tile>(sum, ww, self, count, partials,
                        [&](int t) { return t < count ? tile_first + t : columns; });
}

// The fused update of a step with columns = j + 1 <= kColumns: v = (v - V_j h) * inv_norm in place (v is
// w, column j + 1), and from the same loads s_k = V_k . v (partials row k < columns) and v.v (row
// columns). The lanes of a row group add their columns' share of V_j h with warp shuffles; lane 0
// stores v. Four blocks per SM: the f32 variants took 80 registers (three blocks) and ran at 55% of
// DRAM throughput where the multi-dot, at four, reached 78% (H100, ncu).
// With a compressed basis w is the value type's product A z and v, column j + 1, is written rounded to
// Basis (its loss of orthogonality is measured on the stored values); otherwise w is v itself.
template <class Basis, class W, int kColumns, int kVector>
__global__ void __launch_bounds__(kSolverThreads, 4)
    gmres_orthonormalise_kernel(const SolverState* s, const GmresScalars* c, const Basis* basis, const double* h,
                                const W* w, Basis* v, int columns, std::int64_t n, double* partials) {
  if (!arnoldi_running(s, c)) return;
  using Tile = SweepTile<kColumns, kVector>;
  // V_j h of a row in double, or in float for an fp16 basis, whose rounding of the result (2^-11) a
  // float sum of at most 32 terms (~32 * 2^-24) does not reach; in double its 8 rows a thread spilled.
  using Projection = std::conditional_t<std::is_same_v<Basis, spmv::solvers::ScaledHalf>, float, double>;
  __shared__ double coef[kColumns];
  for (int k = threadIdx.x; k < kColumns; k += kSolverThreads) coef[k] = k < columns ? h[k] : 0.0;
  __syncthreads();
  const int q = threadIdx.x % Tile::kLanes, first = q * Tile::kPerLane;
  // The lanes of this row group: they share i, so they take the same branches.
  const unsigned group = ((1u << Tile::kLanes) - 1u) << (threadIdx.x % 32 / Tile::kLanes * Tile::kLanes);
  const Projection scale = static_cast<Projection>(c->inv_norm);
  double sum[Tile::kPerLane] = {}, vv = 0;
  for (std::int64_t i = first_row<Tile>(); i < n; i += row_stride<Tile>()) {
    const auto wv = load_packed<W, kVector>(w + i);
    Packed<Basis, kVector> col[Tile::kPerLane];
#pragma unroll
    for (int k = 0; k < Tile::kPerLane; ++k)
      if (first + k < columns) col[k] = load_packed<Basis, kVector>(basis + (first + k) * n + i);
      else col[k] = {};
    Projection projection[kVector] = {};
#pragma unroll
    for (int k = 0; k < Tile::kPerLane; ++k)
#pragma unroll
      for (int r = 0; r < kVector; ++r)
        projection[r] += static_cast<Projection>(coef[first + k]) * static_cast<Projection>(col[k].v[r]);
#pragma unroll
    for (int o = 1; o < Tile::kLanes; o <<= 1)
#pragma unroll
      for (int r = 0; r < kVector; ++r) projection[r] += __shfl_xor_sync(group, projection[r], o);
    Packed<Basis, kVector> out;
#pragma unroll
    for (int r = 0; r < kVector; ++r)
      out.v[r] = static_cast<Basis>((wv.v[r] - static_cast<W>(projection[r])) * scale);
    if (q == 0) *reinterpret_cast<Packed<Basis, kVector>*>(v + i) = out;
    if constexpr (std::is_same_v<Projection, float>) {
      // fp16: the dots of the thread's rows in float first (8 terms), then into the double sums.
      if (q == 0) vv += row_dot<Projection>(out, out);
#pragma unroll
      for (int k = 0; k < Tile::kPerLane; ++k) sum[k] += row_dot<Projection>(col[k], out);
    } else {
      if (q == 0)
#pragma unroll
        for (int r = 0; r < kVector; ++r) vv += static_cast<double>(out.v[r]) * static_cast<double>(out.v[r]);
#pragma unroll
      for (int k = 0; k < Tile::kPerLane; ++k)
#pragma unroll
        for (int r = 0; r < kVector; ++r) sum[k] += static_cast<double>(col[k].v[r]) * static_cast<double>(out.v[r]);
    }
  }
  // s_0 .. s_{columns-1} in rows 0 .. columns - 1, v.v (tile column kColumns) in row columns.
  store_tile_sums<Tile>(sum, vv, true, columns, partials, [&](int t) { return t; });
}

// The update alone, v = (w - V h) * inv_norm over `columns` columns, for steps wider than one tile
// (V_j^T v and v.v then come from a multi-dot).
template <class Basis, class W>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_update_column_kernel(const SolverState* s, const GmresScalars* c, const Basis* basis, const double* h,
                               const W* w, Basis* v, int columns, std::int64_t n) {
  if (!arnoldi_running(s, c)) return;
  const double scale = c->inv_norm;
  SPMV_SOLVER_LOOP(i, n) {
    double projection = 0;
    for (int col = 0; col < columns; ++col) projection += h[col] * static_cast<double>(basis[col * n + i]);
    v[i] = static_cast<Basis>((w[i] - static_cast<W>(projection)) * scale);
  }
}

enum FinishStage : int { kProjection = 0, kLoss = 1 };

// Block b < gridDim.x - 1 sums row b of the partials into out[b], the last row (w.w or v.v) into
// out[gridDim.x - 1]; the last block to finish decides (src/solvers/gmres_arnoldi.hpp's arnoldi_step,
// the same tests):
//  - kProjection (out = h): the Hessenberg column is h; beta1 = sqrt(w.w - h.h) when above min_share
//    w.w, else ||w|| (1 for w = 0; the correction then always runs); a non-finite w.w passes through to
//    the rotation;
//  - kLoss (out = s): loss = max(|s_k|, |v.v - 1|); above `tolerance` (or without Pythagoras) the
//    correction runs and the column becomes h + beta1 s; otherwise beta = beta1.
__global__ void gmres_finish_kernel(const SolverState* s, GmresScalars* c, const double* partials, int count,
                                    double* out, double* hess_column, int stage, double tolerance,
                                    double min_share, unsigned int* counter) {
  if (!arnoldi_running(s, c)) return;
  const double sum = finish_sum(partials + static_cast<std::size_t>(blockIdx.x) * kMaxReductionBlocks, 0, count);
  if (threadIdx.x != 0) return;
  const int columns = static_cast<int>(gridDim.x) - 1;  // j + 1
  out[blockIdx.x] = sum;
  if (stage == kProjection && static_cast<int>(blockIdx.x) < columns) hess_column[blockIdx.x] = sum;
  __threadfence();  // out[blockIdx.x] is visible before this block is counted
  if (atomicAdd(counter, 1u) != gridDim.x - 1) return;
  *counter = 0;
  const double last = __ldcg(out + columns);  // at L2, where the other blocks' fenced stores are
  if (stage == kProjection) {
    double hh = 0;
    for (int k = 0; k < columns; ++k) {
      const double v = __ldcg(out + k);
      hh += v * v;
    }
    const double ww = last;
    c->pythagoras = isfinite(ww) && ww - hh > min_share * ww ? 1 : 0;
    c->beta1 = !isfinite(ww) ? ww : c->pythagoras ? sqrt(ww - hh) : ww > 0 ? sqrt(ww) : 1.0;
    c->inv_norm = 1.0 / c->beta1;
    c->correct = 0;
    c->rescale = 0;
    return;
  }
  c->beta = c->beta1;
  if (!isfinite(c->beta1)) return;  // the rotation reports it
  double loss = fabs(last - 1.0);
  for (int k = 0; k < columns; ++k) loss = fmax(loss, fabs(__ldcg(out + k)));
  if (c->pythagoras && loss <= tolerance) return;
  c->correct = 1;
  for (int k = 0; k < columns; ++k) hess_column[k] += c->beta1 * __ldcg(out + k);
}

// The correction's v -= V s over `columns` columns, with ||v||^2 of the result (last block: rho, beta =
// beta1 rho and the rescale by 1 / rho; rho = 0 leaves v as it is, and the rotation ends the cycle).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_subtract_kernel(const SolverState* s, GmresScalars* c, const Value* basis, int columns, const double* coef,
                          Value* v, std::int64_t n, double* partials, unsigned int* counter) {
  if (!arnoldi_running(s, c) || !c->correct) return;
  using Arithmetic = spmv::solvers::basis_arithmetic_t<Value>;
  double norm2[1] = {0};
  SPMV_SOLVER_LOOP(i, n) {
    double sum = 0;
    for (int col = 0; col < columns; ++col) sum += coef[col] * static_cast<double>(basis[col * n + i]);
    const auto updated = static_cast<Value>(static_cast<Arithmetic>(v[i]) - static_cast<Arithmetic>(sum));
    v[i] = updated;
    norm2[0] += static_cast<double>(updated) * static_cast<double>(updated);
  }
  reduce_in_last_block<1>(norm2, partials, counter, [&](const double* t) { set_corrected_norm(c, t[0]); });
}

// Distributed solves: the correction's ||v|| from the norm partials that gmres_subtract_kernel stored and
// DeviceRun::global_rows summed across the processes (its last block saw only this process's part).
__global__ void gmres_global_norm_kernel(const SolverState* s, GmresScalars* c, const double* partials, int count) {
  if (!arnoldi_running(s, c) || !c->correct) return;
  const double sum = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) set_corrected_norm(c, sum);
}

// v = r * inv_norm when asked (v_0 at a restart: r may be v itself, or the value type's residual
// rounded into a compressed basis; a corrected step's v_{j+1} in place).
template <class Value, class Basis>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_rescale_kernel(const SolverState* s, const GmresScalars* c, const Value* r, Basis* v, std::int64_t n) {
  if (!arnoldi_running(s, c) || !c->rescale) return;
  using Arithmetic = spmv::solvers::basis_arithmetic_t<Value>;
  const auto scale = static_cast<Arithmetic>(c->inv_norm);
  SPMV_SOLVER_LOOP(i, n) v[i] = static_cast<Basis>(static_cast<Arithmetic>(r[i]) * scale);
}

// Arnoldi step j's end (one thread): h_{j+1,j} = beta, rotations, g, the stopping rule. With `confirm`
// (a compressed basis: gmres.cpp says why) a convergence of the estimate only closes the cycle, and the
// restart's true residual decides.
__device__ inline void rotate_column(SolverState* s, GmresScalars* c, double* hess, double* cs, double* sn, double* g,
                                     int m, int j, double* history, int confirm) {
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
  if (confirm && s->status == kConverged) {
    s->status = kRunning;
    c->cycle_open = 0;
    c->claimed = 1;
  }
  if (!running(s) || h_next == 0 || j + 1 == m) c->cycle_open = 0;
}

__global__ void gmres_rotation_kernel(SolverState* s, GmresScalars* c, double* hess, double* cs, double* sn,
                                      double* g, int m, int j, double* history, int confirm) {
  if (!arnoldi_running(s, c)) return;
  rotate_column(s, c, hess, cs, sn, g, m, j, history, confirm);
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

// x += M^-1 V y over the cycle's columns (column c of V at basis + c * ld).
template <class Value, class Basis>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_update_kernel(const GmresScalars* c, const Value* dinv, const Basis* basis, std::int64_t ld,
                        const double* y, Value* x, std::int64_t n) {
  const int k = c->cycle_columns;
  if (k == 0) return;
  SPMV_SOLVER_LOOP(i, n) {
    double sum = 0;
    for (int col = 0; col < k; ++col) sum += y[col] * static_cast<double>(basis[col * ld + i]);
    x[i] += dinv ? dinv[i] * static_cast<Value>(sum) : static_cast<Value>(sum);
  }
}

// The sweeps' variant: the smallest register tile that holds the columns (a bounded set, so that the
// early steps of a cycle keep more loads per thread in flight). kWide of the basis's type: one 16-byte
// load of each column per thread. The 24-column tile: with 17 columns the 32-column one left 15 of its
// 32 lane-columns idle, and its sweeps ran at 42-45% of DRAM throughput against 65-72% for 16 columns in
// the 16-column tile (H100, ncu, fp16 basis: 106 us against 59).
template <class Basis, class W, template <class, class, int, int> class Kernel, class Launch>
void launch_tile(int columns, Launch&& launch) {
  if (columns <= 4) return launch(Kernel<Basis, W, 4, kWide<Basis>>{});
  if (columns <= 8) return launch(Kernel<Basis, W, 8, kWide<Basis>>{});
  if (columns <= 16) return launch(Kernel<Basis, W, 16, kWide<Basis>>{});
  if (columns <= 24) return launch(Kernel<Basis, W, 24, kWide<Basis>>{});
  launch(Kernel<Basis, W, kGmresDotColumns, kWide<Basis>>{});
}

template <class Basis, class W, int kColumns, int kVector>
struct MultiDot {
  static constexpr auto kernel = gmres_multi_dot_kernel<Basis, W, kColumns, kVector>;
};
template <class Basis, class W, int kColumns, int kVector>
struct Orthonormalise {
  static constexpr auto kernel = gmres_orthonormalise_kernel<Basis, W, kColumns, kVector>;
};

// The multi-dot of w against `columns` basis columns, plus w.w (row `columns`), one grid row per
// kGmresDotColumns columns.
template <class Basis, class W>
void launch_multi_dot(cudaStream_t st, int blocks, const SolverState* s, const GmresScalars* c, const Basis* basis,
                      const W* w, int columns, std::int64_t n, double* partials) {
  const dim3 grid(blocks, (std::max(columns, 1) + kGmresDotColumns - 1) / kGmresDotColumns);
  launch_tile<Basis, W, MultiDot>(columns, [&](auto variant) {
    decltype(variant)::kernel<<<grid, kSolverThreads, 0, st>>>(s, c, basis, w, columns, n, partials);
    SPMV_CHECK_LAUNCH(gmres_multi_dot_kernel);
  });
}

// The fused update of a step over `columns` = j + 1 columns (<= kGmresDotColumns).
template <class Basis, class W>
void launch_orthonormalise(cudaStream_t st, int blocks, const SolverState* s, const GmresScalars* c,
                           const Basis* basis, const double* h, const W* w, Basis* v, int columns, std::int64_t n,
                           double* partials) {
  launch_tile<Basis, W, Orthonormalise>(columns, [&](auto variant) {
    decltype(variant)::kernel<<<blocks, kSolverThreads, 0, st>>>(s, c, basis, h, w, v, columns, n, partials);
    SPMV_CHECK_LAUNCH(gmres_orthonormalise_kernel);
  });
}

// ----- s-step GMRES (SolverOptions::gmres_s_step > 1; src/solvers/gmres_sstep.hpp has the algorithm and the
// small-matrix work, which the one-thread kernels below run with the CPU's code) -----
//
// A block of sb steps from column j0, on one stream:
//   sb x (gmres_sstep_newton_kernel | apply): w_{i+1} = sigma_i (A M^-1 w_i - alpha_i w_i + gamma_i w_{i-1})
//   | gmres_sstep_dots_kernel (C = V^T W, one read of V and W) | finish
//   | gmres_sstep_update_kernel (W -= V C with D = V^T W and G = W^T W from the same loads) | finish
//   | gmres_sstep_decide_kernel (Cholesky QR of G, the loss D R^-1, the second pass's decision)
//   | the second pass, each kernel returning at once unless the decision asked for it
//   | gmres_sstep_scale_kernel (W <- W R^-1 with W^T W) | finish | gmres_sstep_check_kernel (CholQR2's
//     decision) | the second Cholesky QR, returning at once unless asked
//   | gmres_sstep_close_kernel (the Hessenberg columns, a row per thread; then the rotations and the
//     stopping rule, one thread)
//   | one copy of the block's outcome to the host and a wait: the host learns how many columns the block
//     gave and whether the cycle is still open, and enqueues the next block or Arnoldi steps.
// Why the decisions on the device and one wait per block: the s x s and (m + 1) x s work is a few thousand
// flops, and doing it on the host would take two waits per block (after the update, for the second pass;
// after the scaling, for CholQR2) where the device's one-thread kernels take two launches; the one wait
// that remains tells the host what to enqueue next (a block's columns vary when it falls back), which
// every-decision-on-the-device enqueuing (the s = 1 solver's) could only do with idle launches of both
// kinds of step. Cost: one host round trip per block, against one per step never (the s = 1 solver has
// none) but against two sweeps over V per step saved.

namespace sstep = spmv::solvers::sstep;
using sstep::kMaxS;

// The block's decisions on the device (gmres_sstep.hpp steps 4 and 5).
struct SStepScalars {
  int p1 = 0;             // columns the first pass's Cholesky QR accepted
  int p = 0;              // columns the block gives (0: refused)
  int second_pass = 0;    // the BCGS2 pass runs
  int second_cholqr = 0;  // CholQR2 runs
  int passes = 0;         // BCGS2 passes over the solve
  int cholqrs = 0;        // CholQR2 passes over the solve
  double r[kMaxS * kMaxS];  // W = Q C + Q_new R (upper, ld kMaxS)
  double x[kMaxS * kMaxS];  // what the next scaling sweep applies: R^-1, or R3^-1
};

// How the block sweeps lay rows and columns over their threads. A row group of `lanes` adjacent lanes owns
// kRows consecutive rows (SStepSweep), read with one load of kRows values a column (16 bytes for the f64
// dots; the column stride ld is a multiple of kWide, so the loads stay aligned and need no tail). Every
// kernel is templated on the block's width sb (2..kMaxS, dispatch_block_width), so that a thread's arrays
// are sized by sb, not by kMaxS.
//  - dots (C = V^T W): lane q of a group (lanes 1..8, the fewest that cover V with kDotsPerLane columns a
//    lane) takes V's columns q + k lanes and sums them against all sb columns of W, which every lane of the
//    group loads (lanes that load the same address in one instruction share its transaction).
//  - update (W -= V C, with D = V^T W and G = W^T W of the result): 4 lanes a group (kGramLanes), lane q
//    takes V's columns q + 4 k, k < kPerLane (4, or 8 for V wider than 16 and sb <= kUpdateWideMaxS), and
//    the group adds its projections with shuffles; G's column b goes to lane b (b < 4) or 7 - b, at most 9
//    sums a lane (gram_slot).
//  - scale (W <- W X, with W^T W): a thread a kScaleRows rows, holding all sb (sb + 1) / 2 Gram sums.
// Why: the first version (8 lanes a row sharing the row's W loads, scalar loads, kMaxS-wide arrays) moved
// 32 bytes a load instruction, and its update took 128 registers with spills (two blocks per SM): its
// sweeps ran at 10-20% of the bandwidth. Measured (H200, the sweeps alone on 4,096,000 rows, sb = 5, V of
// 16 / 31 columns; GB/s of the bytes each must move): f64 dots 4050 / 3010 (first version 800 / 1230),
// update 1950 / 2200 (420 / 600), scale 3670 (550); f32 dots 2380 / 2040 (290 / 460), update 1330 / 1010
// (190 / 280), scale 2270 (330). The update stays the slowest: its 4 lanes a row each load W and add the
// projection by shuffles, the price of holding D's sums split by V's columns (a thread holding a row's
// whole D would need cols x sb sums); software pipelining its loads (the next rows' before this rows'
// arithmetic) measured 5% slower. Registers (ptxas, sm_90): see docs/SOLVERS.md.
template <class Value>
struct SStepSweep {
  static constexpr int kDotsRows = kWide<Value>;  // the dots: one 16-byte load a column
  static constexpr int kUpdateRows = 2;           // the update: its projection is summed in double per row
  static constexpr int kScaleRows = 2;            // the scaling: a thread holds the rows' kSB x kSB sums
};
inline constexpr int kSStepTile = 32;    // V's columns a row group of the dots covers (lanes x columns a lane)
inline constexpr int kDotsPerLane = 4;   // V's columns a lane of the dots holds
inline constexpr int kGramLanes = 4;     // lanes of a group of the update (all of them hold Gram sums)
static_assert(kMaxS <= 2 * kGramLanes, "gram_owner maps the block's columns onto kGramLanes lanes");

// The lanes of a group for `cols` columns of V, per_lane a lane (at least `minimum`, at most kSStepTile /
// per_lane).
inline int sstep_lanes(int cols, int per_lane, int minimum) {
  int lanes = minimum;
  while (lanes * per_lane < std::min(cols, kSStepTile)) lanes *= 2;
  return lanes;
}

// The lane of a group that sums G's column b (its entries a <= b), and the register that holds entry (a, b)
// there: lane b's first column (b < 4) takes registers 0..b, lane 7 - b's second column the next.
__host__ __device__ constexpr int gram_owner(int b) { return b < kGramLanes ? b : 2 * kGramLanes - 1 - b; }
__host__ __device__ constexpr int gram_slot(int a, int b) {
  return b < kGramLanes ? a : gram_owner(b) + 1 + a;
}
template <int kSB>
__host__ __device__ constexpr int gram_slots() {
  int most = 0;
  for (int b = 0; b < kSB; ++b) most = gram_slot(b, b) + 1 > most ? gram_slot(b, b) + 1 : most;
  return most;
}

// The row groups of a sweep: this group's first row, the grid's stride, and the group's lane mask.
template <int kRows>
__device__ inline std::int64_t sstep_first_row(int lanes) {
  return (blockIdx.x * std::int64_t(kSolverThreads) + threadIdx.x) / lanes * kRows;
}
template <int kRows>
__device__ inline std::int64_t sstep_row_stride(int lanes) {
  return std::int64_t(gridDim.x) * kSolverThreads / lanes * kRows;
}
__device__ inline unsigned sstep_group_mask(int lanes) {
  return (lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u) << (threadIdx.x % 32 / lanes * lanes);
}

// Block sums of per-lane sums: lane q of a group (q < owners) holds sum[k] for the entry entry(q, k). Warp
// shuffles add the groups of a warp (lanes of the same q), shared memory the warps; thread e < owners * kK
// then writes the block's sum of entry(e / kK, e % kK) to partials[row * kMaxReductionBlocks + blockIdx.x]
// when entry gives a row >= 0.
template <int kMaxOwners, int kK, class Entry>
__device__ inline void store_sstep_sums(double (&sum)[kK], int lanes, int owners, double* partials, Entry&& entry) {
  constexpr int kWarps = kSolverThreads / 32;
  __shared__ double warp_sums[kWarps][kMaxOwners * kK];  // owners <= kMaxOwners
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o >= lanes; o >>= 1)
#pragma unroll
    for (int k = 0; k < kK; ++k) sum[k] += __shfl_xor_sync(0xffffffffu, sum[k], o);
  if (lane < owners)
#pragma unroll
    for (int k = 0; k < kK; ++k) warp_sums[warp][lane * kK + k] = sum[k];
  __syncthreads();
  for (int e = threadIdx.x; e < owners * kK; e += kSolverThreads) {
    const int row = entry(e / kK, e % kK);
    if (row < 0) continue;
    double total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w][e];
    partials[static_cast<std::size_t>(row) * kMaxReductionBlocks + blockIdx.x] = total;
  }
  __syncthreads();  // warp_sums may be reused by a second call
}

// G's block sums from the Gram lanes' registers (gram_slot) into partials rows base + a + b * kSB, a <= b;
// the rows a > b written as 0 (the finish reads all kSB x kSB).
template <int kSB>
__device__ inline void store_gram_sums(double (&gsum)[gram_slots<kSB>()], int lanes, double* partials, int base) {
  store_sstep_sums<kGramLanes>(gsum, lanes, kGramLanes, partials, [&](int lane, int slot) {
    const int b = slot <= lane ? lane : 2 * kGramLanes - 1 - lane;
    const int a = slot <= lane ? slot : slot - lane - 1;
    return b < kSB && a <= b ? base + a + b * kSB : -1;
  });
  for (int e = threadIdx.x; e < kSB * kSB; e += kSolverThreads)
    if (e % kSB > e / kSB) partials[static_cast<std::size_t>(base + e) * kMaxReductionBlocks + blockIdx.x] = 0;
}

// Whether a guarded block kernel runs: the Arnoldi state open, and `run_if` null or set.
__device__ inline bool sstep_runs(const SolverState* s, const GmresScalars* c, const int* run_if) {
  return arnoldi_running(s, c) && (!run_if || *run_if);
}

// Step i of a block: z = M^-1 w_i (dinv non-null; n rows) and out = sigma (gamma w_{i-1} - alpha w_i) over
// the ld rows (padding rows stay 0); the apply then adds sigma A z (beta = 1).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_sstep_newton_kernel(const SolverState* s, const GmresScalars* c, const Value* dinv, const Value* wi,
                              const Value* wprev, Value* z, Value* out, std::int64_t n, std::int64_t ld, double alpha,
                              double gamma, double sigma) {
  if (!arnoldi_running(s, c)) return;
  SPMV_SOLVER_LOOP(i, ld) {
    const Value v = wi[i];
    if (dinv && i < n) z[i] = dinv[i] * v;
    out[i] = static_cast<Value>(sigma * (gamma * static_cast<double>(wprev[i]) - alpha * static_cast<double>(v)));
  }
}

// partials row c + t * cols = A_c . W_t for the `cols` columns of a (stride ld) and the kSB of w: one read of
// each. Grid (blocks, ceil(cols / (kDotsPerLane lanes))): grid row y takes the columns from y kDotsPerLane
// lanes on (and reads W again; only for V wider than kSStepTile).
template <class Value, int kSB>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_sstep_dots_kernel(const SolverState* s, const GmresScalars* c, const int* run_if, const Value* a, int cols,
                            const Value* w, std::int64_t ld, int lanes, double* partials) {
  if (!sstep_runs(s, c, run_if)) return;
  constexpr int kRows = SStepSweep<Value>::kDotsRows;
  constexpr int kPerLane = kDotsPerLane;
  const int q = threadIdx.x % lanes;
  const int first = blockIdx.y * kPerLane * lanes + q;  // columns first + k * lanes
  double sum[kPerLane * kSB] = {};
  for (std::int64_t i = sstep_first_row<kRows>(lanes); i < ld; i += sstep_row_stride<kRows>(lanes)) {
    Packed<Value, kRows> wv[kSB], av[kPerLane];
#pragma unroll
    for (int t = 0; t < kSB; ++t) wv[t] = load_packed<Value, kRows>(w + t * ld + i);
#pragma unroll
    for (int k = 0; k < kPerLane; ++k)
      if (first + k * lanes < cols) av[k] = load_packed<Value, kRows>(a + (first + k * lanes) * ld + i);
#pragma unroll
    for (int k = 0; k < kPerLane; ++k)
      if (first + k * lanes < cols)
#pragma unroll
        for (int t = 0; t < kSB; ++t)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            sum[k * kSB + t] += static_cast<double>(av[k].v[r]) * static_cast<double>(wv[t].v[r]);
  }
  store_sstep_sums<kSStepTile / kPerLane>(sum, lanes, lanes, partials, [&](int lane, int e) {
    const int col = blockIdx.y * kPerLane * lanes + lane + e / kSB * lanes;
    return col < cols ? col + e % kSB * cols : -1;
  });
}

// The block update (gmres_sstep.hpp step 3): W_t <- W_t - sum_c coef[c + t * cols] V_c for t < kSB, the
// projection summed in double and rounded once; from the same loads, while cols <= kPerLane kGramLanes, D =
// V^T W of the result (partials rows c + t * cols), and always G = W^T W (rows cols * kSB + a + b * kSB, the
// entries a > b written as 0). Wider V: the lanes loop over the further columns for the projection, and D
// comes from a dots kernel after (launch_sstep_update). The coefficients sit in dynamic shared memory
// (cols * kSB doubles, V's column fastest: a warp's lanes read consecutive ones). The group's lanes add their
// columns' share of the projection with shuffles; lane q stores W's columns q + 4 k.
template <class Value, int kSB, int kPerLane>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_sstep_update_kernel(const SolverState* s, const GmresScalars* c, const int* run_if, const Value* basis,
                              int cols, const double* coef, Value* w, std::int64_t ld, double* partials) {
  if (!sstep_runs(s, c, run_if)) return;
  constexpr int kRows = SStepSweep<Value>::kUpdateRows;
  constexpr int kSlots = gram_slots<kSB>();
  constexpr int lanes = kGramLanes;
  extern __shared__ double coef_shared[];  // coef(col, t) at col + t * cols
  for (int e = threadIdx.x; e < cols * kSB; e += kSolverThreads) coef_shared[e] = coef[e];
  __syncthreads();
  const int q = threadIdx.x % lanes;
  const unsigned group = sstep_group_mask(lanes);
  const bool with_d = cols <= kPerLane * lanes;
  double dsum[kPerLane * kSB] = {}, gsum[kSlots] = {};
  for (std::int64_t i = sstep_first_row<kRows>(lanes); i < ld; i += sstep_row_stride<kRows>(lanes)) {
    Packed<Value, kRows> wv[kSB], av[kPerLane];
#pragma unroll
    for (int t = 0; t < kSB; ++t) wv[t] = load_packed<Value, kRows>(w + t * ld + i);
#pragma unroll
    for (int k = 0; k < kPerLane; ++k)
      if (q + k * lanes < cols) av[k] = load_packed<Value, kRows>(basis + (q + k * lanes) * ld + i);
      else av[k] = {};
    double projection[kSB][kRows] = {};
#pragma unroll
    for (int k = 0; k < kPerLane; ++k)
      if (q + k * lanes < cols)
#pragma unroll
        for (int t = 0; t < kSB; ++t)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            projection[t][r] += coef_shared[q + k * lanes + t * cols] * static_cast<double>(av[k].v[r]);
    for (int col = q + kPerLane * lanes; col < cols; col += lanes) {  // V wider than the lanes' columns
      const auto v = load_packed<Value, kRows>(basis + col * ld + i);
#pragma unroll
      for (int t = 0; t < kSB; ++t)
#pragma unroll
        for (int r = 0; r < kRows; ++r) projection[t][r] += coef_shared[col + t * cols] * static_cast<double>(v.v[r]);
    }
    for (int o = 1; o < lanes; o <<= 1)
#pragma unroll
      for (int t = 0; t < kSB; ++t)
#pragma unroll
        for (int r = 0; r < kRows; ++r) projection[t][r] += __shfl_xor_sync(group, projection[t][r], o);
    Packed<Value, kRows> out[kSB];
#pragma unroll
    for (int t = 0; t < kSB; ++t)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        out[t].v[r] = static_cast<Value>(static_cast<double>(wv[t].v[r]) - projection[t][r]);
    __syncwarp(group);  // every lane of the group has read its rows of W before any overwrites them
#pragma unroll
    for (int t = 0; t < kSB; ++t)
      if (t % lanes == q) *reinterpret_cast<Packed<Value, kRows>*>(w + t * ld + i) = out[t];
    if (with_d)
#pragma unroll
      for (int k = 0; k < kPerLane; ++k)
#pragma unroll
        for (int t = 0; t < kSB; ++t)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            dsum[k * kSB + t] += static_cast<double>(av[k].v[r]) * static_cast<double>(out[t].v[r]);
#pragma unroll
    for (int b = 0; b < kSB; ++b)
      if (gram_owner(b) == q)
#pragma unroll
        for (int a = 0; a <= b; ++a)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            gsum[gram_slot(a, b)] += static_cast<double>(out[a].v[r]) * static_cast<double>(out[b].v[r]);
  }
  if (with_d)
    store_sstep_sums<kGramLanes>(dsum, lanes, lanes, partials, [&](int lane, int e) {
      const int col = lane + e / kSB * lanes;
      return col < cols ? col + e % kSB * cols : -1;
    });
  store_gram_sums<kSB>(gsum, lanes, partials, cols * kSB);
}

// The scaling (gmres_sstep.hpp step 5): W <- W X over the block's first p columns (p and X from the
// decisions), each row's result summed in double and rounded once, and partials rows a + b * kSB = W_a . W_b
// (a <= b < p) of the stored result (the other entries written as 0). A thread a kScaleRows rows: it loads
// their kSB values, stores their result and holds all kSB (kSB + 1) / 2 Gram sums (the block widths are
// compiled one by one, so sb = 5 holds 15, not kMaxS's 36).
template <class Value, int kSB>
__global__ void __launch_bounds__(kSolverThreads)
    gmres_sstep_scale_kernel(const SolverState* s, const GmresScalars* c, const int* run_if, const SStepScalars* st,
                             Value* w, std::int64_t ld, double* partials) {
  if (!sstep_runs(s, c, run_if) || st->p == 0) return;
  constexpr int kRows = SStepSweep<Value>::kScaleRows;
  constexpr int kSums = kSB * (kSB + 1) / 2;  // entry (a, b), a <= b, at a + b (b + 1) / 2
  const int p = st->p;
  __shared__ double x[kMaxS * kMaxS];
  for (int e = threadIdx.x; e < kMaxS * kMaxS; e += kSolverThreads) x[e] = st->x[e];
  __syncthreads();
  double gsum[kSums] = {};
  for (std::int64_t i = sstep_first_row<kRows>(1); i < ld; i += sstep_row_stride<kRows>(1)) {
    Packed<Value, kRows> in[kSB], out[kSB];
#pragma unroll
    for (int t = 0; t < kSB; ++t)
      if (t < p) in[t] = load_packed<Value, kRows>(w + t * ld + i);
      else in[t] = {};
#pragma unroll
    for (int t = 0; t < kSB; ++t)
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        double sum = 0;
#pragma unroll
        for (int l = 0; l <= t; ++l) sum += x[l + t * kMaxS] * static_cast<double>(in[l].v[r]);
        out[t].v[r] = t < p ? static_cast<Value>(sum) : Value(0);
      }
#pragma unroll
    for (int t = 0; t < kSB; ++t)
      if (t < p) *reinterpret_cast<Packed<Value, kRows>*>(w + t * ld + i) = out[t];
#pragma unroll
    for (int b = 0; b < kSB; ++b)
#pragma unroll
      for (int a = 0; a <= b; ++a)
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          gsum[a + b * (b + 1) / 2] += static_cast<double>(out[a].v[r]) * static_cast<double>(out[b].v[r]);
  }
  store_sstep_sums<1>(gsum, 1, 1, partials, [&](int, int e) {
    int b = 0;
    while ((b + 1) * (b + 2) / 2 <= e) ++b;
    return e - b * (b + 1) / 2 + b * kSB;
  });
  for (int e = threadIdx.x; e < kSB * kSB; e += kSolverThreads)
    if (e % kSB > e / kSB) partials[static_cast<std::size_t>(e) * kMaxReductionBlocks + blockIdx.x] = 0;
}

// The s-step sweeps' variant for a block of sb columns: launch(std::integral_constant<int, sb>).
template <class Launch>
void dispatch_block_width(int sb, Launch&& launch) {
  static_assert(kMaxS == 8, "one case per block width");
  switch (sb) {
    case 2: return launch(std::integral_constant<int, 2>{});
    case 3: return launch(std::integral_constant<int, 3>{});
    case 4: return launch(std::integral_constant<int, 4>{});
    case 5: return launch(std::integral_constant<int, 5>{});
    case 6: return launch(std::integral_constant<int, 6>{});
    case 7: return launch(std::integral_constant<int, 7>{});
    default: return launch(std::integral_constant<int, 8>{});
  }
}

// The launches of the block sweeps (the driver's dispatch; the sums into partials, run_if as the kernels
// read it). C = V^T W over cols columns of V and the sb of W.
template <class Value>
void launch_sstep_dots(cudaStream_t st, int blocks, const SolverState* s, const GmresScalars* c, const int* run_if,
                       const Value* basis, int cols, const Value* w, int sb, std::int64_t ld, double* partials) {
  const int lanes = sstep_lanes(cols, kDotsPerLane, 1);
  const dim3 grid(blocks, (cols + kDotsPerLane * lanes - 1) / (kDotsPerLane * lanes));
  dispatch_block_width(sb, [&](auto width) {
    gmres_sstep_dots_kernel<Value, decltype(width)::value><<<grid, kSolverThreads, 0, st>>>(s, c, run_if, basis, cols,
                                                                                           w, ld, lanes, partials);
    SPMV_CHECK_LAUNCH(gmres_sstep_dots_kernel);
  });
}

// W -= V coef with D and G: the update's variant holds 4 of V's columns a lane up to 16 columns, 8 up to 32
// (wider: the projection loops over the rest, and D comes from a dots sweep after). 8 a lane only for
// sb <= kUpdateWideMaxS: its D sums are 8 sb a lane, and at sb = 5 it took 170-250 registers without a
// spill (f64); measured (H200, sb = 5, V of 21-31 columns) 1.8x faster than 8 lanes of 4 columns.
inline constexpr int kUpdateWideMaxS = 5;
template <class Value>
void launch_sstep_update(cudaStream_t st, int blocks, const SolverState* s, const GmresScalars* c, const int* run_if,
                         const Value* basis, int cols, const double* coef, Value* w, int sb, std::int64_t ld,
                         double* partials) {
  const std::size_t shared = static_cast<std::size_t>(cols) * sb * sizeof(double);
  int covered = 0;
  dispatch_block_width(sb, [&](auto width) {
    constexpr int kSB = decltype(width)::value;
    const auto launch = [&](auto kernel, int per_lane) {
      kernel<<<blocks, kSolverThreads, shared, st>>>(s, c, run_if, basis, cols, coef, w, ld, partials);
      SPMV_CHECK_LAUNCH(gmres_sstep_update_kernel);
      covered = per_lane * kGramLanes;
    };
    if (cols <= 4 * kGramLanes || kSB > kUpdateWideMaxS) launch(gmres_sstep_update_kernel<Value, kSB, 4>, 4);
    else launch(gmres_sstep_update_kernel<Value, kSB, (kSB <= kUpdateWideMaxS ? 8 : 4)>, 8);
  });
  if (cols > covered) launch_sstep_dots<Value>(st, blocks, s, c, run_if, basis, cols, w, sb, ld, partials);
}

// W <- W X over the block's first p columns (SStepScalars), with W^T W.
template <class Value>
void launch_sstep_scale(cudaStream_t st, int blocks, const SolverState* s, const GmresScalars* c, const int* run_if,
                        const SStepScalars* sts, Value* w, int sb, std::int64_t ld, double* partials) {
  dispatch_block_width(sb, [&](auto width) {
    gmres_sstep_scale_kernel<Value, decltype(width)::value><<<blocks, kSolverThreads, 0, st>>>(s, c, run_if, sts, w, ld,
                                                                                              partials);
    SPMV_CHECK_LAUNCH(gmres_sstep_scale_kernel);
  });
}

// out[r] = the sum of partials row r, one block a row.
__global__ void gmres_sstep_finish_kernel(const SolverState* s, const GmresScalars* c, const int* run_if,
                                          const double* partials, int count, double* out) {
  if (!sstep_runs(s, c, run_if)) return;
  const double sum = finish_sum(partials + static_cast<std::size_t>(blockIdx.x) * kMaxReductionBlocks, 0, count);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// After the first pass's update (pass 0) or the second's (pass 1, only when asked): the Cholesky QR of G
// (upd + cols * sb), its accepted columns, R^-1 and the loss D R^-1 (D = upd). Pass 0 above tau asks for
// the second pass (its coefficients D into coef2, C += D); pass 1 above tau refuses the block (p = 0).
__global__ void gmres_sstep_decide_kernel(const SolverState* s, const GmresScalars* c, SStepScalars* st,
                                          const double* upd, double* cmat, double* coef2, int cols, int sb, int pass,
                                          double pivot_share, double tau) {
  if (!arnoldi_running(s, c) || (pass == 1 && !st->second_pass)) return;
  int p = sstep::cholesky_rank(upd + cols * sb, sb, sb, pivot_share, st->r);
  if (pass == 1) p = min(p, st->p1);
  sstep::upper_inverse(st->r, p, st->x);
  const double loss = sstep::projected_loss(upd, cols, st->x, p);
  if (pass == 1) {
    st->p = loss <= tau ? p : 0;
    return;
  }
  st->p1 = p;
  st->second_cholqr = 0;
  if (loss <= tau) {
    st->second_pass = 0;
    st->p = p;
    return;
  }
  st->second_pass = 1;
  ++st->passes;
  st->p = 0;
  for (int e = 0; e < cols * sb; ++e) {
    coef2[e] = upd[e];
    cmat[e] += upd[e];
  }
}

// After the scaling (stage 0) or its repetition (stage 1, only when asked): the loss within the block,
// max |W^T W - I|. Above tau, stage 0 prepares CholQR2 (X = R3^-1 for the repetition, R <- R3 R) and
// stage 1 refuses the block.
__global__ void gmres_sstep_check_kernel(const SolverState* s, const GmresScalars* c, SStepScalars* st,
                                         const double* qq, int sb, int stage, double pivot_share, double tau) {
  if (!arnoldi_running(s, c) || st->p == 0 || (stage == 1 && !st->second_cholqr)) return;
  const int p = st->p;
  if (stage == 0) st->second_cholqr = 0;
  if (sstep::identity_loss(qq, p, sb) <= tau) return;
  if (stage == 1) {
    st->p = 0;
    return;
  }
  double r3[kMaxS * kMaxS];
  if (sstep::cholesky_rank(qq, p, sb, pivot_share, r3) < p) {
    st->p = 0;
    return;
  }
  sstep::upper_inverse(r3, p, st->x);
  sstep::compose_upper(r3, p, st->r);
  st->second_cholqr = 1;
  ++st->cholqrs;
}

// The block's end: the Hessenberg columns j0 .. j0 + p - 1 (a row per thread: the rows are independent,
// gmres_sstep.hpp), then on thread 0 each column copied into the rotated matrix and closed as an Arnoldi
// step's (rotate_column: rotations, g, the stopping rule, with `confirm`), stopping at the step that meets
// the tolerance.
__global__ void gmres_sstep_close_kernel(SolverState* s, GmresScalars* c, const SStepScalars* st, double* hplain,
                                         const double* cmat, const sstep::NewtonShifts* shifts, double* hess,
                                         double* cs, double* sn, double* g, int m, int j0, double* history) {
  if (!arnoldi_running(s, c) || st->p == 0) return;
  const int p = st->p;
  for (int row = threadIdx.x; row <= j0 + p; row += blockDim.x)
    sstep::reconstruct_hessenberg_row(hplain, m, j0, p, cmat, st->r, *shifts, row);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const std::size_t ldh = static_cast<std::size_t>(m) + 1;
  for (int i = 0; i < p && arnoldi_running(s, c); ++i) {
    const int j = j0 + i;
    for (int row = 0; row <= j; ++row) hess[j * ldh + row] = hplain[j * ldh + row];
    c->beta = hplain[j * ldh + j + 1];
    rotate_column(s, c, hess, cs, sn, g, m, j, history, 1);
  }
}

// The first cycle keeps its Hessenberg columns unrotated (the Ritz values): column j and h_{j+1,j} = beta,
// before gmres_rotation_kernel rotates them in place.
__global__ void gmres_sstep_keep_column_kernel(const SolverState* s, const GmresScalars* c, const double* hess,
                                               double* hplain, int m, int j) {
  if (!arnoldi_running(s, c)) return;
  const std::size_t ldh = static_cast<std::size_t>(m) + 1;
  for (int row = threadIdx.x; row <= j; row += blockDim.x) hplain[j * ldh + row] = hess[j * ldh + row];
  if (threadIdx.x == 0) hplain[j * ldh + j + 1] = c->beta;
}

// GMRES(m) with its basis stored in Basis: Value (w = A z is then column j + 1 itself), float for a
// double solve (GmresBasis::Float32) or ScaledHalf for a float one (Float16): then w is a vector of the
// value type of its own, and v_j is widened into z before each product.
template <class Value, class Basis>
void gmres_cycles(DeviceRun<Value>& run, const Value* b, Value* x, int m, int s_step) {
  constexpr bool kCompressed = !std::is_same_v<Value, Basis>;
  const std::int64_t n = run.n();
  const cudaStream_t st = run.stream();
  const Value* dinv = run.inverse_diagonal();
  const double tolerance = spmv::solvers::orthogonality_tolerance<Basis>();
  const double min_share = spmv::solvers::pythagoras_min_share<Basis>();
  const auto bytes = static_cast<std::size_t>(n) * sizeof(Value);
  // Column c of the basis starts at c * ld, ld rounded up to the sweeps' 16-byte loads; the padding rows
  // are zero and stay zero (every update of a padding row subtracts zeros), so the sweeps run over ld
  // rows without a tail. A compressed basis's w has ld rows too, its padding zero (A z writes n).
  const std::int64_t ld = (n + kWide<Basis> - 1) / kWide<Basis> * kWide<Basis>;
  DeviceBuffer<Basis> basis(static_cast<std::size_t>(m + 1) * ld);
  DeviceBuffer<Value> z(dinv || kCompressed ? n : 0), w_own(kCompressed ? ld : 0);
  SPMV_CUDA_CHECK(cudaMemsetAsync(basis.data(), 0, basis.size() * sizeof(Basis), st));
  if (kCompressed) SPMV_CUDA_CHECK(cudaMemsetAsync(w_own.data(), 0, w_own.size() * sizeof(Value), st));
  // h and s hold j + 2 sums each (the last is w.w or v.v); the multi-dot's partials have a row per
  // column, rounded up to its register tile (store_block_sums writes whole tiles).
  DeviceBuffer<double> hess(static_cast<std::size_t>(m + 1) * m), cs(m), sn(m), g(m + 1), y(m), h(m + 2), s(m + 2);
  const int dot_rows = (m + 2 + kGmresDotColumns - 1) / kGmresDotColumns * kGmresDotColumns;
  DeviceBuffer<double> dot_partials(static_cast<std::size_t>(dot_rows) * kMaxReductionBlocks);
  DeviceBuffer<GmresScalars> scalars(1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(scalars.data(), 0, sizeof(GmresScalars), st));
  const int blocks = run.blocks();
  Basis* v0 = basis.data();
  const auto column = [&](int c) { return basis.data() + static_cast<std::size_t>(c) * ld; };
  // Where A z lands for step j (j = -1: the residual r = b - A x): column j + 1, or w_own.
  const auto product = [&](int j) -> Value* {
    if constexpr (kCompressed) return w_own.data();
    else return column(j + 1);
  };
  const auto rescale = [&](const auto* r, Basis* v) {
    using R = std::remove_cv_t<std::remove_pointer_t<decltype(r)>>;
    gmres_rescale_kernel<R, Basis><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), r, v, ld);
    SPMV_CHECK_LAUNCH(gmres_rescale_kernel);
  };
  // The partials of rows 0..columns (summed across processes when distributed), finished into out.
  const auto finish = [&](int j, double* out, FinishStage stage) {
    const int count = run.global_rows(dot_partials.data(), j + 2);
    gmres_finish_kernel<<<j + 2, kSolverThreads, 0, st>>>(run.state(), scalars.data(), dot_partials.data(), count,
                                                          out, hess.data() + static_cast<std::size_t>(j) * (m + 1),
                                                          stage, tolerance, min_share, run.counter());
    SPMV_CHECK_LAUNCH(gmres_finish_kernel);
  };
  // Step j: w (= product(j)) becomes v_{j+1} in column j + 1, the Hessenberg column j is filled,
  // c->beta is h_{j+1,j}.
  const auto orthonormalise = [&](const Value* w, int j) {
    const int columns = j + 1;
    Basis* v = column(j + 1);
    launch_multi_dot<Basis, Value>(st, blocks, run.state(), scalars.data(), basis.data(), w, columns, ld,
                                   dot_partials.data());
    finish(j, h.data(), kProjection);
    if (columns <= kGmresDotColumns) {
      launch_orthonormalise<Basis, Value>(st, blocks, run.state(), scalars.data(), basis.data(), h.data(), w, v,
                                          columns, ld, dot_partials.data());
    } else {
      gmres_update_column_kernel<Basis, Value><<<blocks, kSolverThreads, 0, st>>>(
          run.state(), scalars.data(), basis.data(), h.data(), w, v, columns, ld);
      SPMV_CHECK_LAUNCH(gmres_update_column_kernel);
      launch_multi_dot<Basis, Basis>(st, blocks, run.state(), scalars.data(), basis.data(), v, columns, ld,
                                     dot_partials.data());
    }
    finish(j, s.data(), kLoss);
    // The correction: always enqueued (no host round trip), skipped on the device unless the loss
    // finish asked for it.
    gmres_subtract_kernel<Basis><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), basis.data(), columns,
                                                                    s.data(), v, ld, run.partials(), run.counter());
    SPMV_CHECK_LAUNCH(gmres_subtract_kernel);
    if (run.distributed()) {
      const int count = run.global_rows(run.partials(), 1);
      gmres_global_norm_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run.partials(), count);
      SPMV_CHECK_LAUNCH(gmres_global_norm_kernel);
    }
    rescale(static_cast<const Basis*>(v), v);
  };

  const auto residual_and_open_cycle = [&](int first) {
    Value* r = product(-1);
    SPMV_CUDA_CHECK(cudaMemcpyAsync(r, b, bytes, cudaMemcpyDeviceToDevice, st));
    run.apply(Value(-1), x, Value(1), r);
    dot_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(run.state(), r, r, n, run.partials());
    SPMV_CHECK_LAUNCH(dot_kernel);
    const int count = run.global_rows(run.partials(), 1);
    gmres_restart_kernel<<<1, kSolverThreads, 0, st>>>(run.state(), scalars.data(), g.data(), m, run.partials(),
                                                       count, run.history(), first);
    SPMV_CHECK_LAUNCH(gmres_restart_kernel);
    rescale(static_cast<const Value*>(r), v0);
  };

  // ----- s-step blocks (s_step > 1, a basis in the value type; check_problem refuses the others) -----
  const bool blocks_on = s_step > 1 && !kCompressed;
  const std::size_t ldh = static_cast<std::size_t>(m) + 1;
  const int sum_rows = static_cast<int>(ldh) * kMaxS + kMaxS * kMaxS;  // C or D and G of the widest block
  DeviceBuffer<double> hplain(blocks_on ? ldh * m : 0), cmat(blocks_on ? ldh * kMaxS : 0),
      coef2(blocks_on ? ldh * kMaxS : 0), upd(blocks_on ? static_cast<std::size_t>(sum_rows) : 0),
      qq(blocks_on ? kMaxS * kMaxS : 0),
      block_partials(blocks_on ? static_cast<std::size_t>(sum_rows) * kMaxReductionBlocks : 0);
  DeviceBuffer<SStepScalars> sstep_scalars(blocks_on ? 1 : 0);
  DeviceBuffer<sstep::NewtonShifts> device_shifts(blocks_on ? 1 : 0);
  if (blocks_on) {
    SPMV_CUDA_CHECK(cudaMemsetAsync(sstep_scalars.data(), 0, sizeof(SStepScalars), st));
    SPMV_CUDA_CHECK(cudaMemsetAsync(hplain.data(), 0, hplain.size() * sizeof(double), st));
  }
  sstep::NewtonShifts shifts;  // count 0 until the first cycle's Ritz values give them
  const double tau = spmv::solvers::orthogonality_tolerance<Value>();
  const double pivot_share = sstep::kSStepPivotShare * tau;
  int block_count = 0, fallbacks = 0;
  // The iteration of the first refused claim (-1: none): from there on every cycle runs Arnoldi steps, as on
  // the CPU (gmres_sstep.cpp says why: the rebuilt Hessenberg relation holds to about eps^(3/4) only, and
  // refused cycles of blocks would repeat until the stagnation stop).
  int arnoldi_from = -1;
  // The sums of partials rows [0, rows) into out (summed across processes first when distributed).
  const auto finish_rows = [&](const int* run_if, int rows, double* out) {
    const int count = run.global_rows(block_partials.data(), rows);
    gmres_sstep_finish_kernel<<<rows, kSolverThreads, 0, st>>>(run.state(), scalars.data(), run_if,
                                                               block_partials.data(), count, out);
    SPMV_CHECK_LAUNCH(gmres_sstep_finish_kernel);
  };
  // C = V^T W (cols x sb sums in block_partials), run_if as the kernels read it.
  // W -= V coef with D and G (the pass's sums in block_partials), finished into upd.
  const auto update = [&](const int* run_if, int cols, const double* coef, Value* w, int sb) {
    if constexpr (!kCompressed) {  // a compressed basis has no s-step blocks (check_problem)
      launch_sstep_update<Value>(st, blocks, run.state(), scalars.data(), run_if, basis.data(), cols, coef, w, sb, ld,
                                 block_partials.data());
      finish_rows(run_if, cols * sb + sb * sb, upd.data());
    }
  };
  // What the host reads after a block (its one wait).
  struct BlockOutcome {
    int p = 0;
    int cycle_open = 0;
    SolverState state;
  };
  // One block of sb steps from column j0 (gmres_sstep.hpp): enqueued, then one wait. Returns its outcome.
  const auto run_block = [&](int j0, int sb) {
    BlockOutcome out;
    if constexpr (!kCompressed) {  // a compressed basis has no s-step blocks (check_problem)
      const int cols = j0 + 1;
      Value* w = column(j0 + 1);
      SStepScalars* sts = sstep_scalars.data();
      ++block_count;
      for (int i = 0; i < sb; ++i) {
        const Value* wi = column(j0 + i);
        gmres_sstep_newton_kernel<Value><<<blocks, kSolverThreads, 0, st>>>(
            run.state(), scalars.data(), dinv, wi, i > 0 ? column(j0 + i - 1) : wi, z.data(), column(j0 + i + 1), n, ld,
            shifts.alpha[i], i > 0 ? shifts.gamma[i] : 0.0, shifts.sigma[i]);
        SPMV_CHECK_LAUNCH(gmres_sstep_newton_kernel);
        run.apply(static_cast<Value>(shifts.sigma[i]), dinv ? z.data() : wi, Value(1), column(j0 + i + 1));
      }
      launch_sstep_dots<Value>(st, blocks, run.state(), scalars.data(), nullptr, basis.data(), cols, w, sb, ld,
                               block_partials.data());
      finish_rows(nullptr, cols * sb, cmat.data());
      update(nullptr, cols, cmat.data(), w, sb);
      gmres_sstep_decide_kernel<<<1, 1, 0, st>>>(run.state(), scalars.data(), sts, upd.data(), cmat.data(), coef2.data(),
                                                 cols, sb, 0, pivot_share, tau);
      SPMV_CHECK_LAUNCH(gmres_sstep_decide_kernel);
      update(&sts->second_pass, cols, coef2.data(), w, sb);
      gmres_sstep_decide_kernel<<<1, 1, 0, st>>>(run.state(), scalars.data(), sts, upd.data(), cmat.data(), coef2.data(),
                                                 cols, sb, 1, pivot_share, tau);
      SPMV_CHECK_LAUNCH(gmres_sstep_decide_kernel);
      for (int stage = 0; stage < 2; ++stage) {
        const int* run_if = stage == 0 ? nullptr : &sts->second_cholqr;
        launch_sstep_scale<Value>(st, blocks, run.state(), scalars.data(), run_if, sts, w, sb, ld,
                                  block_partials.data());
        finish_rows(run_if, sb * sb, qq.data());
        gmres_sstep_check_kernel<<<1, 1, 0, st>>>(run.state(), scalars.data(), sts, qq.data(), sb, stage, pivot_share,
                                                  tau);
        SPMV_CHECK_LAUNCH(gmres_sstep_check_kernel);
      }
      gmres_sstep_close_kernel<<<1, 64, 0, st>>>(run.state(), scalars.data(), sts, hplain.data(), cmat.data(),
                                                 device_shifts.data(), hess.data(), cs.data(), sn.data(), g.data(), m,
                                                 j0, run.history());
      SPMV_CHECK_LAUNCH(gmres_sstep_close_kernel);
      SPMV_CUDA_CHECK(cudaMemcpyAsync(&out.p, &sts->p, sizeof(int), cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(&out.cycle_open, &scalars.data()->cycle_open, sizeof(int), cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(&out.state, run.state(), sizeof(SolverState), cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaStreamSynchronize(st));
    }
    return out;
  };
  const auto report = [&] {
    if (block_count == 0) return;
    SStepScalars counts;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(&counts, sstep_scalars.data(), sizeof(counts), cudaMemcpyDeviceToHost, st));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(st));
    run.append_variant(", " + std::to_string(block_count) + " blocks, " + std::to_string(fallbacks) +
                       " fell back to Arnoldi, " + std::to_string(counts.passes) + " second passes, " +
                       std::to_string(counts.cholqrs) + " second Cholesky QRs");
    if (arnoldi_from >= 0) run.append_variant(", Arnoldi after a refused claim at step " + std::to_string(arnoldi_from));
  };

  residual_and_open_cycle(1);
  // Every closed cycle holds at least one iteration: m steps per iteration bound the host's enqueuing. (A
  // cycle with s-step blocks confirms its convergence at the restart too, gmres_sstep.cpp.)
  if (kCompressed || blocks_on) run.set_enqueue_limit(static_cast<std::int64_t>(run.max_iterations()) * m);
  run.start_loop();
  if (run.after_iteration(0)) return;
  bool after_blocks = false;  // the cycle before used blocks: its restart may have refused a claim
  for (int k = 0;;) {
    if (after_blocks && arnoldi_from < 0) {
      // One wait per cycle that used blocks: whether gmres_restart_kernel refused its claim (refused > 0
      // only after a refusal; a claim needs blocks, and a confirmed one ended the solve).
      GmresScalars now;
      SolverState state;
      SPMV_CUDA_CHECK(cudaMemcpyAsync(&now, scalars.data(), sizeof(now), cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(&state, run.state(), sizeof(state), cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaStreamSynchronize(st));
      if (now.refused > 0) {
        arnoldi_from = state.iterations;
        if (spmv::detail::debug_log_enabled())
          std::fprintf(stderr, "[spmv] gmres s-step (cuda): the restart refused the estimate of a cycle with blocks at "
                       "step %d (true residual %.3e); Arnoldi steps for the rest of the solve\n", arnoldi_from,
                       now.refused);
      }
    }
    bool stop = false, used_blocks = false, arnoldi_only = shifts.count == 0 || arnoldi_from >= 0;
    const bool first_cycle = blocks_on && shifts.count == 0;
    for (int j = 0; j < m && !stop;) {
      run.reconsider_operator();
      const int sb = std::min(s_step, m - j);
      if (blocks_on && !arnoldi_only && sb >= 2) {
        const BlockOutcome out = run_block(j, sb);
        used_blocks = true;
        for (int i = 0; i < out.p && !stop; ++i) stop = run.after_iteration(++k);
        if (out.state.status != kRunning) stop = true;
        if (out.p < sb) {
          arnoldi_only = true;
          ++fallbacks;
          if (spmv::detail::debug_log_enabled())
            std::fprintf(stderr, "[spmv] gmres s-step (cuda): block at column %d gave %d of %d steps; Arnoldi steps "
                         "for the rest of the cycle\n", j, out.p, sb);
        }
        if (!out.cycle_open) break;
        j += out.p;
        continue;
      }
      Value* w = product(j);
      const Value* input = nullptr;
      if (dinv || kCompressed) {
        gmres_scale_kernel<Value, Basis><<<blocks, kSolverThreads, 0, st>>>(run.state(), scalars.data(), dinv,
                                                                            column(j), z.data(), n);
        SPMV_CHECK_LAUNCH(gmres_scale_kernel);
        input = z.data();
      } else if constexpr (!kCompressed) {
        input = column(j);
      }
      run.apply(Value(1), input, Value(0), w);
      orthonormalise(w, j);
      if (first_cycle) {
        gmres_sstep_keep_column_kernel<<<1, 64, 0, st>>>(run.state(), scalars.data(), hess.data(), hplain.data(), m, j);
        SPMV_CHECK_LAUNCH(gmres_sstep_keep_column_kernel);
      }
      gmres_rotation_kernel<<<1, 1, 0, st>>>(run.state(), scalars.data(), hess.data(), cs.data(), sn.data(), g.data(),
                                             m, j, run.history(), kCompressed || used_blocks ? 1 : 0);
      SPMV_CHECK_LAUNCH(gmres_rotation_kernel);
      stop = run.after_iteration(++k);
      ++j;
    }
    if (first_cycle && !stop) {
      // The Newton shifts from the first cycle's Ritz values (one wait per solve): its columns, fewer than m
      // when it ended early.
      GmresScalars cycle;
      std::vector<double> h_host(ldh * m);
      SPMV_CUDA_CHECK(cudaMemcpyAsync(&cycle, scalars.data(), sizeof(cycle), cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(h_host.data(), hplain.data(), h_host.size() * sizeof(double),
                                      cudaMemcpyDeviceToHost, st));
      SPMV_CUDA_CHECK(cudaStreamSynchronize(st));
      if (cycle.cycle_columns > 0) {
        shifts = sstep::leja_newton_shifts(sstep::hessenberg_eigenvalues(h_host.data(), cycle.cycle_columns, m + 1),
                                           s_step);
        SPMV_CUDA_CHECK(cudaMemcpyAsync(device_shifts.data(), &shifts, sizeof(shifts), cudaMemcpyHostToDevice, st));
        SPMV_CUDA_CHECK(cudaStreamSynchronize(st));  // &shifts is pageable and outlives the copy only so
      }
    }
    // The cycle's update runs whatever stopped it (its columns are counted on the device).
    gmres_solve_kernel<<<1, 1, 0, st>>>(scalars.data(), hess.data(), g.data(), y.data(), m);
    SPMV_CHECK_LAUNCH(gmres_solve_kernel);
    gmres_update_kernel<Value, Basis><<<blocks, kSolverThreads, 0, st>>>(scalars.data(), dinv, basis.data(), ld,
                                                                         y.data(), x, n);
    SPMV_CHECK_LAUNCH(gmres_update_kernel);
    residual_and_open_cycle(0);
    if (stop) return report();
    after_blocks = used_blocks;
  }
}

}  // namespace

template <class Value>
void gmres_device(DeviceRun<Value>& run, const Value* b, Value* x, int m, GmresBasis basis, int s_step) {
  if constexpr (std::is_same_v<Value, double>) {
    if (basis == GmresBasis::Float32) return gmres_cycles<double, float>(run, b, x, m, 1);
  } else {
    if (basis == GmresBasis::Float16) return gmres_cycles<float, spmv::solvers::ScaledHalf>(run, b, x, m, 1);
  }
  gmres_cycles<Value, Value>(run, b, x, m, s_step);
}

template void gmres_device(DeviceRun<float>&, const float*, float*, int, GmresBasis, int);
template void gmres_device(DeviceRun<double>&, const double*, double*, int, GmresBasis, int);

}  // namespace spmv::cuda::solvers
