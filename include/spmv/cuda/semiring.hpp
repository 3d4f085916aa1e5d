#pragma once
// The semiring products of spmv/semiring.hpp on device arrays: y = A ⊕.⊗ x for a CSR view, enqueued on
// `stream` (nothing allocated, no synchronisation; safe from any number of streams and threads, it has
// no workspace), and SemiringPlan for a matrix applied many times. The same add, multiply and zero as the
// CPU kernel (src/core/semiring_ops.hpp), so min, max and or-and give the CPU's bits; plus-times rounds
// in its own order (use a Plan for fast A x).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "spmv/cuda/plan.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cuda {

// x holds a.cols entries and y a.rows on the current device; y is only written. One launch, no
// allocation; a sub-warp per row, fast on small matrices and short rows (docs/SEMIRINGS.md).
template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y,
                       cudaStream_t stream = nullptr);

// The same product planned once for a matrix applied many times (BFS, shortest paths, PageRank): the
// merge-based kernel of Algorithm::MergePath, generic over the semiring, so every row length and
// power-law row distributions get equal work per block. The construction finds the kernel's tile
// boundaries on `stream` and owns a small workspace (extra_bytes); A's arrays must outlive the plan.
// Products on different streams are ordered one after another, as for Plan (its workspace); y is only
// written, x and y as for semiring_multiply.
template <class Value, class Index>
class SemiringPlan {
 public:
  SemiringPlan(const CsrView<Value, Index>& a, Semiring s, cudaStream_t stream = nullptr);
  ~SemiringPlan();
  SemiringPlan(SemiringPlan&&) noexcept;
  SemiringPlan& operator=(SemiringPlan&&) noexcept;

  void apply(const Value* x, Value* y, cudaStream_t stream = nullptr);

  Semiring semiring() const;
  std::string policy() const;
  std::size_t extra_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
