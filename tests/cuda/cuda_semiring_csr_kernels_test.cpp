// The CUDA semiring product on the SpMV's CSR kernels csr-scalar, csr-coop, CSR-Adaptive and LightSpMV
// (SemiringPlan with Algorithm::CsrScalar, CsrCoop, CsrAdaptive, LightSpmv; src/cuda/semiring_csr_scalar.cu,
// semiring_csr_coop.cu, semiring_csr_adaptive.cu, semiring_lightspmv.cu, whose kernel bodies are the SpMV's):
// the differential body of common/semiring_check.hpp over the whole zoo for every kernel, semiring and (value,
// index) pair (min, max and or-and equal to the definition, plus-times within the error bound, y poisoned with
// NaN); each compiled lane width of csr-coop and LightSpMV; the Options they read; NaN and +-Inf among the
// values; one huge row (split over CUDA blocks by CSR-Adaptive, its chunks ⊕-added atomically) among empty rows;
// the plans' reports; the plus-times bits from product to product; two plans on two streams at once and one
// LightSpMV plan (a workspace) on two streams. Skipped without a device.
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
#include "spmv/cuda/semiring.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr Algorithm kCsrKernels[] = {Algorithm::CsrScalar, Algorithm::CsrCoop, Algorithm::CsrAdaptive,
                                     Algorithm::LightSpmv};

class CudaSemiringCsrKernelsZoo : public testing::TestWithParam<std::size_t> {};

// Every zoo matrix (empty, 0 rows, 0 columns, 1 column, empty rows, the huge row, rectangular, power-law rows,
// unsorted columns, duplicates, explicit zeros, the SuiteSparse files) with each kernel and each (value, index)
// pair the plan is compiled for. No kernel refuses a matrix: the CSR kernels read A in place.
TEST_P(CudaSemiringCsrKernelsZoo, MatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 37;
  for_each_compiled_pair(a, seed, [](const auto& m, std::uint64_t s, const char* types) {
    expect_kernels_match_the_definition(kCsrKernels, m, s, types);
  });
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaSemiringCsrKernelsZoo, zoo_indices(), zoo_case_name);


// csr-coop's lanes a row (the power of two at or above sqrt(mean length): 1, 2, 4, 8, 16, 32) and LightSpMV's
// vector sizes (2, 4, 8, 32 from the rounded mean length) are each compiled per semiring: every width the rules
// pick, checked against the definition in f64/i32 and f32/i64, rows a third empty.
TEST(CudaSemiringCsrKernels, EveryCompiledWidth) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  // Mean lengths over all rows (a third are empty) and the widths they give: coop, LightSpMV's vector.
  const struct {
    std::int64_t length;
    const char* coop;
    const char* vector;
  } cases[] = {{1, "coop=1 ", "vector=2 "},   {3, "coop=2 ", "vector=2 "},     {5, "coop=2 ", "vector=4 "},
               {15, "coop=4 ", "vector=8 "},  {60, "coop=8 ", "vector=8 "},    {300, "coop=16 ", "vector=32 "},
               {1500, "coop=32 ", "vector=32 "}};
  for (const auto& c : cases) {
    SCOPED_TRACE("length " + std::to_string(c.length));
    const std::int64_t rows = std::max<std::int64_t>(30, 60000 / c.length);
    const auto a = convert<double, std::int32_t>(zoo_detail::random_rows(rows, 5000, c.length, true, 91 + c.length));
    const cuda::DeviceCsr d_a(a);
    const cuda::SemiringPlan<double, std::int32_t> coop(d_a.view(), Semiring::MinPlus, Algorithm::CsrCoop);
    EXPECT_NE(coop.policy().find(c.coop), std::string::npos) << coop.policy();
    const cuda::SemiringPlan<double, std::int32_t> light(d_a.view(), Semiring::MinPlus, Algorithm::LightSpmv);
    EXPECT_NE(light.policy().find(c.vector), std::string::npos) << light.policy();
    for (Algorithm algorithm : {Algorithm::CsrCoop, Algorithm::LightSpmv}) {
      for (const auto& f : check_semirings(a, 92, planned(algorithm)))
        ADD_FAILURE() << to_string(algorithm) << " f64/i32 " << f;
      for (const auto& f : check_semirings(convert<float, std::int64_t>(a), 93, planned(algorithm)))
        ADD_FAILURE() << to_string(algorithm) << " f32/i64 " << f;
    }
  }
}

