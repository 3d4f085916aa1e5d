// The CUDA semiring product on ELL, ELL-R, HYB, COO, DIA and compressed CSR (SemiringPlan with Algorithm::Ell, EllR,
// Hyb, Coo, Dia, CompressedCsr; src/cuda/semiring_ell.cu, semiring_hyb.cu, semiring_coo.cu, semiring_dia.cu,
// semiring_compressed_csr.cu), the twin of tests/cpu/semiring_formats_test.cpp: the differential body of
// common/semiring_check.hpp over the whole zoo for every format, semiring and (value, index) pair (min, max and
// or-and equal to the definition, plus-times within the error bound, y poisoned with NaN), or Unsupported exactly
// where the host conversion of the format refuses; hand-computed matrices whose padding (ELL's column -1 slots, DIA's
// empty and out-of-matrix slots) would change min-plus, max-times and max-min if it entered a row, with DIA's stored
// zeros kept apart from its padding; HYB with both parts; NaN and +-Inf among the values; the refusals and their
// messages; the plans' reports; COO's and HYB's min/max/or-and bits from product to product; two plans on two streams
// at once and one COO / HYB plan (a workspace) on two streams; compressed CSR's wide and narrow slices and value
// modes (pattern, 8- and 16-bit codes, raw) and its refusal of a row too long. Skipped without a device.
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
#include "spmv/value_storage.hpp"

namespace spmv::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();


// The definition's values for `a` with every format on the device, or Unsupported where the conversion refuses
// (never a fallback); DIA with duplicates refuses the semirings other than plus-times, naming them (the
// reference then stands in for y so that the shared body goes on to the other semirings).
template <class Value, class Index>
void expect_formats_match_the_definition(const CsrMatrix<Value, Index>& m, std::uint64_t seed, const char* types) {
  const bool duplicates = has_duplicates(m);
  for (Algorithm algorithm : kSemiringFormats) {
    SCOPED_TRACE(std::string(types) + ", " + std::string(to_string(algorithm)));
    if (conversion_refuses(m, algorithm)) {
      const cuda::DeviceCsr d_a(m);
      try {
        cuda::SemiringPlan<Value, Index> plan(d_a.view(), Semiring::MinPlus, algorithm);
        ADD_FAILURE() << "the device ran what the host conversion refuses: " << plan.policy();
      } catch (const Unsupported& e) {
        // The padding rule; or, for DIA, the duplicates (the host bound counts the entries left after summing
        // them, the device's all of them: near the bound only the host's padding rule may refuse); or, for
        // compressed CSR, a row too long for its 16-bit length or a slice too wide for 32-bit offsets.
        const std::string what = e.what();
        EXPECT_TRUE(what.find("padding factor") != std::string::npos ||
                    (algorithm == Algorithm::Dia && duplicates && what.find("duplicate") != std::string::npos) ||
                    (algorithm == Algorithm::CompressedCsr && (what.find("16-bit row length") != std::string::npos ||
                                                               what.find("32-bit offsets") != std::string::npos)))
            << what;
      }
      continue;
    }
    const bool refuses_duplicates = algorithm == Algorithm::Dia && duplicates && m.rows > 0;
    const auto run = [&](Semiring s, const auto& mm, const auto& x, auto& y) {
      if (refuses_duplicates && s != Semiring::PlusTimes) {
        const cuda::DeviceCsr d_a(mm);
        try {
          cuda::SemiringPlan<Value, Index> plan(d_a.view(), s, algorithm);
          ADD_FAILURE() << to_string(s) << ": DIA ran duplicates";
        } catch (const Unsupported& e) {
          EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos) << e.what();
        }
        y = semiring_reference(s, mm, x);
        return;
      }
      planned(algorithm)(s, mm, x, y);
    };
    for (const auto& f : check_semirings(m, seed, run)) ADD_FAILURE() << f;
  }
}

class CudaSemiringFormatsZoo : public testing::TestWithParam<std::size_t> {};

