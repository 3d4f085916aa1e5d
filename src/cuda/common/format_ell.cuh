#pragma once
// Device ELLPACK storage, its conversion from CSR on the device, and the one-thread-per-row product:
// shared by ELL / ELL-R / ELLR-T (format_ell.cu) and the ELL part of HYB (format_hyb.cu).
#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv::cuda::format {

// ELL arrays in grouped column-major order: slot k of row r sits at
//   (k / group) * (rows * group) + r * group + k % group.
// group = 1 is Bell & Garland's column-major ELL (SC'09, ELLPACK format): thread r reading its k-th slot
// sits next to thread r + 1 reading its own, so a warp's load is one contiguous segment. group = T is the
// ELLR-T layout: the T threads of a row read T adjacent slots, so a warp's load stays one segment too.
// Padding (slots past a row's end): column -1, value 0, always after the row's stored entries.
template <class Value, class Index>
struct EllStorage {
  Index rows = 0;
  Index width = 0;  // slots per row, a multiple of `group`
  int group = 1;
  DeviceBuffer<Index> col_idx;  // rows * width
  DeviceBuffer<Value> values;   // rows * width

  std::size_t bytes() const { return col_idx.bytes() + values.bytes(); }
};

// What the ELL family's refusals suggest instead.
inline constexpr const char* kEllAlternatives = "hyb, sell or a CSR algorithm";

// ELL width: the longest row, rounded up to a multiple of `group`. Refuses (Unsupported, naming `format`) by the
// padding rule before anything is allocated. Shared by the ELL SpMV (format_ell.cu) and the semiring product's
// ELL and ELL-R (semiring_ell.cu), so both refuse the same matrices with the same message.
template <class Value, class Index>
Index checked_ell_width(const CsrView<Value, Index>& a, const char* format, Index group, const Options& options,
                        cudaStream_t stream) {
  const RowStatistics stats = row_statistics(a, stream);
  const std::int64_t width = (stats.max + group - 1) / group * group;  // a multiple of the group
  format::check_padded_size<Index>(format, static_cast<long double>(a.rows) * static_cast<long double>(width),
                                   a.nnz, options, kEllAlternatives, sizeof(Index) + sizeof(Value));
  return static_cast<Index>(width);
}

// Thread per row: writes the row's first min(length, width) entries and pads the rest, so every slot is
// written exactly once (no memset). Writes of one k across a warp are contiguous; the reads walk each
// row, which is plan-time work bounded by the padding rule (width * rows <= max_padding * nnz + slack).
template <class Value, class Index>
__global__ void fill_ell_kernel(CsrView<Value, Index> a, Index width, int group, Index* __restrict__ col_idx,
                                Value* __restrict__ values) {
  const Index group_stride = a.rows * static_cast<Index>(group);
  for (long long i = global_thread(); i < a.rows; i += grid_threads()) {
    const auto r = static_cast<Index>(i);
    const Index begin = a.row_ptr[r];
    const Index length = a.row_ptr[r + 1] - begin;
    const Index stored = length < width ? length : width;
    for (Index k = 0; k < width; ++k) {
      const Index slot = (k / group) * group_stride + r * group + k % group;
      col_idx[slot] = k < stored ? a.col_idx[begin + k] : Index(-1);
      values[slot] = k < stored ? a.values[begin + k] : Value(0);
    }
  }
}

// Builds the ELL arrays of `width` slots per row (width a multiple of group; rows * width already checked
// against the padding rule and the Index range by the caller).
template <class Value, class Index>
EllStorage<Value, Index> build_ell(const CsrView<Value, Index>& a, Index width, int group, cudaStream_t stream) {
  EllStorage<Value, Index> ell;
  ell.rows = a.rows;
  ell.width = width;
  ell.group = group;
  const auto slots = static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(width);
  ell.col_idx = DeviceBuffer<Index>(slots);
  ell.values = DeviceBuffer<Value>(slots);
  if (slots > 0) {
    fill_ell_kernel<<<grid_for(a.rows, kPlanBlock), kPlanBlock, 0, stream>>>(a, width, group, ell.col_idx.data(),
                                                                             ell.values.data());
    SPMV_CHECK_LAUNCH("fill_ell_kernel");
  }
  return ell;
}

// One thread per row over a group-1 ELL (Bell & Garland SC'09, ELL kernel). kStopAtLength = ELLPACK-R
// (Vázquez et al. 2011): each thread reads its row's length and stops there, skipping the padding loads;
// otherwise the thread walks all `width` slots and skips padding by its -1 column. Loads are coalesced
// along rows; kSlotUnroll slots per thread are in flight (strided_row_dot).
template <bool kStopAtLength, class Value, class Index>
__global__ void __launch_bounds__(kMaxBlockSize)
    ell_kernel(Index rows, Index width, const Index* __restrict__ col_idx, const Value* __restrict__ values,
               const Index* __restrict__ row_length, Value alpha, const Value* __restrict__ x, Value beta,
               Value* __restrict__ y) {
  for (long long i = global_thread(); i < rows; i += grid_threads()) {
    const auto r = static_cast<Index>(i);
    const Index count = kStopAtLength ? load_stream(row_length + r) : width;
    const Value sum = strided_row_dot<!kStopAtLength>(col_idx, values, r, rows, count, x);
    y[r] = axpby(alpha, sum, beta, y, r);
  }
}

// y = alpha * A_ell * x + beta * y; row_length != nullptr selects the ELLPACK-R kernel.
template <class Value, class Index>
void launch_ell_product(const EllStorage<Value, Index>& ell, const Index* row_length, int block, Value alpha,
                        const Value* x, Value beta, Value* y, cudaStream_t stream) {
  const unsigned grid = grid_for(ell.rows, block);
  if (row_length) {
    ell_kernel<true><<<grid, block, 0, stream>>>(ell.rows, ell.width, ell.col_idx.data(), ell.values.data(),
                                                 row_length, alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("ell_kernel<stop at length>");
  } else {
    ell_kernel<false><<<grid, block, 0, stream>>>(ell.rows, ell.width, ell.col_idx.data(), ell.values.data(),
                                                  row_length, alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("ell_kernel");
  }
}

}  // namespace spmv::cuda::format
