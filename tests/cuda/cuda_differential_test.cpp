// The shared differential sweep (tests/common/differential.hpp) against the CUDA backend, unchanged,
// and Options::deterministic (tests/common/determinism.hpp). Without a device the CUDA backend offers
// no algorithm, so the sweep instantiates nothing and the determinism tests skip.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
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

}  // namespace
}  // namespace spmv::test

namespace spmv::test {
namespace {

// CSR-vector's stream walk (Options::subwarp 1: a warp reads 32 rows' nonzeros as one span into shared
// memory, each lane adds its row; wider spans and rows past the head fall back to 4 lanes a row and the
// split) on every zoo matrix, every alpha/beta pair, at the default block and at 1,024 threads (128 KiB of
// tiles a block in double: past the 48 KiB a kernel gets without opting in).
TEST(CudaCsrVectorStream, EveryZooMatrixAgainstTheReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (std::size_t i = 0; i < zoo().size(); ++i) {
    const ZooEntry& entry = zoo()[i];
    for (int block : {0, 1024}) {
      SCOPED_TRACE(entry.name + ", block " + std::to_string(block));
      Options options;
      options.subwarp = 1;
      options.block_size = block;
      const auto& m = zoo_matrix(i);
      check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::NonTranspose, m,
                                                   entry.name, options);
      check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::NonTranspose, m,
                                                    entry.name, options);
      if (entry.index64) {
        check_against_reference<float, std::int64_t>(Backend::Cuda, Algorithm::CsrVector, Operation::NonTranspose, m,
                                                     entry.name, options);
        check_against_reference<double, std::int64_t>(Backend::Cuda, Algorithm::CsrVector, Operation::NonTranspose,
                                                      m, entry.name, options);
      }
    }
  }
}

// The walk the policy names: spans of short rows stream; rows longer than the head of 4 lanes (32) are
// split off and their groups fall back; A^T x has no stream walk.
TEST(CudaCsrVectorStream, PolicyAndRefusal) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  using Plan = cuda::Plan<double, std::int32_t>;
  const auto a = convert<double, std::int32_t>(gen::long_rows(100000, 100000, 10, 5000, 12, 3));
  const cuda::DeviceCsr<double, std::int32_t> d_a(a);
  Options options;
  options.subwarp = 1;
  Plan plan(d_a.view(), Algorithm::CsrVector, Operation::NonTranspose, options);
  EXPECT_NE(plan.policy().find("walk=stream rows_per_warp=32 tile=512"), std::string::npos) << plan.policy();
  EXPECT_NE(plan.policy().find("split_rows=10 "), std::string::npos) << plan.policy();
  check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::NonTranspose,
                                                convert<double, std::int64_t>(a), "long_rows", options);
  EXPECT_THROW(Plan(d_a.view(), Algorithm::CsrVector, Operation::Transpose, options), InvalidArgument);
}

// A^T x of at most 2^15 nonzeros runs in one block and one launch (y scaled, a barrier, the scatter);
// larger ones scale y in a launch of their own. Both against the reference, every alpha/beta pair (beta
// 1 skips the scaling; beta 0 writes over a NaN-poisoned y).
TEST(CudaCsrVectorTranspose, OneBlockUpToItsBound) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (std::int64_t per_row : {8, 9}) {  // 4,096 rows: 32,768 nonzeros (one block), then 36,864
    const auto a = gen::random_uniform(4096, 3000, per_row, 5);
    const auto d = convert<float, std::int32_t>(a);
    const cuda::DeviceCsr<float, std::int32_t> d_a(d);
    cuda::Plan<float, std::int32_t> plan(d_a.view(), Algorithm::CsrVector, Operation::Transpose, {});
    EXPECT_EQ(plan.policy().find("one_block=1024") != std::string::npos, per_row == 8) << plan.policy();
    check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                                 convert<double, std::int64_t>(d), "random 4096 rows", {});
    check_against_reference<double, std::int64_t>(Backend::Cuda, Algorithm::CsrVector, Operation::Transpose,
                                                  convert<double, std::int64_t>(d), "random 4096 rows", {});
  }
}

}  // namespace
}  // namespace spmv::test
