#pragma once
// Private: the device conversion to SELL-C-sigma shared by the SELL SpMV (format_sell.cu, whose header has
// the design: rows sorted by length within sigma windows, the empty rows left out of the slices when they
// are the majority, padding column -1 and value 0 after each row's entries) and the SELL semiring product
// (semiring_sell.cu), with the rule both apply for threads per row. Built once at plan time.
#include <cub/device/device_partition.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <string>

#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/formats.hpp"

namespace spmv::cuda::sell {

// More than this share of empty rows: they leave the slices (format_sell.cu's header says why). Half: the
// boundary of Auto's mostly-empty classes (src/core/auto_rule.cpp); below it the slices hold few empty rows.
inline constexpr double kCompactEmptyShare = 0.5;

// Threads per row (Options::subwarp: 1, 2 or 4; else the rule). One row a thread leaves few threads where
// the slices hold few, long rows (the non-empty rows of a mostly-empty matrix): there rows get two threads
// when they are fewer than kFullThreads and their mean is at least kTwoThreadsMinSlots slots. H200,
// 2026-11-28 (docs/PERFORMANCE.md "SELL with two threads a row"): bench/auto_families.py's empty family,
// even members fit, odd test, seven held-out matrices: two threads lifted 125-200 k rows of 48-64 from
// 0.91-0.97x the best cuSPARSE to 0.98-1.07x, and lost on shorter rows (f32 rows of 24 at 333 k: 1.11x ->
// 1.01x); four threads won nowhere. The fit grid tied at 200 k and 270 k rows; 270 k is the H200's
// resident threads (132 multiprocessors x 2048), the bound the rule stands for.
inline constexpr int kMaxThreadsPerRow = 4;
inline constexpr double kFullThreads = 270000;
inline constexpr double kTwoThreadsMinSlots = 48;

// Options::subwarp as SELL reads it: 1, 2 or 4 threads a row, 0 (or less) for the rule.
inline int checked_threads_per_row(int requested) {
  if (requested > 0 && requested != 1 && requested != 2 && requested != 4)
    throw InvalidArgument("sell: subwarp (threads per row) must be 1, 2 or 4, got " + std::to_string(requested));
  return std::max(requested, 0);
}

inline int threads_per_row(int requested, double rows, double slots) {
  if (requested > 0) return requested;
  return rows > 0 && rows < kFullThreads && slots >= kTwoThreadsMinSlots * rows ? 2 : 1;
}

// Blocks of each part of a SELL kernel's grid at most (grid-stride beyond): the two parts' sum stays far
// below the grid limit.
inline constexpr unsigned kMaxSliceBlocks = 1u << 29;

inline int log2_of(int power_of_two) {
  int log = 0;
  while ((1 << log) < power_of_two) ++log;
  return log;
}

// --- the walk both SELL kernels share (format_sell.cu's sell_kernel, semiring_sell.cu's semiring_sell_kernel) ---
// One launch runs the slices in its first `sliced_blocks` blocks and, with the empty rows left out of the slices,
// writes those rows from the bit mask in the blocks after them. Inlined into both kernels, so each compiles to
// the code it had with the walk written out (the PTX was compared when this was factored out).

// Blocks from `sliced_blocks` on (launched only with the empty rows left out): write(i) for each row i whose bit in
// `nonempty` is clear, grid-stride over those blocks; returns true there, false in the slice blocks.
template <class Index, class Write>
__device__ __forceinline__ bool write_left_out_rows(unsigned sliced_blocks, Index all_rows,
                                                    const unsigned* __restrict__ nonempty, Write&& write) {
  if (blockIdx.x < sliced_blocks) return false;
  const long long stride = static_cast<long long>(gridDim.x - sliced_blocks) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x - sliced_blocks) * blockDim.x + threadIdx.x; i < all_rows;
       i += stride)
    if (!((__ldg(nonempty + (i >> 5)) >> (i & 31)) & 1u)) write(i);
  return true;
}

// L threads per sorted position p < rows, grid-stride over the slice blocks: the slice's width and start are the
// same for the whole slice (broadcast loads), the row's slots are C apart, and lane l of the row's L takes slots
// l, l + L, ...: walk(p, first, step, count, lane) with `first` the lane's first slot, `step` = C L between its
// slots and `count` of them within the slice's width (padding, column -1, follows the row's entries there).
template <int L, class Index, class Walk>
__device__ __forceinline__ void walk_sliced_rows(Index rows, unsigned sliced_blocks, int log2_c,
                                                 const Index* __restrict__ width,
                                                 const long long* __restrict__ slice_ptr, Walk&& walk) {
  const Index c = Index(1) << log2_c;
  const int lane = threadIdx.x & (L - 1);
  const long long stride = static_cast<long long>(sliced_blocks) * blockDim.x / L;
  for (long long p = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / L; p < rows; p += stride) {
    const long long s = p >> log2_c;
    const auto first = static_cast<Index>(__ldg(slice_ptr + s) + (p & (c - 1)) + lane * c);
    const Index count = (__ldg(width + s) + (L - 1 - lane)) / L;  // slots lane, lane + L, ... of the row
    walk(p, first, c * L, count, lane);
  }
}

