#pragma once
// How much memory a large allocation may take: the caller's limit, or else what the system says is
// available. Used by the Matrix Market reader to refuse, from the size line alone, matrices that would
// otherwise thrash or be killed part-way through the read.
#include <cstdint>
#include <string>

namespace spmv::detail {

struct MemoryBudget {
  std::uint64_t bytes = 0;
  std::string source;  // for messages: "the max_memory limit", "the memory available (MemAvailable ...)"
};

// `max_memory` > 0: that limit. Otherwise the smallest of MemAvailable (/proc/meminfo), the cgroup v2
// limit less its current use, and RLIMIT_AS less the address space in use; sysconf's available pages
// where none of those can be read.
MemoryBudget memory_budget(std::uint64_t max_memory);

// "24.0 GB" (10^9 bytes, as free(1) -h and the --max-memory suffixes count them).
std::string format_bytes(double bytes);

}  // namespace spmv::detail
