#pragma once
// A pair of CUDA events that times work on the device clock: what the operators' time() (SpMV and
// SpMM) measure their products with.
#include <cuda_runtime.h>

#include "spmv/cuda/device_buffer.hpp"

namespace spmv::cuda {

class EventPair {
 public:
  EventPair() {
    SPMV_CUDA_CHECK(cudaEventCreate(&start_));
    SPMV_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;

  // Milliseconds between events recorded on `stream` before and after work() enqueues its kernels.
  template <class F>
  double elapsed_ms(F&& work, cudaStream_t stream = nullptr) {
    SPMV_CUDA_CHECK(cudaEventRecord(start_, stream));
    work();
    SPMV_CUDA_CHECK(cudaEventRecord(stop_, stream));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace spmv::cuda
