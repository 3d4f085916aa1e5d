// Matrices built to reach the special paths of the load-balancing algorithms (Hola-SpMV §3.3,
// CSR-Adaptive's long rows, merge-path carry-outs), checked with the shared differential body for
// every CUDA algorithm and both operations. Also the small set compute-sanitizer runs
// (CudaSanitize.*: memcheck and racecheck in scripts/gpu-check.sh).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "common/zoo.hpp"
#include "spmv/generators.hpp"

namespace spmv::test {
namespace {

using Rows = std::vector<std::vector<std::pair<std::int64_t, double>>>;

// Rows of `length` consecutive-ish columns with values from a fixed seed.
void fill_row(std::vector<std::pair<std::int64_t, double>>& row, std::int64_t cols, std::int64_t length,
              SplitMix64& rng) {
  const std::int64_t step = std::max<std::int64_t>(1, cols / std::max<std::int64_t>(1, length));
  for (std::int64_t c = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(step))), k = 0;
       c < cols && k < length; c += step, ++k)
    row.emplace_back(c, rng.symmetric());
}

struct Special {
  std::string name;
  ZooMatrix matrix;
};

std::vector<Special> special_matrices() {
  std::vector<Special> s;
  SplitMix64 rng(2024);
  {  // Every other row empty, so every warp and block sees empty rows inside its range.
    Rows rows(8192);
    for (std::size_t r = 0; r < rows.size(); r += 2) fill_row(rows[r], 4096, 1 + static_cast<std::int64_t>(rng.below(12)), rng);
    s.push_back({"alternating_empty_rows", zoo_detail::from_rows(4096, rows)});
  }
  {  // Thousands of empty rows between two full ones (Hola's per-warp empty-row mode, merge-path).
    Rows rows(12000);
    fill_row(rows[3], 20000, 3000, rng);
    fill_row(rows[11990], 20000, 3000, rng);
    for (std::size_t r = 0; r < 3; ++r) fill_row(rows[r], 20000, 7, rng);
    s.push_back({"thousands_of_empty_rows", zoo_detail::from_rows(20000, rows)});
  }
  {  // Rows longer than any block's share of nonzeros, of several lengths, between short rows.
    Rows rows(600);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::int64_t length = r % 97 == 5 ? 20000 + 3000 * static_cast<std::int64_t>(r % 5) : 2 + static_cast<std::int64_t>(rng.below(6));
      fill_row(rows[r], 70000, length, rng);
    }
    s.push_back({"rows_longer_than_a_block", zoo_detail::from_rows(70000, rows)});
  }
  {  // Many tiny rows: more rows than fit an output buffer (Hola's COO-like mode).
    s.push_back({"many_single_entry_rows", spmv::gen::random_uniform(200000, 1000, 1, 77)});
  }
  {  // One dense row spanning many blocks, in a square matrix (CSR-Adaptive's long-row splitting).
    Rows rows(3000);
    fill_row(rows[1500], 600000, 600000, rng);
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (r != 1500) fill_row(rows[r], 600000, 4, rng);
    s.push_back({"one_row_spanning_many_blocks", zoo_detail::from_rows(600000, rows)});
  }
  {  // Rows ending exactly at and one off multiples of 512 nonzeros (tile edges of the load-balancing
     // kernels), thousands of empty rows in one tile, a row over three tiles, trailing empty rows.
    std::vector<std::int64_t> lengths{512, 0, 0, 511, 1, 0, 513, 0, 31, 33, 32, 0, 1500, 0, 0, 1, 1, 510};
    lengths.insert(lengths.begin() + 8, 3000, 0);
    lengths.insert(lengths.end(), 600, 1);
    lengths.insert(lengths.end(), {0, 2047, 1, 0, 0, 0});
    Rows rows(lengths.size());
    for (std::size_t r = 0; r < rows.size(); ++r) fill_row(rows[r], 4096, lengths[r], rng);
    s.push_back({"rows_at_chunk_edges", zoo_detail::from_rows(4096, rows)});
  }
  return s;
}

struct SpecialCase {
  Algorithm algorithm;
  Operation op;
  std::size_t matrix;
};

