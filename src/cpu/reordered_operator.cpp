// Options::reorder on the CPU backend: the operator of B = P A P^T (any CPU algorithm) behind two
// host permutations per product, x' = P x in and y = P^T y' out, all inside the timed product.
#include <omp.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "core/timing.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

template <class Value, class Index>
class ReorderedOperator final : public Operator<Value, Index> {
 public:
  ReorderedOperator(std::unique_ptr<Operator<Value, Index>> inner, std::vector<Index> order, Reorder how,
                    double reorder_ms, int threads)
      : inner_(std::move(inner)), order_(std::move(order)), how_(how), reorder_ms_(reorder_ms),
        threads_(threads), x_work_(order_.size()), y_work_(order_.size()) {}

  Backend backend() const override { return Backend::Cpu; }
  Algorithm algorithm() const override { return inner_->algorithm(); }
  Operation operation() const override { return inner_->operation(); }
  std::string policy() const override { return "reorder=" + std::string(to_string(how_)) + " " + inner_->policy(); }
  double setup_ms() const override { return reorder_ms_ + inner_->setup_ms(); }
  // The inner operator's copy of B stands for the copy of A a CPU operator holds anyway.
  std::size_t extra_bytes() const override {
    return inner_->extra_bytes() + order_.size() * (sizeof(Index) + 2 * sizeof(Value));
  }
  std::int64_t rows() const override { return inner_->rows(); }
  std::int64_t cols() const override { return inner_->cols(); }

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    if (x.size() != order_.size() || y.size() != order_.size())
      throw InvalidArgument("spmv (reorder " + std::string(to_string(how_)) + "): x has " + std::to_string(x.size()) +
                            " entries and y " + std::to_string(y.size()) + ", expected " +
                            std::to_string(order_.size()) + " each");
    std::lock_guard lock(mutex_);  // x_work_ and y_work_ are per product
    product(alpha, x.data(), beta, y.data());
  }

  Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
              const TimingOptions& options) override {
    std::lock_guard lock(mutex_);
    std::vector<Value> y_copy(y.begin(), y.end());
    return measure(
        [&](int n) { return host_elapsed_ms([&] { product(alpha, x.data(), beta, y_copy.data()); }, n); }, options);
  }

 private:
  void product(Value alpha, const Value* x, Value beta, Value* y) {
    const auto n = static_cast<std::int64_t>(order_.size());
    const Index* order = order_.data();
    if (alpha == Value(0)) {  // BLAS: A and x unread, y = beta * y (beta == 0 never reads y)
#pragma omp parallel for num_threads(threads_) schedule(static)
      for (std::int64_t i = 0; i < n; ++i) y[i] = beta == Value(0) ? Value(0) : beta * y[i];
      return;
    }
    Value* xw = x_work_.data();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) xw[i] = x[order[i]];
    inner_->apply(alpha, x_work_, Value(0), y_work_);
    const Value* yw = y_work_.data();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) y[order[i]] = beta == Value(0) ? yw[i] : yw[i] + beta * y[order[i]];
  }

  std::unique_ptr<Operator<Value, Index>> inner_;
  std::vector<Index> order_;
  Reorder how_;
  double reorder_ms_;
  int threads_;
  std::vector<Value> x_work_, y_work_;
  std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_reordered_cpu_operator(const CsrMatrix<Value, Index>& a,
                                                                    Algorithm algorithm, Operation op,
                                                                    const Options& options) {
  if (algorithm == Algorithm::Tune)
    throw Unsupported("reorder " + std::string(to_string(options.reorder)) +
                      " is not offered with tune: reorder the matrix with spmv::permute_symmetric and tune that");
  const auto start = std::chrono::steady_clock::now();
  std::vector<Index> order = reorder_permutation(a, options.reorder);
  const CsrMatrix<Value, Index> b = permute_symmetric(a, order);
  const double reorder_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  Options inner_options = options;
  inner_options.reorder = Reorder::None;
  auto inner = make_cpu_operator(b, algorithm, op, inner_options);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  return std::make_unique<ReorderedOperator<Value, Index>>(std::move(inner), std::move(order), options.reorder,
                                                           reorder_ms, threads);
}

#define SPMV_INSTANTIATE(V, I)                                                                             \
  template std::unique_ptr<Operator<V, I>> make_reordered_cpu_operator(const CsrMatrix<V, I>&, Algorithm, \
                                                                       Operation, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
