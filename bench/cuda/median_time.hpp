#pragma once
// Shared by the CUDA micro-benchmarks: event timing (the median ms per call of `product` on `stream`,
// over 9 samples of >= 2 ms each, after 3 untimed calls) and their random x.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "spmv/cuda/plan.hpp"

namespace spmv::bench_tools {

template <class F>
double median_ms(cudaStream_t stream, F&& product) {
  cudaEvent_t start, stop;
  SPMV_CUDA_CHECK(cudaEventCreate(&start));
  SPMV_CUDA_CHECK(cudaEventCreate(&stop));
  const auto timed = [&](int n) {
    SPMV_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < n; ++i) product();
    SPMV_CUDA_CHECK(cudaEventRecord(stop, stream));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return double(ms);
  };
  timed(3);
  const int n = std::max(1, static_cast<int>(std::ceil(2.0 / std::max(timed(1), 1e-4))));
  std::vector<double> samples;
  for (int rep = 0; rep < 9; ++rep) samples.push_back(timed(n) / n);
  std::sort(samples.begin(), samples.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return samples[samples.size() / 2];
}

// `n` values drawn uniformly from [lo, hi) by std::mt19937(seed), on the device.
template <class Value>
cuda::DeviceBuffer<Value> random_device_vector(std::size_t n, unsigned seed, double lo, double hi) {
  std::vector<Value> host(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (Value& v : host) v = static_cast<Value>(dist(rng));
  return cuda::DeviceBuffer<Value>{std::span<const Value>(host)};
}

}  // namespace spmv::bench_tools
