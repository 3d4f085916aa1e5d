// CSR-vector (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, §3.4 "CSR vector kernel"): a sub-warp of W lanes per row, lanes stride the
// row, a shuffle reduction, lane 0 writes. The paper uses a full warp; here W in {2, 4, 8, 16, 32}
// follows the mean row length so short rows do not idle most of the warp.
// Beyond the paper (warp_row.cuh): line-aligned row walks, U loads in flight per lane, and 16-byte
// vector loads of values and column indices when rows are long.
// op = Transpose: y = beta*y first, then each sub-warp reads x[row] once and atomically adds
// alpha*a_ij*x[row] into y[col]; the order of the atomics varies, so results are not bit-reproducible.
#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/vector_load.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). First values, to be tuned on the H100/H200:
//  block_size 256: 8 warps per block, 8 blocks per SM at full occupancy;
//  unroll: whole steps in flight per lane, 4 with 4/8-byte loads, 2 with 16-byte loads (similar bytes
//  in flight, half the registers).
struct CsrVectorPolicy {
  int block_size;
  int unroll;
  int vector_unroll;
};
constexpr CsrVectorPolicy csr_vector_policy(int /*value_bytes*/) { return {256, 4, 2}; }

// Sub-warp width rule: the smallest power of two at or above the mean row length, clamped to
// [kMinSubwarp, kMaxSubwarp], so a row of mean length occupies every lane for about one step.
constexpr int kMinSubwarp = 2;
constexpr int kMaxSubwarp = 32;
// Vector loads only for full-warp rows whose mean length gives every lane at least one vector per row;
// shorter rows would leave lanes idle and pay the alignment head.
constexpr int kVectorMinVectorsPerLane = 1;

template <int E, class Value>
constexpr int unroll_for() {
  return E == 1 ? csr_vector_policy(sizeof(Value)).unroll : csr_vector_policy(sizeof(Value)).vector_unroll;
}

// y[row] = alpha * (A x)[row] + beta * y[row]: one sub-warp per row, grid-stride over rows.
template <int W, int E, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_kernel(CsrView<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                      Value* __restrict__ y) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    Value sum = subwarp_row_dot<W, E, unroll_for<E, Value>()>(a.col_idx, a.values, x, begin, end, a.nnz, lane);
    sum = subwarp_sum<W>(sum);
    if (lane == 0) y[row] = axpby(alpha, sum, beta, y, row);
  }
}

// y += alpha * A^T x after y = beta * y (scale_vector): sub-warp per row of A, scattered with atomics.
template <int W, int E, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    csr_vector_transpose_kernel(CsrView<Value, Index> a, Value alpha, const Value* __restrict__ x, Value /*beta*/,
                                Value* __restrict__ y) {
  const int lane = threadIdx.x & (W - 1);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x / W;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / W; row < a.rows; row += stride) {
    const std::int64_t begin = __ldg(a.row_ptr + row);
    const std::int64_t end = __ldg(a.row_ptr + row + 1);
    const Value scaled_x = alpha * __ldg(x + row);
    subwarp_row_walk<W, E, unroll_for<E, Value>()>(a.col_idx, a.values, begin, end, a.nnz, lane,
                                                   [&](Index column, Value value) {
                                                     atomicAdd(y + column, value * scaled_x);
                                                   });
  }
}

template <class Value, class Index>
using Kernel = void (*)(CsrView<Value, Index>, Value, const Value*, Value, Value*);

template <int W, int E, class Value, class Index>
Kernel<Value, Index> kernel_for(Operation op) {
  return op == Operation::NonTranspose ? csr_vector_kernel<W, E, Value, Index>
                                       : csr_vector_transpose_kernel<W, E, Value, Index>;
}

template <class Value, class Index>
class CsrVector final : public CudaAlgorithm<Value, Index> {
 public:
  CsrVector(const CsrView<Value, Index>& a, Operation op, const Options& options) : a_(a), op_(op) {
    constexpr CsrVectorPolicy policy = csr_vector_policy(sizeof(Value));
    constexpr int vector_width = kVectorWidth<Value, Index>;
    const double mean = double(a.nnz) / double(a.rows);
    block_ = warp_block_size(options.block_size, policy.block_size, "CsrVector");
    width_ = checked_width(options.subwarp, pow2_at_least(mean, kMinSubwarp, kMaxSubwarp), kMinSubwarp,
                           "CsrVector: subwarp");
    // Vector loads need 16-byte aligned arrays; a view of someone else's arrays may be offset.
    const bool vector = width_ == 32 && mean >= double(32 * vector_width * kVectorMinVectorsPerLane) &&
                        is_aligned(a.col_idx, 16) && is_aligned(a.values, 16);
    if (vector) {
      kernel_ = kernel_for<32, vector_width, Value, Index>(op);
      elements_per_load_ = vector_width;
      unroll_ = policy.vector_unroll;
    } else {
      with_width<kMinSubwarp>(width_, [&](auto w) { kernel_ = kernel_for<decltype(w)::value, 1, Value, Index>(op); });
      elements_per_load_ = 1;
      unroll_ = policy.unroll;
    }
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    if (op_ == Operation::Transpose) scale_vector(beta, y, a_.cols, stream);
    kernel_<<<grid_for(std::int64_t(a_.rows) * width_, block_), block_, 0, stream>>>(a_, alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("csr_vector_kernel");
  }

  std::string policy() const override {
    std::string s = "block=" + std::to_string(block_) + " subwarp=" + std::to_string(width_) +
                    " elements_per_load=" + std::to_string(elements_per_load_) + " unroll=" + std::to_string(unroll_);
    if (op_ == Operation::Transpose) s += " transpose=atomic-scatter (not bit-reproducible)";
    return s;
  }

 private:
  CsrView<Value, Index> a_;
  Operation op_;
  int block_ = 0;
  int width_ = 0;
  int elements_per_load_ = 1;
  int unroll_ = 1;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_csr_vector(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                           cudaStream_t) {
  return std::make_unique<CsrVector<Value, Index>>(matrix, op, options);
}

SPMV_INSTANTIATE_FACTORY(make_csr_vector)

}  // namespace spmv::cuda
