#include "cuda_support.hpp"

#include <cstdio>
#include <string>

#include "spmv/error.hpp"

#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "spmv/cuda/device_buffer.hpp"
#endif

namespace spmv::python {

#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA

namespace {

std::string hex(std::uintptr_t address) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

// cuMemGetAddressRange through the runtime's driver entry points, so that the module does not link
// libcuda (it then still imports on a machine without a driver, where cuda_available() is false).
PFN_cuMemGetAddressRange_v3020 address_range_function() {
  static const PFN_cuMemGetAddressRange_v3020 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 3020, cudaEnableDefault, &status) !=
            cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      p = nullptr;
    }
    return reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(p);
  }();
  return fn;
}

cudaStream_t as_stream(std::uintptr_t value) { return reinterpret_cast<cudaStream_t>(value); }

}  // namespace

namespace {
// The number of usable devices; Unsupported("no CUDA device ...") when there is none, whether the
// driver is missing, too old for this runtime, or reports no device.
int usable_devices() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();  // not sticky: clear it so that later calls do not report it
    throw Unsupported(std::string("no CUDA device is usable (") +
                      (status != cudaSuccess ? cudaGetErrorString(status) : "the driver reports none") +
                      "); use device='cpu'");
  }
  return count;
}
}  // namespace

void require_cuda_device(int ordinal) {
  const int count = usable_devices();
  if (ordinal < 0 || ordinal >= count)
    throw Unsupported("no CUDA device " + std::to_string(ordinal) + ": there are " + std::to_string(count));
}

int current_device() {
  usable_devices();
  int device = 0;
  SPMV_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

int pointer_device(std::uintptr_t address) {
  if (address == 0) throw InvalidArgument("null device pointer");
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(address)) != cudaSuccess) {
    cudaGetLastError();
    throw InvalidArgument("address " + hex(address) + " is not known to CUDA");
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    throw InvalidArgument("address " + hex(address) + " is not device memory");
  return attributes.device;
}

void check_device_vector(std::uintptr_t address, std::size_t count, std::size_t element, int ordinal,
                         const char* name) {
  if (count == 0) return;  // never dereferenced
  if (address == 0) throw InvalidArgument(std::string(name) + ": null device pointer");
  if (address % element != 0)
    throw InvalidArgument(std::string(name) + ": address " + hex(address) + " is not aligned to " +
                          std::to_string(element) + " bytes");
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(address)) != cudaSuccess) {
    cudaGetLastError();
    throw InvalidArgument(std::string(name) + ": address " + hex(address) + " is not known to CUDA");
  }
  if (attributes.type == cudaMemoryTypeDevice) {
    if (attributes.device != ordinal)
      throw InvalidArgument(std::string(name) + " lives on CUDA device " + std::to_string(attributes.device) +
                            ", the product runs on device " + std::to_string(ordinal));
  } else if (attributes.type != cudaMemoryTypeManaged) {
    throw InvalidArgument(std::string(name) + ": address " + hex(address) +
                          " is not device memory (host memory is passed as a NumPy array)");
  }
  if (const auto range = address_range_function()) {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
    if (range(&base, &bytes, static_cast<CUdeviceptr>(address)) == CUDA_SUCCESS) {
      const std::size_t needed = count * element;
      if (address - base > bytes || bytes - (address - base) < needed)
        throw InvalidArgument(std::string(name) + ": " + std::to_string(count) + " elements from " + hex(address) +
                              " run past the end of its allocation (" + std::to_string(bytes) + " bytes from " +
                              hex(base) + ")");
    }
  }
}

bool allocation_ranges_checked() { return address_range_function() != nullptr; }

void stream_wait(std::uintptr_t consumer, std::uintptr_t producer) {
  // 0 (the null stream) is the legacy default stream in the default compilation mode.
  const auto normal = [](std::uintptr_t s) { return s == 0 ? std::uintptr_t{1} : s; };
  if (normal(consumer) == normal(producer)) return;
  cudaEvent_t event = nullptr;
  SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const cudaError_t recorded = cudaEventRecord(event, as_stream(producer));
  const cudaError_t waited = recorded == cudaSuccess ? cudaStreamWaitEvent(as_stream(consumer), event, 0) : recorded;
  cudaEventDestroy(event);  // safe while the wait is pending: the runtime defers the release
  if (recorded != cudaSuccess) cuda::throw_cuda_error(recorded, "cudaEventRecord(producer stream)", __FILE__, __LINE__);
  if (waited != cudaSuccess) cuda::throw_cuda_error(waited, "cudaStreamWaitEvent", __FILE__, __LINE__);
}

DeviceGuard::DeviceGuard(int ordinal) {
  SPMV_CUDA_CHECK(cudaGetDevice(&saved_));
  if (saved_ != ordinal) {
    SPMV_CUDA_CHECK(cudaSetDevice(ordinal));
  } else {
    saved_ = -1;
  }
}

DeviceGuard::~DeviceGuard() {
  if (saved_ >= 0) cudaSetDevice(saved_);  // never throws from a destructor
}

#else  // built without CUDA

namespace {
[[noreturn]] void no_cuda() {
  throw Unsupported("no CUDA device: this spmv extension was built without the CUDA backend (no nvcc, or SPMV_ENABLE_CUDA=OFF)");
}
}  // namespace

void require_cuda_device(int) { no_cuda(); }
int current_device() { no_cuda(); }
int pointer_device(std::uintptr_t) { no_cuda(); }
void check_device_vector(std::uintptr_t, std::size_t, std::size_t, int, const char*) { no_cuda(); }
bool allocation_ranges_checked() { return false; }
void stream_wait(std::uintptr_t, std::uintptr_t) { no_cuda(); }
DeviceGuard::DeviceGuard(int) { no_cuda(); }
DeviceGuard::~DeviceGuard() = default;

#endif

}  // namespace spmv::python
