#pragma once
// Private: what the CUDA solvers share: the device-side solver state and stopping rule, the launch
// policy of the vector kernels, block reductions into per-block partial sums (finished by the small
// scalar kernels, deterministic for a given n), and the host driver (DeviceRun) that enqueues, times
// applies with events and reads the state back one check behind.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cuda/common/launch.cuh"
#include "solvers/solver_setup.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/solvers.hpp"

namespace spmv::cuda::solvers {

// Launch policy of every solver vector kernel. 256 threads: the vector sweeps are bandwidth-bound
// and insensitive to the block size between 128 and 512; the grid is capped so that a reduction has at
// most kMaxReductionBlocks partial sums, which one block of kSolverThreads finishes. 1024 blocks of
// 256 threads keep an H100/H200 (132 SMs, 2048 threads each) fully occupied with grid-stride loops.
inline constexpr int kSolverThreads = 256;
inline constexpr int kMaxReductionBlocks = 1024;
inline constexpr int kMaxDotsPerKernel = 4;  // partial-sum rows in the shared workspace

inline int reduction_blocks(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>(kMaxReductionBlocks, std::max<std::int64_t>(1, (n + kSolverThreads - 1) / kSolverThreads)));
}

enum Status : int { kRunning = 0, kConverged = 1, kMaxIterations = 2, kBreakdown = 3 };
enum Breakdown : int {
  kNone = 0, kNonFinite, kCgCurvature, kRho, kCgRho, kBicgAlpha, kOmega, kGmresSingular, kGmresStagnated,
  kCgStagnated
};

inline const char* breakdown_text(int code) {
  using namespace spmv::solvers;
  switch (code) {
    case kNonFinite: return kBreakdownNonFinite;
    case kCgCurvature: return kBreakdownCgCurvature;
    case kRho: return kBreakdownRho;
    case kCgRho: return kBreakdownCgRho;
    case kBicgAlpha: return kBreakdownBicgAlpha;
    case kOmega: return kBreakdownOmega;
    case kGmresSingular: return kBreakdownGmresSingular;
    case kGmresStagnated: return kBreakdownGmresStagnated;
    case kCgStagnated: return kBreakdownCgStagnated;
    default: return "";
  }
}

// Device-resident state every method shares; the host reads snapshots of it. Plain data.
struct SolverState {
  int status = kRunning;
  int breakdown = kNone;
  int iterations = 0;
  int max_iterations = 0;
  double residual = 0;   // the recurrence residual norm of the last iteration
  double stop_norm = 0;  // tolerance * ||b||
  double b_norm = 0;
};

__device__ inline bool running(const SolverState* s) { return s->status == kRunning; }

__device__ inline void stop_on_breakdown(SolverState* s, int code) {
  s->status = kBreakdown;
  s->breakdown = code;
}

// The stopping rule of solver_setup.hpp's CpuRun::record, on the device (one thread).
__device__ inline void record_residual(SolverState* s, double residual, double* history) {
  s->residual = residual;
  if (history) history[s->iterations] = residual / s->b_norm;
  if (!isfinite(residual)) stop_on_breakdown(s, kNonFinite);
  else if (residual <= s->stop_norm) s->status = kConverged;
  else if (s->iterations >= s->max_iterations) s->status = kMaxIterations;
}

__device__ inline void record_iteration(SolverState* s, double residual, double* history) {
  ++s->iterations;
  record_residual(s, residual, history);
}

// Sums `values` over the block and writes them to partials[d * kMaxReductionBlocks + blockIdx.x].
template <int kDots>
__device__ inline void store_block_sums(const double (&values)[kDots], double* partials) {
  using BlockReduce = cub::BlockReduce<double, kSolverThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
#pragma unroll
  for (int d = 0; d < kDots; ++d) {
    const double sum = BlockReduce(storage).Sum(values[d]);
    if (threadIdx.x == 0) partials[d * kMaxReductionBlocks + blockIdx.x] = sum;
    __syncthreads();
  }
}