// Every zoo matrix (empty, 0 rows, 0 columns, 1 column, empty rows, the huge row, rectangular, power-law rows,
// unsorted columns, duplicates, explicit zeros, the SuiteSparse files) with each format and each (value, index)
// pair the plan is compiled for.
TEST_P(CudaSemiringFormatsZoo, MatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 31;
  for_each_compiled_pair(a, seed, [](const auto& m, std::uint64_t s, const char* types) {
    expect_formats_match_the_definition(m, s, types);
  });
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaSemiringFormatsZoo, zoo_indices(), zoo_case_name);

// padding_bait() (common/semiring_check.hpp, SELL's hand matrix): ELL of width 3 pads row 0 with two slots, row 2
// with three and row 3 with one, and x0 = -5 would show in min-plus, max-times and max-min if one entered a row;
// its 4 rows go to HYB's COO part entirely (fewer than 4096 rows). Hand-computed values, f64/i32 and f32/i64.
TEST(CudaSemiringFormats, PaddingNeverEntersARow) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const PaddingBait bait = padding_bait();
  const auto a32 = convert<float, std::int64_t>(bait.a);
  const std::vector<float> x32(bait.x.begin(), bait.x.end());
  for (const auto& [s, want] : bait.want)
    for (Algorithm algorithm : kSemiringFormats) {
      SCOPED_TRACE(std::string(to_string(s)) + ", " + std::string(to_string(algorithm)));
      std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
      planned(algorithm)(s, bait.a, bait.x, y);
      EXPECT_EQ(y, want);
      std::vector<float> y32(4, std::numeric_limits<float>::quiet_NaN());
      planned(algorithm)(s, a32, x32, y32);
      EXPECT_EQ(std::vector<double>(y32.begin(), y32.end()), want);
    }
}

// DIA keeps stored zeros apart from padding: dia_stored_zeros() (common/semiring_check.hpp, the CPU test's
// matrix), whose DIA has 12 slots, 4 stored (two of them zeros), 3 padding inside the matrix and 5 outside it; a
// padding slot read as 0 would give min-plus's empty row 1 (not inf), a stored zero skipped its row 2 inf (not 4).
// Hand-computed values for every format, both index types.
TEST(CudaSemiringFormats, DiaStoredZerosAreNotPadding) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const PaddingBait bait = dia_stored_zeros();
  const auto& a = bait.a;
  const auto& x = bait.x;
  const auto a64 = convert<double, std::int64_t>(a);
  for (const auto& [s, want] : bait.want)
    for (Algorithm algorithm : kSemiringFormats) {
      SCOPED_TRACE(std::string(to_string(s)) + ", " + std::string(to_string(algorithm)));
      std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
      planned(algorithm)(s, a, x, y);
      EXPECT_EQ(y, want);
      std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
      planned(algorithm)(s, a64, x, y);
      EXPECT_EQ(y, want) << "i64";
    }
}

