// The CUDA LMA operator (include/spmv/cuda/lma.hpp): one thread per element, one kernel per colour,
// no atomics; and its host-vector face fem::LmaOperator for `spmv bench --lma` and the tests.
//
// Why colours rather than atomics or a node gather: atomicAdd on y makes the summation order (and so
// the rounding) change from run to run, and a solver's iteration counts with it; a per-node gather
// either reads every K_e row scattered (uncoalesced) or needs a second pass over an element-result
// buffer (E * npe more values written and read). A colour is a launch of a few microseconds, against
// a product that streams E * (npe^2 values + npe indices) bytes (docs/algorithms/lma.md).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/timing.hpp"
#include "core/native_values.hpp"
#include "cuda/common/launch.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/lma.hpp"
#include "spmv/error.hpp"
#include "spmv/fem.hpp"
#include "spmv/operator.hpp"

namespace spmv::cuda {
namespace {

// Launch policy. 256 threads: a first value for a streaming kernel with ~30 registers per thread,
// not yet measured on the H100 / H200.
struct LmaPolicy {
  static constexpr int kBlockThreads = 256;
};

template <class Value>
__global__ void __launch_bounds__(LmaPolicy::kBlockThreads) lma_scale_kernel(Value beta, Value* __restrict__ y,
                                                                               std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    y[i] = beta == Value(0) ? Value(0) : beta * y[i];  // beta == 0 never reads y
}

// Elements [begin, end) of one colour: no two of them share an unknown, so the plain += is race-free.
template <class Value, class Index, int Npe>
__global__ void __launch_bounds__(LmaPolicy::kBlockThreads)
    lma_colour_kernel(const Index* __restrict__ unknowns, const Value* __restrict__ matrices, std::int64_t ne,
                      std::int64_t begin, std::int64_t end, Value alpha, const Value* __restrict__ x, Value* y) {
  for (std::int64_t e = begin + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < end;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    Index u[Npe];
    Value xe[Npe];
#pragma unroll
    for (int l = 0; l < Npe; ++l) {
      u[l] = unknowns[l * ne + e];
      xe[l] = u[l] >= 0 ? __ldg(x + u[l]) : Value(0);
    }
#pragma unroll
    for (int a = 0; a < Npe; ++a) {
      if (u[a] < 0) continue;
      Value s = 0;
#pragma unroll
      for (int b = 0; b < Npe; ++b) s += matrices[(a * Npe + b) * ne + e] * xe[b];
      y[u[a]] += alpha * s;
    }
  }
}

template <class Value, class Index>
class DeviceLma final : public LinearOperator<Value> {
 public:
  explicit DeviceLma(const fem::FemProblem<Value, Index>& p)
      : unknowns_count_(p.unknowns), elements_(p.elements), npe_(p.nodes_per_element) {
    if (npe_ != 3 && npe_ != 4)
      throw InvalidArgument("fem: LMA needs 3 or 4 nodes per element, got " + std::to_string(npe_));
    const auto start = std::chrono::steady_clock::now();
    const fem::Colouring colouring = fem::colour_elements(p);
    colour_offsets_ = colouring.colour_offsets;
    const std::int64_t ne = elements_;
    require_device_memory("the LMA element data",
                          static_cast<double>(ne) * npe_ * (sizeof(Index) + npe_ * sizeof(Value)));
    // Reordered one slot at a time, so the host holds one slot's copy beyond the problem.
    std::vector<Index> unknown_slot(static_cast<std::size_t>(ne));
    std::vector<Value> matrix_slot(static_cast<std::size_t>(ne));
    unknowns_ = DeviceBuffer<Index>(static_cast<std::size_t>(ne * npe_));
    matrices_ = DeviceBuffer<Value>(static_cast<std::size_t>(ne * npe_ * npe_));
    for (int l = 0; l < npe_; ++l) {
      for (std::int64_t k = 0; k < ne; ++k) unknown_slot[k] = p.element_unknowns[l * ne + colouring.order[k]];
      copy_slot(unknowns_.data() + l * ne, unknown_slot);
    }
    for (int s = 0; s < npe_ * npe_; ++s) {
      for (std::int64_t k = 0; k < ne; ++k) matrix_slot[k] = p.element_matrices[s * ne + colouring.order[k]];
      copy_slot(matrices_.data() + s * ne, matrix_slot);
    }
    setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  std::int64_t rows() const override { return unknowns_count_; }
  std::int64_t cols() const override { return unknowns_count_; }
  int colours() const { return static_cast<int>(colour_offsets_.size()) - 1; }
  double setup_ms() const { return setup_ms_; }
  std::string policy() const {
    return "colour-scatter: " + std::to_string(colours()) + " colours, " + std::to_string(elements_) +
           " elements, 1 thread/element, block " + std::to_string(LmaPolicy::kBlockThreads);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    const std::int64_t n = unknowns_count_;
    if (n == 0) return;
    if (beta != Value(1)) {
      lma_scale_kernel<<<grid_for(n, LmaPolicy::kBlockThreads), LmaPolicy::kBlockThreads, 0, stream>>>(beta, y, n);
      SPMV_CHECK_LAUNCH(lma_scale_kernel);
    }
    if (alpha == Value(0)) return;  // reads neither the elements nor x
    for (int c = 0; c < colours(); ++c) {
      const std::int64_t begin = colour_offsets_[c], end = colour_offsets_[c + 1];
      const unsigned grid = grid_for(end - begin, LmaPolicy::kBlockThreads);
      if (npe_ == 3)
        lma_colour_kernel<Value, Index, 3><<<grid, LmaPolicy::kBlockThreads, 0, stream>>>(
            unknowns_.data(), matrices_.data(), elements_, begin, end, alpha, x, y);
      else
        lma_colour_kernel<Value, Index, 4><<<grid, LmaPolicy::kBlockThreads, 0, stream>>>(
            unknowns_.data(), matrices_.data(), elements_, begin, end, alpha, x, y);
      SPMV_CHECK_LAUNCH(lma_colour_kernel);
    }
  }

 private:
  template <class T>
  static void copy_slot(T* device, const std::vector<T>& host) {
    if (host.empty()) return;
    SPMV_CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }

  std::int64_t unknowns_count_, elements_;
  int npe_;
  std::vector<std::int64_t> colour_offsets_;  // on the host: the launches' bounds
  DeviceBuffer<Index> unknowns_;              // [l * elements + k], k in colour order
  DeviceBuffer<Value> matrices_;              // [(a * npe + b) * elements + k]
  double setup_ms_ = 0;
};

// fem::LmaOperator on host vectors: one device copy of x and y, so calls are serialized.
template <class Value, class Index>
class HostVectorLma final : public fem::LmaOperator<Value> {
 public:
  HostVectorLma(const fem::FemProblem<Value, Index>& p, int device)
      : lma_(on_device(device, p)),
        x_(static_cast<std::size_t>(p.unknowns)),
        y_(static_cast<std::size_t>(p.unknowns)) {}