// In a one-block kernel of kSolverThreads: the sum of `count` partials of row d (valid in thread 0).
__device__ inline double finish_sum(const double* partials, int d, int count) {
  using BlockReduce = cub::BlockReduce<double, kSolverThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  double v = 0;
  for (int i = threadIdx.x; i < count; i += kSolverThreads) v += partials[d * kMaxReductionBlocks + i];
  const double sum = BlockReduce(storage).Sum(v);
  __syncthreads();  // storage is reused by the next call
  return sum;
}

// Finishes a grid-wide reduction inside the kernel that produced it, the "last block" pattern of the
// CUDA samples' threadFenceReduction: every block stores its sums (store_block_sums), thread 0 fences
// and counts the block in; the block that arrives last sums all gridDim.x partials in block order (so
// the result is deterministic for a given grid, as the two-kernel form is), resets the counter for the
// next kernel and calls finish(totals) on thread 0. Replaces a one-block scalar kernel and its launch
// gap; atomics only count blocks, never add values. `counter` is 0 on entry (DeviceRun::counter()).
template <int kDots, class Finish>
__device__ inline void reduce_in_last_block(const double (&values)[kDots], double* partials, unsigned int* counter,
                                            Finish&& finish) {
  using BlockReduce = cub::BlockReduce<double, kSolverThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  __shared__ bool last;
  store_block_sums<kDots>(values, partials);
  if (threadIdx.x == 0) {
    __threadfence();  // this block's partials are visible before it is counted
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  double totals[kDots];
#pragma unroll
  for (int d = 0; d < kDots; ++d) {
    double v = 0;
    // __ldcg: read at L2, where the other blocks' fenced stores are, never a stale L1 line.
    for (unsigned i = threadIdx.x; i < gridDim.x; i += kSolverThreads) v += __ldcg(partials + d * kMaxReductionBlocks + i);
    totals[d] = BlockReduce(storage).Sum(v);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *counter = 0;
    finish(totals);
  }
}

// Grid-stride loop over [0, n).
#define SPMV_SOLVER_LOOP(i, n) \
  for (std::int64_t i = blockIdx.x * std::int64_t(kSolverThreads) + threadIdx.x; i < (n); i += std::int64_t(gridDim.x) * kSolverThreads)

// A grid-stride sweep over [0, n) that loads kSweepUnroll elements per thread before it stores any:
// load(i) returns the inputs of element i, then apply(i, inputs) runs for each, in increasing i (so
// per-thread sums add in the order of SPMV_SOLVER_LOOP). In a plain loop the store of element i keeps
// the compiler from issuing the loads of the next element early (the arrays may alias), leaving one
// element's loads in flight per thread: too few bytes for HBM in f32 (H200: the f32 CG vector kernels
// ran at ~60% of the copy bandwidth, f64 at ~75%).
inline constexpr int kSweepUnroll = 4;
template <class Load, class Apply>
__device__ inline void unrolled_sweep(std::int64_t n, Load&& load, Apply&& apply) {
  using Inputs = decltype(load(std::int64_t(0)));
  const std::int64_t stride = std::int64_t(gridDim.x) * kSolverThreads;
  for (std::int64_t base = blockIdx.x * std::int64_t(kSolverThreads) + threadIdx.x; base < n;
       base += kSweepUnroll * stride) {
    Inputs in[kSweepUnroll];
#pragma unroll
    for (int u = 0; u < kSweepUnroll; ++u)
      if (base + u * stride < n) in[u] = load(base + u * stride);
#pragma unroll
    for (int u = 0; u < kSweepUnroll; ++u)
      if (base + u * stride < n) apply(base + u * stride, in[u]);
  }
}

// ----- Generic vector kernels (each a separate kernel so that issue 15's fusion can replace them). -----

// partials row 0 = a . b (a may equal b).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads) dot_kernel(const SolverState* state, const Value* a, const Value* b,
                                                             std::int64_t n, double* partials) {
  if (!running(state)) return;
  double v[1] = {0};
  SPMV_SOLVER_LOOP(i, n) v[0] += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  store_block_sums<1>(v, partials);
}

