#pragma once
// Device HYB storage and its conversion from CSR on the device (Bell & Garland, SC'09, hybrid ELL/COO format: the
// first K entries of every row in ELL, the rest in COO sorted by row), shared by the HYB SpMV (format_hyb.cu) and
// the semiring product's HYB (semiring_hyb.cu), so both hold the same split and refuse the same matrices.
//
// Conversion at plan time: row-length histogram (cub::DeviceHistogram) -> K, ELL part (format_ell.cuh), overflow
// counts -> exclusive scan (cub::DeviceScan) -> COO part, scattered entry by entry from the expanded row indices
// (so one huge row is split across threads like any other), and the rows that overflow, ascending.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <vector>

#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv::cuda::format {

// Bell & Garland's split, with CUSP's constants (the same as the host to_hyb): the ELL part only pays off
// when enough rows fill a column of it. ELL is about kRelativeSpeed times faster per entry than COO, so a
// column is worth it when at least rows / kRelativeSpeed rows fill it, and at least kBreakevenRows rows,
// below which a column cannot occupy the GPU.
inline constexpr std::int64_t kBreakevenRows = 4096;
inline constexpr std::int64_t kRelativeSpeed = 3;

template <class Index>
struct ClampedRowLength {
  const Index* row_ptr;
  Index cap;
  __device__ int operator()(Index r) const {
    const Index length = row_ptr[r + 1] - row_ptr[r];
    return static_cast<int>(length < cap ? length : cap);
  }
};

// K = the largest K such that at least max(4096, rows / 3) rows hold K or more entries (0 when none does:
// matrices of fewer than 4096 rows go entirely to COO). Those rows hold at least K * threshold entries, so
// K <= nnz / threshold: the histogram of lengths clamped to that bound has few bins whatever the longest row.
template <class Value, class Index>
Index bell_garland_width(const CsrView<Value, Index>& a, std::int64_t longest, cudaStream_t stream) {
  const std::int64_t rows = a.rows;
  const std::int64_t threshold = std::max(kBreakevenRows, (rows + kRelativeSpeed - 1) / kRelativeSpeed);
  if (rows < threshold) return 0;
  const std::int64_t cap = std::min<std::int64_t>(longest, static_cast<std::int64_t>(a.nnz) / threshold);
  if (cap == 0) return 0;
  if (cap > INT_MAX - 2)
    throw Unsupported("HYB: the Bell & Garland rule would need a histogram of " + std::to_string(cap + 1) +
                      " row lengths; give Options.hyb_ell_width explicitly");
  const int bins = static_cast<int>(cap) + 1;  // bin b: rows of length b; the last also holds longer rows
  DeviceBuffer<unsigned long long> histogram(static_cast<std::size_t>(bins));
  const thrust::transform_iterator<ClampedRowLength<Index>, thrust::counting_iterator<Index>> lengths(
      thrust::counting_iterator<Index>(0), ClampedRowLength<Index>{a.row_ptr, static_cast<Index>(cap)});
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceHistogram::HistogramEven(temp, bytes, lengths, histogram.data(), bins + 1, 0, bins, a.rows,
                                                   stream);
      },
      stream);
  const std::vector<unsigned long long> counts = histogram.to_host(stream);
  std::int64_t at_least = 0;  // rows holding k or more entries
  for (std::int64_t k = cap; k >= 1; --k) {
    at_least += static_cast<std::int64_t>(counts[static_cast<std::size_t>(k)]);
    if (at_least >= threshold) return static_cast<Index>(k);
  }
  return 0;
}

// overflow[r] = max(length - width, 0) for r < rows; overflow[rows] = 0, so the exclusive scan ends with the
// total.
template <class Index>
__global__ void overflow_counts_kernel(const Index* __restrict__ row_ptr, Index rows, Index width,
                                       Index* __restrict__ overflow) {
  for (long long i = global_thread(); i <= rows; i += grid_threads()) {
    const Index extra = i < rows ? row_ptr[i + 1] - row_ptr[i] - width : Index(0);
    overflow[i] = extra > 0 ? extra : Index(0);
  }
}

