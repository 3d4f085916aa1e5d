// SpMM dispatch (include/spmv/cuda/spmm.hpp): validation, degenerate shapes, the tile policy and the
// launches of the kernels in spmm_row_vector.cuh / spmm_row_major.cuh / spmm_col_major.cuh. A bounded
// set of compiled tiles is chosen at run time from k, the layout, X's alignment and the mean row length
// (STYLE.md §6): row-major X with 16-byte aligned rows, C lanes of 16-byte vectors across the columns
// (C = 1..16) times 1, 4 or 32/C lane groups across the nonzeros; other row-major X, lanes x columns per
// lane 4x1, 8x1, 16x1, 32x1, 32x2; column-major sub-warps of 2..32 lanes x register tiles of 4 or 8.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/debug_log.hpp"
#include "core/native_values.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/row_statistics.cuh"
#include "cuda/spmm_col_major.cuh"
#include "cuda/spmm_row_major.cuh"
#include "cuda/spmm_row_vector.cuh"
#include "spmv/cuda/spmm.hpp"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data). Not yet measured for SpMM: the block of 128 threads is CSR-vector's
// (H200 sweep, src/cuda/csr_vector.cu), whose sub-warp-per-row shape these kernels share.
struct SpmmPolicy {
  int block_size;
  int col_major_wide_tile;  // register columns per lane for column-major X when k > 4
};
constexpr SpmmPolicy spmm_policy() { return {128, 8}; }

// Row-major tile for k columns: the narrowest sub-warp whose lanes cover k (so k = 4 keeps 8 rows per
// warp busy), 32 lanes x 2 columns beyond 32 (one pass over A for k <= 64, then tiles of 64).
struct RowTile {
  int lanes;
  int per_lane;
};
inline RowTile row_tile_for(std::int64_t k) {
  if (k <= 4) return {4, 1};
  if (k <= 8) return {8, 1};
  if (k <= 16) return {16, 1};
  if (k <= 32) return {32, 1};
  return {32, 2};
}

// Row-major X with aligned rows (spmm_row_vector.cuh): C lanes of V = 16 bytes / value columns cover a
// tile of up to 32 columns; the lane groups across a row's nonzeros follow the mean row length: one
// group for rows of up to 8 nonzeros (short rows get C lanes each and their X loads overlap), and up to
// 32 when the tile is 32 columns wide (a lane's 16-byte loads then keep enough in flight alone); 4
// groups up to 64; a whole warp beyond. H200, 2026-11-26 (docs/PERFORMANCE.md "SpMM"): the 32-column
// threshold was set on the five generated matrices (stencil27, uniform random and long_rows ran
// 1.1-1.9x faster with one group than with four at k = 32); of the six SuiteSparse files only cage10
// falls under it, and gained (0.80 -> 0.90x cuSPARSE in f32, 1.01 -> 1.02x in f64).
struct VectorTile {
  int columns;  // C: lanes across the columns
  int lanes;    // L: the row's sub-warp (L / C groups across its nonzeros)
};
// lanes > 0 (Options::subwarp) asks for that sub-warp: at least C, and rounded up to a compiled one
// (C, 4C or 32).
inline VectorTile vector_tile_for(std::int64_t k, int value_bytes, double mean_row, int lanes = 0) {
  const int v = 16 / value_bytes;
  const int c = pow2_at_least(double((k + v - 1) / v), 1, 32 / v);
  if (lanes > 0) return {c, lanes <= c ? c : lanes <= 4 * c ? std::min(32, 4 * c) : 32};
  const bool one_group = mean_row <= 8 || (c * v >= 32 && mean_row <= 32);
  const int groups = one_group ? 1 : mean_row <= 64 ? 4 : 32;
  return {c, std::min(32, c * groups)};
}
// SPMV_SPMM_TILE=scalar in the environment keeps row-major X on the scalar tiles (spmm_row_major.cuh),
// for measuring one against the other (read once per plan).
inline bool vector_tiles_enabled() {
  const char* env = std::getenv("SPMV_SPMM_TILE");
  return !(env && std::string(env) == "scalar");
}

// Column-major: lanes per row from the mean row length, fewer than CSR-vector's for the same rows since
// every nonzero already costs R gathers (W = pow2 >= mean / 4 in [2, 32]; not measured yet).
inline int col_lanes_for(double mean_row) { return pow2_at_least(mean_row / 4.0, 2, 32); }
inline int col_tile_for(std::int64_t k) { return k <= 4 ? 4 : spmm_policy().col_major_wide_tile; }

