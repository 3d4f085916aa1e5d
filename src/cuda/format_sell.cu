// SELL-C-sigma (Kreutzer, Hager, Wellein, Fehske & Bishop, "A unified sparse matrix data format for
// efficient general sparse matrix-vector multiplication on modern processors with wide SIMD units",
// SIAM J. Sci. Comput. 36(5), 2014): rows sorted by length (descending) within windows of sigma rows, cut
// into slices of C consecutive sorted rows, each slice padded to its longest row and stored column-major.
// One thread per sorted row: with C a multiple of 32 a warp lies inside one slice, so its threads share one
// trip count and each step of the warp reads one contiguous segment. The sums go back to the original rows
// through the permutation: y[perm[p]]. Few, long rows get two threads a row (threads_per_row).
//
// Conversion on the device at plan time: row lengths, a stable descending sort of (length, row) within each
// sigma window (cub::DeviceSegmentedSort; stable, so equal rows keep their order and the permutation is
// deterministic), slice widths, exclusive scan of the slice sizes (cub::DeviceScan), refusal by the
// padding rule before the arrays are allocated, then one thread per sorted row writes its slots.
//
// Mostly-empty rows (more than kCompactEmptyShare of them): the empty rows leave the slices. A stable
// partition (cub::DevicePartition) puts the non-empty rows first, only they are sorted and sliced, so a
// sigma window holds sigma non-empty rows instead of a few among padding, and the empty rows' y = beta y
// is written from a bit mask of the non-empty rows (rows / 8 bytes) by extra blocks of the same launch.
// The suite's mostly_empty (5% of 4 M rows non-empty, 64 each; H200): SELL over the 200 k non-empty rows
// alone ran in 0.105 / 0.094 ms (f64 / f32) where the slices with the empty rows took 0.275 / 0.125 and
// cuSPARSE 0.151 / 0.109 (docs/PERFORMANCE.md).
#include <cub/device/device_partition.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data): one thread per row, 256 threads per block, a first value to be tuned on
// the H100/H200. C and sigma come from Options (defaults in spmv/formats.hpp: C = 32, one warp per slice
// as Kreutzer et al. use on GPUs; sigma = 256).
struct SellPolicy {
  int block_size;
};
constexpr SellPolicy sell_policy(int /*value_bytes*/) { return {256}; }

// More than this share of empty rows: they leave the slices (the header says why). Half: the boundary
// of Auto's mostly-empty classes (src/core/auto_rule.cpp); below it the slices hold few empty rows.
constexpr double kCompactEmptyShare = 0.5;

// Threads per row (Options::subwarp: 1, 2 or 4; else the rule). One row a thread leaves few threads where
// the slices hold few, long rows (the non-empty rows of a mostly-empty matrix): there rows get two threads
// when they are fewer than kFullThreads and their mean is at least kTwoThreadsMinSlots slots. H200,
// 2026-11-28 (docs/PERFORMANCE.md "SELL with two threads a row"): bench/auto_families.py's empty family,
// even members fit, odd test, seven held-out matrices: two threads lifted 125-200 k rows of 48-64 from
// 0.91-0.97x the best cuSPARSE to 0.98-1.07x, and lost on shorter rows (f32 rows of 24 at 333 k: 1.11x ->
// 1.01x); four threads won nowhere. The fit grid tied at 200 k and 270 k rows; 270 k is the H200's
// resident threads (132 multiprocessors x 2048), the bound the rule stands for.
constexpr int kMaxThreadsPerRow = 4;
constexpr double kFullThreads = 270000;
constexpr double kTwoThreadsMinSlots = 48;

// Options::subwarp as SELL reads it: 1, 2 or 4 threads a row, 0 (or less) for the rule.
int checked_threads_per_row(int requested) {
  if (requested > 0 && requested != 1 && requested != 2 && requested != 4)
    throw InvalidArgument("sell: subwarp (threads per row) must be 1, 2 or 4, got " + std::to_string(requested));
  return std::max(requested, 0);
}

int threads_per_row(int requested, double rows, double slots) {
  if (requested > 0) return requested;
  return rows > 0 && rows < kFullThreads && slots >= kTwoThreadsMinSlots * rows ? 2 : 1;
}

// Blocks of each part of sell_kernel's grid at most (grid-stride beyond): the two parts' sum stays far
// below the grid limit.
constexpr unsigned kMaxSliceBlocks = 1u << 29;

