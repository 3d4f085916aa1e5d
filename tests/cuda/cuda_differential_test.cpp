// The shared differential sweep (tests/common/differential.hpp) against the CUDA backend, unchanged,
// and Options::deterministic (tests/common/determinism.hpp). Without a device the CUDA backend offers
// no algorithm, so the sweep instantiates nothing and the determinism tests skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/determinism.hpp"
#include "common/differential.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/generators.hpp"

SPMV_DIFFERENTIAL_TESTS(Cuda, spmv::Backend::Cuda);

namespace spmv::test {
namespace {

TEST(CudaDeterministic, EveryAlgorithmRefusesOrRepeatsItsBits) { check_deterministic_mode(Backend::Cuda); }
TEST(CudaDeterministic, AutoPicksAReproducibleAlgorithmN) { check_deterministic_auto(Backend::Cuda, Operation::NonTranspose); }
TEST(CudaDeterministic, AutoPicksAReproducibleAlgorithmT) { check_deterministic_auto(Backend::Cuda, Operation::Transpose); }

// Kernels whose per-row sums do not depend on the launch shape give the same bits at every block size.
// (PCSR is reproducible at a fixed block size, but its segmented reduction tree follows the block: on
// the H200 blocks of 128 and 256 gave different bits, as its design says they may.)
TEST(CudaDeterministic, BlockSizeDoesNotChangeTheBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(zoo_matrix("power_law_rmat12"));
  const cuda::DeviceCsr<double, std::int32_t> d_a(a);
  std::vector<double> x(static_cast<std::size_t>(a.cols));
  SplitMix64 rng(7);
  for (auto& v : x) v = rng.symmetric();
  const cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
  for (Algorithm alg : {Algorithm::CsrScalar, Algorithm::LightSpmv, Algorithm::EllR, Algorithm::Sell}) {
    std::vector<std::vector<double>> results;
    for (int block : {128, 256, 512}) {
      Options options;
      options.deterministic = true;
      options.block_size = block;
      options.max_padding = 1e9;  // ELL-R: the padding is not the point here
      cuda::Plan<double, std::int32_t> plan(d_a.view(), alg, Operation::NonTranspose, options);
      cuda::DeviceBuffer<double> d_y(static_cast<std::size_t>(a.rows));
      plan.apply(1.0, d_x.data(), 0.0, d_y.data());
      results.push_back(d_y.to_host());
      EXPECT_TRUE(plan.reproducible()) << to_string(alg);
    }
    for (std::size_t k = 1; k < results.size(); ++k)
      EXPECT_EQ(std::memcmp(results[0].data(), results[k].data(), results[0].size() * sizeof(double)), 0)
          << to_string(alg) << ": block size changed the bits";
  }
}

// Column chunks (src/cuda/column_chunked.cu) at spans that make ~50, 3 and 2 chunks of every zoo matrix
// (empty chunks, chunks of one column, rows spread over several chunks, unsorted rows), both operations,
// against the reference: A x adds the blocks into y (beta on the first), A^T x writes each chunk of y.
TEST(CudaColumnChunked, SeveralSpansOnTheZoo) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (std::size_t m = 0; m < zoo().size(); ++m) {
    const auto& a = zoo_matrix(m);
    for (std::int64_t chunks : {50, 3, 2}) {
      Options options;
      options.column_span = static_cast<int>(std::max<std::int64_t>(1, (a.cols + chunks - 1) / chunks));
      const std::string name = zoo()[m].name + " span " + std::to_string(options.column_span);
      for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
        check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::ColumnChunked, op, a, name, options);
        if (zoo()[m].index64)
          check_against_reference<double, std::int64_t>(Backend::Cuda, Algorithm::ColumnChunked, op, a, name, options);
        else
          check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::ColumnChunked, op, a, name, options);
      }
    }
  }
}

// The plan reports the span it used, clamps spans outside [cols / kMaxColumnChunks, cols], and with
// span 0 takes Auto's rule (one chunk where x fits L2).
TEST(CudaColumnChunked, SpanIsClampedAndReported) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<float, std::int32_t>(gen::random_uniform(100, 5000, 8, 3));
  const cuda::DeviceCsr<float, std::int32_t> d_a(a);
  for (auto [span, chunks] : {std::pair{0, 1}, std::pair{5000, 1}, std::pair{100000, 1}, std::pair{2500, 2},
                              std::pair{1, 1000}}) {
    Options options;
    options.column_span = span;
    cuda::Plan<float, std::int32_t> plan(d_a.view(), Algorithm::ColumnChunked, Operation::NonTranspose, options);
    EXPECT_NE(plan.policy().find("chunks=" + std::to_string(chunks) + " "), std::string::npos)
        << "span " << span << ": " << plan.policy();
  }
}

