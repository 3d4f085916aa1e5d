// The CUDA semiring product on the SpMV's column-chunked CSR and ELLR-T (SemiringPlan with Algorithm::ColumnChunked
// and EllRVector; src/cuda/semiring_column_chunked.cu over the SpMV's blocks, column_chunked.cuh, and
// src/cuda/semiring_ellr_vector.cu over the SpMV's kernel body, ellr_vector.cuh): the differential body of
// common/semiring_check.hpp over the whole zoo for both kernels, every semiring and (value, index) pair (min, max and
// or-and equal to the definition, plus-times within the error bound, y poisoned with NaN), column-chunked also at
// spans of 7 columns; ELLR-T refused (Unsupported, the padding rule) exactly where its padded layout exceeds the
// rule; rows crossing hundreds of chunks with unsorted columns and duplicates; NaN and +-Inf among the values; the
// Options the SpMV reads (column_span; block_size, subwarp, max_padding) shown by policy() and refused as the SpMV
// refuses them; the plans' reports; the plus-times bits from product to product; two plans on two streams at once
// and one column-chunked plan (a workspace: its partial vector) on two streams. Skipped without a device.
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
constexpr Algorithm kChunkedKernels[] = {Algorithm::ColumnChunked, Algorithm::EllRVector};


Options span_of(int columns) {
  Options o;
  o.column_span = columns;
  return o;
}

// ELLR-T's rule on the host (ellr_vector.cuh): T = the smallest of 2, 4, ..., 32 with T * 4 >= the mean row length
// (over all rows), the width the longest row rounded up to T, refused beyond kDefaultMaxPadding * nnz +
// kPaddingSlack slots.
template <class Value, class Index>
bool ellr_vector_refuses(const CsrMatrix<Value, Index>& a) {
  if (a.rows == 0 || a.nnz() == 0) return false;  // nothing converted
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max<std::int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  const double mean = double(a.nnz()) / double(a.rows);
  std::int64_t t = 2;
  while (t < 32 && double(t) * 4.0 < mean) t *= 2;
  const long double slots = static_cast<long double>(a.rows) * static_cast<long double>((longest + t - 1) / t * t);
  return slots > static_cast<long double>(kDefaultMaxPadding) * static_cast<long double>(a.nnz()) + kPaddingSlack;
}

// Both kernels against the definition (column-chunked at the cost model's span and at spans of 7 columns, at least
// cols / 1024: many blocks), or ELLR-T's padding refusal (never a fallback).
template <class Value, class Index>
void expect_kernels_match_the_definition(const CsrMatrix<Value, Index>& m, std::uint64_t seed, const char* types) {
  for (Algorithm algorithm : kChunkedKernels) {
    SCOPED_TRACE(std::string(types) + ", " + std::string(to_string(algorithm)));
    if (algorithm == Algorithm::EllRVector && ellr_vector_refuses(m)) {
      const cuda::DeviceCsr d_a(m);
      try {
        cuda::SemiringPlan<Value, Index> plan(d_a.view(), Semiring::MinPlus, algorithm);
        ADD_FAILURE() << "ELLR-T ran beyond its padding rule: " << plan.policy();
      } catch (const Unsupported& e) {
        EXPECT_NE(std::string(e.what()).find("padding factor"), std::string::npos) << e.what();
      }
      continue;
    }
    for (const auto& f : check_semirings(m, seed, planned(algorithm))) ADD_FAILURE() << f;
    if (algorithm == Algorithm::ColumnChunked)
      for (const auto& f : check_semirings(m, seed + 5, planned(algorithm, span_of(7))))
        ADD_FAILURE() << "span 7: " << f;
  }
}

class CudaSemiringChunkedKernelsZoo : public testing::TestWithParam<std::size_t> {};

// Every zoo matrix (empty, 0 rows, 0 columns, 1 column, empty rows, the huge row, rectangular, power-law rows,
// unsorted columns, duplicates, explicit zeros, the SuiteSparse files) with each kernel and each (value, index)
// pair the plan is compiled for.
TEST_P(CudaSemiringChunkedKernelsZoo, MatchesTheDefinition) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 41;
  for_each_compiled_pair(a, seed, [](const auto& m, std::uint64_t s, const char* types) {
    expect_kernels_match_the_definition(m, s, types);
  });
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaSemiringChunkedKernelsZoo, zoo_indices(), zoo_case_name);


