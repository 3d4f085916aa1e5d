// y = A ⊕.⊗ x on the device (spmv/cuda/semiring.hpp): a sub-warp per row (grid-stride over rows), its
// lanes walking the row as csr-vector's flat walk does (each lane's U loads of A, then U gathers of x,
// then the semiring's steps; warp_row.cuh), the lanes' partial results combined by a shuffle butterfly
// with the semiring's add. Widths 2, 4, 8 and 32 (the bounded-variant rule of STYLE.md §6):
// SemiringPlan takes csr-vector's width rule from its row statistics (semiring_plan.cu);
// semiring_multiply, which has no plan, and SemiringPlan below 2^20 nonzeros or on rows more than half
// empty take 4 lanes for short rows and 32 for long ones (plain_rows_width).
#include <algorithm>
#include <string>

#include "core/backends.hpp"
#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/warp_reduce.cuh"
#include "cuda/common/warp_row.cuh"
#include "cuda/csr_vector_policy.cuh"
#include "cuda/semiring_rows.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/error.hpp"

namespace spmv::cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kWideRowsFrom = 12;  // plain_rows_width: mean entries per row from which a row gets a warp

template <int W, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kThreads)
    semiring_rows_kernel(CsrView<Value, Index> a, const Value* __restrict__ x, Value* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x) & (W - 1);
  const std::int64_t first = (std::int64_t{blockIdx.x} * kThreads + threadIdx.x) / W;
  const std::int64_t stride = std::int64_t{gridDim.x} * kThreads / W;
  // Every lane of a sub-warp has the same row, so the sub-warp stays together for the shuffles.
  for (std::int64_t row = first; row < a.rows; row += stride) {
    Value acc = subwarp_row_fold_flat<W, csr_vector_policy::kFlatUnroll, csr_vector_policy::kStreamLoads<Value>>(
        a.col_idx, a.values, x, a.row_ptr[row], a.row_ptr[row + 1], lane, Ops::zero(),
        [](Value sum, Value value, Value xv, bool in_row) {
          return in_row ? Ops::add(sum, Ops::mul(value, xv)) : sum;
        });
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
void semiring_rows(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y, int width,
                   cudaStream_t stream) {
  if (a.rows == 0) return;  // nothing to write (and no launch of zero blocks)
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
    switch (width) {
      case 2: return launch<2, Ops>(a, x, y, stream);
      case 4: return launch<4, Ops>(a, x, y, stream);
      case 8: return launch<8, Ops>(a, x, y, stream);
      case 32: return launch<32, Ops>(a, x, y, stream);
    }
    throw InvalidArgument("semiring_rows: width " + std::to_string(width) + " is not one of 2, 4, 8, 32");
  });
}

int plain_rows_width(std::int64_t rows, std::int64_t nnz) {
  return static_cast<double>(nnz) >= kWideRowsFrom * static_cast<double>(rows) ? 32 : 4;
}

template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y, cudaStream_t stream) {
  semiring_rows(s, a, x, y, plain_rows_width(a.rows, a.nnz), stream);
}

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_rows(Semiring, const CsrView<V, I>&, const V*, V*, int, cudaStream_t);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

#define SPMV_INSTANTIATE(V, I) \
  template void semiring_multiply(Semiring, const CsrView<V, I>&, const V*, V*, cudaStream_t);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)  // the same (value, index) pairs as the CPU backend
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda

namespace spmv::detail {

// Host vectors through the device: A and x copied up, the product of a SemiringPlan with `algorithm` (Auto: its
// choice) and `options`, y copied back (spmv/semiring.hpp). A's upload dominates one product, so the plan's tile search costs
// little, and the merge-based kernel is the fast one on large matrices.
template <class Value, class Index>
void cuda_semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                            const Options& options, Algorithm algorithm) {
  SPMV_CUDA_CHECK(cudaSetDevice(options.device));
  const cuda::DeviceCsr<Value, Index> d_a(a);
  const cuda::DeviceBuffer<Value> d_x(x);
  cuda::DeviceBuffer<Value> d_y(y.size());
  cuda::SemiringPlan<Value, Index>(d_a.view(), s, algorithm, options).apply(d_x.data(), d_y.data());
  d_y.download(y);  // the default stream, after the kernel; returns when y is on the host
}

#define SPMV_INSTANTIATE(V, I) \
  template void cuda_semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, \
                                       const Options&, Algorithm);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
