// SemiringPlan (spmv/cuda/semiring.hpp): y = A ⊕.⊗ x with the merge-based kernel of merge_path.cuh,
// instantiated per semiring. The tile boundaries are searched once here; each product runs the tile
// kernel (finished rows stored, each tile's open row carried out) and the fix-up, which ⊕-adds the
// carries into the rows finished by later tiles. The carries are a workspace, so products on different
// streams are chained by WorkspaceOrder as Plan's are.
#include <algorithm>
#include <climits>
#include <optional>
#include <string>

#include "core/semiring_ops.hpp"
#include "core/workspace_order.hpp"
#include "cpu/instantiate.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/event_driver.cuh"
#include "cuda/merge_path.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/semiring.hpp"

namespace spmv::cuda {

template <class Value, class Index>
struct SemiringPlan<Value, Index>::Impl {
  static constexpr int kThreads = merge_path::policy_for(sizeof(Value)).block_threads;
  static constexpr int kTileItems = kThreads * merge_path::items_per_thread<kThreads, Value>();
  static constexpr int kSetupBlock = 256;  // tile search and fix-up: one thread per tile

  CsrView<Value, Index> a;
  Semiring semiring;
  bool aligned = false;
  long long num_tiles = 0;
  DeviceBuffer<MergeCoordinate<Index>> coords;  // num_tiles + 1 tile boundaries on the path
  DeviceBuffer<Index> carry_rows;               // per tile: the row open at its end
  DeviceBuffer<Value> carry_values;             // per tile: that row's partial ⊕-sum inside the tile
  std::optional<detail::WorkspaceOrder<EventDriver>> order;

  template <class Ops>
  void run(const Value* x, Value* y, cudaStream_t stream) {
    const auto grid = static_cast<unsigned>(std::min<long long>(num_tiles, INT_MAX));
    const merge_path::SemiringRows<Ops, Value> output;
    merge_path::tile_kernel<kThreads, Value, Index, Ops><<<grid, kThreads, 0, stream>>>(
        a, coords.data(), num_tiles, aligned, output, x, y, carry_rows.data(), carry_values.data());
    SPMV_CHECK_LAUNCH("merge_path::tile_kernel (semiring)");
    if (num_tiles > 1) {  // with one tile the only carry is the path's end, which belongs to no row
      merge_path::fixup_kernel<<<grid_for(num_tiles, kSetupBlock), kSetupBlock, 0, stream>>>(
          carry_rows.data(), carry_values.data(), num_tiles, a.rows, output, y);
      SPMV_CHECK_LAUNCH("merge_path::fixup_kernel (semiring)");
    }
  }
};

template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(const CsrView<Value, Index>& a, Semiring s, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  if (a.rows < 0 || a.cols < 0 || a.nnz < 0) throw InvalidArgument("spmv::cuda::SemiringPlan: negative matrix size");
  if (a.nnz > 0 && (!a.row_ptr || !a.col_idx || !a.values))
    throw InvalidArgument("spmv::cuda::SemiringPlan: null matrix array");
  if (a.rows > 0 && !a.row_ptr) throw InvalidArgument("spmv::cuda::SemiringPlan: null row_ptr");
  Impl& p = *impl_;
  p.a = a;
  p.semiring = s;
  p.aligned = is_aligned(a.values, 16) && is_aligned(a.col_idx, 16);
  if (a.rows == 0) return;  // nothing to write
  p.num_tiles = (static_cast<long long>(a.rows) + a.nnz + Impl::kTileItems - 1) / Impl::kTileItems;
  p.coords = DeviceBuffer<MergeCoordinate<Index>>(static_cast<std::size_t>(p.num_tiles + 1));
  p.carry_rows = DeviceBuffer<Index>(static_cast<std::size_t>(p.num_tiles));
  p.carry_values = DeviceBuffer<Value>(static_cast<std::size_t>(p.num_tiles));
  merge_path::tile_search_kernel<<<grid_for(p.num_tiles + 1, Impl::kSetupBlock), Impl::kSetupBlock, 0, stream>>>(
      a.row_ptr, a.rows, a.nnz, static_cast<long long>(Impl::kTileItems), p.num_tiles, p.coords.data());
  SPMV_CHECK_LAUNCH("merge_path::tile_search_kernel (semiring)");
  p.order.emplace(EventDriver());
}

template <class Value, class Index>
SemiringPlan<Value, Index>::~SemiringPlan() = default;
template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(SemiringPlan&&) noexcept = default;
template <class Value, class Index>
SemiringPlan<Value, Index>& SemiringPlan<Value, Index>::operator=(SemiringPlan&&) noexcept = default;

template <class Value, class Index>
void SemiringPlan<Value, Index>::apply(const Value* x, Value* y, cudaStream_t stream) {
  if (!impl_) throw InvalidArgument("spmv::cuda::SemiringPlan::apply on a moved-from plan");
  Impl& p = *impl_;
  if (p.num_tiles == 0) return;  // no rows
  if ((p.a.cols > 0 && !x) || !y) throw InvalidArgument("spmv::cuda::SemiringPlan::apply: null x or y");
  p.order->run(stream, [&] {
    semiring_ops::with_semiring<Value>(p.semiring, [&](auto ops) { p.template run<decltype(ops)>(x, y, stream); });
  });
}

template <class Value, class Index>
Semiring SemiringPlan<Value, Index>::semiring() const {
  return impl_->semiring;
}

template <class Value, class Index>
std::string SemiringPlan<Value, Index>::policy() const {
  return "merge-path block=" + std::to_string(Impl::kThreads) +
         " items_per_thread=" + std::to_string(Impl::kTileItems / Impl::kThreads) +
         " tiles=" + std::to_string(impl_->num_tiles) + " vector_loads=" + (impl_->aligned ? "on" : "off");
}

template <class Value, class Index>
std::size_t SemiringPlan<Value, Index>::extra_bytes() const {
  return impl_->coords.bytes() + impl_->carry_rows.bytes() + impl_->carry_values.bytes();
}

#define SPMV_INSTANTIATE(V, I) template class SemiringPlan<V, I>;
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)  // the same (value, index) pairs as the CPU backend
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda
