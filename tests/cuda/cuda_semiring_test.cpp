// The CUDA semiring products (spmv/cuda/semiring.hpp: SemiringPlan through the host overload of
// spmv/semiring.hpp, and the one-launch kernel) against the definition: the differential body of
// common/semiring_check.hpp over the zoo (both index types, f32 and f64; min, max and or-and bit for
// bit, plus-times within the error bound), rows spanning many tiles, one product on each of four
// streams at once (a kernel each, and one plan shared). Skipped without a device.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

// The device products with host vectors in and out (check_semirings' `multiply`). The host overload
// of spmv/semiring.hpp on Backend::Cuda copies A and x up, runs a SemiringPlan with Auto's kernel and
// copies y back; `planned(algorithm)` runs a SemiringPlan with that kernel on the same data.
const auto on_device = [](Semiring s, const auto& a, const auto& x, auto& y) {
  using Value = typename std::decay_t<decltype(x)>::value_type;
  semiring_multiply(Backend::Cuda, s, a, std::span<const Value>(x), std::span<Value>(y));
};
const auto planned = [](Algorithm algorithm) {
  return [algorithm](Semiring s, const auto& a, const auto& x, auto& y) {
    using Value = typename std::decay_t<decltype(x)>::value_type;
    const cuda::DeviceCsr d_a(a);
    const cuda::DeviceBuffer<Value> d_x{std::span<const Value>(x)};
    cuda::DeviceBuffer<Value> d_y{std::span<const Value>(y)};  // y's NaN poison goes up too
    cuda::SemiringPlan plan(d_a.view(), s, algorithm);
    EXPECT_EQ(plan.algorithm(), algorithm);
    plan.apply(d_x.data(), d_y.data());
    d_y.download(std::span<Value>(y));
  };
};

class CudaSemiringZoo : public testing::TestWithParam<std::size_t> {};

TEST_P(CudaSemiringZoo, MatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name);
  for (const auto& f : check_semirings(convert<double, std::int32_t>(a), seed, on_device)) ADD_FAILURE() << "f64/i32 " << f;
  for (const auto& f : check_semirings(convert<float, std::int64_t>(a), seed, on_device)) ADD_FAILURE() << "f32/i64 " << f;
  for (const Algorithm algorithm : {Algorithm::CsrVector, Algorithm::MergePath}) {
    for (const auto& f : check_semirings(convert<float, std::int32_t>(a), seed, planned(algorithm)))
      ADD_FAILURE() << to_string(algorithm) << " f32/i32 " << f;
    for (const auto& f : check_semirings(convert<double, std::int64_t>(a), seed, planned(algorithm)))
      ADD_FAILURE() << to_string(algorithm) << " f64/i64 " << f;
  }
}

// The merge-based plan on rows far longer than a tile (its carries cross many tiles, added with the
// compare-and-swap loop) and on power-law rows: every semiring against the definition.
TEST(CudaSemiringPlan, RowsSpanningManyTiles) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (const auto& [name, a] : {std::pair{"long_rows", gen::long_rows(3000, 20000, 3, 15000, 2, 7)},
                                std::pair{"rmat", gen::rmat(14, 16, 5)}}) {
    SCOPED_TRACE(name);
    const auto merge_path = planned(Algorithm::MergePath);
    for (const auto& f : check_semirings(convert<double, std::int32_t>(a), 41, merge_path)) ADD_FAILURE() << "f64 " << f;
    for (const auto& f : check_semirings(convert<float, std::int64_t>(a), 43, merge_path)) ADD_FAILURE() << "f32 " << f;
  }
}

// Auto's kernel from the row statistics; algorithms without a semiring kernel are refused.
TEST(CudaSemiringPlan, AutoChoosesByRowStatistics) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto choice = [](const gen::Matrix& m) {
    const auto a = convert<float, std::int32_t>(m);
    const cuda::DeviceCsr d_a(a);
    return cuda::SemiringPlan(d_a.view(), Semiring::MinPlus).algorithm();
  };
  EXPECT_EQ(choice(gen::rmat(12, 16, 3)), Algorithm::CsrVector);  // 65 k nonzeros: launch-bound
  EXPECT_EQ(choice(gen::poisson3d(70)), Algorithm::CsrVector);    // 2.4 M nonzeros, 7 per row, regular
  EXPECT_EQ(choice(gen::rmat(18, 8, 1, 0.5, 0.1667, 0.1667)), Algorithm::MergePath);  // power law
  EXPECT_EQ(choice(gen::long_rows(100000, 100000, 4, 50000, 4, 1)), Algorithm::MergePath);  // few huge rows
  EXPECT_EQ(choice(gen::mostly_empty(400000, 400000, 0.05, 16, 1)), Algorithm::MergePath);  // 95% empty rows
  const auto a = convert<float, std::int32_t>(gen::poisson2d(20));
  const cuda::DeviceCsr d_a(a);
  EXPECT_THROW(cuda::SemiringPlan(d_a.view(), Semiring::OrAnd, Algorithm::Hola), Unsupported);
}

