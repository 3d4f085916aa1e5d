#pragma once
// Private: PCSR's kernels and its plan-time tiles (pcsr.cu has the design), written once for the SpMV (pcsr.cu) and
// the semiring product (semiring_pcsr.cu, SemiringPlan with Algorithm::Pcsr). Templated on the semiring (Ops of
// core/semiring_ops.hpp: the first kernel's products are a_k ⊗ x[col_k], the second kernel's row reductions fold
// with ⊕ from the semiring's zero, so an empty row gets the zero); a finished row is written through
// common/row_output.cuh's RowOutput (the SpMV's alpha/beta epilogue for plus-times, y = the ⊕-sum for the others;
// the semiring product over plus-times is the SpMV's kernels with alpha = 1, beta = 0). Every row is written once,
// by the block holding its first nonzero: no atomics and no fix-up for any semiring, and the reduction order is
// fixed, so every product gives the same bits.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <climits>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/adaptive_block_threads.cuh"
#include "cuda/common/adaptive_products.cuh"
#include "cuda/common/adaptive_rows.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/common/semiring_cub.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda {
// Internal linkage, as hola_common.cuh's first kernel: pcsr.cu and semiring_pcsr.cu each own their copy of the
// kernels (pcsr_tile_rows_kernel has the same template arguments in both), so no host stub is shared between two
// device modules.
namespace {

// Launch policy (tuning as data). First values, to be tuned on the H100/H200:
//  block_threads 256 (the paper's blocks are 256 threads on a C2050);
//  items_per_thread: the tile is block_threads * items_per_thread products = 8 KiB of shared memory
//    at 256 threads (2048 floats / 1024 doubles), 32 KiB at 1024 threads.
struct PcsrPolicy {
  int block_threads;
  int items_per_thread;
};
constexpr PcsrPolicy pcsr_policy(int value_bytes) { return {256, value_bytes > 4 ? 4 : 8}; }

template <int Threads, class Value>
constexpr long long kTile = static_cast<long long>(Threads) * pcsr_policy(sizeof(Value)).items_per_thread;

// tile_rows[t] = first row whose first nonzero lies at or after t * tile (t < num_tiles), so tile t
// owns rows [tile_rows[t], tile_rows[t + 1]); tile_rows[num_tiles] = rows takes the trailing empty rows.
template <class Index>
__global__ void pcsr_tile_rows_kernel(const Index* row_ptr, Index rows, long long num_tiles, long long tile,
                                      Index* tile_rows) {
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t <= num_tiles;
       t += static_cast<long long>(gridDim.x) * blockDim.x)
    tile_rows[t] = t == num_tiles ? rows : lower_bound_index(row_ptr, rows, t * tile);
}

// Kernel 1: products[k] = values[k] ⊗ x[col_idx[k]], vector loads and stores where aligned.
template <class Ops, class Value, class Index>
__global__ void pcsr_products_kernel(CsrProducts<Value, Index, Ops> products, compute_t<Value>* __restrict__ out) {
  constexpr int width = CsrProducts<Value, Index, Ops>::width;
  const long long nnz = products.nnz;
  const long long groups = (nnz + width - 1) / width;
  for (long long g = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<long long>(gridDim.x) * blockDim.x) {
    compute_t<Value> items[width];
    products(g, 0, nnz, items);
    const long long k0 = g * width;
    if (k0 + width <= nnz) {
      store_vector<width>(out + k0, items);
    } else {
#pragma unroll
      for (int j = 0; j < width; ++j)  // the array's last partial group
        if (k0 + j < nnz) out[k0 + j] = items[j];
    }
  }
}

