// The CUDA SpmmOperator (include/spmv/spmm.hpp) on host views: the matrix uploaded once, X's and Y's
// storage copied up and Y's back per call (their whole extent, so that padding between rows or
// columns comes back unchanged), and event timing for `spmv bench --k`. It runs spmv's SpmmPlan,
// cusparseSpMM, or k products of the SpMV Auto plan (column-major X only: each column is one
// contiguous vector).
#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/timing.hpp"
#include "cpu/instantiate.hpp"
#include "cuda/cusparse_spmm.cuh"
#include "cuda/common/event_pair.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/spmm.hpp"
#include "spmv/spmm.hpp"

namespace spmv {
namespace {

template <class Value, class Index>
class CudaSpmmOperator final : public SpmmOperator<Value, Index> {
 public:
  CudaSpmmOperator(const CsrMatrix<Value, Index>& a, Operation op, SpmmKernel kernel, const Options& options,
                   int variant)
      : device_(set_device(options.device)), matrix_(a), op_(op), kernel_(kernel) {
    const auto start = std::chrono::steady_clock::now();
    switch (kernel) {
      case SpmmKernel::Spmm: spmm_.emplace(matrix_.view(), op, options); break;
      case SpmmKernel::Vendor: vendor_ = std::make_unique<cuda::CusparseSpmm<Value, Index>>(matrix_.view(), op, variant); break;
      case SpmmKernel::ColumnSpmv: spmv_.emplace(matrix_.view(), Algorithm::Auto, op, options); break;
    }
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  Backend backend() const override { return Backend::Cuda; }
  SpmmKernel kernel() const override { return kernel_; }
  Operation operation() const override { return op_; }
  std::string name() const override {
    return kernel_ == SpmmKernel::Spmm ? "spmm" : kernel_ == SpmmKernel::Vendor ? vendor_->name() : "k-spmv";
  }
  std::string policy(std::int64_t k, Layout layout) const override {
    switch (kernel_) {
      case SpmmKernel::Spmm: return spmm_->policy(k, layout);
      case SpmmKernel::Vendor: return vendor_->policy();
      case SpmmKernel::ColumnSpmv: break;
    }
    return std::to_string(k) + " x " + std::string(to_string(spmv_->algorithm())) + " (" + spmv_->policy() + ")";
  }
  double setup_ms() const override { return setup_ms_; }

  void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) override {
    std::lock_guard lock(mutex_);
    SPMV_CUDA_CHECK(cudaSetDevice(device_));
    Copies c = upload(x, y);
    run(alpha, c.x, beta, c.y, nullptr);
    c.d_y.download(std::span<Value>(y.data, c.d_y.size()));
  }

  Timing time(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y,
              const TimingOptions& options) override {
    std::lock_guard lock(mutex_);
    SPMV_CUDA_CHECK(cudaSetDevice(device_));
    Copies c = upload(x, y);
    run(alpha, c.x, beta, c.y, nullptr);  // the first product of a shape may set up (cuSPARSE's workspace)
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    cuda::EventPair events;
    const Timing t = detail::measure(
        [&](int n) {
          return events.elapsed_ms([&] {
            for (int i = 0; i < n; ++i) run(alpha, c.x, beta, c.y, nullptr);
          });
        },
        options);
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    return t;
  }

 private:
  struct Copies {
    cuda::DeviceBuffer<Value> d_x, d_y;
    DenseView<const Value> x;
    DenseView<Value> y;
  };

  static int set_device(int device) {
    SPMV_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  Copies upload(const DenseView<const Value>& x, const DenseView<Value>& y) const {
    const std::int64_t x_rows = op_ == Operation::NonTranspose ? matrix_.cols() : matrix_.rows();
    const std::int64_t y_rows = op_ == Operation::NonTranspose ? matrix_.rows() : matrix_.cols();
    detail::check_dense("spmm", "X", x, x_rows, x.cols);
    detail::check_dense("spmm", "Y", y, y_rows, x.cols);
    Copies c;
    c.d_x = cuda::DeviceBuffer<Value>(std::span<const Value>(x.data, static_cast<std::size_t>(x.extent())));
    c.d_y = cuda::DeviceBuffer<Value>(std::span<const Value>(y.data, static_cast<std::size_t>(y.extent())));
    c.x = {c.d_x.data(), x.rows, x.cols, x.ld, x.layout};
    c.y = {c.d_y.data(), y.rows, y.cols, y.ld, y.layout};
    return c;
  }

  void run(Value alpha, const DenseView<const Value>& x, Value beta, const DenseView<Value>& y, cudaStream_t stream) {
    switch (kernel_) {
      case SpmmKernel::Spmm: spmm_->apply(alpha, x, beta, y, stream); return;
      case SpmmKernel::Vendor: vendor_->apply(alpha, x, beta, y, stream); return;
      case SpmmKernel::ColumnSpmv: break;
    }
    if (x.cols > 1 && (x.layout != Layout::ColMajor || y.layout != Layout::ColMajor))
      throw Unsupported("k-spmv (k SpMV products) runs on column-major X and Y only");
    for (std::int64_t j = 0; j < x.cols; ++j) spmv_->apply(alpha, x.data + j * x.ld, beta, y.data + j * y.ld, stream);
  }

  int device_;
  cuda::DeviceCsr<Value, Index> matrix_;
  Operation op_;
  SpmmKernel kernel_;
  std::optional<cuda::SpmmPlan<Value, Index>> spmm_;
  std::unique_ptr<cuda::CusparseSpmm<Value, Index>> vendor_;
  std::optional<cuda::Plan<Value, Index>> spmv_;
  double setup_ms_ = 0;
  std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<SpmmOperator<Value, Index>> detail::make_cuda_spmm_operator(const CsrMatrix<Value, Index>& a,
                                                                            Operation op, SpmmKernel kernel,
                                                                            const Options& options, int variant) {
  if (!cuda_available()) throw Unsupported("no CUDA device is available");
  return std::make_unique<CudaSpmmOperator<Value, Index>>(a, op, kernel, options, variant);
}

#define SPMV_INSTANTIATE(V, I)                                                                              \
  template std::unique_ptr<SpmmOperator<V, I>> detail::make_cuda_spmm_operator(const CsrMatrix<V, I>&,      \
                                                                               Operation, SpmmKernel,       \
                                                                               const Options&, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
