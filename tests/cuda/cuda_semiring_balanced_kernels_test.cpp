// The CUDA semiring product on the SpMV's balanced CSR kernels, PCSR, Hola and segmented-sum (SemiringPlan with
// Algorithm::Pcsr, Hola, SegmentedSum; src/cuda/semiring_pcsr.cu, semiring_hola.cu, semiring_segmented_sum.cu over
// pcsr.cuh, hola_spmv.cuh, segmented_sum.cuh), modelled on cuda_semiring_formats_test.cpp: the differential body of
// common/semiring_check.hpp over the whole zoo for every kernel, semiring and (value, index) pair (min, max and
// or-and equal to the definition, plus-times within the error bound, y poisoned with NaN); one huge row spanning
// many PCSR tiles, Hola blocks and segmented-sum tiles, with runs of empty rows between tiles, Hola's COO-like mode
// and its empty rows inside a thread's range, at several block sizes (Options::block_size, hola_sort_columns); NaN
// and +-Inf among the values, and a long row of NaN terms across blocks (its ⊕-combined partials must stay the
// zero); what the plans report and refuse; PCSR's plus-times bits from product to product and equal to the SpMV's
// PCSR (the same kernels with alpha = 1, beta = 0), Hola's and segmented-sum's order-free semirings the same from
// product to product; two products of one plan on two streams at once (the workspace of PCSR and segmented-sum,
// ordered by the plan) and two plans at once. Skipped without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/cuda_semiring_plans.hpp"
#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

inline constexpr Algorithm kBalancedKernels[] = {Algorithm::Pcsr, Algorithm::Hola, Algorithm::SegmentedSum};

class CudaSemiringBalancedZoo : public testing::TestWithParam<std::size_t> {};

// Every zoo matrix (empty, 0 rows, 0 columns, 1 column, empty rows, the huge row, rectangular, power-law rows,
// unsorted columns, duplicates, explicit zeros, the SuiteSparse files) with each kernel and each (value, index)
// pair the plan is compiled for.
TEST_P(CudaSemiringBalancedZoo, MatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 43;
  for_each_compiled_pair(a, seed, [](const auto& m, std::uint64_t s, const char* types) {
    expect_kernels_match_the_definition(kBalancedKernels, m, s, types);
  });
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaSemiringBalancedZoo, zoo_indices(), zoo_case_name);

// The paths of the three kernels on one matrix of 60,000 columns, in sections:
//  - 2,000 empty rows first (before the first tile's first nonzero);
//  - short rows of 1-5 entries, every 7th row empty (PCSR tiles of many rows; Hola's buffer mode), then rows of
//    one entry up to the next multiple of 8,192 entries, so that the next section starts on a tile and block
//    boundary of every kernel at every block size below;
//  - a run of 30,000 empty rows there (PCSR's rows owned by the tile starting at that offset, segmented-sum's row
//    list, Hola's COO-like mode for the block holding the run);
//  - one row of 150,000 entries: about 75 / 150 PCSR tiles (f32 / f64), 1,170 Hola blocks (blocks inside one row:
//    the block-wide reduction, and a row shared by many blocks), 590 / 1,170 segmented-sum tiles (tiles without a
//    row end, whose carries chain into one row);
//  - rows of 3 entries, every other row empty (Hola's empty rows inside a thread's range: the row-pointer cursor);
//  - 3,000 rows of one entry with two empty rows after each (a Hola block spans about three candidate rows an
//    entry, more than its buffer slots: the COO-like mode, partial folds into y with atomics);
//  - a second long row of 20,000 entries, then 1,000 empty rows at the end (after the last tile's last nonzero).
ZooMatrix sections() {
  constexpr std::int64_t cols = 60000;
  SplitMix64 rng(91);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(2000);
  std::int64_t nnz = 0;
  const auto add_row = [&](std::int64_t length) {
    rows.emplace_back();
    for (std::int64_t k = 0; k < length; ++k)
      rows.back().emplace_back(static_cast<std::int64_t>(rng.below(cols)), rng.symmetric() * 4.0);
    nnz += length;
  };
  for (int r = 0; r < 20000; ++r) add_row(r % 7 == 3 ? 0 : 1 + static_cast<std::int64_t>(rng.below(5)));
  while (nnz % 8192 != 0) add_row(1);
  for (int r = 0; r < 30000; ++r) add_row(0);
  add_row(150000);
  for (int r = 0; r < 20000; ++r) add_row(r % 2 ? 0 : 3);
  for (int r = 0; r < 3000; ++r) {
    add_row(1);
    add_row(0);
    add_row(0);
  }
  add_row(20000);
  for (int r = 0; r < 1000; ++r) add_row(0);
  return zoo_detail::from_rows(cols, rows);
}

