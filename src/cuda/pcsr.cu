// PCSR (He & Gao, "A Novel CSR-Based Sparse Matrix-Vector Multiplication on GPUs", Mathematical
// Problems in Engineering 2016, article 8471283): two kernels. Kernel 1 multiplies every nonzero by its x entry
// into a products array (fully coalesced); kernel 2 reduces row segments of that array through
// shared memory. Here kernel 2 works on fixed tiles of `tile` products: each block stages one
// tile and reduces the rows that *start* in it (CSR-stream style, several threads per row when the tile
// holds few rows); the last such row may run past the tile, and the block reduces the rest of it from
// the products array in global memory. Every row is written exactly once, by the block holding its
// first nonzero (empty rows: the block holding their offset), so alpha/beta need no fix-up.
// docs/algorithms/pcsr.md has the details and the departures from the paper.
#include <cub/block/block_reduce.cuh>

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

// Kernel 1: products[k] = values[k] * x[col_idx[k]], vector loads and stores where aligned.
template <class Value, class Index>
__global__ void pcsr_products_kernel(CsrProducts<Value, Index> products, compute_t<Value>* __restrict__ out) {
  constexpr int width = CsrProducts<Value, Index>::width;
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

// Kernel 2: one block per tile of products (grid-stride over tiles); Value is the products' type.
template <int Threads, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    pcsr_reduce_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ tile_rows, long long num_tiles,
                       const Value* __restrict__ products, long long nnz, Value alpha, Value beta,
                       Value* __restrict__ y) {
  constexpr long long kTileSize = kTile<Threads, Value>;
  using Dense = DenseValues<Value>;
  using BlockReduce = cub::BlockReduce<Value, Threads>;
  static_assert(kTileSize % Dense::width == 0, "tiles start on vector boundaries");
  // Tiles start on vector boundaries and end at a multiple of the width or at nnz, so staging whole
  // vector groups stays inside kTileSize slots.
  __shared__ alignas(16) Value tile[kTileSize];
  __shared__ typename BlockReduce::TempStorage reduce;

  const Dense dense{products, nnz};
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
    reduce_rows_in_shared<Threads>(tile, row_ptr, first_row, (end_row - first_row) - (tail ? 1 : 0), tile_begin,
                                   [&](Index row, Value sum) { y[row] = axpby(alpha, sum, beta, y, row); });
    if (tail) {
      const Index row = end_row - 1;
      Value sum = 0;
      for (long long k = row_ptr[row] - tile_begin + tid; k < tile_end - tile_begin; k += Threads) sum += tile[k];
      sum += range_sum<Value>(dense, tile_end, last_end, tid, Threads);
      sum = BlockReduce(reduce).Sum(sum);
      if (tid == 0) y[row] = axpby(alpha, sum, beta, y, row);
    }
    __syncthreads();  // the tile and the reduction storage are reused by the next tile
  }
}

template <class Value, class Index>
class Pcsr final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  Pcsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_block_threads(options.block_size, pcsr_policy(sizeof(Value)).block_threads, "Pcsr")),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        tile_(with_block_threads(threads_, [](auto threads) { return kTile<decltype(threads)::value, Real>; })),
        num_tiles_((static_cast<long long>(a.nnz) + tile_ - 1) / tile_),
        products_(static_cast<std::size_t>(a.nnz)),
        tile_rows_(static_cast<std::size_t>(num_tiles_ + 1)) {
    constexpr int block = 256;
    pcsr_tile_rows_kernel<<<grid_for(num_tiles_ + 1, block), block, 0, stream>>>(a.row_ptr, a.rows, num_tiles_,
                                                                                 tile_, tile_rows_.data());
    SPMV_CHECK_LAUNCH("pcsr_tile_rows_kernel");
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    constexpr int width = CsrProducts<Value, Index>::width;
    const CsrProducts<Value, Index> products{a_.values, a_.col_idx, x, a_.nnz, aligned_};
    pcsr_products_kernel<<<grid_for((static_cast<long long>(a_.nnz) + width - 1) / width, threads_), threads_, 0,
                           stream>>>(products, products_.data());
    SPMV_CHECK_LAUNCH("pcsr_products_kernel");
    const unsigned grid = static_cast<unsigned>(std::min<long long>(num_tiles_, INT_MAX));
    with_block_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      pcsr_reduce_kernel<kThreads, Real, Index><<<grid, kThreads, 0, stream>>>(
          a_.row_ptr, tile_rows_.data(), num_tiles_, products_.data(), a_.nnz, alpha, beta, y);
      SPMV_CHECK_LAUNCH("pcsr_reduce_kernel");
    });
  }

  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(threads_) + " tile=" + std::to_string(tile_) + " tiles=" +
           std::to_string(num_tiles_) + " vector_loads=" + (aligned_ ? "on" : "off");
  }
  std::size_t extra_bytes() const override { return products_.bytes() + tile_rows_.bytes(); }

 private:
  CsrView<Value, Index> a_;
  int threads_;
  bool aligned_;
  long long tile_;
  long long num_tiles_;
  DeviceBuffer<Real> products_;    // nnz: kernel 1 output, kernel 2 input
  DeviceBuffer<Index> tile_rows_;  // num_tiles + 1: rows owned by each tile
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_pcsr(const CsrView<Value, Index>& matrix, Operation op,
                                                const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Pcsr, op);
  return std::make_unique<Pcsr<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_pcsr)
SPMV_INSTANTIATE_HALF_FACTORY(make_pcsr)

}  // namespace spmv::cuda