// y = d .* x (d null: y = x).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads) scale_kernel(const SolverState* state, const Value* d, const Value* x,
                                                               Value* y, std::int64_t n) {
  if (!running(state)) return;
  SPMV_SOLVER_LOOP(i, n) y[i] = d ? d[i] * x[i] : x[i];
}

// ----- The host driver. -----

template <class Value>
class DeviceRun {
 public:
  DeviceRun(LinearOperator<Value>& op, const SolverOptions& options, cudaStream_t stream, std::int64_t n,
            SolverResult& result);
  ~DeviceRun();
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;

  // Validates b, x0 and the diagonal (one synchronous read), fills state's norms, builds 1/diag in
  // inverse_diagonal() when Jacobi. Returns ||b||.
  double setup(const Value* b, const Value* x, const Value* diagonal);

  void apply(Value alpha, const Value* x, Value beta, Value* y);  // enqueued, timed with events
  // Enqueues one iteration: body(stream) itself, or with options.graph a CUDA graph captured from
  // body on the first call (on a private stream, in thread-local capture mode) and launched on the
  // solver's stream after. During the capture apply() enqueues on the capturing stream, untimed.
  // The body must enqueue the same work every time (same pointers; scalars read on the device).
  // Before each iteration the operator may change its plan (reconsider_operator).
  template <class Body>
  void iterate(Body&& body) {
    reconsider_operator();
    if (!options_.graph) return body(stream_);
    if (!graph_) {
      begin_capture();
      std::exception_ptr failed;
      try {
        body(capture_stream_);
      } catch (...) {
        failed = std::current_exception();
      }
      end_capture(failed);
    }
    launch_graph();
  }
  // Between iterations (iterate() calls it; GMRES before each step or block): the operator may change how it
  // applies A given the products made so far (LinearOperator::reconsider); a graph captured from the old
  // apply is dropped and captured again at the next iterate().
  void reconsider_operator() {
    if (!op_.reconsider(result_.applies, stream_) || !graph_) return;
    SPMV_CUDA_CHECK(cudaGraphExecDestroy(graph_));
    graph_ = nullptr;
    captured_applies_ = 0;
  }
  // After a kernel stored per-block partial sums (store_block_sums) in `rows` rows from `first_row`:
  // the count that the scalar kernel reading them passes to finish_sum. One process: blocks(). In a
  // distributed solve (options.device_global_sum) each row is summed here on the device, in block
  // order, then across the processes by the hook, and its total is left in the row's first slot: 1.
  // Rows a kernel did not write (it returned once the device stopped) are summed too, harmlessly, so
  // every process enqueues the same collectives.
  int global_rows(double* first_row, int rows);
  // The same, with the sums on a second stream, so that what the caller enqueues on the solver's stream
  // until join_global_rows() runs while the all-reduce is in flight (pipelined CG's product n = A m).
  // Enqueues nothing for one process (returns blocks()). Inside a graph capture the second stream forks
  // from the capturing one and joins it again, so the graph holds the overlap too.
  int start_global_rows(double* first_row, int rows);
  void join_global_rows();
  bool distributed() const { return static_cast<bool>(options_.device_global_sum); }
  void start_loop();  // after the initial residual: the loop's timing starts here
  // After the host enqueued iteration k: snapshot every check_every iterations and inspect the
  // previous one. True when the host should stop enqueuing (the device stopped, or k reached the max).
  bool after_iteration(int k);
  // GMRES with a compressed basis may close a cycle before its m steps (its estimate's convergence is
  // confirmed at the restart): the host, which does not see that, enqueues the cycle's remaining steps,
  // which do nothing. Such idle steps count in k, so the host's own stop moves from max_iterations to
  // `steps` (the device still stops itself at max_iterations).
  void set_enqueue_limit(std::int64_t steps) {
    enqueue_limit_ = static_cast<int>(std::min<std::int64_t>(steps, std::numeric_limits<int>::max()));
  }
  void finish();  // waits, fills the result (status, iterations, history, timing)
  // Appends to SolverResult::variant what the method did beyond its options (the s-step GMRES's blocks).
  void append_variant(const std::string& text) { result_.variant += text; }

