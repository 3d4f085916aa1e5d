// The CUDA semiring products (spmv/cuda/semiring.hpp, through the host overload of spmv/semiring.hpp) against
// the definition: the differential body of
// common/semiring_check.hpp over the zoo (both index types, f32 and f64; min, max and or-and bit for
// bit, plus-times within the error bound), and one product on each of four streams at once. Skipped
// without a device.
#include <gtest/gtest.h>

#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

// The device product with host vectors in and out (check_semirings' `multiply`): the host overload of
// spmv/semiring.hpp on Backend::Cuda, which copies A and x up, runs the device kernel and copies y back.
const auto on_device = [](Semiring s, const auto& a, const auto& x, auto& y) {
  using Value = typename std::decay_t<decltype(x)>::value_type;
  semiring_multiply(Backend::Cuda, s, a, std::span<const Value>(x), std::span<Value>(y));
};

class CudaSemiringZoo : public testing::TestWithParam<std::size_t> {};

TEST_P(CudaSemiringZoo, MatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name);
  for (const auto& f : check_semirings(convert<double, std::int32_t>(a), seed, on_device)) ADD_FAILURE() << "f64/i32 " << f;
  for (const auto& f : check_semirings(convert<float, std::int64_t>(a), seed, on_device)) ADD_FAILURE() << "f32/i64 " << f;
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaSemiringZoo, testing::Range<std::size_t>(0, zoo().size()),
                         [](const testing::TestParamInfo<std::size_t>& info) { return zoo()[info.param].name; });

// Four streams, each its own semiring on one matrix, enqueued before any is waited for: each result
// equals the CPU's bit for bit (min, max, or-and).
TEST(CudaSemiring, ConcurrentStreams) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(zoo_matrix("power_law_rmat12"));
  const Semiring kinds[] = {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin};
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = static_cast<double>(j % 17) - 8.0;
  const cuda::DeviceCsr csr(a);
  const cuda::DeviceBuffer<double> dx{std::span<const double>(x)};
  std::vector<cuda::DeviceBuffer<double>> ys;
  cudaStream_t streams[4];
  for (int i = 0; i < 4; ++i) {
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    ys.emplace_back(static_cast<std::size_t>(a.rows));
    cuda::semiring_multiply(kinds[i], csr.view(), dx.data(), ys.back().data(), streams[i]);
  }
  for (int i = 0; i < 4; ++i) {
    SPMV_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    SPMV_CUDA_CHECK(cudaStreamDestroy(streams[i]));
    std::vector<double> want(static_cast<std::size_t>(a.rows));
    semiring_multiply(kinds[i], a, std::span<const double>(x), std::span(want));
    EXPECT_EQ(ys[i].to_host(), want) << to_string(kinds[i]);
  }
}

}  // namespace
}  // namespace spmv::test
