#pragma once
// Private: Hola-SpMV's main kernel (op = NonTranspose; Steinberger, Zayer & Seidel, ICS'17; hola.cu has the design)
// and the host side of one product (the first kernel, then the main kernel), written once for the SpMV (hola.cu) and
// the semiring product (semiring_hola.cu, SemiringPlan with Algorithm::Hola). Templated on the semiring (Ops of
// core/semiring_ops.hpp): the terms are a_k ⊗ x[col_k], every running sum is a ⊕-fold from the zero, the warp's
// segmented scan and the block's reductions combine with ⊕; the rows that several threads or blocks add to start
// from RowStart's value (hola_common.cuh: the SpMV's beta * y, the semiring's zero) and receive the partial folds by
// atomics: atomicAdd for plus, a compare-and-swap loop on the value's bits for min, max and or (row_output.cuh's
// atomic_add; exact in any order), in the block's shared buffer and in y. A finished row is written through
// row_output.cuh's RowOutput (the SpMV's alpha/beta epilogue for plus-times, y = the ⊕-sum for the others; the
// semiring product over plus-times is the SpMV's kernels with alpha = 1, beta = 0).
#include <cub/thread/thread_operators.cuh>
#include <cub/thread/thread_sort.cuh>
#include <cub/util_type.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/common/semiring_cub.cuh"
#include "cuda/hola_common.cuh"