  SolverState* state() { return state_.data(); }
  double* history() { return history_.size() ? history_.data() : nullptr; }
  double* partials() { return partials_.data(); }
  unsigned int* counter() { return counter_.data(); }  // block counter of reduce_in_last_block, kept at 0
  const Value* inverse_diagonal() const { return dinv_.size() ? dinv_.data() : nullptr; }
  int blocks() const { return blocks_; }
  int max_iterations() const { return options_.max_iterations; }
  std::int64_t n() const { return n_; }
  cudaStream_t stream() const { return stream_; }
  // Where the iteration's work goes now: the capturing stream while a graph capture is open.
  cudaStream_t current_stream() const { return capture_stream_ ? capture_stream_ : stream_; }

 private:
  void inspect(const SolverState& snapshot);
  void begin_capture();
  void launch_graph();
  // Ends the capture and instantiates the graph unless `failed` (the body's exception). Rethrows that, or
  // throws Unsupported when the capture failed; in a distributed solve every process first learns
  // whether any failed (one all-reduce), so that all throw together and none waits in a collective.
  void end_capture(std::exception_ptr failed);
  void harvest_apply_events(bool wait);
  void sum_rows(double* first_row, int rows, cudaStream_t stream);  // global_rows' work, on `stream`

  LinearOperator<Value>& op_;
  const SolverOptions& options_;
  cudaStream_t stream_;
  std::int64_t n_;
  SolverResult& result_;
  int blocks_;
  DeviceBuffer<SolverState> state_{1};
  DeviceBuffer<double> partials_{static_cast<std::size_t>(kMaxDotsPerKernel) * kMaxReductionBlocks};
  DeviceBuffer<unsigned int> counter_{1};
  DeviceBuffer<double> history_;
  DeviceBuffer<double> global_sums_;  // distributed solves: the row totals handed to device_global_sum
  cudaStream_t sum_stream_ = nullptr;  // start_global_rows' stream, made on first use
  cudaEvent_t sum_ready_ = nullptr, sum_done_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;  // non-null only while a capture is open
  cudaGraphExec_t graph_ = nullptr;
  int captured_applies_ = 0;  // applies in one launch of graph_
  DeviceBuffer<Value> dinv_;
  SolverState* pinned_ = nullptr;  // two snapshot slots
  cudaEvent_t snapshot_done_[2] = {nullptr, nullptr};
  int pending_slot_ = -1;          // slot whose snapshot is enqueued but not yet inspected
  int last_progress_ = 0;
  bool device_stopped_ = false;
  cudaEvent_t loop_begin_ = nullptr, loop_end_ = nullptr;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> apply_events_;  // in flight, in order
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> spare_events_;
  double apply_ms_ = 0;
  bool loop_started_ = false;
  int enqueue_limit_ = options_.max_iterations;
};

// The three methods; on entry setup() has run (||b|| > 0) and x holds x0.
template <class Value>
void cg_device(DeviceRun<Value>& run, const Value* b, Value* x);  // unfused (issue 9)
template <class Value>
void cg_fused_device(DeviceRun<Value>& run, const Value* b, Value* x);
template <class Value>
void cg_pipelined_device(DeviceRun<Value>& run, const Value* b, Value* x);
template <class Value>
void bicgstab_device(DeviceRun<Value>& run, const Value* b, Value* x);
// s_step > 1: s-step blocks after a first Arnoldi cycle (src/solvers/gmres_sstep.hpp; working basis only).
template <class Value>
void gmres_device(DeviceRun<Value>& run, const Value* b, Value* x, int restart, GmresBasis basis, int s_step);

}  // namespace spmv::cuda::solvers
