// Issue 13 §3: column chunks where x exceeds L2 (Algorithm::ColumnChunked, src/cuda/column_chunked.cu).
// For each matrix and precision: Auto without the hint on the whole matrix, the best of cuSPARSE's
// CSR_ALG1 and COO_ALG1, Auto with the hint (which may take the chunks), and column-chunked at each
// chunk count K asked for (span = ceil(cols / K)); every y compared with the first Auto's (max |dy| over
// max |y|). Median of 9 samples of >= 2 ms after 3 warm-up products. One `csv,` line per product, for
// fitting and checking Auto's span rule (build-tmp scripts), after a readable line.
//
//   spmv_bench_column_blocks [--precision f32|f64|both] [--chunks K,K,...] [--expected-applies H] MATRIX...
// MATRIX: a .mtx(.gz) file or a generator spec kind:key=value,... (bench/matrix_spec.hpp). K = 0 stands
// for the span of Auto's rule (detail::column_span_for).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../matrix_spec.hpp"
#include "median_time.hpp"
#include "spmv/cuda/plan.hpp"

namespace {

using spmv::bench_tools::median_ms;
using spmv::bench_tools::split;

template <class Value>
void run(const std::string& name, const spmv::CsrMatrix<double, std::int32_t>& a64, const std::vector<int>& chunk_counts,
         std::int64_t expected_applies) {
  using Plan = spmv::cuda::Plan<Value, std::int32_t>;
  const auto a = spmv::convert<Value, std::int32_t>(a64);
  spmv::cuda::DeviceCsr<Value, std::int32_t> d_a(a);
  auto x = spmv::bench_tools::random_device_vector<Value>(static_cast<std::size_t>(a.cols), 7, -1.0, 1.0);
  spmv::cuda::DeviceBuffer<Value> y{static_cast<std::size_t>(a.rows)};
  cudaStream_t stream;
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const char* precision = sizeof(Value) == 4 ? "f32" : "f64";
  std::string tag = name;  // a CSV field: a generator spec's commas become semicolons
  std::replace(tag.begin(), tag.end(), ',', ';');
  std::vector<Value> reference;
  double scale = 0;
  // Times `plan`, compares its y with the reference (the first plan's), prints both lines.
  const auto measure = [&](Plan& plan, const char* kind, int chunks) {
    const auto product = [&] { plan.apply(Value(1), x.data(), Value(0), y.data(), stream); };
    product();
    std::vector<Value> out(static_cast<std::size_t>(a.rows));
    y.download(std::span<Value>(out), stream);
    if (reference.empty()) {
      reference = out;
      for (Value v : out) scale = std::max(scale, std::abs(double(v)));
    }
    double diff = 0;
    for (std::size_t i = 0; i < out.size(); ++i) diff = std::max(diff, std::abs(double(out[i]) - double(reference[i])));
    diff /= std::max(scale, 1e-300);
    const double ms = median_ms(stream, product);
    const std::string algorithm(spmv::to_string(plan.algorithm()));
    std::printf("  %-9s %s K=%-3d %9.4f ms  setup %8.2f ms  max|dy|/max|y| %.1e  %s [%s]\n", kind, precision, chunks,
                ms, plan.setup_ms(), diff, algorithm.c_str(), plan.policy().c_str());
    std::printf("csv,%s,%s,%d,%d,%lld,%s,%d,%.6f,%.3f,%.3e,%s\n", tag.c_str(), precision, a.rows, a.cols,
                static_cast<long long>(a.nnz()), kind, chunks, ms, plan.setup_ms(), diff, algorithm.c_str());
    return ms;
  };
  std::printf("%s %s: %d x %d, %lld nonzeros, x %.1f MB\n", name.c_str(), precision, a.rows, a.cols,
              static_cast<long long>(a.nnz()), double(a.cols) * sizeof(Value) / 1e6);
  {
    Plan whole(d_a.view(), spmv::Algorithm::Auto, spmv::Operation::NonTranspose, {}, stream);
    measure(whole, "auto", 1);
  }
  for (auto vendor : {spmv::Algorithm::CusparseCsrAlg1, spmv::Algorithm::CusparseCooAlg1}) {
    Plan plan(d_a.view(), vendor, spmv::Operation::NonTranspose, {}, stream);
    measure(plan, vendor == spmv::Algorithm::CusparseCsrAlg1 ? "csr_alg1" : "coo_alg1", 1);
  }
  spmv::Options hinted;
  hinted.expected_applies = expected_applies;
  {
    Plan plan(d_a.view(), spmv::Algorithm::Auto, spmv::Operation::NonTranspose, hinted, stream);
    measure(plan, "auto_hint", 0);
  }
  for (int k : chunk_counts) {
    spmv::Options options = hinted;
    options.column_span = k > 0 ? static_cast<int>((std::int64_t(a.cols) + k - 1) / k) : 0;
    Plan plan(d_a.view(), spmv::Algorithm::ColumnChunked, spmv::Operation::NonTranspose, options, stream);
    measure(plan, "chunks", k);
  }
  SPMV_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  std::string precision = "both";
  std::vector<int> chunk_counts = {0};
  std::int64_t expected_applies = 1000;
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--precision") == 0 && i + 1 < argc) precision = argv[++i];
    else if (std::strcmp(argv[i], "--expected-applies") == 0 && i + 1 < argc) expected_applies = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--chunks") == 0 && i + 1 < argc) {
      chunk_counts.clear();
      for (const auto& k : split(argv[++i], ',')) chunk_counts.push_back(std::atoi(k.c_str()));
    } else matrices.push_back(argv[i]);
  }
  if (!spmv::cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop;
  SPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s: L2 %.1f MiB\n", prop.name, prop.l2CacheSize / 1048576.0);
  for (const auto& spec : matrices) {
    const auto a = spmv::bench_tools::load_matrix_spec(spec);
    if (precision != "f64") run<float>(spec, a, chunk_counts, expected_applies);
    if (precision != "f32") run<double>(spec, a, chunk_counts, expected_applies);
  }
  return 0;
}
