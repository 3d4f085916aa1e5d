// CSR-Adaptive (Greathouse & Daga, "Efficient Sparse Matrix-Vector Multiplication on GPUs using the
// CSR Storage Format", SC'14; Daga & Greathouse, "Structural Agnostic SpMV: Adapting CSR-Adaptive for
// Irregular Matrices", HiPC'15). Consecutive rows are packed into row blocks whose nonzeros fit a
// shared-memory tile; one CUDA block per row block runs
//   CSR-stream  (several rows): products streamed coalesced into shared memory, then reduced per row
//               (SC'14 CSR-Stream; HiPC'15: several threads per row when the block holds few rows);
//   CSR-vector  (one row): the whole block strides the row, cub::BlockReduce (SC'14 CSR-Vector);
//   CSR-VectorL (one very long row, HiPC'15): the row is split into chunks, one CUDA block
//               each, whose partial sums are atomically added into y.
// Row blocks are built on the device (the SC'14 procedure is a sequential greedy walk; see
// row_block_weight for the parallel rule used here). docs/algorithms/csr_adaptive.md has the details.
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <climits>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/adaptive_block_threads.cuh"
#include "cuda/common/adaptive_products.cuh"
#include "cuda/common/adaptive_rows.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/csr_adaptive.cuh"

namespace spmv::cuda {
namespace {

using csr_adaptive::kLongRowChunk;
using csr_adaptive::kWindow;

// Threads of the setup kernels (plan time only).
constexpr int kSetupBlock = 256;

// Number of CUDA blocks whose work starts at row r (0 when r continues the previous row block).
// Parallel replacement for the SC'14 greedy (sequential) row-block walk, computed independently per row:
//  - a row longer than the chunk length is split into ceil(length / chunk) CSR-VectorL blocks;
//  - a row longer than the window is a CSR-vector block of its own;
//  - otherwise rows are grouped by the window their first nonzero falls in, and a group is cut every
//    `window` rows (bounding the rows of a block for the per-row reduction, e.g. runs of empty rows).
// A row longer than the window ends past the next window boundary, so it is always the last row of
// its group: a block of several rows holds rows of at most `window` nonzeros, all starting inside
// one window, hence fewer than 2 * window nonzeros in total.
template <class Index>
__device__ __forceinline__ long long row_block_weight(const Index* row_ptr, Index r, long long window,
                                                      long long chunk) {
  const long long start = row_ptr[r];
  const long long length = static_cast<long long>(row_ptr[r + 1]) - start;
  if (length > chunk) return (length + chunk - 1) / chunk;
  if (length > window) return 1;
  const Index group_first = lower_bound_index(row_ptr, r + 1, start / window * window);
  return (r - group_first) % window == 0 ? 1 : 0;
}

template <class Index>
__global__ void row_block_weight_kernel(const Index* row_ptr, Index rows, long long window, long long chunk,
                                        long long* weight) {
  for (long long r = blockIdx.x * static_cast<long long>(kSetupBlock) + threadIdx.x; r < rows;
       r += static_cast<long long>(gridDim.x) * kSetupBlock)
    weight[r] = row_block_weight(row_ptr, static_cast<Index>(r), window, chunk);
}

// blocks[b] = first row of CUDA block b; a split row repeats once per chunk; blocks[total] = rows.
template <class Index>
__global__ void row_block_scatter_kernel(const Index* row_ptr, Index rows, long long window, long long chunk,
                                         const long long* inclusive_weight, long long total, Index* blocks) {
  for (long long r = blockIdx.x * static_cast<long long>(kSetupBlock) + threadIdx.x; r < rows;
       r += static_cast<long long>(gridDim.x) * kSetupBlock) {
    const long long weight = row_block_weight(row_ptr, static_cast<Index>(r), window, chunk);
    const long long first = inclusive_weight[r] - weight;
    for (long long j = 0; j < weight; ++j) blocks[first + j] = static_cast<Index>(r);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) blocks[total] = rows;
}

// Rows handled by CSR-VectorL (split over several CUDA blocks).
template <class Index>
struct IsSplitRow {
  const Index* row_ptr;
  long long chunk;
  __device__ bool operator()(Index r) const { return static_cast<long long>(row_ptr[r + 1]) - row_ptr[r] > chunk; }
};

// y[r] = beta * y[r] (0 when beta == 0: y may hold NaN) for the split rows, before their chunks add
// alpha * partial atomically: beta is applied exactly once whatever the order of the chunks.
template <class Value, class Index>
__global__ void scale_split_rows_kernel(const Index* split_rows, long long count, Value beta, Value* y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Index r = split_rows[i];
    y[r] = beta == Value(0) ? Value(0) : beta * y[r];
  }
}

// The block loop is csr_adaptive.cuh's, shared with the semiring product (semiring_csr_adaptive.cu): plus-times
// here, y = alpha * sum + beta * y, and a CSR-VectorL chunk adds alpha * partial atomically (its row was scaled by
// beta first: scale_split_rows_kernel).
template <int Threads, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    csr_adaptive_kernel(CsrView<Value, Index> a, const Index* __restrict__ blocks, long long num_blocks, bool aligned,
                        compute_t<Value> alpha, const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                        compute_t<Value>* __restrict__ y) {
  using Real = compute_t<Value>;
  csr_adaptive::row_blocks<Threads, semiring_ops::PlusTimes<Real>>(
      a, blocks, num_blocks, aligned, x, y, ScaledRow<Real>{alpha, beta},
      [alpha](Real* out, Index row, Real partial) { atomicAdd(out + row, alpha * partial); });
}

template <class Value, class Index>
class CsrAdaptive final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrAdaptive(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_block_threads(options.block_size, csr_adaptive::policy_for(sizeof(Value)).block_threads,
                                       "CsrAdaptive")),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        blocks_(csr_adaptive::build_row_blocks(a.row_ptr, a.rows, a.nnz, kWindow<Value>, kLongRowChunk<Value>,
                                               stream)) {}

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    const auto split = static_cast<long long>(blocks_.split_rows.size());
    if (split > 0 && beta != Real(1)) {
      constexpr int block = 256;
      scale_split_rows_kernel<<<grid_for(split, block), block, 0, stream>>>(blocks_.split_rows.data(), split, beta, y);
      SPMV_CHECK_LAUNCH("scale_split_rows_kernel");
    }
    const unsigned grid = static_cast<unsigned>(std::min<long long>(blocks_.count, INT_MAX));
    with_block_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      csr_adaptive_kernel<kThreads, Value, Index>
          <<<grid, kThreads, 0, stream>>>(a_, blocks_.blocks.data(), blocks_.count, aligned_, alpha, x, beta, y);
      SPMV_CHECK_LAUNCH("csr_adaptive_kernel");
    });
  }

  bool writes_workspace() const override { return false; }  // reads its row blocks only
  std::string policy() const override {
    return csr_adaptive::policy_string(threads_, kWindow<Value>, kLongRowChunk<Value>, blocks_.count,
                                       blocks_.split_rows.size(), aligned_);
  }
  std::size_t extra_bytes() const override { return blocks_.bytes(); }

 private:
  CsrView<Value, Index> a_;
  int threads_;
  bool aligned_;
  csr_adaptive::RowBlocks<Index> blocks_;
};

}  // namespace

