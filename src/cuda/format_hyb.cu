// HYB (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, hybrid ELL/COO format): the first K entries of every row in ELL (column-major, one
// thread per row), the rest in COO (a segmented reduction over the overflow entries). The ELL kernel writes
// y = alpha * A_ell * x + beta * y for every row, then the COO part adds alpha * A_coo * x to the rows that
// overflow (format_coo.cuh, accumulate mode): two launches of deterministic sums, no atomics.
//
// Conversion on the device at plan time: row-length histogram (cub::DeviceHistogram) -> K, ELL part
// (format_ell.cuh), overflow counts -> exclusive scan (cub::DeviceScan) -> COO part, scattered entry by
// entry from the expanded row indices (so one huge row is split across threads like any other).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "cuda/algorithms.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data): the ELL kernel and the COO epilogue, 256 threads per block, a first value
// to be tuned on the H100/H200.
struct HybPolicy {
  int block_size;
};
constexpr HybPolicy hyb_policy(int /*value_bytes*/) { return {256}; }

// Bell & Garland's split, with CUSP's constants (the same as the host to_hyb): the ELL part only pays off
// when enough rows fill a column of it. ELL is about kRelativeSpeed times faster per entry than COO, so a
// column is worth it when at least rows / kRelativeSpeed rows fill it, and at least kBreakevenRows rows,
// below which a column cannot occupy the GPU.
constexpr std::int64_t kBreakevenRows = 4096;
constexpr std::int64_t kRelativeSpeed = 3;

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
  format::run_cub_at_plan_time(
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
  for (long long i = format::global_thread(); i <= rows; i += format::grid_threads()) {
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
  for (long long k = format::global_thread(); k < a.nnz; k += format::grid_threads()) {
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
class Hyb final : public CudaAlgorithm<Value, Index> {
 public:
  Hyb(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : block_(format::resolve_block_size(options.block_size, hyb_policy(sizeof(Value)).block_size, "hyb")),
        width_from_rule_(options.hyb_ell_width < 0) {
    const RowStatistics stats = row_statistics(a, stream);
    // An explicit width above the longest row would only add all-padding columns: lowered to it (as on the
    // host).
    const Index width = width_from_rule_ ? bell_garland_width(a, stats.max, stream)
                                         : static_cast<Index>(std::min<std::int64_t>(options.hyb_ell_width, stats.max));
    format::check_padded_size<Index>("HYB's ELL part", static_cast<long double>(a.rows) * static_cast<long double>(width),
                                     a.nnz, options, "a smaller hyb_ell_width, or -1 for the Bell & Garland rule",
                                     sizeof(Index) + sizeof(Value));
    ell_ = format::build_ell(a, width, 1, stream);

    DeviceBuffer<Index> coo_ptr(static_cast<std::size_t>(a.rows) + 1);
    overflow_counts_kernel<<<grid_for(static_cast<std::int64_t>(a.rows) + 1, format::kPlanBlock), format::kPlanBlock,
                             0, stream>>>(a.row_ptr, a.rows, width, coo_ptr.data());
    SPMV_CHECK_LAUNCH("overflow_counts_kernel");
    format::run_cub_at_plan_time(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveSum(temp, bytes, coo_ptr.data(), static_cast<std::int64_t>(a.rows) + 1,
                                               stream);
        },
        stream);
    coo_nnz_ = format::read_device_value(coo_ptr.data() + a.rows, stream);  // <= nnz: fits Index
    if (coo_nnz_ > 0) {
      const auto n = static_cast<std::size_t>(coo_nnz_);
      coo_row_ = DeviceBuffer<Index>(n);
      coo_col_ = DeviceBuffer<Index>(n);
      coo_val_ = DeviceBuffer<Value>(n);
      {
        DeviceBuffer<Index> row_of(static_cast<std::size_t>(a.nnz));
        format::expand_row_indices(a.row_ptr, a.rows, a.nnz, row_of.data(), stream);
        scatter_overflow_kernel<<<grid_for(a.nnz, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
            a, row_of.data(), coo_ptr.data(), width, coo_row_.data(), coo_col_.data(), coo_val_.data());
        SPMV_CHECK_LAUNCH("scatter_overflow_kernel");
        DeviceBuffer<Index> partition(static_cast<std::size_t>(a.rows));
        const auto runs = static_cast<Index>(format::partition_rows(a.row_ptr, a.rows, width, partition.data(), stream));
        overflow_rows_ = DeviceBuffer<Index>(static_cast<std::size_t>(runs));
        SPMV_CUDA_CHECK(cudaMemcpyAsync(overflow_rows_.data(), partition.data(), overflow_rows_.bytes(),
                                        cudaMemcpyDeviceToDevice, stream));
        SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // row_of and partition are freed here
      }
      coo_ = format::CooProduct<Value, Index>(coo_row_.data(), coo_col_.data(), coo_val_.data(), coo_nnz_,
                                              overflow_rows_.data(), static_cast<Index>(overflow_rows_.size()),
                                              Index(0), /*accumulate=*/true, block_);
    }
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // coo_ptr is freed on return
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    format::launch_ell_product(ell_, static_cast<const Index*>(nullptr), block_, alpha, x, beta, y, stream);
    if (coo_nnz_ > 0) coo_.apply(alpha, x, beta, y, stream);
  }
  bool writes_workspace() const override { return coo_nnz_ > 0; }  // the COO part's sums and CUB scratch
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " ell_width=" + std::to_string(ell_.width) +
           (width_from_rule_ ? " (Bell & Garland rule)" : " (hyb_ell_width)") +
           " coo_entries=" + std::to_string(coo_nnz_) + " coo_rows=" + std::to_string(overflow_rows_.size());
  }
  std::size_t extra_bytes() const override {
    return ell_.bytes() + coo_row_.bytes() + coo_col_.bytes() + coo_val_.bytes() + overflow_rows_.bytes() +
           coo_.bytes();
  }

 private:
  int block_;
  bool width_from_rule_;
  format::EllStorage<Value, Index> ell_;
  Index coo_nnz_ = 0;
  DeviceBuffer<Index> coo_row_;        // COO part, sorted by row
  DeviceBuffer<Index> coo_col_;
  DeviceBuffer<Value> coo_val_;
  DeviceBuffer<Index> overflow_rows_;  // rows longer than the ELL width, ascending
  format::CooProduct<Value, Index> coo_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hyb(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                    cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Hyb, op);
  return std::make_unique<Hyb<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_hyb)

}  // namespace spmv::cuda