TEST(CudaSemiringBalanced, SectionsAcrossTilesAndBlocks) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix a = sections();
  const auto a64 = convert<double, std::int32_t>(a);
  const auto a32 = convert<float, std::int64_t>(a);
  std::vector<std::pair<Algorithm, Options>> runs;
  for (Algorithm algorithm : kBalancedKernels) runs.emplace_back(algorithm, Options{});
  for (int block : {32, 1024}) {
    Options o;
    o.block_size = block;
    runs.emplace_back(Algorithm::Pcsr, o);
  }
  for (int block : {256, 1024}) {
    Options o;
    o.block_size = block;
    o.hola_sort_columns = 1;
    runs.emplace_back(Algorithm::Hola, o);
  }
  Options wide;
  wide.block_size = 1024;
  runs.emplace_back(Algorithm::SegmentedSum, wide);
  for (const auto& [algorithm, options] : runs) {
    SCOPED_TRACE(std::string(to_string(algorithm)) + " block_size=" + std::to_string(options.block_size));
    for (const auto& f : check_semirings(a64, 92, planned(algorithm, options))) ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f : check_semirings(a32, 93, planned(algorithm, options))) ADD_FAILURE() << "f32/i64 " << f;
  }
}

// NaN and +-Inf among the stored values (and stored zeros, signed), x with NaN and -Inf: min and max ignore a NaN
// term, so a row of NaN terms gives min-plus's and max-times's zero; or-and reads NaN as true. One row of 6,000
// NaN values spans many tiles and blocks: its partial folds, each the zero, must combine to the zero. Each
// order-free semiring equals the definition with every kernel; plus-times is left to the SpMV tests (NaN sums).
TEST(CudaSemiringBalanced, NanAndInfInValues) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  SplitMix64 rng(61);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(3000);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (r % 9 == 4) continue;  // empty rows
    const std::size_t length = r % 400 == 17 ? 700 : 1 + rng.below(12);
    for (std::size_t k = 0; k < length; ++k) {
      const std::uint64_t kind = rng.below(8);
      const double v = kind == 0 ? nan : kind == 1 ? inf : kind == 2 ? -inf : kind == 3 ? (r % 2 ? 0.0 : -0.0)
                                                                                    : rng.symmetric() * 10.0;
      rows[r].emplace_back(static_cast<std::int64_t>(rng.below(3000)), v);
    }
  }
  rows[10] = {{8, nan}, {12, nan}};  // a row of NaN terms only
  rows[1500].clear();
  for (std::int64_t k = 0; k < 6000; ++k) rows[1500].emplace_back(k % 3000, nan);  // across tiles and blocks
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(3000, rows));
  std::vector<double> x(3000);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = j % 7 == 2 ? nan : j % 11 == 5 ? -inf : rng.symmetric();
  for (Algorithm algorithm : kBalancedKernels)
    for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
      SCOPED_TRACE(std::string(to_string(s)) + ", " + std::string(to_string(algorithm)));
      std::vector<double> got(static_cast<std::size_t>(a.rows), nan);
      planned(algorithm)(s, a, x, got);
      const std::vector<double> want = semiring_reference(s, a, x);
      for (std::size_t i = 0; i < want.size(); ++i)
        if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))) {
          ADD_FAILURE() << "row " << i << ": got " << got[i] << ", reference " << want[i];
          break;
        }
      if (s == Semiring::MinPlus || s == Semiring::MaxTimes) {  // NaN ⊗ x is NaN there: the row gives the zero
        EXPECT_EQ(got[10], semiring_zero<double>(s)) << "a row of NaN terms";
        EXPECT_EQ(got[1500], semiring_zero<double>(s)) << "a long row of NaN terms";
      }
    }
}

