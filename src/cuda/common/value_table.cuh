#pragma once
// Value tables for the formats that store codes instead of values (compressed-csr, DIA): the distinct
// bit patterns of an array, ascending as unsigned integers, so that a round trip through a table is
// bit-exact (-0.0 and +0.0, NaN payloads distinct) and the device and host conversions build the same
// table. Sorting and deduplicating on the device: cub::DeviceRadixSort then cub::DeviceSelect::Unique.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <cstddef>
#include <type_traits>

#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda::format {

// The bits of a value as the tables compare them.
template <class Value>
using ValueBits = std::conditional_t<sizeof(Value) == 4, unsigned int, unsigned long long>;

__device__ __forceinline__ unsigned int value_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long value_bits(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v));
}

// Position of `bits` in the ascending table of `size` entries (present by construction).
template <class Bits>
__device__ __forceinline__ unsigned table_code(const Bits* __restrict__ table, int size, Bits bits) {
  int lo = 0, hi = size - 1;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (__ldg(table + mid) < bits)
      lo = mid + 1;
    else
      hi = mid;
  }
  return static_cast<unsigned>(lo);
}

// The distinct values of values[0, n) in ascending bit order, in `table` when there are at most
// `max_size` of them; returns how many there are (any count above max_size leaves `table` empty). Needs
// about three arrays of n bits of device memory for the sort (require_device_memory throws
// MemoryLimitExceeded, naming `what`, when they are not free).
template <class Value>
long long distinct_values(const Value* values, std::size_t n, long long max_size, DeviceBuffer<Value>& table,
                          const char* what, cudaStream_t stream) {
  using Bits = ValueBits<Value>;
  require_device_memory(std::string(what) + "'s sort of the values", 3.0 * static_cast<double>(n) * sizeof(Bits));
  DeviceBuffer<Bits> sorted(n), unique(n);
  DeviceBuffer<long long> distinct(1);
  const auto* keys = reinterpret_cast<const Bits*>(values);
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortKeys(temp, bytes, keys, sorted.data(), static_cast<long long>(n), 0,
                                              static_cast<int>(8 * sizeof(Bits)), stream);
      },
      stream);
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceSelect::Unique(temp, bytes, sorted.data(), unique.data(), distinct.data(),
                                         static_cast<long long>(n), stream);
      },
      stream);
  const long long count = read_device_value(distinct.data(), stream);
  if (count <= max_size) {
    table = DeviceBuffer<Value>(static_cast<std::size_t>(count));
    SPMV_CUDA_CHECK(cudaMemcpyAsync(table.data(), unique.data(), table.bytes(), cudaMemcpyDeviceToDevice, stream));
  }
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // `sorted` and `unique` are freed on return
  return count;
}

}  // namespace spmv::cuda::format