// From 2^20 nonzeros the row kernel takes csr-vector's width rule (16 lanes rounded up to 32), below it
// and on mostly empty rows 4 lanes or 32 from 12 a row: each width it is compiled for, checked against
// the definition for every semiring.
TEST(CudaSemiringPlan, RowKernelWidthsFromCsrVectorsRule) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::pair<const char*, gen::Matrix> cases[] = {
      {"subwarp=2 ", gen::poisson2d(500)},                          // 5 a row
      {"subwarp=4 ", gen::banded(80000, 7, 3)},                     // 15 a row, local columns
      {"subwarp=8 ", gen::random_uniform(50000, 50000, 24, 3)},     // 24 scattered: 24 / 3
      {"subwarp=32 ", gen::random_uniform(30000, 30000, 40, 3)},    // 40 scattered: 16 lanes, rounded up
      {"subwarp=32 ", gen::random_uniform(6000, 20000, 200, 3)},
      {"subwarp=4 ", gen::poisson2d(60)},                           // 18 k nonzeros: launch-bound, short rows
      {"subwarp=32 ", gen::random_uniform(5000, 20000, 40, 3)},     // 0.2 M nonzeros, 40 a row
      {"subwarp=4 ", gen::mostly_empty(400000, 400000, 0.25, 16, 3)},   // 75% empty: 4 a row overall
      {"subwarp=2 ", gen::mostly_empty(400000, 400000, 0.6, 8, 3)}};    // 40% empty rows: the semiring's zero
  for (const auto& [expected, m] : cases) {
    SCOPED_TRACE(expected);
    const auto a = convert<float, std::int32_t>(m);
    const cuda::DeviceCsr d_a(a);
    const cuda::SemiringPlan plan(d_a.view(), Semiring::MinPlus, Algorithm::CsrVector);
    EXPECT_NE(plan.policy().find(expected), std::string::npos) << plan.policy();
    const auto rows = planned(Algorithm::CsrVector);
    for (const auto& f : check_semirings(a, 17, rows)) ADD_FAILURE() << "f32/i32 " << f;
    for (const auto& f : check_semirings(convert<double, std::int64_t>(m), 19, rows)) ADD_FAILURE() << "f64/i64 " << f;
  }
}

// One plan applied on four streams with four different x, enqueued before any is waited for: the
// plan's workspace (the tiles' carries) is shared, so the products must be ordered; each result
// equals the CPU's bit for bit. Then a moved-from plan refuses, and an empty matrix writes nothing.
TEST(CudaSemiringPlan, OnePlanOnFourStreams) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::long_rows(2000, 2000, 4, 1500, 3, 9));
  const cuda::DeviceCsr csr(a);
  cuda::SemiringPlan<double, std::int32_t> plan(csr.view(), Semiring::MinPlus, Algorithm::MergePath);
  EXPECT_EQ(plan.semiring(), Semiring::MinPlus);
  EXPECT_GT(plan.extra_bytes(), 0u);
  std::vector<std::vector<double>> xs(4, std::vector<double>(static_cast<std::size_t>(a.cols)));
  std::vector<cuda::DeviceBuffer<double>> dxs, dys;
  cudaStream_t streams[4];
  for (int i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < xs[i].size(); ++j) xs[i][j] = static_cast<double>((j * (i + 3)) % 29) - 7.0 * i;
    dxs.emplace_back(std::span<const double>(xs[i]));
    dys.emplace_back(static_cast<std::size_t>(a.rows));
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
  }
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 4; ++i) plan.apply(dxs[i].data(), dys[i].data(), streams[i]);
  for (int i = 0; i < 4; ++i) {
    SPMV_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    SPMV_CUDA_CHECK(cudaStreamDestroy(streams[i]));
    std::vector<double> want(static_cast<std::size_t>(a.rows));
    semiring_multiply(Semiring::MinPlus, a, std::span<const double>(xs[i]), std::span(want));
    EXPECT_EQ(dys[i].to_host(), want) << "stream " << i;
  }
  cuda::SemiringPlan<double, std::int32_t> moved(std::move(plan));
  EXPECT_THROW(plan.apply(dxs[0].data(), dys[0].data()), InvalidArgument);  // NOLINT: use after move on purpose
  EXPECT_THROW(moved.apply(nullptr, dys[0].data()), InvalidArgument);
  CsrMatrix<double, std::int32_t> empty;
  empty.cols = 5;
  const cuda::DeviceCsr d_empty(empty);
  cuda::SemiringPlan<double, std::int32_t> none(d_empty.view(), Semiring::OrAnd, Algorithm::MergePath);
  EXPECT_NO_THROW(none.apply(dxs[0].data(), nullptr));  // no rows: nothing is written
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
