#include "cpu/cpu_operator.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/timing.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

template <class Value, class Index>
class CpuOperator final : public Operator<Value, Index> {
 public:
  CpuOperator(CpuKernel<Value, Index> kernel, Algorithm algorithm, Operation op, Index rows, Index cols,
              double setup_ms)
      : kernel_(std::move(kernel)), algorithm_(algorithm), op_(op), setup_ms_(setup_ms),
        x_size_(op == Operation::NonTranspose ? cols : rows), y_size_(op == Operation::NonTranspose ? rows : cols) {}

  Backend backend() const override { return Backend::Cpu; }
  Algorithm algorithm() const override { return algorithm_; }
  Operation operation() const override { return op_; }
  std::string policy() const override { return kernel_.policy; }
  double setup_ms() const override { return setup_ms_; }
  std::size_t extra_bytes() const override { return kernel_.extra_bytes; }
  std::int64_t rows() const override { return y_size_; }
  std::int64_t cols() const override { return x_size_; }

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    check_sizes(x.size(), y.size());
    std::lock_guard lock(mutex_);  // plans keep per-product scratch (cursors, carry-outs, row sums)
    kernel_.run(alpha, x.data(), beta, y.data());
  }

  Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
              const TimingOptions& options) override {
    check_sizes(x.size(), y.size());
    std::lock_guard lock(mutex_);
    std::vector<Value> y_work(y.begin(), y.end());
    return measure(
        [&](int n) { return host_elapsed_ms([&] { kernel_.run(alpha, x.data(), beta, y_work.data()); }, n); },
        options);
  }

 private:
  void check_sizes(std::size_t x_size, std::size_t y_size) const {
    if (x_size != static_cast<std::size_t>(x_size_) || y_size != static_cast<std::size_t>(y_size_))
      throw InvalidArgument("spmv " + std::string(to_string(algorithm_)) + ": x has " + std::to_string(x_size) +
                            " entries and y " + std::to_string(y_size) + ", expected " + std::to_string(x_size_) +
                            " and " + std::to_string(y_size_) + " for op(A) of " + std::to_string(y_size_) + " x " +
                            std::to_string(x_size_));
  }

  CpuKernel<Value, Index> kernel_;
  Algorithm algorithm_;
  Operation op_;
  double setup_ms_;
  Index x_size_, y_size_;
  std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> wrap_cpu_kernel(CpuKernel<Value, Index> kernel, Algorithm algorithm,
                                                        Operation op, Index rows, Index cols, double setup_ms) {
  return std::make_unique<CpuOperator<Value, Index>>(std::move(kernel), algorithm, op, rows, cols, setup_ms);
}

#define SPMV_INSTANTIATE(V, I)                                                                                  \
  template std::unique_ptr<Operator<V, I>> wrap_cpu_kernel(CpuKernel<V, I>, Algorithm, Operation, I, I, double);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
