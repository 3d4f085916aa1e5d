// Algorithm::Tune on the CPU backend: every product right while tuning and after (the shared
// differential checker), every point of the space right, settling within the budget, wisdom files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/differential.hpp"
#include "core/tuner.hpp"
#include "spmv/error.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

const char* const kMatrices[] = {"poisson2d_64", "power_law_rmat12", "mostly_empty", "huge_row", "banded_2000",
                                 "tall_5000x37",  "one_column",       "tiny_unsorted_duplicates"};

template <class Value, class Index>
void check_tuned(const std::string& name, Operation op, const Options& options) {
  const auto a = convert<Value, Index>(zoo_matrix(name));
  auto oper = make_operator(Backend::Cpu, a, Algorithm::Tune, op, options);
  ASSERT_TRUE(oper->tuning());
  // Three rounds of the 20 checked products: the first tunes (at most 10 timed products), the others
  // run the settled choice; every one is compared with the reference.
  for (int round = 0; round < 3; ++round) {
    const OperatorCheck check = check_operator(*oper, a, hash_name(name) + round);
    for (const auto& f : check.failures)
      ADD_FAILURE() << "tune on " << name << " op " << to_string(op) << " round " << round << " ["
                    << oper->policy() << "]: " << f;
  }
  const TuningReport r = *oper->tuning();
  EXPECT_TRUE(r.settled) << name << ": " << oper->policy();
  EXPECT_LE(r.samples, detail::kMaxTuningSamples);
  EXPECT_GT(r.applies_to_settle, 0);
  EXPECT_FALSE(r.trajectory.empty());
  EXPECT_NE(oper->algorithm(), Algorithm::Tune);
  EXPECT_NE(oper->algorithm(), Algorithm::Auto);
  EXPECT_NE(oper->policy().find("tune(settled after"), std::string::npos) << oper->policy();
}

TEST(CpuTune, EveryProductIsRightWhileTuningAndAfter) {
  for (const char* name : kMatrices)
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      check_tuned<double, std::int32_t>(name, op, {});
      check_tuned<float, std::int64_t>(name, op, {});
    }
}

TEST(CpuTune, WithAnExpectedAppliesHintTheFormatsJoinAndStayRight) {
  Options hinted;
  hinted.expected_applies = 1000;
  for (const char* name : kMatrices)
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) check_tuned<double, std::int32_t>(name, op, hinted);
  // The hint brings DIA into the space of a stencil.
  const auto a = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  const auto space = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, hinted)->tuning()->space;
  bool dia = false;
  for (const auto& c : space) dia = dia || c.algorithm == Algorithm::Dia;
  EXPECT_TRUE(dia);
  for (const auto& c : make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose)->tuning()->space)
    EXPECT_NE(c.algorithm, Algorithm::Dia) << "a conversion without the hint";
}

TEST(CpuTune, EveryPointOfTheSpaceIsRight) {
  Options hinted;
  hinted.expected_applies = 100000;
  for (const char* name : {"poisson2d_64", "mostly_empty"}) {
    const auto a = convert<double, std::int32_t>(zoo_matrix(name));
    const auto space = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, hinted)->tuning()->space;
    EXPECT_GE(space.size(), 2u);
    for (const auto& c : space) {
      std::unique_ptr<Operator<double, std::int32_t>> oper;
      try {
        oper = make_cpu_operator(a, c.algorithm, Operation::NonTranspose, with_knobs(hinted, c));
      } catch (const Unsupported&) {
        continue;  // e.g. DIA on a matrix that is not banded: the tuner records a refusal
      }
      const OperatorCheck check = check_operator(*oper, a, 7);
      for (const auto& f : check.failures) ADD_FAILURE() << c.label << " on " << name << ": " << f;
    }
  }
}

TEST(CpuTune, DegenerateShapesAndWrongSizes) {
  for (const char* name : {"empty_0x0", "empty_0x7", "empty_7x0", "no_nonzeros_5x6"})
    check_against_reference<double, std::int32_t>(Backend::Cpu, Algorithm::Tune, Operation::NonTranspose,
                                                  zoo_matrix(name), name);
  const auto a = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  auto oper = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose);
  std::vector<double> x(a.cols + 1, 1.0), y(a.rows, 0.0);
  EXPECT_THROW(oper->apply(1.0, x, 0.0, y), InvalidArgument);
}

TEST(CpuTune, TimeSettlesFirstThenTimesTheChoice) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  auto oper = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose);
  std::vector<double> x(a.cols, 1.0), y(a.rows, 0.0);
  const Timing t = oper->time(1.0, x, 0.0, y, TimingOptions{1, 3, 0.1});
  EXPECT_TRUE(oper->tuning()->settled);
  EXPECT_GT(t.median_ms, 0);
}

