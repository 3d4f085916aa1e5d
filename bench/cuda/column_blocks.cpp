// Issue 13 §3: do column blocks help when x exceeds L2? The matrix is cut by column ranges into K CSR
// blocks whose slice of x fits a share of L2, and y = A x runs as K products, the first with beta = 0
// and the others adding into y (beta = 1), each block's x the slice at its first column. Against Auto on
// the whole matrix and the best of cuSPARSE's CSR_ALG1 and COO_ALG1, on the same stream; every blocked y
// compared with Auto's (max |dy| over max |y|). Median of 9 samples of >= 2 ms after 3 warm-up products.
//
//   spmv_bench_column_blocks [--algo NAME] [--precision f32|f64|both] [--blocks K,K,...] MATRIX...
// MATRIX: a .mtx(.gz) file or a generator spec kind:key=value,... (bench/matrix_spec.hpp). K = 0 stands
// for the count whose x slices fill half of L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../matrix_spec.hpp"
#include "median_time.hpp"
#include "spmv/cuda/plan.hpp"

namespace {

using spmv::bench_tools::median_ms;
using spmv::bench_tools::split;
using Host = spmv::CsrMatrix<double, std::int32_t>;

// Columns [first, first + width) of a, renumbered from 0.
Host column_block(const Host& a, std::int32_t first, std::int32_t width) {
  Host b;
  b.rows = a.rows;
  b.cols = width;
  b.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (a.col_idx[k] >= first && a.col_idx[k] < first + width) {
        b.col_idx.push_back(a.col_idx[k] - first);
        b.values.push_back(a.values[k]);
      }
    b.row_ptr[r + 1] = static_cast<std::int32_t>(b.col_idx.size());
  }
  return b;
}

template <class Value>
void run(const std::string& name, const Host& a64, spmv::Algorithm algorithm, const std::vector<int>& block_counts,
         const cudaDeviceProp& prop) {
  using Matrix = spmv::CsrMatrix<Value, std::int32_t>;
  const Matrix a = spmv::convert<Value, std::int32_t>(a64);
  spmv::cuda::DeviceCsr<Value, std::int32_t> d_a(a);
  auto x = spmv::bench_tools::random_device_vector<Value>(static_cast<std::size_t>(a.cols), 7, -1.0, 1.0);
  spmv::cuda::DeviceBuffer<Value> y{static_cast<std::size_t>(a.rows)};
  cudaStream_t stream;
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto download = [&] {
    std::vector<Value> out(static_cast<std::size_t>(a.rows));
    y.download(std::span<Value>(out), stream);
    return out;
  };
  spmv::cuda::Plan<Value, std::int32_t> whole(d_a.view(), algorithm, spmv::Operation::NonTranspose, {}, stream);
  const auto whole_product = [&] { whole.apply(Value(1), x.data(), Value(0), y.data(), stream); };
  whole_product();
  const std::vector<Value> reference = download();
  double scale = 0;
  for (Value v : reference) scale = std::max(scale, std::abs(double(v)));
  const double whole_ms = median_ms(stream, whole_product);
  double vendor_ms = 1e30;
  for (auto vendor : {spmv::Algorithm::CusparseCsrAlg1, spmv::Algorithm::CusparseCooAlg1}) {
    spmv::cuda::Plan<Value, std::int32_t> v(d_a.view(), vendor, spmv::Operation::NonTranspose, {}, stream);
    vendor_ms = std::min(vendor_ms, median_ms(stream, [&] { v.apply(Value(1), x.data(), Value(0), y.data(), stream); }));
  }
  const double x_bytes = double(a.cols) * sizeof(Value);
  std::printf("%-44.44s %s x %7.1f MB  whole %-12s %8.4f ms (%.2fx vendor %8.4f)\n", name.c_str(),
              sizeof(Value) == 4 ? "f32" : "f64", x_bytes / 1e6, std::string(spmv::to_string(whole.algorithm())).c_str(),
              whole_ms, vendor_ms / whole_ms, vendor_ms);
  for (int k : block_counts) {
    if (k == 0) k = std::max(2, static_cast<int>(std::ceil(x_bytes / (0.5 * prop.l2CacheSize))));
    const std::int32_t width = static_cast<std::int32_t>((a.cols + k - 1) / k);
    std::vector<std::unique_ptr<spmv::cuda::DeviceCsr<Value, std::int32_t>>> blocks;
    std::vector<std::unique_ptr<spmv::cuda::Plan<Value, std::int32_t>>> plans;
    std::vector<std::int32_t> firsts;
    for (std::int32_t first = 0; first < a.cols; first += width) {
      const Matrix b = spmv::convert<Value, std::int32_t>(column_block(a64, first, std::min(width, std::int32_t(a.cols - first))));
      blocks.push_back(std::make_unique<spmv::cuda::DeviceCsr<Value, std::int32_t>>(b));
      plans.push_back(std::make_unique<spmv::cuda::Plan<Value, std::int32_t>>(
          blocks.back()->view(), algorithm, spmv::Operation::NonTranspose, spmv::Options{}, stream));
      firsts.push_back(first);
    }
    const auto blocked = [&] {
      for (std::size_t i = 0; i < plans.size(); ++i)
        plans[i]->apply(Value(1), x.data() + firsts[i], i == 0 ? Value(0) : Value(1), y.data(), stream);
    };
    blocked();
    const std::vector<Value> out = download();
    double diff = 0;
    for (std::size_t i = 0; i < out.size(); ++i) diff = std::max(diff, std::abs(double(out[i]) - double(reference[i])));
    const double ms = median_ms(stream, blocked);
    std::printf("    %3zu blocks of %9d columns (%6.1f MB of x): %8.4f ms = %.2fx whole, %.2fx vendor; max|dy|/max|y| %.1e; %s\n",
                plans.size(), width, double(width) * sizeof(Value) / 1e6, ms, whole_ms / ms, vendor_ms / ms,
                diff / std::max(scale, 1e-300), std::string(spmv::to_string(plans[0]->algorithm())).c_str());
  }
  SPMV_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  std::string algo_name = "auto", precision = "both";
  std::vector<int> block_counts = {0};
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--algo") == 0 && i + 1 < argc) algo_name = argv[++i];
    else if (std::strcmp(argv[i], "--precision") == 0 && i + 1 < argc) precision = argv[++i];
    else if (std::strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
      block_counts.clear();
      for (const auto& k : split(argv[++i], ',')) block_counts.push_back(std::atoi(k.c_str()));
    } else matrices.push_back(argv[i]);
  }
  if (!spmv::cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const auto algorithm = spmv::parse_algorithm(algo_name);
  if (!algorithm) {
    std::fprintf(stderr, "unknown algorithm %s\n", algo_name.c_str());
    return 2;
  }
  cudaDeviceProp prop;
  SPMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s: L2 %.1f MiB\n", prop.name, prop.l2CacheSize / 1048576.0);
  for (const auto& spec : matrices) {
    const auto a = spmv::bench_tools::load_matrix_spec(spec);
    if (precision != "f64") run<float>(spec, a, *algorithm, block_counts, prop);
    if (precision != "f32") run<double>(spec, a, *algorithm, block_counts, prop);
  }
  return 0;
}