// Long rows: one sub-warp walks a whole row, so a row far longer than the rest (power-law graphs,
// long_rows) would leave the product waiting on one sub-warp. Rows longer than kSplitRowNnz are cut
// into chunks of kChunkNnz nonzeros, one sub-warp each, added into Y with atomics (as CSR-vector
// splits SpMV rows, src/cuda/csr_vector.cu). Not measured for SpMM yet: 4096 keeps stencils, FEM and
// uniform random rows whole; 1024 / 512 (first H100 run used 4096 / 1024) keep a power-law head from
// holding a 4-lane sub-warp for a thousand steps.
constexpr std::int64_t kSplitRowNnz = 1024;
constexpr std::int64_t kChunkNnz = 512;

// Y(row, :) = beta * Y(row, :) for the long rows (their chunks then add into Y).
template <class Value, class Index>
__global__ void scale_rows_kernel(Value beta, Value* __restrict__ y, const Index* __restrict__ rows,
                                  std::int64_t num_rows, std::int64_t k, spmm::Strides ys) {
  const std::int64_t n = num_rows * k;
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < n;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    Value& v = y[std::int64_t(rows[idx / k]) * ys.row + (idx % k) * ys.col];
    v = beta == Value(0) ? Value(0) : beta * v;
  }
}

template <class Value>
__global__ void scale_dense_kernel(Value beta, Value* __restrict__ y, std::int64_t rows, std::int64_t k,
                                   spmm::Strides ys) {
  const std::int64_t n = rows * k;
  const bool row_major = ys.col == 1;  // walk Y in memory order
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < n;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = row_major ? idx / k : idx % rows;
    const std::int64_t j = row_major ? idx % k : idx / rows;
    Value& v = y[i * ys.row + j * ys.col];
    v = beta == Value(0) ? Value(0) : beta * v;
  }
}

template <class Value>
void scale_dense(Value beta, const DenseView<Value>& y, int block, cudaStream_t stream) {
  if (y.rows == 0 || y.cols == 0) return;
  scale_dense_kernel<<<grid_for(y.rows * y.cols, block), block, 0, stream>>>(beta, y.data, y.rows, y.cols,
                                                                             {y.row_stride(), y.col_stride()});
  SPMV_CHECK_LAUNCH("scale_dense_kernel");
}

template <class Value, class Index>
struct Launch {
  CsrView<Value, Index> a;
  std::int64_t k;
  Value alpha, beta;
  const Value* x;
  std::int64_t ldx;
  Value* y;
  spmm::Strides ys;
  bool transpose;
  int block;
  cudaStream_t stream;
  std::int64_t long_row;  // rows longer than this run as chunks (INT64_MAX: none)
  const spmm::Chunk<Index>* chunks;
  std::int64_t num_chunks;
  const Index* long_rows;  // the split rows (N: their Y rows are scaled by beta first)
  std::int64_t num_long_rows;

  // N with split rows: Y(long rows) = beta * Y before their chunks add into it.
  void scale_long_rows() const {
    if (transpose || num_long_rows == 0) return;
    scale_rows_kernel<<<grid_for(num_long_rows * k, block), block, 0, stream>>>(beta, y, long_rows, num_long_rows, k,
                                                                                ys);
    SPMV_CHECK_LAUNCH("scale_rows_kernel");
  }

