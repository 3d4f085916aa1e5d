// Row-length statistics of a device CSR matrix, computed on the device (no host copy of row_ptr):
// what Algorithm::Auto and several fixed rules (coop, subwarp width) need.
#include <cub/block/block_reduce.cuh>
#include <cuda/functional>

#include <cmath>
#include <cstdint>

#include "cuda/common/launch.cuh"
#include "cuda/row_statistics.cuh"
#include "cuda/common/stored_value.cuh"

namespace spmv::cuda {
namespace {

constexpr int kBlock = 256;

struct Partial {
  double sum_squares;
  double sum_spans;
  unsigned long long max_length;
  unsigned long long empty_rows;
};

template <class Index>
__global__ void __launch_bounds__(kBlock)
    row_statistics_kernel(const Index* row_ptr, const Index* col_idx, Index rows, Index nnz, Partial* out) {
  double sum_squares = 0, sum_spans = 0;
  unsigned long long max_length = 0, empty = 0;
  for (Index r = blockIdx.x * Index(kBlock) + threadIdx.x; r < rows; r += Index(gridDim.x) * kBlock) {
    const Index begin = row_ptr[r], end = row_ptr[r + 1];
    const auto len = static_cast<unsigned long long>(end - begin);
    sum_squares += double(len) * double(len);
    // Only inside [0, nnz): a malformed view must not send this read out of the array.
    if (begin >= 0 && begin < end && end <= nnz) sum_spans += fabs(double(col_idx[end - 1]) - double(col_idx[begin]));
    max_length = len > max_length ? len : max_length;
    empty += len == 0;
  }
  using Sum = cub::BlockReduce<double, kBlock>;
  using Max = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ union {
    typename Sum::TempStorage sum;
    typename Max::TempStorage max;
  } temp;
  const double block_sum = Sum(temp.sum).Sum(sum_squares);
  __syncthreads();
  const double block_spans = Sum(temp.sum).Sum(sum_spans);
  __syncthreads();
  const unsigned long long block_max = Max(temp.max).Reduce(max_length, ::cuda::maximum<>{});
  __syncthreads();
  const unsigned long long block_empty = Max(temp.max).Sum(empty);
  if (threadIdx.x == 0) {
    atomicAdd(&out->sum_squares, block_sum);
    atomicAdd(&out->sum_spans, block_spans);
    atomicMax(&out->max_length, block_max);
    atomicAdd(&out->empty_rows, block_empty);
  }
}

}  // namespace

template <class Value, class Index>
RowStatistics row_statistics(const CsrView<Value, Index>& matrix, cudaStream_t stream) {
  RowStatistics stats;
  if (matrix.rows == 0) return stats;
  DeviceBuffer<Partial> partial(1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(partial.data(), 0, sizeof(Partial), stream));
  const unsigned grid = std::min(grid_for(matrix.rows, kBlock), 4u * device_multiprocessors());
  row_statistics_kernel<<<grid, kBlock, 0, stream>>>(matrix.row_ptr, matrix.col_idx, matrix.rows, matrix.nnz,
                                                     partial.data());
  SPMV_CHECK_LAUNCH("row_statistics_kernel");
  Partial host{};
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&host, partial.data(), sizeof(Partial), cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  stats.mean = double(matrix.nnz) / double(matrix.rows);
  stats.stddev = std::sqrt(std::max(0.0, host.sum_squares / double(matrix.rows) - stats.mean * stats.mean));
  stats.max = static_cast<std::int64_t>(host.max_length);
  stats.empty_rows = static_cast<std::int64_t>(host.empty_rows);
  const double nonempty = double(matrix.rows - stats.empty_rows);
  stats.mean_span = nonempty > 0 ? host.sum_spans / nonempty : 0.0;
  return stats;
}

template RowStatistics row_statistics(const CsrView<float, std::int32_t>&, cudaStream_t);
template RowStatistics row_statistics(const CsrView<float, std::int64_t>&, cudaStream_t);
template RowStatistics row_statistics(const CsrView<double, std::int32_t>&, cudaStream_t);
template RowStatistics row_statistics(const CsrView<double, std::int64_t>&, cudaStream_t);
template RowStatistics row_statistics(const CsrView<__half, std::int32_t>&, cudaStream_t);
template RowStatistics row_statistics(const CsrView<__nv_bfloat16, std::int32_t>&, cudaStream_t);

}  // namespace spmv::cuda