// What a plan reports: its kernel, a policy naming it and the knobs it read, its tiles or blocks in extra_bytes;
// block sizes the kernels are not compiled for are refused (InvalidArgument, as the SpMV's); a matrix without
// entries plans nothing (every row the semiring's zero), and one without rows writes nothing.
TEST(CudaSemiringBalanced, PlansReportTheirKernel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  using Plan = cuda::SemiringPlan<double, std::int32_t>;
  const auto a = convert<double, std::int32_t>(gen::poisson2d(40));
  const cuda::DeviceCsr d_a(a);
  const std::pair<Algorithm, const char*> names[] = {{Algorithm::Pcsr, "pcsr block=256 tile=1024 "},
                                                     {Algorithm::Hola, "hola block=64 nnz/thread=2 "},
                                                     {Algorithm::SegmentedSum, "segmented-sum block=128 "}};
  for (const auto& [algorithm, name] : names) {
    const Plan plan(d_a.view(), Semiring::MaxMin, algorithm);
    EXPECT_EQ(plan.algorithm(), algorithm);
    EXPECT_EQ(plan.semiring(), Semiring::MaxMin);
    EXPECT_EQ(plan.policy().rfind(name, 0), 0u) << plan.policy();
    EXPECT_GT(plan.extra_bytes(), 0u) << to_string(algorithm);
  }
  EXPECT_NE(Plan(d_a.view(), Semiring::MinPlus, Algorithm::Pcsr).policy().find("deterministic"), std::string::npos);
  EXPECT_NE(Plan(d_a.view(), Semiring::MinPlus, Algorithm::Hola).policy().find("compare-and-swap"), std::string::npos);
  EXPECT_NE(Plan(d_a.view(), Semiring::PlusTimes, Algorithm::SegmentedSum).policy().find("not bit-reproducible"),
            std::string::npos);

  Options o;
  o.block_size = 128;
  EXPECT_EQ(Plan(d_a.view(), Semiring::OrAnd, Algorithm::Pcsr, o).policy().rfind("pcsr block=128 tile=512 ", 0), 0u);
  o.block_size = 512;
  EXPECT_EQ(Plan(d_a.view(), Semiring::OrAnd, Algorithm::SegmentedSum, o).policy().rfind("segmented-sum block=512 ", 0),
            0u);
  o.block_size = 256;
  o.hola_sort_columns = 1;
  const std::string hola = Plan(d_a.view(), Semiring::OrAnd, Algorithm::Hola, o).policy();
  EXPECT_EQ(hola.rfind("hola block=256 ", 0), 0u) << hola;
  EXPECT_NE(hola.find("sort=on"), std::string::npos) << hola;
  for (Algorithm algorithm : kBalancedKernels) {
    Options odd;
    odd.block_size = algorithm == Algorithm::Pcsr ? 96 : 100;  // PCSR: powers of two; the others: multiples of 32
    EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, algorithm, odd), InvalidArgument) << to_string(algorithm);
  }
  Options sort;
  sort.hola_sort_columns = 2;
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::Hola, sort), InvalidArgument);

  expect_degenerate_matrices(kBalancedKernels);
}

