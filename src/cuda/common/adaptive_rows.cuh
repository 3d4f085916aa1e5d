#pragma once
// Row-level pieces shared by CSR-Adaptive and PCSR: a search over row offsets and the CSR-stream
// reduction of rows whose products sit in shared memory.
#include <cuda_runtime.h>

#include <type_traits>

#include "core/semiring_ops.hpp"

namespace spmv::cuda {

// First i in [0, n) with a[i] >= value (n when none): row offsets are non-decreasing.
template <class Index>
__device__ __forceinline__ Index lower_bound_index(const Index* a, Index n, long long value) {
  Index lo = 0, hi = n;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (static_cast<long long>(a[mid]) < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// CSR-stream reduction (Greathouse & Daga, SC'14): rows [first_row, first_row + n_rows) whose
// products are in s[row_ptr[r] - base, row_ptr[r + 1] - base). Following Daga & Greathouse, HiPC'15,
// a power-of-two group of `lanes` threads shares a row when the block holds fewer rows than
// threads (lanes = Threads / n_rows rounded down, at most a warp, reduced with shuffles); with many
// rows each thread reduces whole rows serially. emit(row, sum) runs once per row on one thread.
// Every lane of every warp runs the same number of shuffles, so the full-warp masks are valid.
// Ops: the semiring whose add combines the products, each row folded from its zero (an empty row gives
// the zero); plus-times by default (the SpMV's sum).
template <int Threads, class Ops = void, class Value, class Index, class Emit>
__device__ __forceinline__ void reduce_rows_in_shared(const Value* s, const Index* row_ptr, Index first_row,
                                                      Index n_rows, long long base, Emit&& emit) {
  static_assert(Threads % 32 == 0, "whole warps only");
  using Add = std::conditional_t<std::is_void_v<Ops>, semiring_ops::PlusTimes<Value>, Ops>;
  int lanes = 1;
  while (lanes < 32 && n_rows <= Threads / (2 * lanes)) lanes *= 2;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int group = static_cast<int>(threadIdx.x) / lanes;
  const int groups = Threads / lanes;
  for (Index pass = 0; pass < n_rows; pass += groups) {
    const Index local = pass + group;
    const Index row = first_row + local;
    Value sum = Add::zero();
    if (local < n_rows) {
      const long long end = static_cast<long long>(row_ptr[row + 1]) - base;
      for (long long k = static_cast<long long>(row_ptr[row]) - base + lane; k < end; k += lanes)
        sum = Add::add(sum, s[k]);
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      sum = Add::add(sum, __shfl_xor_sync(0xffffffffu, sum, offset));
    if (lane == 0 && local < n_rows) emit(row, sum);
  }
}

}  // namespace spmv::cuda
