// Merge-based SpMV (Merrill & Garland, "Merge-based Parallel Sparse Matrix-Vector Multiplication",
// SC'16, §4), structured like CUB's former DeviceSpmv (AgentSpmv + segment fix-up):
//  - the merge path of (row end offsets, nonzero indices), rows + nnz steps, is cut into tiles of
//    block_threads * items_per_thread steps; the tile boundaries are found once at plan time by the
//    diagonal search (§4.1);
//  - a block stages its tile's row end offsets and products in shared memory, each thread finds its
//    start with a diagonal search in shared memory and consumes items_per_thread steps, emitting the
//    rows it finishes and carrying out a partial (row, sum);
//  - the carry-outs are fixed up within the block by a cub::BlockScan reduce-by-key over (row, sum)
//    pairs, rows finished in the tile are written to y coalesced, and the tile's own carry-out (the
//    partial sum of the row still open at its end) goes to a workspace;
//  - a second small kernel adds alpha * carry into y for every tile carry-out.
// Equal work per block whatever the row lengths: empty rows and one huge row are handled by
// construction. docs/algorithms/merge_path.md has the details.
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <climits>
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/adaptive_block_threads.cuh"
#include "cuda/common/adaptive_products.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/merge_path_search.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). Items per thread from CUB 1.x's AgentSpmv policy for sm_60+ (odd
// counts keep the threads' shared-memory walks on distinct banks). H200, 2026-11-21, % of copy
// bandwidth (rmat:scale=20 / mostly_empty 4M rows / long_rows / dense_rows): double 64 threads x 5
// items 34.5 / 38.1 / 38.2 / 37.8, x 9 items 33.8 / 35.8 / 38.8 / 47.4 (dense_rows only: fewer
// tiles carrying into its 500k-long rows), x 3 items 33.8 / 29.9 / 36.9 / 36.2; float x 7 items at
// 256 threads 26.3 / 28.8 / 30.1 / 37.2 vs 128 threads 26.4 / 28.2 / 28.3 / 35.8, x 11 items
// 24.1 / 28.8 / 30.2 / 39.1, x 5 items 26.4 / 28.1 / 29.7 / 34.8. Merge-path is Auto's choice
// for none of these since Hola's tuning (dispatch.cu); block 256 for float.
struct MergePathPolicy {
  int block_threads;
  int items_per_thread;
};
constexpr MergePathPolicy merge_path_policy(int value_bytes) {
  return value_bytes > 4 ? MergePathPolicy{64, 5} : MergePathPolicy{256, 7};
}

// Static shared memory per block for the tile (row ends + products), below the 48 KiB static limit
// with the scan storage: large block sizes (Options.block_size) get fewer items per thread.
constexpr int kTileSharedBytes = 40 * 1024;

template <int Threads, class Value>
constexpr int merge_items_per_thread() {
  constexpr int fit = kTileSharedBytes / (Threads * static_cast<int>(sizeof(int) + sizeof(Value)));
  constexpr int policy = merge_path_policy(sizeof(Value)).items_per_thread;
  return fit < 1 ? 1 : (fit < policy ? fit : policy);
}

// Tile boundaries (§4.1, one search per tile): coords[t] = path coordinate on diagonal t * tile_items.
template <class Index>
__global__ void merge_path_tile_search_kernel(const Index* row_ptr, Index rows, Index nnz, long long tile_items,
                                              long long num_tiles, MergeCoordinate<Index>* coords) {
  const long long path = static_cast<long long>(rows) + nnz;
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t <= num_tiles;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long diagonal = t * tile_items < path ? t * tile_items : path;
    const MergeCoordinate<long long> c = merge_path_search<long long>(diagonal, row_ptr + 1, rows, nnz);
    coords[t] = {static_cast<Index>(c.row), static_cast<Index>(c.nz)};
  }
}

// A partial row sum keyed by tile-local row.
template <class Value>
struct RowCarry {
  int row;
  Value value;
};

// Reduce-by-key combine (CUB's ReduceByKeyOp): sums runs of equal rows. Associative because the keys
// are non-decreasing along the path.
struct ReduceByRow {
  template <class Value>
  __device__ __forceinline__ RowCarry<Value> operator()(const RowCarry<Value>& a, const RowCarry<Value>& b) const {
    return {b.row, a.row == b.row ? a.value + b.value : b.value};
  }
};

