#pragma once
// What the solvers' converting operators share (spmv::ConvertingOperator on the CPU, include/spmv/solvers.hpp;
// spmv::cuda::ConvertingPlanOperator, include/spmv/cuda/linear_operator.hpp; docs/SOLVERS.md "Conversion
// during a solve"): which solves get one, and when it asks its backend's Auto rule again.
#include <cstdint>
#include <string>

#include "spmv/algorithm.hpp"
#include "spmv/operator.hpp"

namespace spmv {

// Whether a solve's operator for `requested` and `options` may convert during the solve: Auto without the
// expected-applies hint, native values, no reordering (the other plans take no conversion).
bool converts_during_solve(Algorithm requested, const Options& options);

// The checks of a converting operator: at 16, 32, 64, ... products, none after a conversion or after
// kMaxAttempts plans were built (a padding limit or a race may refuse the conversion).
class ConversionChecks {
 public:
  static constexpr std::int64_t kFirstCheck = 16;
  static constexpr int kMaxAttempts = 3;
  // Whether `applies` products reached the next check (the one after moves past them).
  bool due(std::int64_t applies);
  void stop() { attempts_ = kMaxAttempts; }  // nothing to convert (a matrix without nonzeros)
  // A plan built with the hint `applies`, of `chosen` algorithm; `changed`: it replaces the first (logged).
  void attempted(std::int64_t applies, Algorithm chosen, bool changed);
  std::int64_t converted_after() const { return converted_after_; }  // products before the conversion; 0: none
  // After a conversion: "<converted> (converted after N products of <first>)".
  std::string label(const std::string& first, const std::string& converted) const;

 private:
  std::int64_t next_check_ = kFirstCheck;
  std::int64_t converted_after_ = 0;
  int attempts_ = 0;
};

}  // namespace spmv
