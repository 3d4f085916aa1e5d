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
  double tuned_ms = 0;  // median per product of the settled choice
  double best_ms = 0;   // the exhaustive sweep's best
  double cost_ms = 0;   // sum over tuning products of (sample + warm-up - best_ms)
};

// Prints the trajectory and the summary lines; `verbose` also prints every sweep point.
TuneSummary bench_tune(const HostMatrix& a, bench::Precision p, const bench::BenchSettings& settings, bool verbose);

}  // namespace spmv::cli
