// spmv bench --tune: how Algorithm::Tune did on one matrix. Runs the tuned operator's products until
// it settles (printing the trajectory), times the settled choice, then times every point of its
// candidate space (the exhaustive sweep) and reports the choice's speed as a fraction of the sweep's
// best and the tuning cost: the sum over tuning products of (sample + warm-up - best time).
#include "bench_tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
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
  out.tuned_ms = tuned->time(alpha, x, beta, y, s.timing).median_ms;

  out.best_ms = std::numeric_limits<double>::infinity();
  for (const TuningCandidate& c : r.space) {
    double ms = 0;
    try {
      auto oper = make_operator(s.backend, a, c.algorithm, s.op, with_knobs(s.options, c));
      ms = oper->time(alpha, x, beta, y, s.timing).median_ms;
    } catch (const Unsupported& e) {
      if (verbose) fmt::print("  sweep {:<40} refused: {}\n", c.label, e.what());
      continue;
    }
    ++out.swept;
    if (verbose) fmt::print("  sweep {:<40} {:.6f} ms\n", c.label, ms);
    if (ms < out.best_ms) {
      out.best_ms = ms;
      out.best_label = c.label;
    }
  }
  fmt::print("  trajectory (one line per step; ms = the timed product, warm-up = its untimed first run):\n");
  for (const TuningStep& step : r.trajectory) {
    fmt::print("    {:<40} {:>10.6f} ms  warm-up {:>10.6f} ms  {}\n", step.candidate, step.ms, step.warmup_ms,
               step.decision);
    const bool sample = step.ms > 0 && step.decision.rfind("settled", 0) != 0;  // the settled line repeats the best
    if (sample) out.cost_ms += step.ms + step.warmup_ms - out.best_ms;
  }
  return out;
}

}  // namespace

TuneSummary bench_tune(const HostMatrix& a, bench::Precision p, const bench::BenchSettings& settings, bool verbose) {
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
  return s;
}

}  // namespace spmv::cli
