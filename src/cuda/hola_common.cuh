#pragma once
// Building blocks shared by Hola-SpMV (hola.cu) and Hola-SpMVT (hola_transpose.cu):
//   M. Steinberger, R. Zayer, H.-P. Seidel, "Globally Homogeneous, Locally Adaptive Sparse
//   Matrix-Vector Multiplication on the GPU", ICS 2017.
// The launch policy, the host-side configuration, the first kernel (global load balancing, §3.1,
// Alg. 2), the striped vector loads (Alg. 5), local load balancing (§3.2, Alg. 4) and the row cursors
// of the special cases (§3.3). docs/algorithms/hola.md describes the whole design.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/hola_warp_transpose.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda::hola {

// ---------------------------------------------------------------------------------------------
// Launch policy (tuning as data, STYLE.md §2). nnz_per_thread is a compile-time constant of the
// kernels (it sizes register arrays); it must be a power-of-two multiple of the vector width (below)
// and at most 32 (one bit per nonzero in a mask). SpMV and SpMVT have their own values.
struct HolaPolicy {
  int block_size;         // threads per block, op = NonTranspose; Options.block_size overrides (multiples
                          // of 32 up to 1024)
  int nnz_per_thread;     // N, op = NonTranspose: nonzeros per thread (§3.2); per block = block_size * N (§3.1)
  int block_size_t;       // the same two for op = Transpose
  int nnz_per_thread_t;
  bool sort_columns_nt;   // per-thread column sort before gathering x, op = NonTranspose (Alg. 5)
  bool sort_columns_t;    // per-thread sort by column, op = Transpose: combines equal columns (Alg. 7)
};
constexpr HolaPolicy hola_policy(int value_bytes) {
  // SpMV: small blocks of few nonzeros per thread. H200, 2026-11-21, rmat:scale=20,edge_factor=16
  // (power-law rows, x gathered from L2), % of copy bandwidth: double N=2 at 64 threads 37.5 (twice),
  // N=4 at 128 35.5, N=8 at 128 29.8 (cuSPARSE COO_ALG1 37.2); float N=4 at 32 threads 27.7, at 64
  // 25.9, N=8 at 128 21.0, N=16 13.6 (cuSPARSE 28.9). More, smaller blocks keep more gathers in
  // flight per SM than a few long thread walks. Caveat: in a bench process that ran other matrices
  // first, double rmat reads 34.6-35.2 (three runs) against 37.0-37.6 when rmat runs first or alone
  // (five runs); float is 27.7-28.9 either way; not understood yet.
  // SpMVT: 64 threads, 8 floats / 4 doubles per thread. H200, 2026-11-21, spmv bench --transpose
  // --sweep, % of copy bandwidth on poisson2d n=2000 / stencil27 n=90 / random_uniform 1M x 16 /
  // rmat 20: double N=4 at 64 threads 45.5 / 31.5 / 26.1 / 15.0 (at 256: 45.2 / 30.1 / 26.2 / 15.1;
  // N=2: 39.8 / 28.0 / 26.1 / 15.6; N=8: 42.5 / 32.5 / 26.1 / 14.6); float N=8 at 64 threads
  // 39.8 / 26.0 / 18.0 / 7.8 (at 256: 38.0 / 24.7 / 18.0 / 7.9; N=4: 42.0 / 21.9 / 18.1 / 8.0;
  // N=16: 32.3 / 29.5 / 17.8 / 7.5). Larger blocks only lose (512: up to -6 points).
  return value_bytes == 4 ? HolaPolicy{32, 4, 64, 8, false, true}
                          : HolaPolicy{64, 2, 64, 4, false, true};
}
// Half-precision values (stored_value.cuh) take float's policy: their sums and buffers are floats.
template <class Value>
constexpr int kNnzPerThread = hola_policy(sizeof(compute_t<Value>)).nnz_per_thread;
template <class Value>
constexpr int kNnzPerThreadT = hola_policy(sizeof(Value)).nnz_per_thread_t;
static_assert(hola_policy(4).nnz_per_thread <= 32 && hola_policy(8).nnz_per_thread <= 32 &&
                  hola_policy(4).nnz_per_thread_t <= 32 && hola_policy(8).nnz_per_thread_t <= 32,
              "one bit per nonzero in a thread's 32-bit row-end mask");