template <class Index>
__global__ void iota_kernel(Index n, Index* __restrict__ out) {
  for (long long i = format::global_thread(); i < n; i += format::grid_threads()) out[i] = static_cast<Index>(i);
}

// Window w covers sorted positions [w * sigma, min((w + 1) * sigma, rows)).
template <class Index>
__global__ void window_offsets_kernel(Index rows, int sigma, long long windows, Index* __restrict__ offsets) {
  for (long long w = format::global_thread(); w <= windows; w += format::grid_threads())
    offsets[w] = static_cast<Index>(std::min<long long>(w * sigma, rows));
}

// Sorted descending inside windows that are multiples of C: a slice's first row is its longest. slots[s] =
// C * width[s] and slots[slices] = 0, so the exclusive scan of `slots` is the slice pointer array.
template <class Index>
__global__ void slice_widths_kernel(const Index* __restrict__ sorted_length, long long slices, int c,
                                    Index* __restrict__ width, long long* __restrict__ slots) {
  for (long long s = format::global_thread(); s <= slices; s += format::grid_threads()) {
    const Index w = s < slices ? sorted_length[s * c] : Index(0);
    if (s < slices) width[s] = w;
    slots[s] = static_cast<long long>(c) * w;
  }
}

// nonempty[w] bit b: row 32 w + b has entries (one warp ballot per word).
template <class Index>
__global__ void nonempty_mask_kernel(const Index* __restrict__ length, Index rows, unsigned* __restrict__ nonempty) {
  const long long words = (static_cast<long long>(rows) + 31) / 32;
  for (long long t = format::global_thread(); t < words * 32; t += format::grid_threads()) {
    const unsigned bits = __ballot_sync(0xffffffffu, t < rows && length[t] > 0);
    if ((t & 31) == 0) nonempty[t >> 5] = bits;
  }
}

// The stable partition's predicate: the row has entries.
template <class Index>
struct RowHasEntries {
  const Index* length;
  __device__ bool operator()(Index row) const { return length[row] > 0; }
};

// sorted_length-to-be of the compacted rows: key[p] = length[row[p]].
template <class Index>
__global__ void gather_lengths_kernel(const Index* __restrict__ length, const Index* __restrict__ row, Index n,
                                      Index* __restrict__ key) {
  for (long long p = format::global_thread(); p < n; p += format::grid_threads()) key[p] = length[row[p]];
}

// Thread per sorted position p (also the padding lanes of the last slice, p >= rows): writes its row's
// entries in slots slice_ptr[s] + k * C + lane and pads the rest of the slice's width (column -1, value 0).
template <class Value, class Index>
__global__ void fill_sell_kernel(CsrView<Value, Index> a, Index sliced_rows, const Index* __restrict__ perm, int log2_c,
                                 long long positions, const Index* __restrict__ width,
                                 const long long* __restrict__ slice_ptr, Index* __restrict__ col_idx,
                                 Value* __restrict__ values) {
  const int c = 1 << log2_c;
  for (long long p = format::global_thread(); p < positions; p += format::grid_threads()) {
    const long long s = p >> log2_c;
    const auto base = static_cast<Index>(slice_ptr[s] + (p & (c - 1)));
    const Index w = width[s];
    Index begin = 0, length = 0;
    if (p < sliced_rows) {
      const Index row = perm[p];
      begin = a.row_ptr[row];
      length = a.row_ptr[row + 1] - begin;
    }
    for (Index k = 0; k < w; ++k) {
      const Index slot = base + k * c;
      col_idx[slot] = k < length ? a.col_idx[begin + k] : Index(-1);
      values[slot] = k < length ? a.values[begin + k] : stored_zero<Value>();
    }
  }
}

// The converted matrix on the device: perm_[p] is the original row at sorted position p < active; slot k
// of lane l in slice s at slice_ptr[s] + k * c + l (column -1 = padding, always after the row's entries).
template <class Value, class Index>
struct Layout {
  Index rows = 0;                     // the matrix's rows
  Index active = 0;                   // rows in the slices: all, or the non-empty ones
  int c = 0;
  int sigma = 0;
  long long slices = 0;
  long long slots = 0;
  DeviceBuffer<unsigned> nonempty;    // with the empty rows left out: bit per row, set where it has entries
  DeviceBuffer<Index> perm;           // active entries
  DeviceBuffer<Index> width;          // slices: slots per row in each slice
  DeviceBuffer<long long> slice_ptr;  // slices + 1: first slot of each slice
  DeviceBuffer<Index> col_idx;
  DeviceBuffer<Value> values;         // padding holds 0

  bool empty_rows_left_out() const { return nonempty.size() > 0; }
  std::size_t bytes() const {
    return perm.bytes() + width.bytes() + slice_ptr.bytes() + col_idx.bytes() + values.bytes() + nonempty.bytes();
  }
};

