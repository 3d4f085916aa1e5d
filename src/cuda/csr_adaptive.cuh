#pragma once
// Private: CSR-Adaptive's policy, row blocks and block loop (Greathouse & Daga SC'14, Daga & Greathouse HiPC'15;
// csr_adaptive.cu has the design), generic over the semiring (Ops: zero, add and mul of core/semiring_ops.hpp) and
// over what a finished row and a CSR-VectorL chunk write, so that the SpMV (csr_adaptive.cu: alpha / beta, a chunk
// atomically adding alpha * partial into its beta-scaled row) and the semiring product (semiring_csr_adaptive.cu:
// y = the row's ⊕-sum, a chunk ⊕-added into its row set to the semiring's zero) are one kernel body over the same
// row blocks (built by csr_adaptive.cu's build_row_blocks).
#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "core/semiring_ops.hpp"
#include "cuda/common/adaptive_products.cuh"
#include "cuda/common/adaptive_rows.cuh"
#include "cuda/common/semiring_cub.cuh"
#include "cuda/common/stored_value.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda::csr_adaptive {

// Launch policy (tuning as data). First values, to be tuned on the H100/H200:
//  block_threads 256 (CSR-stream of SC'14 uses 256-thread work-groups);
//  window: row blocks are cut where a row's first nonzero crosses a multiple of `window`, so a block
//    of several rows holds fewer than 2 * window nonzeros: the shared tile is 2 * window values =
//    16 KiB for both value types (2048 floats / 1024 doubles per window, the SC'14 budget range);
//  long_row_chunk_windows: rows longer than this many windows are split across CUDA blocks
//    (CSR-VectorL) in chunks of that size, so one huge row spreads over many SMs.
struct Policy {
  int block_threads;
  int window;
  int long_row_chunk_windows;
};
constexpr Policy policy_for(int value_bytes) { return {256, 8192 / value_bytes, 4}; }

// Both count products staged in shared memory, which are of the compute type.
template <class Value>
constexpr long long kWindow = policy_for(sizeof(compute_t<Value>)).window;
template <class Value>
constexpr long long kLongRowChunk = kWindow<Value> * policy_for(sizeof(compute_t<Value>)).long_row_chunk_windows;

// The row blocks of a matrix, built once on the device: blocks[b] = first row of CUDA block b (a split row
// repeats once per chunk), blocks[count] = rows; split_rows = the rows longer than `chunk` (CSR-VectorL).
template <class Index>
struct RowBlocks {
  long long count = 0;
  DeviceBuffer<Index> blocks;
  DeviceBuffer<Index> split_rows;
  std::size_t bytes() const { return blocks.bytes() + split_rows.bytes(); }
};

// Per-row weights, an in-place cub::DeviceScan and a scatter; the split rows by cub::DeviceSelect
// (csr_adaptive.cu). Synchronises `stream` (plan time); InvalidArgument for a row_ptr that is not a
// non-decreasing offset array ending at nnz.
template <class Index>
RowBlocks<Index> build_row_blocks(const Index* row_ptr, Index rows, long long nnz, long long window, long long chunk,
                                  cudaStream_t stream);

inline std::string policy_string(int threads, long long window, long long chunk, long long cuda_blocks,
                                 std::size_t split_rows, bool aligned) {
  return "block=" + std::to_string(threads) + " window=" + std::to_string(window) + " long_row_chunk=" +
         std::to_string(chunk) + " cuda_blocks=" + std::to_string(cuda_blocks) + " split_rows=" +
         std::to_string(split_rows) + " vector_loads=" + (aligned ? "on" : "off");
}

// One CUDA block per row block, grid-stride over the row blocks:
//   CSR-Stream  (several rows): products (a_k ⊗ x_k, the zero outside the range) staged coalesced in shared
//               memory, then each row ⊕-folded from the zero by one thread or a group of lanes;
//   CSR-Vector  (one row): the whole block strides the row, then a block reduction with ⊕;
//   CSR-VectorL (a row split over several blocks): each block's chunk reduced the same way, then
//               chunk(y, row, partial) combines it into the row (atomically: the chunks run in any order).
// output(y, row, sum) writes a finished row. Every row (an empty one too) is folded from Ops::zero().
template <int Threads, class Ops, class Value, class Index, class Output, class Chunk>
__device__ __forceinline__ void row_blocks(const CsrView<Value, Index>& a, const Index* __restrict__ blocks,
                                           long long num_blocks, bool aligned, const compute_t<Value>* __restrict__ x,
                                           compute_t<Value>* __restrict__ y, const Output& output,
                                           const Chunk& chunk) {
  using Real = compute_t<Value>;
  using Products = CsrProducts<Value, Index, Ops>;
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
      reduce_rows_in_shared<Threads, Ops>(smem.products, a.row_ptr, first_row, next_row - first_row, base,
                                          [&](Index row, Real sum) { output(y, row, sum); });
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
        const Real partial = cub_sum<Ops>(BlockReduce(smem.reduce),
                                             range_fold<Ops, Real>(products, chunk_begin, chunk_end, tid, Threads));
        if (tid == 0) chunk(y, first_row, partial);
      } else {
        // CSR-Vector (SC'14): the whole block on one row.
        const Real sum =
            cub_sum<Ops>(BlockReduce(smem.reduce), range_fold<Ops, Real>(products, begin, end, tid, Threads));
        if (tid == 0) output(y, first_row, sum);
      }
    }
    __syncthreads();  // shared memory is reused by the next row block
  }
}

}  // namespace spmv::cuda::csr_adaptive
