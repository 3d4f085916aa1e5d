// ConversionChecks and converts_during_solve (include/spmv/conversion_checks.hpp).
#include "spmv/conversion_checks.hpp"

#include <cstdio>

#include "core/debug_log.hpp"

namespace spmv {

bool converts_during_solve(Algorithm requested, const Options& options) {
  return requested == Algorithm::Auto && options.expected_applies <= 0 && options.values == ValueStorage::Native &&
         options.reorder == Reorder::None;
}

bool ConversionChecks::due(std::int64_t applies) {
  if (converted_after_ > 0 || attempts_ >= kMaxAttempts || applies < next_check_) return false;
  while (next_check_ <= applies) next_check_ *= 2;
  return true;
}

void ConversionChecks::attempted(std::int64_t applies, Algorithm chosen, bool changed) {
  ++attempts_;
  if (changed) converted_after_ = applies;
  if (detail::debug_log_enabled())
    std::fprintf(stderr, "[spmv] solver: after %lld products Auto with the hint chose %s (%s)\n",
                 static_cast<long long>(applies), std::string(to_string(chosen)).c_str(),
                 changed ? "converted" : "the same algorithm: kept the first");
}

std::string ConversionChecks::label(const std::string& first, const std::string& converted) const {
  return converted + " (converted after " + std::to_string(converted_after_) + " products of " + first + ")";
}

}  // namespace spmv
