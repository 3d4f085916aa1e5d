// The CUDA LMA operator against the assembled matrix's product on the CPU (tests/common/lma_check.hpp):
// the host-vector face (fem::make_cuda_lma_operator) over float/double, both index types, alpha and beta
// in {0, 1, -1, 0.5} with NaN in y when beta = 0 and in x when alpha = 0; the device-native face
// (cuda::make_lma_operator) on a stream, bit-identical from run to run (no atomics), and captured in a
// CUDA graph. Skips without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/lma_check.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/lma.hpp"
#include "spmv/fem.hpp"
#include "spmv/operator.hpp"

namespace {

using spmv::fem::MeshParams;

#define SKIP_WITHOUT_GPU() \
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device"

template <class V, class I>
struct Types {
  using Value = V;
  using Index = I;
};
template <class T>
class CudaLma : public ::testing::Test {};
using TypeList = ::testing::Types<Types<float, std::int32_t>, Types<float, std::int64_t>, Types<double, std::int32_t>,
                                  Types<double, std::int64_t>>;
TYPED_TEST_SUITE(CudaLma, TypeList);

TYPED_TEST(CudaLma, MatchesTheAssembledProduct) {
  SKIP_WITHOUT_GPU();
  using Value = typename TypeParam::Value;
  using Index = typename TypeParam::Index;
  for (const MeshParams& m : {MeshParams{2, 1, 0.5, 0.05}, MeshParams{2, 2, 0.5, 0.05}, MeshParams{2, 33, 0.5, 0.05},
                              MeshParams{3, 1, 0.5, 0.05}, MeshParams{3, 2, 0.5, 0.05}, MeshParams{3, 13, -0.9, 0.05}}) {
    SCOPED_TRACE("fem" + std::to_string(m.dim) + "d n=" + std::to_string(m.n));
    const auto p = spmv::fem::build<Value, Index>(m);
    const auto gma = spmv::fem::build<double, std::int64_t>(m, {.element_data = false}).matrix;
    auto op = spmv::fem::make_lma_operator(spmv::Backend::Cuda, p);
    EXPECT_EQ(op->backend(), spmv::Backend::Cuda);
    spmv::test::expect_lma_equals_gma(p, gma, *op);
  }
}

// Device pointers on a non-default stream: correct, the same bits on every run, and capturable.
TEST(CudaLmaDevice, StreamDeterminismAndGraphCapture) {
  SKIP_WITHOUT_GPU();
  const MeshParams m{3, 24, 0.5, 0.05};
  const auto p = spmv::fem::build<double, std::int32_t>(m);
  const auto gma = spmv::fem::build<double, std::int64_t>(m, {.element_data = false}).matrix;
  auto op = spmv::cuda::make_lma_operator(p);
  ASSERT_EQ(op->rows(), p.unknowns);
  const auto n = static_cast<std::size_t>(p.unknowns);
  const auto x = spmv::test::lma_random_values<double>(n, 3);
  const auto y0 = spmv::test::lma_random_values<double>(n, 4);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
  std::vector<std::vector<double>> results;
  for (int run = 0; run < 3; ++run) {
    spmv::cuda::DeviceBuffer<double> d_y{std::span<const double>(y0)};
    op->apply(0.5, d_x.data(), -1.0, d_y.data(), stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    results.push_back(d_y.to_host());
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  const auto report = spmv::test::check_lma<double, std::int32_t>(p, gma, 0.5, x, -1.0, y0, results[0]);
  EXPECT_TRUE(report.passed()) << report.describe();

  spmv::cuda::DeviceBuffer<double> d_y{std::span<const double>(y0)};
  cudaGraph_t graph;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  op->apply(0.5, d_x.data(), -1.0, d_y.data(), stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << "apply() is not capturable";
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(d_y.to_host(), results[0]);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
