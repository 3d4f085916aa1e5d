// The benchmark engine (src/bench) on its own, without either front-end: the selection rule, the one
// field list of a result row and its JSON, and one verified and one fault-injected run on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_engine.hpp"
#include "byte_model.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::bench {
namespace {

TEST(BenchEngine, SelectsVendorsFirstAndRefusesUnknownNames) {
  const auto chosen = select_algorithms({"row-loop", "eigen"}, Backend::Cpu, Operation::NonTranspose);
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_TRUE(is_vendor(chosen[0]));
  EXPECT_EQ(chosen[1], Algorithm::RowLoop);
  EXPECT_EQ(select_algorithms({}, Backend::Cpu, Operation::NonTranspose).back(), Algorithm::Auto);
  EXPECT_THROW(select_algorithms({"warp-speed"}, Backend::Cpu, Operation::NonTranspose), InvalidArgument);
}

TEST(BenchEngine, RowJsonIsTheFieldListWithNullForNaN) {
  BenchRow r;
  r.algorithm = "auto";
  r.median_ms = 0.5;
  const auto fields = row_fields(r);
  const auto j = row_json(r);
  ASSERT_EQ(j.size(), fields.size());
  std::size_t k = 0;
  for (const auto& [key, value] : j.items()) EXPECT_EQ(key, fields[k++].first);
  EXPECT_TRUE(j["error_ratio"].is_null());  // not measured: NaN in the fields, null in JSON
  EXPECT_TRUE(std::isnan(std::get<double>(fields[13].second)));
  EXPECT_EQ(j["median_ms"], 0.5);
  EXPECT_EQ(j["verified"], "ok");
}

TEST(BenchEngine, VerifiesTimesAndCatchesAFault) {
  const auto a = gen::generate("poisson2d", {{"n", 6.0}});
  BenchSettings s;
  s.algorithms = {Algorithm::RowLoop};
  s.timing = TimingOptions{0, 1, 0.0};
  s.quiet = true;
  s.print_rows = false;
  Progress progress{0, planned_rows(s)};
  auto rows = bench_matrix(a, Precision::F64, s, "poisson2d", progress);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, RowStatus::Ok) << rows[0].message;
  EXPECT_LE(rows[0].error_ratio, 1.0);
  EXPECT_GT(rows[0].median_ms, 0.0);
  EXPECT_EQ(rows[0].model_bytes, minimal_bytes(a.rows, a.cols, a.nnz(), 8, 4, Operation::NonTranspose, false));

  s.inject_fault = true;
  rows = bench_matrix(a, Precision::F32, s, "poisson2d", progress);
  EXPECT_EQ(rows[0].status, RowStatus::Failed);
  EXPECT_TRUE(std::isnan(rows[0].median_ms));
}

// The typed entry point runs the matrix as given: 64-bit indices forced on a small matrix (the
// front-ends would pick 32) through every CPU algorithm, verified by the blocked double reference over
// the stored float or double values, both operations.
template <class Value>
void expect_every_cpu_algorithm_verifies_with_int64(Operation op) {
  const auto a = gen::generate<Value, std::int64_t>("rmat", {{"scale", 9}, {"edge_factor", 6}, {"seed", 4}});
  BenchSettings s;
  s.op = op;
  s.beta = 0.5;
  s.algorithms = select_algorithms({"all"}, Backend::Cpu, op);
  s.timing = TimingOptions{0, 1, 0.0};
  s.quiet = true;
  s.print_rows = false;
  Progress progress{0, planned_rows(s)};
  const auto rows = bench_matrix(a, s, "rmat", progress);
  ASSERT_EQ(rows.size(), s.algorithms.size());
  int verified = 0;
  for (const BenchRow& r : rows) {
    SCOPED_TRACE(r.algorithm);
    EXPECT_EQ(r.index_type, "int64");
    EXPECT_EQ(r.precision, sizeof(Value) == 4 ? "f32" : "f64");
    EXPECT_NE(r.status, RowStatus::Failed) << r.message;
    EXPECT_NE(r.status, RowStatus::Error) << r.message;
    verified += r.status == RowStatus::Ok;
  }
  EXPECT_GE(verified, 3);
}

TEST(BenchEngine, TypedMatrixWithForcedInt64IndicesVerifiesEveryCpuAlgorithm) {
  expect_every_cpu_algorithm_verifies_with_int64<float>(Operation::NonTranspose);
  expect_every_cpu_algorithm_verifies_with_int64<float>(Operation::Transpose);
  expect_every_cpu_algorithm_verifies_with_int64<double>(Operation::NonTranspose);
  expect_every_cpu_algorithm_verifies_with_int64<double>(Operation::Transpose);
}