// NaN and +-Inf among the stored values (and stored zeros, signed), x with NaN and -Inf: min and max ignore a NaN
// term, so a row of NaN terms gives min-plus's and max-times's zero; or-and reads NaN as true. Each order-free
// semiring equals the definition with every kernel, on short rows and on rows long enough for CSR-Adaptive's
// CSR-Vector and CSR-VectorL paths (its block reductions and its atomic ⊕ of a split row's chunks).
TEST(CudaSemiringCsrKernels, NanAndInfInValues) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SplitMix64 rng(61);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(300);
  const auto value = [&](std::size_t r) {
    const std::uint64_t kind = rng.below(8);
    return kind == 0   ? nan
           : kind == 1 ? inf
           : kind == 2 ? -inf
           : kind == 3 ? (r % 2 ? 0.0 : -0.0)
                       : rng.symmetric() * 10.0;
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (r % 9 == 4) continue;  // empty rows
    const std::int64_t length = r == 7 ? 3000 : r == 100 ? 20000 : 1 + static_cast<std::int64_t>(rng.below(12));
    for (std::int64_t k = 0; k < length; ++k) rows[r].emplace_back(static_cast<std::int64_t>(rng.below(300)), value(r));
  }
  rows[10] = {{8, nan}, {12, nan}};  // a row of NaN terms only
  rows[200].assign(9000, {5, nan});  // a long row of NaN terms only (split by CSR-Adaptive in f64)
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(300, rows));
  std::vector<double> x(300);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = j % 7 == 2 ? nan : j % 11 == 6 ? -inf : rng.symmetric();
  const cuda::DeviceCsr d_a(a);
  const cuda::SemiringPlan<double, std::int32_t> adaptive(d_a.view(), Semiring::MinPlus, Algorithm::CsrAdaptive);
  EXPECT_NE(adaptive.policy().find("split_rows=2 "), std::string::npos) << adaptive.policy();
  for (Algorithm algorithm : kCsrKernels)
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
        EXPECT_EQ(got[200], semiring_zero<double>(s)) << "a long row of NaN terms";
      }
    }
}

// One huge row (100,000 entries: CSR-Adaptive splits it over 25 CUDA blocks in f64, 13 in f32, and ⊕-adds their
// chunks atomically into a row first set to the zero) among runs of empty rows longer than CSR-Adaptive's window
// (several row blocks of empty rows) and short rows; x with its smallest entry in the huge row's last chunk and
// its largest in its first, so that a lost or doubled chunk changes min-plus, max-times and max-min. Every empty
// row gives the semiring's zero.
TEST(CudaSemiringCsrKernels, HugeRowAmongEmptyRows) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(12000);
  SplitMix64 rng(71);
  for (std::int64_t c = 0; c < 100000; ++c) rows[5000].emplace_back(c, 1.0 + 0.25 * rng.symmetric());
  for (std::size_t r = 9000; r < rows.size(); r += 2)
    for (int k = 0; k < 4; ++k)
      rows[r].emplace_back(static_cast<std::int64_t>(rng.below(100000)), rng.symmetric());
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(100000, rows));
  std::vector<double> x(100000);
  for (double& v : x) v = rng.symmetric();
  x[99990] = -50.0;  // the minimum, in the last chunk
  x[3] = 50.0;       // the maximum, in the first
  const cuda::DeviceCsr d_a(a);
  const cuda::SemiringPlan<double, std::int32_t> adaptive(d_a.view(), Semiring::MinPlus, Algorithm::CsrAdaptive);
  EXPECT_NE(adaptive.policy().find("split_rows=1 "), std::string::npos) << adaptive.policy();
  for (Algorithm algorithm : kCsrKernels) {
    SCOPED_TRACE(to_string(algorithm));
    for (const auto& f : check_semirings(a, 72, planned(algorithm))) ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f : check_semirings(convert<float, std::int64_t>(a), 73, planned(algorithm)))
      ADD_FAILURE() << "f32/i64 " << f;
    for (Semiring s : kSemirings) {  // plus-times's huge row: check_semirings' error bound above
      std::vector<double> got(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
      planned(algorithm)(s, a, x, got);
      const std::vector<double> want = semiring_reference(s, a, x);
      for (std::size_t r = 0; r < got.size(); ++r)
        if (rows[r].empty()) ASSERT_EQ(got[r], semiring_zero<double>(s)) << to_string(s) << ", empty row " << r;
      if (s != Semiring::PlusTimes) EXPECT_EQ(got[5000], want[5000]) << to_string(s) << ", the huge row";
    }
  }
}

