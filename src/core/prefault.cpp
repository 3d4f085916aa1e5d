#include "core/prefault.hpp"

#include "spmv/host_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace spmv::detail {

void prefault(void* p, std::size_t bytes, int threads) {
#ifdef MADV_POPULATE_WRITE
  if (bytes < kPrefaultBytes) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // whole pages inside the range: the partial ones at its ends fault on first write, as before
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (end <= begin) return;
  // slices of 2 MiB (a huge page where the kernel uses them), shared dynamically
  const std::uintptr_t slice = std::max<std::uintptr_t>(page, std::uintptr_t{2} << 20);
  const auto slices = static_cast<std::int64_t>((end - begin + slice - 1) / slice);
  int team = 1;
#ifdef _OPENMP
  team = threads > 0 ? threads : omp_get_max_threads();
#else
  (void)threads;
#endif
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::uintptr_t first = begin + static_cast<std::uintptr_t>(s) * slice;
    // a failure (EINVAL before Linux 5.14, ENOMEM) leaves the pages to fault on first write
    madvise(reinterpret_cast<void*>(first), std::min(slice, end - first), MADV_POPULATE_WRITE);
  }
#else
  (void)p;
  (void)bytes;
  (void)threads;
#endif
}

}  // namespace spmv::detail

namespace spmv {

void advise_huge_pages(const void* p, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  // SPMV_HUGE_PAGES=0 turns the advice off (a machine where the kernel's compaction for huge pages stalls)
  static const bool enabled = [] {
    const char* v = std::getenv("SPMV_HUGE_PAGES");
    return v == nullptr || std::string_view(v) != "0";
  }();
  if (!enabled || p == nullptr || bytes < kHugePageMinBytes) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  // advice only: EINVAL (no THP in this kernel) leaves the pages as they would have been
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace spmv