// Padding up to the bound, and HYB with both parts: 5000 rows of one entry, every 100th row of three (ELL width
// 3: 15,000 slots for 5,100 nonzeros, two thirds padding, under 3 x nnz + 1024; HYB's rule puts one entry a row
// in ELL and the rest of the 50 long rows in COO), columns from 1 on and x0 = -1e3: a padding slot read as an
// entry at column 0 would set min-plus's rows to about -1e3 and max-min's to x0 or 0.
TEST(CudaSemiringFormats, PaddingHeavyAndBothHybParts) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  SplitMix64 rng(51);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(5000);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t k = 0; k < (r % 100 == 7 ? 3u : 1u); ++k)
      rows[r].emplace_back(1 + static_cast<std::int64_t>(k * 700 + rng.below(700)), rng.symmetric());
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(2200, rows));
  ASSERT_FALSE(conversion_refuses(a, Algorithm::Ell));
  for (Algorithm algorithm : kSemiringFormats) {
    SCOPED_TRACE(to_string(algorithm));
    if (algorithm == Algorithm::Dia && conversion_refuses(a, algorithm)) continue;  // random columns: many diagonals
    for (const auto& f : check_semirings(a, 52, planned(algorithm))) ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f : check_semirings(convert<float, std::int64_t>(a), 53, planned(algorithm)))
      ADD_FAILURE() << "f32/i64 " << f;
    std::vector<double> low(static_cast<std::size_t>(a.cols), 0.5);
    low[0] = -1e3;
    for (Semiring s : kSemirings) {
      std::vector<double> got(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
      planned(algorithm)(s, a, low, got);
      const std::vector<double> want = semiring_reference(s, a, low);
      if (s == Semiring::PlusTimes) {
        for (std::size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-12 * (1.0 + std::abs(want[i]))) << "plus-times, row " << i;
      } else {
        EXPECT_EQ(got, want) << to_string(s);
      }
    }
  }
  const cuda::DeviceCsr d_a(a);
  const cuda::SemiringPlan<double, std::int32_t> hyb(d_a.view(), Semiring::MinPlus, Algorithm::Hyb);
  EXPECT_NE(hyb.policy().find("ell_width=1 "), std::string::npos) << hyb.policy();
  EXPECT_NE(hyb.policy().find("coo_entries=100 "), std::string::npos) << hyb.policy();
  const cuda::SemiringPlan<double, std::int32_t> ell(d_a.view(), Semiring::MinPlus, Algorithm::Ell);
  EXPECT_NE(ell.policy().find("width=3 "), std::string::npos) << ell.policy();
}

// NaN and +-Inf among the stored values (and stored zeros, signed), x with NaN and -Inf: min and max ignore a NaN
// term, so a row of NaN values gives min-plus's and max-times's zero; or-and reads NaN as true. Each order-free
// semiring equals the definition with every format (DIA too: the rows are canonical, at most 9 diagonals);
// plus-times is left to the SpMV tests (NaN sums).
TEST(CudaSemiringFormats, NanAndInfInValues) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SplitMix64 rng(61);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(300);  // at most 9 diagonals: DIA runs it
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (r % 9 == 4) continue;  // empty rows
    for (std::int64_t offset = -4; offset <= 4; ++offset) {
      const std::int64_t c = static_cast<std::int64_t>(r) + offset;
      if (c < 0 || c >= 300 || rng.below(2) == 0) continue;
      const std::uint64_t kind = rng.below(8);
      const double v = kind == 0 ? nan : kind == 1 ? inf : kind == 2 ? -inf : kind == 3 ? (r % 2 ? 0.0 : -0.0)
                                                                                    : rng.symmetric() * 10.0;
      rows[r].emplace_back(c, v);
    }
  }
  rows[10] = {{8, nan}, {12, nan}};  // a row of NaN terms only
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(300, rows));
  ASSERT_TRUE(is_canonical(a));
  std::vector<double> x(300);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = j % 7 == 2 ? nan : j % 11 == 5 ? -inf : rng.symmetric();
  for (Algorithm algorithm : kSemiringFormats)
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
      if (s == Semiring::MinPlus || s == Semiring::MaxTimes)  // NaN ⊗ x is NaN there: the row gives the zero
        EXPECT_EQ(got[10], semiring_zero<double>(s)) << "a row of NaN terms";
    }
}