  std::int64_t rows() const override { return lma_.rows(); }
  std::int64_t cols() const override { return lma_.cols(); }
  Backend backend() const override { return Backend::Cuda; }
  std::string policy() const override { return lma_.policy(); }
  double setup_ms() const override { return lma_.setup_ms(); }
  int colours() const override { return lma_.colours(); }

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    std::lock_guard lock(mutex_);
    load(x, y);
    lma_.apply(alpha, x_.data(), beta, y_.data(), nullptr);
    y_.download(y);  // synchronises: kernel faults surface here
  }

  Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
              const TimingOptions& options) override {
    std::lock_guard lock(mutex_);
    load(x, y);
    cudaEvent_t start, stop;
    SPMV_CUDA_CHECK(cudaEventCreate(&start));
    SPMV_CUDA_CHECK(cudaEventCreate(&stop));
    const auto run = [&](int n) {
      SPMV_CUDA_CHECK(cudaEventRecord(start, nullptr));
      for (int i = 0; i < n; ++i) lma_.apply(alpha, x_.data(), beta, y_.data(), nullptr);
      SPMV_CUDA_CHECK(cudaEventRecord(stop, nullptr));
      SPMV_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      return static_cast<double>(ms);
    };
    Timing t;
    try {
      t = detail::measure(run, options);
    } catch (...) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      throw;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return t;
  }

 private:
  // Selects the device before the members are built, so that they live on it.
  static const fem::FemProblem<Value, Index>& on_device(int device, const fem::FemProblem<Value, Index>& p) {
    SPMV_CUDA_CHECK(cudaSetDevice(device));
    return p;
  }
  void load(std::span<const Value> x, std::span<Value> y) {
    if (x.size() != x_.size() || y.size() != y_.size())
      throw InvalidArgument("fem LMA: x has " + std::to_string(x.size()) + " entries and y " +
                            std::to_string(y.size()) + ", expected " + std::to_string(x_.size()) + " each");
    x_.upload(x);
    y_.upload(std::span<const Value>(y.data(), y.size()));
  }

  DeviceLma<Value, Index> lma_;
  DeviceBuffer<Value> x_, y_;
  std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<LinearOperator<Value>> make_lma_operator(const fem::FemProblem<Value, Index>& p) {
  return std::make_unique<DeviceLma<Value, Index>>(p);
}

#define SPMV_INSTANTIATE(V, I) \
  template std::unique_ptr<LinearOperator<V>> make_lma_operator(const fem::FemProblem<V, I>&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda

namespace spmv::fem {

template <class Value, class Index>
std::unique_ptr<LmaOperator<Value>> make_cuda_lma_operator(const FemProblem<Value, Index>& p, const Options& options) {
  spmv::detail::require_native_values(options, "fem: the LMA operator");
  if (!cuda_available()) throw Unsupported("no CUDA device is available");
  return std::make_unique<cuda::HostVectorLma<Value, Index>>(p, options.device);
}

#define SPMV_INSTANTIATE(V, I) \
  template std::unique_ptr<LmaOperator<V>> make_cuda_lma_operator(const FemProblem<V, I>&, const Options&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::fem
