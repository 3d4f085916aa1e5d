// ColumnChunked on CUDA (issue 13 §3; the CPU's column-chunked is the same idea without a copy): where x
// exceeds L2, scattered gathers x[col] miss to DRAM and fetch a 32-byte sector for one value. The plan
// cuts the columns into chunks of `span` and stores the matrix as one CSR block per chunk (converted on
// the device, once); a product runs the blocks one after the other, each gathering from its chunk of x
// only, which L2 then holds. The price: every block reads the row offsets and reads and writes y again,
// so the span comes from a cost model (detail::column_span_for), and Auto races the blocks against the
// whole matrix before it keeps them (dispatch.cu).
//
// A x: block k adds alpha A_k x_k into y (the first non-empty block applies beta). A^T x: block k's
// product writes only its chunk of y (A_k^T x is chunk k of A^T x), so each applies beta to its chunk.
// The blocks' results are summed in a fixed order: the plan is as reproducible as its inner plans.
//
// The conversion (chunk_columns, shared with the semiring product's semiring_column_chunked.cu): a stable radix sort
// of the nonzeros by chunk number (cub::DeviceRadixSort, 16-bit keys, only the bits in use) keeps each chunk's
// entries in row order (and each row's in input order); per-(chunk, row) counts (atomics, one per nonzero) and one
// exclusive scan (cub::DeviceScan, in place) give every block's row offsets.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/auto_rule.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/column_chunked.cuh"
#include "core/debug_log.hpp"
#include "cuda/common/event_pair.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

using ChunkKey = std::uint16_t;

// Device bytes the conversion holds at its peak: the blocks (values, columns, offsets) and its scratch
// (two key and two index arrays for the sort, the chunk starts). One count for the conversion's check
// and the race's.
template <class Value, class Index>
double conversion_bytes(std::int64_t rows, std::int64_t nnz, std::int64_t chunks) {
  const double starts = double(chunks) * double(rows) + 1, offsets = double(chunks) * double(rows + 1);
  return double(nnz) * (sizeof(Value) + 3 * sizeof(Index) + 2 * sizeof(ChunkKey)) +
         (starts + offsets) * sizeof(Index);
}
constexpr int kConvertBlock = 256;  // conversion kernels (plan time only; not tuned)

#define SPMV_GRID_STRIDE(i, n)                                                                           \
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);             \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

// The row holding nonzero p: the last r with row_ptr[r] <= p.
template <class Index>
__device__ Index row_of(const Index* __restrict__ row_ptr, Index rows, long long p) {
  Index lo = 0, hi = rows;
  while (hi - lo > 1) {
    const Index mid = lo + (hi - lo) / 2;
    if (row_ptr[mid] <= p) lo = mid;
    else hi = mid;
  }
  return lo;
}

__device__ inline void count_one(std::int32_t* counter) { atomicAdd(counter, 1); }
__device__ inline void count_one(std::int64_t* counter) {
  atomicAdd(reinterpret_cast<unsigned long long*>(counter), 1ull);
}

// keys[j] = chunk of nonzero j, order[j] = j, and one count for its (chunk, row).
template <class Index>
__global__ void chunk_keys_kernel(const Index* __restrict__ row_ptr, Index rows, const Index* __restrict__ col_idx,
                                  Index nnz, Index span, ChunkKey* __restrict__ keys, Index* __restrict__ order,
                                  Index* __restrict__ counts) {
  SPMV_GRID_STRIDE(j, nnz) {
    const Index chunk = col_idx[j] / span;
    keys[j] = static_cast<ChunkKey>(chunk);
    order[j] = static_cast<Index>(j);
    count_one(counts + static_cast<long long>(chunk) * rows + row_of(row_ptr, rows, j));
  }
}

// Position p of the chunked arrays holds nonzero perm[p], its column renumbered from its chunk's first.
template <class Value, class Index>
__global__ void gather_chunked_kernel(const Index* __restrict__ perm, const ChunkKey* __restrict__ sorted_keys,
                                      const Index* __restrict__ col_idx, const Value* __restrict__ values, Index nnz,
                                      Index span, Index* __restrict__ out_cols, Value* __restrict__ out_values) {
  SPMV_GRID_STRIDE(p, nnz) {
    const Index j = perm[p];
    out_cols[p] = col_idx[j] - static_cast<Index>(sorted_keys[p]) * span;
    out_values[p] = values[j];
  }
}

