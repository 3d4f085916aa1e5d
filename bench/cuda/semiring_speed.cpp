// Issue 11: what the CUDA semiring products (spmv/cuda/semiring.hpp: SemiringPlan with the one-launch
// row kernel, with merge-path, with SELL-C-sigma, and Auto's choice) cost against the plus-times products of the same matrix: Auto's plan and cuSPARSE's CSR_ALG1 (cuSPARSE has no other semiring),
// in one process, on one stream. Every semiring's device result is compared with the CPU kernel's
// (the same bits for min-plus, max-times, or-and and max-min; plus-times within the error bound's
// scale). Median of 9 samples of >= 2 ms after 3 warm-up products; "% bw" is the CSR byte model
// (values + indices + row offsets + x + y) over the time, as a share of the device's copy bandwidth.
//
//   spmv_bench_semiring_speed [--precision f32|f64|both] [--semirings min-plus,...] [--algorithms all|a,b,...]
//                             MATRIX...
// --algorithms: the SemiringPlan kernels to time (default csr-vector, merge-path, sell and auto; all: every
// one of spmv::semiring_algorithms(Backend::Cuda), the formats and the other CSR kernels included).
// A "stats" line per matrix gives the row statistics (bench/semiring_rule.py fits Auto's rule on them).
// MATRIX: a .mtx(.gz) file or a generator spec kind:key=value,... (bench/matrix_spec.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../matrix_spec.hpp"
#include "median_time.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/device.hpp"
#include "spmv/semiring.hpp"

namespace {

using spmv::bench_tools::median_ms;

// Largest |device - host| over y, NaN-aware (both NaN counts as equal), and the largest |host|.
template <class Value>
std::pair<double, double> difference(const std::vector<Value>& device, const std::vector<Value>& host) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (std::isnan(double(host[i])) && std::isnan(double(device[i]))) continue;
    if (double(host[i]) == double(device[i])) continue;  // also equal infinities
    diff = std::max(diff, std::abs(double(device[i]) - double(host[i])));
    if (std::isfinite(double(host[i]))) scale = std::max(scale, std::abs(double(host[i])));
  }
  return {diff, scale};
}

// The row statistics SemiringPlan's Auto reads (spmv/cuda/semiring.hpp), for bench/semiring_rule.py.
void print_stats(const std::string& name, const spmv::CsrMatrix<double, std::int32_t>& a) {
  double sum = 0, squares = 0;
  std::int64_t longest = 0, empty = 0;
  for (std::int32_t i = 0; i < a.rows; ++i) {
    const double n = a.row_ptr[i + 1] - a.row_ptr[i];
    sum += n;
    squares += n * n;
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(n));
    empty += n == 0;
  }
  const double mean = a.rows > 0 ? sum / a.rows : 0;
  const double stddev = a.rows > 0 ? std::sqrt(std::max(0.0, squares / a.rows - mean * mean)) : 0;
  std::printf("stats %s rows=%lld cols=%lld nnz=%lld mean=%.6g stddev=%.6g max=%lld empty_rows=%lld\n", name.c_str(),
              static_cast<long long>(a.rows), static_cast<long long>(a.cols), static_cast<long long>(a.nnz()), mean,
              stddev, static_cast<long long>(longest), static_cast<long long>(empty));
}