template <int Threads, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    merge_path_kernel(CsrView<Value, Index> a, const MergeCoordinate<Index>* __restrict__ coords, long long num_tiles,
                      bool aligned, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                      compute_t<Value> beta, compute_t<Value>* __restrict__ y, Index* __restrict__ carry_rows,
                      compute_t<Value>* __restrict__ carry_values) {
  using Real = compute_t<Value>;  // products, sums and carries
  constexpr int kItems = merge_items_per_thread<Threads, Real>();
  constexpr int kTileItems = Threads * kItems;
  using Products = CsrProducts<Value, Index>;
  using Carry = RowCarry<Real>;
  // Warp-scan based (as CUB's AgentSpmv): its storage is a few words per warp, not one item per thread.
  using BlockScan = cub::BlockScan<Carry, Threads, cub::BLOCK_SCAN_WARP_SCANS>;
  // Tile-local row end offsets (one extra: the row still open at the tile end), then the products;
  // after the walk `values` collects the tile's row totals. Staging whole vector groups needs
  // 2 * width slots of slack.
  __shared__ int row_end[kTileItems + 1];
  __shared__ alignas(16) Real values[kTileItems + 2 * Products::width];
  __shared__ typename BlockScan::TempStorage scan;

  const Products products{a.values, a.col_idx, x, a.nnz, aligned};
  const int tid = static_cast<int>(threadIdx.x);
  for (long long tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const MergeCoordinate<Index> start = coords[tile];
    const MergeCoordinate<Index> end = coords[tile + 1];
    const int tile_rows = static_cast<int>(end.row - start.row);
    const int tile_nnz = static_cast<int>(end.nz - start.nz);

    // Stage the tile's row ends relative to its first nonzero. Rows ending inside the tile end
    // at most at tile_nnz; the open row's end (or nnz past the last row) is clamped to tile_nnz, which
    // keeps every comparison of the walk unchanged.
    for (int i = tid; i <= tile_rows; i += Threads) {
      const long long row = static_cast<long long>(start.row) + i;
      const long long row_end_offset = row < a.rows ? static_cast<long long>(a.row_ptr[row + 1]) : a.nnz;
      const long long local = row_end_offset - start.nz;
      row_end[i] = local < tile_nnz ? static_cast<int>(local) : tile_nnz;
    }
    const int shift = static_cast<int>(start.nz - stage_range(values, products, start.nz, end.nz, tid, Threads));
    __syncthreads();

    // Diagonal search (§4.1) within the tile for this thread's first step, then its steps along the path.
    const int tile_items = tile_rows + tile_nnz;
    const int diagonal = min(tid * kItems, tile_items);
    const int diagonal_end = min(diagonal + kItems, tile_items);
    const MergeCoordinate<int> here = merge_path_search<int>(diagonal, row_end, tile_rows, tile_nnz);
    int row = here.row, nz = here.nz;
    Real running = 0;
    int emitted_row[kItems];
    Real emitted_sum[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      emitted_row[i] = -1;
      emitted_sum[i] = 0;
      if (diagonal + i < diagonal_end) {
        if (nz < row_end[row]) {  // move down: accumulate a nonzero
          running += values[shift + nz];
          ++nz;
        } else {  // move right: the row ends here
          emitted_row[i] = row;
          emitted_sum[i] = running;
          running = 0;
          ++row;
        }
      }
    }

    // Carry fix-up: reduce-by-key over the threads' carry-outs; `prefix` is the sum of the earlier threads'
    // carries into the row this thread starts in, `tile_carry` the open row at the tile end.
    Carry prefix, tile_carry;
    BlockScan(scan).ExclusiveScan(Carry{row, running}, prefix, Carry{-1, Real(0)}, ReduceByRow{}, tile_carry);
    __syncthreads();  // every walk has finished reading `values`
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (emitted_row[i] >= 0)
        values[emitted_row[i]] = emitted_sum[i] + (emitted_row[i] == prefix.row ? prefix.value : Real(0));
    __syncthreads();
    for (int i = tid; i < tile_rows; i += Threads) {
      const Index r = start.row + i;
      y[r] = axpby(alpha, values[i], beta, y, r);  // beta applied here, once: the tile finishing the row
    }
    if (tid == 0) {
      carry_rows[tile] = start.row + tile_carry.row;
      carry_values[tile] = tile_carry.value;
    }
    __syncthreads();  // shared memory is reused by the next tile
  }
}