  template <int L, int R>
  void row_major() const {
    scale_long_rows();
    const unsigned grid = grid_for(std::int64_t(a.rows) * L, block);
    if (transpose) {
      spmm::row_major_transpose_kernel<L, R><<<grid, block, 0, stream>>>(a, k, alpha, x, ldx, y, ys, long_row);
      SPMV_CHECK_LAUNCH("spmm::row_major_transpose_kernel");
    } else {
      spmm::row_major_kernel<L, R><<<grid, block, 0, stream>>>(a, k, alpha, x, ldx, beta, y, ys, long_row);
      SPMV_CHECK_LAUNCH("spmm::row_major_kernel");
    }
    if (num_chunks == 0) return;
    const unsigned chunk_grid = grid_for(num_chunks * L, block);
    if (transpose) {
      spmm::row_major_transpose_chunk_kernel<L, R>
          <<<chunk_grid, block, 0, stream>>>(a, k, alpha, x, ldx, y, ys, chunks, num_chunks);
      SPMV_CHECK_LAUNCH("spmm::row_major_transpose_chunk_kernel");
    } else {
      spmm::row_major_chunk_kernel<L, R><<<chunk_grid, block, 0, stream>>>(a, k, alpha, x, ldx, y, ys, chunks,
                                                                          num_chunks);
      SPMV_CHECK_LAUNCH("spmm::row_major_chunk_kernel");
    }
  }
  template <int C, int L>
  void row_vector() const {
    scale_long_rows();
    spmm::vector_kernel<C, L><<<grid_for(std::int64_t(a.rows) * L, block), block, 0, stream>>>(a, k, alpha, x, ldx,
                                                                                              beta, y, ys, long_row);
    SPMV_CHECK_LAUNCH("spmm::vector_kernel");
    if (num_chunks == 0) return;
    spmm::vector_chunk_kernel<C><<<grid_for(num_chunks * 32, block), block, 0, stream>>>(a, k, alpha, x, ldx, y, ys,
                                                                                         chunks, num_chunks);
    SPMV_CHECK_LAUNCH("spmm::vector_chunk_kernel");
  }
  template <int C>
  void row_vector_lanes(int lanes) const {
    if (lanes == C) return row_vector<C, C>();
    if constexpr (4 * C < 32)
      if (lanes == 4 * C) return row_vector<C, 4 * C>();
    row_vector<C, 32>();
  }
  void row_vector(VectorTile tile) const {
    switch (tile.columns) {
      case 1: return row_vector_lanes<1>(tile.lanes);
      case 2: return row_vector_lanes<2>(tile.lanes);
      case 4: return row_vector_lanes<4>(tile.lanes);
      case 8: return row_vector_lanes<8>(tile.lanes);
      default: return row_vector_lanes<16>(tile.lanes);
    }
  }
  template <int W, int R>
  void col_major() const {
    scale_long_rows();
    const unsigned grid = grid_for(std::int64_t(a.rows) * W, block);
    if (transpose) {
      spmm::col_major_transpose_kernel<W, R><<<grid, block, 0, stream>>>(a, k, alpha, x, ldx, y, ys, long_row);
      SPMV_CHECK_LAUNCH("spmm::col_major_transpose_kernel");
    } else {
      spmm::col_major_kernel<W, R><<<grid, block, 0, stream>>>(a, k, alpha, x, ldx, beta, y, ys, long_row);
      SPMV_CHECK_LAUNCH("spmm::col_major_kernel");
    }
    if (num_chunks == 0) return;
    // Chunks are long: a full warp of lanes across each one's nonzeros.
    const unsigned chunk_grid = grid_for(num_chunks * 32, block);
    if (transpose) {
      spmm::col_major_transpose_chunk_kernel<32, R>
          <<<chunk_grid, block, 0, stream>>>(a, k, alpha, x, ldx, y, ys, chunks, num_chunks);
      SPMV_CHECK_LAUNCH("spmm::col_major_transpose_chunk_kernel");
    } else {
      spmm::col_major_chunk_kernel<32, R><<<chunk_grid, block, 0, stream>>>(a, k, alpha, x, ldx, y, ys, chunks,
                                                                           num_chunks);
      SPMV_CHECK_LAUNCH("spmm::col_major_chunk_kernel");
    }
  }
  template <int R>
  void col_major_lanes(int lanes) const {
    switch (lanes) {
      case 2: col_major<2, R>(); break;
      case 4: col_major<4, R>(); break;
      case 8: col_major<8, R>(); break;
      case 16: col_major<16, R>(); break;
      default: col_major<32, R>(); break;
    }
  }
};

}  // namespace

template <class Value, class Index>
struct SpmmPlan<Value, Index>::Impl {
  CsrView<Value, Index> matrix;
  Operation op = Operation::NonTranspose;
  int block = 0;
  int col_lanes = 2;
  double mean_row = 0;
  int vector_lanes = 0;  // Options::subwarp for the vector tiles, 0: from the mean row length
  bool vector_tiles = true;
  double setup_ms = 0;
  std::int64_t long_row = std::numeric_limits<std::int64_t>::max();
  DeviceBuffer<spmm::Chunk<Index>> chunks;
  DeviceBuffer<Index> long_rows;
};

