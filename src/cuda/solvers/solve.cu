// spmv::cuda::solve: argument checks, the device setup (norm of b, bad entries, 1/diag), dispatch to
// the method, the final true residual; and DeviceRun, the host side of every method's loop.
#include <algorithm>
#include <limits>
#include <string>

#include "cuda/solvers/solver_kernels.cuh"

namespace spmv::cuda::solvers {
namespace {

constexpr std::int64_t kNoBadEntry = std::numeric_limits<std::int64_t>::max();

// partials row 0 = b.b; bad[0] = first non-finite index of b, bad[1] of x0 (atomicMin).
template <class Value>
__global__ void __launch_bounds__(kSolverThreads) check_inputs_kernel(const Value* b, const Value* x, std::int64_t n,
                                                                      double* partials, unsigned long long* bad) {
  double v[1] = {0};
  SPMV_SOLVER_LOOP(i, n) {
    const Value bi = b[i];
    if (!isfinite(bi)) atomicMin(&bad[0], static_cast<unsigned long long>(i));
    if (!isfinite(x[i])) atomicMin(&bad[1], static_cast<unsigned long long>(i));
    v[0] += static_cast<double>(bi) * bi;
  }
  store_block_sums<1>(v, partials);
}

// dinv = 1 / d; bad = first index of a zero or non-finite d.
template <class Value>
__global__ void __launch_bounds__(kSolverThreads) inverse_diagonal_kernel(const Value* d, Value* dinv, std::int64_t n,
                                                                          unsigned long long* bad) {
  SPMV_SOLVER_LOOP(i, n) {
    const Value di = d[i];
    if (di == Value(0) || !isfinite(di)) atomicMin(bad, static_cast<unsigned long long>(i));
    dinv[i] = Value(1) / di;
  }
}

__global__ void setup_state_kernel(SolverState* s, const double* partials, int count, double tolerance,
                                   int max_iterations) {
  const double bb = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) {
    *s = SolverState{};
    s->b_norm = sqrt(bb);
    s->stop_norm = tolerance * s->b_norm;
    s->max_iterations = max_iterations;
  }
}

// Block r: the total of row r's `count` partials (finish_sum's order) into sums[r].
__global__ void global_rows_kernel(const double* first_row, int count, double* sums) {
  const double sum = finish_sum(first_row + static_cast<std::size_t>(blockIdx.x) * kMaxReductionBlocks, 0, count);
  if (threadIdx.x == 0) sums[blockIdx.x] = sum;
}

}  // namespace

template <class Value>
DeviceRun<Value>::DeviceRun(LinearOperator<Value>& op, const SolverOptions& options, cudaStream_t stream,
                            std::int64_t n, SolverResult& result)
    : op_(op), options_(options), stream_(stream), n_(n), result_(result), blocks_(reduction_blocks(n)) {
  if (options.record_history) history_ = DeviceBuffer<double>(static_cast<std::size_t>(options.max_iterations) + 1);
  // The most rows one reduction sums: GMRES's j + 2 dots (j < restart), or a kernel's partial rows.
  if (options.device_global_sum)
    global_sums_ = DeviceBuffer<double>(static_cast<std::size_t>(std::max(kMaxDotsPerKernel, options.restart + 2)));
  SPMV_CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, sizeof(unsigned int), stream_));
  SPMV_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned_), 2 * sizeof(SolverState)));
  for (auto& e : snapshot_done_) SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  SPMV_CUDA_CHECK(cudaEventCreate(&loop_begin_));
  SPMV_CUDA_CHECK(cudaEventCreate(&loop_end_));
}

template <class Value>
DeviceRun<Value>::~DeviceRun() {
  cudaStreamSynchronize(stream_);  // nothing may still write the pinned slots (errors ignored here)
  for (auto& list : {apply_events_, spare_events_})
    for (auto& [a, b] : list) cudaEventDestroy(a), cudaEventDestroy(b);
  for (auto& e : snapshot_done_) if (e) cudaEventDestroy(e);
  if (loop_begin_) cudaEventDestroy(loop_begin_);
  if (loop_end_) cudaEventDestroy(loop_end_);
  if (pinned_) cudaFreeHost(pinned_);
  if (sum_stream_) cudaStreamDestroy(sum_stream_);
  if (sum_ready_) cudaEventDestroy(sum_ready_);
  if (sum_done_) cudaEventDestroy(sum_done_);
  if (graph_) cudaGraphExecDestroy(graph_);
}