// What a plan reports: its kernel, a policy naming it with the SpMV's launch parameters, extra_bytes (CSR-Adaptive's
// row blocks, LightSpMV's counter, nothing for the others: A is read in place); a matrix without entries runs no
// CSR kernel (every row the semiring's zero), and one without rows writes nothing. Auto never takes them.
TEST(CudaSemiringCsrKernels, PlansReportTheirKernel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::poisson2d(40));
  const cuda::DeviceCsr d_a(a);
  const std::pair<Algorithm, const char*> names[] = {{Algorithm::CsrScalar, "csr-scalar block=256"},
                                                     {Algorithm::CsrCoop, "csr-coop block=128 coop=4 repeat=1 "},
                                                     {Algorithm::CsrAdaptive, "csr-adaptive block=256 window=1024 "},
                                                     {Algorithm::LightSpmv, "lightspmv block=256 grid="}};
  for (const auto& [algorithm, name] : names) {
    const cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::MaxMin, algorithm);
    EXPECT_EQ(plan.algorithm(), algorithm);
    EXPECT_EQ(plan.semiring(), Semiring::MaxMin);
    EXPECT_EQ(plan.policy().rfind(name, 0), 0u) << plan.policy();
    if (algorithm == Algorithm::CsrAdaptive)
      EXPECT_GT(plan.extra_bytes(), 0u);
    else if (algorithm == Algorithm::LightSpmv)
      EXPECT_EQ(plan.extra_bytes(), sizeof(unsigned int));  // the 32-bit row counter of 32-bit indices
    else
      EXPECT_EQ(plan.extra_bytes(), 0u) << to_string(algorithm);
  }
  const auto a64 = convert<float, std::int64_t>(gen::poisson2d(40));
  const cuda::DeviceCsr d_a64(a64);
  const cuda::SemiringPlan<float, std::int64_t> light64(d_a64.view(), Semiring::OrAnd, Algorithm::LightSpmv);
  EXPECT_EQ(light64.extra_bytes(), sizeof(unsigned long long));
  const cuda::SemiringPlan<float, std::int64_t> adaptive32(d_a64.view(), Semiring::OrAnd, Algorithm::CsrAdaptive);
  EXPECT_NE(adaptive32.policy().find("window=2048 "), std::string::npos) << adaptive32.policy();

  expect_degenerate_matrices(kCsrKernels);
  for (const gen::Matrix& m :
       {gen::poisson2d(200), gen::rmat(14, 16, 32), gen::mostly_empty(200000, 200000, 0.05, 16, 2)}) {
    const auto f = convert<float, std::int32_t>(m);
    const cuda::DeviceCsr d_f(f);
    const Algorithm chosen = cuda::SemiringPlan<float, std::int32_t>(d_f.view(), Semiring::MinPlus).algorithm();
    for (Algorithm algorithm : kCsrKernels) EXPECT_NE(chosen, algorithm);
  }
}

// The Options the SpMV's kernels read reach them through the plan, each checked against the definition: block_size
// (every kernel), coop and repeat (csr-coop), subwarp (LightSpMV's vector, 16 only this way); values outside the
// compiled sets are refused as the SpMV refuses them (InvalidArgument). Two rows of 9,000 among rows of 4: CSR-Adaptive
// splits them, also at 64 and 1024 threads a block.
TEST(CudaSemiringCsrKernels, OptionsReachTheKernels) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  using Plan = cuda::SemiringPlan<double, std::int32_t>;
  const auto a = convert<double, std::int32_t>(gen::long_rows(20000, 20000, 2, 9000, 4, 75));
  const cuda::DeviceCsr d_a(a);
  const auto check = [&](Algorithm algorithm, const Options& options, const std::string& shown) {
    SCOPED_TRACE(std::string(to_string(algorithm)) + ", " + shown);
    for (const auto& f : check_semirings(a, 76, planned(algorithm, options, shown))) ADD_FAILURE() << f;
  };
  Options scalar;
  scalar.block_size = 64;
  check(Algorithm::CsrScalar, scalar, "csr-scalar block=64");
  Options coop;
  coop.block_size = 256;
  coop.coop = 16;
  coop.repeat = 3;
  check(Algorithm::CsrCoop, coop, "block=256 coop=16 repeat=3 ");
  for (int threads : {64, 1024}) {
    Options adaptive;
    adaptive.block_size = threads;
    check(Algorithm::CsrAdaptive, adaptive, "csr-adaptive block=" + std::to_string(threads) + " ");
  }
  Options light;
  light.block_size = 128;
  light.subwarp = 16;
  check(Algorithm::LightSpmv, light, "lightspmv block=128 ");
  check(Algorithm::LightSpmv, light, "vector=16 ");

  Options odd_coop;
  odd_coop.coop = 3;
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::CsrCoop, odd_coop), InvalidArgument);
  Options odd_block;
  odd_block.block_size = 96;  // whole warps, not a power of two: CUB's block sizes refuse it
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::CsrAdaptive, odd_block), InvalidArgument);
  EXPECT_NO_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::LightSpmv, odd_block));
  odd_block.block_size = 48;  // not whole warps
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::CsrCoop, odd_block), InvalidArgument);
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::LightSpmv, odd_block), InvalidArgument);
  Options one_lane;
  one_lane.subwarp = 1;  // LightSpMV's vectors hold 2 to 32 lanes
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::LightSpmv, one_lane), InvalidArgument);
}