template <class Value>
void run(const std::string& name, const spmv::CsrMatrix<double, std::int32_t>& a64, double copy_gbs,
         const std::vector<spmv::Semiring>& semirings, const std::vector<spmv::Algorithm>& algorithms) {
  const auto a = spmv::convert<Value, std::int32_t>(a64);
  spmv::cuda::DeviceCsr<Value, std::int32_t> d_a(a);
  std::vector<Value> host_x(static_cast<std::size_t>(a.cols));
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(0.0, 1.0);  // non-negative: max-times and max-min paths
  for (Value& v : host_x) v = static_cast<Value>(dist(rng));
  spmv::cuda::DeviceBuffer<Value> x{std::span<const Value>(host_x)}, y{static_cast<std::size_t>(a.rows)};
  const double bytes = double(a.nnz()) * double(sizeof(Value) + sizeof(std::int32_t)) +
                       double(a.rows + 1) * sizeof(std::int32_t) + double(a.cols + a.rows) * sizeof(Value);
  const auto percent = [&](double ms) { return 100.0 * bytes / (ms * 1e-3) / (copy_gbs * 1e9); };
  cudaStream_t stream;
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const char* precision = sizeof(Value) == 4 ? "f32" : "f64";

  double cusparse_ms = 0;
  for (spmv::Algorithm alg : {spmv::Algorithm::CusparseCsrAlg1, spmv::Algorithm::Auto}) {
    spmv::cuda::Plan<Value, std::int32_t> plan(d_a.view(), alg, spmv::Operation::NonTranspose, {}, stream);
    const double ms = median_ms(stream, [&] { plan.apply(Value(1), x.data(), Value(0), y.data(), stream); });
    if (alg == spmv::Algorithm::CusparseCsrAlg1) cusparse_ms = ms;
    std::printf("%-36s %-4s %-28s %9.4f %6.1f %6.2f  %s\n", name.c_str(), precision,
                ("plan " + std::string(spmv::to_string(plan.algorithm()))).c_str(), ms, percent(ms), cusparse_ms / ms,
                "");
  }
  for (const spmv::Semiring s : semirings) {
    std::vector<Value> host(static_cast<std::size_t>(a.rows));
    spmv::semiring_multiply(s, a, std::span<const Value>(host_x), std::span<Value>(host));
    // The plan with each kernel, then Auto's choice, each timed and checked against the CPU.
    for (const spmv::Algorithm algorithm : algorithms) {
      std::unique_ptr<spmv::cuda::SemiringPlan<Value, std::int32_t>> made;
      try {
        made = std::make_unique<spmv::cuda::SemiringPlan<Value, std::int32_t>>(d_a.view(), s, algorithm, stream);
      } catch (const spmv::Unsupported& e) {  // the padding limit of SELL and the formats, DIA's duplicates
        std::printf("%-36s %-4s %-28s refused: %s\n", name.c_str(), precision,
                    (std::string(spmv::to_string(s)) + " " + std::string(spmv::to_string(algorithm))).c_str(), e.what());
        continue;
      }
      auto& plan = *made;
      const auto product = [&] { plan.apply(x.data(), y.data(), stream); };
      const double ms = median_ms(stream, product);
      std::vector<Value> device(static_cast<std::size_t>(a.rows));
      product();
      y.download(std::span<Value>(device), stream);
      const auto [diff, scale] = difference(device, host);
      std::printf("%-36s %-4s %-28s %9.4f %6.1f %6.2f  max|dy| %.3g of max|y| %.3g\n", name.c_str(), precision,
                  (std::string(spmv::to_string(s)) + (algorithm == spmv::Algorithm::Auto ? " auto=" : " ") +
                   std::string(spmv::to_string(plan.algorithm()))).c_str(),
                  ms, percent(ms),
                  cusparse_ms / ms, diff, scale);
    }
  }
  SPMV_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  std::string precision = "both";
  std::vector<std::string> matrices;
  std::vector<spmv::Semiring> semirings = {spmv::Semiring::PlusTimes, spmv::Semiring::MinPlus,
                                           spmv::Semiring::MaxTimes, spmv::Semiring::OrAnd, spmv::Semiring::MaxMin};
  std::vector<spmv::Algorithm> algorithms = {spmv::Algorithm::CsrVector, spmv::Algorithm::MergePath,
                                             spmv::Algorithm::Sell, spmv::Algorithm::Auto};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
      precision = argv[++i];
    } else if (std::strcmp(argv[i], "--algorithms") == 0 && i + 1 < argc) {  // all, or a comma-separated list
      const std::string list = argv[++i];
      algorithms.clear();
      const auto kernels = spmv::semiring_algorithms(spmv::Backend::Cuda);
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string name = list.substr(at, comma - at);
        at = comma + 1;
        if (name == "all") {
          algorithms.insert(algorithms.end(), kernels.begin() + 1, kernels.end());  // Auto last
          algorithms.push_back(spmv::Algorithm::Auto);
          continue;
        }
        const auto a = spmv::parse_algorithm(name);
        if (!a || std::find(kernels.begin(), kernels.end(), *a) == kernels.end()) {
          std::fprintf(stderr, "'%s' is not a CUDA semiring kernel (%s)\n", name.c_str(),
                       spmv::semiring_algorithm_names(spmv::Backend::Cuda).c_str());
          return 2;
        }
        algorithms.push_back(*a);
      }
    } else if (std::strcmp(argv[i], "--semirings") == 0 && i + 1 < argc) {  // a comma-separated list
      semirings.clear();
      std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const auto s = spmv::parse_semiring(list.substr(at, comma - at));
        if (!s) {
          std::fprintf(stderr, "unknown semiring '%s'\n", list.substr(at, comma - at).c_str());
          return 2;
        }
        semirings.push_back(*s);
        at = comma + 1;
      }
    } else {
      matrices.push_back(argv[i]);
    }
  }
  if (!spmv::cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const double copy_gbs = spmv::cuda_copy_bandwidth_gbs(0);
  std::printf("device %s, copy bandwidth %.0f GB/s\n", spmv::cuda_device_info(0).name.c_str(), copy_gbs);
  std::printf("%-36s %-4s %-28s %9s %6s %6s\n", "matrix", "prec", "product", "ms", "% bw", "vs cuSPARSE plus-times");
  for (const auto& spec : matrices) {
    const auto a = spmv::bench_tools::load_matrix_spec(spec);
    print_stats(spec, a);
    if (precision != "f64") run<float>(spec, a, copy_gbs, semirings, algorithms);
    if (precision != "f32") run<double>(spec, a, copy_gbs, semirings, algorithms);
    std::fflush(stdout);  // partial results survive a timeout
  }
  return 0;
}
