// spmv::cuda::TunedPlan (Algorithm::Tune on the device): every product right while tuning and after,
// settling within the budget, graph capture using the best choice so far, products from two streams,
// the Operator path through the shared differential checker, and wisdom. Skips without a device.
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "core/tuner.hpp"
#include "spmv/cpu.hpp"
#include "spmv/cuda/tuned_plan.hpp"
#include "spmv/generators.hpp"

namespace spmv::test {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device"

using Matrix = CsrMatrix<double, std::int32_t>;
using cuda::DeviceBuffer;

std::vector<double> test_vector(std::size_t n, double phase) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * double(i) + phase);
  return v;
}

// y = A x against the double reference, under the error bound of error_bound.hpp.
void expect_product(const Matrix& a, Operation op, const std::vector<double>& x, const std::vector<double>& y,
                    const std::string& where) {
  const auto a64 = convert<double, std::int64_t>(a);
  std::vector<double> ref(y.size(), 0.0);
  cpu::reference<double, std::int64_t>(a64, op, 1.0, x, 0.0, ref);
  const auto magnitude = cpu::reference_magnitude<double, std::int64_t>(a64, op, x);
  const auto lengths = output_row_lengths(a, op);
  const std::vector<double> y0(y.size(), 0.0);
  const auto report = check_error_bound<double>(y, ref, y0, magnitude, lengths, 1.0, 0.0);
  EXPECT_TRUE(report.passed()) << where << ": " << report.describe();
}

std::vector<Matrix> matrices() {
  return {convert<double, std::int32_t>(gen::generate("poisson2d", {{"n", 300}})),
          convert<double, std::int32_t>(gen::generate("rmat", {{"scale", 14}, {"edge_factor", 8}})),
          convert<double, std::int32_t>(zoo_matrix("mostly_empty")), convert<double, std::int32_t>(zoo_matrix("huge_row"))};
}

TEST(CudaTunedPlan, EveryProductRightWhileTuningAndSettles) {
  SKIP_WITHOUT_GPU();
  for (const Matrix& a : matrices())
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (std::int64_t hint : {std::int64_t(0), std::int64_t(100000)}) {
        Options options;
        options.expected_applies = hint;
        cuda::DeviceCsr<double, std::int32_t> d(a);
        cuda::TunedPlan<double, std::int32_t> plan(d.view(), op, options);
        const auto x = test_vector(static_cast<std::size_t>(plan.x_size()), 0.5);
        DeviceBuffer<double> dx{std::span<const double>(x)};
        DeviceBuffer<double> dy(static_cast<std::size_t>(plan.y_size()));
        std::vector<double> y(static_cast<std::size_t>(plan.y_size()));
        for (int i = 0; i < 40; ++i) {
          plan.apply(1.0, dx.data(), 0.0, dy.data());
          dy.download(y);  // synchronizes: the sample's events are ready at the next product
          expect_product(a, op, x, y,
                         "product " + std::to_string(i) + " of " + std::to_string(a.rows) + " rows, op " +
                             std::string(to_string(op)) + ", hint " + std::to_string(hint) + " [" + plan.policy() + "]");
        }
        const TuningReport r = plan.report();
        EXPECT_TRUE(r.settled) << plan.policy();
        EXPECT_LE(r.samples, detail::kMaxTuningSamples);
        // The budget: the settled choice runs from apply kMaxTuningSamples + 1 on.
        EXPECT_LE(r.applies_to_settle, detail::kMaxTuningSamples);
      }
}