namespace spmv::cuda::hola {
// Internal linkage, as hola_common.cuh's first kernel: hola.cu and semiring_hola.cu each own their copy.
namespace {

// Alg. 5, premultiplication: x is gathered while the nonzeros are still striped, so the 32 lanes of
// one gather read the columns of 32*V consecutive nonzeros (the best x locality the row order
// offers); only the products then go through the register transpose. With sort_columns each thread
// first sorts its column ids and gathers x in ascending order (the paper's per-thread sort for x
// locality), then restores the nonzero order with a second sorting network. Out-of-range slots get
// 0 without touching x (x may hold NaN; 0 * NaN would poison the row).
template <int N, int V, class Value, class Index>
__device__ __forceinline__ void gather_x(const Value* __restrict__ x, const Index (&col)[N], int block_nnz,
                                         int warp_begin, int lane, bool sort_columns, Value (&xv)[N]) {
  if (!sort_columns) {
#pragma unroll
    for (int k = 0; k < N; ++k) xv[k] = striped_local<V>(warp_begin, lane, k) < block_nnz ? __ldg(x + col[k]) : Value(0);
    return;
  }
  Index key[N];
  int slot[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    key[k] = col[k];
    slot[k] = k;
  }
  cub::StableOddEvenSort(key, slot, ::cuda::std::less<Index>{});
  Value sorted_x[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    sorted_x[k] = striped_local<V>(warp_begin, lane, slot[k]) < block_nnz ? __ldg(x + key[k]) : Value(0);
  cub::StableOddEvenSort(slot, sorted_x, ::cuda::std::less<int>{});  // slots are a permutation of 0..N-1
#pragma unroll
  for (int k = 0; k < N; ++k) xv[k] = sorted_x[k];
}

// y[row] (or a buffer slot) ⊕= v for a row that other threads or blocks add to as well, atomically: the SpMV adds
// alpha * v (atomicAdd); the other semirings ⊕-add v (row_output.cuh's atomic_add, a compare-and-swap loop on the
// bits: exact in any order). The row started from RowStart's value (hola_common.cuh).
template <class Ops, class Value>
__device__ __forceinline__ void add_to_row(Value* p, Value alpha, Value v) {
  if constexpr (kIsPlusTimes<Ops>)
    atomicAdd(p, alpha * v);
  else
    atomic_add<Ops>(p, v);
}

// Where a thread's row sums go. Buffer mode: the block's shared output buffer, one slot per candidate
// row, written to y coalesced at the end. COO-like mode (§3.3, more rows than slots): y directly;
// complete rows with one plain store, partial sums with atomics into rows already scaled by beta
// (by the first kernel, or by the block's pre-pass; for the semirings other than plus-times, set to the zero).
template <class Ops, class Value, class Index>
struct RowSink {
  bool to_buffer;
  Value* buffer;
  Index first_row;
  Value alpha, beta;
  Value* y;
  // The whole row, and nobody else writes it.
  __device__ __forceinline__ void complete(Index row, Value v) const {
    if (to_buffer) buffer[row - first_row] = v;
    else row_output<Ops>(alpha, beta).row(y, row, v);
  }
  // Part of a row that other threads (or blocks) add to as well.
  __device__ __forceinline__ void partial(Index row, Value v) const {
    if (to_buffer) atomic_add<Ops>(buffer + (row - first_row), v);
    else add_to_row<Ops>(y + row, alpha, v);
  }
};

// One thread's walk over its N products (blocked layout): running sums (⊕-folds from the zero) written at row ends.
template <class Ops, class Value, class Index>
struct RowSegments {
  Index head_row = 0;  // row of the first row end; it may have started in an earlier thread
  Value head = Ops::zero();
  bool has_end = false;
  Index open_row = 0;  // row still running after the thread's last nonzero
  Value open_sum = Ops::zero();
  bool open = false;
};

template <int N, class Ops, class Value, class Index, class Cursor>
__device__ __forceinline__ RowSegments<Ops, Value, Index> walk_rows(const Value (&q)[N], int n, Cursor cursor,
                                                                    const RowSink<Ops, Value, Index>& sink) {
  RowSegments<Ops, Value, Index> s;
  Value sum = Ops::zero();
  bool last_was_end = false;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (k < n) {
      sum = Ops::add(sum, q[k]);
      last_was_end = cursor.is_end(k);
      if (last_was_end) {
        if (!s.has_end) {
          s.head_row = cursor.row;
          s.head = sum;
          s.has_end = true;
        } else {
          sink.complete(cursor.row, sum);  // started and ended inside this thread
        }
        sum = Ops::zero();
        cursor.advance(k, n);
      }
    }
  }
  s.open = n > 0 && !last_was_end;
  s.open_row = cursor.row;
  s.open_sum = sum;
  return s;
}

// Rows shared between threads (Alg. 6, chosen per warp). When every thread of the warp holds a row
// end, each shared row touches at most two threads and shared atomics do not collide. When some
// thread lies entirely inside one row (long rows), many threads would hit one address: a segmented
// warp scan (CUB's reduce-by-segment operator; a flag marks threads with a row end) adds the partial
// sums of the threads up to each row end instead, leaving one atomic per row and warp. The scan's operator is the
// semiring's add (cuda::std::plus for plus-times, as the SpMV always passed).
template <class Ops, class Value, class Index, class ScanStorage>
__device__ __forceinline__ void combine_rows(const RowSegments<Ops, Value, Index>& s, int n, int lane,
                                             ScanStorage& storage, const RowSink<Ops, Value, Index>& sink) {
  const bool reduce = __any_sync(kFullMask, n > 0 && !s.has_end);
  if (!reduce) {
    if (s.has_end) sink.partial(s.head_row, s.head);
    if (s.open) sink.partial(s.open_row, s.open_sum);
    return;
  }
  using Pair = cub::KeyValuePair<int, Value>;
  // Carry-out of each thread: the sum after its last row end (all of it without an end).
  const Pair in{s.has_end || n == 0 ? 1 : 0, s.open ? s.open_sum : Ops::zero()};
  Pair inclusive, exclusive;
  cub::WarpScan<Pair>(storage).Scan(in, inclusive, exclusive, cub::ReduceBySegmentOp<CubAdd<Ops>>{});
  const Value carry_in = lane == 0 ? Ops::zero() : exclusive.value;  // lane 0's exclusive output is undefined
  if (s.has_end) sink.partial(s.head_row, Ops::add(carry_in, s.head));
  if (lane == kWarp - 1 && s.open) sink.partial(s.open_row, inclusive.value);  // runs into the next warp
}

// The main kernel: one block per nnz_per_block nonzeros. alpha and beta: row_output's (unread by the semirings other
// than plus-times, whose terms are a_k ⊗ x[col_k] folded with ⊕ from the zero).
template <int MaxBlock, int N, class Ops, class Value, class Index>
__global__ void __launch_bounds__(MaxBlock)
    hola_spmv_kernel(HolaParams<Value, Index> p, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                     compute_t<Value> beta, compute_t<Value>* __restrict__ y) {
  using Real = compute_t<Value>;  // x, y, products and sums; Value is the stored matrix value
  constexpr int V = kVectorWidth<Value, Index>;
  using WarpScan = cub::WarpScan<cub::KeyValuePair<int, Real>>;
  using WarpReduce = cub::WarpReduce<Real>;
  __shared__ typename WarpScan::TempStorage scan_storage[MaxBlock / kWarp];
  __shared__ typename WarpReduce::TempStorage reduce_storage[MaxBlock / kWarp];
  extern __shared__ __align__(16) unsigned char smem[];
  [[maybe_unused]] const auto [buffer, keys, start_row, end_mask, warp_flag, tid, lane, warp, range, warp_begin] =
      block_setup<N>(smem, p, buffer_slots(p.nnz_per_block), 0);
  const Index* __restrict__ row_ptr = p.a.row_ptr;

  // Alg. 5: coalesced vector loads, x gathered in the striped layout.
  Value val[N];
  Real xv[N];
  Index col[N];
  load_striped<N, V>(p.a.values, p.a.col_idx, range, warp_begin, lane, p.vector_loads, val, col);
  gather_x<N, V>(x, col, range.nnz, warp_begin, lane, p.sort_columns, xv);

  // §3.3: one row spans the whole block: block-wide reduction, one write.
  if (range.single_row) {
    Real sum = Ops::zero();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const Real term = Ops::mul(widen(val[k]), xv[k]);
      if constexpr (kIsPlusTimes<Ops>)
        sum = Ops::add(sum, term);  // slots past the block's end hold 0 * 0 = 0
      else  // 0 ⊗ 0 is not the zero of the other semirings: slots past the block's end are left out
        sum = striped_local<V>(warp_begin, lane, k) < range.nnz ? Ops::add(sum, term) : sum;
    }
    sum = cub_sum<Ops>(WarpReduce(reduce_storage[warp]), sum);
    if (lane == 0) buffer[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      sum = lane < int(blockDim.x / kWarp) ? buffer[lane] : Ops::zero();
      sum = cub_sum<Ops>(WarpReduce(reduce_storage[0]), sum);
      if (lane == 0) {
        const Index row = range.first_row;
        if (owned_row(row_ptr, range, row)) row_output<Ops>(alpha, beta).row(y, row, sum);
        else add_to_row<Ops>(y + row, alpha, sum);
      }
    }
    return;
  }

