// Cooperative CSR (Reguly & Giles, "Efficient sparse matrix-vector multiplication on cache-based
// GPUs", InPar 2012): `coop` threads share a row, a group of coop threads handles `repeat` rows of its
// block's tile, and the three parameters (coop, repeat, block size) come from a fixed rule of the
// matrix's mean row length and row count (the paper's "fixed rule", which needs no run-time tuning).
// The row walk and reduction are the shared sub-warp ones (warp_row.cuh, warp_reduce.cuh):
// shuffles instead of the paper's shared-memory reduction, and unrolled loads for Hopper.
#include <algorithm>
#include <cmath>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"

namespace spmv::cuda {
namespace {

// The fixed rule's constants (Reguly & Giles).
// Threads per block.
constexpr int kFixedBlockSize = 128;
// coop = the power of two at or above sqrt(mean row length), clamped to [kMinCoop, kMaxCoop]: long
// rows get more threads, but fewer than CSR-vector's W ~ mean, so each thread keeps several loads.
constexpr int kMinCoop = 1;
constexpr int kMaxCoop = 32;
// repeat = max(1, rows * coop / (block * kTargetBlocks)): enough blocks to fill the GPU and balance
// the tail, and as many rows per group as that allows (fewer, larger blocks amortise row_ptr reads).
constexpr std::int64_t kTargetBlocks = 1500;

// Launch policy (tuning as data): unroll = whole steps in flight per thread. First value, to be tuned
// on the H100/H200; the paper's kernel has no unrolling.
struct CsrCoopPolicy {
  int block_size;
  int unroll;
};
constexpr CsrCoopPolicy csr_coop_policy(int /*value_bytes*/) { return {kFixedBlockSize, 4}; }

// Each block owns tiles of (block / C) * repeat consecutive rows; pass i of a tile covers the i-th
// slab of block / C rows, one row per group of C threads, so a warp's row_ptr reads are contiguous.
template <int C, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_coop_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                    compute_t<Value> beta, compute_t<Value>* __restrict__ y, int repeat) {
  constexpr int unroll = csr_coop_policy(sizeof(Value)).unroll;
  const int lane = threadIdx.x & (C - 1);
  const std::int64_t groups_per_block = blockDim.x / C;
  const std::int64_t group = threadIdx.x / C;
  const std::int64_t rows_per_tile = groups_per_block * repeat;
  const std::int64_t tiles = (std::int64_t(a.rows) + rows_per_tile - 1) / rows_per_tile;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    for (int i = 0; i < repeat; ++i) {
      const std::int64_t row = tile * rows_per_tile + i * groups_per_block + group;
      if (row >= a.rows) break;  // later passes only hold larger rows
      const std::int64_t begin = __ldg(a.row_ptr + row);
      const std::int64_t end = __ldg(a.row_ptr + row + 1);
      compute_t<Value> sum = subwarp_row_dot<C, 1, unroll>(a.col_idx, a.values, x, begin, end, a.nnz, lane);
      sum = subwarp_sum<C>(sum);
      if (lane == 0) y[row] = axpby(alpha, sum, beta, y, row);
    }
  }
}

template <class Value, class Index, class Real = compute_t<Value>>
using Kernel = void (*)(CsrView<Value, Index>, Real, const Real*, Real, Real*, int);

template <class Value, class Index>
class CsrCoop final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrCoop(const CsrView<Value, Index>& a, const Options& options) : a_(a) {
    const double mean = double(a.nnz) / double(a.rows);
    block_ = warp_block_size(options.block_size, csr_coop_policy(sizeof(Value)).block_size, "CsrCoop");
    coop_ = checked_width(options.coop, pow2_at_least(std::sqrt(mean), kMinCoop, kMaxCoop), kMinCoop, "CsrCoop: coop");
    if (options.repeat > 0) {
      repeat_ = options.repeat;
    } else {
      const std::int64_t r = std::int64_t(a.rows) * coop_ / (std::int64_t(block_) * kTargetBlocks);
      repeat_ = static_cast<int>(std::clamp<std::int64_t>(r, 1, 1 << 20));
    }
    with_width<kMinCoop>(coop_, [&](auto c) { kernel_ = csr_coop_kernel<decltype(c)::value, Value, Index>; });
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    const std::int64_t rows_per_block = std::int64_t(block_ / coop_) * repeat_;
    kernel_<<<grid_for(a_.rows, rows_per_block), block_, 0, stream>>>(a_, alpha, x, beta, y, repeat_);
    SPMV_CHECK_LAUNCH("csr_coop_kernel");
  }

  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " coop=" + std::to_string(coop_) + " repeat=" + std::to_string(repeat_) +
           " unroll=" + std::to_string(csr_coop_policy(sizeof(Value)).unroll);
  }

 private:
  CsrView<Value, Index> a_;
  int block_ = 0;
  int coop_ = 1;
  int repeat_ = 1;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_csr_coop(const CsrView<Value, Index>& matrix, Operation op,
                                                    const Options& options, cudaStream_t) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CsrCoop, op);
  return std::make_unique<CsrCoop<Value, Index>>(matrix, options);
}

SPMV_INSTANTIATE_FACTORY(make_csr_coop)
SPMV_INSTANTIATE_HALF_FACTORY(make_csr_coop)

}  // namespace spmv::cuda
