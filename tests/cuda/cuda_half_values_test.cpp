// Half-precision values on the CUDA backend (Options::values, include/spmv/value_storage.hpp): every
// algorithm that offers them, on every zoo matrix, against the double reference of the *rounded*
// matrix under the f32 bound of error_bound.hpp (the kernels sum in f32, and the rounded values are
// exactly what they multiply), with the (alpha, beta) sweep, NaN-poisoned y and alpha = 0 with NaN/Inf
// in x of check_operator. Then the distance to the unrounded f32 product, which must stay within the
// storage's unit roundoff plus that f32 bound, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::test {
namespace {

// The algorithms that serve half-precision values (docs/ALGORITHMS.md "Half-precision values").
const std::vector<Algorithm> kOffering{Algorithm::Auto,      Algorithm::CsrScalar,   Algorithm::CsrVector,
                                       Algorithm::CsrCoop,   Algorithm::CsrAdaptive, Algorithm::Pcsr,
                                       Algorithm::LightSpmv, Algorithm::MergePath,   Algorithm::Hola,
                                       Algorithm::Sell};

Options with_values(ValueStorage s) {
  Options options;
  options.values = s;
  return options;
}

// Zoo matrix m in float / int32, unless it does not fit 32-bit indices or a finite value leaves the
// storage's range (fp16 beyond 65504 becomes inf; the products then hold inf - inf = NaN, which no
// bound compares; ValuesBeyondTheHalfRangeBecomeInfinite checks that case on its own).
std::optional<CsrMatrix<float, std::int32_t>> zoo_half_matrix(std::size_t m, ValueStorage s) {
  CsrMatrix<float, std::int32_t> a;
  try {
    a = convert<float, std::int32_t>(zoo_matrix(m));
  } catch (const Unsupported&) {
    return std::nullopt;
  }
  for (float v : a.values)
    if (std::isfinite(v) && !std::isfinite(round_to_storage(v, s))) return std::nullopt;
  return a;
}

struct HalfCase {
  ValueStorage storage;
  Algorithm algorithm;
};

class CudaHalfValues : public ::testing::TestWithParam<HalfCase> {};

TEST_P(CudaHalfValues, MatchesTheRoundedMatrixOnTheZoo) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto [storage, algorithm] = GetParam();
  int checked = 0;
  for (std::size_t m = 0; m < zoo().size(); ++m) {
    const auto& entry = zoo()[m];
    const auto matrix = zoo_half_matrix(m, storage);
    if (!matrix) continue;
    const auto& a = *matrix;
    std::unique_ptr<Operator<float, std::int32_t>> oper;
    try {
      oper = make_operator(Backend::Cuda, a, algorithm, Operation::NonTranspose, with_values(storage));
    } catch (const Unsupported& e) {
      // Only a format's padding refusal is a reason to skip a matrix; anything else is a failure.
      EXPECT_EQ(algorithm, Algorithm::Sell) << entry.name << ": " << e.what();
      continue;
    }
    if (a.nnz() > 0 && a.rows > 0 && a.cols > 0)  // an empty matrix's plan only scales y
      EXPECT_NE(oper->policy().find("values=" + std::string(to_string(storage))), std::string::npos) << oper->policy();
    const auto rounded = round_values(a, storage);
    const OperatorCheck check = check_operator(*oper, rounded, hash_name(entry.name + "/half"));
    for (const auto& f : check.failures)
      ADD_FAILURE() << to_string(algorithm) << " [" << oper->policy() << "] on " << entry.name << ": " << f;
    ++checked;
  }
  EXPECT_GT(checked, static_cast<int>(zoo().size()) / 2) << "too few zoo matrices were accepted";
}

