#pragma once
// Per-phase host timing of long runs (issue 18: `spmv bench --gen` on billions of nonzeros), printed
// with SPMV_DEBUG_LOG=1 as one stderr line per phase when it ends:
//   [spmv] phase generate/fill: 0.412 s wall, 0.801 s user, 0.020 s system (2.0 cores)
// User and system times are the whole process's (getrusage, all threads), so "cores" = (user +
// system) / wall says whether the phase ran in parallel: near 1 on a 16-core host means serial work.
// Phases nest (an inner phase's line comes first). Header-only, so that the core library, the bench
// engine and the CLI share it without exporting a symbol; it reads the clocks only when the log is on.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "core/debug_log.hpp"

namespace spmv::detail {

class PhaseLog {
 public:
  explicit PhaseLog(std::string name) { start(std::move(name)); }
  ~PhaseLog() { stop(); }
  PhaseLog(const PhaseLog&) = delete;
  PhaseLog& operator=(const PhaseLog&) = delete;

  // Ends the current phase (printing its line) and starts `name`.
  void next(std::string name) {
    stop();
    start(std::move(name));
  }

 private:
  static double seconds(const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  }

  void start(std::string name) {
    if (!debug_log_enabled()) return;
    name_ = std::move(name);
    getrusage(RUSAGE_SELF, &usage_);
    wall_ = std::chrono::steady_clock::now();
  }

  void stop() {
    if (!debug_log_enabled() || name_.empty()) return;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
    rusage now{};
    getrusage(RUSAGE_SELF, &now);
    const double user = seconds(now.ru_utime) - seconds(usage_.ru_utime);
    const double system = seconds(now.ru_stime) - seconds(usage_.ru_stime);
    std::fprintf(stderr, "[spmv] phase %s: %.3f s wall, %.3f s user, %.3f s system (%.1f cores)\n", name_.c_str(), wall,
                 user, system, wall > 0 ? (user + system) / wall : 0.0);
    name_.clear();
  }

  std::string name_;
  rusage usage_{};
  std::chrono::steady_clock::time_point wall_;
};

}  // namespace spmv::detail
