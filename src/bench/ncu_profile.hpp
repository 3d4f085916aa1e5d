#pragma once
// `spmv bench --profile` (issue 13 §5; Hiranandani's study read the same counters with nvprof): each
// verified CUDA row runs once more as a child `spmv bench` under Nsight Compute (`ncu`), which reads
// the counters of the kernels of one product (the NVTX range "spmv_product" around the operator's
// apply; plan setup and conversions are outside it), and the row gains seven columns. Where ncu is
// missing or may not read the counters, the rows keep NaN and one clear message says why.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_row.hpp"

namespace spmv::bench {

struct ProfileMetrics {
  double achieved_occupancy = kNaN;
  double warp_efficiency = kNaN;
  double global_load_efficiency = kNaN;
  double l2_hit_rate = kNaN;
  double dram_throughput = kNaN;
  double l2_throughput = kNaN;
  double l2_requests = kNaN;
  int kernels = 0;
};

// The metric names given to ncu --metrics (comma-separated).
std::string_view ncu_metric_list();

// Reads ncu's --csv output (one line per kernel and metric; other lines, e.g. the child's own table,
// are ignored) and averages each metric over the kernels, weighted by gpu__time_duration.sum.
// nullopt when no kernel was profiled.
std::optional<ProfileMetrics> parse_ncu_csv(std::string_view text);

// The ncu executable: $SPMV_NCU, else the first `ncu` on `path` (a PATH-like list), else
// /usr/local/cuda/bin/ncu; empty when none exists.
std::string find_ncu(std::string_view path);

// Runs `ncu ... <spmv> bench <child_args>` (`spmv`: the CLI executable) and parses its counters; on failure the message says why
// (ncu missing, counters not permitted: ERR_NVGPUCTRPERM, no kernel in range).
struct ProfileOutcome {
  std::optional<ProfileMetrics> metrics;
  std::string message;
};
ProfileOutcome run_profile(const std::string& ncu, const std::string& spmv,
                           const std::vector<std::string>& child_args);

void apply_profile(const ProfileMetrics& m, BenchRow& row);

}  // namespace spmv::bench
