#pragma once
// The CUDA semiring tests' two-stream fixture (tests/cuda/cuda_semiring_*_test.cpp): one x a stream on two
// non-blocking streams for `a`, y poisoned with NaN on the device, downloaded and compared with the CPU's
// product (exact for min-plus, max-times and max-min, whatever order the device combined the terms in).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/error.hpp"
#include "spmv/semiring.hpp"

namespace spmv::test {

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
