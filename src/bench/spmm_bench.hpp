#pragma once
// `spmv bench --k K`: SpMM, Y = alpha*op(A)*X + beta*Y with K columns, for one matrix in one precision.
// Rows (bench::BenchRow, printed and reported like the SpMV rows): on CUDA spmv's SpMM and
// cusparseSpMM (ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3; a variant cuSPARSE refuses is a skipped
// row), on the CPU spmv's SpMM and, as its baseline, K separate SpMV products of the CPU Auto operator.
// Each row is verified once against the double reference (every entry of Y under the SpMV bound
// c*eps*(|beta||y0| + |alpha| sum|a x|), c = 2(longest row of op(A) + 2)), then timed (warm-up, median;
// CUDA events on the device). speedup_vs_vendor is against the fastest baseline row (the cuSPARSE
// rows on CUDA, k-spmv on the CPU); K and the layout are the first words of each row's policy.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench_row.hpp"
#include "spmv/csr.hpp"
#include "spmv/dense.hpp"
#include "spmv/operator.hpp"

namespace spmv::bench {

inline constexpr std::string_view kSpmmByteModelDescription =
    "spmm: bytes = nnz*(sizeof value + sizeof index) + (rows+1)*sizeof index + x_rows*k*sizeof value + "
    "y_rows*k*sizeof value [+ y_rows*k*sizeof value when beta != 0]; GFLOP/s = 2*nnz*k/time";

inline std::uint64_t spmm_minimal_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t k,
                                        std::size_t value_size, std::size_t index_size, Operation op,
                                        bool beta_nonzero) {
  const auto n = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const std::uint64_t x_rows = op == Operation::NonTranspose ? n(cols) : n(rows);
  const std::uint64_t y_rows = op == Operation::NonTranspose ? n(rows) : n(cols);
  std::uint64_t bytes = n(nnz) * (value_size + index_size) + (n(rows) + 1) * index_size +
                        (x_rows + y_rows) * n(k) * value_size;
  if (beta_nonzero) bytes += y_rows * n(k) * value_size;
  return bytes;
}

struct SpmmBenchSettings {
  Backend backend = Backend::Cpu;
  Operation op = Operation::NonTranspose;
  double alpha = 1, beta = 0;
  std::int64_t k = 1;
  Layout layout = Layout::RowMajor;
  TimingOptions timing;
  Options options;  // --threads, --block-size, --device
  double bandwidth_gbs = 0;
  bool print_rows = true;
};

// Instantiated for float/double x int32_t/int64_t.
template <class Value, class Index>
std::vector<BenchRow> bench_spmm(const CsrMatrix<Value, Index>& a, const SpmmBenchSettings& settings);

}  // namespace spmv::bench