// The refusals pass the conversion's message through (the huge row: ELL, ELL-R and DIA beyond the padding rule),
// which HYB and COO run; DIA names the duplicates it would sum and sums them for plus-times as the SpMV does;
// algorithms without a semiring kernel are refused, naming the formats; Auto never takes a format.
TEST(CudaSemiringFormats, RefusalsAndAuto) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto huge = convert<double, std::int32_t>(gen::long_rows(1000, 100003, 1, 100000, 3, 104));
  const cuda::DeviceCsr d_huge(huge);
  for (Algorithm algorithm : {Algorithm::Ell, Algorithm::EllR, Algorithm::Dia}) {
    ASSERT_TRUE(conversion_refuses(huge, algorithm));
    try {
      cuda::SemiringPlan<double, std::int32_t> plan(d_huge.view(), Semiring::MinPlus, algorithm);
      ADD_FAILURE() << to_string(algorithm) << " ran the huge row: " << plan.policy();
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("padding factor"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(algorithm == Algorithm::Dia    ? "DIA"
                                           : algorithm == Algorithm::Ell ? "ELL "
                                                                          : "ELL-R"),
                std::string::npos)
          << e.what();
    }
  }
  for (Algorithm algorithm : {Algorithm::Hyb, Algorithm::Coo})  // no padding bound to break
    for (const auto& f : check_semirings(huge, 61, planned(algorithm)))
      ADD_FAILURE() << to_string(algorithm) << " " << f;

  // Row 0 holds (1, 2.0) twice: min-plus's row 0 is 2 + x1, DIA's summed slot would give 4 + x1.
  const auto dup = duplicate_entry();
  const cuda::DeviceCsr d_dup(dup);
  for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
    try {
      cuda::SemiringPlan<double, std::int32_t> plan(d_dup.view(), s, Algorithm::Dia);
      ADD_FAILURE() << to_string(s) << ": DIA ran duplicates";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("1 duplicates"), std::string::npos) << e.what();
    }
  }
  std::vector<double> y(2, std::numeric_limits<double>::quiet_NaN());
  planned(Algorithm::Dia)(Semiring::PlusTimes, dup, std::vector<double>{1.0, 3.0}, y);
  EXPECT_EQ(y, (std::vector<double>{12.0, 1.0}));
  for (Algorithm algorithm : {Algorithm::Ell, Algorithm::Hyb, Algorithm::Coo}) {  // duplicates are two terms there
    std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
    planned(algorithm)(Semiring::MinPlus, dup, std::vector<double>{1.0, 3.0}, y);
    EXPECT_EQ(y, (std::vector<double>{5.0, 2.0})) << to_string(algorithm);
  }

  try {
    cuda::SemiringPlan<double, std::int32_t> plan(d_dup.view(), Semiring::OrAnd, Algorithm::CusparseCsrAlg1);
    ADD_FAILURE() << "cusparse-csr-alg1 has no semiring kernel";
  } catch (const Unsupported& e) {  // the refusal lists the kernels there are, from the one table
    EXPECT_NE(std::string(e.what()).find(semiring_algorithm_names(Backend::Cuda)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ell, ellr, hyb, coo, dia"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("compressed-csr"), std::string::npos) << e.what();
  }
  for (const gen::Matrix& m : {gen::poisson2d(200), gen::rmat(14, 16, 32), gen::banded(50000, 3, 7),
                               gen::mostly_empty(200000, 200000, 0.05, 16, 2)}) {
    const auto a = convert<float, std::int32_t>(m);
    const cuda::DeviceCsr d_a(a);
    const Algorithm chosen = cuda::SemiringPlan<float, std::int32_t>(d_a.view(), Semiring::MinPlus).algorithm();
    for (Algorithm algorithm : kSemiringFormats) EXPECT_NE(chosen, algorithm);
  }
}

// The plan's Options reach the conversions and kernels: max_padding moves ELL's and SELL's refusal, hyb_ell_width
// HYB's split, sell_c / sell_sigma / subwarp SELL's layout, subwarp csr-vector's lanes (each shown by policy() and
// still the definition's values); half-precision values, and widths the kernels are not compiled for, are refused.
TEST(CudaSemiringFormats, OptionsReachTheConversionsAndKernels) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  using Plan = cuda::SemiringPlan<double, std::int32_t>;
  // 200 rows of 10 among rows of 4: ELL pads every row to 10 (2.5 slots a nonzero), SELL the first slice of each
  // window of 256 sorted rows (about 1.17): both under the default bound of 3, both over 1.05 (and its 1024 slots
  // of slack).
  const auto a = convert<double, std::int32_t>(gen::long_rows(20000, 20000, 200, 10, 4, 71));
  const cuda::DeviceCsr d_a(a);
  Options tight;
  tight.max_padding = 1.05;
  for (Algorithm algorithm : {Algorithm::Ell, Algorithm::EllR, Algorithm::Sell}) {
    ASSERT_NO_THROW(Plan(d_a.view(), Semiring::MinPlus, algorithm)) << to_string(algorithm);
    EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, algorithm, tight), Unsupported) << to_string(algorithm);
  }
  const auto check = [&](Algorithm algorithm, const Options& options, const std::string& shown) {
    for (const auto& f : check_semirings(a, 72, planned(algorithm, options, shown)))
      ADD_FAILURE() << to_string(algorithm) << " " << f;
  };
  Options hyb;
  hyb.hyb_ell_width = 3;
  check(Algorithm::Hyb, hyb, "ell_width=3");
  Options sell;
  sell.sell_c = 8;
  sell.sell_sigma = 64;
  sell.subwarp = 2;
  check(Algorithm::Sell, sell, "C=8 sigma=64");
  check(Algorithm::Sell, sell, "threads_per_row=2");
  sell.subwarp = 4;  // the SpMV's SELL has 4; the semiring kernel is compiled for 1 and 2
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::Sell, sell), InvalidArgument);
  for (int width : {2, 8, 32}) {
    Options lanes;
    lanes.subwarp = width;
    check(Algorithm::CsrVector, lanes, "subwarp=" + std::to_string(width));
  }
  Options odd;
  odd.subwarp = 16;
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::CsrVector, odd), InvalidArgument);
  EXPECT_NO_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::MergePath, odd));
  const auto f = convert<float, std::int32_t>(gen::poisson2d(20));
  const cuda::DeviceCsr d_f(f);
  Options half;
  half.values = ValueStorage::F16;
  using FloatPlan = cuda::SemiringPlan<float, std::int32_t>;
  EXPECT_THROW(FloatPlan(d_f.view(), Semiring::MinPlus, Algorithm::Auto, half), Unsupported);
}