int log2_of(int power_of_two) {
  int log = 0;
  while ((1 << log) < power_of_two) ++log;
  return log;
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

// L threads per sorted position: the slice's width and start are the same for the whole slice (broadcast
// loads), the row's slots are C apart, lane l of the row's L takes slots l, l + L, ..., kSlotUnroll of
// them in flight, padding skipped by its -1 column; the L partial sums meet in a shuffle. With L > 1 a
// warp's step reads L segments of 32 / L consecutive slots (whole 32-byte sectors down to L = 4 in f64).
// The first `sliced_blocks` blocks run the slices; with the empty rows left out (`nonempty` non-null),
// the blocks after them write those rows' y = beta y (y = 0 when beta == 0) from the mask, in the same
// launch: a second kernel cost 2-3 us a product, 5% of a 7 M-nonzero product (H200).
template <int L, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    sell_kernel(Index rows, unsigned sliced_blocks, Index all_rows, const unsigned* __restrict__ nonempty,
                int log2_c, const Index* __restrict__ perm, const Index* __restrict__ width,
                const long long* __restrict__ slice_ptr, const Index* __restrict__ col_idx,
                const Value* __restrict__ values, compute_t<Value> alpha, const compute_t<Value>* __restrict__ x,
                compute_t<Value> beta, compute_t<Value>* __restrict__ y) {
  if (blockIdx.x >= sliced_blocks) {  // only launched with the empty rows left out
    const long long stride = static_cast<long long>(gridDim.x - sliced_blocks) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x - sliced_blocks) * blockDim.x + threadIdx.x; i < all_rows;
         i += stride)
      if (!((__ldg(nonempty + (i >> 5)) >> (i & 31)) & 1u)) y[i] = axpby(alpha, compute_t<Value>(0), beta, y, i);
    return;
  }
  const Index c = Index(1) << log2_c;
  const int lane = threadIdx.x & (L - 1);
  const long long stride = static_cast<long long>(sliced_blocks) * blockDim.x / L;
  for (long long p = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / L; p < rows; p += stride) {
    const long long s = p >> log2_c;
    const auto first = static_cast<Index>(__ldg(slice_ptr + s) + (p & (c - 1)) + lane * c);
    const Index count = (__ldg(width + s) + (L - 1 - lane)) / L;  // slots lane, lane + L, ... of the row
    compute_t<Value> sum = format::strided_row_dot<true>(col_idx, values, first, c * L, count, x);
    sum = subwarp_sum<L>(sum);
    if (lane == 0) {
      const Index row = format::load_stream(perm + p);
      y[row] = axpby(alpha, sum, beta, y, row);
    }
  }
}

template <class Value, class Index, class Real = compute_t<Value>>
using SellKernel = void (*)(Index, unsigned, Index, const unsigned*, int, const Index*, const Index*, const long long*,
                            const Index*, const Value*, Real, const Real*, Real, Real*);

