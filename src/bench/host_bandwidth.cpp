#include "host_bandwidth.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "core/memory_budget.hpp"

namespace spmv::bench {
namespace {

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32768K" / "32M" -> bytes; 0 when unreadable.
std::size_t parse_cache_size(const std::string& text) {
  std::size_t value = 0;
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') value = value * 10 + static_cast<std::size_t>(text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
  return value;
}

// Total last-level cache: size of the highest cache level times the number of distinct instances (a
// two-socket machine or a chiplet CPU has several L3s; one of them is not enough to defeat caching).
std::size_t total_llc_bytes() {
  namespace fs = std::filesystem;
  int best_level = 0;
  std::size_t best_size = 0;
  std::set<std::string> instances;
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = cpu.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 || name[3] < '0' || name[3] > '9') continue;
    for (const auto& index : fs::directory_iterator(cpu.path() / "cache", ec)) {
      if (index.path().filename().string().rfind("index", 0) != 0) continue;
      if (read_line(index.path() / "type") == "Instruction") continue;
      const int level = std::atoi(read_line(index.path() / "level").c_str());
      const std::size_t size = parse_cache_size(read_line(index.path() / "size"));
      if (level > best_level) {
        best_level = level;
        best_size = size;
        instances.clear();
      }
      if (level == best_level) instances.insert(read_line(index.path() / "shared_cpu_list"));
    }
  }
  if (best_size > 0) return best_size * std::max<std::size_t>(1, instances.size());
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? static_cast<std::size_t>(l3) : 0;
}

}  // namespace

HostBandwidth measure_host_copy_bandwidth(int threads) {
  HostBandwidth result;
  result.llc_bytes = total_llc_bytes();
  // 4x the LLC as STREAM's rules ask; at least 64 MiB in case the cache size could not be read. At most
  // an eighth of the memory available each (cgroup and ulimit limits included): a host reporting a large
  // L3 (320 MiB on an Emerald Rapids server, 2.4 GB of arrays) must not get a container killed by the probe.
  result.array_bytes = std::max<std::size_t>(4 * result.llc_bytes, std::size_t{64} << 20);
  const std::uint64_t budget = detail::memory_budget(0).bytes / 8;
  if (budget > 0 && result.array_bytes > budget) {
    result.array_bytes = std::max<std::size_t>(static_cast<std::size_t>(budget), std::size_t{16} << 20);
    result.capped = true;
  }
  const std::size_t n = result.array_bytes / sizeof(double);
  std::unique_ptr<double[]> src(new double[n]);
  std::unique_ptr<double[]> dst(new double[n]);
  double* s = src.get();
  double* d = dst.get();
  const auto count = static_cast<std::int64_t>(n);
  result.threads = threads > 0 ? threads : omp_get_max_threads();
  const int t_count = result.threads;
  // First touch with the same static schedule as the copy, so pages sit on the NUMA node that reads them.
#pragma omp parallel for schedule(static) num_threads(t_count)
  for (std::int64_t i = 0; i < count; ++i) {
    s[i] = 1.0;
    d[i] = 0.0;
  }
  constexpr int kTrials = 10;  // STREAM's NTIMES; the first is a warm-up, the best of the rest is kept
  double best_s = 0;
  for (int t = 0; t < kTrials; ++t) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static) num_threads(t_count)
    for (std::int64_t i = 0; i < count; ++i) d[i] = s[i];
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (t > 0 && (best_s == 0 || seconds < best_s)) best_s = seconds;
    std::swap(s, d);
  }
  result.gbs = best_s > 0 ? 2.0 * static_cast<double>(n * sizeof(double)) / best_s / 1e9 : 0;
  return result;
}

std::string host_cpu_description(int threads) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      const auto first = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
      if (first != std::string::npos) model = line.substr(first);
      break;
    }
  }
  return fmt::format("{} ({} threads)", model, threads > 0 ? threads : omp_get_max_threads());
}

}  // namespace spmv::bench
