// Device memory, device facts and the measured copy bandwidth.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/memory_budget.hpp"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"
#include "spmv/cuda/plan.hpp"
#include "spmv/device.hpp"
#include "spmv/operator.hpp"

namespace spmv {
namespace cuda {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) +
                  " (" + file + ":" + std::to_string(line) + ")");
}

void require_device_memory(const std::string& what, double bytes) {
  std::size_t free = 0, total = 0;
  SPMV_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (bytes <= static_cast<double>(free)) return;
  int device = 0;
  SPMV_CUDA_CHECK(cudaGetDevice(&device));
  throw MemoryLimitExceeded(what + " needs " + detail::format_bytes(bytes) + " of device memory, more than the " +
                            detail::format_bytes(static_cast<double>(free)) + " free on CUDA device " +
                            std::to_string(device) + " (of " + detail::format_bytes(static_cast<double>(total)) + ")");
}

int device_multiprocessors() {
  int device = 0;
  SPMV_CUDA_CHECK(cudaGetDevice(&device));
  static std::vector<int> cache;
  if (static_cast<int>(cache.size()) <= device) cache.resize(device + 1, 0);
  if (cache[device] == 0)
    SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&cache[device], cudaDevAttrMultiProcessorCount, device));
  return cache[device];
}

template <class Value, class Index>
DeviceCsr<Value, Index>::DeviceCsr(const CsrMatrix<Value, Index>& host, cudaStream_t stream)
    : rows_(host.rows), cols_(host.cols), nnz_(host.nnz()) {
  validate(host);
  require_device_memory("uploading the " + std::to_string(host.rows) + " x " + std::to_string(host.cols) +
                            " matrix with " + std::to_string(host.nnz()) + " nonzeros (" +
                            (sizeof(Value) == 4 ? "float" : "double") + " values, " +
                            std::to_string(8 * sizeof(Index)) + "-bit indices)",
                        static_cast<double>(host.row_ptr.size()) * sizeof(Index) +
                            static_cast<double>(host.col_idx.size()) * sizeof(Index) +
                            static_cast<double>(host.values.size()) * sizeof(Value));
  // The upload reads the host arrays in place (pageable memory, staged by the driver): no second
  // host copy. Members are assigned one by one: if a later allocation throws, the earlier buffers are freed by
  // their destructors, so nothing stays allocated.
  row_ptr_ = DeviceBuffer<Index>(std::span<const Index>(host.row_ptr), stream);
  col_idx_ = DeviceBuffer<Index>(std::span<const Index>(host.col_idx), stream);
  values_ = DeviceBuffer<Value>(std::span<const Value>(host.values), stream);
}

template class DeviceCsr<float, std::int32_t>;
template class DeviceCsr<float, std::int64_t>;
template class DeviceCsr<double, std::int32_t>;
template class DeviceCsr<double, std::int64_t>;

template <class Value, class Index>
__global__ void scale_vector_kernel(Value beta, Value* y, Index n) {
  // 64-bit index: with 32-bit Index, n near 2^31 would overflow i + stride.
  for (long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x; i < n; i += 1ll * gridDim.x * blockDim.x)
    y[i] = beta_times(beta, y, i);
}

template <class Value, class Index>
void scale_vector(Value beta, Value* y, Index n, cudaStream_t stream) {
  if (n <= 0 || beta == Value(1)) return;
  constexpr int block = 256;
  scale_vector_kernel<<<std::min(grid_for(n, block), 65535u), block, 0, stream>>>(beta, y, n);
  SPMV_CHECK_LAUNCH("scale_vector_kernel");
}
template void scale_vector(float, float*, std::int32_t, cudaStream_t);
template void scale_vector(float, float*, std::int64_t, cudaStream_t);
template void scale_vector(double, double*, std::int32_t, cudaStream_t);
template void scale_vector(double, double*, std::int64_t, cudaStream_t);

}  // namespace cuda

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

DeviceInfo cuda_device_info(int device) {
  cudaDeviceProp prop{};
  SPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  info.multiprocessors = prop.multiProcessorCount;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.memory_bytes = prop.totalGlobalMem;
  info.compute_capability = prop.major * 10 + prop.minor;
  return info;
}

double cuda_copy_bandwidth_gbs(int device) {
  SPMV_CUDA_CHECK(cudaSetDevice(device));
  std::size_t free_bytes = 0, total_bytes = 0;
  SPMV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // 2 GiB per buffer: far beyond L2 (50-60 MB on Hopper), so the copy streams from HBM.
  const std::size_t bytes = std::min<std::size_t>(std::size_t(2) << 30, free_bytes / 4);
  cuda::DeviceBuffer<char> src(bytes), dst(bytes);
  SPMV_CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
  cudaEvent_t start, stop;
  SPMV_CUDA_CHECK(cudaEventCreate(&start));
  SPMV_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < 12; ++i) {
    SPMV_CUDA_CHECK(cudaEventRecord(start));
    SPMV_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice));
    SPMV_CUDA_CHECK(cudaEventRecord(stop));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    if (i >= 2) ms.push_back(t);  // the first two are warm-up
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  const double median_ms = 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9;
}

}  // namespace spmv
