// SELL-C-sigma (Kreutzer, Hager, Wellein, Fehske & Bishop, "A unified sparse matrix data format for
// efficient general sparse matrix-vector multiplication on modern processors with wide SIMD units",
// SIAM J. Sci. Comput. 36(5), 2014): rows sorted by length (descending) within windows of sigma rows, cut
// into slices of C consecutive sorted rows, each slice padded to its longest row and stored column-major.
// One thread per sorted row: with C a multiple of 32 a warp lies inside one slice, so its threads share one
// trip count and each step of the warp reads one contiguous segment. The sums go back to the original rows
// through the permutation: y[perm[p]]. Few, long rows get two threads a row (threads_per_row).
//
// Conversion on the device at plan time (sell_layout.cuh, shared with the semiring product): row lengths, a
// stable descending sort of (length, row) within each sigma window (cub::DeviceSegmentedSort; stable, so
// equal rows keep their order and the permutation is deterministic), slice widths, exclusive scan of the slice sizes (cub::DeviceScan), refusal by the
// padding rule before the arrays are allocated, then one thread per sorted row writes its slots.
//
// Mostly-empty rows (more than kCompactEmptyShare of them): the empty rows leave the slices. A stable
// partition (cub::DevicePartition) puts the non-empty rows first, only they are sorted and sliced, so a
// sigma window holds sigma non-empty rows instead of a few among padding, and the empty rows' y = beta y
// is written from a bit mask of the non-empty rows (rows / 8 bytes) by extra blocks of the same launch.
// The suite's mostly_empty (5% of 4 M rows non-empty, 64 each; H200): SELL over the 200 k non-empty rows
// alone ran in 0.105 / 0.094 ms (f64 / f32) where the slices with the empty rows took 0.275 / 0.125 and
// cuSPARSE 0.151 / 0.109 (docs/PERFORMANCE.md).
#include <algorithm>
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/sell_layout.cuh"

namespace spmv::cuda {
namespace {

using sell::kMaxSliceBlocks;
using sell::kMaxThreadsPerRow;
using sell::log2_of;

// Launch policy (tuning as data): one thread per row, 256 threads per block, a first value to be tuned on
// the H100/H200. C and sigma come from Options (defaults in spmv/formats.hpp: C = 32, one warp per slice
// as Kreutzer et al. use on GPUs; sigma = 256).
struct SellPolicy {
  int block_size;
};
constexpr SellPolicy sell_policy(int /*value_bytes*/) { return {256}; }

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
  if (sell::write_left_out_rows(sliced_blocks, all_rows, nonempty,
                                [&](long long i) { y[i] = axpby(alpha, compute_t<Value>(0), beta, y, i); }))
    return;
  sell::walk_sliced_rows<L>(
      rows, sliced_blocks, log2_c, width, slice_ptr, [&](long long p, Index first, Index step, Index count, int lane) {
        compute_t<Value> sum = format::strided_row_dot<true>(col_idx, values, first, step, count, x);
        sum = subwarp_sum<L>(sum);
        if (lane == 0) {
          const Index row = format::load_stream(perm + p);
          y[row] = axpby(alpha, sum, beta, y, row);
        }
      });
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
    const int requested_threads = sell::checked_threads_per_row(options.subwarp);  // refused before the conversion
    m_ = sell::build_layout(a, c_, sigma_, options, "a smaller sell_c, a larger sell_sigma, hyb or a CSR algorithm",
                            stream);
    threads_per_row_ =
        sell::threads_per_row(requested_threads, static_cast<double>(m_.active), static_cast<double>(m_.slots));
    with_width<1, kMaxThreadsPerRow>(threads_per_row_,
                                     [&](auto t) { kernel_ = sell_kernel<decltype(t)::value, Value, Index>; });
  }

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    const unsigned sliced =
        std::min(grid_for(static_cast<long long>(m_.active) * threads_per_row_, block_), kMaxSliceBlocks);
    const unsigned empty = m_.empty_rows_left_out() ? std::min(grid_for(rows_, block_), kMaxSliceBlocks) : 0;
    kernel_<<<sliced + empty, block_, 0, stream>>>(m_.active, sliced, rows_, m_.nonempty.data(), log2_of(c_),
                                                   m_.perm.data(), m_.width.data(), m_.slice_ptr.data(),
                                                   m_.col_idx.data(), m_.values.data(), alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("sell_kernel");
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " C=" + std::to_string(c_) + " sigma=" + std::to_string(sigma_) +
           " slices=" + std::to_string(m_.slices) + " threads_per_row=" + std::to_string(threads_per_row_) +
           " unroll=" + std::to_string(format::kSlotUnroll) +
           (m_.empty_rows_left_out() ? " nonempty_rows=" + std::to_string(m_.active) : "");
  }
  std::size_t extra_bytes() const override { return m_.bytes(); }

 private:
  Index rows_;
  int block_;
  int c_;
  int sigma_;
  sell::Layout<Value, Index> m_;
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
