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
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <climits>
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/adaptive_block_threads.cuh"
#include "cuda/common/adaptive_products.cuh"
#include "cuda/common/adaptive_rows.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). First values, to be tuned on the H100/H200:
//  block_threads 256 (CSR-stream of SC'14 uses 256-thread work-groups);
//  window: row blocks are cut where a row's first nonzero crosses a multiple of `window`, so a block
//    of several rows holds fewer than 2 * window nonzeros: the shared tile is 2 * window values =
//    16 KiB for both value types (2048 floats / 1024 doubles per window, the SC'14 budget range);
//  long_row_chunk_windows: rows longer than this many windows are split across CUDA blocks
//    (CSR-VectorL) in chunks of that size, so one huge row spreads over many SMs.
struct CsrAdaptivePolicy {
  int block_threads;
  int window;
  int long_row_chunk_windows;
};
constexpr CsrAdaptivePolicy csr_adaptive_policy(int value_bytes) { return {256, 8192 / value_bytes, 4}; }

// Both count products staged in shared memory, which are of the compute type.
template <class Value>
constexpr long long kWindow = csr_adaptive_policy(sizeof(compute_t<Value>)).window;
template <class Value>
constexpr long long kLongRowChunk =
    kWindow<Value> * csr_adaptive_policy(sizeof(compute_t<Value>)).long_row_chunk_windows;

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

template <int Threads, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    csr_adaptive_kernel(CsrView<Value, Index> a, const Index* __restrict__ blocks, long long num_blocks, bool aligned,
                        compute_t<Value> alpha, const compute_t<Value>* __restrict__ x, compute_t<Value> beta,
                        compute_t<Value>* __restrict__ y) {
  using Real = compute_t<Value>;
  using Products = CsrProducts<Value, Index>;
  using BlockReduce = cub::BlockReduce<Real, Threads>;
  constexpr long long kChunk = kLongRowChunk<Value>;
  // A multi-row block holds < 2 * window nonzeros; staging whole vector groups adds < 2 * width.
  constexpr int kTile = static_cast<int>(2 * kWindow<Value>) + 2 * Products::width;
  union SharedStorage {
    alignas(16) Real products[kTile];
    typename BlockReduce::TempStorage reduce;
  };
  __shared__ SharedStorage smem;

  const Products products{a.values, a.col_idx, x, a.nnz, aligned};
  const int tid = static_cast<int>(threadIdx.x);
  for (long long b = blockIdx.x; b < num_blocks; b += gridDim.x) {
    const Index first_row = blocks[b];
    const Index next_row = blocks[b + 1];
    const long long begin = a.row_ptr[first_row];
    if (next_row - first_row > 1) {
      // CSR-Stream (SC'14): coalesced products into shared memory, then per-row reduction.
      const long long end = a.row_ptr[next_row];
      const long long base = stage_range(smem.products, products, begin, end, tid, Threads);
      __syncthreads();
      reduce_rows_in_shared<Threads>(smem.products, a.row_ptr, first_row, next_row - first_row, base,
                                     [&](Index row, Real sum) { y[row] = axpby(alpha, sum, beta, y, row); });
    } else {
      const long long end = a.row_ptr[first_row + 1];
      const long long length = end - begin;
      if (length > kChunk) {
        // CSR-VectorL (HiPC'15): this block's chunk is its distance from the row's first block.
        const long long chunks = (length + kChunk - 1) / kChunk;
        long long lo = b - (chunks - 1) > 0 ? b - (chunks - 1) : 0, hi = b;
        while (lo < hi) {
          const long long mid = lo + (hi - lo) / 2;
          if (blocks[mid] < first_row)
            lo = mid + 1;
          else
            hi = mid;
        }
        const long long chunk_begin = begin + (b - lo) * kChunk;
        const long long chunk_end = chunk_begin + kChunk < end ? chunk_begin + kChunk : end;
        const Real partial =
            BlockReduce(smem.reduce).Sum(range_sum<Real>(products, chunk_begin, chunk_end, tid, Threads));
        if (tid == 0) atomicAdd(y + first_row, alpha * partial);  // y[row] was scaled by beta first
      } else {
        // CSR-Vector (SC'14): the whole block on one row.
        const Real sum = BlockReduce(smem.reduce).Sum(range_sum<Real>(products, begin, end, tid, Threads));
        if (tid == 0) y[first_row] = axpby(alpha, sum, beta, y, first_row);
      }
    }
    __syncthreads();  // shared memory is reused by the next row block
  }
}

