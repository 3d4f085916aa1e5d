// The parser behind `spmv bench --profile` on ncu --csv output of the shape Nsight Compute 2025.3
// prints (seen on the H200 machine, 2026-11-23), and its failure paths; the run itself needs a GPU.
#include "ncu_profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <unistd.h>

namespace spmv::bench {
namespace {

std::string line(int id, const std::string& metric, const std::string& unit, const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"470\",\"spmv\",\"127.0.0.1\",\"csr_kernel<float, int>(T1, \"\"x\"\")\",\"1\","
         "\"7\",\"(128, 1, 1)\",\"(8192, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"" +
         metric + "\",\"" + unit + "\",\"" + value + "\"\n";
}

const std::string kHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

TEST(NcuProfile, AveragesKernelsWeightedByDuration) {
  // Kernel 0 runs 3 us, kernel 1 runs 1,000 ns (a thousands separator): weights 3 : 1.
  const std::string text = "==PROF== Connected to process 470\n"
                           "algorithm  verified  median ms   (the child's own table is ignored)\n" +
                           kHeader + line(0, "gpu__time_duration.sum", "usecond", "3") +
                           line(0, "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "80") +
                           line(0, "smsp__thread_inst_executed_per_inst_executed.ratio", "", "32") +
                           line(0, "lts__t_sector_hit_rate.pct", "%", "40") +
                           line(0, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "90") +
                           line(0, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "%", "60") +
                           line(0, "lts__t_requests.avg.pct_of_peak_sustained_elapsed", "%", "92") +
                           line(1, "gpu__time_duration.sum", "nsecond", "1,000") +
                           line(1, "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "40") +
                           line(1, "smsp__thread_inst_executed_per_inst_executed.ratio", "", "16") +
                           line(1, "lts__t_sector_hit_rate.pct", "%", "80") +
                           line(1, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "10") +
                           line(1, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "%", "20") +
                           line(1, "lts__t_requests.avg.pct_of_peak_sustained_elapsed", "%", "4");
  const auto m = parse_ncu_csv(text);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->kernels, 2);
  EXPECT_DOUBLE_EQ(m->achieved_occupancy, (3 * 80 + 1 * 40) / 4.0);
  EXPECT_DOUBLE_EQ(m->warp_efficiency, (3 * 100 + 1 * 50) / 4.0);  // 32 and 16 active lanes of 32
  EXPECT_DOUBLE_EQ(m->l2_hit_rate, (3 * 40 + 1 * 80) / 4.0);
  EXPECT_DOUBLE_EQ(m->dram_throughput, (3 * 90 + 1 * 10) / 4.0);
  EXPECT_DOUBLE_EQ(m->l2_throughput, (3 * 60 + 1 * 20) / 4.0);
  EXPECT_DOUBLE_EQ(m->l2_requests, (3 * 92 + 1 * 4) / 4.0);
  EXPECT_TRUE(std::isnan(m->global_load_efficiency));  // not in the output: not measured, not zero
}

TEST(NcuProfile, NoKernelMeansNoMetrics) {
  EXPECT_FALSE(parse_ncu_csv("").has_value());
  EXPECT_FALSE(parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n").has_value());
  EXPECT_FALSE(parse_ncu_csv(kHeader).has_value());
}

TEST(NcuProfile, MissingNcuIsAClearMessage) {
  ::setenv("SPMV_NCU", "", 1);
  EXPECT_EQ(find_ncu("/nonexistent-a:/nonexistent-b").empty(), ::access("/usr/local/cuda/bin/ncu", X_OK) != 0);
  const ProfileOutcome out = run_profile("", "spmv", {});
  EXPECT_FALSE(out.metrics.has_value());
  EXPECT_NE(out.message.find("ncu"), std::string::npos);
  ::setenv("SPMV_NCU", "/nonexistent/ncu", 1);
  EXPECT_EQ(find_ncu("/usr/bin"), "");
  ::unsetenv("SPMV_NCU");
}

}  // namespace
}  // namespace spmv::bench
