// Issue 13 §3: does an L2 persisting-access window on x speed up the gather-bound products? Each
// algorithm's product is timed on one stream three times: without a window, with a window that marks
// x persisting (hit ratio = set-aside / x bytes, misses streaming) and without again (drift check).
// The set-aside is the device's maximum persisting L2 size. cuSPARSE runs on the same stream, so it
// gets the same window. Every timed product's y is compared with the windowless one (a cache hint
// must not change a bit of a reproducible algorithm's result). Median of 9 samples of >= 2 ms after 3
// warm-up products, CUDA events.
//
//   spmv_bench_l2_window [--algos a,b,...] [--precision f32|f64|both] MATRIX...
// MATRIX: a .mtx(.gz) file or a generator spec kind:key=value,... (bench/matrix_spec.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../matrix_spec.hpp"
#include "spmv/cuda/plan.hpp"

namespace {

using spmv::bench_tools::split;

// Median ms per product of `product` on `stream`.
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

// Marks [x, x + bytes) persisting on `stream` (bytes = 0 removes the window).
void set_window(cudaStream_t stream, const void* x, std::size_t bytes, std::size_t set_aside) {
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = const_cast<void*>(x);
  attr.accessPolicyWindow.num_bytes = bytes;
  attr.accessPolicyWindow.hitRatio = bytes ? static_cast<float>(std::min(1.0, double(set_aside) / double(bytes))) : 0.f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  SPMV_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
  if (bytes == 0) SPMV_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

template <class Value>
void run(const std::string& name, const spmv::CsrMatrix<double, std::int32_t>& a64,
         const std::vector<spmv::Algorithm>& algorithms, const cudaDeviceProp& prop) {
  const spmv::CsrMatrix<Value, std::int32_t> a = spmv::convert<Value, std::int32_t>(a64);
  spmv::cuda::DeviceCsr<Value, std::int32_t> d_a(a);
  std::vector<Value> host_x(static_cast<std::size_t>(a.cols));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (Value& v : host_x) v = static_cast<Value>(dist(rng));
  spmv::cuda::DeviceBuffer<Value> x{std::span<const Value>(host_x)}, y{static_cast<std::size_t>(a.rows)};
  const std::size_t x_bytes = std::min<std::size_t>(x.bytes(), static_cast<std::size_t>(prop.accessPolicyMaxWindowSize));
  const std::size_t set_aside = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  cudaStream_t stream;
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (spmv::Algorithm alg : algorithms) {
    spmv::cuda::Plan<Value, std::int32_t> plan(d_a.view(), alg, spmv::Operation::NonTranspose, {}, stream);
    const auto product = [&] { plan.apply(Value(1), x.data(), Value(0), y.data(), stream); };
    const auto result = [&] {
      product();
      std::vector<Value> out(static_cast<std::size_t>(a.rows));
      y.download(std::span<Value>(out), stream);
      return out;
    };
    const std::vector<Value> plain = result();
    const double off = median_ms(stream, product);
    set_window(stream, x.data(), x_bytes, set_aside);
    const double on = median_ms(stream, product);
    const std::vector<Value> windowed = result();
    set_window(stream, x.data(), 0, 0);
    const double off_again = median_ms(stream, product);
    double diff = 0;
    for (std::size_t i = 0; i < plain.size(); ++i)
      diff = std::max(diff, std::abs(double(plain[i]) - double(windowed[i])));
    std::printf("%-40.40s %-4s %-18s %9.4f %9.4f %9.4f %7.3f %10.3g  %s\n", name.c_str(),
                sizeof(Value) == 4 ? "f32" : "f64", std::string(spmv::to_string(plan.algorithm())).c_str(), off, on,
                off_again, std::min(off, off_again) / on, diff, plan.policy().substr(0, 40).c_str());
  }
  SPMV_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> algo_names = {"csr-vector", "merge-path", "cusparse-csr-alg1", "cusparse-coo-alg1"};
  std::string precision = "both";
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--algos") == 0 && i + 1 < argc) algo_names = split(argv[++i], ',');
    else if (std::strcmp(argv[i], "--precision") == 0 && i + 1 < argc) precision = argv[++i];
    else matrices.push_back(argv[i]);
  }
  if (!spmv::cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  std::vector<spmv::Algorithm> algorithms;
  for (const auto& n : algo_names) {
    const auto alg = spmv::parse_algorithm(n);
    if (!alg) {
      std::fprintf(stderr, "unknown algorithm %s\n", n.c_str());
      return 2;
    }
    algorithms.push_back(*alg);
  }
  cudaDeviceProp prop;
  SPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s: L2 %.1f MiB, max persisting %.1f MiB, max window %.1f MiB\n", prop.name,
              prop.l2CacheSize / 1048576.0, prop.persistingL2CacheMaxSize / 1048576.0,
              prop.accessPolicyMaxWindowSize / 1048576.0);
  SPMV_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, prop.persistingL2CacheMaxSize));
  std::printf("%-40s %-4s %-18s %9s %9s %9s %7s %10s  %s\n", "matrix", "prec", "algorithm", "off_ms", "window_ms",
              "off2_ms", "gain", "max|dy|", "policy");
  for (const auto& spec : matrices) {
    const auto a = spmv::bench_tools::load_matrix_spec(spec);
    if (precision != "f64") run<float>(spec, a, algorithms, prop);
    if (precision != "f32") run<double>(spec, a, algorithms, prop);
  }
  std::printf("gain = min(off, off2) / window: > 1 means the window helped\n");
  return 0;
}
