#pragma once
// Private: ELLR-T (Vázquez, Fernández & Garzón, "Automatic tuning of the sparse matrix vector product on GPUs based
// on the ELLR-T approach", Parallel Computing 38, 2012; format_ell.cu has the design): its launch policy, its
// choice of T, its layout (the group-T ELL with each row's length, converted on the device) and its row walk,
// generic over the semiring (Ops: zero, add and mul of core/semiring_ops.hpp) and over what a finished row writes
// (Output, common/row_output.cuh), so that the SpMV (format_ell.cu's EllRVector) and the semiring product
// (semiring_ellr_vector.cu) are one kernel body with one layout and one rule.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/common/format_common.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/row_statistics.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/error.hpp"

namespace spmv::cuda::ellr_vector {

// T is chosen so that each of a row's T threads takes about entries_per_lane entries: fewer and the log2(T) shuffle
// steps dominate, more and long rows serialise on too few lanes (the 2012 paper tunes T per matrix and finds it
// grows with the row length). First value, to be tuned on the H100/H200.
struct Policy {
  int block_size;
  double entries_per_lane;
};
constexpr Policy policy_for(int /*value_bytes*/) { return {256, 4.0}; }

// Options.subwarp overrides (a power of two in [1, 32], else InvalidArgument); otherwise the smallest T in
// {2, 4, 8, 16, 32} giving each thread at most entries_per_lane of an average row.
inline int choose_threads_per_row(double mean, int subwarp, int value_bytes) {
  if (subwarp > 0) {
    if (subwarp > 32 || (subwarp & (subwarp - 1)) != 0)
      throw InvalidArgument("ellr-vector: subwarp = " + std::to_string(subwarp) +
                            " is not a power of two in [1, 32] (or 0 to choose from the mean row length)");
    return subwarp;
  }
  const double per_lane = policy_for(value_bytes).entries_per_lane;
  int t = 2;
  while (t < 32 && t * per_lane < mean) t *= 2;
  return t;
}

// The layout a product walks and its launch: Options.block_size and subwarp where set; refused (Unsupported, before
// the ELL is allocated) beyond the padding rule (Options.max_padding).
template <class Value, class Index>
struct Layout {
  int block = 0;
  int threads_per_row = 2;
  format::EllStorage<Value, Index> ell;
  DeviceBuffer<Index> row_length;

  Layout(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : block(format::resolve_block_size(options.block_size, policy_for(sizeof(Value)).block_size, "ellr-vector")) {
    const RowStatistics stats = row_statistics(a, stream);
    threads_per_row = choose_threads_per_row(stats.mean, options.subwarp, sizeof(Value));
    const Index group = threads_per_row;
    const std::int64_t width = (stats.max + group - 1) / group * group;
    format::check_padded_size<Index>("ELLR-T", static_cast<long double>(a.rows) * static_cast<long double>(width),
                                     a.nnz, options, format::kEllAlternatives, sizeof(Index) + sizeof(Value));
    ell = format::build_ell(a, static_cast<Index>(width), threads_per_row, stream);
    row_length = format::row_lengths(a.row_ptr, a.rows, stream);
  }

  std::string policy() const {
    return "block=" + std::to_string(block) + " threads_per_row=" + std::to_string(threads_per_row) +
           " width=" + std::to_string(ell.width) + " unroll=" + std::to_string(format::kSlotUnroll);
  }
  std::size_t bytes() const { return ell.bytes() + row_length.bytes(); }
  // Blocks of `block` threads, T a row.
  unsigned grid(int t) const { return grid_for(static_cast<std::int64_t>(ell.rows) * t, block); }
};

// Calls f(std::integral_constant<int, T>) for T = threads_per_row, one of the compiled 1, 2, 4, 8, 16, 32.
template <class F>
void with_threads_per_row(int threads_per_row, F&& f) {
  switch (threads_per_row) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    case 16: f(std::integral_constant<int, 16>{}); break;
    default: f(std::integral_constant<int, 32>{}); break;
  }
}

// T threads per row (T a power of two <= 32, so a row's threads sit in one warp). Thread t of row r takes the row's
// slots t, t + T, t + 2T, ... over the group-T layout, where they are adjacent to the slots of the row's other
// threads: a warp's step is one contiguous segment (32 slots). Each thread folds its slots from Ops::zero() and
// stops at the row's length (ELLPACK-R), so padding (column -1, past the length) never enters a row and an empty row
// gives the semiring's zero; the T partial results meet with Ops::add in a butterfly of log2(T) shuffles. The loop
// over row groups is uniform per warp (blockDim is a multiple of 32), so every lane reaches the shuffles.
template <int T, class Ops, class Value, class Index, class Output>
__device__ __forceinline__ void rows(Index rows, const Index* __restrict__ col_idx, const Value* __restrict__ values,
                                     const Index* __restrict__ row_length, const Value* __restrict__ x,
                                     Value* __restrict__ y, const Output& output) {
  static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0, "T must be a power of two <= 32");
  constexpr int kRowsPerWarp = 32 / T;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int sub = lane & (T - 1);  // this thread's place among its row's T threads
  const long long warp = format::global_thread() / 32;
  const long long warps = format::grid_threads() / 32;
  const Index step = rows * T;  // between a thread's consecutive slots
  for (long long first_row = warp * kRowsPerWarp; first_row < rows; first_row += warps * kRowsPerWarp) {
    const long long row = first_row + lane / T;
    Value sum = Ops::zero();
    if (row < rows) {
      const auto r = static_cast<Index>(row);
      const Index length = format::load_stream(row_length + r);
      const Index count = length > sub ? (length - sub + T - 1) / T : 0;  // slots t + j*T < length
      sum = format::strided_row_fold<false, Ops>(col_idx, values, r * T + sub, step, count, x);
    }
#pragma unroll
    for (int offset = T / 2; offset > 0; offset /= 2) sum = Ops::add(sum, __shfl_xor_sync(0xffffffffu, sum, offset));
    if (row < rows && sub == 0) output(y, row, sum);
  }
}

}  // namespace spmv::cuda::ellr_vector