template <class Value>
void DeviceRun<Value>::launch_graph() {
  SPMV_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
  result_.applies += captured_applies_;
}

template <class Value>
void DeviceRun<Value>::begin_capture() {
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
  SPMV_CUDA_CHECK(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
}

template <class Value>
void DeviceRun<Value>::end_capture(std::exception_ptr failed) {
  cudaGraph_t graph = nullptr;
  const cudaError_t captured = cudaStreamEndCapture(capture_stream_, &graph);
  cudaStreamDestroy(capture_stream_);
  capture_stream_ = nullptr;
  cudaError_t made = captured;
  if (captured == cudaSuccess && !failed) made = cudaGraphInstantiate(&graph_, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  if (made != cudaSuccess) cudaGetLastError();  // the capture error is not sticky: clear it for later checks
  const std::string method(to_string(options_.method));
  if (distributed()) {
    // A rank whose capture failed throws here; the others would wait for it in their next all-reduce.
    double failures = failed || made != cudaSuccess ? 1.0 : 0.0;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(global_sums_.data(), &failures, sizeof failures, cudaMemcpyHostToDevice, stream_));
    options_.device_global_sum(global_sums_.data(), 1, stream_);
    SPMV_CUDA_CHECK(cudaMemcpyAsync(&failures, global_sums_.data(), sizeof failures, cudaMemcpyDeviceToHost, stream_));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (failures > 0 && !failed && made == cudaSuccess)
      throw Unsupported(method + ": capturing the iteration in a CUDA graph failed on another process: solve "
                                 "without graph");
  }
  if (failed) std::rethrow_exception(failed);
  if (made != cudaSuccess)
    throw Unsupported(method + ": capturing the iteration in a CUDA graph failed (" + cudaGetErrorString(made) +
                      "); the operator's apply must not synchronise or allocate (a TunedPlan tunes on its first "
                      "applies): solve without graph");
}

template <class Value>
double DeviceRun<Value>::setup(const Value* b, const Value* x, const Value* diagonal) {
  const std::string method(to_string(options_.method));
  DeviceBuffer<unsigned long long> bad(3);
  const unsigned long long none[3] = {kNoBadEntry, kNoBadEntry, kNoBadEntry};
  SPMV_CUDA_CHECK(cudaMemcpyAsync(bad.data(), none, sizeof(none), cudaMemcpyHostToDevice, stream_));
  check_inputs_kernel<Value><<<blocks_, kSolverThreads, 0, stream_>>>(b, x, n_, partials(), bad.data());
  SPMV_CHECK_LAUNCH(check_inputs_kernel);
  const int count = global_rows(partials(), 1);  // (never inside a launch's arguments: it launches itself)
  setup_state_kernel<<<1, kSolverThreads, 0, stream_>>>(state(), partials(), count, options_.tolerance,
                                                        options_.max_iterations);
  SPMV_CHECK_LAUNCH(setup_state_kernel);
  if (options_.preconditioner == Preconditioner::Jacobi) {
    if (!diagonal && n_ > 0)  // (a distributed solve's rank without rows has none, and needs none)
      throw InvalidArgument(method + ": the Jacobi preconditioner needs the operator's diagonal (" +
                            std::to_string(n_) + " entries on the device), got a null pointer");
    dinv_ = DeviceBuffer<Value>(static_cast<std::size_t>(n_));
    inverse_diagonal_kernel<Value><<<blocks_, kSolverThreads, 0, stream_>>>(diagonal, dinv_.data(), n_, bad.data() + 2);
    SPMV_CHECK_LAUNCH(inverse_diagonal_kernel);
  }
  unsigned long long found[3];
  SolverState s;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(found, bad.data(), sizeof(found), cudaMemcpyDeviceToHost, stream_));
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&s, state(), sizeof(s), cudaMemcpyDeviceToHost, stream_));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
  using spmv::solvers::row_name;
  if (found[0] != kNoBadEntry)
    throw InvalidArgument(method + ": b holds NaN or Inf at " + row_name(static_cast<std::int64_t>(found[0])));
  if (found[1] != kNoBadEntry)
    throw InvalidArgument(method + ": the initial guess x0 holds NaN or Inf at " +
                          row_name(static_cast<std::int64_t>(found[1])));
  if (found[2] != kNoBadEntry) {
    Value d;
    SPMV_CUDA_CHECK(cudaMemcpy(&d, diagonal + found[2], sizeof(Value), cudaMemcpyDeviceToHost));
    throw InvalidArgument(method + ": the Jacobi preconditioner needs a nonzero finite diagonal; " +
                          row_name(static_cast<std::int64_t>(found[2])) + " has " +
                          (d == Value(0) ? std::string("0") : std::string("NaN or Inf")));
  }
  return s.b_norm;
}