// Short products are sampled in bursts (the others into scratch with beta = 0): y, updated with
// beta != 0 on every apply, must still see exactly one product per apply.
TEST(CudaTunedPlan, BurstSamplesOfShortProductsKeepBetaRight) {
  SKIP_WITHOUT_GPU();
  const Matrix a = matrices()[0];  // 90,000 rows: products of a few microseconds
  cuda::DeviceCsr<double, std::int32_t> d(a);
  cuda::TunedPlan<double, std::int32_t> plan(d.view());
  const auto x = test_vector(static_cast<std::size_t>(a.cols), 0.25);
  const auto y0 = test_vector(static_cast<std::size_t>(a.rows), 2.0);
  DeviceBuffer<double> dx{std::span<const double>(x)};
  DeviceBuffer<double> dy{std::span<const double>(y0)};
  const auto a64 = convert<double, std::int64_t>(a);
  const auto magnitude = cpu::reference_magnitude<double, std::int64_t>(a64, Operation::NonTranspose, x);
  const auto lengths = output_row_lengths(a, Operation::NonTranspose);
  std::vector<double> expected = y0, before = y0, y(y0.size());
  const double alpha = -1.5, beta = 0.5;
  for (int i = 0; i < 14; ++i) {
    plan.apply(alpha, dx.data(), beta, dy.data());
    cpu::reference<double, std::int64_t>(a64, Operation::NonTranspose, alpha, x, beta, expected);
    dy.download(y);
    const auto report = check_error_bound<double>(y, expected, before, magnitude, lengths, alpha, beta);
    ASSERT_TRUE(report.passed()) << "apply " << i << " [" << plan.policy() << "]: " << report.describe();
    expected = y;  // the next step starts from what the device holds, so errors do not compound
    before = y;
  }
  const TuningReport r = plan.report();
  EXPECT_TRUE(r.settled) << plan.policy();
  // The first sample is a burst (fewer than 2^24 nonzeros, no estimate yet); later ones are bursts
  // while the best estimate is short, which a slowed run (compute-sanitizer) may not give.
  bool first = true;
  for (const TuningStep& step : r.trajectory)
    if (step.ms > 0 && step.decision.rfind("settled", 0) != 0) {
      if (first) EXPECT_EQ(step.products, 8) << step.candidate << " " << step.decision;
      else EXPECT_TRUE(step.products == 8 || step.products == 1) << step.candidate << " " << step.decision;
      first = false;
    }
  EXPECT_FALSE(first) << "no sample was timed";
}