// Each row is walked in one fixed order by one thread or one group of lanes (LightSpMV: whichever vector draws it),
// so plus-times gives the same bits on every product; CSR-Adaptive too while no row is split (here the longest row,
// 3000 entries, stays under its chunk of 4096 f64 products: CSR-Vector's block reduction is fixed; a split row's
// chunks are added atomically in any order, as in the SpMV).
TEST(CudaSemiringCsrKernels, PlusTimesIsReproducible) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::long_rows(20000, 20000, 20, 3000, 6, 81));
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  SplitMix64 rng(82);
  for (double& v : x) v = rng.symmetric();
  const cuda::DeviceCsr d_a(a);
  const cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
  cuda::DeviceBuffer<double> d_y(static_cast<std::size_t>(a.rows));
  for (Algorithm algorithm : kCsrKernels) {
    cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::PlusTimes, algorithm);
    if (algorithm == Algorithm::CsrAdaptive)
      ASSERT_NE(plan.policy().find("split_rows=0 "), std::string::npos) << plan.policy();
    plan.apply(d_x.data(), d_y.data());
    const std::vector<double> first = d_y.to_host();
    for (int round = 0; round < 4; ++round) {
      SPMV_CUDA_CHECK(cudaMemset(d_y.data(), 0xff, d_y.bytes()));
      plan.apply(d_x.data(), d_y.data());
      const std::vector<double> again = d_y.to_host();
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(double)), 0)
          << to_string(algorithm) << ", round " << round;
    }
  }
}

// Two plans of different kernels on two streams, enqueued before either is waited for (one row of 20,000 among
// 20,000 rows of 6: CSR-Adaptive splits it); then one LightSpMV plan, whose products write a workspace (the row
// counter), and one CSR-Adaptive plan with a split row (its chunks ⊕-added into y), each applied on two streams at
// once with different x, three rounds: the plan orders LightSpMV's. Every result equals the CPU's (min-plus,
// max-times, max-min: exact in any order).
TEST(CudaSemiringCsrKernels, TwoStreamsAtOnce) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto long_rows = convert<double, std::int32_t>(gen::long_rows(20000, 20000, 1, 20000, 6, 71));
  const std::pair<Algorithm, Algorithm> pairs[] = {{Algorithm::CsrScalar, Algorithm::LightSpmv},
                                                   {Algorithm::CsrAdaptive, Algorithm::CsrCoop},
                                                   {Algorithm::LightSpmv, Algorithm::CsrAdaptive}};
  for (const auto& [first, second] : pairs) {
    TwoStreams t(long_rows);
    cuda::SemiringPlan<double, std::int32_t> p0(t.csr.view(), Semiring::MinPlus, first);
    cuda::SemiringPlan<double, std::int32_t> p1(t.csr.view(), Semiring::MaxMin, second);
    for (int round = 0; round < 3; ++round) {
      p0.apply(t.dxs[0].data(), t.dys[0].data(), t.streams[0]);
      p1.apply(t.dxs[1].data(), t.dys[1].data(), t.streams[1]);
    }
    t.expect_cpu(Semiring::MinPlus, 0, std::string(to_string(first)));
    t.expect_cpu(Semiring::MaxMin, 1, std::string(to_string(second)));
  }
  for (Algorithm algorithm : {Algorithm::LightSpmv, Algorithm::CsrAdaptive}) {
    TwoStreams t(long_rows);
    cuda::SemiringPlan<double, std::int32_t> plan(t.csr.view(), Semiring::MaxTimes, algorithm);
    if (algorithm == Algorithm::CsrAdaptive)
      EXPECT_NE(plan.policy().find("split_rows=1 "), std::string::npos) << plan.policy();
    for (int round = 0; round < 3; ++round)
      for (int i = 0; i < 2; ++i) plan.apply(t.dxs[i].data(), t.dys[i].data(), t.streams[i]);
    for (int i = 0; i < 2; ++i) t.expect_cpu(Semiring::MaxTimes, i, std::string(to_string(algorithm)));
  }
}

}  // namespace
}  // namespace spmv::test
