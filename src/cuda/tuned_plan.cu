// spmv::cuda::TunedPlan: the tuner of src/core/tuner.hpp driven by CUDA events (the rules are in
// include/spmv/cuda/tuned_plan.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/backends.hpp"
#include "core/debug_log.hpp"
#include "core/tuner.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/row_statistics.cuh"
#include "spmv/cuda/tuned_plan.hpp"

namespace spmv::cuda {
namespace {

struct EventDeleter {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using Event = std::unique_ptr<CUevent_st, EventDeleter>;

Event make_event(unsigned flags) {
  cudaEvent_t e = nullptr;
  SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
  return Event(e);
}

// One timed product: before the warm-up, before the timed product, after it.
struct SampleEvents {
  Event begin = make_event(cudaEventDefault);
  Event middle = make_event(cudaEventDefault);
  Event end = make_event(cudaEventDefault);
};

struct Pending {
  int candidate;
  int slot;
  bool warmed;
  bool gated;    // the gate ran between the warm-up and middle (not part of the warm-up's time)
  int products;  // timed back to back between middle and end
};

// The timing gate: a one-thread kernel that holds the stream before a sample's timed products (after
// the point's warm-up), so that the host has queued their launches before the device reaches them.
// Without it a sample on an idle stream also times the launch latency (H200: single products of 3-5 us
// timed at 6-9 us, and ranked differently from back-to-back products, the regime of a solver loop and
// of the benchmark). It lasts kGateNs, or kGateNsPerProduct for each product of a burst if longer: the
// host takes 3-6 us to launch a product (add32 f32's first burst ran at 5.7 us a product where later
// ones ran at 3.6), so a burst of 8 needs about 40 us of head start.
constexpr unsigned long long kGateNs = 20000;
constexpr unsigned long long kGateNsPerProduct = 5000;
// Products longer than this (the best estimate so far) get no gate: a launch gap of a few
// microseconds is then within the tuner's kMinGain, and the gate would only add time.
constexpr double kGateMaxProductMs = 0.4;

// A sample of a short product is a burst of kBurstProducts products back to back (all but the last
// into scratch with beta = 0, the last the caller's), timed as one: their mean is the rate of a solver
// loop or of `Operator::time`, the rate by which the tuner's choice is judged. One product timed alone,
// even behind the gate, ranked 4-6 us products differently from back-to-back runs (H200: watt_2 f32,
// 4 lanes 3.81 us alone, 5.48 us back to back). A product is short while the best estimate is below
// kBurstMaxProductMs; before any estimate, while the matrix has fewer than kBurstMaxNnz nonzeros
// (about that time at HBM speed). The burst's other products are tuning cost (TuningStep::products).
constexpr int kBurstProducts = 8;
constexpr double kBurstMaxProductMs = 0.05;
constexpr std::int64_t kBurstMaxNnz = std::int64_t(1) << 24;

unsigned long long gate_ns(int products) {
  return std::max(kGateNs, kGateNsPerProduct * static_cast<unsigned long long>(products));
}

__global__ void hold_stream(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

}  // namespace

template <class Value, class Index>
struct TunedPlan<Value, Index>::Impl {
  CsrView<Value, Index> matrix;
  Operation op = Operation::NonTranspose;
  Options user;
  std::optional<detail::Tuner> tuner;
  std::vector<std::unique_ptr<Plan<Value, Index>>> plans;  // by point index, built on demand
  std::vector<bool> warmed;
  DeviceBuffer<Value> scratch;
  std::vector<SampleEvents> slots;  // one per sample: never re-recorded while pending
  std::vector<Pending> pending;
  Event chain = make_event(cudaEventDisableTiming);  // the last tuning product
  bool chained = false;
  unsigned long long last_stream = 0;
  cudaStream_t build_stream = nullptr;
  std::unique_ptr<Plan<Value, Index>> best;
  std::atomic<bool> settled{false};
  bool from_wisdom = false;
  int applies = 0, applies_to_settle = 0;
  double setup_ms = 0;
  std::string wisdom_path;
  detail::WisdomKey key;
  mutable std::mutex mutex;

  ~Impl() {
    if (build_stream) cudaStreamDestroy(build_stream);
  }

  bool degenerate() const { return matrix.rows == 0 || matrix.cols == 0 || matrix.nnz == 0; }
  Index y_size() const { return op == Operation::NonTranspose ? matrix.rows : matrix.cols; }

