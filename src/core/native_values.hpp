#pragma once
// Options::values on the paths that have no half-precision kernel (SpMM, semirings, the FEM LMA
// operator): refused with a message, never ignored (a silent f32 product would not be the product of
// the rounded matrix the caller asked for).
#include <string>
#include <string_view>

#include "spmv/error.hpp"
#include "spmv/operator.hpp"

namespace spmv::detail {

inline void require_native_values(const Options& options, std::string_view what) {
  if (options.values == ValueStorage::Native) return;
  throw Unsupported(std::string(what) + " has no half-precision kernel: values=" +
                    std::string(to_string(options.values)) +
                    " is offered by the SpMV plans and operators (docs/ALGORITHMS.md \"Half-precision values\")");
}

}  // namespace spmv::detail
