// y = A ⊕.⊗ x on the device (spmv/cuda/semiring.hpp): a sub-warp per row (grid-stride over rows), its
// lanes striding the row's entries, the lanes' partial results combined by a shuffle butterfly with
// the semiring's add. Two widths, chosen by the mean row length: 4 lanes for short rows, 32 for long
// ones (the bounded-variant rule of STYLE.md §6; the semirings are not tuned like the SpMV kernels).
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
constexpr double kWideRowsFrom = 12;  // mean entries per row from which a row gets a whole warp

template <int W, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kThreads)
    semiring_rows_kernel(CsrView<Value, Index> a, const Value* __restrict__ x, Value* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x) & (W - 1);
  const std::int64_t first = (std::int64_t{blockIdx.x} * kThreads + threadIdx.x) / W;
  const std::int64_t stride = std::int64_t{gridDim.x} * kThreads / W;
  // Every lane of a sub-warp has the same row, so the sub-warp stays together for the shuffles.
  for (std::int64_t row = first; row < a.rows; row += stride) {
    Value acc = Ops::zero();
    const std::int64_t end = a.row_ptr[row + 1];
    for (std::int64_t k = a.row_ptr[row] + lane; k < end; k += W)
      acc = Ops::add(acc, Ops::mul(a.values[k], __ldg(x + a.col_idx[k])));
    acc = subwarp_reduce<W>(acc, [](Value p, Value q) { return Ops::add(p, q); });
    if (lane == 0) y[row] = acc;
  }
}

template <int W, class Ops, class Value, class Index>
void launch(const CsrView<Value, Index>& a, const Value* x, Value* y, cudaStream_t stream) {
  const std::int64_t threads = static_cast<std::int64_t>(a.rows) * W;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((threads + kThreads - 1) / kThreads, 1 << 20));
  semiring_rows_kernel<W, Ops><<<blocks, kThreads, 0, stream>>>(a, x, y);
  SPMV_CHECK_LAUNCH(semiring_rows_kernel);
}

}  // namespace

template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y, cudaStream_t stream) {
  if (a.rows == 0) return;  // nothing to write (and no launch of zero blocks)
  const bool wide = static_cast<double>(a.nnz) >= kWideRowsFrom * static_cast<double>(a.rows);
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    if (wide) launch<32, Ops>(a, x, y, stream);
    else launch<4, Ops>(a, x, y, stream);
  });
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_multiply(Semiring, const CsrView<V, I>&, const V*, V*, cudaStream_t);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)  // the same (value, index) pairs as the CPU backend
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda

namespace spmv::detail {

// Host vectors through the device: A and x copied up, the product, y copied back (spmv/semiring.hpp).
// A's upload dominates one product, so the plan's tile search costs little, and the merge-based
// kernel is the fast one on large matrices.
template <class Value, class Index>
void cuda_semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                            int device) {
  SPMV_CUDA_CHECK(cudaSetDevice(device));
  const cuda::DeviceCsr<Value, Index> d_a(a);
  const cuda::DeviceBuffer<Value> d_x(x);
  cuda::DeviceBuffer<Value> d_y(y.size());
  cuda::SemiringPlan<Value, Index>(d_a.view(), s).apply(d_x.data(), d_y.data());
  d_y.download(y);  // the default stream, after the kernel; returns when y is on the host
}

#define SPMV_INSTANTIATE(V, I) \
  template void cuda_semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
