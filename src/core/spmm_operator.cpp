// make_spmm_operator: the CPU SpMM operators (spmv's SpmmPlan, or k SpMV products of the CPU Auto
// operator, the baseline) and the forward to the CUDA backend (src/cuda/spmm_operator.cu).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/native_values.hpp"
#include "core/timing.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"
#include "spmv/spmm.hpp"

namespace spmv {
namespace {

template <class Value, class Index>
class CpuSpmm final : public SpmmOperator<Value, Index> {
 public:
  CpuSpmm(const CsrMatrix<Value, Index>& a, Operation op, const Options& options) {
    const auto start = std::chrono::steady_clock::now();
    plan_ = std::make_unique<cpu::SpmmPlan<Value, Index>>(a, op, options.threads);
    setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  Backend backend() const override { return Backend::Cpu; }
  SpmmKernel kernel() const override { return SpmmKernel::Spmm; }
  Operation operation() const override { return plan_->operation(); }
  std::string name() const override { return "spmm"; }
  std::string policy(std::int64_t, Layout) const override { return plan_->policy(); }
  double setup_ms() const override { return setup_ms_; }
  void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) override {
    plan_->apply(alpha, x, beta, y);
  }
  Timing time(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y,
              const TimingOptions& options) override {
    plan_->apply(alpha, x, beta, y);  // validates the views once
    return detail::measure([&](int n) { return detail::host_elapsed_ms([&] { plan_->apply(alpha, x, beta, y); }, n); },
                           options);
  }

 private:
  std::unique_ptr<cpu::SpmmPlan<Value, Index>> plan_;
  double setup_ms_ = 0;
};

// k products of the CPU Auto operator, one per column: X's column gathered into a contiguous vector
// (no gather for column-major X), Y's column written back.
template <class Value, class Index>
class CpuColumnSpmv final : public SpmmOperator<Value, Index> {
 public:
  CpuColumnSpmv(const CsrMatrix<Value, Index>& a, Operation op, const Options& options)
      : op_(make_cpu_operator(a, Algorithm::Auto, op, options)),
        x_(static_cast<std::size_t>(op_->cols())),
        y_(static_cast<std::size_t>(op_->rows())) {}
  Backend backend() const override { return Backend::Cpu; }
  SpmmKernel kernel() const override { return SpmmKernel::ColumnSpmv; }
  Operation operation() const override { return op_->operation(); }
  std::string name() const override { return "k-spmv"; }
  std::string policy(std::int64_t k, Layout) const override {
    return std::to_string(k) + " x " + std::string(to_string(op_->algorithm())) + " (" + op_->policy() + ")";
  }
  double setup_ms() const override { return op_->setup_ms(); }
  void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) override {
    detail::check_dense("k-spmv", "X", x, op_->cols(), x.cols);
    detail::check_dense("k-spmv", "Y", y, op_->rows(), x.cols);
    std::lock_guard lock(mutex_);
    for (std::int64_t j = 0; j < x.cols; ++j) run_column(alpha, x, beta, y, j);
  }
  Timing time(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y,
              const TimingOptions& options) override {
    apply(alpha, x, beta, y);
    std::lock_guard lock(mutex_);
    return detail::measure(
        [&](int n) {
          return detail::host_elapsed_ms([&] {
            for (std::int64_t j = 0; j < x.cols; ++j) run_column(alpha, x, beta, y, j);
          }, n);
        },
        options);
  }

 private:
  void run_column(Value alpha, const DenseView<const Value>& x, Value beta, const DenseView<Value>& y,
                  std::int64_t j) {
    const bool x_contiguous = x.layout == Layout::ColMajor, y_contiguous = y.layout == Layout::ColMajor;
    const Value* xj = x_contiguous ? x.data + j * x.ld : x_.data();
    Value* yj = y_contiguous ? y.data + j * y.ld : y_.data();
    if (!x_contiguous)
      for (std::int64_t i = 0; i < x.rows; ++i) x_[i] = x(i, j);
    if (!y_contiguous && beta != Value(0))
      for (std::int64_t i = 0; i < y.rows; ++i) y_[i] = y(i, j);
    op_->apply(alpha, std::span<const Value>(xj, static_cast<std::size_t>(x.rows)), beta,
               std::span<Value>(yj, static_cast<std::size_t>(y.rows)));
    if (!y_contiguous)
      for (std::int64_t i = 0; i < y.rows; ++i) y(i, j) = y_[i];
  }

  std::unique_ptr<Operator<Value, Index>> op_;
  std::vector<Value> x_, y_;
  std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<SpmmOperator<Value, Index>> make_spmm_operator(Backend backend, const CsrMatrix<Value, Index>& a,
                                                               Operation op, SpmmKernel kernel,
                                                               const Options& options, int variant) {
  spmv::detail::require_native_values(options, "SpMM");
  if (backend == Backend::Cuda) return detail::make_cuda_spmm_operator(a, op, kernel, options, variant);
  switch (kernel) {
    case SpmmKernel::Spmm: return std::make_unique<CpuSpmm<Value, Index>>(a, op, options);
    case SpmmKernel::ColumnSpmv: return std::make_unique<CpuColumnSpmv<Value, Index>>(a, op, options);
    case SpmmKernel::Vendor: break;
  }
  throw Unsupported("the CPU backend has no vendor SpMM (its baseline is k SpMV products)");
}

#ifndef SPMV_HAS_CUDA
template <class Value, class Index>
std::unique_ptr<SpmmOperator<Value, Index>> detail::make_cuda_spmm_operator(const CsrMatrix<Value, Index>&, Operation,
                                                                            SpmmKernel, const Options&, int) {
  throw Unsupported("spmv was built without the CUDA backend (configure with -DSPMV_ENABLE_CUDA=ON)");
}
#define SPMV_INSTANTIATE_STUB(V, I)                                                                         \
  template std::unique_ptr<SpmmOperator<V, I>> detail::make_cuda_spmm_operator(const CsrMatrix<V, I>&,      \
                                                                               Operation, SpmmKernel,       \
                                                                               const Options&, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE_STUB)
#undef SPMV_INSTANTIATE_STUB
#endif

#define SPMV_INSTANTIATE(V, I)                                                                              \
  template std::unique_ptr<SpmmOperator<V, I>> make_spmm_operator(Backend, const CsrMatrix<V, I>&, Operation, \
                                                                  SpmmKernel, const Options&, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