// What a plan reports: its format, a policy naming it, the converted copy in extra_bytes; a matrix without entries
// converts nothing (every row the semiring's zero), and one without rows writes nothing.
TEST(CudaSemiringFormats, PlansReportTheirFormat) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::poisson2d(40));
  const cuda::DeviceCsr d_a(a);
  const std::pair<Algorithm, const char*> names[] = {{Algorithm::Ell, "ell block="},
                                                     {Algorithm::EllR, "ellr block="},
                                                     {Algorithm::Hyb, "hyb block="},
                                                     {Algorithm::Coo, "coo reduce_by_key=cub"},
                                                     {Algorithm::Dia, "dia block="},
                                                     {Algorithm::CompressedCsr, "compressed-csr block="}};
  for (const auto& [algorithm, name] : names) {
    const cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::MaxMin, algorithm);
    EXPECT_EQ(plan.algorithm(), algorithm);
    EXPECT_EQ(plan.semiring(), Semiring::MaxMin);
    EXPECT_EQ(plan.policy().rfind(name, 0), 0u) << plan.policy();
    // Compressed CSR stores 16-bit offsets and 8-bit codes (Poisson's two values): 3 bytes a slot, at least.
    const std::size_t per_entry = algorithm == Algorithm::CompressedCsr ? 3 : sizeof(std::int32_t);
    EXPECT_GT(plan.extra_bytes(), static_cast<std::size_t>(a.nnz()) * per_entry) << to_string(algorithm);
  }
  {  // compressed CSR's conversion is the SpMV's: the same layout summary and bytes as the host conversion's
    const cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::MinPlus, Algorithm::CompressedCsr);
    EXPECT_NE(plan.policy().find(compressed_csr_summary(to_compressed_csr(a))), std::string::npos) << plan.policy();
  }
  expect_degenerate_matrices(kSemiringFormats);
}