template <class Value, class Index>
SpmmPlan<Value, Index>::SpmmPlan(CsrView<Value, Index> matrix, Operation op, const Options& options,
                                 cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  if (matrix.rows < 0 || matrix.cols < 0 || matrix.nnz < 0)
    throw InvalidArgument("spmv::cuda::SpmmPlan: negative matrix size");
  if (matrix.nnz > 0 && (!matrix.row_ptr || !matrix.col_idx || !matrix.values))
    throw InvalidArgument("spmv::cuda::SpmmPlan: null matrix array");
  if (matrix.rows > 0 && !matrix.row_ptr) throw InvalidArgument("spmv::cuda::SpmmPlan: null row_ptr");
  spmv::detail::require_native_values(options, "spmv::cuda::SpmmPlan");
  const auto start = std::chrono::steady_clock::now();
  impl_->matrix = matrix;
  impl_->op = op;
  impl_->block = warp_block_size(options.block_size, spmm_policy().block_size, "spmm");
  impl_->vector_tiles = vector_tiles_enabled();
  if (options.subwarp != 0) impl_->vector_lanes = checked_width(options.subwarp, 0, 1, "spmm: subwarp");
  if (impl_->block > spmm::kSpmmMaxBlock)
    throw InvalidArgument("spmm: block_size must be at most " + std::to_string(spmm::kSpmmMaxBlock) + ", got " +
                          std::to_string(impl_->block));
  if (matrix.rows > 0 && matrix.nnz > 0) {
    const RowStatistics stats = row_statistics(matrix, stream);
    impl_->col_lanes = col_lanes_for(stats.mean);
    impl_->mean_row = stats.mean;
    if (stats.max > kSplitRowNnz) split_long_rows(stream);
  }
  impl_->setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (detail::debug_log_enabled())
    std::fprintf(stderr, "[spmv] spmm plan %lldx%lld nnz=%lld op=%s: column-major lanes=%d, setup %.3f ms\n",
                 static_cast<long long>(matrix.rows), static_cast<long long>(matrix.cols),
                 static_cast<long long>(matrix.nnz), std::string(to_string(op)).c_str(), impl_->col_lanes,
                 impl_->setup_ms);
}

// The long rows' chunks, from a host copy of row_ptr (plan time only, and only for matrices that have
// such rows).
template <class Value, class Index>
void SpmmPlan<Value, Index>::split_long_rows(cudaStream_t stream) {
  const auto& a = impl_->matrix;
  std::vector<Index> row_ptr(static_cast<std::size_t>(a.rows) + 1);
  SPMV_CUDA_CHECK(cudaMemcpyAsync(row_ptr.data(), a.row_ptr, row_ptr.size() * sizeof(Index), cudaMemcpyDeviceToHost,
                                  stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<spmm::Chunk<Index>> chunks;
  std::vector<Index> rows;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t begin = row_ptr[r], end = row_ptr[r + 1];
    if (end - begin <= kSplitRowNnz) continue;
    rows.push_back(static_cast<Index>(r));
    for (std::int64_t c = begin; c < end; c += kChunkNnz)
      chunks.push_back({c, std::min(c + kChunkNnz, end), static_cast<Index>(r)});
  }
  impl_->long_row = kSplitRowNnz;
  impl_->chunks = DeviceBuffer<spmm::Chunk<Index>>(std::span<const spmm::Chunk<Index>>(chunks), stream);
  impl_->long_rows = DeviceBuffer<Index>(std::span<const Index>(rows), stream);
}

template <class Value, class Index>
SpmmPlan<Value, Index>::~SpmmPlan() = default;
template <class Value, class Index>
SpmmPlan<Value, Index>::SpmmPlan(SpmmPlan&&) noexcept = default;
template <class Value, class Index>
SpmmPlan<Value, Index>& SpmmPlan<Value, Index>::operator=(SpmmPlan&&) noexcept = default;

template <class Value, class Index>
void SpmmPlan<Value, Index>::apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y,
                                   cudaStream_t stream) const {
  if (!impl_) throw InvalidArgument("spmv::cuda::SpmmPlan::apply on a moved-from plan");
  const std::int64_t k = x.cols;
  detail::check_dense("spmv::cuda::SpmmPlan::apply", "X", x, x_rows(), k);
  detail::check_dense("spmv::cuda::SpmmPlan::apply", "Y", y, y_rows(), k);
  const auto& a = impl_->matrix;
  // Degenerate shapes and alpha == 0 before any launch but Y's scaling (STYLE.md §4, BLAS).
  if (k == 0 || y_rows() == 0) return;
  if (alpha == Value(0) || a.rows == 0 || a.cols == 0 || a.nnz == 0) {
    scale_dense(beta, y, impl_->block, stream);
    return;
  }
  const bool transpose = impl_->op == Operation::Transpose;
  if (transpose) scale_dense(beta, y, impl_->block, stream);
  const Launch<Value, Index> launch{a,
                                    k,
                                    alpha,
                                    beta,
                                    x.data,
                                    x.ld,
                                    y.data,
                                    {y.row_stride(), y.col_stride()},
                                    transpose,
                                    impl_->block,
                                    stream,
                                    impl_->long_row,
                                    impl_->chunks.data(),
                                    static_cast<std::int64_t>(impl_->chunks.size()),
                                    impl_->long_rows.data(),
                                    static_cast<std::int64_t>(impl_->long_rows.size())};
  if (uses_vector_tiles(x)) {
    Launch<Value, Index> l = launch;
    l.row_vector(vector_tile_for(k, sizeof(Value), impl_->mean_row, impl_->vector_lanes));
    return;
  }
  // k == 1: both layouts are one contiguous column; the row-major kernel's 4 lanes serve it.
  if (x.layout == Layout::RowMajor || k == 1) {
    const std::int64_t ldx = x.layout == Layout::RowMajor ? x.ld : 1;
    Launch<Value, Index> l = launch;
    l.ldx = ldx;
    const RowTile tile = row_tile_for(k);
    switch (tile.lanes * 4 + tile.per_lane) {
      case 4 * 4 + 1: l.template row_major<4, 1>(); break;
      case 8 * 4 + 1: l.template row_major<8, 1>(); break;
      case 16 * 4 + 1: l.template row_major<16, 1>(); break;
      case 32 * 4 + 1: l.template row_major<32, 1>(); break;
      default: l.template row_major<32, 2>(); break;
    }
    return;
  }
  if (col_tile_for(k) == 4)
    launch.template col_major_lanes<4>(impl_->col_lanes);
  else
    launch.template col_major_lanes<spmm_policy().col_major_wide_tile>(impl_->col_lanes);
}