  Plan<Value, Index>& current() {
    if (best) return *best;
    const int b = std::max(tuner->best(), 0);
    return plans[b] ? *plans[b] : *plans[0];
  }
  const Plan<Value, Index>& current() const { return const_cast<Impl*>(this)->current(); }
  int current_index() const { return std::max(tuner->best(), 0); }

  // Builds point c's plan (point 0 is Auto's, built at construction). False when refused or equal to
  // an earlier point's plan (same algorithm and policy); the tuner has been told.
  bool build(int c) {
    if (static_cast<int>(plans.size()) <= c) {
      plans.resize(c + 1);
      warmed.resize(c + 1, false);
    }
    if (plans[c]) return true;
    try {
      plans[c] = std::make_unique<Plan<Value, Index>>(matrix, tuner->algorithm(c), op, tuner->options(c, user),
                                                      build_stream);
    } catch (const Unsupported& e) {
      tuner->refuse(c, e.what());
      return false;
    }
    for (int i = 0; i < c; ++i)
      if (plans[i] && plans[i]->algorithm() == plans[c]->algorithm() && plans[i]->policy() == plans[c]->policy()) {
        plans[c].reset();
        tuner->duplicate(c, i);
        return false;
      }
    return true;
  }

  // Reads back every finished sample, oldest first (tuning products form one chain on the device,
  // so they finish in order); stops at the first that has not finished. Waits only when asked to.
  void harvest(bool wait = false) {
    std::size_t done = 0;
    for (; done < pending.size(); ++done) {
      const Pending& p = pending[done];
      if (wait) SPMV_CUDA_CHECK(cudaEventSynchronize(slots[p.slot].end.get()));
      const cudaError_t status = cudaEventQuery(slots[p.slot].end.get());
      if (status == cudaErrorNotReady) break;
      SPMV_CUDA_CHECK(status);
      float warm = 0, ms = 0;
      if (p.warmed) {
        SPMV_CUDA_CHECK(cudaEventElapsedTime(&warm, slots[p.slot].begin.get(), slots[p.slot].middle.get()));
        if (p.gated) warm = std::max(0.0f, warm - static_cast<float>(gate_ns(p.products) * 1e-6));
      }
      SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, slots[p.slot].middle.get(), slots[p.slot].end.get()));
      tuner->record(p.candidate, ms / p.products, warm, p.products);
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(done));
  }