template <class Value>
void DeviceRun<Value>::apply(Value alpha, const Value* x, Value beta, Value* y) {
  if (capture_stream_) {  // inside a graph capture: enqueue there, untimed
    op_.apply(alpha, x, beta, y, capture_stream_);
    ++captured_applies_;  // counted per graph launch
    return;
  }
  std::pair<cudaEvent_t, cudaEvent_t> events{};
  if (loop_started_) {
    if (spare_events_.empty()) {
      SPMV_CUDA_CHECK(cudaEventCreate(&events.first));
      SPMV_CUDA_CHECK(cudaEventCreate(&events.second));
    } else {
      events = spare_events_.back();
      spare_events_.pop_back();
    }
    SPMV_CUDA_CHECK(cudaEventRecord(events.first, stream_));
  }
  op_.apply(alpha, x, beta, y, stream_);
  ++result_.applies;
  if (loop_started_) {
    SPMV_CUDA_CHECK(cudaEventRecord(events.second, stream_));
    apply_events_.push_back(events);
  }
}

// Sums the elapsed time of the applies that have finished (all of them when `wait`), recycling events.
template <class Value>
void DeviceRun<Value>::harvest_apply_events(bool wait) {
  std::size_t done = 0;
  for (; done < apply_events_.size(); ++done) {
    auto [begin, end] = apply_events_[done];
    if (wait) SPMV_CUDA_CHECK(cudaEventSynchronize(end));
    else if (cudaEventQuery(end) != cudaSuccess) break;
    float ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    apply_ms_ += ms;
    spare_events_.push_back(apply_events_[done]);
  }
  apply_events_.erase(apply_events_.begin(), apply_events_.begin() + static_cast<std::ptrdiff_t>(done));
}

template <class Value>
int DeviceRun<Value>::global_rows(double* first_row, int rows) {
  if (!options_.device_global_sum) return blocks_;
  sum_rows(first_row, rows, current_stream());
  return 1;
}

template <class Value>
void DeviceRun<Value>::sum_rows(double* first_row, int rows, cudaStream_t stream) {
  global_rows_kernel<<<rows, kSolverThreads, 0, stream>>>(first_row, blocks_, global_sums_.data());
  SPMV_CHECK_LAUNCH(global_rows_kernel);
  options_.device_global_sum(global_sums_.data(), rows, stream);
  SPMV_CUDA_CHECK(cudaMemcpy2DAsync(first_row, kMaxReductionBlocks * sizeof(double), global_sums_.data(),
                                    sizeof(double), sizeof(double), static_cast<std::size_t>(rows),
                                    cudaMemcpyDeviceToDevice, stream));
}

template <class Value>
int DeviceRun<Value>::start_global_rows(double* first_row, int rows) {
  if (!options_.device_global_sum) return blocks_;
  if (!sum_stream_) {
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&sum_stream_, cudaStreamNonBlocking));
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&sum_ready_, cudaEventDisableTiming));
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&sum_done_, cudaEventDisableTiming));
  }
  SPMV_CUDA_CHECK(cudaEventRecord(sum_ready_, current_stream()));
  SPMV_CUDA_CHECK(cudaStreamWaitEvent(sum_stream_, sum_ready_, 0));
  sum_rows(first_row, rows, sum_stream_);
  SPMV_CUDA_CHECK(cudaEventRecord(sum_done_, sum_stream_));
  return 1;
}

