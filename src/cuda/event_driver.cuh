#pragma once
// The CUDA side of detail::WorkspaceOrder (core/workspace_order.hpp), used by the plans whose products
// write a workspace of their own (spmv::cuda::Plan, spmv::cuda::SemiringPlan).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "spmv/cuda/device_buffer.hpp"  // SPMV_CUDA_CHECK

namespace spmv::cuda {

// One event of the plan, recorded after each product.
class EventDriver {
 public:
  using Stream = cudaStream_t;

  EventDriver() {
    cudaEvent_t event = nullptr;
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    event_.reset(event);
  }
  bool capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    SPMV_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    return status != cudaStreamCaptureStatusNone;
  }
  // Unique for the process lifetime, unlike the handle, which a new stream may reuse; it also tells
  // apart the per-thread default streams of different threads, which share one handle.
  std::uint64_t id(cudaStream_t stream) {
    unsigned long long id = 0;
    SPMV_CUDA_CHECK(cudaStreamGetId(stream, &id));
    return id;
  }
  void record(cudaStream_t stream) { SPMV_CUDA_CHECK(cudaEventRecord(event_.get(), stream)); }
  void wait(cudaStream_t stream) { SPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, event_.get(), 0)); }

 private:
  struct Destroy {
    void operator()(cudaEvent_t event) const { cudaEventDestroy(event); }
  };
  std::unique_ptr<CUevent_st, Destroy> event_;
};

}  // namespace spmv::cuda
