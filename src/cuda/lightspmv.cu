// LightSpMV (Liu & Schmidt, "LightSpMV: faster CSR-based sparse matrix-vector multiplication on
// CUDA-enabled GPUs", ASAP 2015): rows are handed out at run time through a global atomic row
// counter instead of a static row -> warp mapping, so warps that drew short rows simply fetch more.
// This is the paper's warp-level dynamic row distribution (faster than its vector-level one): lane 0
// of a warp fetches rows for all the warp's vectors with one atomicAdd, a shuffle broadcasts the first
// row, each vector of V lanes takes its row, walks it (warp_row.cuh) and reduces it with shuffles.
// The grid is just large enough to fill the GPU with resident warps.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). First values, to be tuned on the H100/H200: block_size 256 (the grid
// comes from occupancy, so the block size only sets the granularity); unroll = whole steps in flight
// per lane (the paper has none).
struct LightSpmvPolicy {
  int block_size;
  int unroll;
};
constexpr LightSpmvPolicy lightspmv_policy(int /*value_bytes*/) { return {256, 4}; }

// Vector size rule of the LightSpMV code, from the rounded mean row length: <= 2 -> 2 lanes, <= 4 -> 4,
// <= 64 -> 8, longer -> 32 (16 only through Options.subwarp).
constexpr int kMeanForVector2 = 2;
constexpr int kMeanForVector4 = 4;
constexpr int kMeanForVector8 = 64;

inline int lightspmv_vector_size(double mean) {
  const double rounded = std::nearbyint(mean);
  if (rounded <= kMeanForVector2) return 2;
  if (rounded <= kMeanForVector4) return 4;
  if (rounded <= kMeanForVector8) return 8;
  return 32;
}

// The row counter: 32 bits for 32-bit matrices, 64 bits otherwise. Unsigned because the last round of
// every warp overshoots `rows` by up to one fetch per warp, which must not wrap for rows near INT_MAX.
template <class Index>
using RowCounter = std::conditional_t<sizeof(Index) == 4, unsigned int, unsigned long long>;

template <int V, class Value, class Index>
__global__ void __launch_bounds__(kMaxWarpKernelBlock)
    lightspmv_kernel(CsrView<Value, Index> a, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                     compute_t<Value> beta, compute_t<Value>* __restrict__ y,
                     RowCounter<Index>* __restrict__ row_counter) {
  using Counter = RowCounter<Index>;
  constexpr int unroll = lightspmv_policy(sizeof(Value)).unroll;
  constexpr int vectors_per_warp = 32 / V;
  const int warp_lane = threadIdx.x & 31;
  const int lane = warp_lane & (V - 1);
  const int vector = warp_lane / V;
  const Counter rows = static_cast<Counter>(a.rows);
  for (;;) {
    // One atomic per warp per round (warp-level dynamic distribution), then a broadcast.
    Counter first = 0;
    if (warp_lane == 0) first = atomicAdd(row_counter, Counter(vectors_per_warp));
    first = __shfl_sync(0xffffffffu, first, 0);
    if (first >= rows) break;  // uniform across the warp
    const std::int64_t row = std::int64_t(first) + vector;
    if (row < a.rows) {
      const std::int64_t begin = __ldg(a.row_ptr + row);
      const std::int64_t end = __ldg(a.row_ptr + row + 1);
      compute_t<Value> sum = subwarp_row_dot<V, 1, unroll>(a.col_idx, a.values, x, begin, end, a.nnz, lane);
      sum = subwarp_sum<V>(sum);
      if (lane == 0) y[row] = axpby(alpha, sum, beta, y, row);
    }
  }
}

template <class Value, class Index, class Real = compute_t<Value>>
using Kernel = void (*)(CsrView<Value, Index>, Real, const Real*, Real, Real*, RowCounter<Index>*);

template <class Value, class Index>
class LightSpmv final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  LightSpmv(const CsrView<Value, Index>& a, const Options& options) : a_(a), counter_(1) {
    const double mean = double(a.nnz) / double(a.rows);
    block_ = warp_block_size(options.block_size, lightspmv_policy(sizeof(Value)).block_size, "LightSpmv");
    vector_ = checked_width(options.subwarp, lightspmv_vector_size(mean), 2, "LightSpmv: subwarp");
    with_width<2>(vector_, [&](auto v) { kernel_ = lightspmv_kernel<decltype(v)::value, Value, Index>; });
    // Persistent grid: as many blocks as can be resident at once, but no more than the rows need.
    int blocks_per_sm = 0;
    SPMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel_, block_, 0));
    if (blocks_per_sm < 1)
      throw Unsupported("LightSpmv: block_size " + std::to_string(block_) + " cannot be resident on this device");
    const std::int64_t resident = std::int64_t(blocks_per_sm) * device_multiprocessors();
    grid_ = static_cast<unsigned>(std::min<std::int64_t>(resident, grid_for(std::int64_t(a.rows) * vector_, block_)));
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    // Reset on the stream (not at construction) so every apply, and every replay of a captured graph,
    // starts from row 0.
    SPMV_CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, counter_.bytes(), stream));
    kernel_<<<grid_, block_, 0, stream>>>(a_, alpha, x, beta, y, counter_.data());
    SPMV_CHECK_LAUNCH("lightspmv_kernel");
  }

  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " grid=" + std::to_string(grid_) + " vector=" + std::to_string(vector_) +
           " unroll=" + std::to_string(lightspmv_policy(sizeof(Value)).unroll) + " rows_per_atomic=" +
           std::to_string(32 / vector_);
  }
  std::size_t extra_bytes() const override { return counter_.bytes(); }

 private:
  CsrView<Value, Index> a_;
  DeviceBuffer<RowCounter<Index>> counter_;
  int block_ = 0;
  int vector_ = 0;
  unsigned grid_ = 1;
  Kernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_lightspmv(const CsrView<Value, Index>& matrix, Operation op,
                                                     const Options& options, cudaStream_t) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::LightSpmv, op);
  return std::make_unique<LightSpmv<Value, Index>>(matrix, options);
}

SPMV_INSTANTIATE_FACTORY(make_lightspmv)
SPMV_INSTANTIATE_HALF_FACTORY(make_lightspmv)

}  // namespace spmv::cuda