template <class Value, class Index>
class Sell final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  Sell(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : rows_(a.rows),
        block_(format::resolve_block_size(options.block_size, sell_policy(sizeof(Value)).block_size, "sell")),
        c_(sell_c_of(options)),
        sigma_(sell_sigma_of(options, c_)) {
    const int requested_threads = checked_threads_per_row(options.subwarp);  // refused before the conversion
    DeviceBuffer<Index> length = format::row_lengths(a.row_ptr, a.rows, stream);
    // The rows the slices hold, in the order the windows sort: all of them, or the non-empty ones first.
    DeviceBuffer<Index> order(static_cast<std::size_t>(a.rows));
    iota_kernel<<<grid_for(a.rows, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(a.rows, order.data());
    SPMV_CHECK_LAUNCH("iota_kernel");
    DeviceBuffer<Index> key = std::move(length);  // the sort's keys: the lengths of `order`'s rows
    active_ = a.rows;
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
        active_ = static_cast<Index>(nonempty);
        nonempty_ = DeviceBuffer<unsigned>(static_cast<std::size_t>((a.rows + 31) / 32));
        nonempty_mask_kernel<<<grid_for(((a.rows + 31) / 32) * 32, format::kPlanBlock), format::kPlanBlock, 0,
                               stream>>>(key.data(), a.rows, nonempty_.data());
        SPMV_CHECK_LAUNCH("nonempty_mask_kernel");
        DeviceBuffer<Index> active_length(static_cast<std::size_t>(active_));
        gather_lengths_kernel<<<grid_for(active_, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
            key.data(), partitioned.data(), active_, active_length.data());
        SPMV_CHECK_LAUNCH("gather_lengths_kernel");
        order = std::move(partitioned);
        key = std::move(active_length);
      }
    }
    const long long rows = active_;
    perm_ = DeviceBuffer<Index>(static_cast<std::size_t>(rows));
    // Sort (length, row) descending within sigma windows.
    DeviceBuffer<Index> sorted_length(static_cast<std::size_t>(rows));
    if (rows > 0) {
      const long long windows = (rows + sigma_ - 1) / sigma_;
      DeviceBuffer<Index> window(static_cast<std::size_t>(windows) + 1);
      window_offsets_kernel<<<grid_for(windows + 1, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
          active_, sigma_, windows, window.data());
      SPMV_CHECK_LAUNCH("window_offsets_kernel");
      format::run_cub_at_plan_time(
          [&](void* temp, std::size_t& bytes) {
            return cub::DeviceSegmentedSort::StableSortPairsDescending(
                temp, bytes, key.data(), sorted_length.data(), order.data(), perm_.data(), rows, windows,
                window.data(), window.data() + 1, stream);
          },
          stream);
    }

    // Slice widths and pointers, then the refusal rule before the slots are allocated.
    slices_ = (rows + c_ - 1) / c_;
    width_ = DeviceBuffer<Index>(static_cast<std::size_t>(slices_));
    slice_ptr_ = DeviceBuffer<long long>(static_cast<std::size_t>(slices_) + 1);
    slice_widths_kernel<<<grid_for(slices_ + 1, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        sorted_length.data(), slices_, c_, width_.data(), slice_ptr_.data());
    SPMV_CHECK_LAUNCH("slice_widths_kernel");
    format::run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveSum(temp, bytes, slice_ptr_.data(), slices_ + 1, stream);
        },
        stream);
    const long long slots = format::read_device_value(slice_ptr_.data() + slices_, stream);
    format::check_padded_size<Index>("SELL", static_cast<long double>(slots), a.nnz, options,
                                     "a smaller sell_c, a larger sell_sigma, hyb or a CSR algorithm",
                                     sizeof(Index) + sizeof(Value));

    col_idx_ = DeviceBuffer<Index>(static_cast<std::size_t>(slots));
    values_ = DeviceBuffer<Value>(static_cast<std::size_t>(slots));
    const long long positions = slices_ * c_;
    fill_sell_kernel<<<grid_for(positions, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        a, active_, perm_.data(), log2_of(c_), positions, width_.data(), slice_ptr_.data(), col_idx_.data(),
        values_.data());
    SPMV_CHECK_LAUNCH("fill_sell_kernel");
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporaries are freed on return
    threads_per_row_ = threads_per_row(requested_threads, static_cast<double>(rows), static_cast<double>(slots));
    with_width<1, kMaxThreadsPerRow>(threads_per_row_,
                                     [&](auto t) { kernel_ = sell_kernel<decltype(t)::value, Value, Index>; });
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    const unsigned sliced =
        std::min(grid_for(static_cast<long long>(active_) * threads_per_row_, block_), kMaxSliceBlocks);
    const unsigned empty = nonempty_.size() > 0 ? std::min(grid_for(rows_, block_), kMaxSliceBlocks) : 0;
    kernel_<<<sliced + empty, block_, 0, stream>>>(active_, sliced, rows_, nonempty_.data(), log2_of(c_), perm_.data(),
                                                   width_.data(), slice_ptr_.data(), col_idx_.data(), values_.data(),
                                                   alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("sell_kernel");
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " C=" + std::to_string(c_) + " sigma=" + std::to_string(sigma_) +
           " slices=" + std::to_string(slices_) + " threads_per_row=" + std::to_string(threads_per_row_) +
           " unroll=" + std::to_string(format::kSlotUnroll) +
           (nonempty_.size() > 0 ? " nonempty_rows=" + std::to_string(active_) : "");
  }
  std::size_t extra_bytes() const override {
    return perm_.bytes() + width_.bytes() + slice_ptr_.bytes() + col_idx_.bytes() + values_.bytes() +
           nonempty_.bytes();
  }

 private:
  Index rows_;
  Index active_ = 0;                   // rows in the slices: all, or the non-empty ones
  DeviceBuffer<unsigned> nonempty_;    // with the empty rows left out: bit per row, set where it has entries
  int block_;
  int c_;
  int sigma_;
  long long slices_ = 0;
  DeviceBuffer<Index> perm_;           // active_: perm[p] = original row at sorted position p
  DeviceBuffer<Index> width_;          // slices: slots per row in each slice
  DeviceBuffer<long long> slice_ptr_;  // slices + 1: first slot of each slice
  DeviceBuffer<Index> col_idx_;        // slot k of lane l in slice s at slice_ptr[s] + k * C + l; -1 = padding
  DeviceBuffer<Value> values_;         // same layout; padding holds 0
  int threads_per_row_ = 1;
  SellKernel<Value, Index> kernel_ = nullptr;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_sell(const CsrView<Value, Index>& matrix, Operation op,
                                                const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Sell, op);
  return std::make_unique<Sell<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_sell)
SPMV_INSTANTIATE_HALF_FACTORY(make_sell)

}  // namespace spmv::cuda