template <class Value>
void DeviceRun<Value>::join_global_rows() {
  if (options_.device_global_sum) SPMV_CUDA_CHECK(cudaStreamWaitEvent(current_stream(), sum_done_, 0));
}

template <class Value>
void DeviceRun<Value>::start_loop() {
  loop_started_ = true;
  SPMV_CUDA_CHECK(cudaEventRecord(loop_begin_, stream_));
}

template <class Value>
void DeviceRun<Value>::inspect(const SolverState& snapshot) {
  const int every = options_.progress_every;
  if (options_.progress && every > 0 && snapshot.iterations / every > last_progress_ / every && snapshot.iterations > 0 &&
      snapshot.iterations % every == 0)
    options_.progress({snapshot.iterations, snapshot.residual / snapshot.b_norm});
  last_progress_ = std::max(last_progress_, snapshot.iterations);
  if (snapshot.status != kRunning) device_stopped_ = true;
}

template <class Value>
bool DeviceRun<Value>::after_iteration(int k) {
  const bool at_max = k >= enqueue_limit_;
  if (k % options_.check_every == 0 || at_max) {
    const int slot = pending_slot_ == 0 ? 1 : 0;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(pinned_ + slot, state(), sizeof(SolverState), cudaMemcpyDeviceToHost, stream_));
    SPMV_CUDA_CHECK(cudaEventRecord(snapshot_done_[slot], stream_));
    if (pending_slot_ >= 0) {  // the previous snapshot: the device is at most one check ahead of us
      SPMV_CUDA_CHECK(cudaEventSynchronize(snapshot_done_[pending_slot_]));
      inspect(pinned_[pending_slot_]);
      harvest_apply_events(false);
    }
    pending_slot_ = slot;
  }
  return device_stopped_ || at_max;
}

template <class Value>
void DeviceRun<Value>::finish() {
  if (loop_started_) SPMV_CUDA_CHECK(cudaEventRecord(loop_end_, stream_));
  SolverState s;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&s, state(), sizeof(s), cudaMemcpyDeviceToHost, stream_));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (pending_slot_ >= 0) inspect(pinned_[pending_slot_]);
  pending_slot_ = -1;
  if (s.iterations > last_progress_) inspect(s);  // the last iterations' progress lines
  result_.iterations = s.iterations;
  result_.converged = s.status == kConverged;
  result_.breakdown = breakdown_text(s.status == kBreakdown ? s.breakdown : kNone);
  result_.recurrence_residual = s.residual / s.b_norm;
  if (options_.record_history) {
    std::vector<double> h(static_cast<std::size_t>(s.iterations) + 1);
    SPMV_CUDA_CHECK(cudaMemcpy(h.data(), history_.data(), h.size() * sizeof(double), cudaMemcpyDeviceToHost));
    result_.history = std::move(h);
  }
  if (loop_started_) {
    harvest_apply_events(true);
    float loop_ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&loop_ms, loop_begin_, loop_end_));
    // Per iteration the device ran: the idle steps enqueued after it stopped (at most 2 * check_every, or
    // a compressed GMRES basis's closed cycles, below) are part of the loop's cost.
    result_.ms_per_iteration = s.iterations > 0 ? loop_ms / s.iterations : 0;
    result_.apply_share = options_.graph ? -1 : loop_ms > 0 ? std::min(1.0, apply_ms_ / loop_ms) : 0;
  }
}

template class DeviceRun<float>;
template class DeviceRun<double>;

namespace {

// ||b - A x|| into partials row 0 via a scratch vector.
template <class Value>
__global__ void relative_norm_kernel(const double* partials, int count, double* out) {
  const double sum = finish_sum(partials, 0, count);
  if (threadIdx.x == 0) *out = sqrt(sum);
}

template <class Value>
__global__ void __launch_bounds__(kSolverThreads) norm_partials_kernel(const Value* a, std::int64_t n, double* partials) {
  double v[1] = {0};
  SPMV_SOLVER_LOOP(i, n) v[0] += static_cast<double>(a[i]) * a[i];
  store_block_sums<1>(v, partials);
}


}  // namespace

}  // namespace spmv::cuda::solvers