// Rows of 600 entries in unsorted columns of 3,000 (duplicates among them), a third of the rows empty, cut into
// chunks of 7 columns: 429 chunks, each row crossing most of them; the conversion's stable sort by chunk moves every
// entry. Every semiring equals the definition (plus-times within the bound) in f64/i32 and f32/i64, and every empty
// row is the semiring's zero. Then spans of 1 (clamped to cols / 1024 = 3) and of more than cols (one chunk).
TEST(CudaSemiringChunkedKernels, RowsCrossManyChunks) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(zoo_detail::random_rows(300, 3000, 600, true, 101));
  ASSERT_TRUE(has_duplicates(a));
  const cuda::DeviceCsr d_a(a);
  const struct {
    int span;
    const char* shown;
  } spans[] = {{7, "column-chunked span=7 chunks=429 "}, {1, "column-chunked span=3 chunks=1000 "},
               {5000, "column-chunked span=3000 chunks=1 blocks=1 "}};
  for (const auto& c : spans) {
    SCOPED_TRACE("span " + std::to_string(c.span));
    const cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::MinPlus, Algorithm::ColumnChunked,
                                                        span_of(c.span));
    EXPECT_EQ(plan.policy().rfind(c.shown, 0), 0u) << plan.policy();
    for (const auto& f : check_semirings(a, 102, planned(Algorithm::ColumnChunked, span_of(c.span))))
      ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f :
         check_semirings(convert<float, std::int64_t>(a), 103, planned(Algorithm::ColumnChunked, span_of(c.span))))
      ADD_FAILURE() << "f32/i64 " << f;
  }
  std::vector<double> x(3000);
  SplitMix64 rng(104);
  for (double& v : x) v = rng.symmetric();
  for (Algorithm algorithm : kChunkedKernels)
    for (Semiring s : kSemirings) {
      std::vector<double> got(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
      planned(algorithm, span_of(7))(s, a, x, got);
      for (std::int64_t r = 0; r < a.rows; ++r)
        if (a.row_ptr[r] == a.row_ptr[r + 1])
          ASSERT_EQ(got[static_cast<std::size_t>(r)], semiring_zero<double>(s))
              << to_string(algorithm) << ", " << to_string(s) << ", empty row " << r;
    }
}

// ELLR-T's threads a row (T = 2 to 32 from the mean row length, 1 only through Options.subwarp) are each compiled per
// semiring: every T, checked against the definition in f64/i32 and f32/i64, rows a third empty (ELLR-T pads them).
TEST(CudaSemiringChunkedKernels, EveryThreadsPerRow) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  // Mean lengths over all rows (a third are empty: 2/3 of `length`) and the T they give.
  const struct {
    std::int64_t length;
    int subwarp;
    const char* shown;
  } cases[] = {{3, 1, "threads_per_row=1 "},  {3, 0, "threads_per_row=2 "},   {9, 0, "threads_per_row=2 "},
               {15, 0, "threads_per_row=4 "}, {30, 0, "threads_per_row=8 "},  {60, 0, "threads_per_row=16 "},
               {300, 0, "threads_per_row=32 "}};
  for (const auto& c : cases) {
    SCOPED_TRACE("length " + std::to_string(c.length) + ", subwarp " + std::to_string(c.subwarp));
    const std::int64_t rows = std::max<std::int64_t>(30, 30000 / c.length);
    const auto a = convert<double, std::int32_t>(zoo_detail::random_rows(rows, 5000, c.length, true, 111 + c.length));
    Options options;
    options.subwarp = c.subwarp;
    const cuda::DeviceCsr d_a(a);
    const cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::MinPlus, Algorithm::EllRVector,
                                                        options);
    EXPECT_NE(plan.policy().find(c.shown), std::string::npos) << plan.policy();
    for (const auto& f : check_semirings(a, 112, planned(Algorithm::EllRVector, options)))
      ADD_FAILURE() << "f64/i32 " << f;
    for (const auto& f : check_semirings(convert<float, std::int64_t>(a), 113, planned(Algorithm::EllRVector, options)))
      ADD_FAILURE() << "f32/i64 " << f;
  }
}

// NaN and +-Inf among the stored values (and stored zeros, signed), x with NaN and -Inf: min and max ignore a NaN
// term, so a row of NaN terms gives min-plus's and max-times's zero, also when its terms sit in several chunks (a
// NaN term never reaches y through the fold of the blocks); or-and reads NaN as true. Each order-free semiring equals
// the definition with both kernels (column-chunked at spans of 7).
TEST(CudaSemiringChunkedKernels, NanAndInfInValues) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SplitMix64 rng(121);
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
    const std::int64_t length = r == 7 ? 200 : 1 + static_cast<std::int64_t>(rng.below(12));
    for (std::int64_t k = 0; k < length; ++k) rows[r].emplace_back(static_cast<std::int64_t>(rng.below(300)), value(r));
  }
  rows[10] = {{8, nan}, {120, nan}, {290, nan}};  // a row of NaN terms only, in three chunks
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(300, rows));
  std::vector<double> x(300);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = j % 7 == 2 ? nan : j % 11 == 6 ? -inf : rng.symmetric();
  Options options = span_of(7);
  options.max_padding = 100;  // ELLR-T: row 7 of 200 pads every row to 200
  for (Algorithm algorithm : kChunkedKernels)
    for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
      SCOPED_TRACE(std::string(to_string(s)) + ", " + std::string(to_string(algorithm)));
      std::vector<double> got(static_cast<std::size_t>(a.rows), nan);
      planned(algorithm, options)(s, a, x, got);
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

