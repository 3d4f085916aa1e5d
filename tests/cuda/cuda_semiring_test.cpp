// The CUDA semiring products (spmv/cuda/semiring.hpp: SemiringPlan through the host overload of
// spmv/semiring.hpp, and the one-launch kernel) against the definition: the differential body of
// common/semiring_check.hpp over the zoo (both index types, f32 and f64; min, max and or-and bit for
// bit, plus-times within the error bound), rows spanning many tiles, one product on each of four
// streams at once (a kernel each, and one plan shared), and the SELL-C-sigma plan (Algorithm::Sell): the
// zoo, a hand-computed matrix whose padding would change min-plus, max-times and max-min, its two threads a
// row, its empty rows left out of the slices, and its refusal by the padding rule. Skipped without a device.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
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

// Whether SemiringPlan's SELL conversion (src/cuda/sell_layout.cuh: C = 32, sigma = 256, the padding rule)
// refuses `a`: the host conversion of the same rows, i.e. of the non-empty rows alone when more than half
// the rows are empty (the device leaves those out of the slices; stable, so the windows hold the same rows).
template <class Value, class Index>
bool device_sell_refuses(const CsrMatrix<Value, Index>& a) {
  CsrMatrix<Value, Index> sliced = a;
  std::int64_t empty = 0;
  for (Index i = 0; i < a.rows; ++i) empty += a.row_ptr[i] == a.row_ptr[i + 1];
  if (static_cast<double>(empty) > 0.5 * static_cast<double>(a.rows)) {
    sliced.row_ptr.assign(1, Index(0));
    for (Index i = 0; i < a.rows; ++i)
      if (a.row_ptr[i] != a.row_ptr[i + 1]) sliced.row_ptr.push_back(a.row_ptr[i + 1]);
    sliced.rows = static_cast<Index>(sliced.row_ptr.size() - 1);
  }
  Options sell;
  sell.sell_c = 32;
  sell.sell_sigma = 256;
  return to_sell_refuses(sliced, sell);
}

// SemiringPlan with Algorithm::Sell on every zoo matrix: the definition's values (min, max and or-and bit for
// bit), or Unsupported exactly where the padding rule refuses (the zoo's huge rows).
TEST_P(CudaSemiringZoo, SellMatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 11;
  const auto check = [&](const auto& m, const char* types) {
    SCOPED_TRACE(types);
    if (device_sell_refuses(m)) {
      const cuda::DeviceCsr d_a(m);
      EXPECT_THROW(cuda::SemiringPlan(d_a.view(), Semiring::MinPlus, Algorithm::Sell), Unsupported);
      return;
    }
    for (const auto& f : check_semirings(m, seed, planned(Algorithm::Sell))) ADD_FAILURE() << f;
  };
  check(convert<float, std::int32_t>(a), "f32/i32");
  check(convert<double, std::int64_t>(a), "f64/i64");
  check(convert<double, std::int32_t>(a), "f64/i32");
}

// Rows of lengths 1, 3, 0, 2 (row 3 unsorted): sorted 1, 3, 0, 2 into one slice of width 3, rows 0, 2 and 3
// padded. A padding slot read as value 0 at column 0 would bring 0 ⊗ x0 into them: -5 into min-plus's row 0
// (not 1) and empty row (not inf), -0 into max-times's row 0 (above -2), -5 into max-min's empty row. The
// same hand-computed values as tests/cpu/semiring_sell_test.cpp's, x = (-5, 2, 4).
TEST(CudaSemiringPlan, SellPaddingNeverEntersARow) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  CsrMatrix<double, std::int32_t> a;
  a.rows = 4;
  a.cols = 3;
  a.row_ptr = {0, 1, 4, 4, 6};
  a.col_idx = {1, 0, 1, 2, 2, 1};
  a.values = {-1.0, 1.0, 3.0, -2.0, 0.5, -0.5};
  const std::vector<double> x = {-5.0, 2.0, 4.0};
  constexpr double inf = std::numeric_limits<double>::infinity();
  const std::pair<Semiring, std::vector<double>> cases[] = {
      {Semiring::PlusTimes, {-2.0, -7.0, 0.0, 1.0}},     {Semiring::MinPlus, {1.0, -4.0, inf, 1.5}},
      {Semiring::MaxTimes, {-2.0, 6.0, -inf, 2.0}},      {Semiring::OrAnd, {1.0, 1.0, 0.0, 1.0}},
      {Semiring::MaxMin, {-1.0, 2.0, -inf, 0.5}}};
  for (const auto& [s, want] : cases) {
    std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
    planned(Algorithm::Sell)(s, a, x, y);
    EXPECT_EQ(y, want) << to_string(s);
  }
}

// The SELL plan's other paths against the definition for every semiring: two threads a row (few, long rows:
// the SELL SpMV's rule), the empty rows left out of the slices (95% empty: their zero written from the bit
// mask by the same launch), all rows empty, and no rows (nothing written). Then the refusal of a huge row.
TEST(CudaSemiringPlan, SellPaths) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::pair<const char*, gen::Matrix> cases[] = {
      {"threads_per_row=2", gen::random_uniform(3000, 8000, 64, 5)},
      {"nonempty_rows=", gen::mostly_empty(200000, 200000, 0.05, 16, 5)},
      {"threads_per_row=1", gen::poisson2d(300)},
      {"slices=0", zoo_detail::empty(40, 9)}};
  for (const auto& [expected, m] : cases) {
    SCOPED_TRACE(expected);
    const auto a = convert<float, std::int32_t>(m);
    const cuda::DeviceCsr d_a(a);
    const cuda::SemiringPlan plan(d_a.view(), Semiring::MaxMin, Algorithm::Sell);
    EXPECT_EQ(plan.algorithm(), Algorithm::Sell);
    EXPECT_NE(plan.policy().find(expected), std::string::npos) << plan.policy();
    for (const auto& f : check_semirings(a, 61, planned(Algorithm::Sell))) ADD_FAILURE() << "f32/i32 " << f;
    for (const auto& f : check_semirings(convert<double, std::int64_t>(m), 62, planned(Algorithm::Sell)))
      ADD_FAILURE() << "f64/i64 " << f;
  }
  CsrMatrix<double, std::int32_t> no_rows;
  no_rows.cols = 5;
  const cuda::DeviceCsr d_no_rows(no_rows);
  cuda::SemiringPlan<double, std::int32_t> none(d_no_rows.view(), Semiring::OrAnd, Algorithm::Sell);
  EXPECT_EQ(none.algorithm(), Algorithm::Sell);
  EXPECT_NO_THROW(none.apply(nullptr, nullptr));  // no rows: nothing is written
  const auto huge = convert<double, std::int32_t>(gen::long_rows(1000, 100003, 1, 100000, 3, 104));
  ASSERT_TRUE(device_sell_refuses(huge));
  const cuda::DeviceCsr d_huge(huge);
  EXPECT_THROW(cuda::SemiringPlan(d_huge.view(), Semiring::MinPlus, Algorithm::Sell), Unsupported);
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
  EXPECT_THROW(cuda::SemiringPlan(d_a.view(), Semiring::OrAnd, Algorithm::CusparseCsrAlg1), Unsupported);
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

INSTANTIATE_TEST_SUITE_P(Zoo, CudaSemiringZoo, zoo_indices(), zoo_case_name);

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