  // Output buffer (§3.2 "summation and buffering"): slots set to the zero, as partial sums arrive by atomics.
  const bool buffer_mode = !range.many_rows;
  const int rows = buffer_mode ? static_cast<int>(range.stop_row - range.first_row) : 0;  // <= buffer slots
  if (buffer_mode)
    for (int i = tid; i < rows; i += blockDim.x) buffer[i] = Ops::zero();
  local_balance<N>(row_ptr, range, start_row, end_mask, warp_flag);

  const int n = thread_nnz<N>(range.nnz, tid);
  if (range.many_rows) {
    // COO-like mode: partial sums go to y by atomics, so each owned row that some thread starts in
    // (the only rows with partial sums besides the shared ones the first kernel scaled) gets beta
    // first (the semiring's zero: RowStart), by the first thread starting in it.
    if (n > 0 && RowStart<Ops>::active(beta)) {
      const Index row = start_row[tid];
      if ((tid == 0 || start_row[tid - 1] != row) && owned_row(row_ptr, range, row))
        y[row] = RowStart<Ops>::value(beta, y, row);
    }
    __syncthreads();
  }

  Real q[N];
#pragma unroll
  for (int k = 0; k < N; ++k) q[k] = Ops::mul(widen(val[k]), xv[k]);
  striped_to_blocked<V>(q, lane);  // Alg. 5: each thread now holds its N consecutive products

  const RowSink<Ops, Real, Index> sink{buffer_mode, buffer, range.first_row, alpha, beta, y};
  RowSegments<Ops, Real, Index> segments;
  if (n > 0) {
    if (range.many_rows || warp_flag[warp])
      segments = walk_rows<N, Ops>(
          q, n, RowPtrCursor<Index>(row_ptr, range.stop_row, range.begin + tid * N, start_row[tid]), sink);
    else
      segments = walk_rows<N, Ops>(q, n, MaskCursor<Index>{start_row[tid], end_mask[tid]}, sink);
  }
  combine_rows(segments, n, lane, scan_storage[warp], sink);

