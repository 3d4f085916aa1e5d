// What the stream ordering of issue 19 costs a single stream: a plan whose algorithm writes a
// workspace records one event after each product (src/core/workspace_order.hpp). This times N
// back-to-back products on one stream, then the same with the ordering's calls made a second time
// per product (cudaStreamIsCapturing + cudaStreamGetId + cudaEventRecord); the difference is the
// ordering's marginal cost. Host time per enqueued product (wall clock) and device time per product
// (CUDA events around the loop), median of 9 samples, on a tiny matrix (host-bound) and a large one.
//
//   spmv_bench_stream_order_cost [--n N]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "spmv/cuda/plan.hpp"
#include "spmv/generators.hpp"

namespace {

struct Sample {
  double host_us = 0, device_us = 0;
};

template <class F>
Sample time_loop(int n, cudaStream_t stream, F&& product) {
  cudaEvent_t start, stop;
  SPMV_CUDA_CHECK(cudaEventCreate(&start));
  SPMV_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> host, device;
  for (int rep = 0; rep < 9; ++rep) {
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    SPMV_CUDA_CHECK(cudaEventRecord(start, stream));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) product();
    const auto t1 = std::chrono::steady_clock::now();
    SPMV_CUDA_CHECK(cudaEventRecord(stop, stream));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
    device.push_back(1000.0 * ms / n);
  }
  std::sort(host.begin(), host.end());
  std::sort(device.begin(), device.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {host[host.size() / 2], device[device.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  int n = 2000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--n") == 0) n = std::stoi(argv[i + 1]);
  if (!spmv::cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  std::printf("%-14s %-11s %12s %12s %14s %14s %10s\n", "matrix", "algorithm", "host_us", "device_us",
              "host_us_2x", "device_us_2x", "cost_us");
  struct Case {
    const char* name;
    spmv::gen::Matrix a;
  };
  const Case cases[] = {{"poisson2d_64", spmv::gen::poisson2d(64)}, {"poisson2d_2000", spmv::gen::poisson2d(2000)}};
  for (const Case& c : cases) {
    const auto a = spmv::convert<double, std::int32_t>(c.a);
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
    spmv::cuda::DeviceBuffer<double> x(static_cast<std::size_t>(a.cols)), y(static_cast<std::size_t>(a.rows));
    SPMV_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
    SPMV_CUDA_CHECK(cudaMemset(y.data(), 0, y.bytes()));
    cudaStream_t stream;
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t extra;
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&extra, cudaEventDisableTiming));
    for (spmv::Algorithm alg : {spmv::Algorithm::MergePath, spmv::Algorithm::CsrScalar}) {
      spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), alg, spmv::Operation::NonTranspose, {}, stream);
      auto once = [&] { plan.apply(1.0, x.data(), 1.0, y.data(), stream); };
      auto twice = [&] {
        plan.apply(1.0, x.data(), 1.0, y.data(), stream);
        cudaStreamCaptureStatus status;
        unsigned long long id;
        SPMV_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
        SPMV_CUDA_CHECK(cudaStreamGetId(stream, &id));
        SPMV_CUDA_CHECK(cudaEventRecord(extra, stream));
      };
      time_loop(n / 10 + 1, stream, once);  // warm-up
      const Sample a1 = time_loop(n, stream, once);
      const Sample a2 = time_loop(n, stream, twice);
      std::printf("%-14s %-11s %12.3f %12.3f %14.3f %14.3f %10.3f\n", c.name,
                  std::string(spmv::to_string(alg)).c_str(), a1.host_us, a1.device_us, a2.host_us, a2.device_us,
                  std::max(a2.host_us - a1.host_us, a2.device_us - a1.device_us));
    }
    cudaEventDestroy(extra);
    cudaStreamDestroy(stream);
  }
  std::printf("cost_us: the larger of the host and device time added per product by one more set of the\n"
              "ordering's calls (merge-path already pays one set; csr-scalar pays none)\n");
  return 0;
}