// The blocked reference must still catch a wrong product in float with 64-bit indices.
TEST(BenchEngine, TypedMatrixCatchesAFault) {
  const auto a = gen::generate<float, std::int64_t>("poisson3d", {{"n", 7}});
  BenchSettings s;
  s.algorithms = {Algorithm::RowLoop};
  s.timing = TimingOptions{0, 1, 0.0};
  s.quiet = true;
  s.print_rows = false;
  s.inject_fault = true;
  Progress progress{0, planned_rows(s)};
  const auto rows = bench_matrix(a, s, "poisson3d", progress);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, RowStatus::Failed);
}

// Half storage (issue 11): the names, and f16 / bf16 rows on the CPU backend. The row loop offers it
// (verified against the reference of round_values(a, s) under the f32 bound, with the storage rounding
// stated against u + c*eps*(1 + u)); an algorithm that does not offer it is a skipped row, not a
// failure; values are counted at 2 bytes.
TEST(BenchEngine, PrecisionNamesRoundTrip) {
  for (Precision p : {Precision::F32, Precision::F64, Precision::F16, Precision::Bf16})
    EXPECT_EQ(parse_precision(to_string(p)), p);
  EXPECT_FALSE(parse_precision("f8"));
  EXPECT_FALSE(parse_precision("both"));
  EXPECT_EQ(value_storage(Precision::F16), ValueStorage::F16);
  EXPECT_EQ(value_storage(Precision::Bf16), ValueStorage::Bf16);
  EXPECT_EQ(value_storage(Precision::F32), ValueStorage::Native);
  EXPECT_EQ(settings_for(BenchSettings{}, Precision::Bf16).options.values, ValueStorage::Bf16);
}

TEST(BenchEngine, HalfStorageRowsStateTheRounding) {
  // Values in [-1, 1): most are not representable in either storage, so the rounding shows.
  const auto a = gen::generate("random_uniform", {{"rows", 300}, {"cols", 300}, {"per_row", 6}, {"seed", 3}});
  BenchSettings s;
  s.beta = 0.5;
  s.algorithms = {Algorithm::RowLoop, Algorithm::Coo};
  s.timing = TimingOptions{0, 1, 0.0};
  s.quiet = true;
  s.print_rows = false;
  for (Precision p : {Precision::F16, Precision::Bf16}) {
    SCOPED_TRACE(std::string(to_string(p)));
    Progress progress{0, planned_rows(s)};
    const auto rows = bench_matrix(a, p, s, "random_uniform", progress);
    ASSERT_EQ(rows.size(), 2u);
    const BenchRow& loop = rows[0];
    EXPECT_EQ(loop.precision, to_string(p));
    EXPECT_EQ(loop.status, RowStatus::Ok) << loop.message;
    EXPECT_LE(loop.error_ratio, 1.0);
    EXPECT_GT(loop.median_ms, 0.0);
    // c = 2*(6 + 2) for rows of 6; the storage error is mostly the rounding, so above eps_f32 here.
    const double u = storage_unit_roundoff(value_storage(p));
    EXPECT_DOUBLE_EQ(loop.storage_bound, u + 16 * 0x1p-23 * (1 + u));
    EXPECT_LE(loop.storage_error, loop.storage_bound);
    EXPECT_GT(loop.storage_error, 0x1p-23);
    // 2 bytes per value, 4 per index and per x and y entry (y read too: beta != 0).
    EXPECT_EQ(loop.model_bytes, minimal_bytes(300, 300, a.nnz(), 2, 4, 4, Operation::NonTranspose, true));
    EXPECT_EQ(loop.model_bytes, static_cast<std::uint64_t>(a.nnz() * 6 + 301 * 4 + 300 * 4 + 2 * 300 * 4));

    const BenchRow& coo = rows[1];  // the CPU offers half storage on auto and row-loop only
    EXPECT_EQ(coo.status, RowStatus::Skipped) << coo.message;
    EXPECT_FALSE(coo.message.empty());
    EXPECT_EQ(coo.precision, to_string(p));
  }
  // f32 rows carry no storage figures.
  Progress progress{0, planned_rows(s)};
  const auto f32 = bench_matrix(a, Precision::F32, s, "random_uniform", progress);
  EXPECT_TRUE(std::isnan(f32[0].storage_error));
  EXPECT_TRUE(std::isnan(f32[0].storage_bound));
}

// Half storage computes in f32: the typed entry point refuses a double matrix with it.
TEST(BenchEngine, HalfStorageNeedsAFloatMatrix) {
  const auto a = gen::generate<double, std::int32_t>("poisson2d", {{"n", 5}});
  BenchSettings s = settings_for(BenchSettings{}, Precision::F16);
  s.algorithms = {Algorithm::RowLoop};
  s.quiet = true;
  s.print_rows = false;
  Progress progress{0, planned_rows(s)};
  EXPECT_THROW(bench_matrix(a, s, "poisson2d", progress), InvalidArgument);
}

}  // namespace
}  // namespace spmv::bench
