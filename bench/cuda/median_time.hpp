#pragma once
// Event timing shared by the CUDA micro-benchmarks: the median ms per call of `product` on `stream`,
// over 9 samples of >= 2 ms each, after 3 untimed calls.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

}  // namespace spmv::bench_tools
