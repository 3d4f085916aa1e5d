// CSR-Adaptive of the semiring product (SemiringPlan, Algorithm::CsrAdaptive): the SpMV's row blocks, built once at
// plan time by its own code (csr_adaptive.cuh's build_row_blocks), and its kernel body with the semiring's ops.
// CSR-Stream stages a block's products a_k ⊗ x_k in shared memory and ⊕-folds each row from the semiring's zero;
// CSR-Vector reduces a row with a block reduction over ⊕. CSR-VectorL, a row longer than the chunk length split
// over several CUDA blocks: the split rows are first set to the semiring's zero (one small launch), then each
// chunk's partial is ⊕-added into its row atomically (atomicAdd for plus-times, a compare-and-swap loop on the
// value's bits for min, max and or: merge_path.cuh's atomic_add). min, max and or-and are exact in any order, so
// every product gives the definition's bits; plus-times gives the same bits on every product unless a row is split
// (the chunks' atomic adds land in any order), as the SpMV. The row blocks are only read, and a product writes
// nothing but y: products on any number of streams may run at once. The SpMV's block size (Options.block_size, a
// power of two in [32, 1024], else its policy). A's arrays are read in place.
#include <algorithm>
#include <climits>
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/adaptive_block_threads.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/csr_adaptive.cuh"
#include "cuda/merge_path.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <int Threads, class Ops, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    semiring_csr_adaptive_kernel(CsrView<Value, Index> a, const Index* __restrict__ blocks, long long num_blocks,
                                 bool aligned, const Value* __restrict__ x, Value* __restrict__ y) {
  csr_adaptive::row_blocks<Threads, Ops>(a, blocks, num_blocks, aligned, x, y, PlainRow<Value>{},
                                         [](Value* out, Index row, Value partial) {
                                           merge_path::atomic_add<Ops>(out + row, partial);
                                         });
}

// The split rows' starting value before their chunks are ⊕-added: the semiring's zero.
template <class Ops, class Value, class Index>
__global__ void zero_split_rows_kernel(const Index* __restrict__ split_rows, long long count, Value* __restrict__ y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[split_rows[i]] = Ops::zero();
}

template <class Ops, class Value, class Index>
class SemiringCsrAdaptive final : public SemiringFormat<Value, Index> {
 public:
  SemiringCsrAdaptive(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_block_threads(options.block_size, csr_adaptive::policy_for(sizeof(Value)).block_threads,
                                       "CsrAdaptive")),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        blocks_(csr_adaptive::build_row_blocks(a.row_ptr, a.rows, a.nnz, csr_adaptive::kWindow<Value>,
                                               csr_adaptive::kLongRowChunk<Value>, stream)) {}

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    const auto split = static_cast<long long>(blocks_.split_rows.size());
    if (split > 0) {
      constexpr int block = 256;
      zero_split_rows_kernel<Ops><<<grid_for(split, block), block, 0, stream>>>(blocks_.split_rows.data(), split, y);
      SPMV_CHECK_LAUNCH("zero_split_rows_kernel");
    }
    const unsigned grid = static_cast<unsigned>(std::min<long long>(blocks_.count, INT_MAX));
    with_block_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      semiring_csr_adaptive_kernel<kThreads, Ops, Value, Index>
          <<<grid, kThreads, 0, stream>>>(a_, blocks_.blocks.data(), blocks_.count, aligned_, x, y);
      SPMV_CHECK_LAUNCH("semiring_csr_adaptive_kernel");
    });
  }
  std::string policy() const override {
    return "csr-adaptive " + csr_adaptive::policy_string(threads_, csr_adaptive::kWindow<Value>,
                                                         csr_adaptive::kLongRowChunk<Value>, blocks_.count,
                                                         blocks_.split_rows.size(), aligned_);
  }
  std::size_t bytes() const override { return blocks_.bytes(); }
  bool writes_workspace() const override { return false; }  // reads its row blocks only; writes y

 private:
  CsrView<Value, Index> a_;
  int threads_;
  bool aligned_;
  csr_adaptive::RowBlocks<Index> blocks_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_csr_adaptive(const CsrView<Value, Index>& a, Semiring s,
                                                           const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringCsrAdaptive, Value, Index>(s, a, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_csr_adaptive)

}  // namespace spmv::cuda
