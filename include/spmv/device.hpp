#pragma once
// Facts about the CUDA device, without CUDA types, for the CLI and benchmarks. Throws Unsupported
// when the library was built without CUDA, CudaError when no device is usable.
#include <cstddef>
#include <string>

namespace spmv {

struct DeviceInfo {
  std::string name;
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  int compute_capability = 0;  // e.g. 90
};

DeviceInfo cuda_device_info(int device = 0);

// Measured device-to-device copy bandwidth in GB/s (bytes read + bytes written, 1 GB = 1e9 bytes):
// a 2 GiB copy (or a quarter of free memory if smaller), median of several after warm-up.
double cuda_copy_bandwidth_gbs(int device = 0);

}  // namespace spmv