  // Orders this tuning product after the previous one (another stream waits on the device).
  void chain_in(cudaStream_t stream) {
    unsigned long long id = 0;
    SPMV_CUDA_CHECK(cudaStreamGetId(stream, &id));
    if (chained && id != last_stream) SPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, chain.get(), 0));
    last_stream = id;
  }
  void chain_out(cudaStream_t stream) {
    SPMV_CUDA_CHECK(cudaEventRecord(chain.get(), stream));
    chained = true;
  }

  void settle(bool wisdom) {
    const int b = tuner->best();
    if (static_cast<int>(plans.size()) <= b) plans.resize(b + 1);
    if (!plans[b])
      plans[b] = std::make_unique<Plan<Value, Index>>(matrix, b == 0 ? Algorithm::Auto : tuner->algorithm(b), op,
                                                      tuner->options(b, user), build_stream);
    best = std::move(plans[b]);
    // The other candidates go: their memory (converted copies, workspaces) is released. cudaFree
    // waits for the device, so no product that still reads them is running.
    plans.clear();
    scratch = DeviceBuffer<Value>();
    from_wisdom = wisdom;
    applies_to_settle = wisdom ? 0 : applies - 1;  // this apply already runs the settled choice
    settled.store(true, std::memory_order_release);
    if (!wisdom && !wisdom_path.empty()) {
      try {
        detail::save_wisdom(wisdom_path, detail::wisdom_entry(*tuner, b, key));
      } catch (const Error& e) {
        std::fprintf(stderr, "[spmv] tune: wisdom not saved: %s\n", e.what());
      }
    }
  }

  detail::WisdomKey wisdom_key(cudaStream_t stream) const {
    detail::WisdomKey k;
    int device = 0;
    SPMV_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    SPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    k.device = std::string("cuda: ") + prop.name;
    k.value = sizeof(Value) == 4 ? "f32" : "f64";
    k.index = sizeof(Index) == 4 ? "i32" : "i64";
    k.operation = std::string(to_string(op));
    k.conversions = user.expected_applies > 0;
    k.rows = matrix.rows;
    k.cols = matrix.cols;
    k.nnz = matrix.nnz;
    std::vector<Index> row_ptr(static_cast<std::size_t>(matrix.rows) + 1);
    const detail::ColumnSample s = detail::wisdom_column_sample(matrix.nnz);
    std::vector<Index> sample(static_cast<std::size_t>(s.count));
    SPMV_CUDA_CHECK(cudaMemcpyAsync(row_ptr.data(), matrix.row_ptr, row_ptr.size() * sizeof(Index),
                                    cudaMemcpyDeviceToHost, stream));
    if (s.count > 0)  // every stride-th column index, in one strided copy
      SPMV_CUDA_CHECK(cudaMemcpy2DAsync(sample.data(), sizeof(Index), matrix.col_idx, s.stride * sizeof(Index),
                                        sizeof(Index), static_cast<std::size_t>(s.count), cudaMemcpyDeviceToHost,
                                        stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    k.structure = detail::structure_hash<Index>(k.rows, k.cols, k.nnz, row_ptr, sample);
    return k;
  }

  void load_wisdom(cudaStream_t stream) {
    wisdom_path = detail::wisdom_path(user);
    if (wisdom_path.empty()) return;
    key = wisdom_key(stream);
    std::string note;
    const auto entry = detail::load_wisdom(wisdom_path, key, &note);  // a corrupt file throws ParseError
    if (!entry) {
      if (detail::debug_log_enabled())
        std::fprintf(stderr, "[spmv] tune: wisdom %s not used: %s\n", wisdom_path.c_str(), note.c_str());
      return;
    }
    const auto c = detail::wisdom_candidate(*tuner, *entry);
    if (!c) {
      if (detail::debug_log_enabled())
        std::fprintf(stderr, "[spmv] tune: wisdom %s not used: its choice %s is not in this space\n",
                     wisdom_path.c_str(), entry->algorithm.c_str());
      return;
    }
    const bool auto_point =
        c->family == 0 && std::all_of(c->position.begin(), c->position.end(), [](int p) { return p < 0; });
    std::unique_ptr<Plan<Value, Index>> plan;
    if (!auto_point) {
      Options o = user;
      const detail::Family& f = tuner->space().families[c->family];
      for (std::size_t i = 0; i < f.axes.size(); ++i)
        if (c->position[i] >= 0) detail::knob_field(o, f.axes[i].knob) = f.axes[i].values[c->position[i]];
      try {
        plan = std::make_unique<Plan<Value, Index>>(matrix, f.algorithm, op, o, stream);
      } catch (const Unsupported& e) {
        if (detail::debug_log_enabled()) std::fprintf(stderr, "[spmv] tune: wisdom choice refused (%s); tuning\n", e.what());
        return;
      }
    }
    tuner->settle_on(*c, "wisdom " + wisdom_path);
    const int b = tuner->best();
    if (static_cast<int>(plans.size()) <= b) plans.resize(b + 1);
    if (plan) plans[b] = std::move(plan);
    settle(true);
  }
};

template <class Value, class Index>
TunedPlan<Value, Index>::TunedPlan(CsrView<Value, Index> matrix, Operation op, const Options& options,
                                   cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  if (options.deterministic)
    throw Unsupported("tune is not offered with Options::deterministic: the timing chooses the algorithm, so two "
                      "runs may sum in different orders; pick a reproducible algorithm (docs/ALGORITHMS.md)");
  if (options.reorder != Reorder::None)
    throw Unsupported("reorder " + std::string(to_string(options.reorder)) +
                      " is not offered with tune: reorder the matrix with spmv::permute_symmetric and tune that");
  if (options.values != ValueStorage::Native)
    throw Unsupported("tune is not offered with values=" + std::string(to_string(options.values)) +
                      ": pick one of the algorithms that serve half-precision values (docs/ALGORITHMS.md)");
  const auto start = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  m.matrix = matrix;
  m.op = op;
  m.user = options;
  m.plans.push_back(std::make_unique<Plan<Value, Index>>(matrix, Algorithm::Auto, op, options, stream));
  m.warmed.push_back(false);
  const Algorithm auto_choice = m.plans[0]->algorithm();
  detail::TuningInputs in;
  in.backend = Backend::Cuda;
  in.op = op;
  in.rows = matrix.rows;
  in.cols = matrix.cols;
  in.nnz = matrix.nnz;
  in.value_bytes = sizeof(Value);
  in.auto_choice = auto_choice;
  in.user = options;
  {
    int device = 0, threads_per_multiprocessor = 0;
    SPMV_CUDA_CHECK(cudaGetDevice(&device));
    SPMV_CUDA_CHECK(
        cudaDeviceGetAttribute(&threads_per_multiprocessor, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    in.resident_warps = std::int64_t(device_multiprocessors()) * (threads_per_multiprocessor / 32);
  }
  const auto offered = detail::cuda_algorithms(op);
  for (Algorithm a : offered)
    if (!is_vendor(a)) in.offered.push_back(a);  // the baselines are for comparison, never chosen
  if (!m.degenerate()) {
    const RowStatistics s = row_statistics(matrix, stream);
    in.row_mean = s.mean;
    in.row_std = s.stddev;
    in.row_max = s.max;
    const detail::RowShape shape = row_shape(matrix, s);
    if (auto_tries_dia(op, shape, sizeof(Value), options.expected_applies) && auto_choice != Algorithm::Dia)
      in.excluded.push_back(Algorithm::Dia);  // Auto tried it: not banded enough
    if (op == Operation::Transpose && auto_choice != Algorithm::ExplicitTranspose && !explicit_transpose_fits(matrix))
      in.excluded.push_back(Algorithm::ExplicitTranspose);
  }
  m.tuner.emplace(detail::build_tuning_space(in));
  if (m.degenerate()) {  // nothing to tune: Auto only scales y
    m.tuner->settle_on(detail::Candidate{0, std::vector<int>(m.tuner->space().families[0].axes.size(), -1)},
                       "empty matrix");
    m.settle(true);
    m.from_wisdom = false;
  } else {
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&m.build_stream, cudaStreamNonBlocking));
    m.scratch = DeviceBuffer<Value>(static_cast<std::size_t>(m.y_size()));
    m.slots.resize(detail::kMaxTuningSamples);
    m.load_wisdom(stream);
  }
  m.setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

template <class Value, class Index>
TunedPlan<Value, Index>::~TunedPlan() = default;
template <class Value, class Index>
TunedPlan<Value, Index>::TunedPlan(TunedPlan&&) noexcept = default;
template <class Value, class Index>
TunedPlan<Value, Index>& TunedPlan<Value, Index>::operator=(TunedPlan&&) noexcept = default;

template <class Value, class Index>
void TunedPlan<Value, Index>::apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) {
  if (!impl_) throw InvalidArgument("spmv::cuda::TunedPlan::apply on a moved-from plan");
  Impl& m = *impl_;
  if (m.settled.load(std::memory_order_acquire)) return m.best->apply(alpha, x, beta, y, stream);
  std::lock_guard lock(m.mutex);
  if (m.settled.load(std::memory_order_relaxed)) return m.best->apply(alpha, x, beta, y, stream);
  ++m.applies;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  SPMV_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  // Captured products and alpha == 0 (which reads neither A nor x) are not samples.
  if (capture != cudaStreamCaptureStatusNone || alpha == Value(0)) return m.current().apply(alpha, x, beta, y, stream);
  // The budget: the (kMaxTuningSamples + 1)-th apply runs the settled choice, whatever is still
  // outstanding (read back now, once: the host waits for at most the last few samples).
  if (m.applies > detail::kMaxTuningSamples) {
    m.harvest(true);
    m.tuner->stop("settled: apply budget of " + std::to_string(detail::kMaxTuningSamples) + " spent");
  }
  m.harvest();
  detail::Tuner::Next next = m.tuner->next();
  while (next.kind == detail::Tuner::Next::Run && !m.build(next.candidate)) next = m.tuner->next();
  if (next.kind == detail::Tuner::Next::Settled) {
    m.settle(false);
    return m.best->apply(alpha, x, beta, y, stream);
  }
  m.chain_in(stream);
  if (next.kind == detail::Tuner::Next::Wait) {  // earlier samples still running: the best so far, untimed
    m.current().apply(alpha, x, beta, y, stream);
  } else {
    const int c = next.candidate;
    const int slot = m.tuner->samples() - 1;  // samples only grow: each slot is recorded once
    SampleEvents& e = m.slots[static_cast<std::size_t>(slot)];
    const bool warm = !m.warmed[c];
    const int b = m.tuner->best();
    const bool gate = b < 0 || m.tuner->estimate(b) < kGateMaxProductMs;
    const bool burst = b < 0 ? m.matrix.nnz < kBurstMaxNnz : m.tuner->estimate(b) < kBurstMaxProductMs;
    const int products = burst ? kBurstProducts : 1;
    SPMV_CUDA_CHECK(cudaEventRecord(e.begin.get(), stream));
    if (warm) m.plans[c]->apply(alpha, x, Value(0), m.scratch.data(), stream);
    m.warmed[c] = true;
    // The gate follows the warm-up: the host's first launches of a plan (module loading, first-use
    // setup) would otherwise eat the head start and leave the timed products waiting for launches.
    if (gate) {
      hold_stream<<<1, 1, 0, stream>>>(gate_ns(products));
      SPMV_CUDA_CHECK(cudaGetLastError());
    }
    SPMV_CUDA_CHECK(cudaEventRecord(e.middle.get(), stream));
    for (int i = 1; i < products; ++i) m.plans[c]->apply(alpha, x, Value(0), m.scratch.data(), stream);
    m.plans[c]->apply(alpha, x, beta, y, stream);
    SPMV_CUDA_CHECK(cudaEventRecord(e.end.get(), stream));
    m.pending.push_back({c, slot, warm, gate, products});
  }
  m.chain_out(stream);
}

template <class Value, class Index>
bool TunedPlan<Value, Index>::settled() const { return impl_->settled.load(std::memory_order_acquire); }

template <class Value, class Index>
TuningReport TunedPlan<Value, Index>::report() const {
  std::lock_guard lock(impl_->mutex);
  const Impl& m = *impl_;
  TuningReport r;
  r.settled = m.settled.load();
  r.from_wisdom = m.from_wisdom;
  r.samples = m.tuner->samples();
  r.applies = m.applies;
  r.applies_to_settle = m.applies_to_settle;
  r.choice = m.tuner->label(m.current_index());
  r.trajectory = m.tuner->steps();
  r.space = m.tuner->exhaustive_space();
  return r;
}

template <class Value, class Index>
Algorithm TunedPlan<Value, Index>::algorithm() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->current().algorithm();
}
template <class Value, class Index>
Operation TunedPlan<Value, Index>::operation() const { return impl_->op; }
template <class Value, class Index>
std::string TunedPlan<Value, Index>::policy() const {
  std::lock_guard lock(impl_->mutex);
  const Impl& m = *impl_;
  const std::string state = m.settled ? (m.from_wisdom ? "from wisdom"
                                                       : "settled after " + std::to_string(m.applies_to_settle) + " products")
                                      : "tuning, " + std::to_string(m.tuner->samples()) + " of at most " +
                                            std::to_string(detail::kMaxTuningSamples) + " samples";
  return "tune(" + state + ": " + m.tuner->label(m.current_index()) + ") " + m.current().policy();
}
template <class Value, class Index>
double TunedPlan<Value, Index>::setup_ms() const { return impl_->setup_ms; }
template <class Value, class Index>
std::size_t TunedPlan<Value, Index>::extra_bytes() const {
  std::lock_guard lock(impl_->mutex);
  const Impl& m = *impl_;
  std::size_t bytes = m.scratch.bytes();
  if (m.best) bytes += m.best->extra_bytes();
  for (const auto& p : m.plans)
    if (p) bytes += p->extra_bytes();
  return bytes;
}
template <class Value, class Index>
Index TunedPlan<Value, Index>::x_size() const {
  return impl_->op == Operation::NonTranspose ? impl_->matrix.cols : impl_->matrix.rows;
}
template <class Value, class Index>
Index TunedPlan<Value, Index>::y_size() const { return impl_->y_size(); }

template class TunedPlan<float, std::int32_t>;
template class TunedPlan<float, std::int64_t>;
template class TunedPlan<double, std::int32_t>;
template class TunedPlan<double, std::int64_t>;

}  // namespace spmv::cuda
