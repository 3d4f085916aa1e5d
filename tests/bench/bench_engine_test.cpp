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

}  // namespace
}  // namespace spmv::bench
