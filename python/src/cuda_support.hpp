#pragma once
// The few CUDA runtime facts the Python layer needs before it hands device pointers to the library:
// which device holds an allocation, whether a vector lies inside it, and stream ordering with the
// array's producer. Declared without CUDA types so that the module also builds without CUDA, where
// every function throws Unsupported("no CUDA device ...").
#include <cstddef>
#include <cstdint>

namespace spmv::python {

// Unsupported("no CUDA device ...") unless the library was built with CUDA and device `ordinal` exists.
void require_cuda_device(int ordinal);

// The calling thread's current CUDA device.
int current_device();

// The device holding a device allocation; InvalidArgument for host, unknown or null addresses.
int pointer_device(std::uintptr_t address);

// InvalidArgument unless `count` elements of `element` bytes from `address` are device memory of
// device `ordinal` (or managed memory), aligned to `element`, and inside one allocation.
void check_device_vector(std::uintptr_t address, std::size_t count, std::size_t element, int ordinal,
                         const char* name);

// True when check_device_vector can see allocation bounds (cuMemGetAddressRange was found).
bool allocation_ranges_checked();

// Orders `consumer` after the work enqueued so far on `producer`. Both are stream values as in the CUDA
// array interface: 0 none / the legacy default stream, 1 legacy default, 2 per-thread default, else a
// cudaStream_t. Nothing is done when they name the same stream.
void stream_wait(std::uintptr_t consumer, std::uintptr_t producer);

// Makes device `ordinal` current for the scope (no-op when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace spmv::python
