#pragma once
// Launch helpers shared by all kernels: grid sizing and launch-error checking.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "spmv/cuda/device_buffer.hpp"

namespace spmv::cuda {

// Checks the launch that just happened (configuration errors surface here, not at the next sync).
#define SPMV_CHECK_LAUNCH(kernel_name) SPMV_CUDA_CHECK(cudaPeekAtLastError())

// Number of blocks covering `items` with `per_block` each, capped to the grid limit (kernels that may
// exceed it loop grid-stride).
inline unsigned grid_for(std::int64_t items, std::int64_t per_block) {
  const std::int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 2147483647));
}

int device_multiprocessors();  // of the current device, cached per device

}  // namespace spmv::cuda