// Thread per entry: entry k, at position p of its row, goes to COO slot coo_ptr[row] + p - width when
// p >= width. Keeps the row's order, so the COO part is sorted by row.
template <class Value, class Index>
__global__ void scatter_overflow_kernel(CsrView<Value, Index> a, const Index* __restrict__ row_of,
                                        const Index* __restrict__ coo_ptr, Index width, Index* __restrict__ coo_row,
                                        Index* __restrict__ coo_col, Value* __restrict__ coo_val) {
  for (long long k = global_thread(); k < a.nnz; k += grid_threads()) {
    const Index row = row_of[k];
    const Index p = static_cast<Index>(k) - a.row_ptr[row];
    if (p < width) continue;
    const Index dst = coo_ptr[row] + (p - width);
    coo_row[dst] = row;
    coo_col[dst] = a.col_idx[k];
    coo_val[dst] = a.values[k];
  }
}

template <class Value, class Index>
struct HybStorage {
  bool width_from_rule = true;         // K by the Bell & Garland rule, else Options::hyb_ell_width
  EllStorage<Value, Index> ell;        // every row's first K entries
  Index coo_nnz = 0;
  DeviceBuffer<Index> coo_row;         // the rest, sorted by row (each row's in CSR's order)
  DeviceBuffer<Index> coo_col;
  DeviceBuffer<Value> coo_val;
  DeviceBuffer<Index> overflow_rows;   // rows longer than K, ascending

  std::size_t bytes() const {
    return ell.bytes() + coo_row.bytes() + coo_col.bytes() + coo_val.bytes() + overflow_rows.bytes();
  }
};

// Converts `a` (rows, nnz > 0) with Options::hyb_ell_width (< 0: the Bell & Garland rule); refuses (Unsupported)
// by the padding rule on the ELL part before it is allocated. Synchronises `stream`.
template <class Value, class Index>
HybStorage<Value, Index> build_hyb(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream) {
  HybStorage<Value, Index> m;
  m.width_from_rule = options.hyb_ell_width < 0;
  const RowStatistics stats = row_statistics(a, stream);
  // An explicit width above the longest row would only add all-padding columns: lowered to it (as on the
  // host).
  const Index width = m.width_from_rule ? bell_garland_width(a, stats.max, stream)
                                       : static_cast<Index>(std::min<std::int64_t>(options.hyb_ell_width, stats.max));
  check_padded_size<Index>("HYB's ELL part", static_cast<long double>(a.rows) * static_cast<long double>(width), a.nnz,
                           options, "a smaller hyb_ell_width, or -1 for the Bell & Garland rule",
                           sizeof(Index) + sizeof(Value));
  m.ell = build_ell(a, width, 1, stream);

  DeviceBuffer<Index> coo_ptr(static_cast<std::size_t>(a.rows) + 1);
  overflow_counts_kernel<<<grid_for(static_cast<std::int64_t>(a.rows) + 1, kPlanBlock), kPlanBlock, 0, stream>>>(
      a.row_ptr, a.rows, width, coo_ptr.data());
  SPMV_CHECK_LAUNCH("overflow_counts_kernel");
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, coo_ptr.data(), static_cast<std::int64_t>(a.rows) + 1,
                                             stream);
      },
      stream);
  m.coo_nnz = read_device_value(coo_ptr.data() + a.rows, stream);  // <= nnz: fits Index
  if (m.coo_nnz > 0) {
    const auto n = static_cast<std::size_t>(m.coo_nnz);
    m.coo_row = DeviceBuffer<Index>(n);
    m.coo_col = DeviceBuffer<Index>(n);
    m.coo_val = DeviceBuffer<Value>(n);
    {
      DeviceBuffer<Index> row_of(static_cast<std::size_t>(a.nnz));
      expand_row_indices(a.row_ptr, a.rows, a.nnz, row_of.data(), stream);
      scatter_overflow_kernel<<<grid_for(a.nnz, kPlanBlock), kPlanBlock, 0, stream>>>(
          a, row_of.data(), coo_ptr.data(), width, m.coo_row.data(), m.coo_col.data(), m.coo_val.data());
      SPMV_CHECK_LAUNCH("scatter_overflow_kernel");
      DeviceBuffer<Index> partition(static_cast<std::size_t>(a.rows));
      const auto runs = static_cast<Index>(partition_rows(a.row_ptr, a.rows, width, partition.data(), stream));
      m.overflow_rows = DeviceBuffer<Index>(static_cast<std::size_t>(runs));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(m.overflow_rows.data(), partition.data(), m.overflow_rows.bytes(),
                                      cudaMemcpyDeviceToDevice, stream));
      SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // row_of and partition are freed here
    }
  }
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // coo_ptr is freed on return
  return m;
}

}  // namespace spmv::cuda::format