template <class Value, class Index>
class CsrAdaptive final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  CsrAdaptive(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_block_threads(options.block_size, csr_adaptive_policy(sizeof(Value)).block_threads,
                                       "CsrAdaptive")),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)) {
    build_row_blocks(stream);
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    if (split_rows_.size() > 0 && beta != Real(1)) {
      constexpr int block = 256;
      scale_split_rows_kernel<<<grid_for(static_cast<long long>(split_rows_.size()), block), block, 0, stream>>>(
          split_rows_.data(), static_cast<long long>(split_rows_.size()), beta, y);
      SPMV_CHECK_LAUNCH("scale_split_rows_kernel");
    }
    const unsigned grid = static_cast<unsigned>(std::min<long long>(num_blocks_, INT_MAX));
    with_block_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      csr_adaptive_kernel<kThreads, Value, Index>
          <<<grid, kThreads, 0, stream>>>(a_, blocks_.data(), num_blocks_, aligned_, alpha, x, beta, y);
      SPMV_CHECK_LAUNCH("csr_adaptive_kernel");
    });
  }

  bool writes_workspace() const override { return false; }  // reads its row blocks only
  std::string policy() const override {
    return "block=" + std::to_string(threads_) + " window=" + std::to_string(kWindow<Value>) +
           " long_row_chunk=" + std::to_string(kLongRowChunk<Value>) + " cuda_blocks=" + std::to_string(num_blocks_) +
           " split_rows=" + std::to_string(split_rows_.size()) + " vector_loads=" + (aligned_ ? "on" : "off");
  }
  std::size_t extra_bytes() const override { return blocks_.bytes() + split_rows_.bytes(); }

 private:
  // Row blocks on the device: per-row weights, an in-place cub::DeviceScan, a scatter; the split rows
  // by cub::DeviceSelect. Synchronises `stream` (plan time).
  void build_row_blocks(cudaStream_t stream) {
    const long long rows = a_.rows;
    const long long window = kWindow<Value>, chunk = kLongRowChunk<Value>;
    const unsigned grid = grid_for(rows, kSetupBlock);
    DeviceBuffer<long long> weight(static_cast<std::size_t>(rows));
    row_block_weight_kernel<<<grid, kSetupBlock, 0, stream>>>(a_.row_ptr, a_.rows, window, chunk, weight.data());
    SPMV_CHECK_LAUNCH("row_block_weight_kernel");
    std::size_t temp_bytes = 0;
    SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, weight.data(), rows, stream));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, weight.data(), rows, stream));
    long long total = 0;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(&total, weight.data() + (rows - 1), sizeof(total), cudaMemcpyDeviceToHost, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    // Every row weighs >= 0, row 0 >= 1, and splitting adds at most nnz / chunk blocks.
    if (total < 1 || total > rows + static_cast<long long>(a_.nnz) / chunk + 1)
      throw InvalidArgument("CsrAdaptive: row_ptr is not a non-decreasing offset array ending at nnz");
    num_blocks_ = total;
    blocks_ = DeviceBuffer<Index>(static_cast<std::size_t>(total + 1));
    row_block_scatter_kernel<<<grid, kSetupBlock, 0, stream>>>(a_.row_ptr, a_.rows, window, chunk, weight.data(),
                                                               total, blocks_.data());
    SPMV_CHECK_LAUNCH("row_block_scatter_kernel");

    // A split row holds more than `chunk` nonzeros, so there are at most nnz / (chunk + 1).
    const long long max_split = static_cast<long long>(a_.nnz) / (chunk + 1);
    if (max_split == 0) return;
    DeviceBuffer<Index> candidates(static_cast<std::size_t>(max_split));
    DeviceBuffer<long long> count(1);
    const thrust::counting_iterator<Index> row_ids(0);
    const IsSplitRow<Index> is_split{a_.row_ptr, chunk};
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
    split_rows_ = DeviceBuffer<Index>(static_cast<std::size_t>(split));
    if (split > 0)
      SPMV_CUDA_CHECK(cudaMemcpyAsync(split_rows_.data(), candidates.data(), split_rows_.bytes(),
                                      cudaMemcpyDeviceToDevice, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the temporaries are freed
  }

  CsrView<Value, Index> a_;
  int threads_;
  bool aligned_;
  long long num_blocks_ = 0;
  DeviceBuffer<Index> blocks_;      // first row of each CUDA block, then rows
  DeviceBuffer<Index> split_rows_;  // rows processed by CSR-VectorL
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_csr_adaptive(const CsrView<Value, Index>& matrix, Operation op,
                                             const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CsrAdaptive, op);
  return std::make_unique<CsrAdaptive<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_csr_adaptive)
SPMV_INSTANTIATE_HALF_FACTORY(make_csr_adaptive)

}  // namespace spmv::cuda