// What a plan reports: its kernel, a policy naming it with the SpMV's parameters (column-chunked: span, chunks,
// blocks and its first block's inner plan; ELLR-T: block, threads a row, width), extra_bytes (the blocks or the
// padded layout); a matrix without entries converts nothing (every row the semiring's zero), and one without rows
// writes nothing. Auto never takes them.
TEST(CudaSemiringChunkedKernels, PlansReportTheirKernel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::poisson2d(40));  // 1600 x 1600, 5 a row
  const cuda::DeviceCsr d_a(a);
  const cuda::SemiringPlan<double, std::int32_t> chunked(d_a.view(), Semiring::MaxMin, Algorithm::ColumnChunked,
                                                         span_of(400));
  EXPECT_EQ(chunked.algorithm(), Algorithm::ColumnChunked);
  EXPECT_EQ(chunked.semiring(), Semiring::MaxMin);
  EXPECT_EQ(chunked.policy().rfind("column-chunked span=400 chunks=4 blocks=4 inner=", 0), 0u) << chunked.policy();
  EXPECT_GE(chunked.extra_bytes(), static_cast<std::size_t>(a.nnz()) * (sizeof(double) + sizeof(std::int32_t)));
  const cuda::SemiringPlan<double, std::int32_t> ellr(d_a.view(), Semiring::MaxMin, Algorithm::EllRVector);
  EXPECT_EQ(ellr.algorithm(), Algorithm::EllRVector);
  EXPECT_EQ(ellr.policy(), "ellr-vector block=256 threads_per_row=2 width=6 unroll=4") << ellr.policy();
  EXPECT_EQ(ellr.extra_bytes(), 1600u * 6u * (sizeof(double) + sizeof(std::int32_t)) + 1600u * sizeof(std::int32_t));

  expect_degenerate_matrices(kChunkedKernels);
  for (const gen::Matrix& m :
       {gen::poisson2d(200), gen::rmat(14, 16, 32), gen::mostly_empty(200000, 200000, 0.05, 16, 2)}) {
    const auto f = convert<float, std::int32_t>(m);
    const cuda::DeviceCsr d_f(f);
    const Algorithm chosen = cuda::SemiringPlan<float, std::int32_t>(d_f.view(), Semiring::MinPlus).algorithm();
    for (Algorithm algorithm : kChunkedKernels) EXPECT_NE(chosen, algorithm);
  }
}

// The Options the SpMV reads reach the kernels through the plan, each checked against the definition: column_span
// (column-chunked; its blocks' Auto plans get the others: subwarp = 8 reaches their csr-vector row kernel),
// block_size, subwarp and max_padding (ELLR-T); values the SpMV refuses are refused here (InvalidArgument; ELLR-T's
// padding: Unsupported, moved by max_padding).
TEST(CudaSemiringChunkedKernels, OptionsReachTheKernels) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  using Plan = cuda::SemiringPlan<double, std::int32_t>;
  // Rows of 60 (no empty ones): a chunk of 300 columns holds about 9 of each row, so each block's Auto plan takes
  // the row kernel (regular short rows).
  const auto a = convert<double, std::int32_t>(zoo_detail::random_rows(2000, 2000, 60, false, 131));
  const cuda::DeviceCsr d_a(a);
  const auto check = [&](Algorithm algorithm, const Options& options, const std::string& shown) {
    SCOPED_TRACE(std::string(to_string(algorithm)) + ", " + shown);
    for (const auto& f : check_semirings(a, 132, planned(algorithm, options, shown))) ADD_FAILURE() << f;
  };
  Options chunked = span_of(300);
  check(Algorithm::ColumnChunked, chunked, "column-chunked span=300 chunks=7 blocks=7 ");
  chunked.subwarp = 8;
  check(Algorithm::ColumnChunked, chunked, "inner=csr-vector[one launch, subwarp=8 ");
  Options ellr;
  ellr.block_size = 128;
  ellr.subwarp = 8;
  check(Algorithm::EllRVector, ellr, "ellr-vector block=128 threads_per_row=8 ");
  ellr.block_size = 1024;
  ellr.subwarp = 32;
  check(Algorithm::EllRVector, ellr, "ellr-vector block=1024 threads_per_row=32 ");

  Options odd_lanes;
  odd_lanes.subwarp = 3;
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::EllRVector, odd_lanes), InvalidArgument);
  odd_lanes.subwarp = 64;
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::EllRVector, odd_lanes), InvalidArgument);
  odd_lanes.subwarp = 16;  // csr-vector's row kernel is compiled for 2, 4, 8 and 32 lanes, as the semiring plan says
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::ColumnChunked, odd_lanes), InvalidArgument);
  Options odd_block;
  odd_block.block_size = 48;  // not whole warps
  EXPECT_THROW(Plan(d_a.view(), Semiring::MinPlus, Algorithm::EllRVector, odd_block), InvalidArgument);

  // One row of 1,500 among rows of 4: ELLR-T pads every row to 1,500 slots, beyond 3 x nnz + 1024, unless
  // max_padding allows it.
  const auto huge = convert<double, std::int32_t>(gen::long_rows(2000, 2000, 1, 1500, 4, 133));
  const cuda::DeviceCsr d_huge(huge);
  try {
    Plan plan(d_huge.view(), Semiring::MinPlus, Algorithm::EllRVector);
    ADD_FAILURE() << "ELLR-T ran beyond its padding rule: " << plan.policy();
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("ELLR-T would store"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("padding factor"), std::string::npos) << e.what();
  }
  Options roomy;
  roomy.max_padding = 1000;
  for (const auto& f : check_semirings(huge, 134, planned(Algorithm::EllRVector, roomy))) ADD_FAILURE() << f;
  EXPECT_NO_THROW(Plan(d_huge.view(), Semiring::MinPlus, Algorithm::ColumnChunked));  // no padding
}

