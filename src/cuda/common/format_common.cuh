#pragma once
// Shared pieces of the format-backed CUDA algorithms (COO, ELL, ELL-R, ELLR-T, DIA, HYB, SELL-C-sigma):
// the refusal rule for padded formats (the same as the host conversions, spmv/formats.hpp), block-size
// validation, plan-time helpers, and the inner loop over a row's padded slots.
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "core/semiring_ops.hpp"
#include "cuda/common/launch.cuh"
#include "cuda/common/stored_value.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/operator.hpp"

namespace spmv::cuda::format {

// Largest block the kernels accept; they are compiled with __launch_bounds__(kMaxBlockSize) so that any
// Options.block_size the benchmark sweeps (32..1024) launches.
inline constexpr int kMaxBlockSize = 1024;

// Slots each thread loads before it multiplies: 4 independent (column, value) pairs per thread keep
// enough bytes in flight on Hopper for column-major walks whose per-thread trip counts are short.
// First value, to be tuned on the H100/H200.
inline constexpr int kSlotUnroll = 4;

// Options.block_size <= 0: the policy's value. Otherwise a whole number of warps, because the sub-warp
// kernels keep every warp in step for their shuffles and all kernels here share one rule.
inline int resolve_block_size(int requested, int policy_block, const char* algorithm) {
  if (requested <= 0) return policy_block;
  if (requested % 32 != 0 || requested > kMaxBlockSize)
    throw InvalidArgument(std::string(algorithm) + ": block_size = " + std::to_string(requested) +
                          " is not a multiple of 32 in [32, " + std::to_string(kMaxBlockSize) + "]");
  return requested;
}

inline std::string format_number(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

inline double max_padding_of(const Options& options) {
  if (std::isnan(options.max_padding)) throw InvalidArgument("max_padding is NaN; give a factor such as 3.0");
  return options.max_padding > 0 ? options.max_padding : kDefaultMaxPadding;
}

// The refusal rule of every padded format, checked BEFORE the format's arrays are allocated: more than
// max_padding * nnz + kPaddingSlack stored slots (the slack lets tiny matrices through), more slots
// than Index can address (kernels compute slot positions in Index), or slots * bytes_per_slot beyond
// the device memory free now (MemoryLimitExceeded, an Unsupported, so Auto's tries skip the format and
// log why). `slots` is long double because rows * width can overflow int64 for absurd inputs.
template <class Index>
void check_padded_size(const char* format, long double slots, std::int64_t nnz, const Options& options,
                       const char* alternatives, std::size_t bytes_per_slot) {
  const double allowed = max_padding_of(options);
  const long double limit = static_cast<long double>(allowed) * static_cast<long double>(nnz) + kPaddingSlack;
  if (slots > limit)
    throw Unsupported(std::string(format) + " would store " + format_number("%.3g", static_cast<double>(slots)) +
                      " slots for " + format_number("%.3g", static_cast<double>(nnz)) +
                      " nonzeros (padding factor " +
                      format_number("%.3g", static_cast<double>(slots / static_cast<long double>(nnz))) +
                      " > allowed " + format_number("%g", allowed) + ", plus " + std::to_string(kPaddingSlack) +
                      " slots of slack); choose " + alternatives);
  if (slots > static_cast<long double>(std::numeric_limits<Index>::max()))
    throw Unsupported(std::string(format) + " would store " + format_number("%.3g", static_cast<double>(slots)) +
                      " slots, more than a " + std::to_string(8 * sizeof(Index)) +
                      "-bit index can address; use 64-bit indices or choose " + alternatives);
  require_device_memory(std::string(format) + "'s padded arrays (" + format_number("%.3g", static_cast<double>(slots)) +
                            " slots)",
                        static_cast<double>(slots) * static_cast<double>(bytes_per_slot));
}

// Plan time only: copies one value from the device and waits for it.
template <class T>
T read_device_value(const T* d_value, cudaStream_t stream) {
  T value{};
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&value, d_value, sizeof(T), cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

// Plan time only: runs a CUB device algorithm `call(void* temp, std::size_t& bytes)` once to size its
// temporary storage and once to do the work, then waits, so the temporary can be freed on return.
template <class Call>
void run_cub_at_plan_time(Call&& call, cudaStream_t stream) {
  std::size_t bytes = 0;
  SPMV_CUDA_CHECK(call(nullptr, bytes));
  DeviceBuffer<unsigned char> temp(bytes);
  SPMV_CUDA_CHECK(call(temp.data(), bytes));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// --- device side -------------------------------------------------------------------------------------

// Grid-stride loop positions in 64 bits: `i + stride` would overflow a 32-bit Index near 2^31.
__device__ __forceinline__ long long global_thread() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long grid_threads() { return static_cast<long long>(gridDim.x) * blockDim.x; }

// Matrix arrays are read once per product: streaming loads (evict-first) leave L2 to x, which is reused.
template <class T>
__device__ __forceinline__ T load_stream(const T* p) {
  return __ldcs(p);
}

// ⊕_{i < count} val[s_i] ⊗ x[col[s_i]] with s_i = first + i * step, from Ops::zero(), in order of i (the
// row's order, as CSR folds it). Ops: a semiring's add, multiply and zero on compute_t<Value>
// (core/semiring_ops.hpp); strided_row_dot below is plus-times, the SpMV's sum. The loads of kSlotUnroll
// slots are issued before their products so that several independent loads per thread are in flight.
// kPadded: slots with column -1 are padding and skipped without reading x (so padding never contributes,
// even when x holds Inf or NaN, and never enters a semiring's row as 0 ⊗ x_j). The caller guarantees
// first + (count - 1) * step is a valid slot, so no position computed here overflows Index.
template <bool kPadded, class Ops, class Value, class Index>
__device__ __forceinline__ compute_t<Value> strided_row_fold(const Index* __restrict__ col,
                                                             const Value* __restrict__ val, Index first, Index step,
                                                             Index count, const compute_t<Value>* __restrict__ x) {
  using Real = compute_t<Value>;
  Real sum = Ops::zero();
  Index i = 0;
  for (; i + kSlotUnroll <= count; i += kSlotUnroll) {
    Index c[kSlotUnroll];
    Value v[kSlotUnroll];
#pragma unroll
    for (int u = 0; u < kSlotUnroll; ++u) {
      const Index slot = first + (i + u) * step;
      c[u] = load_stream(col + slot);
      v[u] = load_stream(val + slot);
    }
    Real xv[kSlotUnroll];  // gathered in a pass of their own so that the loads are not serialised by FMAs
#pragma unroll
    for (int u = 0; u < kSlotUnroll; ++u) xv[u] = !kPadded || c[u] >= 0 ? __ldg(x + c[u]) : Real(0);
#pragma unroll
    for (int u = 0; u < kSlotUnroll; ++u)
      if (!kPadded || c[u] >= 0) sum = Ops::add(sum, Ops::mul(widen(v[u]), xv[u]));
  }
  for (; i < count; ++i) {
    const Index slot = first + i * step;
    const Index c = load_stream(col + slot);
    const Value v = load_stream(val + slot);
    if (!kPadded || c >= 0) sum = Ops::add(sum, Ops::mul(widen(v), __ldg(x + c)));
  }
  return sum;
}

// sum_{i < count} val[s_i] * x[col[s_i]]: strided_row_fold over plus-times (sum += v * x, contracted to FMA).
template <bool kPadded, class Value, class Index>
__device__ __forceinline__ compute_t<Value> strided_row_dot(const Index* __restrict__ col,
                                                            const Value* __restrict__ val, Index first, Index step,
                                                            Index count, const compute_t<Value>* __restrict__ x) {
  return strided_row_fold<kPadded, semiring_ops::PlusTimes<compute_t<Value>>>(col, val, first, step, count, x);
}

// length[r] = row_ptr[r + 1] - row_ptr[r].
template <class Index>
__global__ void row_lengths_kernel(const Index* __restrict__ row_ptr, Index rows, Index* __restrict__ length) {
  for (long long r = global_thread(); r < rows; r += grid_threads()) length[r] = row_ptr[r + 1] - row_ptr[r];
}

inline constexpr int kPlanBlock = 256;  // plan-time conversion kernels: not performance-critical

template <class Index>
DeviceBuffer<Index> row_lengths(const Index* row_ptr, Index rows, cudaStream_t stream) {
  DeviceBuffer<Index> length(static_cast<std::size_t>(rows));
  row_lengths_kernel<<<grid_for(rows, kPlanBlock), kPlanBlock, 0, stream>>>(row_ptr, rows, length.data());
  SPMV_CHECK_LAUNCH("row_lengths_kernel");
  return length;
}

}  // namespace spmv::cuda::format
