#include "core/memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <limits>
#include <string>

namespace spmv::detail {
namespace {

constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

// "MemAvailable:   23795124 kB" -> bytes, read line by line (some lines have no unit). A zero is not
// believed: it was seen on a virtual machine whose memory grows on demand (a Firecracker guest), where
// a running process plainly had memory to use; the other limits below still apply.
std::uint64_t mem_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib > 0 ? kib * 1024 : kUnknown;
  }
  return kUnknown;
}

std::uint64_t read_number(const char* path) {
  std::ifstream f(path);
  std::uint64_t v = 0;
  return f >> v ? v : kUnknown;  // "max" (no limit) fails to parse
}

std::uint64_t cgroup_room() {
  const std::uint64_t limit = read_number("/sys/fs/cgroup/memory.max");
  if (limit == kUnknown) return kUnknown;
  const std::uint64_t used = read_number("/sys/fs/cgroup/memory.current");
  if (used == kUnknown) return limit;
  return used > limit ? 0 : limit - used;
}

std::uint64_t address_space_room() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return kUnknown;
  std::uint64_t pages = 0;
  std::ifstream statm("/proc/self/statm");
  statm >> pages;  // total program size in pages
  const std::uint64_t used = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return used > rl.rlim_cur ? 0 : rl.rlim_cur - used;
}

}  // namespace

MemoryBudget memory_budget(std::uint64_t max_memory) {
  if (max_memory > 0) return {max_memory, "the max_memory limit"};
  MemoryBudget b{kUnknown, ""};
  auto take = [&](std::uint64_t bytes, const char* source) {
    if (bytes < b.bytes) b = {bytes, source};
  };
  take(mem_available(), "the memory available (MemAvailable in /proc/meminfo)");
  take(cgroup_room(), "the room left under the cgroup's memory.max");
  take(address_space_room(), "the address space left under RLIMIT_AS (ulimit -v)");
  if (b.bytes == kUnknown) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) b = {static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page), "the free memory"};
  }
  return b;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) {
    bytes /= 1000;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace spmv::detail
