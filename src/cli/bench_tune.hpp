#pragma once
// spmv bench --tune (bench_tune.cpp): Algorithm::Tune against an exhaustive sweep of its space.
#include <string>

#include "bench_engine.hpp"
#include "cli_common.hpp"

namespace spmv::cli {

struct TuneSummary {
  bool settled = false, from_wisdom = false;
  int applies_to_settle = 0, samples = 0, swept = 0;
  std::string choice, best_label;
  double tuned_ms = 0;  // median per product of the settled choice (re-timed beside the sweep's best)
  double best_ms = 0;   // the exhaustive sweep's best (re-timed beside the settled choice)
  double sweep_best_ms = 0;  // the best point's time in the sweep itself (the minimum of ~280 medians)
  double auto_ms = 0;   // Algorithm::Auto (the tuner's first point)
  double fixed_rule_ms = 0;  // csr-coop with its fixed rule (Reguly & Giles), 0 where not offered
  double cost_ms = 0;   // sum over tuning products of (sample + warm-up - best_ms)
};

// Prints the trajectory and the summary lines; `verbose` also prints every sweep point. The last line,
// "tune-summary,<label>,<precision>,<expected applies>,...", is one CSV record for bench/tune_table.py.
TuneSummary bench_tune(const HostMatrix& a, bench::Precision p, const bench::BenchSettings& settings,
                       const std::string& label, bool verbose);

}  // namespace spmv::cli