namespace spmv::cuda {

template <class Value>
SolverResult solve(LinearOperator<Value>& op, const Value* b, Value* x, const SolverOptions& options,
                   const Value* diagonal, cudaStream_t stream) {
  using namespace spmv::cuda::solvers;
  const auto t0 = spmv::solvers::Clock::now();
  const std::int64_t n = op.rows();
  // Device arrays carry no length: the shape checks see the operator's own, so only squareness and
  // the options can fail here; the pointers must hold n entries (documented).
  spmv::solvers::check_problem(op.rows(), op.cols(), static_cast<std::size_t>(n), static_cast<std::size_t>(op.cols()),
                               options, sizeof(Value));
  if (options.global_sum)
    throw InvalidArgument("solve: the CUDA solvers sum across processes on the device (SolverOptions::"
                          "device_global_sum); global_sum is the CPU solvers' hook");
  if (options.device_global_sum && options.method == SolverMethod::Cg && options.fused && !options.pipelined)
    throw InvalidArgument("cg: a distributed solve (device_global_sum) needs the unfused kernels (fused = false): the "
                          "fused ones finish their sums inside the sweep, before they could be summed across processes");
  SolverResult result;
  spmv::solvers::describe_iteration(options, n, sizeof(Value), result);
  if (n == 0 && !options.device_global_sum) {  // a distributed solve's rank without rows still joins every sum
    result.converged = true;
    if (options.record_history) result.history.push_back(0.0);
    return result;
  }
  if (n > 0 && (!b || !x)) throw InvalidArgument(std::string(to_string(options.method)) + ": b and x must be device pointers");
  DeviceRun<Value> run(op, options, stream, n, result);
  const double b_norm = run.setup(b, x, diagonal);
  if (b_norm == 0) {  // x = 0 is exact
    SPMV_CUDA_CHECK(cudaMemsetAsync(x, 0, static_cast<std::size_t>(n) * sizeof(Value), stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    result.converged = true;
    if (options.record_history) result.history.push_back(0.0);
    result.total_ms = spmv::solvers::ms_since(t0);
    return result;
  }
  switch (options.method) {
    case SolverMethod::Cg:
      if (options.pipelined) cg_pipelined_device<Value>(run, b, x);
      else if (options.fused) cg_fused_device<Value>(run, b, x);
      else cg_device<Value>(run, b, x);
      break;
    case SolverMethod::BiCgStab: bicgstab_device<Value>(run, b, x); break;
    case SolverMethod::Gmres:
      gmres_device<Value>(run, b, x, options.restart, options.gmres_basis, options.gmres_s_step);
      break;
  }
  run.finish();

  // The true residual with one more apply.
  DeviceBuffer<Value> r(static_cast<std::size_t>(n));
  DeviceBuffer<double> norm(1);
  SPMV_CUDA_CHECK(cudaMemcpyAsync(r.data(), b, r.bytes(), cudaMemcpyDeviceToDevice, stream));
  op.apply(Value(-1), x, Value(1), r.data(), stream);
  ++result.applies;
  norm_partials_kernel<Value><<<run.blocks(), kSolverThreads, 0, stream>>>(r.data(), n, run.partials());
  SPMV_CHECK_LAUNCH(norm_partials_kernel);
  const int count = run.global_rows(run.partials(), 1);
  relative_norm_kernel<Value><<<1, kSolverThreads, 0, stream>>>(run.partials(), count, norm.data());
  SPMV_CHECK_LAUNCH(relative_norm_kernel);
  double r_norm = 0;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&r_norm, norm.data(), sizeof(double), cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  result.residual = r_norm / b_norm;
  result.total_ms = spmv::solvers::ms_since(t0);
  return result;
}

template SolverResult solve(LinearOperator<float>&, const float*, float*, const SolverOptions&, const float*,
                            cudaStream_t);
template SolverResult solve(LinearOperator<double>&, const double*, double*, const SolverOptions&, const double*,
                            cudaStream_t);

}  // namespace spmv::cuda
