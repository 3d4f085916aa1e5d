// Issue 13 §3: does an L2 access-policy window speed up the gather-bound products? Each algorithm's
// product is timed on one stream without a window, with x persisting (hit ratio = set-aside / x bytes,
// misses streaming) in the device's maximum set-aside, with the same window and no set-aside, with the
// values array marked streaming instead (x normal), and without a window again (drift check).
// cuSPARSE runs on the same stream, so it gets the same windows. Every windowed product's y is
// compared with the windowless one (max|dy|: a cache hint must not change a reproducible algorithm's
// bits). Median of 9 samples of >= 2 ms after 3 warm-up products, CUDA events.
//
//   spmv_bench_l2_window [--algos a,b,...] [--precision f32|f64|both] MATRIX...
// MATRIX: a .mtx(.gz) file or a generator spec kind:key=value,... (bench/matrix_spec.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../matrix_spec.hpp"
#include "median_time.hpp"
#include "spmv/cuda/plan.hpp"

namespace {

using spmv::bench_tools::median_ms;
using spmv::bench_tools::split;

// The access-policy window of `stream`: [base, base + bytes) gets `hit` for a `ratio` share of its lines
// and streaming for the rest (bytes = 0 removes the window). `set_aside` is the device's persisting L2.
void set_window(cudaStream_t stream, const void* base, std::size_t bytes, float ratio, cudaAccessProperty hit,
                std::size_t set_aside) {
  SPMV_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = const_cast<void*>(base);
  attr.accessPolicyWindow.num_bytes = bytes;
  attr.accessPolicyWindow.hitRatio = bytes ? ratio : 0.f;
  attr.accessPolicyWindow.hitProp = hit;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  SPMV_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
  if (bytes == 0) SPMV_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

template <class Value>
void run(const std::string& name, const spmv::CsrMatrix<double, std::int32_t>& a64,
         const std::vector<spmv::Algorithm>& algorithms, const cudaDeviceProp& prop) {
  const spmv::CsrMatrix<Value, std::int32_t> a = spmv::convert<Value, std::int32_t>(a64);
  spmv::cuda::DeviceCsr<Value, std::int32_t> d_a(a);
  auto x = spmv::bench_tools::random_device_vector<Value>(static_cast<std::size_t>(a.cols), 7, -1.0, 1.0);
  spmv::cuda::DeviceBuffer<Value> y{static_cast<std::size_t>(a.rows)};
  const auto max_window = static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  const std::size_t x_bytes = std::min(x.bytes(), max_window);
  const auto set_aside = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  const float x_ratio = static_cast<float>(std::min(1.0, double(set_aside) / double(x_bytes)));
  const std::size_t values_bytes = std::min(a.values.size() * sizeof(Value), max_window);
  const Value* values = d_a.view().values;
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
    double diff = 0;
    const auto timed_with = [&](auto&& set) {
      set();
      const double ms = median_ms(stream, product);
      const std::vector<Value> out = result();
      for (std::size_t i = 0; i < plain.size(); ++i) diff = std::max(diff, std::abs(double(plain[i]) - double(out[i])));
      set_window(stream, nullptr, 0, 0.f, cudaAccessPropertyNormal, 0);
      return ms;
    };
    const double off = median_ms(stream, product);
    // x persisting in the set-aside; the same without a set-aside; the values array streaming, x normal.
    const double x_persist =
        timed_with([&] { set_window(stream, x.data(), x_bytes, x_ratio, cudaAccessPropertyPersisting, set_aside); });
    const double x_no_aside =
        timed_with([&] { set_window(stream, x.data(), x_bytes, x_ratio, cudaAccessPropertyPersisting, 0); });
    const double values_streaming = timed_with(
        [&] { set_window(stream, values, values_bytes, 1.f, cudaAccessPropertyStreaming, 0); });
    const double off_again = median_ms(stream, product);
    const double base = std::min(off, off_again);
    std::printf("%-40.40s %-4s %-18s %8.4f %8.4f %6.3f %6.3f %6.3f %9.3g  %s\n", name.c_str(),
                sizeof(Value) == 4 ? "f32" : "f64", std::string(spmv::to_string(plan.algorithm())).c_str(), off,
                off_again, base / x_persist, base / x_no_aside, base / values_streaming, diff,
                plan.policy().substr(0, 30).c_str());
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
  std::printf("%-40s %-4s %-18s %8s %8s %6s %6s %6s %9s  %s\n", "matrix", "prec", "algorithm", "off_ms", "off2_ms",
              "x_pers", "x_noas", "v_strm", "max|dy|", "policy");
  for (const auto& spec : matrices) {
    const auto a = spmv::bench_tools::load_matrix_spec(spec);
    if (precision != "f64") run<float>(spec, a, algorithms, prop);
    if (precision != "f32") run<double>(spec, a, algorithms, prop);
  }
  std::printf("speed-ups over min(off, off2): x_pers = x persisting in the maximum set-aside; x_noas = the same\n"
              "window with no set-aside; v_strm = the values array streaming (x normal, no set-aside)\n");
  return 0;
}