// ELLR-T folds each row in one fixed order (its T lanes, then the butterfly), and column-chunked folds its blocks in
// chunk order over blocks whose plans are csr-vector's row kernel (one fixed order a row): plus-times gives the same
// bits on every product.
TEST(CudaSemiringChunkedKernels, PlusTimesIsReproducible) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(zoo_detail::random_rows(20000, 20000, 24, false, 141));
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  SplitMix64 rng(142);
  for (double& v : x) v = rng.symmetric();
  const cuda::DeviceCsr d_a(a);
  const cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
  cuda::DeviceBuffer<double> d_y(static_cast<std::size_t>(a.rows));
  for (Algorithm algorithm : kChunkedKernels) {
    cuda::SemiringPlan<double, std::int32_t> plan(d_a.view(), Semiring::PlusTimes, algorithm, span_of(2500));
    if (algorithm == Algorithm::ColumnChunked)
      ASSERT_NE(plan.policy().find("blocks=8 inner=csr-vector["), std::string::npos) << plan.policy();
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

// A column-chunked and an ELLR-T plan on two streams, enqueued before either is waited for; then one column-chunked
// plan (its partial vector a workspace: the plan orders its products) and one ELLR-T plan (none), each applied on
// two streams at once with different x, three rounds. Every result equals the CPU's (min-plus, max-times, max-min:
// exact in any order).
TEST(CudaSemiringChunkedKernels, TwoStreamsAtOnce) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto m = convert<double, std::int32_t>(zoo_detail::random_rows(20000, 20000, 10, true, 151));
  {
    TwoStreams t(m);
    cuda::SemiringPlan<double, std::int32_t> p0(t.csr.view(), Semiring::MinPlus, Algorithm::ColumnChunked,
                                                span_of(3000));
    cuda::SemiringPlan<double, std::int32_t> p1(t.csr.view(), Semiring::MaxMin, Algorithm::EllRVector);
    for (int round = 0; round < 3; ++round) {
      p0.apply(t.dxs[0].data(), t.dys[0].data(), t.streams[0]);
      p1.apply(t.dxs[1].data(), t.dys[1].data(), t.streams[1]);
    }
    t.expect_cpu(Semiring::MinPlus, 0, "column-chunked");
    t.expect_cpu(Semiring::MaxMin, 1, "ellr-vector");
  }
  for (Algorithm algorithm : kChunkedKernels) {
    TwoStreams t(m);
    cuda::SemiringPlan<double, std::int32_t> plan(t.csr.view(), Semiring::MaxTimes, algorithm, span_of(3000));
    if (algorithm == Algorithm::ColumnChunked)
      EXPECT_NE(plan.policy().find("chunks=7 blocks=7 "), std::string::npos) << plan.policy();
    for (int round = 0; round < 3; ++round)
      for (int i = 0; i < 2; ++i) plan.apply(t.dxs[i].data(), t.dys[i].data(), t.streams[i]);
    for (int i = 0; i < 2; ++i) t.expect_cpu(Semiring::MaxTimes, i, std::string(to_string(algorithm)));
  }
}

}  // namespace
}  // namespace spmv::test