// COO's runs are reduced by CUB's ReduceByKey, whose look-back combines a run's tile prefixes in an order set by
// timing: plus-times's last bits may vary (CUB issue #471; this test once asserted the opposite and failed on an
// H200). The other semirings are exact in any order, so on power-law rows whose long runs span CUB's tiles every
// product of a COO or HYB plan gives the same bits for them, and plus-times stays within the error bound of the
// first product's (the differential body checks it against the reference).
TEST(CudaSemiringFormats, OrderFreeSemiringsRepeatTheirBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::rmat(15, 16, 81));
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  SplitMix64 rng(82);
  for (double& v : x) v = rng.symmetric();
  const cuda::DeviceCsr d_a(a);
  const cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
  cuda::DeviceBuffer<double> d_y(static_cast<std::size_t>(a.rows));
  for (Algorithm algorithm : {Algorithm::Coo, Algorithm::Hyb})
    for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
      cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), s, algorithm);
      plan.apply(d_x.data(), d_y.data());
      const std::vector<double> first = d_y.to_host();
      for (int round = 0; round < 4; ++round) {
        SPMV_CUDA_CHECK(cudaMemset(d_y.data(), 0xff, d_y.bytes()));
        plan.apply(d_x.data(), d_y.data());
        const std::vector<double> again = d_y.to_host();
        ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(double)), 0)
            << to_string(algorithm) << " " << to_string(s) << ", round " << round;
      }
    }
}

// Two plans of different formats on two streams, enqueued before either is waited for (a 2D Poisson matrix of
// 0.45 M nonzeros, which every format holds); then one COO plan and one HYB plan, whose products write a
// workspace (the runs' results), each applied on two streams at once with different x (one row of 6000 among
// 20,000 rows of 6: HYB's COO part holds its overflow), three rounds: the plan orders them. Every result equals
// the CPU's (min-plus, max-times, max-min: exact in any order).
TEST(CudaSemiringFormats, TwoStreamsAtOnce) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto poisson = convert<double, std::int32_t>(gen::poisson2d(300));
  const std::pair<Algorithm, Algorithm> pairs[] = {{Algorithm::Coo, Algorithm::EllR},
                                                   {Algorithm::Dia, Algorithm::Hyb},
                                                   {Algorithm::Ell, Algorithm::Coo},
                                                   {Algorithm::CompressedCsr, Algorithm::CompressedCsr}};
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
  const auto long_rows = convert<double, std::int32_t>(gen::long_rows(20000, 20000, 1, 6000, 6, 71));
  for (Algorithm algorithm : {Algorithm::Coo, Algorithm::Hyb}) {
    TwoStreams t(long_rows);
    cuda::SemiringPlan<double, std::int32_t> plan(t.csr.view(), Semiring::MaxTimes, algorithm);
    if (algorithm == Algorithm::Hyb)
      EXPECT_EQ(plan.policy().find("coo_entries=0 "), std::string::npos) << plan.policy();
    for (int round = 0; round < 3; ++round)
      for (int i = 0; i < 2; ++i) plan.apply(t.dxs[i].data(), t.dys[i].data(), t.streams[i]);
    for (int i = 0; i < 2; ++i) t.expect_cpu(Semiring::MaxTimes, i, std::string(to_string(algorithm)));
  }
}