// Converts `a` at slice height c and window sigma (validated by the caller: sell_c_of, sell_sigma_of) on
// `stream`: row lengths, the partition of the non-empty rows (kept when they are at most
// 1 - kCompactEmptyShare of the rows), a stable descending sort of (length, row) within each sigma window,
// slice widths, the scan of the slice sizes, the padding rule (Unsupported, naming `alternatives`) before the
// slots are allocated, then one thread per sorted position writes its slots. Synchronises `stream`.
template <class Value, class Index>
Layout<Value, Index> build_layout(const CsrView<Value, Index>& a, int c, int sigma, const Options& options,
                                  const char* alternatives, cudaStream_t stream) {
  Layout<Value, Index> m;
  m.rows = a.rows;
  m.c = c;
  m.sigma = sigma;
  DeviceBuffer<Index> length = format::row_lengths(a.row_ptr, a.rows, stream);
  // The rows the slices hold, in the order the windows sort: all of them, or the non-empty ones first.
  DeviceBuffer<Index> order(static_cast<std::size_t>(a.rows));
  iota_kernel<<<grid_for(a.rows, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(a.rows, order.data());
  SPMV_CHECK_LAUNCH("iota_kernel");
  DeviceBuffer<Index> key = std::move(length);  // the sort's keys: the lengths of `order`'s rows
  m.active = a.rows;
  if (a.rows > 0) {
    // The partition's count of non-empty rows decides; below the share its order is not used.
    DeviceBuffer<Index> partitioned(static_cast<std::size_t>(a.rows));
    DeviceBuffer<long long> selected(1);
    format::run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DevicePartition::If(temp, bytes, order.data(), partitioned.data(), selected.data(),
                                          static_cast<long long>(a.rows), RowHasEntries<Index>{key.data()},
                                          stream);
        },
        stream);
    const long long nonempty = format::read_device_value(selected.data(), stream);
    if (static_cast<double>(a.rows - nonempty) > kCompactEmptyShare * static_cast<double>(a.rows)) {
      m.active = static_cast<Index>(nonempty);
      m.nonempty = DeviceBuffer<unsigned>(static_cast<std::size_t>((a.rows + 31) / 32));
      nonempty_mask_kernel<<<grid_for(((a.rows + 31) / 32) * 32, format::kPlanBlock), format::kPlanBlock, 0,
                             stream>>>(key.data(), a.rows, m.nonempty.data());
      SPMV_CHECK_LAUNCH("nonempty_mask_kernel");
      DeviceBuffer<Index> active_length(static_cast<std::size_t>(m.active));
      gather_lengths_kernel<<<grid_for(m.active, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
          key.data(), partitioned.data(), m.active, active_length.data());
      SPMV_CHECK_LAUNCH("gather_lengths_kernel");
      order = std::move(partitioned);
      key = std::move(active_length);
    }
  }
  const long long rows = m.active;
  m.perm = DeviceBuffer<Index>(static_cast<std::size_t>(rows));
  // Sort (length, row) descending within sigma windows.
  DeviceBuffer<Index> sorted_length(static_cast<std::size_t>(rows));
  if (rows > 0) {
    const long long windows = (rows + sigma - 1) / sigma;
    DeviceBuffer<Index> window(static_cast<std::size_t>(windows) + 1);
    window_offsets_kernel<<<grid_for(windows + 1, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        m.active, sigma, windows, window.data());
    SPMV_CHECK_LAUNCH("window_offsets_kernel");
    format::run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceSegmentedSort::StableSortPairsDescending(
              temp, bytes, key.data(), sorted_length.data(), order.data(), m.perm.data(), rows, windows,
              window.data(), window.data() + 1, stream);
        },
        stream);
  }

  // Slice widths and pointers, then the refusal rule before the slots are allocated.
  m.slices = (rows + c - 1) / c;
  m.width = DeviceBuffer<Index>(static_cast<std::size_t>(m.slices));
  m.slice_ptr = DeviceBuffer<long long>(static_cast<std::size_t>(m.slices) + 1);
  slice_widths_kernel<<<grid_for(m.slices + 1, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
      sorted_length.data(), m.slices, c, m.width.data(), m.slice_ptr.data());
  SPMV_CHECK_LAUNCH("slice_widths_kernel");
  format::run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, m.slice_ptr.data(), m.slices + 1, stream);
      },
      stream);
  m.slots = format::read_device_value(m.slice_ptr.data() + m.slices, stream);
  format::check_padded_size<Index>("SELL", static_cast<long double>(m.slots), a.nnz, options, alternatives,
                                   sizeof(Index) + sizeof(Value));

  m.col_idx = DeviceBuffer<Index>(static_cast<std::size_t>(m.slots));
  m.values = DeviceBuffer<Value>(static_cast<std::size_t>(m.slots));
  const long long positions = m.slices * c;
  fill_sell_kernel<<<grid_for(positions, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
      a, m.active, m.perm.data(), log2_of(c), positions, m.width.data(), m.slice_ptr.data(), m.col_idx.data(),
      m.values.data());
  SPMV_CHECK_LAUNCH("fill_sell_kernel");
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporaries are freed on return
  return m;
}

}  // namespace spmv::cuda::sell