  if (buffer_mode) {
    // The buffer goes to y coalesced; rows shared with other blocks (the first and last) by atomics.
    __syncthreads();
    for (int i = tid; i < rows; i += blockDim.x) {
      const Index row = range.first_row + i;
      const Index a = __ldg(row_ptr + row), e = __ldg(row_ptr + row + 1);
      if (a == e || a >= range.end || e <= range.begin) continue;  // empty (first kernel), or not ours
      if (a >= range.begin && e <= range.end) row_output<Ops>(alpha, beta).row(y, row, buffer[i]);
      else add_to_row<Ops>(y + row, alpha, buffer[i]);
    }
  }
}

template <class Value, class Index, class Real = compute_t<Value>>
using SpmvKernel = void (*)(HolaParams<Value, Index>, Real, const Real*, Real, Real*);

template <class Ops, class Value, class Index>
SpmvKernel<Value, Index> spmv_kernel_for(int variant) {
  constexpr int N = kNnzPerThread<Value>;
  switch (variant) {
    case 256: return hola_spmv_kernel<256, N, Ops, Value, Index>;
    case 512: return hola_spmv_kernel<512, N, Ops, Value, Index>;
    default: return hola_spmv_kernel<1024, N, Ops, Value, Index>;
  }
}


// One Hola-SpMV product's launches for a matrix, configured once (hola_config: Options::block_size and
// hola_sort_columns, as the SpMV) with its blockRowStarts array: the first kernel (blockRowStarts, and RowStart's
// value in the rows blocks add to), then the main kernel. The host side of both products (HolaSpmv in hola.cu,
// SemiringHola in semiring_hola.cu). Every product rewrites blockRowStarts with the same values, so a concurrent
// product reads them unchanged (no workspace).
template <class Ops, class Value, class Index>
class HolaSpmvLaunch {
  using Real = compute_t<Value>;

 public:
  HolaSpmvLaunch(const CsrView<Value, Index>& a, const Options& options)
      : config_(hola_config(a, options, Operation::NonTranspose, "Hola")),
        kernel_(spmv_kernel_for<Ops, Value, Index>(config_.variant)),
        smem_bytes_(
            smem_layout(config_.block, sizeof(Real), sizeof(Index), buffer_slots(config_.nnz_per_block), 0).bytes),
        block_row_starts_(static_cast<std::size_t>(config_.num_blocks) + 1) {
    reserve_shared_memory(kernel_, smem_bytes_, "Hola");
    params_ = {a, block_row_starts_.data(), config_.nnz_per_block, config_.num_blocks, config_.vector_loads,
               config_.sort_columns};
  }

  // alpha and beta as RowStart and row_output read them (unread by the semirings other than plus-times).
  void run(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) {
    launch_first_kernel<Value, Index, Ops>(params_, beta, y, Operation::NonTranspose, stream);
    kernel_<<<config_.num_blocks, config_.block, smem_bytes_, stream>>>(params_, alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("hola_spmv_kernel");
  }

  const HolaParams<Value, Index>& params() const { return params_; }
  // "block=... nnz/thread=... ... launches=hola_first_kernel+hola_spmv_kernel", the policy's common part.
  std::string policy() const {
    return "block=" + std::to_string(config_.block) + " nnz/thread=" + std::to_string(config_.nnz_per_thread) +
           " nnz/block=" + std::to_string(config_.nnz_per_block) + " buffer_rows=" + std::to_string(buffer_slots(config_.nnz_per_block)) +
           " sort=" + (config_.sort_columns ? "on" : "off") + " vector=" +
           (config_.vector_loads ? std::to_string(kVectorWidth<Value, Index>) : std::string("1(unaligned)")) +
           " launches=hola_first_kernel+hola_spmv_kernel";
  }
  std::size_t bytes() const { return block_row_starts_.bytes(); }

 private:
  HolaConfig config_;
  SpmvKernel<Value, Index> kernel_;
  int smem_bytes_;
  DeviceBuffer<Index> block_row_starts_;
  HolaParams<Value, Index> params_{};
};

}  // namespace
}  // namespace spmv::cuda::hola