// Elements per vector load: 16 bytes of the wider of the two arrays, so that values and column
// indices share one striped layout (x can then be gathered before the transpose).
template <class Value, class Index>
constexpr int kVectorWidth = static_cast<int>(16 / std::max(sizeof(Value), sizeof(Index)));

// __launch_bounds__ variants compiled per kernel (STYLE.md §6): a block size runs on the smallest
// variant that holds it, so the default 256 keeps the full register budget.
constexpr int kVariants[] = {256, 512, 1024};
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------------------------------------
// Host-side configuration, resolved once at plan time.
struct HolaConfig {
  int block = 0;           // threads per block
  int variant = 0;         // the __launch_bounds__ variant that runs `block`
  int nnz_per_thread = 0;
  int nnz_per_block = 0;
  int num_blocks = 0;
  bool sort_columns = false;
  bool vector_loads = false;  // both arrays aligned to one vector (a view of foreign arrays may not be)
};

inline bool aligned_to(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

template <class Value, class Index>
HolaConfig hola_config(const CsrView<Value, Index>& a, const Options& options, Operation op, const char* name) {
  const HolaPolicy policy = hola_policy(sizeof(compute_t<Value>));
  HolaConfig c;
  if (options.block_size < 0 || options.block_size > 1024 || options.block_size % kWarp != 0)
    throw InvalidArgument(std::string(name) + ": block_size must be a multiple of 32 in [32, 1024] (0: policy), got " +
                          std::to_string(options.block_size));
  const bool nt = op == Operation::NonTranspose;
  c.block = options.block_size > 0 ? options.block_size : (nt ? policy.block_size : policy.block_size_t);
  c.variant = *std::find_if(std::begin(kVariants), std::end(kVariants), [&](int v) { return c.block <= v; });
  if (options.hola_sort_columns < -1 || options.hola_sort_columns > 1)
    throw InvalidArgument(std::string(name) + ": hola_sort_columns must be -1 (policy), 0 or 1, got " +
                          std::to_string(options.hola_sort_columns));
  const bool policy_sort = op == Operation::NonTranspose ? policy.sort_columns_nt : policy.sort_columns_t;
  c.sort_columns = options.hola_sort_columns == -1 ? policy_sort : options.hola_sort_columns == 1;
  c.nnz_per_thread = nt ? policy.nnz_per_thread : policy.nnz_per_thread_t;
  c.nnz_per_block = c.block * c.nnz_per_thread;
  const std::int64_t blocks = (static_cast<std::int64_t>(a.nnz) + c.nnz_per_block - 1) / c.nnz_per_block;
  if (blocks > INT_MAX)
    throw Unsupported(std::string(name) + ": " + std::to_string(blocks) + " blocks exceed the grid limit");
  c.num_blocks = static_cast<int>(blocks);
  constexpr int V = kVectorWidth<Value, Index>;
  c.vector_loads = aligned_to(a.values, V * sizeof(Value)) && aligned_to(a.col_idx, V * sizeof(Index));
  return c;
}

// Allows `bytes` of dynamic shared memory for `kernel` (the opt-in beyond 48 KB), or refuses.
template <class Kernel>
void reserve_shared_memory(Kernel* kernel, int bytes, const char* name) {
  if (bytes <= 48 * 1024) return;
  int device = 0, optin = 0;
  SPMV_CUDA_CHECK(cudaGetDevice(&device));
  SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > optin)
    throw Unsupported(std::string(name) + ": needs " + std::to_string(bytes) + " bytes of shared memory per block, the "
                      "device allows " + std::to_string(optin) + "; use a smaller block_size");
  SPMV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// ---------------------------------------------------------------------------------------------
// Dynamic shared memory layout (byte offsets), computed identically on host and device.
struct SmemLayout {
  int values;     // Value[value_slots]: output buffer (SpMV), hash values (buffered SpMVT), reduction scratch
  int keys;       // Index[key_slots]: hash keys (buffered SpMVT)
  int start_row;  // Index[block]: first row of each thread (§3.2)
  int end_mask;   // unsigned[block]: row ends among each thread's nonzeros (§3.2)
  int warp_flag;  // int[32]: warp holds empty rows inside a thread's range (§3.3)
  int bytes;
};
__host__ __device__ constexpr int round16(int bytes) { return (bytes + 15) / 16 * 16; }
__host__ __device__ constexpr SmemLayout smem_layout(int block, int value_bytes, int index_bytes, int value_slots,
                                                     int key_slots) {
  SmemLayout l{};
  l.values = 0;
  l.keys = round16(value_slots * value_bytes);
  l.start_row = l.keys + round16(key_slots * index_bytes);
  l.end_mask = l.start_row + round16(block * index_bytes);
  l.warp_flag = l.end_mask + round16(block * 4);
  l.bytes = l.warp_flag + kWarp * 4;
  return l;
}

// ---------------------------------------------------------------------------------------------
// Kernel parameters shared by Hola-SpMV and Hola-SpMVT.
template <class Value, class Index>
struct HolaParams {
  CsrView<Value, Index> a;
  Index* block_row_starts;  // num_blocks + 1 entries, filled by the first kernel of each apply
  int nnz_per_block;
  int num_blocks;
  bool vector_loads;
  bool sort_columns;
};

// §3.1, Alg. 2: the slim first kernel, one thread per row. Block b owns nonzeros
// [b*nnz_per_block, (b+1)*nnz_per_block); the row holding a block's first nonzero is scattered into
// blockRowStarts (every nonempty row claims the block starts inside it, so no search is needed).
// The paper also zeroes y here; with alpha/beta (our choice, docs/algorithms/hola.md):
//   NonTranspose: rows whose nonzeros all lie in one block ("owned" rows) are left alone, the block
//     stores alpha*sum + beta*y_old into them with one plain write; every other row (empty, or shared
//     between blocks) is set to beta*y here (0 when beta == 0, without reading y) and blocks add
//     alpha*partial sums to it with atomics. This keeps y traffic at one read + one write per row.
//   Transpose: all of y (A.cols entries) is set to beta*y; every update is an atomic add.
// The semiring product over Ops (hola_spmv.cuh; NonTranspose only) starts those rows from the semiring's zero
// instead, and ⊕-adds the blocks' partial folds to them (RowStart).
// Internal linkage: each translation unit (hola.cu, hola_transpose.cu, semiring_hola.cu) owns its copy of the kernel,
// so no host stub is shared between two device modules.
namespace {

// What the rows that blocks add partial sums to start from, written before the first partial arrives (by the first
// kernel, or by the block's pre-pass in COO-like mode): the SpMV's beta * y (nothing to write when beta == 1, y
// unread when beta == 0); for the other semirings the zero (always written; beta unread).
template <class Ops>
struct RowStart {
  template <class Value>
  static __device__ __forceinline__ bool active(Value) {
    return true;
  }
  template <class Value>
  static __device__ __forceinline__ Value value(Value, const Value*, long long) {
    return Ops::zero();
  }
};
template <class Real>
struct RowStart<semiring_ops::PlusTimes<Real>> {
  template <class Value>
  static __device__ __forceinline__ bool active(Value beta) {
    return beta != Value(1);
  }
  template <class Value>
  static __device__ __forceinline__ Value value(Value beta, const Value* y, long long i) {
    return beta == Value(0) ? Value(0) : beta * y[i];
  }
};

template <class Ops, class Value, class Index>
__global__ void hola_first_kernel(const Index* __restrict__ row_ptr, Index rows, Index nnz_per_block,
                                  Index num_blocks, Index* __restrict__ block_row_starts, Value beta,
                                  Value* __restrict__ y, Index y_size, bool transpose) {
  // 64-bit loop counters: r + stride must not overflow a 32-bit Index near its limit.
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long start = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool scale = RowStart<Ops>::active(beta);
  // ceil(v / nnz_per_block) without forming v + nnz_per_block - 1 (overflow near the Index limit).
  const auto ceil_blocks = [nnz_per_block](Index v) { return v / nnz_per_block + (v % nnz_per_block != 0); };
  for (long long i = start; i < rows; i += stride) {
    const Index r = static_cast<Index>(i);
    const Index a = row_ptr[r], b = row_ptr[r + 1];
    // The blocks whose first nonzero lies in [a, b).
    for (Index blk = ceil_blocks(a), last = ceil_blocks(b); blk < last; ++blk) block_row_starts[blk] = r;
    if (r == rows - 1) block_row_starts[num_blocks] = rows;
    if (!transpose && scale) {
      const bool owned = b > a && a / nnz_per_block == (b - 1) / nnz_per_block;
      if (!owned) y[r] = RowStart<Ops>::value(beta, y, r);
    }
  }
  if (transpose && scale)
    for (long long i = start; i < y_size; i += stride) y[i] = RowStart<Ops>::value(beta, y, i);
}

// Ops: the SpMV's plus-times by default; a semiring product's (op = NonTranspose) for the zero it starts rows from.
template <class Value, class Index, class Ops = semiring_ops::PlusTimes<compute_t<Value>>>
void launch_first_kernel(const HolaParams<Value, Index>& p, compute_t<Value> beta, compute_t<Value>* y, Operation op,
                         cudaStream_t stream) {
  const bool transpose = op == Operation::Transpose;
  const Index y_size = transpose ? p.a.cols : p.a.rows;
  constexpr int kFirstBlock = 256;
  hola_first_kernel<Ops><<<grid_for(std::max(p.a.rows, y_size), kFirstBlock), kFirstBlock, 0, stream>>>(
      p.a.row_ptr, p.a.rows, Index(p.nnz_per_block), Index(p.num_blocks), p.block_row_starts, beta, y, y_size,
      transpose);
  SPMV_CHECK_LAUNCH("hola_first_kernel");
}

// The first kernel's time (§3.1, Algorithm 2), which the paper reports separately: measured once at
// plan time on a scratch y (beta = 1 keeps the kernel's full read-modify-write path), the median of
// 5 launches after one warm-up, so that `spmv bench` can show it in the policy string.
template <class Value, class Index>
double time_first_kernel(const HolaParams<Value, Index>& p, Operation op, cudaStream_t stream) {
  const Index y_size = op == Operation::Transpose ? p.a.cols : p.a.rows;
  DeviceBuffer<compute_t<Value>> scratch(static_cast<std::size_t>(y_size));
  SPMV_CUDA_CHECK(cudaMemsetAsync(scratch.data(), 0, scratch.bytes(), stream));
  cudaEvent_t start, stop;
  SPMV_CUDA_CHECK(cudaEventCreate(&start));
  SPMV_CUDA_CHECK(cudaEventCreate(&stop));
  float samples[5];
  launch_first_kernel(p, compute_t<Value>(1), scratch.data(), op, stream);
  for (float& ms : samples) {
    SPMV_CUDA_CHECK(cudaEventRecord(start, stream));
    launch_first_kernel(p, compute_t<Value>(1), scratch.data(), op, stream);
    SPMV_CUDA_CHECK(cudaEventRecord(stop, stream));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop));
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(samples, samples + 5);
  return samples[2];
}

inline std::string first_kernel_note(double ms) {
  char text[48];
  std::snprintf(text, sizeof text, " first-kernel=%.4fms", ms);
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Output buffer slots (§3.2) = most candidate rows a block handles without the COO-like mode:
// nnz_per_block nonempty rows plus the next block's first row, which the candidate range includes.
// Only empty rows can push a block beyond it.
__host__ __device__ constexpr int buffer_slots(int nnz_per_block) { return nnz_per_block + 1; }

// The block's share of the matrix (§3.1) and which special case of §3.3 applies.
template <class Index>
struct BlockRange {
  Index begin;      // first nonzero of the block
  Index end;        // one past its last
  int nnz;          // end - begin
  Index first_row;  // the row holding nonzero `begin`
  Index stop_row;   // one past the last row that may hold a nonzero of the block
  bool single_row;  // one row covers every nonzero of the block: block-wide reduction
  bool many_rows;   // more candidate rows than the block's tables hold: COO-like mode
};

template <class Index>
__device__ __forceinline__ BlockRange<Index> block_range(const Index* __restrict__ row_ptr, Index rows, Index nnz,
                                                         const Index* __restrict__ block_row_starts, int nnz_per_block) {
  BlockRange<Index> r;
  r.begin = Index(blockIdx.x) * nnz_per_block;
  r.end = nnz - r.begin > Index(nnz_per_block) ? r.begin + Index(nnz_per_block) : nnz;  // no overflow near the limit
  r.nnz = static_cast<int>(r.end - r.begin);
  r.first_row = block_row_starts[blockIdx.x];
  // The next block's first row may still end inside this block; rows after it cannot.
  r.stop_row = min(block_row_starts[blockIdx.x + 1] + 1, rows);
  r.single_row = __ldg(row_ptr + r.first_row + 1) >= r.end;
  // Candidate rows include empty ones and possibly the next block's first row; one buffer slot each.
  r.many_rows = r.stop_row - r.first_row > Index(buffer_slots(nnz_per_block));
  return r;
}

// The prologue both kernels share (hola.cu, hola_transpose.cu): the block's dynamic shared memory
// carved as smem_layout says (the host sized the launch with the same call), the calling thread's
// place in its warp, and the block's share of the matrix (§3.1). Unused tables are empty slices.
template <class Value, class Index>
struct BlockSetup {
  compute_t<Value>* values;  // SmemLayout::values (sums: the compute type)
  Index* keys;         // SmemLayout::keys
  Index* start_row;    // SmemLayout::start_row
  unsigned* end_mask;  // SmemLayout::end_mask
  int* warp_flag;      // SmemLayout::warp_flag
  int tid, lane, warp;
  BlockRange<Index> range;
  int warp_begin;      // block-local index of the warp's first nonzero (N per thread)
};

template <int N, class Value, class Index>
__device__ __forceinline__ BlockSetup<Value, Index> block_setup(unsigned char* smem, const HolaParams<Value, Index>& p,
                                                                int value_slots, int key_slots) {
  const SmemLayout layout = smem_layout(blockDim.x, sizeof(compute_t<Value>), sizeof(Index), value_slots, key_slots);
  BlockSetup<Value, Index> b;
  b.values = reinterpret_cast<compute_t<Value>*>(smem + layout.values);
  b.keys = reinterpret_cast<Index*>(smem + layout.keys);
  b.start_row = reinterpret_cast<Index*>(smem + layout.start_row);
  b.end_mask = reinterpret_cast<unsigned*>(smem + layout.end_mask);
  b.warp_flag = reinterpret_cast<int*>(smem + layout.warp_flag);
  b.tid = threadIdx.x;
  b.lane = b.tid % kWarp;
  b.warp = b.tid / kWarp;
  b.range = block_range(p.a.row_ptr, p.a.rows, p.a.nnz, p.block_row_starts, p.nnz_per_block);
  b.warp_begin = b.warp * kWarp * N;
  return b;
}

// True when every nonzero of `row` lies in the block (the first kernel left y[row] alone).
template <class Index>
__device__ __forceinline__ bool owned_row(const Index* __restrict__ row_ptr, const BlockRange<Index>& r, Index row) {
  return __ldg(row_ptr + row) >= r.begin && __ldg(row_ptr + row + 1) <= r.end;
}

// ---------------------------------------------------------------------------------------------
// Alg. 5, data loading: each of the C = N/V load instructions of a warp reads 32*V consecutive
// values and column indices (16-byte vectors, streaming: they are read once). Register c*V + v of
// lane l holds the block-local nonzero warp_begin + (c*32 + l)*V + v.
template <int V, class T>
__device__ __forceinline__ void load_vector_streaming(const T* p, T* out) {
  constexpr int bytes = V * static_cast<int>(sizeof(T));
  if constexpr (bytes == 16) {
    const int4 raw = __ldcs(reinterpret_cast<const int4*>(p));
    std::memcpy(out, &raw, 16);
  } else if constexpr (bytes == 8) {
    const int2 raw = __ldcs(reinterpret_cast<const int2*>(p));
    std::memcpy(out, &raw, 8);
  } else {
    static_assert(bytes == 4, "vector loads of 4, 8 or 16 bytes");
    const int raw = __ldcs(reinterpret_cast<const int*>(p));
    std::memcpy(out, &raw, 4);
  }
}

template <int V>
__device__ __forceinline__ int striped_local(int warp_begin, int lane, int slot) {
  return warp_begin + ((slot / V) * kWarp + lane) * V + slot % V;
}

template <int N, int V, class Value, class Index>
__device__ __forceinline__ void load_striped(const Value* __restrict__ values, const Index* __restrict__ col_idx,
                                             const BlockRange<Index>& r, int warp_begin, int lane, bool vector_loads,
                                             Value (&val)[N], Index (&col)[N]) {
#pragma unroll
  for (int c = 0; c < N / V; ++c) {
    const int local = striped_local<V>(warp_begin, lane, c * V);
    const Index g = r.begin + local;
    if (vector_loads && local + V <= r.nnz) {
      load_vector_streaming<V>(values + g, &val[c * V]);
      load_vector_streaming<V>(col_idx + g, &col[c * V]);
    } else {
      // Unaligned arrays, or the vector straddling the end of the matrix: scalar loads, same layout.
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const bool in = local + v < r.nnz;
        val[c * V + v] = in ? __ldcs(values + g + v) : stored_zero<Value>();
        col[c * V + v] = in ? __ldcs(col_idx + g + v) : Index(0);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// §3.2, Alg. 4, local load balancing: every thread owns N consecutive nonzeros of the block. One pass
// over the block's rows writes each thread's starting row and a bit mask of the row ends among its
// nonzeros. Masks cannot express empty rows (several ends at one position), so an empty row inside a
// thread's range only raises its warp's flag; that warp then follows row_ptr instead (§3.3).
// When the block has more candidate rows than buffer slots (COO-like mode, §3.3), the pass would
// cost a thread per row: each thread binary-searches its starting row instead and follows row_ptr.
// Ends with __syncthreads (which also publishes the caller's shared-memory initialisation).
template <class Index>
__device__ __forceinline__ Index find_row(const Index* __restrict__ row_ptr, Index lo, Index hi, Index pos) {
  // The last row in [lo, hi) with row_ptr[row] <= pos: the nonempty row holding nonzero pos.
  while (hi - lo > 1) {
    const Index mid = lo + (hi - lo) / 2;
    if (__ldg(row_ptr + mid) <= pos) lo = mid;
    else hi = mid;
  }
  return lo;
}

template <int N, class Index>
__device__ __forceinline__ void local_balance(const Index* __restrict__ row_ptr, const BlockRange<Index>& r,
                                              Index* start_row, unsigned* end_mask, int* warp_flag) {
  const int tid = threadIdx.x;
  if (r.many_rows) {
    if (tid * N < r.nnz) start_row[tid] = find_row(row_ptr, r.first_row, r.stop_row, r.begin + tid * N);
    __syncthreads();
    return;
  }
  end_mask[tid] = 0;
  if (tid < kWarp) warp_flag[tid] = 0;
  __syncthreads();
  const Index rows = r.stop_row - r.first_row;
  for (Index i = tid; i < rows; i += blockDim.x) {
    const Index row = r.first_row + i;
    const Index s = __ldg(row_ptr + row) - r.begin;  // block-local, may lie outside [0, nnz]
    const Index e = __ldg(row_ptr + row + 1) - r.begin;
    if (e > s) {
      if (e > 0 && e <= r.nnz) atomicOr(end_mask + (e - 1) / N, 1u << ((e - 1) % N));
      const int lo = static_cast<int>(min(max(s, Index(0)), Index(r.nnz)));
      const int hi = static_cast<int>(min(e, Index(r.nnz)));
      for (int t = (lo + N - 1) / N; t * N < hi; ++t) start_row[t] = row;
    } else if (s > 0 && s < r.nnz && s % N != 0) {
      // An empty row between two nonzeros of thread s/N.
      warp_flag[s / N / kWarp] = 1;
    }
  }
  __syncthreads();
}

// ---------------------------------------------------------------------------------------------
// Row cursors: which of a thread's nonzeros end a row, and the row that follows.
// Mask cursor (§3.2): consecutive rows, ends from the thread's bit mask.
template <class Index>
struct MaskCursor {
  Index row;
  unsigned mask;
  __device__ __forceinline__ bool is_end(int k) const { return (mask >> k) & 1u; }
  __device__ __forceinline__ void advance(int /*k*/, int /*n*/) { ++row; }
};

// Smallest row in (lo, last] with row_ptr[row + 1] > pos, knowing that lo fails and last holds:
// galloping, so a run of g empty rows costs O(log g) reads.
template <class Index>
__device__ __forceinline__ Index gallop_row(const Index* __restrict__ row_ptr, Index lo, Index last, Index pos) {
  long long step = 1;  // 64-bit: doubling must not overflow a 32-bit Index
  Index hi;
  while (true) {
    hi = last - lo > step ? static_cast<Index>(lo + step) : last;
    if (__ldg(row_ptr + hi + 1) > pos) break;
    lo = hi;
    step *= 2;
  }
  while (hi - lo > 1) {
    const Index mid = lo + (hi - lo) / 2;
    if (__ldg(row_ptr + mid + 1) > pos) hi = mid;
    else lo = mid;
  }
  return hi;
}

// Row-pointer cursor (§3.3, empty rows and COO-like mode): ends and next rows from row_ptr.
template <class Index>
struct RowPtrCursor {
  const Index* row_ptr;
  Index last_row;      // stop_row - 1: a row holding the block's nonzeros never lies beyond it
  Index thread_begin;  // global index of the thread's first nonzero
  Index row;
  Index row_last;      // global index of the row's last nonzero
  __device__ __forceinline__ RowPtrCursor(const Index* rp, Index stop_row, Index begin, Index start)
      : row_ptr(rp), last_row(stop_row - 1), thread_begin(begin), row(start), row_last(__ldg(rp + start + 1) - 1) {}
  __device__ __forceinline__ bool is_end(int k) const { return thread_begin + k == row_last; }
  __device__ __forceinline__ void advance(int k, int n) {
    if (k + 1 >= n) return;  // no nonzero left: the next row is never needed
    const Index pos = thread_begin + k + 1;
    Index next = row + 1;
    if (__ldg(row_ptr + next + 1) <= pos) next = gallop_row(row_ptr, next, last_row, pos);  // empty rows
    row = next;
    row_last = __ldg(row_ptr + next + 1) - 1;
  }
};

// Nonzeros of thread `tid` inside the block (N, fewer or none in the last block).
template <int N>
__device__ __forceinline__ int thread_nnz(int block_nnz, int tid) {
  return max(0, min(N, block_nnz - tid * N));
}

}  // namespace spmv::cuda::hola