// A^T x: csr-vector's atomic scatter (Auto's choice), on the whole zoo, both storages.
TEST(CudaHalfValuesTranspose, MatchesTheRoundedMatrixOnTheZoo) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (ValueStorage storage : {ValueStorage::F16, ValueStorage::Bf16})
    for (std::size_t m = 0; m < zoo().size(); ++m) {
      const auto& entry = zoo()[m];
      const auto matrix = zoo_half_matrix(m, storage);
      if (!matrix) continue;
      const auto& a = *matrix;
      auto oper = make_operator(Backend::Cuda, a, Algorithm::Auto, Operation::Transpose, with_values(storage));
      EXPECT_EQ(oper->algorithm(), Algorithm::CsrVector);
      const OperatorCheck check = check_operator(*oper, round_values(a, storage), hash_name(entry.name + "/halfT"));
      for (const auto& f : check.failures)
        ADD_FAILURE() << to_string(storage) << " [" << oper->policy() << "] on " << entry.name << ", A^T: " << f;
    }
}

std::vector<HalfCase> half_cases() {
  std::vector<HalfCase> cases;
  for (ValueStorage s : {ValueStorage::F16, ValueStorage::Bf16})
    for (Algorithm a : kOffering) cases.push_back({s, a});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CudaHalfValues, ::testing::ValuesIn(half_cases()),
                         [](const ::testing::TestParamInfo<HalfCase>& info) {
                           return std::string(to_string(info.param.storage)) + "_" +
                                  identifier(to_string(info.param.algorithm));
                         });

// Against the unrounded matrix: |y - y_f32| <= (u16 + c(n) eps32) * sum |a_ij x_j| (each product's
// value carries a relative error of at most u16, the sum the f32 bound; values well inside the range).
struct RoundedProduct {
  Algorithm algorithm;  // Auto's choice
  double mean_error;    // mean relative error of the non-empty rows
};
RoundedProduct check_within_storage_rounding(const CsrMatrix<float, std::int32_t>& a, ValueStorage s) {
  std::vector<float> x(a.cols);
  SplitMix64 rng(11);
  for (auto& v : x) v = static_cast<float>(rng.symmetric());
  const auto a_ref = convert<double, std::int64_t>(a);
  const std::vector<double> x_ref(x.begin(), x.end());
  std::vector<double> y_ref(a.rows, 0.0);
  cpu::reference<double, std::int64_t>(a_ref, Operation::NonTranspose, 1.0, x_ref, 0.0, y_ref);
  const auto magnitude = cpu::reference_magnitude<double, std::int64_t>(a_ref, Operation::NonTranspose, x_ref);
  auto oper = make_operator(Backend::Cuda, a, Algorithm::Auto, Operation::NonTranspose, with_values(s));
  std::vector<float> y(a.rows, std::numeric_limits<float>::quiet_NaN());
  oper->apply(1.0f, x, 0.0f, y);
  double mean_error = 0;
  std::int32_t nonempty = 0;
  for (std::int32_t i = 0; i < a.rows; ++i) {
    const double n = a.row_length(i);
    const double bound =
        (storage_unit_roundoff(s) + bound_factor(n) * std::numeric_limits<float>::epsilon()) * magnitude[i];
    const double error = std::fabs(double(y[i]) - y_ref[i]);
    EXPECT_LE(error, bound) << to_string(s) << " row " << i;
    if (error > bound) break;
    if (magnitude[i] > 0) mean_error += error / magnitude[i], ++nonempty;
  }
  return {oper->algorithm(), mean_error / std::max(nonempty, 1)};
}

TEST(CudaHalfValuesAccuracy, WithinTheStorageRoundingOfTheF32Product) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a =
      gen::generate<float, std::int32_t>("random_uniform", {{"rows", 20000}, {"cols", 20000}, {"per_row", 24}});
  for (ValueStorage s : {ValueStorage::F16, ValueStorage::Bf16}) {
    // The rounding is really there (a product that silently used the f32 values would be ~1e-7).
    EXPECT_GT(check_within_storage_rounding(a, s).mean_error, storage_unit_roundoff(s) / 64) << to_string(s);
  }
}