// Tile fix-up (CUB's segment fix-up pass): each tile's open row was finished and written by a later
// tile in the main kernel, so its carry only adds alpha * carry. The row ending the path (rows) is no
// row. Several tiles may carry into one long row, hence the atomics.
template <class Value, class Index>
__global__ void merge_path_fixup_kernel(const Index* __restrict__ carry_rows, const Value* __restrict__ carry_values,
                                        long long num_tiles, Index rows, Value alpha, Value* __restrict__ y) {
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < num_tiles;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Index row = carry_rows[t];
    const Value value = carry_values[t];
    if (row < rows && value != Value(0)) atomicAdd(y + row, alpha * value);
  }
}

template <class Value, class Index>
class MergePath final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  MergePath(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_block_threads(options.block_size, merge_path_policy(sizeof(Value)).block_threads,
                                       "MergePath")),
        items_per_thread_(with_block_threads(
            threads_, [](auto threads) { return merge_items_per_thread<decltype(threads)::value, Real>(); })),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        num_tiles_((static_cast<long long>(a.rows) + a.nnz + tile_items() - 1) / tile_items()),
        coords_(static_cast<std::size_t>(num_tiles_ + 1)),
        carry_rows_(static_cast<std::size_t>(num_tiles_)),
        carry_values_(static_cast<std::size_t>(num_tiles_)) {
    merge_path_tile_search_kernel<<<grid_for(num_tiles_ + 1, kSetupBlock), kSetupBlock, 0, stream>>>(
        a.row_ptr, a.rows, a.nnz, tile_items(), num_tiles_, coords_.data());
    SPMV_CHECK_LAUNCH("merge_path_tile_search_kernel");
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    const unsigned grid = static_cast<unsigned>(std::min<long long>(num_tiles_, INT_MAX));
    with_block_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      merge_path_kernel<kThreads, Value, Index><<<grid, kThreads, 0, stream>>>(
          a_, coords_.data(), num_tiles_, aligned_, alpha, x, beta, y, carry_rows_.data(), carry_values_.data());
      SPMV_CHECK_LAUNCH("merge_path_kernel");
    });
    // With one tile the only carry is the path's end, which belongs to no row.
    if (num_tiles_ > 1) {
      merge_path_fixup_kernel<<<grid_for(num_tiles_, kSetupBlock), kSetupBlock, 0, stream>>>(
          carry_rows_.data(), carry_values_.data(), num_tiles_, a_.rows, alpha, y);
      SPMV_CHECK_LAUNCH("merge_path_fixup_kernel");
    }
  }

  std::string policy() const override {
    return "block=" + std::to_string(threads_) + " items_per_thread=" + std::to_string(items_per_thread_) +
           " tiles=" + std::to_string(num_tiles_) + " vector_loads=" + (aligned_ ? "on" : "off");
  }
  std::size_t extra_bytes() const override { return coords_.bytes() + carry_rows_.bytes() + carry_values_.bytes(); }

 private:
  static constexpr int kSetupBlock = 256;  // tile search and fix-up: one thread per tile
  long long tile_items() const { return static_cast<long long>(threads_) * items_per_thread_; }

  CsrView<Value, Index> a_;
  int threads_;
  int items_per_thread_;
  bool aligned_;
  long long num_tiles_;
  DeviceBuffer<MergeCoordinate<Index>> coords_;  // num_tiles + 1 tile boundaries on the path
  DeviceBuffer<Index> carry_rows_;               // per tile: the row open at its end
  DeviceBuffer<Real> carry_values_;              // per tile: that row's partial sum inside the tile
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_merge_path(const CsrView<Value, Index>& matrix, Operation op,
                                                      const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::MergePath, op);
  return std::make_unique<MergePath<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_merge_path)
SPMV_INSTANTIATE_HALF_FACTORY(make_merge_path)

}  // namespace spmv::cuda