// Row blocks on the device (csr_adaptive.cuh): per-row weights, an in-place cub::DeviceScan, a scatter; the split
// rows by cub::DeviceSelect. Synchronises `stream` (plan time).
template <class Index>
csr_adaptive::RowBlocks<Index> csr_adaptive::build_row_blocks(const Index* row_ptr, Index rows_in, long long nnz,
                                                              long long window, long long chunk, cudaStream_t stream) {
  RowBlocks<Index> out;
  const long long rows = rows_in;
  const unsigned grid = grid_for(rows, kSetupBlock);
  DeviceBuffer<long long> weight(static_cast<std::size_t>(rows));
  row_block_weight_kernel<<<grid, kSetupBlock, 0, stream>>>(row_ptr, rows_in, window, chunk, weight.data());
  SPMV_CHECK_LAUNCH("row_block_weight_kernel");
  std::size_t temp_bytes = 0;
  SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, weight.data(), rows, stream));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, weight.data(), rows, stream));
  long long total = 0;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&total, weight.data() + (rows - 1), sizeof(total), cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Every row weighs >= 0, row 0 >= 1, and splitting adds at most nnz / chunk blocks.
  if (total < 1 || total > rows + nnz / chunk + 1)
    throw InvalidArgument("CsrAdaptive: row_ptr is not a non-decreasing offset array ending at nnz");
  out.count = total;
  out.blocks = DeviceBuffer<Index>(static_cast<std::size_t>(total + 1));
  row_block_scatter_kernel<<<grid, kSetupBlock, 0, stream>>>(row_ptr, rows_in, window, chunk, weight.data(), total,
                                                             out.blocks.data());
  SPMV_CHECK_LAUNCH("row_block_scatter_kernel");

  // A split row holds more than `chunk` nonzeros, so there are at most nnz / (chunk + 1).
  const long long max_split = nnz / (chunk + 1);
  if (max_split == 0) return out;
  DeviceBuffer<Index> candidates(static_cast<std::size_t>(max_split));
  DeviceBuffer<long long> count(1);
  const thrust::counting_iterator<Index> row_ids(0);
  const IsSplitRow<Index> is_split{row_ptr, chunk};
  temp_bytes = 0;
  SPMV_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, row_ids, candidates.data(), count.data(), rows,
                                        is_split, stream));
  DeviceBuffer<unsigned char> select_temp(temp_bytes);
  SPMV_CUDA_CHECK(cub::DeviceSelect::If(select_temp.data(), temp_bytes, row_ids, candidates.data(), count.data(),
                                        rows, is_split, stream));
  long long split = 0;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&split, count.data(), sizeof(split), cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (split < 0 || split > max_split)
    throw InvalidArgument("CsrAdaptive: row_ptr is not a non-decreasing offset array ending at nnz");
  out.split_rows = DeviceBuffer<Index>(static_cast<std::size_t>(split));
  if (split > 0)
    SPMV_CUDA_CHECK(cudaMemcpyAsync(out.split_rows.data(), candidates.data(), out.split_rows.bytes(),
                                    cudaMemcpyDeviceToDevice, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the temporaries are freed
  return out;
}

template csr_adaptive::RowBlocks<std::int32_t> csr_adaptive::build_row_blocks(const std::int32_t*, std::int32_t,
                                                                              long long, long long, long long,
                                                                              cudaStream_t);
template csr_adaptive::RowBlocks<std::int64_t> csr_adaptive::build_row_blocks(const std::int64_t*, std::int64_t,
                                                                              long long, long long, long long,
                                                                              cudaStream_t);

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_csr_adaptive(const CsrView<Value, Index>& matrix, Operation op,
                                             const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CsrAdaptive, op);
  return std::make_unique<CsrAdaptive<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_csr_adaptive)
SPMV_INSTANTIATE_HALF_FACTORY(make_csr_adaptive)

}  // namespace spmv::cuda