TEST(CpuTune, ConcurrentCallersGetRightProducts) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("power_law_rmat12"));
  auto oper = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose);
  std::vector<double> x(a.cols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(double(i));
  std::vector<double> expected(a.rows, 0.0);
  cpu::reference<double, std::int32_t>(a, Operation::NonTranspose, 1.0, x, 0.0, expected);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 10; ++k) {
        std::vector<double> y(a.rows, std::nan(""));
        oper->apply(1.0, x, 0.0, y);
        for (std::size_t i = 0; i < y.size(); ++i)
          if (!(std::abs(y[i] - expected[i]) <= 1e-9 * (1 + std::abs(expected[i])))) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  EXPECT_TRUE(oper->tuning()->settled);
}

// ---- Wisdom ---------------------------------------------------------------------------------------

struct WisdomFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("spmv_cpu_tune_wisdom_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json"))
                         .string();
  WisdomFile() { std::filesystem::remove(path); }
  ~WisdomFile() { std::filesystem::remove(path); }
};

template <class Value, class Index>
void settle(Operator<Value, Index>& oper) {
  std::vector<Value> x(static_cast<std::size_t>(oper.cols()), Value(1)), y(static_cast<std::size_t>(oper.rows()));
  for (int i = 0; i < 30 && !oper.tuning()->settled; ++i) oper.apply(Value(1), x, Value(0), y);
}

TEST(CpuTuneWisdom, SecondRunStartsTuned) {
  WisdomFile f;
  Options o;
  o.tuning_wisdom = f.path;
  const auto a = convert<double, std::int32_t>(zoo_matrix("mostly_empty"));
  auto first = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, o);
  EXPECT_FALSE(first->tuning()->from_wisdom);
  settle(*first);
  ASSERT_TRUE(first->tuning()->settled);
  ASSERT_TRUE(std::filesystem::exists(f.path));

  auto second = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, o);
  const TuningReport r = *second->tuning();
  EXPECT_TRUE(r.settled);
  EXPECT_TRUE(r.from_wisdom);
  EXPECT_EQ(r.samples, 0);
  EXPECT_EQ(second->algorithm(), first->algorithm());
  // The kernel parameters are the same (the policy after the tune(...) prefix).
  auto kernel_policy = [](const std::string& p) { return p.substr(p.find(") ") + 2); };
  EXPECT_EQ(kernel_policy(second->policy()), kernel_policy(first->policy()));
  const OperatorCheck check = check_operator(*second, a, 3);
  EXPECT_TRUE(check.failures.empty());

  // The environment variable names the file when Options does not.
  ASSERT_EQ(setenv("SPMV_TUNING_WISDOM", f.path.c_str(), 1), 0);
  auto from_env = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose);
  unsetenv("SPMV_TUNING_WISDOM");
  EXPECT_TRUE(from_env->tuning()->from_wisdom);
}

TEST(CpuTuneWisdom, MismatchedEntriesAreIgnored) {
  WisdomFile f;
  Options o;
  o.tuning_wisdom = f.path;
  const auto a = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  auto first = make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, o);
  settle(*first);
  // Same sizes, another structure (the first column index, which the hash samples, moved): stale,
  // tunes again.
  auto b = a;
  b.col_idx[0] = 2;
  ASSERT_NE(b.col_idx, a.col_idx);
  EXPECT_FALSE(make_cpu_operator(b, Algorithm::Tune, Operation::NonTranspose, o)->tuning()->from_wisdom);
  // Another operation, value type, or conversion permission: no entry.
  EXPECT_FALSE(make_cpu_operator(a, Algorithm::Tune, Operation::Transpose, o)->tuning()->from_wisdom);
  EXPECT_FALSE(make_cpu_operator(convert<float, std::int32_t>(a), Algorithm::Tune, Operation::NonTranspose, o)
                   ->tuning()
                   ->from_wisdom);
  Options hinted = o;
  hinted.expected_applies = 1000;
  EXPECT_FALSE(make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, hinted)->tuning()->from_wisdom);
  EXPECT_TRUE(make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, o)->tuning()->from_wisdom);
}

TEST(CpuTuneWisdom, CorruptFileIsAClearError) {
  WisdomFile f;
  { std::ofstream(f.path) << "not json at all"; }
  Options o;
  o.tuning_wisdom = f.path;
  const auto a = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  try {
    make_cpu_operator(a, Algorithm::Tune, Operation::NonTranspose, o);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(f.path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spmv::test
