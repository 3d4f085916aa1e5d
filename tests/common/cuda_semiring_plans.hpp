#pragma once
// What the CUDA semiring tests (tests/cuda/cuda_semiring_*_test.cpp) share: `planned`, a SemiringPlan on host data
// for check_semirings, and `expect_kernels_match_the_definition` with it; `for_each_compiled_pair`, a zoo matrix in
// the plan's four (value, index) pairs; `expect_degenerate_matrices`, every kernel on a matrix without entries and
// one without rows; and TwoStreams, the two-stream fixture.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/error.hpp"
#include "spmv/semiring.hpp"
#include "common/semiring_check.hpp"
#include "common/zoo.hpp"

namespace spmv::test {

// A SemiringPlan with `algorithm` and `options` on host data (check_semirings' `multiply`): A and x uploaded, y's NaN
// poison uploaded too (every entry must be written), the plan made and applied on the default stream, y downloaded.
// The plan must report `algorithm`, and its policy() must hold `shown` when that is not empty.
inline auto planned(Algorithm algorithm, Options options = {}, std::string shown = {}) {
  return [algorithm, options, shown](Semiring s, const auto& a, const auto& x, auto& y) {
    using Value = typename std::decay_t<decltype(x)>::value_type;
    const cuda::DeviceCsr d_a(a);
    const cuda::DeviceBuffer<Value> d_x{std::span<const Value>(x)};
    cuda::DeviceBuffer<Value> d_y{std::span<const Value>(y)};
    cuda::SemiringPlan plan(d_a.view(), s, algorithm, options);
    EXPECT_EQ(plan.algorithm(), algorithm);
    if (!shown.empty()) EXPECT_NE(plan.policy().find(shown), std::string::npos) << plan.policy();
    plan.apply(d_x.data(), d_y.data());
    d_y.download(std::span<Value>(y));
  };
}

// `check(m, seed, types)` with the zoo matrix `a` converted to each (value, index) pair SemiringPlan is compiled for:
// f64/i32 and f32/i64 with `seed`, f32/i32 and f64/i64 with seed + 1 (other x and y, the same matrix).
template <class Check>
void for_each_compiled_pair(const ZooMatrix& a, std::uint64_t seed, Check&& check) {
  check(convert<double, std::int32_t>(a), seed, "f64/i32");
  check(convert<float, std::int64_t>(a), seed, "f32/i64");
  check(convert<float, std::int32_t>(a), seed + 1, "f32/i32");
  check(convert<double, std::int64_t>(a), seed + 1, "f64/i64");
}

// Each of `kernels` planned on `m` against the definition, every semiring (check_semirings: min, max and or-and
// exact, plus-times within the error bound, y poisoned with NaN); `types` names the (value, index) pair.
template <class Value, class Index>
void expect_kernels_match_the_definition(std::span<const Algorithm> kernels, const CsrMatrix<Value, Index>& m,
                                         std::uint64_t seed, const char* types) {
  for (Algorithm algorithm : kernels) {
    SCOPED_TRACE(std::string(types) + ", " + std::string(to_string(algorithm)));
    for (const auto& f : check_semirings(m, seed, planned(algorithm))) ADD_FAILURE() << f;
  }
}

// Each of `kernels` on a 6 x 5 matrix without entries (nothing converted or planned: extra_bytes 0, a policy saying
// so, every row min-plus's zero over a NaN poison; a null y refused) and on one without rows (nothing written).
inline void expect_degenerate_matrices(std::span<const Algorithm> kernels) {
  using Plan = cuda::SemiringPlan<double, std::int32_t>;
  CsrMatrix<double, std::int32_t> none;
  none.rows = 6;
  none.cols = 5;
  none.row_ptr.assign(7, 0);
  const cuda::DeviceCsr d_none(none);
  CsrMatrix<double, std::int32_t> no_rows;
  no_rows.cols = 5;
  const cuda::DeviceCsr d_no_rows(no_rows);
  const cuda::DeviceBuffer<double> d_x(5);
  for (Algorithm algorithm : kernels) {
    Plan plan(d_none.view(), Semiring::MinPlus, algorithm);
    EXPECT_EQ(plan.algorithm(), algorithm);
    EXPECT_NE(plan.policy().find("no entries"), std::string::npos) << plan.policy();
    EXPECT_EQ(plan.extra_bytes(), 0u);
    std::vector<double> poison(6, std::numeric_limits<double>::quiet_NaN());
    cuda::DeviceBuffer<double> d_y{std::span<const double>(poison)};
    plan.apply(d_x.data(), d_y.data());
    EXPECT_EQ(d_y.to_host(), std::vector<double>(6, std::numeric_limits<double>::infinity())) << to_string(algorithm);
    Plan empty(d_no_rows.view(), Semiring::OrAnd, algorithm);
    EXPECT_NO_THROW(empty.apply(nullptr, nullptr));  // no rows: nothing is written
    EXPECT_THROW(plan.apply(d_x.data(), nullptr), InvalidArgument);
  }
}

// One x a stream on two non-blocking streams for `a`, y poisoned with NaN on the device, downloaded and compared
// with the CPU's product (exact for min-plus, max-times and max-min in any order).
struct TwoStreams {
  explicit TwoStreams(const CsrMatrix<double, std::int32_t>& matrix) : a(matrix), csr(matrix) {
    for (int i = 0; i < 2; ++i) {
      xs.emplace_back(static_cast<std::size_t>(a.cols));
      for (std::size_t j = 0; j < xs[i].size(); ++j) xs[i][j] = static_cast<double>((j * (i + 5)) % 31) - 9.0 * i;
      dxs.emplace_back(std::span<const double>(xs[i]));
      dys.emplace_back(static_cast<std::size_t>(a.rows));
      SPMV_CUDA_CHECK(cudaMemset(dys.back().data(), 0xff, dys.back().bytes()));  // NaN
      SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    }
  }
  ~TwoStreams() {
    for (cudaStream_t stream : streams) (void)cudaStreamDestroy(stream);
  }
  void expect_cpu(Semiring s, int i, const std::string& what) {
    SPMV_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    std::vector<double> want(static_cast<std::size_t>(a.rows));
    semiring_multiply(s, a, std::span<const double>(xs[i]), std::span(want));
    EXPECT_EQ(dys[i].to_host(), want) << what << ", stream " << i;
  }

  const CsrMatrix<double, std::int32_t>& a;
  const cuda::DeviceCsr<double, std::int32_t> csr;
  std::vector<std::vector<double>> xs;
  std::vector<cuda::DeviceBuffer<double>> dxs, dys;
  cudaStream_t streams[2] = {};
};

}  // namespace spmv::test