std::vector<SpecialCase> special_cases() {
  std::vector<SpecialCase> cases;
  if (!cuda_available()) return cases;
  const std::size_t count = special_matrices().size();
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (Algorithm algorithm : backend_algorithms(Backend::Cuda, op))
      for (std::size_t m = 0; m < count; ++m) cases.push_back({algorithm, op, m});
  return cases;
}

const std::vector<Special>& specials() {
  static const auto s = special_matrices();
  return s;
}

class CudaSpecialCases : public ::testing::TestWithParam<SpecialCase> {};

TEST_P(CudaSpecialCases, MatchesReference) {
  const auto& c = GetParam();
  const auto& m = specials()[c.matrix];
  check_against_reference<float, std::int32_t>(Backend::Cuda, c.algorithm, c.op, m.matrix, m.name);
  check_against_reference<double, std::int64_t>(Backend::Cuda, c.algorithm, c.op, m.matrix, m.name);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaSpecialCases, ::testing::ValuesIn(special_cases()),
                         [](const ::testing::TestParamInfo<SpecialCase>& info) {
                           return identifier(to_string(info.param.algorithm)) + "_" +
                                  specials()[info.param.matrix].name + "_" +
                                  std::string(spmv::to_string(info.param.op));
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaSpecialCases);

// The sanitizer set: every algorithm and operation on three small matrices that still reach the
// irregular paths (unsorted/duplicates, empty rows, a long row), double/int32.
class CudaSanitize : public ::testing::TestWithParam<SpecialCase> {};

std::vector<SpecialCase> sanitize_cases() {
  std::vector<SpecialCase> cases;
  if (!cuda_available()) return cases;
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (Algorithm algorithm : backend_algorithms(Backend::Cuda, op))
      for (std::size_t m : {zoo_index("tiny_unsorted_duplicates"), zoo_index("empty_rows"), zoo_index("long_rows")})
        cases.push_back({algorithm, op, m});
  return cases;
}

TEST_P(CudaSanitize, SmallMatrices) {
  const auto& c = GetParam();
  check_against_reference<double, std::int32_t>(Backend::Cuda, c.algorithm, c.op, zoo_matrix(c.matrix),
                                                zoo()[c.matrix].name);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaSanitize, ::testing::ValuesIn(sanitize_cases()),
                         [](const ::testing::TestParamInfo<SpecialCase>& info) {
                           return identifier(to_string(info.param.algorithm)) + "_" + zoo()[info.param.matrix].name +
                                  "_" + std::string(spmv::to_string(info.param.op));
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaSanitize);

}  // namespace
}  // namespace spmv::test

namespace spmv::test {
namespace {

// Auto resolves differently by size and row statistics; every branch it can take must be correct.
TEST(CudaAuto, MatchesReferenceAcrossTheZoo) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (const char* name : {"poisson2d_64", "power_law_rmat12", "huge_row", "mostly_empty", "long_rows", "size_4193",
                           "empty_rows", "tiny_unsorted_duplicates"})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      SCOPED_TRACE(std::string(name) + " op=" + std::string(spmv::to_string(op)));
      check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::Auto, op, zoo_matrix(name), name);
      check_against_reference<float, std::int64_t>(Backend::Cuda, Algorithm::Auto, op, zoo_matrix(name), name);
      Options many_products;  // the explicit-transpose branch of A^T x
      many_products.expected_applies = 1000;
      check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::Auto, op, zoo_matrix(name), name,
                                                    many_products);
    }
  // The large-matrix branches need more than the small-matrix cut (src/core/auto_rule.cpp, 2^16).
  for (const auto& special : specials())
    if (special.matrix.nnz() >= (std::int64_t(1) << 16)) {
      check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::Auto, Operation::NonTranspose,
                                                    special.matrix, special.name);
      Options many_products;  // the DIA / ELL conversions
      many_products.expected_applies = 100000;
      check_against_reference<float, std::int32_t>(Backend::Cuda, Algorithm::Auto, Operation::NonTranspose,
                                                   special.matrix, special.name, many_products);
    }
}

}  // namespace
}  // namespace spmv::test
