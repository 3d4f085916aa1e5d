#pragma once
// Private: each backend lists what it offers; operator.cpp forwards backend_algorithms() here.
#include <span>

#include "spmv/algorithm.hpp"

namespace spmv::detail {
std::span<const Algorithm> cpu_algorithms(Operation op);   // defined by the CPU backend (src/cpu)
std::span<const Algorithm> cuda_algorithms(Operation op);  // defined by the CUDA backend (src/cuda)
}  // namespace spmv::detail
