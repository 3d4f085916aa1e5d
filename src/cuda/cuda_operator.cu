// The backend-neutral Operator on top of a Plan: host vectors in and out, event timing for bench.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include "core/tuner.hpp"

#include "core/timing.hpp"
#include "cuda/common/event_pair.cuh"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/tuned_plan.hpp"

namespace spmv {
namespace {

// PlanT: cuda::Plan, or cuda::TunedPlan for Algorithm::Tune.
template <class Value, class Index, class PlanT>
class CudaOperator final : public Operator<Value, Index> {
 public:
  static constexpr bool kTuned = std::is_same_v<PlanT, cuda::TunedPlan<Value, Index>>;

  CudaOperator(const CsrMatrix<Value, Index>& a, Algorithm algorithm, Operation op, const Options& options)
      : matrix_(a, set_device(options.device)),
        plan_(make_plan(matrix_.view(), algorithm, op, options)),
        x_(static_cast<std::size_t>(plan_.x_size())),
        y_(static_cast<std::size_t>(plan_.y_size())) {}

  Backend backend() const override { return Backend::Cuda; }
  Algorithm algorithm() const override { return plan_.algorithm(); }
  Operation operation() const override { return plan_.operation(); }
  std::string policy() const override { return plan_.policy(); }
  double setup_ms() const override { return plan_.setup_ms(); }
  std::optional<TuningReport> tuning() const override {
    if constexpr (kTuned) return plan_.report();
    else return std::nullopt;
  }
  std::size_t extra_bytes() const override { return plan_.extra_bytes(); }
  std::int64_t rows() const override { return plan_.y_size(); }
  std::int64_t cols() const override { return plan_.x_size(); }

  // One product at a time: x_ and y_ are the operator's single device copy of the vectors.
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    std::lock_guard lock(mutex_);
    load(x, y);
    // The range `spmv bench --profile` hands to Nsight Compute: one product, no setup (a no-op
    // without a tool attached).
    nvtxRangePushA("spmv_product");
    plan_.apply(alpha, x_.data(), beta, y_.data());
    nvtxRangePop();
    SPMV_CUDA_CHECK(cudaGetLastError());
    y_.download(y);  // synchronises: kernel faults surface here
  }

  Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
              const TimingOptions& options) override {
    std::lock_guard lock(mutex_);
    load(x, y);
    if constexpr (kTuned) {  // tune first (y_ is scratch here), then time the settled choice
      const Value a = alpha == Value(0) ? Value(1) : alpha;
      for (int i = 0; i < 20 * detail::kMaxTuningSamples && !plan_.settled(); ++i) {
        plan_.apply(a, x_.data(), beta, y_.data());
        SPMV_CUDA_CHECK(cudaDeviceSynchronize());  // the samples' events are ready at the next product
      }
    }
    cuda::EventPair events;
    const Timing t = detail::measure(
        [&](int n) {
          return events.elapsed_ms(
              [&] {
                for (int i = 0; i < n; ++i) plan_.apply(alpha, x_.data(), beta, y_.data());
              },
              nullptr);
        },
        options);
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    return t;
  }

 private:
  static PlanT make_plan(cuda::CsrView<Value, Index> view, Algorithm algorithm, Operation op, const Options& options) {
    if constexpr (kTuned) return PlanT(view, op, options);
    else return PlanT(view, algorithm, op, options);
  }
  // Runs before the members are built so that they live on the requested device.
  static cudaStream_t set_device(int device) {
    SPMV_CUDA_CHECK(cudaSetDevice(device));
    return nullptr;
  }
  void load(std::span<const Value> x, std::span<Value> y) {
    if (x.size() != x_.size() || y.size() != y_.size())
      throw InvalidArgument("spmv " + std::string(to_string(plan_.algorithm())) + ": x has " +
                            std::to_string(x.size()) + " entries and y " + std::to_string(y.size()) +
                            ", expected " + std::to_string(x_.size()) + " and " + std::to_string(y_.size()));
    x_.upload(x);
    y_.upload(std::span<const Value>(y.data(), y.size()));
  }

  cuda::DeviceCsr<Value, Index> matrix_;
  PlanT plan_;
  cuda::DeviceBuffer<Value> x_, y_;
  std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_cuda_operator(const CsrMatrix<Value, Index>& a, Algorithm algorithm,
                                                           Operation op, const Options& options) {
  if (!cuda_available()) throw Unsupported("no CUDA device is available");
  if (algorithm == Algorithm::Tune)
    return std::make_unique<CudaOperator<Value, Index, cuda::TunedPlan<Value, Index>>>(a, algorithm, op, options);
  return std::make_unique<CudaOperator<Value, Index, cuda::Plan<Value, Index>>>(a, algorithm, op, options);
}

#define SPMV_INSTANTIATE(V, I)                                                                                   \
  template std::unique_ptr<Operator<V, I>> make_cuda_operator(const CsrMatrix<V, I>&, Algorithm, Operation, \
                                                              const Options&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)

}  // namespace spmv