// PCSR folds every row in one block in a fixed order: plus-times gives the same bits on every product of a plan,
// and the SpMV's PCSR's (alpha = 1, beta = 0: the same kernels), on power-law rows whose long rows span tiles.
// Hola and segmented-sum combine partial folds with atomics, in an order set by timing: plus-times may differ in
// its last bits there, but min-plus and max-min are exact in any order and give the same values every product
// (common/semiring_check.hpp's first_bits_difference: a zero's sign aside).
TEST(CudaSemiringBalanced, BitsFromProductToProduct) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::rmat(15, 16, 81));
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  SplitMix64 rng(82);
  for (double& v : x) v = rng.symmetric();
  const cuda::DeviceCsr d_a(a);
  const cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
  cuda::DeviceBuffer<double> d_y(static_cast<std::size_t>(a.rows));
  const auto product = [&](cuda::SemiringPlan<double, std::int32_t>& plan) {
    SPMV_CUDA_CHECK(cudaMemset(d_y.data(), 0xff, d_y.bytes()));  // NaN
    plan.apply(d_x.data(), d_y.data());
    return d_y.to_host();
  };
  {
    cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::PlusTimes, Algorithm::Pcsr);
    const std::vector<double> first = product(plan);
    for (int round = 0; round < 4; ++round) {
      const std::vector<double> again = product(plan);
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(double)), 0) << "round " << round;
    }
    cuda::Plan<double, std::int32_t> spmv(d_a.view(), Algorithm::Pcsr);
    SPMV_CUDA_CHECK(cudaMemset(d_y.data(), 0xff, d_y.bytes()));
    spmv.apply(1.0, d_x.data(), 0.0, d_y.data());
    const std::vector<double> spmv_y = d_y.to_host();
    EXPECT_EQ(std::memcmp(first.data(), spmv_y.data(), first.size() * sizeof(double)), 0)
        << "the semiring product over plus-times is the SpMV's PCSR";
  }
  for (Algorithm algorithm : kBalancedKernels)
    for (Semiring s : {Semiring::MinPlus, Semiring::MaxMin}) {
      cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), s, algorithm);
      const std::vector<double> first = product(plan);
      EXPECT_EQ(first_bits_difference(s, semiring_reference(s, a, x), first), -1)
          << to_string(algorithm) << ", " << to_string(s);
      for (int round = 0; round < 3; ++round)
        ASSERT_EQ(first_bits_difference(s, first, product(plan)), -1)
            << to_string(algorithm) << ", " << to_string(s) << ", round " << round;
    }
}

// One plan of each kernel applied on two streams at once with different x (one row of 6,000 among 20,000 rows of
// 6: PCSR's products and segmented-sum's carries are a workspace the plan orders; Hola's blockRowStarts are
// rewritten with the same values), three rounds; then two plans of different kernels at once. Every result equals
// the CPU's (min-plus, max-times, max-min: exact in any order).
TEST(CudaSemiringBalanced, TwoStreamsAtOnce) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto long_rows = convert<double, std::int32_t>(gen::long_rows(20000, 20000, 1, 6000, 6, 71));
  for (Algorithm algorithm : kBalancedKernels)
    for (Semiring s : {Semiring::MaxTimes, Semiring::MinPlus}) {
      TwoStreams t(long_rows);
      cuda::SemiringPlan<double, std::int32_t> plan(t.csr.view(), s, algorithm);
      for (int round = 0; round < 3; ++round)
        for (int i = 0; i < 2; ++i) plan.apply(t.dxs[i].data(), t.dys[i].data(), t.streams[i]);
      for (int i = 0; i < 2; ++i)
        t.expect_cpu(s, i, std::string(to_string(algorithm)) + " " + std::string(to_string(s)));
    }
  const auto poisson = convert<double, std::int32_t>(gen::poisson2d(300));
  const std::pair<Algorithm, Algorithm> pairs[] = {{Algorithm::Pcsr, Algorithm::Hola},
                                                   {Algorithm::SegmentedSum, Algorithm::Pcsr},
                                                   {Algorithm::Hola, Algorithm::SegmentedSum}};
  for (const auto& [first, second] : pairs) {
    TwoStreams t(poisson);
    cuda::SemiringPlan<double, std::int32_t> p0(t.csr.view(), Semiring::MinPlus, first);
    cuda::SemiringPlan<double, std::int32_t> p1(t.csr.view(), Semiring::MaxMin, second);
    for (int round = 0; round < 3; ++round) {
      p0.apply(t.dxs[0].data(), t.dys[0].data(), t.streams[0]);
      p1.apply(t.dxs[1].data(), t.dys[1].data(), t.streams[1]);
    }
    t.expect_cpu(Semiring::MinPlus, 0, std::string(to_string(first)));
    t.expect_cpu(Semiring::MaxMin, 1, std::string(to_string(second)));
  }
}

}  // namespace
}  // namespace spmv::test
