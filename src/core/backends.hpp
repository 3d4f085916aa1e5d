#pragma once
// Private: each backend lists what it offers; operator.cpp forwards backend_algorithms() here.
#include <span>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/semiring.hpp"

namespace spmv::detail {
std::span<const Algorithm> cpu_algorithms(Operation op);   // defined by the CPU backend (src/cpu)
std::span<const Algorithm> cuda_algorithms(Operation op);  // defined by the CUDA backend (src/cuda)
// y = A ⊕.⊗ x on host vectors through options.device (src/cuda/semiring_multiply.cu), a SemiringPlan with
// `algorithm` and `options`; sizes already checked.
template <class Value, class Index>
void cuda_semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                            const Options& options, Algorithm algorithm);
}  // namespace spmv::detail
