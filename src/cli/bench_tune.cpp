// spmv bench --tune: how Algorithm::Tune did on one matrix. Runs the tuned operator's products until
// it settles (printing the trajectory), times the settled choice, then times every point of its
// candidate space (the exhaustive sweep) and reports the choice's speed as a fraction of the sweep's
// best and the tuning cost: the sum over samples of (their products + warm-up - one product of the best).
#include "bench_tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "spmv/error.hpp"

namespace spmv::cli {
namespace {

template <class Value, class Index>
TuneSummary tune_typed(const HostMatrix& host, const bench::BenchSettings& s, bool verbose) {
  const auto a = convert<Value, Index>(host);
  const auto nx = static_cast<std::size_t>(s.op == Operation::NonTranspose ? a.cols : a.rows);
  const auto ny = static_cast<std::size_t>(s.op == Operation::NonTranspose ? a.rows : a.cols);
  std::vector<Value> x(nx), y(ny, Value(0));
  const auto xd = bench::pseudo_random_vector(nx, 42);
  std::copy(xd.begin(), xd.end(), x.begin());
  const Value alpha = static_cast<Value>(s.alpha == 0 ? 1.0 : s.alpha), beta = static_cast<Value>(s.beta);

  TuneSummary out;
  Options tune_options = s.options;
  auto tuned = make_operator(s.backend, a, Algorithm::Tune, s.op, tune_options);
  // Products until settled: each is a real product (y is overwritten each time with beta = 0).
  for (int i = 0; i < 200 && !tuned->tuning()->settled; ++i) tuned->apply(alpha, x, beta, y);
  const TuningReport r = *tuned->tuning();
  out.settled = r.settled;
  out.applies_to_settle = r.applies_to_settle;
  out.samples = r.samples;
  out.choice = r.choice;
  out.from_wisdom = r.from_wisdom;

  auto time_point = [&](Algorithm algorithm, const Options& options) {
    auto oper = make_operator(s.backend, a, algorithm, s.op, options);
    return oper->time(alpha, x, beta, y, s.timing).median_ms;
  };
  out.best_ms = std::numeric_limits<double>::infinity();
  const TuningCandidate* best = nullptr;
  for (const TuningCandidate& c : r.space) {
    double ms = 0;
    try {
      ms = time_point(c.algorithm, with_knobs(s.options, c));
    } catch (const Unsupported& e) {
      if (verbose) fmt::print("  sweep {:<40} refused: {}\n", c.label, e.what());
      continue;
    }
    ++out.swept;
    if (verbose) fmt::print("  sweep {:<40} {:.6f} ms\n", c.label, ms);
    if (c.algorithm == Algorithm::Auto) out.auto_ms = ms;
    if (ms < out.best_ms) {
      out.best_ms = ms;
      out.best_label = c.label;
      best = &c;
    }
  }
  out.sweep_best_ms = out.best_ms;
  try {
    out.fixed_rule_ms = time_point(Algorithm::CsrCoop, s.options);
  } catch (const Unsupported&) {  // not offered for this operation
  }
  // The sweep's best is the minimum of ~280 noisy medians, biased low; re-time it beside the settled
  // choice and Auto, alternating, and compare the minima (the same treatment for all three). Products
  // of a few microseconds drift by ~10% between rounds (clocks, host launches): kRetimeRounds rounds.
  constexpr int kRetimeRounds = 9;
  std::unique_ptr<Operator<Value, Index>> best_op, auto_op;
  if (best) best_op = make_operator(s.backend, a, best->algorithm, s.op, with_knobs(s.options, *best));
  if (out.auto_ms > 0) auto_op = make_operator(s.backend, a, Algorithm::Auto, s.op, s.options);
  double b = std::numeric_limits<double>::infinity(), t = b, au = b;
  for (int round = 0; round < kRetimeRounds; ++round) {
    if (best_op) b = std::min(b, best_op->time(alpha, x, beta, y, s.timing).median_ms);
    t = std::min(t, tuned->time(alpha, x, beta, y, s.timing).median_ms);
    if (auto_op) au = std::min(au, auto_op->time(alpha, x, beta, y, s.timing).median_ms);
  }
  if (best_op) out.best_ms = b;
  if (auto_op) out.auto_ms = au;
  out.tuned_ms = t;
  fmt::print("  trajectory (one line per step; ms = a timed product, the mean of a burst's; warm-up = its untimed "
             "first run):\n");
  for (const TuningStep& step : r.trajectory) {
    fmt::print("    {:<40} {:>10.6f} ms x{:<2} warm-up {:>10.6f} ms  {}\n", step.candidate, step.ms, step.products,
               step.warmup_ms, step.decision);
    const bool sample = step.ms > 0 && step.decision.rfind("settled", 0) != 0;  // the settled line repeats the best
    if (sample) out.cost_ms += step.products * step.ms + step.warmup_ms - out.best_ms;
  }
  return out;
}

}  // namespace

TuneSummary bench_tune(const HostMatrix& a, bench::Precision p, const bench::BenchSettings& settings,
                       const std::string& label, bool verbose) {
  const bool fits32 = fits_index<std::int32_t>(a.rows, a.cols, a.nnz());
  TuneSummary s = p == bench::Precision::F64
                      ? (fits32 ? tune_typed<double, std::int32_t>(a, settings, verbose)
                                : tune_typed<double, std::int64_t>(a, settings, verbose))
                      : (fits32 ? tune_typed<float, std::int32_t>(a, settings, verbose)
                                : tune_typed<float, std::int64_t>(a, settings, verbose));
  fmt::print("  settled: {} ({}after {} products, {} samples); {:.6f} ms per product\n", s.choice,
             s.from_wisdom ? "from wisdom, " : "", s.applies_to_settle, s.samples, s.tuned_ms);
  fmt::print("  exhaustive sweep of the {} points that build: best {} {:.6f} ms; tuned at {:.1f}% of its speed\n",
             s.swept, s.best_label, s.best_ms, 100.0 * s.best_ms / s.tuned_ms);
  fmt::print("  tuning cost: {:.6f} ms lost against that best over the tuning products ({:.1f} products' worth)\n",
             s.cost_ms, s.cost_ms / s.best_ms);
  fmt::print("  auto {:.6f} ms ({:.1f}% of the best); fixed rule (csr-coop) {:.6f} ms\n", s.auto_ms,
             100.0 * s.best_ms / s.auto_ms, s.fixed_rule_ms);
  // Labels hold commas (generator parameters): quoted.
  fmt::print("tune-summary,\"{}\",{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},\"{}\",\"{}\"\n", label,
             to_string(p), settings.options.expected_applies, s.applies_to_settle, s.samples, s.tuned_ms, s.best_ms,
             s.sweep_best_ms, s.auto_ms, s.fixed_rule_ms, s.cost_ms, s.choice, s.best_label);
  return s;
}

}  // namespace spmv::cli