// Power-law rows above 2^20 nonzeros are Auto's segmented-sum class, which has no half-value kernel:
// Auto takes the class's previous kernel, merge-path. (R-MAT's values, edge counts, are exact in fp16: the
// product equals the f32 one here, so the bound is checked, not the rounding.)
TEST(CudaHalfValuesAccuracy, PowerLawRowsTakeMergePath) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = gen::generate<float, std::int32_t>("rmat", {{"scale", 17}, {"edge_factor", 16}});
  ASSERT_GE(a.nnz(), std::int32_t(1) << 20);
  EXPECT_EQ(check_within_storage_rounding(a, ValueStorage::F16).algorithm, Algorithm::MergePath);
}

// Outside fp16's range a value becomes infinity, as the conversion defines (bfloat16 keeps it).
TEST(CudaHalfValuesAccuracy, ValuesBeyondTheHalfRangeBecomeInfinite) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = make_csr<float, std::int32_t>(2, 2, {0, 1, 2}, {0, 1}, {1e5f, 2.0f});
  const std::vector<float> x{1.0f, 1.0f};
  std::vector<float> y(2);
  make_operator(Backend::Cuda, a, Algorithm::CsrScalar, Operation::NonTranspose, with_values(ValueStorage::F16))
      ->apply(1.0f, x, 0.0f, y);
  EXPECT_TRUE(std::isinf(y[0]));
  EXPECT_EQ(y[1], 2.0f);
  make_operator(Backend::Cuda, a, Algorithm::CsrScalar, Operation::NonTranspose, with_values(ValueStorage::Bf16))
      ->apply(1.0f, x, 0.0f, y);
  EXPECT_EQ(y[0], round_to_storage(1e5f, ValueStorage::Bf16));
}

TEST(CudaHalfValuesRefusals, SayWhatIsOffered) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<float, std::int32_t>(zoo_matrix(0));
  const Options f16 = with_values(ValueStorage::F16);
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::Hola, Operation::Transpose, f16), Unsupported);
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::Coo, Operation::NonTranspose, f16), Unsupported);
  // cuSPARSE's mixed mode rounds x too (A and x share a type): not the same product.
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::CusparseCsrAlg1, Operation::NonTranspose, f16), Unsupported);
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::MergePath, Operation::Transpose, f16), Unsupported);
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::Tune, Operation::NonTranspose, f16), Unsupported);
  EXPECT_THROW(make_operator(Backend::Cuda, convert<double, std::int32_t>(zoo_matrix(0)), Algorithm::Auto,
                             Operation::NonTranspose, f16),
               Unsupported);
  EXPECT_THROW(make_operator(Backend::Cuda, convert<float, std::int64_t>(zoo_matrix(0)), Algorithm::Auto,
                             Operation::NonTranspose, f16),
               Unsupported);
  Options reordered = f16;
  reordered.reorder = Reorder::Rcm;
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::Auto, Operation::NonTranspose, reordered), Unsupported);
  try {
    make_operator(Backend::Cuda, a, Algorithm::Dia, Operation::NonTranspose, f16);
    ADD_FAILURE() << "dia accepted values=f16";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("csr-vector"), std::string::npos) << e.what();
  }
}

// Options::deterministic with half values: Auto's choice is reproducible, bit for bit; merge-path is
// refused (its tiles' carries meet in atomics).
TEST(CudaHalfValuesDeterminism, AutoIsBitReproducible) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = gen::generate<float, std::int32_t>("rmat", {{"scale", 14}, {"edge_factor", 16}});
  Options options = with_values(ValueStorage::F16);
  options.deterministic = true;
  auto oper = make_operator(Backend::Cuda, a, Algorithm::Auto, Operation::NonTranspose, options);
  std::vector<float> x(a.cols);
  SplitMix64 rng(5);
  for (auto& v : x) v = static_cast<float>(rng.symmetric());
  std::vector<float> first(a.rows), second(a.rows);
  oper->apply(1.0f, x, 0.0f, first);
  for (int run = 0; run < 5; ++run) {
    oper->apply(1.0f, x, 0.0f, second);
    ASSERT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float))) << "run " << run;
  }
  EXPECT_THROW(make_operator(Backend::Cuda, a, Algorithm::MergePath, Operation::NonTranspose, options), Unsupported);
}

}  // namespace
}  // namespace spmv::test
