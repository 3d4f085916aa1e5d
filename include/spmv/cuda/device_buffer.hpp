#pragma once
// RAII ownership of device memory: no raw cudaMalloc/cudaFree pairs in user code. Move-only. A failed
// allocation throws CudaError and leaves nothing allocated.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spmv/error.hpp"

namespace spmv::cuda {

// Throws CudaError("<call> failed: <error name>: <error string> (file:line)").
void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);

#define SPMV_CUDA_CHECK(call)                                                             \
  do {                                                                                    \
    const cudaError_t spmv_status_ = (call);                                              \
    if (spmv_status_ != cudaSuccess)                                                      \
      ::spmv::cuda::throw_cuda_error(spmv_status_, #call, __FILE__, __LINE__);            \
  } while (0)

// Throws MemoryLimitExceeded naming `what`, the bytes it needs and the bytes free on the current device
// (cudaMemGetInfo) when they do not fit: called before the large device allocations (the matrix upload,
// the padded formats), so that a matrix too large fails with both sizes instead of a CUDA error deep in
// a plan's setup.
void require_device_memory(const std::string& what, double bytes);

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) SPMV_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  explicit DeviceBuffer(std::span<const T> host, cudaStream_t stream = nullptr) : DeviceBuffer(host.size()) {
    upload(host, stream);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  // Synchronous with respect to the host (pageable host memory).
  void upload(std::span<const T> host, cudaStream_t stream = nullptr) {
    if (host.size() != size_)
      throw InvalidArgument("DeviceBuffer::upload: " + std::to_string(host.size()) + " elements into a buffer of " +
                            std::to_string(size_));
    if (size_ == 0) return;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(data_, host.data(), bytes(), cudaMemcpyHostToDevice, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void download(std::span<T> host, cudaStream_t stream = nullptr) const {
    if (host.size() != size_)
      throw InvalidArgument("DeviceBuffer::download: " + std::to_string(size_) + " elements into a span of " +
                            std::to_string(host.size()));
    if (size_ == 0) return;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_, bytes(), cudaMemcpyDeviceToHost, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<T> to_host(cudaStream_t stream = nullptr) const {
    std::vector<T> host(size_);
    download(host, stream);
    return host;
  }

 private:
  void release() noexcept {
    if (data_) cudaFree(data_);  // never throws from a destructor; errors surface on the next checked call
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace spmv::cuda