// Row-major X whose rows start on 16-byte boundaries (aligned base, ld a multiple of the vector), op N.
template <class Value, class Index>
bool SpmmPlan<Value, Index>::uses_vector_tiles(const DenseView<const Value>& x) const {
  constexpr int v = spmm::Vector16<Value>::width;
  return impl_->vector_tiles && impl_->op == Operation::NonTranspose && x.layout == Layout::RowMajor &&
         reinterpret_cast<std::uintptr_t>(x.data) % 16 == 0 && x.ld % v == 0;
}

template <class Value, class Index>
Operation SpmmPlan<Value, Index>::operation() const { return impl_->op; }
template <class Value, class Index>
std::int64_t SpmmPlan<Value, Index>::x_rows() const {
  return impl_->op == Operation::NonTranspose ? impl_->matrix.cols : impl_->matrix.rows;
}
template <class Value, class Index>
std::int64_t SpmmPlan<Value, Index>::y_rows() const {
  return impl_->op == Operation::NonTranspose ? impl_->matrix.rows : impl_->matrix.cols;
}
template <class Value, class Index>
std::string SpmmPlan<Value, Index>::policy(std::int64_t k, Layout layout) const {
  const std::string op = impl_->op == Operation::Transpose ? " atomic-scatter" : "";
  std::string block = " block=" + std::to_string(impl_->block);
  if (impl_->long_rows.size() > 0)
    block += " split_rows=" + std::to_string(impl_->long_rows.size()) + " (" + std::to_string(impl_->chunks.size()) +
             " chunks of " + std::to_string(kChunkNnz) + ", atomics)";
  if (layout == Layout::RowMajor && impl_->vector_tiles && impl_->op == Operation::NonTranspose) {
    const VectorTile t = vector_tile_for(k, sizeof(Value), impl_->mean_row, impl_->vector_lanes);
    return "row-major vector lanes=" + std::to_string(t.lanes) + " column lanes=" + std::to_string(t.columns) +
           " cols/lane=" + std::to_string(16 / sizeof(Value)) + " (16-byte aligned X rows; else scalar tiles)" + block;
  }
  if (layout == Layout::RowMajor || k == 1) {
    const RowTile t = row_tile_for(k);
    return "row-major lanes=" + std::to_string(t.lanes) + " cols/lane=" + std::to_string(t.per_lane) + block + op;
  }
  return "column-major lanes=" + std::to_string(impl_->col_lanes) + " cols/lane=" + std::to_string(col_tile_for(k)) +
         block + op;
}
template <class Value, class Index>
double SpmmPlan<Value, Index>::setup_ms() const { return impl_->setup_ms; }
template <class Value, class Index>
bool SpmmPlan<Value, Index>::reproducible() const {
  return impl_->op == Operation::NonTranspose && impl_->chunks.size() == 0;
}

template class SpmmPlan<float, std::int32_t>;
template class SpmmPlan<float, std::int64_t>;
template class SpmmPlan<double, std::int32_t>;
template class SpmmPlan<double, std::int64_t>;

}  // namespace spmv::cuda
