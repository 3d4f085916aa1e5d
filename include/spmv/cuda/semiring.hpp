#pragma once
// The semiring products of spmv/semiring.hpp on device arrays: y = A ⊕.⊗ x for a CSR view, enqueued on
// `stream` (nothing allocated, no synchronisation; safe from any number of streams and threads, it has
// no workspace). The same add, multiply and zero as the CPU kernel (src/core/semiring_ops.hpp), so min,
// max and or-and give the CPU's bits; plus-times rounds in its own order (use a Plan for fast A x).
#include <cuda_runtime_api.h>

#include "spmv/cuda/plan.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cuda {

// x holds a.cols entries and y a.rows on the current device; y is only written.
template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y,
                       cudaStream_t stream = nullptr);

}  // namespace spmv::cuda
