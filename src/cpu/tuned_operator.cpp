// Algorithm::Tune on the CPU: every candidate is an ordinary CPU operator (so every product is right,
// also while tuning), built when the tuner first asks for it and timed by the wall clock around its
// product. The first product of a new candidate runs once untimed into a scratch vector (first touch
// of its data, OpenMP team start), so that its sample measures the steady state. After settling the
// operator keeps only the chosen candidate and drops its copy of the matrix.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backends.hpp"
#include "core/debug_log.hpp"
#include "core/tuner.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

template <class Value, class Index>
class TunedCpuOperator final : public Operator<Value, Index> {
 public:
  TunedCpuOperator(const CsrMatrix<Value, Index>& a, Operation op, const Options& options, Algorithm auto_choice,
                   int auto_threads)
      : a_(std::make_shared<const CsrMatrix<Value, Index>>(a)), op_(op), user_(options),
        tuner_(build_tuning_space(inputs(a, op, options, auto_choice, auto_threads))),
        x_size_(op == Operation::NonTranspose ? a.cols : a.rows), y_size_(op == Operation::NonTranspose ? a.rows : a.cols) {
    const auto start = std::chrono::steady_clock::now();
    plans_.resize(1);
    plans_[0] = make_cpu_operator(*a_, Algorithm::Auto, op, options);  // point 0: Auto's choice as Auto builds it
    policies_.push_back(kernel_policy(plans_[0]->policy()));
    warmed_.push_back(false);
    load_wisdom_if_any();
    setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  Backend backend() const override { return Backend::Cpu; }
  Algorithm algorithm() const override {
    std::lock_guard lock(mutex_);
    return current()->algorithm();
  }
  Operation operation() const override { return op_; }
  std::string policy() const override {
    std::lock_guard lock(mutex_);
    const std::string state = settled_ ? (from_wisdom_ ? "from wisdom" : "settled after " + std::to_string(applies_to_settle_) + " products")
                                       : "tuning, " + std::to_string(tuner_.samples()) + " of at most " +
                                             std::to_string(kMaxTuningSamples) + " samples";
    return "tune(" + state + ": " + tuner_.label(current_index()) + ") " + current()->policy();
  }
  double setup_ms() const override { return setup_ms_; }
  std::size_t extra_bytes() const override {
    std::lock_guard lock(mutex_);
    std::size_t bytes = current()->extra_bytes() + scratch_.size() * sizeof(Value);
    if (a_) bytes += a_->row_ptr.size() * sizeof(Index) + a_->col_idx.size() * sizeof(Index) + a_->values.size() * sizeof(Value);
    return bytes;
  }
  std::int64_t rows() const override { return y_size_; }
  std::int64_t cols() const override { return x_size_; }

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    if (x.size() != static_cast<std::size_t>(x_size_) || y.size() != static_cast<std::size_t>(y_size_))
      throw InvalidArgument("spmv tune: x has " + std::to_string(x.size()) + " entries and y " +
                            std::to_string(y.size()) + ", expected " + std::to_string(x_size_) + " and " +
                            std::to_string(y_size_));
    std::lock_guard lock(mutex_);  // tuning state, and the candidates' own scratch
    ++applies_;
    // alpha == 0 reads neither A nor x: not a sample of anything.
    if (settled_ || alpha == Value(0)) return current()->apply(alpha, x, beta, y);
    Tuner::Next next = pending_ ? *pending_ : tuner_.next();
    pending_.reset();
    while (next.kind == Tuner::Next::Run) {
      const int c = next.candidate;
      if (!build(c)) {  // refused or a duplicate: no product spent, ask again
        next = tuner_.next();
        continue;
      }
      double warmup_ms = 0;
      if (!warmed_[c]) {
        scratch_.resize(static_cast<std::size_t>(y_size_));
        warmup_ms = elapsed_ms([&] { plans_[c]->apply(alpha, x, Value(0), scratch_); });
        warmed_[c] = true;
      }
      const double ms = elapsed_ms([&] { plans_[c]->apply(alpha, x, beta, y); });
      tuner_.record(c, ms, warmup_ms);
      // Ask now what comes next, so that settling happens with this product, not the next one.
      const Tuner::Next after = tuner_.next();
      if (after.kind == Tuner::Next::Settled) settle(false);
      else pending_ = after;
      return;
    }
    // Wait (never on the CPU, whose times are known at once) or Settled.
    if (next.kind == Tuner::Next::Settled) settle(false);
    current()->apply(alpha, x, beta, y);
  }

  Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
              const TimingOptions& options) override {
    // Tune first (on a copy of y), then time the settled choice.
    std::vector<Value> work(y.begin(), y.end());
    for (int i = 0; i < 4 * kMaxTuningSamples && !is_settled(); ++i) apply(alpha == Value(0) ? Value(1) : alpha, x, beta, work);
    std::lock_guard lock(mutex_);
    return current()->time(alpha, x, beta, y, options);
  }

  std::optional<TuningReport> tuning() const override {
    std::lock_guard lock(mutex_);
    TuningReport r;
    r.settled = settled_;
    r.from_wisdom = from_wisdom_;
    r.samples = tuner_.samples();
    r.applies = applies_;
    r.applies_to_settle = applies_to_settle_;
    r.choice = tuner_.label(current_index());
    r.trajectory = tuner_.steps();
    r.space = tuner_.exhaustive_space();
    return r;
  }

 private:
  static TuningInputs inputs(const CsrMatrix<Value, Index>& a, Operation op, const Options& options,
                             Algorithm auto_choice, int auto_threads) {
    TuningInputs in;
    in.backend = Backend::Cpu;
    in.op = op;
    in.rows = a.rows;
    in.cols = a.cols;
    in.nnz = a.nnz();
    double sum2 = 0;
    for (Index i = 0; i < a.rows; ++i) {
      const auto len = static_cast<std::int64_t>(a.row_ptr[i + 1] - a.row_ptr[i]);
      in.row_max = std::max(in.row_max, len);
      sum2 += double(len) * double(len);
    }
    in.row_mean = a.rows > 0 ? double(in.nnz) / double(a.rows) : 0;
    in.row_std = a.rows > 0 ? std::sqrt(std::max(0.0, sum2 / double(a.rows) - in.row_mean * in.row_mean)) : 0;
    in.value_bytes = sizeof(Value);
    in.auto_choice = auto_choice;
    const auto offered = cpu_algorithms(op);
    in.offered.assign(offered.begin(), offered.end());
    in.user = options;
    in.max_threads = std::max(1, omp_get_max_threads());
    in.auto_threads = auto_threads;
    return in;
  }

  // Auto's policy string starts with how Auto decided ("auto(...) "); candidates are compared on the
  // kernel's own part.
  static std::string kernel_policy(const std::string& p) {
    if (p.rfind("auto(", 0) != 0) return p;
    const auto close = p.find(") ");
    return close == std::string::npos ? p : p.substr(close + 2);
  }

  template <class F>
  static double elapsed_ms(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  // Builds point c's operator if needed. False when it was refused or equals an earlier point (the
  // tuner has been told).
  bool build(int c) {
    if (static_cast<int>(plans_.size()) <= c) {
      plans_.resize(c + 1);
      policies_.resize(c + 1);
      warmed_.resize(c + 1, false);
    }
    if (plans_[c]) return true;
    try {
      plans_[c] = make_cpu_operator(*a_, tuner_.algorithm(c), op_, tuner_.options(c, user_));
    } catch (const Unsupported& e) {
      tuner_.refuse(c, e.what());
      return false;
    }
    policies_[c] = kernel_policy(plans_[c]->policy());
    for (int i = 0; i < c; ++i)
      if (plans_[i] && plans_[i]->algorithm() == plans_[c]->algorithm() && policies_[i] == policies_[c]) {
        plans_[c].reset();
        tuner_.duplicate(c, i);
        return false;
      }
    return true;
  }

  void settle(bool from_wisdom) {
    const int best = tuner_.best();
    if (!build_for_settle(best)) return;
    settled_ = true;
    from_wisdom_ = from_wisdom;
    applies_to_settle_ = from_wisdom ? 0 : applies_;
    best_ = std::move(plans_[best]);
    plans_.clear();
    plans_.shrink_to_fit();
    a_.reset();  // nothing else will be built
    scratch_ = {};
    settled_flag_.store(true);
    if (!from_wisdom) save_wisdom_if_any(best);
  }

  bool build_for_settle(int c) {
    if (c < static_cast<int>(plans_.size()) && plans_[c]) return true;
    if (static_cast<int>(plans_.size()) <= c) plans_.resize(c + 1);
    plans_[c] = make_cpu_operator(*a_, c == 0 ? Algorithm::Auto : tuner_.algorithm(c), op_, tuner_.options(c, user_));
    return true;
  }

  WisdomKey wisdom_key() const {
    WisdomKey k;
    k.device = cpu_device_name(std::max(1, omp_get_max_threads()));
    k.value = sizeof(Value) == 4 ? "f32" : "f64";
    k.index = sizeof(Index) == 4 ? "i32" : "i64";
    k.operation = std::string(to_string(op_));
    k.conversions = user_.expected_applies > 0;
    k.rows = a_->rows;
    k.cols = a_->cols;
    k.nnz = a_->nnz();
    const ColumnSample s = wisdom_column_sample(k.nnz);
    std::vector<Index> sample(static_cast<std::size_t>(s.count));
    for (std::int64_t i = 0; i < s.count; ++i) sample[i] = a_->col_idx[static_cast<std::size_t>(i * s.stride)];
    k.structure = structure_hash<Index>(k.rows, k.cols, k.nnz, a_->row_ptr, sample);
    return k;
  }

  void load_wisdom_if_any() {
    wisdom_path_ = wisdom_path(user_);
    if (wisdom_path_.empty()) return;
    key_ = wisdom_key();
    std::string note;
    const auto entry = load_wisdom(wisdom_path_, key_, &note);  // a corrupt file throws ParseError
    if (!entry) {
      if (debug_log_enabled()) std::fprintf(stderr, "[spmv] tune: wisdom %s not used: %s\n", wisdom_path_.c_str(), note.c_str());
      return;
    }
    const auto c = wisdom_candidate(tuner_, *entry);
    if (!c) {
      if (debug_log_enabled())
        std::fprintf(stderr, "[spmv] tune: wisdom %s not used: its choice %s is not in this space\n", wisdom_path_.c_str(),
                     entry->algorithm.c_str());
      return;
    }
    // Build the recorded choice first: if this build refuses it (e.g. an algorithm it lacks), tune.
    const bool auto_point = c->family == 0 && std::all_of(c->position.begin(), c->position.end(), [](int p) { return p < 0; });
    Options o = user_;
    const Family& f = tuner_.space().families[c->family];
    for (std::size_t i = 0; i < f.axes.size(); ++i)
      if (c->position[i] >= 0) knob_field(o, f.axes[i].knob) = f.axes[i].values[c->position[i]];
    std::unique_ptr<Operator<Value, Index>> plan;
    try {
      plan = auto_point ? make_cpu_operator(*a_, Algorithm::Auto, op_, user_) : make_cpu_operator(*a_, f.algorithm, op_, o);
    } catch (const Unsupported& e) {
      if (debug_log_enabled()) std::fprintf(stderr, "[spmv] tune: wisdom choice refused (%s); tuning\n", e.what());
      return;
    }
    tuner_.settle_on(*c, "wisdom " + wisdom_path_);
    const int best = tuner_.best();
    if (static_cast<int>(plans_.size()) <= best) plans_.resize(best + 1);
    plans_[best] = std::move(plan);
    settle(true);
  }

  void save_wisdom_if_any(int best) {
    if (wisdom_path_.empty()) return;
    try {
      save_wisdom(wisdom_path_, wisdom_entry(tuner_, best, key_));
    } catch (const Error& e) {  // the product is done; say why nothing was saved
      std::fprintf(stderr, "[spmv] tune: wisdom not saved: %s\n", e.what());
    }
  }

  bool is_settled() const { return settled_flag_.load(); }
  int current_index() const { return settled_ ? tuner_.best() : std::max(tuner_.best(), 0); }
  Operator<Value, Index>* current() const {
    if (settled_) return best_.get();
    const int b = std::max(tuner_.best(), 0);
    return plans_[b] ? plans_[b].get() : plans_[0].get();
  }

  std::shared_ptr<const CsrMatrix<Value, Index>> a_;  // for building candidates; dropped on settling
  Operation op_;
  Options user_;
  Tuner tuner_;
  Index x_size_, y_size_;
  std::vector<std::unique_ptr<Operator<Value, Index>>> plans_;  // by point index
  std::vector<std::string> policies_;
  std::vector<bool> warmed_;
  std::vector<Value> scratch_;
  std::optional<Tuner::Next> pending_;
  std::unique_ptr<Operator<Value, Index>> best_;
  bool settled_ = false;
  bool from_wisdom_ = false;
  std::atomic<bool> settled_flag_{false};
  int applies_ = 0;
  int applies_to_settle_ = 0;
  double setup_ms_ = 0;
  std::string wisdom_path_;
  WisdomKey key_;
  mutable std::mutex mutex_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_tuned_cpu_operator(const CsrMatrix<Value, Index>& a, Operation op,
                                                                const Options& options, Algorithm auto_choice,
                                                                int auto_threads) {
  return std::make_unique<TunedCpuOperator<Value, Index>>(a, op, options, auto_choice, auto_threads);
}

#define SPMV_INSTANTIATE(V, I)                                                                                   \
  template std::unique_ptr<Operator<V, I>> make_tuned_cpu_operator(const CsrMatrix<V, I>&, Operation,         \
                                                                   const Options&, Algorithm, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