// Block k's row offsets, from 0: starts[k * rows + r] - starts[k * rows] for r <= rows (the entry past
// block k's last row is block k + 1's first: its end).
template <class Index>
__global__ void block_offsets_kernel(const Index* __restrict__ starts, Index rows, long long chunks,
                                     Index* __restrict__ offsets) {
  const long long per_block = static_cast<long long>(rows) + 1;
  SPMV_GRID_STRIDE(i, chunks * per_block) {
    const long long k = i / per_block, r = i % per_block;
    offsets[i] = starts[k * rows + r] - starts[k * rows];
  }
}

// firsts[k] = starts[k * rows], k <= chunks: each block's first position (the last is nnz).
template <class Index>
__global__ void block_firsts_kernel(const Index* __restrict__ starts, Index rows, long long chunks,
                                    Index* __restrict__ firsts) {
  SPMV_GRID_STRIDE(k, chunks + 1) firsts[k] = starts[k * rows];
}

#undef SPMV_GRID_STRIDE

template <class Value, class Index>
class ColumnChunked final : public ColumnChunkedAlgorithm<Value, Index> {
 public:
  ColumnChunked(const CsrView<Value, Index>& a, Index span, Operation op, const Options& options,
                cudaStream_t stream)
      : op_(op), chunks_(chunk_columns(a, span, stream)) {
    Options inner = options;
    inner.column_span = 0;
    for (std::int64_t k = 0; k < chunks_.chunks; ++k) {
      const CsrView<Value, Index> block = chunks_.block(k);
      // A x: an empty block adds nothing; A^T x: its chunk of y still gets beta (a degenerate plan's).
      if (block.nnz == 0 && op == Operation::NonTranspose) continue;
      blocks_.push_back(
          {chunks_.first_column(k), std::make_unique<Plan<Value, Index>>(block, Algorithm::Auto, op, inner, stream)});
    }
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      auto& [first, plan] = blocks_[i];
      if (op_ == Operation::NonTranspose) plan->apply(alpha, x + first, i == 0 ? beta : Value(1), y, stream);
      else plan->apply(alpha, x, beta, y + first, stream);
    }
  }
  std::string policy() const override {
    return "span=" + std::to_string(chunks_.span) + " chunks=" + std::to_string(chunks_.chunks) + " blocks=" +
           std::to_string(blocks_.size()) + " inner=" + std::string(to_string(blocks_.front().plan->algorithm())) +
           "[" + blocks_.front().plan->policy() + "]";
  }
  std::size_t extra_bytes() const override {
    std::size_t bytes = chunks_.bytes();
    for (const auto& b : blocks_) bytes += b.plan->extra_bytes();
    return bytes;
  }
  // Each block's plan orders its own products across streams; this one writes nothing but y.
  bool writes_workspace() const override { return false; }
  bool reproducible() const override {
    return std::all_of(blocks_.begin(), blocks_.end(), [](const auto& b) { return b.plan->reproducible(); });
  }
  Index span() const override { return chunks_.span; }

 private:
  struct Block {
    Index first;  // the chunk's first column
    std::unique_ptr<Plan<Value, Index>> plan;
  };
  Operation op_;
  ColumnChunks<Value, Index> chunks_;
  std::vector<Block> blocks_;
};

}  // namespace

