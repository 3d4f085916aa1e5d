// SELL-C-sigma of the semiring product (SemiringPlan, Algorithm::Sell): the layout of the SELL SpMV
// (sell_layout.cuh: rows sorted by length within sigma windows, slices of C = 32 rows padded to their
// longest row and stored column-major, the empty rows left out when they are the majority), converted once
// at plan time, and the SpMV's walk (format_sell.cu) with the semiring's add, multiply and zero
// (core/semiring_ops.hpp) in place of alpha * sum + beta * y: one thread per sorted row (two for few, long
// rows: the SpMV's threads_per_row rule), each step of a warp reading one contiguous segment of a slice.
//
// Padding never enters a row: its slots carry column -1 after the row's entries, and the walk stops at the
// first one (0 ⊗ x[0] is not the semiring's zero for min-plus, max-times or max-min). A row's accumulator
// starts at the semiring's zero, so an empty row in the slices gives it; with the empty rows left out, the
// extra blocks of the same launch write the zero to them from the bit mask. Results go to y[perm[p]].
// min, max and or-and are exact in any order (the CPU's bits, a zero's sign aside); plus-times sums a row in
// storage order with one thread (with two, two interleaved halves), rounding as the device does (FMA).
#include <algorithm>
#include <string>

#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/semiring_sell.cuh"
#include "cuda/sell_layout.cuh"

namespace spmv::cuda {
namespace {

// Launch policy: the SELL SpMV's 256 threads a block (format_sell.cu's SellPolicy), C and sigma its defaults
// (spmv/formats.hpp: C = 32, a warp inside one slice; sigma = 256). Threads a row: sell::threads_per_row's
// rule, which picks 1 or 2 without Options::subwarp, so only those two are compiled.
constexpr int kThreads = 256;
constexpr int kMaxThreadsPerRow = 2;

// L threads per sorted position (format_sell.cu's sell_kernel with the semiring's ops): lane l of the row's
// L takes slots l, l + L, ... until the row's first padding slot; the L partial results meet in a butterfly
// with the semiring's add. The first `sliced_blocks` blocks run the slices; with the empty rows left out
// (`nonempty` non-null), the blocks after them write the semiring's zero to those rows.
template <int L, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kThreads)
    semiring_sell_kernel(Index rows, unsigned sliced_blocks, Index all_rows, const unsigned* __restrict__ nonempty,
                         int log2_c, const Index* __restrict__ perm, const Index* __restrict__ width,
                         const long long* __restrict__ slice_ptr, const Index* __restrict__ col_idx,
                         const Value* __restrict__ values, const Value* __restrict__ x, Value* __restrict__ y) {
  if (sell::write_left_out_rows(sliced_blocks, all_rows, nonempty, [&](long long i) { y[i] = Ops::zero(); })) return;
  sell::walk_sliced_rows<L>(
      rows, sliced_blocks, log2_c, width, slice_ptr, [&](long long p, Index slot, Index step, Index count, int lane) {
        Value acc = Ops::zero();
        for (Index k = 0; k < count; ++k, slot += step) {
          const Index col = format::load_stream(col_idx + slot);
          if (col < 0) break;  // padding: only padding follows
          acc = Ops::add(acc, Ops::mul(format::load_stream(values + slot), __ldg(x + col)));
        }
        acc = subwarp_reduce<L>(acc, [](Value u, Value v) { return Ops::add(u, v); });
        if (lane == 0) y[format::load_stream(perm + p)] = acc;
      });
}

}  // namespace

template <class Value, class Index>
struct SemiringSell<Value, Index>::Impl {
  sell::Layout<Value, Index> m;
  int threads_per_row = 1;
};

template <class Value, class Index>
SemiringSell<Value, Index>::SemiringSell(const CsrView<Value, Index>& a, const Options& options,
                                         cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  const int requested_threads = sell::checked_threads_per_row(options.subwarp);  // refused before the conversion
  const int c = sell_c_of(options);
  impl_->m = sell::build_layout(a, c, sell_sigma_of(options, c), options,
                                "the semiring's csr-vector or merge-path (or auto)", stream);
  impl_->threads_per_row = sell::threads_per_row(requested_threads, static_cast<double>(impl_->m.active),
                                                 static_cast<double>(impl_->m.slots));
}

template <class Value, class Index>
SemiringSell<Value, Index>::~SemiringSell() = default;
template <class Value, class Index>
SemiringSell<Value, Index>::SemiringSell(SemiringSell&&) noexcept = default;
template <class Value, class Index>
SemiringSell<Value, Index>& SemiringSell<Value, Index>::operator=(SemiringSell&&) noexcept = default;

template <class Value, class Index>
void SemiringSell<Value, Index>::apply(Semiring s, const Value* x, Value* y, cudaStream_t stream) const {
  const sell::Layout<Value, Index>& m = impl_->m;
  const int t = impl_->threads_per_row;
  const unsigned sliced = std::min(grid_for(static_cast<long long>(m.active) * t, kThreads), sell::kMaxSliceBlocks);
  const unsigned empty = m.empty_rows_left_out() ? std::min(grid_for(m.rows, kThreads), sell::kMaxSliceBlocks) : 0;
  if (sliced + empty == 0) return;  // no rows
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    with_width<1, kMaxThreadsPerRow>(t, [&](auto lanes) {
      semiring_sell_kernel<decltype(lanes)::value, Ops><<<sliced + empty, kThreads, 0, stream>>>(
          m.active, sliced, m.rows, m.nonempty.data(), sell::log2_of(m.c), m.perm.data(), m.width.data(),
          m.slice_ptr.data(), m.col_idx.data(), m.values.data(), x, y);
      SPMV_CHECK_LAUNCH("semiring_sell_kernel");
    });
  });
}

template <class Value, class Index>
std::string SemiringSell<Value, Index>::policy() const {
  const sell::Layout<Value, Index>& m = impl_->m;
  return "sell block=" + std::to_string(kThreads) + " C=" + std::to_string(m.c) + " sigma=" + std::to_string(m.sigma) +
         " slices=" + std::to_string(m.slices) + " threads_per_row=" + std::to_string(impl_->threads_per_row) +
         (m.empty_rows_left_out() ? " nonempty_rows=" + std::to_string(m.active) : "");
}

template <class Value, class Index>
std::size_t SemiringSell<Value, Index>::bytes() const {
  return impl_->m.bytes();
}

#define SPMV_INSTANTIATE(V, I) template class SemiringSell<V, I>;
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)  // SemiringPlan's (value, index) pairs
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda
