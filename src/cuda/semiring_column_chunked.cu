// Column-chunked CSR of the semiring product (SemiringPlan, Algorithm::ColumnChunked; A x only, as the semiring
// plan is): the SpMV's blocks (column_chunked.cuh: one CSR block per chunk of `span` columns, converted once at
// plan time by the SpMV's conversion, chunk_columns, with the SpMV's span rule, column_span_of: Options.column_span,
// 0 for the cost model, clamped as the SpMV clamps it) and the SpMV's product over them: the blocks one after the
// other, each served by a plan of its own with Algorithm::Auto and the plan's Options (column_span cleared), here a
// SemiringPlan, gathering from its chunk of x only. Empty blocks are skipped, as the SpMV skips them.
//
// The SpMV adds each block into y with beta = 1; a semiring plan has no beta (y is only written), so block 0 writes
// y (every row: a row empty in the block gets the semiring's zero) and each later block writes a plan-owned partial
// vector that a second launch ⊕-adds into y, y_i = (((A_0 x_0)_i ⊕ (A_1 x_1)_i) ⊕ ...) in chunk order. No atomics
// in the fold: min, max and or-and are exact (the definition's bits); plus-times rounds in chunk order, and gives
// the same bits on every product where every block's plan does (the csr-vector row kernel does; merge-path's
// carries are added atomically). The partial vector is a workspace (writes_workspace, when there are two blocks or
// more): products on different streams are ordered one after another by the plan.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/semiring_ops.hpp"
#include "cuda/column_chunked.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/semiring_formats.cuh"
#include "spmv/cuda/semiring.hpp"

namespace spmv::cuda {
namespace {

constexpr int kFoldBlock = 256;  // y ⊕= partial: a streaming pass, not tuned

// y[i] = y[i] ⊕ partial[i]: one later block's rows into the rows of those before it.
template <class Ops, class Value, class Index>
__global__ void __launch_bounds__(kFoldBlock)
    fold_block_kernel(Index rows, const Value* __restrict__ partial, Value* __restrict__ y) {
  for (long long i = format::global_thread(); i < rows; i += format::grid_threads()) y[i] = Ops::add(y[i], partial[i]);
}

template <class Ops, class Value, class Index>
class SemiringColumnChunked final : public SemiringFormat<Value, Index> {
 public:
  SemiringColumnChunked(const CsrView<Value, Index>& a, Semiring s, const Options& options, cudaStream_t stream)
      : chunks_(chunk_columns(a, column_span_of(a, options.column_span), stream)) {
    Options inner = options;
    inner.column_span = 0;
    for (std::int64_t k = 0; k < chunks_.chunks; ++k) {
      const CsrView<Value, Index> block = chunks_.block(k);
      if (block.nnz == 0) continue;  // adds nothing (a matrix with entries has one block at least)
      blocks_.push_back({chunks_.first_column(k),
                         std::make_unique<SemiringPlan<Value, Index>>(block, s, Algorithm::Auto, inner, stream)});
    }
    if (blocks_.size() > 1) partial_ = DeviceBuffer<Value>(static_cast<std::size_t>(a.rows));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // converted and planned before the plan returns
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      auto& [first, plan] = blocks_[i];
      if (i == 0) {
        plan->apply(x + first, y, stream);
        continue;
      }
      plan->apply(x + first, partial_.data(), stream);
      fold_block_kernel<Ops><<<grid_for(chunks_.rows, kFoldBlock), kFoldBlock, 0, stream>>>(chunks_.rows,
                                                                                            partial_.data(), y);
      SPMV_CHECK_LAUNCH("fold_block_kernel");
    }
  }
  std::string policy() const override {
    const auto& inner = *blocks_.front().plan;
    return "column-chunked span=" + std::to_string(chunks_.span) + " chunks=" + std::to_string(chunks_.chunks) +
           " blocks=" + std::to_string(blocks_.size()) + " inner=" + std::string(to_string(inner.algorithm())) + "[" +
           inner.policy() + "]";
  }
  std::size_t bytes() const override {
    std::size_t bytes = chunks_.bytes() + partial_.bytes();
    for (const auto& b : blocks_) bytes += b.plan->extra_bytes();
    return bytes;
  }
  // The partial vector (the blocks' plans order their own workspaces).
  bool writes_workspace() const override { return blocks_.size() > 1; }

 private:
  struct Block {
    Index first;  // the chunk's first column
    std::unique_ptr<SemiringPlan<Value, Index>> plan;
  };
  ColumnChunks<Value, Index> chunks_;
  std::vector<Block> blocks_;
  DeviceBuffer<Value> partial_;  // rows; with two blocks or more
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_column_chunked(const CsrView<Value, Index>& a, Semiring s,
                                                             const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringColumnChunked, Value, Index>(s, a, s, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_column_chunked)

}  // namespace spmv::cuda
