#pragma once
// Private: whether SPMV_DEBUG_LOG asks for the library's diagnostic lines on stderr (the plan's choice,
// the tuner's steps, the host phases' times, the distributed split). One reader for all of them.
#include <cstdlib>
#include <cstring>

namespace spmv::detail {

// SPMV_DEBUG_LOG set, not empty and not "0" (read once).
inline bool debug_log_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("SPMV_DEBUG_LOG");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

}  // namespace spmv::detail
