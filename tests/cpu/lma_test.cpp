// The CPU LMA operator against the assembled matrix's product (tests/common/lma_check.hpp): float and
// double, 32- and 64-bit indices, alpha and beta in {0, 1, -1, 0.5}, NaN in y when beta = 0 and in x
// when alpha = 0, 2D and 3D meshes from no unknown up; the colouring it runs, thread independence and
// argument checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/lma_check.hpp"
#include "spmv/error.hpp"
#include "spmv/fem.hpp"

namespace {

using spmv::fem::MeshParams;

std::vector<MeshParams> meshes() {
  std::vector<MeshParams> v;
  for (std::int64_t n : {1, 2, 3, 17}) v.push_back({2, n, 0.5, 0.05});
  for (std::int64_t n : {1, 2, 3, 9}) v.push_back({3, n, 0.5, 0.05});
  v.push_back({3, 4, -0.9, 0.0});
  return v;
}

template <class T>
class CpuLma : public ::testing::Test {};
template <class V, class I>
struct Types {
  using Value = V;
  using Index = I;
};
using TypeList = ::testing::Types<Types<float, std::int32_t>, Types<float, std::int64_t>, Types<double, std::int32_t>,
                                  Types<double, std::int64_t>>;
TYPED_TEST_SUITE(CpuLma, TypeList);

TYPED_TEST(CpuLma, MatchesTheAssembledProduct) {
  using Value = typename TypeParam::Value;
  using Index = typename TypeParam::Index;
  for (const MeshParams& m : meshes()) {
    SCOPED_TRACE("fem" + std::to_string(m.dim) + "d n=" + std::to_string(m.n));
    const auto p = spmv::fem::build<Value, Index>(m);
    const auto gma = spmv::fem::build<double, std::int64_t>(m, {.element_data = false}).matrix;
    auto op = spmv::fem::make_cpu_lma_operator(p);
    ASSERT_EQ(op->rows(), p.unknowns);
    ASSERT_EQ(op->cols(), p.unknowns);
    spmv::test::expect_lma_equals_gma(p, gma, *op);
  }
}

// Every element appears once; within a colour no two elements share an unknown.
TYPED_TEST(CpuLma, ColouringIsARaceFreePartition) {
  using Value = typename TypeParam::Value;
  using Index = typename TypeParam::Index;
  for (const MeshParams& m : meshes()) {
    SCOPED_TRACE("fem" + std::to_string(m.dim) + "d n=" + std::to_string(m.n));
    const auto p = spmv::fem::build<Value, Index>(m);
    const auto c = spmv::fem::colour_elements(p);
    ASSERT_EQ(c.order.size(), static_cast<std::size_t>(p.elements));
    ASSERT_EQ(c.colour_offsets.back(), p.elements);
    EXPECT_EQ(std::set<std::int64_t>(c.order.begin(), c.order.end()).size(), c.order.size());
    for (int colour = 0; colour < c.colours(); ++colour) {
      EXPECT_LT(c.colour_offsets[colour], c.colour_offsets[colour + 1]);  // no empty colour
      std::set<std::int64_t> written;
      for (auto k = c.colour_offsets[colour]; k < c.colour_offsets[colour + 1]; ++k)
        for (int l = 0; l < p.nodes_per_element; ++l) {
          const auto u = static_cast<std::int64_t>(p.element_unknowns[l * p.elements + c.order[k]]);
          if (u >= 0) EXPECT_TRUE(written.insert(u).second) << "colour " << colour << " writes unknown " << u << " twice";
        }
    }
    // 6 triangles / 24 tetrahedra meet at an inner node, each needing its own colour.
    if (m.n >= 3) EXPECT_GE(c.colours(), m.dim == 2 ? 6 : 24);
  }
}

// Colours run in a fixed order and each y entry has one writer per colour: bit-identical results for
// any thread count.
TEST(CpuLmaDeterminism, SameBitsForOneTwoAndThreeThreads) {
  for (const MeshParams& m : {MeshParams{2, 60, 0.5, 0.05}, MeshParams{3, 16, 0.5, 0.05}}) {
    const auto p = spmv::fem::build<double, std::int32_t>(m);
    const auto x = spmv::test::lma_random_values<double>(static_cast<std::size_t>(p.unknowns), 3);
    const auto y0 = spmv::test::lma_random_values<double>(static_cast<std::size_t>(p.unknowns), 4);
    std::vector<std::vector<double>> results;
    for (int threads : {1, 2, 3}) {
      auto op = spmv::fem::make_cpu_lma_operator(p, {.threads = threads});
      std::vector<double> y = y0;
      op->apply(0.5, x, -1.0, y);
      results.push_back(y);
    }
    EXPECT_EQ(results[0], results[1]);
    EXPECT_EQ(results[0], results[2]);
  }
}

TEST(CpuLmaErrors, WrongVectorSizesAndNoCudaBackend) {
  const auto p = spmv::fem::build<double, std::int32_t>({2, 4, 0.5, 0.05});
  auto op = spmv::fem::make_lma_operator(spmv::Backend::Cpu, p);
  std::vector<double> x(9), y(8);
  EXPECT_THROW(op->apply(1.0, x, 0.0, y), spmv::InvalidArgument);
  EXPECT_EQ(op->backend(), spmv::Backend::Cpu);
  EXPECT_GE(op->colours(), 6);
  EXPECT_FALSE(op->policy().empty());
#ifndef SPMV_HAS_CUDA
  EXPECT_THROW(spmv::fem::make_lma_operator(spmv::Backend::Cuda, p), spmv::Unsupported);
#endif
}

}  // namespace
