// y = A ⊕.⊗ x on the device (spmv/cuda/semiring.hpp), in one launch with no row statistics (the call
// has no plan to keep them in): a warp takes 32 consecutive rows, one row's bounds per lane. Rows of
// at most kShortRow entries are dealt to the warp's eight 4-lane sub-warps, round by round (a ballot),
// and longer ones are walked by the whole warp, one after another; every walk issues kLoads loads per
// lane before it combines any (csr-vector's flat walk, src/cuda/common/warp_row.cuh), and the lanes'
// partial results meet in a shuffle butterfly with the semiring's add. Replaced (2026-11-26) a
// sub-warp per row of 4 or 32 lanes by the mean row length, one load in flight per lane, which ran at
// 0.39-0.74x cuSPARSE's plus-times on 15-30 M nonzeros (H200; docs/SEMIRINGS.md).
#include <algorithm>

#include "core/backends.hpp"
#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/semiring.hpp"

namespace spmv::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kShortLanes = 4;  // lanes per short row: csr-vector's width for rows of 9-16 entries
constexpr int kLoads = 4;       // loads in flight per lane per pass (csr-vector's kFlatUnroll)
// Rows longer than this get the whole warp: four passes of a 4-lane sub-warp.
constexpr std::int64_t kShortRow = 4 * kShortLanes * kLoads;

// ⊕ over the row's entries [begin, end) taken by this lane (lane, lane + W, ...) of a W-lane walk.
template <int W, class Ops, class Value, class Index>
__device__ __forceinline__ Value walk_row(const Index* __restrict__ col_idx, const Value* __restrict__ values,
                                          const Value* __restrict__ x, std::int64_t begin, std::int64_t end,
                                          int lane) {
  Value acc = Ops::zero();
  for (std::int64_t base = begin + lane; base < end; base += std::int64_t(kLoads) * W) {
    Index cols[kLoads];
    Value vals[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const std::int64_t k = base + std::int64_t(u) * W;
      cols[u] = k < end ? __ldg(col_idx + k) : Index(0);
      vals[u] = k < end ? __ldg(values + k) : Value(0);
    }
    Value xs[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) xs[u] = base + std::int64_t(u) * W < end ? __ldg(x + cols[u]) : Value(0);
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      if (base + std::int64_t(u) * W < end) acc = Ops::add(acc, Ops::mul(vals[u], xs[u]));
  }
  return acc;
}

template <class Ops, class Value, class Index>
__global__ void __launch_bounds__(kThreads)
    semiring_rows_kernel(CsrView<Value, Index> a, const Value* __restrict__ x, Value* __restrict__ y) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr int kSubs = 32 / kShortLanes;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int sub = lane / kShortLanes, sub_lane = lane & (kShortLanes - 1);
  const auto add = [](Value p, Value q) { return Ops::add(p, q); };
  const std::int64_t stride = std::int64_t{gridDim.x} * kThreads;  // rows per grid pass, 32 per warp
  for (std::int64_t first = (std::int64_t{blockIdx.x} * kThreads + threadIdx.x) & ~std::int64_t{31}; first < a.rows;
       first += stride) {
    const std::int64_t r = first + lane;
    std::int64_t begin = 0, end = 0;
    if (r < a.rows) {
      begin = a.row_ptr[r];
      end = a.row_ptr[r + 1];
    }
    unsigned short_rows = __ballot_sync(kAll, r < a.rows && end - begin <= kShortRow);
    unsigned long_rows = __ballot_sync(kAll, end - begin > kShortRow);
    while (short_rows != 0) {  // warp-uniform: sub-warp `sub` takes the (sub + 1)-th pending row
      unsigned mine = short_rows;
      for (int i = 0; i < sub; ++i) mine &= mine - 1;
      unsigned next = short_rows;
#pragma unroll
      for (int i = 0; i < kSubs; ++i) next &= next - 1;
      const int src = mine != 0 ? __ffs(mine) - 1 : 0;
      const std::int64_t row_begin = __shfl_sync(kAll, begin, src);
      const std::int64_t row_end = __shfl_sync(kAll, end, src);
      Value acc = Ops::zero();
      if (mine != 0) acc = walk_row<kShortLanes, Ops>(a.col_idx, a.values, x, row_begin, row_end, sub_lane);
      acc = subwarp_reduce<kShortLanes>(acc, add);
      if (mine != 0 && sub_lane == 0) y[first + src] = acc;
      short_rows = next;
    }
    while (long_rows != 0) {  // warp-uniform
      const int src = __ffs(long_rows) - 1;
      long_rows &= long_rows - 1;
      const std::int64_t row_begin = __shfl_sync(kAll, begin, src);
      const std::int64_t row_end = __shfl_sync(kAll, end, src);
      Value acc = walk_row<32, Ops>(a.col_idx, a.values, x, row_begin, row_end, lane);
      acc = subwarp_reduce<32>(acc, add);
      if (lane == 0) y[first + src] = acc;
    }
  }
}

}  // namespace

template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y, cudaStream_t stream) {
  if (a.rows == 0) return;  // nothing to write (and no launch of zero blocks)
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>((std::int64_t{a.rows} + kThreads - 1) / kThreads, 1 << 20));
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    semiring_rows_kernel<decltype(ops)><<<blocks, kThreads, 0, stream>>>(a, x, y);
    SPMV_CHECK_LAUNCH(semiring_rows_kernel);
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_multiply(Semiring, const CsrView<V, I>&, const V*, V*, cudaStream_t);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)  // the same (value, index) pairs as the CPU backend
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda

namespace spmv::detail {

// Host vectors through the device: A and x copied up, the kernel, y copied back (spmv/semiring.hpp).
template <class Value, class Index>
void cuda_semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                            int device) {
  SPMV_CUDA_CHECK(cudaSetDevice(device));
  const cuda::DeviceCsr<Value, Index> d_a(a);
  const cuda::DeviceBuffer<Value> d_x(x);
  cuda::DeviceBuffer<Value> d_y(y.size());
  cuda::semiring_multiply(s, d_a.view(), d_x.data(), d_y.data());
  d_y.download(y);  // the default stream, after the kernel; returns when y is on the host
}

#define SPMV_INSTANTIATE(V, I) \
  template void cuda_semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