// Kernel 2: one block per tile of products (grid-stride over tiles); Value is the products' type. alpha and beta:
// row_output's (the SpMV's; unread by the semirings other than plus-times).
template <int Threads, class Ops, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    pcsr_reduce_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ tile_rows, long long num_tiles,
                       const Value* __restrict__ products, long long nnz, Value alpha, Value beta,
                       Value* __restrict__ y) {
  constexpr long long kTileSize = kTile<Threads, Value>;
  using Dense = DenseValues<Value, Ops>;
  using BlockReduce = cub::BlockReduce<Value, Threads>;
  static_assert(kTileSize % Dense::width == 0, "tiles start on vector boundaries");
  // Tiles start on vector boundaries and end at a multiple of the width or at nnz, so staging whole
  // vector groups stays inside kTileSize slots.
  __shared__ alignas(16) Value tile[kTileSize];
  __shared__ typename BlockReduce::TempStorage reduce;

  const Dense dense{products, nnz};
  const RowOutput<Ops, Value> output = row_output<Ops>(alpha, beta);
  const int tid = static_cast<int>(threadIdx.x);
  for (long long t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    const Index first_row = tile_rows[t];
    const Index end_row = tile_rows[t + 1];
    if (first_row == end_row) continue;  // inside a row owned by an earlier tile (uniform across the block)
    const long long tile_begin = t * kTileSize;
    const long long tile_end = tile_begin + kTileSize < nnz ? tile_begin + kTileSize : nnz;
    stage_range(tile, dense, tile_begin, tile_end, tid, Threads);
    __syncthreads();
    // Only the last owned row can extend past the tile: the others end where the next owned row starts.
    const long long last_end = row_ptr[end_row];
    const bool tail = last_end > tile_end;
    reduce_rows_in_shared<Threads, Ops>(tile, row_ptr, first_row, (end_row - first_row) - (tail ? 1 : 0), tile_begin,
                                        [&](Index row, Value sum) { output.row(y, row, sum); });
    if (tail) {
      const Index row = end_row - 1;
      Value sum = Ops::zero();
      for (long long k = row_ptr[row] - tile_begin + tid; k < tile_end - tile_begin; k += Threads)
        sum = Ops::add(sum, tile[k]);
      sum = Ops::add(sum, range_fold<Ops, Value>(dense, tile_end, last_end, tid, Threads));
      sum = cub_sum<Ops>(BlockReduce(reduce), sum);
      if (tid == 0) output.row(y, row, sum);
    }
    __syncthreads();  // the tile and the reduction storage are reused by the next tile
  }
}

// One matrix's tiles (the rows each tile owns, found once on `stream`) and the products array, the workspace every
// product writes: the host side of both products (Pcsr in pcsr.cu, SemiringPcsr in semiring_pcsr.cu). `threads`
// is a block size accepted by checked_block_threads (Options::block_size or the policy's).
template <class Real, class Index>
class PcsrTiles {
 public:
  PcsrTiles(const Index* row_ptr, Index rows, Index nnz, int threads, cudaStream_t stream)
      : threads_(threads),
        tile_(with_block_threads(threads_, [](auto t) { return kTile<decltype(t)::value, Real>; })),
        num_tiles_((static_cast<long long>(nnz) + tile_ - 1) / tile_),
        products_(static_cast<std::size_t>(nnz)),
        tile_rows_(static_cast<std::size_t>(num_tiles_ + 1)) {
    constexpr int block = 256;
    pcsr_tile_rows_kernel<<<grid_for(num_tiles_ + 1, block), block, 0, stream>>>(row_ptr, rows, num_tiles_, tile_,
                                                                                 tile_rows_.data());
    SPMV_CHECK_LAUNCH("pcsr_tile_rows_kernel");
  }

  // One product: kernel 1 (the products), then kernel 2 (each tile's rows reduced and written: y = alpha * sum +
  // beta * y for plus-times, y = the ⊕-sum for the other semirings, alpha and beta unread).
  template <class Ops, class Value>
  void run(const CsrView<Value, Index>& a, bool aligned, Real alpha, const Real* x, Real beta, Real* y,
           cudaStream_t stream) {
    constexpr int width = CsrProducts<Value, Index, Ops>::width;
    const CsrProducts<Value, Index, Ops> products{a.values, a.col_idx, x, a.nnz, aligned};
    pcsr_products_kernel<Ops><<<grid_for((static_cast<long long>(a.nnz) + width - 1) / width, threads_), threads_, 0,
                                stream>>>(products, products_.data());
    SPMV_CHECK_LAUNCH("pcsr_products_kernel");
    const unsigned grid = static_cast<unsigned>(std::min<long long>(num_tiles_, INT_MAX));
    with_block_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      pcsr_reduce_kernel<kThreads, Ops, Real, Index><<<grid, kThreads, 0, stream>>>(
          a.row_ptr, tile_rows_.data(), num_tiles_, products_.data(), a.nnz, alpha, beta, y);
      SPMV_CHECK_LAUNCH("pcsr_reduce_kernel");
    });
  }

  // "block=... tile=... tiles=...", the policy's common part.
  std::string policy() const {
    return "block=" + std::to_string(threads_) + " tile=" + std::to_string(tile_) +
           " tiles=" + std::to_string(num_tiles_);
  }
  std::size_t bytes() const { return products_.bytes() + tile_rows_.bytes(); }

 private:
  int threads_;
  long long tile_;
  long long num_tiles_;
  DeviceBuffer<Real> products_;    // nnz: kernel 1 output, kernel 2 input
  DeviceBuffer<Index> tile_rows_;  // num_tiles + 1: rows owned by each tile
};

}  // namespace
}  // namespace spmv::cuda