template <class Value, class Index>
ColumnChunks<Value, Index> chunk_columns(const CsrView<Value, Index>& a, Index span, cudaStream_t stream) {
  ColumnChunks<Value, Index> c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.span = span;
  c.chunks = (static_cast<std::int64_t>(a.cols) + span - 1) / span;
  const std::int64_t chunks = c.chunks;
  const auto n = static_cast<std::size_t>(a.nnz);
  const long long starts_size = chunks * static_cast<long long>(a.rows) + 1;
  require_device_memory("column-chunked's blocks and their conversion",
                        conversion_bytes<Value, Index>(a.rows, a.nnz, chunks));
  c.col_idx = DeviceBuffer<Index>(n);
  c.values = DeviceBuffer<Value>(n);
  c.offsets = DeviceBuffer<Index>(static_cast<std::size_t>(chunks * (std::int64_t(a.rows) + 1)));
  DeviceBuffer<ChunkKey> keys(n), sorted_keys(n);
  DeviceBuffer<Index> order(n), perm(n);
  DeviceBuffer<Index> starts(static_cast<std::size_t>(starts_size));
  SPMV_CUDA_CHECK(cudaMemsetAsync(starts.data(), 0, starts.bytes(), stream));
  chunk_keys_kernel<<<grid_for(a.nnz, kConvertBlock), kConvertBlock, 0, stream>>>(
      a.row_ptr, a.rows, a.col_idx, a.nnz, span, keys.data(), order.data(), starts.data());
  SPMV_CHECK_LAUNCH("chunk_keys_kernel");
  int end_bit = 1;  // only the bits chunk numbers use
  while (end_bit < 16 && ((chunks - 1) >> end_bit) != 0) ++end_bit;
  std::size_t sort_bytes = 0, scan_bytes = 0;
  SPMV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.data(), sorted_keys.data(),
                                                  order.data(), perm.data(), a.nnz, 0, end_bit, stream));
  SPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, starts.data(), starts.data(), starts_size, stream));
  DeviceBuffer<unsigned char> temp(std::max<std::size_t>({sort_bytes, scan_bytes, 1}));
  SPMV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), sort_bytes, keys.data(), sorted_keys.data(),
                                                  order.data(), perm.data(), a.nnz, 0, end_bit, stream));
  SPMV_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(temp.data(), scan_bytes, starts.data(), starts.data(), starts_size, stream));
  gather_chunked_kernel<<<grid_for(a.nnz, kConvertBlock), kConvertBlock, 0, stream>>>(
      perm.data(), sorted_keys.data(), a.col_idx, a.values, a.nnz, span, c.col_idx.data(), c.values.data());
  SPMV_CHECK_LAUNCH("gather_chunked_kernel");
  block_offsets_kernel<<<grid_for(chunks * (std::int64_t(a.rows) + 1), kConvertBlock), kConvertBlock, 0, stream>>>(
      starts.data(), a.rows, chunks, c.offsets.data());
  SPMV_CHECK_LAUNCH("block_offsets_kernel");
  DeviceBuffer<Index> firsts(static_cast<std::size_t>(chunks) + 1);
  block_firsts_kernel<<<grid_for(chunks + 1, kConvertBlock), kConvertBlock, 0, stream>>>(starts.data(), a.rows,
                                                                                        chunks, firsts.data());
  SPMV_CHECK_LAUNCH("block_firsts_kernel");
  c.firsts = firsts.to_host(stream);  // synchronises: the temporaries may go
  return c;
}

int l2_cache_bytes() {
  int device = 0, bytes = 0;
  SPMV_CUDA_CHECK(cudaGetDevice(&device));
  SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return bytes;
}

template <class Value, class Index>
Index column_span_of(const CsrView<Value, Index>& matrix, std::int64_t span) {
  if (span <= 0) span = detail::column_span_for(matrix.rows, matrix.cols, matrix.nnz, sizeof(Value), l2_cache_bytes());
  const std::int64_t min_span = (std::int64_t(matrix.cols) + kMaxColumnChunks - 1) / kMaxColumnChunks;
  return static_cast<Index>(
      std::clamp<std::int64_t>(span, std::max<std::int64_t>(min_span, 1), std::max<std::int64_t>(matrix.cols, 1)));
}

template <class Value, class Index>
std::unique_ptr<ColumnChunkedAlgorithm<Value, Index>> make_column_chunked_span(const CsrView<Value, Index>& matrix,
                                                                                std::int64_t span, Operation op,
                                                                                const Options& options,
                                                                                cudaStream_t stream) {
  return std::make_unique<ColumnChunked<Value, Index>>(matrix, column_span_of(matrix, span), op, options, stream);
}

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_column_chunked(const CsrView<Value, Index>& matrix, Operation op,
                                               const Options& options, cudaStream_t stream) {
  return make_column_chunked_span(matrix, options.column_span, op, options, stream);  // 0: the cost model
}