// Auto with the hint on a matrix whose x exceeds L2 (64 M float columns: 256 MB) either keeps the whole
// matrix or takes the chunks after its race; either way the products match the reference, and without the
// hint it never converts.
TEST(CudaColumnChunked, AutoWithTheHintWhereXExceedsL2) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = gen::random_uniform(1 << 19, std::int64_t(64) << 20, 16, 11);
  Options hinted;
  hinted.expected_applies = 1000;
  check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::Auto, Operation::NonTranspose, a,
                                               "random 512 K x 64 M", hinted);
  const auto d = convert<float, std::int32_t>(a);
  const cuda::DeviceCsr<float, std::int32_t> d_a(d);
  cuda::Plan<float, std::int32_t> plain(d_a.view(), Algorithm::Auto, Operation::NonTranspose, {});
  EXPECT_NE(plain.algorithm(), Algorithm::ColumnChunked);
  cuda::Plan<float, std::int32_t> plan(d_a.view(), Algorithm::Auto, Operation::NonTranspose, hinted);
  ::testing::Test::RecordProperty("auto_with_hint", std::string(to_string(plan.algorithm())) + " " + plan.policy());
  if (plan.algorithm() == Algorithm::ColumnChunked) EXPECT_GT(plan.extra_bytes(), d_a.bytes() / 2);
}

// A^T x of at most 6,000 nonzeros runs in one block and one launch (y scaled, a barrier, the scatter);
// larger ones scale y in a launch of their own. Both against the reference, every alpha/beta pair (beta
// 1 skips the scaling; beta 0 writes over a NaN-poisoned y; 3,000 columns: the scaling strides the block).
TEST(CudaCsrVectorTranspose, OneBlockUpToItsBound) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (std::int64_t per_row : {20, 24}) {  // 300 rows: 6,000 nonzeros (one block), then 7,200
    const auto a = gen::random_uniform(300, 3000, per_row, 5);
    const auto d = convert<float, std::int32_t>(a);
    const cuda::DeviceCsr<float, std::int32_t> d_a(d);
    cuda::Plan<float, std::int32_t> plan(d_a.view(), Algorithm::CsrVector, Operation::Transpose, {});
    EXPECT_EQ(plan.policy().find("one_block=1024") != std::string::npos, per_row == 20) << plan.policy();
    check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                                 convert<double, std::int64_t>(d), "random 300 rows", {});
    check_against_reference<double, std::int64_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                                  convert<double, std::int64_t>(d), "random 300 rows", {});
  }
  // Few nonzeros among many columns: y's scaling keeps its own grid.
  const auto wide = convert<float, std::int32_t>(gen::random_uniform(10, 100000, 20, 5));
  const cuda::DeviceCsr<float, std::int32_t> d_wide(wide);
  cuda::Plan<float, std::int32_t> plan(d_wide.view(), Algorithm::CsrVector, Operation::Transpose, {});
  EXPECT_EQ(plan.policy().find("one_block"), std::string::npos) << plan.policy();
  check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                               convert<double, std::int64_t>(wide), "10 x 100000", {});
}

// Past the one-block bound and up to 2^17 nonzeros, A^T x runs in one cooperative launch (y's scaling, a
// grid barrier, the scatter over several blocks); larger products keep two launches. Both sides of the
// bound against the reference (alpha/beta in {0, 1, -1, other}, NaN-poisoned y at beta = 0).
TEST(CudaCsrVectorTranspose, OneCooperativeLaunchUpToItsBound) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    std::int64_t rows, cols, per_row;
    bool cooperative;
  };
  // 7,200, 64,000 and 130,000 nonzeros (up to the bound, 131,072), then 140,000.
  for (const Case c : {Case{300, 3000, 24, true}, Case{4000, 2500, 16, true}, Case{5000, 40000, 26, true},
                       Case{10000, 20000, 14, false}}) {
    const auto a = convert<float, std::int32_t>(gen::random_uniform(c.rows, c.cols, c.per_row, 7));
    const cuda::DeviceCsr<float, std::int32_t> d_a(a);
    cuda::Plan<float, std::int32_t> plan(d_a.view(), Algorithm::CsrVector, Operation::Transpose, {});
    EXPECT_EQ(plan.policy().find("one_launch=cooperative") != std::string::npos, c.cooperative)
        << a.nnz() << " nonzeros: " << plan.policy();
    const std::string name = std::to_string(c.rows) + " x " + std::to_string(c.cols);
    check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                                 convert<double, std::int64_t>(a), name, {});
    check_against_reference<double, std::int64_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                                  convert<double, std::int64_t>(a), name, {});
  }
}

}  // namespace
}  // namespace spmv::test
