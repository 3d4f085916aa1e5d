#pragma once
// Private contract between the dispatch layer and the algorithm files (one file per algorithm).
// A factory receives a non-degenerate matrix (rows, cols, nnz > 0; the plan handles the rest), does
// the algorithm's preprocessing on `stream` and allocates everything apply() will need.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "cuda/common/stored_value.cuh"
#include "spmv/cuda/plan.hpp"
#include "spmv/error.hpp"

namespace spmv::cuda {

// Value is the type products compute in (x, y, alpha, beta). A matrix whose values are stored in half
// precision (Options::values) is served by a kernel templated on the stored type that derives from
// CudaAlgorithm<compute_t<stored>, Index> (stored_value.cuh).
template <class Value, class Index>
class CudaAlgorithm {
 public:
  virtual ~CudaAlgorithm() = default;
  // y = alpha * op(A) * x + beta * y; beta == 0 must not read y. No allocation, no synchronisation.
  // Never called with alpha == 0: the plan computes y = beta * y itself then (BLAS: A and x unread).
  virtual void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) = 0;
  virtual std::string policy() const = 0;  // e.g. "block=256 subwarp=8"
  virtual std::size_t extra_bytes() const { return 0; }
  // True when a product writes device memory the algorithm owns (carry-outs, counters, partial sums,
  // a vendor buffer): the plan then orders its products across streams (core/workspace_order.hpp).
  // The default is the safe answer; an algorithm returns false only when every product writes
  // nothing but y (or rewrites the same values in its own arrays, which another product reads
  // unchanged).
  virtual bool writes_workspace() const { return true; }
  // True when every product of this plan gives the same bits, run to run (a fixed summation order:
  // no atomics into y or partial sums, no order set by timing). The default is the safe answer.
  virtual bool reproducible() const { return false; }
};

template <class Value, class Index>
using AlgorithmPtr = std::unique_ptr<CudaAlgorithm<Value, Index>>;

template <class Value, class Index>
using AlgorithmFactory = AlgorithmPtr<Value, Index> (*)(const CsrView<Value, Index>& matrix, Operation op,
                                                        const Options& options, cudaStream_t stream);

// Thrown by a factory for an operation it does not implement.
inline Unsupported unsupported_operation(Algorithm algorithm, Operation op) {
  return Unsupported(std::string("algorithm ") + std::string(to_string(algorithm)) + " does not implement op = " +
                     std::string(to_string(op)));
}

}  // namespace spmv::cuda