TEST(CudaTunedPlan, BackToBackProductsWithoutSynchronizingStillRightAndSettle) {
  SKIP_WITHOUT_GPU();
  const Matrix a = matrices()[0];
  cuda::DeviceCsr<double, std::int32_t> d(a);
  cuda::TunedPlan<double, std::int32_t> plan(d.view());
  const auto x = test_vector(static_cast<std::size_t>(a.cols), 1.0);
  DeviceBuffer<double> dx{std::span<const double>(x)};
  std::vector<DeviceBuffer<double>> ys;
  for (int i = 0; i < 200; ++i) ys.emplace_back(static_cast<std::size_t>(a.rows));
  for (int i = 0; i < 200; ++i) plan.apply(1.0, dx.data(), 0.0, ys[i].data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<double> y(static_cast<std::size_t>(a.rows));
  for (int i = 0; i < 200; ++i) {
    ys[i].download(y);
    expect_product(a, Operation::NonTranspose, x, y, "product " + std::to_string(i));
  }
  EXPECT_TRUE(plan.settled()) << plan.policy();
}

TEST(CudaTunedPlan, CaptureUsesTheBestSoFarAndNeverTunes) {
  SKIP_WITHOUT_GPU();
  const Matrix a = matrices()[1];
  cuda::DeviceCsr<double, std::int32_t> d(a);
  for (bool settle_first : {false, true}) {
    cuda::TunedPlan<double, std::int32_t> plan(d.view());
    const auto x = test_vector(static_cast<std::size_t>(a.cols), 2.0);
    DeviceBuffer<double> dx{std::span<const double>(x)};
    DeviceBuffer<double> dy(static_cast<std::size_t>(a.rows));
    if (settle_first)
      for (int i = 0; i < 30 && !plan.settled(); ++i) {
        plan.apply(1.0, dx.data(), 0.0, dy.data());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
    const int samples_before = plan.report().samples;
    const Algorithm before = plan.algorithm();
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    cudaGraph_t graph;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    plan.apply(1.0, dx.data(), 0.0, dy.data(), stream);
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << "a tuning apply is not capturable";
    EXPECT_EQ(plan.report().samples, samples_before) << "a captured product was a sample";
    EXPECT_EQ(plan.algorithm(), before);
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<double> y(static_cast<std::size_t>(a.rows));
    dy.download(y);
    expect_product(a, Operation::NonTranspose, x, y, settle_first ? "captured after settling" : "captured while tuning");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

TEST(CudaTunedPlan, TwoStreamsWhileTuning) {
  SKIP_WITHOUT_GPU();
  const Matrix a = matrices()[2];
  cuda::DeviceCsr<double, std::int32_t> d(a);
  cuda::TunedPlan<double, std::int32_t> plan(d.view());
  cudaStream_t s[2];
  for (auto& st : s) ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  const auto x = test_vector(static_cast<std::size_t>(a.cols), 3.0);
  DeviceBuffer<double> dx{std::span<const double>(x)};
  std::vector<DeviceBuffer<double>> ys;
  for (int i = 0; i < 60; ++i) ys.emplace_back(static_cast<std::size_t>(a.rows));
  for (int i = 0; i < 60; ++i) plan.apply(1.0, dx.data(), 0.0, ys[i].data(), s[i % 2]);
  for (auto& st : s) ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  std::vector<double> y(static_cast<std::size_t>(a.rows));
  for (int i = 0; i < 60; ++i) {
    ys[i].download(y);
    expect_product(a, Operation::NonTranspose, x, y, "product " + std::to_string(i) + " on stream " + std::to_string(i % 2));
  }
  for (auto& st : s) cudaStreamDestroy(st);
}

TEST(CudaTunedPlan, OperatorPathMatchesReferenceOnTheZoo) {
  SKIP_WITHOUT_GPU();
  for (const char* name : {"poisson2d_64", "power_law_rmat12", "huge_row", "empty_rows", "one_column", "empty_0x7"})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      check_against_reference<double, std::int32_t>(Backend::Cuda, Algorithm::Tune, op, zoo_matrix(name), name);
      check_against_reference<float, std::int64_t>(Backend::Cuda, Algorithm::Tune, op, zoo_matrix(name), name);
    }
}

TEST(CudaTunedPlan, WisdomRoundTrip) {
  SKIP_WITHOUT_GPU();
  const std::string path = (std::filesystem::temp_directory_path() / "spmv_cuda_tune_wisdom_test.json").string();
  std::filesystem::remove(path);
  Options o;
  o.tuning_wisdom = path;
  const Matrix a = matrices()[0];
  cuda::DeviceCsr<double, std::int32_t> d(a);
  Algorithm settled_on;
  std::string settled_policy;
  {
    cuda::TunedPlan<double, std::int32_t> plan(d.view(), Operation::NonTranspose, o);
    DeviceBuffer<double> dx(static_cast<std::size_t>(a.cols)), dy(static_cast<std::size_t>(a.rows));
    cudaMemset(dx.data(), 0, dx.bytes());
    for (int i = 0; i < 30 && !plan.settled(); ++i) {
      plan.apply(1.0, dx.data(), 0.0, dy.data());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
    ASSERT_TRUE(plan.settled());
    settled_on = plan.algorithm();
    settled_policy = plan.policy();
  }
  cuda::TunedPlan<double, std::int32_t> again(d.view(), Operation::NonTranspose, o);
  EXPECT_TRUE(again.settled());
  EXPECT_TRUE(again.report().from_wisdom);
  EXPECT_EQ(again.algorithm(), settled_on);
  EXPECT_EQ(again.policy().substr(again.policy().find(") ") + 2), settled_policy.substr(settled_policy.find(") ") + 2));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace spmv::test