// Compressed CSR's own boundaries (compressed_slices(), common/semiring_check.hpp, the CPU test's matrices): a wide
// slice (32-bit offsets), narrow ones with a base column far from 0, an all-empty slice and a partial last one, with
// every value mode the device conversion picks (pattern, 8-bit codes, 16-bit codes, raw; shown by policy() as the
// host conversion's summary): every semiring against the definition for each (value, index) pair, and the CPU
// plan's bits for min, max and or-and (x with NaN, +-Inf and signed zeros); a row of 65536 entries is refused with the
// SpMV conversion's message, and a block size that is not whole warps with InvalidArgument. One plan applied on two
// streams at once (no workspace) gives the CPU's values on both.
TEST(CudaSemiringFormats, CompressedCsrSlicesAndValueModes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (std::int64_t distinct : {0, 5, 300, -1}) {
    SCOPED_TRACE("distinct values " + std::to_string(distinct));
    const auto a = compressed_slices(distinct, 141);
    const auto check = [&](const auto& m, const char* types) {
      using Value = typename std::decay_t<decltype(m)>::value_type;
      using Index = typename std::decay_t<decltype(m)>::index_type;
      const auto host = to_compressed_csr(m);
      ASSERT_EQ(host.wide, (std::vector<std::uint8_t>{1, 0, 0, 0})) << types;
      const std::string summary = compressed_csr_summary(host);
      for (const auto& f : check_semirings(m, 142, planned(Algorithm::CompressedCsr, Options{}, summary)))
        ADD_FAILURE() << types << ": " << f;
      const auto x = bits_probe_x<Value>(m.cols, 143);
      const cuda::DeviceCsr d_a(m);
      const cuda::DeviceBuffer<Value> d_x{std::span<const Value>(x)};
      cuda::DeviceBuffer<Value> d_y(static_cast<std::size_t>(m.rows));
      for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
        std::vector<Value> want(static_cast<std::size_t>(m.rows));
        semiring_multiply(s, m, std::span<const Value>(x), std::span(want), 2, Algorithm::CompressedCsr);
        cuda::SemiringPlan<Value, Index> plan(d_a.view(), s, Algorithm::CompressedCsr);
        SPMV_CUDA_CHECK(cudaMemset(d_y.data(), 0xff, d_y.bytes()));
        plan.apply(d_x.data(), d_y.data());
        if (const std::int64_t i = first_bits_difference(s, want, d_y.to_host()); i >= 0)
          ADD_FAILURE() << types << ", " << to_string(s) << ": row " << i << " differs from the CPU's";
      }
    };
    check(a, "f64/i32");
    check(convert<float, std::int64_t>(a), "f32/i64");
    check(convert<float, std::int32_t>(a), "f32/i32");
    check(convert<double, std::int64_t>(a), "f64/i64");
  }

  using Plan = cuda::SemiringPlan<double, std::int32_t>;
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(3);  // row 1 of 65536 entries
  for (std::int64_t k = 0; k < 65536; ++k) rows[1].emplace_back((k * 7919) % 70000, 0.5);
  rows[0].emplace_back(3, 2.0);
  const auto long_row = convert<double, std::int32_t>(zoo_detail::from_rows(70000, rows));
  const cuda::DeviceCsr d_long(long_row);
  try {
    Plan plan(d_long.view(), Semiring::MinPlus, Algorithm::CompressedCsr);
    ADD_FAILURE() << "compressed-csr ran a row of 65536 entries: " << plan.policy();
  } catch (const Unsupported& e) {
    EXPECT_EQ(std::string(e.what()), "compressed-csr: row 1 holds more than the 65535 entries a 16-bit row length "
                                     "holds; use csr-vector, merge-path or hola");
  }
  const auto a = compressed_slices(5, 144);
  const cuda::DeviceCsr d_a(a);
  Options odd;
  odd.block_size = 48;
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::CompressedCsr, odd), InvalidArgument);
  Options whole;
  whole.block_size = 64;
  for (const auto& f : check_semirings(a, 145, planned(Algorithm::CompressedCsr, whole, "block=64 ")))
    ADD_FAILURE() << "block 64: " << f;

  TwoStreams t(a);
  Plan plan(t.csr.view(), Semiring::MaxMin, Algorithm::CompressedCsr);
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 2; ++i) plan.apply(t.dxs[i].data(), t.dys[i].data(), t.streams[i]);
  for (int i = 0; i < 2; ++i) t.expect_cpu(Semiring::MaxMin, i, "compressed-csr, one plan");
}

}  // namespace
}  // namespace spmv::test