// Products timed per contender in the race; the first is a warm-up, the minimum of the rest counts
// (interference only ever adds time).
constexpr int kRaceProducts = 4;

template <class Value, class Index>
AlgorithmPtr<Value, Index> race_column_chunked(const CsrView<Value, Index>& matrix, CudaAlgorithm<Value, Index>& whole,
                                               const Options& options, cudaStream_t stream) {
  const auto log = [](const std::string& why) {
    if (detail::debug_log_enabled()) std::fprintf(stderr, "[spmv] auto: column-chunked not taken: %s\n", why.c_str());
  };
  const int l2 = l2_cache_bytes();
  if (!detail::column_chunks_may_pay(matrix.rows, matrix.cols, matrix.nnz, sizeof(Value), l2,
                                     options.expected_applies))
    return nullptr;
  const std::int64_t span = detail::column_span_for(matrix.rows, matrix.cols, matrix.nnz, sizeof(Value), l2);
  const std::int64_t chunks = (std::int64_t(matrix.cols) + span - 1) / span;
  // The blocks, their conversion's scratch and the race's two vectors, within half the free memory
  // (the rest stays the caller's, as for the explicit transpose's copy).
  const double need = conversion_bytes<Value, Index>(matrix.rows, matrix.nnz, chunks) +
                      double(matrix.rows + matrix.cols) * sizeof(Value);
  std::size_t free = 0, total = 0;
  SPMV_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (need > 0.5 * double(free)) {
    log(std::to_string(need / 1e6) + " MB exceed half the free device memory");
    return nullptr;
  }
  const auto start = std::chrono::steady_clock::now();
  AlgorithmPtr<Value, Index> chunked = make_column_chunked_span(matrix, span, Operation::NonTranspose, options, stream);
  const double setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  DeviceBuffer<Value> x(static_cast<std::size_t>(matrix.cols)), y(static_cast<std::size_t>(matrix.rows));
  SPMV_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), stream));  // the time does not depend on x's values
  EventPair events;
  double whole_ms = 1e30, chunked_ms = 1e30;
  for (int i = 0; i < kRaceProducts; ++i) {
    const double w = events.elapsed_ms([&] { whole.apply(Value(1), x.data(), Value(0), y.data(), stream); }, stream);
    const double c = events.elapsed_ms([&] { chunked->apply(Value(1), x.data(), Value(0), y.data(), stream); }, stream);
    if (i == 0) continue;
    whole_ms = std::min(whole_ms, w);
    chunked_ms = std::min(chunked_ms, c);
  }
  const double saved_ms = (whole_ms - chunked_ms) * double(options.expected_applies);
  if (detail::debug_log_enabled())
    std::fprintf(stderr, "[spmv] auto: column-chunked span=%lld: %.4f ms against %.4f ms whole, setup %.2f ms\n",
                 static_cast<long long>(span), chunked_ms, whole_ms, setup_ms);
  if (saved_ms <= setup_ms) {
    log("it saves " + std::to_string(saved_ms) + " ms over the expected applies, its setup took " +
        std::to_string(setup_ms) + " ms");
    return nullptr;
  }
  return chunked;
}

SPMV_INSTANTIATE_FACTORY(make_column_chunked)

#define SPMV_INSTANTIATE(V, I)                                                                               \
  template std::unique_ptr<ColumnChunkedAlgorithm<V, I>> make_column_chunked_span(                          \
      const CsrView<V, I>&, std::int64_t, Operation, const Options&, cudaStream_t);                        \
  template AlgorithmPtr<V, I> race_column_chunked(const CsrView<V, I>&, CudaAlgorithm<V, I>&, const Options&, \
                                                  cudaStream_t);                                            \
  template I column_span_of(const CsrView<V, I>&, std::int64_t);                                           \
  template ColumnChunks<V, I> chunk_columns(const CsrView<V, I>&, I, cudaStream_t);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda
