#pragma once
// Private: SELL-C-sigma of the semiring product (SemiringPlan with Algorithm::Sell; semiring_sell.cu has the
// kernel). The layout (sell_layout.cuh) stays behind a pointer, so semiring_plan.cu does not compile the
// conversion's CUB calls.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

#include "spmv/cuda/plan.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cuda {

template <class Value, class Index>
class SemiringSell {
 public:
  // Converts `a` on `stream` as the SELL SpMV does with `options` (sell_c, 0: 32; sell_sigma, 0: 256;
  // max_padding; subwarp: threads a row, 0: its rule) and synchronises it; Unsupported where that refuses.
  SemiringSell(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream);
  ~SemiringSell();
  SemiringSell(SemiringSell&&) noexcept;
  SemiringSell& operator=(SemiringSell&&) noexcept;

  // y = A ⊕.⊗ x: one launch, reads only the layout (no workspace: safe on any number of streams at once).
  void apply(Semiring s, const Value* x, Value* y, cudaStream_t stream) const;
  std::string policy() const;
  std::size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
