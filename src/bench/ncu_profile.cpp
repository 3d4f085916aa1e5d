#include "ncu_profile.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace spmv::bench {
namespace {

constexpr std::string_view kDuration = "gpu__time_duration.sum";
constexpr std::string_view kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr std::string_view kThreadsPerInstruction = "smsp__thread_inst_executed_per_inst_executed.ratio";
constexpr std::string_view kLoadEfficiency = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
constexpr std::string_view kL2Hit = "lts__t_sector_hit_rate.pct";
constexpr std::string_view kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
// Sectors moved through L2, and requests (tag lookups) L2 served, as shares of their peaks in the elapsed
// time. A warp's gather of 32 scattered x entries is 32 requests of one sector each: such products run
// at 79-95% of the request peak with sectors at 34-38% and DRAM at 24-28% (f32; H200, docs/PERFORMANCE.md).
constexpr std::string_view kL2Sectors = "lts__t_sectors.avg.pct_of_peak_sustained_elapsed";
constexpr std::string_view kL2Requests = "lts__t_requests.avg.pct_of_peak_sustained_elapsed";

// One CSV line of quoted fields ("a","b,c",...); ncu doubles embedded quotes.
std::vector<std::string> split_quoted(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '"') return {};
    std::string field;
    for (++i; i < line.size(); ++i) {
      if (line[i] == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          break;
        }
      } else {
        field += line[i];
      }
    }
    fields.push_back(std::move(field));
    i += 2;  // closing quote and comma
  }
  return fields;
}

std::optional<double> number(std::string text) {
  std::erase(text, ',');  // thousands separators
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  return v;
}

double to_nanoseconds(double v, std::string_view unit) {
  if (unit == "usecond" || unit == "us") return v * 1e3;
  if (unit == "msecond" || unit == "ms") return v * 1e6;
  if (unit == "second" || unit == "s") return v * 1e9;
  return v;  // nsecond
}

}  // namespace

std::string_view ncu_metric_list() {
  static const std::string list = fmt::format("{},{},{},{},{},{},{},{}", kDuration, kOccupancy, kThreadsPerInstruction,
                                              kLoadEfficiency, kL2Hit, kDram, kL2Sectors, kL2Requests);
  return list;
}

std::optional<ProfileMetrics> parse_ncu_csv(std::string_view text) {
  std::vector<std::string> header;
  int id = -1, metric = -1, unit = -1, value = -1;
  std::map<std::string, std::map<std::string, double>> kernels;  // kernel ID -> metric -> value
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::vector<std::string> fields = split_quoted(line);
    if (fields.empty()) continue;
    if (header.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == "ID") id = int(i);
        if (fields[i] == "Metric Name") metric = int(i);
        if (fields[i] == "Metric Unit") unit = int(i);
        if (fields[i] == "Metric Value") value = int(i);
      }
      if (id >= 0 && metric >= 0 && value >= 0) header = fields;
      continue;
    }
    if (fields.size() != header.size()) continue;
    const auto v = number(fields[value]);
    if (!v) continue;
    double x = *v;
    if (fields[metric] == kDuration && unit >= 0) x = to_nanoseconds(x, fields[unit]);
    kernels[fields[id]][fields[metric]] = x;
  }
  if (kernels.empty()) return std::nullopt;

  ProfileMetrics m;
  m.kernels = static_cast<int>(kernels.size());
  const auto average = [&](std::string_view name, double scale) {
    double sum = 0, weight = 0;
    for (const auto& [kernel, values] : kernels) {
      const auto it = values.find(std::string(name));
      if (it == values.end()) continue;
      const auto d = values.find(std::string(kDuration));
      const double w = d != values.end() && d->second > 0 ? d->second : 1.0;
      sum += w * it->second * scale;
      weight += w;
    }
    return weight > 0 ? sum / weight : kNaN;
  };
  m.achieved_occupancy = average(kOccupancy, 1.0);
  m.warp_efficiency = average(kThreadsPerInstruction, 100.0 / 32.0);
  m.global_load_efficiency = average(kLoadEfficiency, 1.0);
  m.l2_hit_rate = average(kL2Hit, 1.0);
  m.dram_throughput = average(kDram, 1.0);
  m.l2_throughput = average(kL2Sectors, 1.0);
  m.l2_requests = average(kL2Requests, 1.0);
  return m;
}

std::string find_ncu(std::string_view path) {
  if (const char* env = std::getenv("SPMV_NCU"); env && *env) return std::filesystem::exists(env) ? env : "";
  while (!path.empty()) {
    const auto colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    path.remove_prefix(colon == std::string_view::npos ? path.size() : colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "ncu";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  const char* fallback = "/usr/local/cuda/bin/ncu";
  return ::access(fallback, X_OK) == 0 ? fallback : "";
}

ProfileOutcome run_profile(const std::string& ncu, const std::string& spmv,
                           const std::vector<std::string>& child_args) {
  ProfileOutcome out;
  if (ncu.empty()) {
    out.message = "ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin; set SPMV_NCU to its path";
    return out;
  }
  const auto quote = [](const std::string& a) {
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string command = fmt::format("{} --csv --print-units base --nvtx --nvtx-include spmv_product/ --metrics {} {} bench",
                                    quote(ncu), ncu_metric_list(), quote(spmv));
  for (const std::string& a : child_args) command += " " + quote(a);
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    out.message = "could not start ncu";
    return out;
  }
  std::string text;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  out.metrics = parse_ncu_csv(text);
  if (out.metrics) return out;
  if (text.find("ERR_NVGPUCTRPERM") != std::string::npos)
    out.message = "ncu may not read the GPU performance counters here (ERR_NVGPUCTRPERM: needs admin rights or "
                  "NVreg_RestrictProfilingToAdminUsers=0)";
  else
    out.message = fmt::format("ncu profiled no kernel (exit status {}); its last output: {}", status,
                              text.substr(text.size() > 300 ? text.size() - 300 : 0));
  return out;
}

void apply_profile(const ProfileMetrics& m, BenchRow& row) {
  row.achieved_occupancy = m.achieved_occupancy;
  row.warp_efficiency = m.warp_efficiency;
  row.global_load_efficiency = m.global_load_efficiency;
  row.l2_hit_rate = m.l2_hit_rate;
  row.dram_throughput = m.dram_throughput;
  row.l2_throughput = m.l2_throughput;
  row.l2_requests = m.l2_requests;
}

}  // namespace spmv::bench
