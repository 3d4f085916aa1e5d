// CUDA SpMM (include/spmv/cuda/spmm.hpp): the shared differential body (tests/common/spmm_check.hpp)
// on the zoo and the SuiteSparse files, argument errors, one plan from several streams at once, and a
// product captured in a CUDA graph. Skips without a device.
#include <gtest/gtest.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/spmm_check.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/spmm.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"
#include "spmv/spmm.hpp"

namespace spmv::test {

// Runs the product on the device: the host storage of X and Y (padding included, up to the views'
// extents) is copied up, the plan (made with `options`) applied with views of the same shape and leading
// dimension, and Y's storage copied back (so the test sees whether the padding was written).
template <class Value, class Index>
Product<Value> device_spmm_product(const CsrMatrix<Value, Index>& a, Operation op, const Options& options) {
  auto matrix = std::make_shared<cuda::DeviceCsr<Value, Index>>(a);
  auto plan = std::make_shared<cuda::SpmmPlan<Value, Index>>(matrix->view(), op, options);
  return [matrix, plan](Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) {
    const auto nx = static_cast<std::size_t>(x.extent()), ny = static_cast<std::size_t>(y.extent());
    cuda::DeviceBuffer<Value> d_x(std::span<const Value>(x.data, nx));
    cuda::DeviceBuffer<Value> d_y(std::span<const Value>(y.data, ny));
    plan->apply(alpha, DenseView<const Value>{d_x.data(), x.rows, x.cols, x.ld, x.layout}, beta,
                DenseView<Value>{d_y.data(), y.rows, y.cols, y.ld, y.layout});
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    d_y.download(std::span<Value>(y.data, ny));
  };
}

struct CudaSpmmRunner {
  template <class Value, class Index>
  static Product<Value> make(const CsrMatrix<Value, Index>& a, Operation op) {
    return device_spmm_product(a, op, {});
  }
};

// The same with Options::subwarp set (the vector tiles' lanes per row; `lanes` before make()).
struct CudaSpmmLanesRunner {
  static inline int lanes = 0;
  template <class Value, class Index>
  static Product<Value> make(const CsrMatrix<Value, Index>& a, Operation op) {
    Options options;
    options.subwarp = lanes;
    return device_spmm_product(a, op, options);
  }
};

// The host-view operators of `spmv bench --k` on CUDA: spmv's SpMM and a cuSPARSE variant.
template <SpmmKernel kKernel, int kVariant>
struct CudaSpmmOperatorRunner {
  template <class Value, class Index>
  static Product<Value> make(const CsrMatrix<Value, Index>& a, Operation op) {
    std::shared_ptr<SpmmOperator<Value, Index>> oper = make_spmm_operator(Backend::Cuda, a, op, kKernel, {}, kVariant);
    return [oper](Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) {
      oper->apply(alpha, x, beta, y);
    };
  }
};

}  // namespace spmv::test

SPMV_SPMM_TESTS(Cuda, CudaSpmmRunner, !cuda_available())

namespace spmv::test {
namespace {

// The SuiteSparse files (not in the CPU sweep, which CI runs): a few cases each, both operations.
TEST(CudaSpmmFiles, MatchReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<SpmmCase> cases{{4, Layout::RowMajor, 0, 1.0, 0.0, false},
                                    {8, Layout::RowMajor, 1, -1.0, 0.5, false},
                                    {32, Layout::RowMajor, 0, 0.5, 0.0, false},
                                    {8, Layout::ColMajor, 0, 1.0, 1.0, false},
                                    {33, Layout::ColMajor, 2, 1.0, 0.0, false}};
  for (std::size_t i = 0; i < zoo().size(); ++i) {
    if (zoo()[i].generated) continue;
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (int types : {0, 1}) {
        SCOPED_TRACE(zoo()[i].name + (op == Operation::NonTranspose ? " N " : " T ") + (types ? "double" : "float"));
        run_spmm_zoo_param<CudaSpmmRunner>({i, op, types}, cases);
      }
  }
}

// Every compiled width of the vector tiles (Options::subwarp 1..32, rounded up to C, 4C or 32 lanes),
// on matrices with short, long, empty and split rows, every k of the sweep (aligned and padded X).
TEST(CudaSpmm, EveryVectorTileWidthMatchesReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (int lanes : {1, 2, 4, 8, 16, 32})
    for (const char* name : {"poisson2d_64", "power_law_rmat12", "long_rows", "empty_rows"}) {
      SCOPED_TRACE(std::string(name) + " subwarp=" + std::to_string(lanes));
      CudaSpmmLanesRunner::lanes = lanes;
      check_spmm_matrix<float, std::int32_t, CudaSpmmLanesRunner>(zoo_matrix(name), Operation::NonTranspose,
                                                                  k_sweep_cases(), 7000 + lanes);
      check_spmm_matrix<double, std::int64_t, CudaSpmmLanesRunner>(zoo_matrix(name), Operation::NonTranspose,
                                                                   k_sweep_cases(), 8000 + lanes);
    }
}

// The bench's operators: spmv's SpMM through the host path, and cusparseSpMM (ALG_DEFAULT, which takes
// both layouts and operations; the other variants may refuse some, as the bench reports).
TEST(CudaSpmmOperator, SpmmAndCusparseMatchReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<SpmmCase> cases{{4, Layout::RowMajor, 0, 1.0, 0.0, false},
                                    {8, Layout::RowMajor, 0, -1.0, 0.5, false},
                                    {32, Layout::RowMajor, 0, 0.5, 0.0, false},
                                    {8, Layout::ColMajor, 0, 1.0, 1.0, false}};
  for (const char* name : {"power_law_rmat12", "empty_rows", "huge_row", "tiny_unsorted_duplicates"})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      SCOPED_TRACE(std::string(name) + (op == Operation::NonTranspose ? " N" : " T"));
      run_spmm_zoo_param<CudaSpmmOperatorRunner<SpmmKernel::Spmm, 0>>({zoo_index(name), op, 1}, cases);
      run_spmm_zoo_param<CudaSpmmOperatorRunner<SpmmKernel::Vendor, 0>>({zoo_index(name), op, 0}, cases);
    }
}

TEST(CudaSpmm, RejectsBadViews) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(zoo_matrix("tiny_3x4"));
  const cuda::DeviceCsr<double, std::int32_t> d_a(a);
  const cuda::SpmmPlan<double, std::int32_t> plan(d_a.view());
  cuda::DeviceBuffer<double> x(64), y(64);
  const DenseView<const double> good_x{x.data(), 4, 2, 2, Layout::RowMajor};
  const DenseView<double> good_y{y.data(), 3, 2, 2, Layout::RowMajor};
  EXPECT_NO_THROW(plan.apply(1.0, good_x, 0.0, good_y));
  EXPECT_THROW(plan.apply(1.0, {x.data(), 4, 2, 1, Layout::RowMajor}, 0.0, good_y), InvalidArgument);
  EXPECT_THROW(plan.apply(1.0, {x.data(), 4, 2, 3, Layout::ColMajor}, 0.0, good_y), InvalidArgument);
  EXPECT_THROW(plan.apply(1.0, good_x, 0.0, {y.data(), 4, 2, 2, Layout::RowMajor}), InvalidArgument);
  EXPECT_THROW(plan.apply(1.0, {nullptr, 4, 2, 2, Layout::RowMajor}, 0.0, good_y), InvalidArgument);
  EXPECT_NO_THROW(plan.apply(1.0, {nullptr, 4, 0, 1, Layout::RowMajor}, 0.0, {nullptr, 3, 0, 1, Layout::RowMajor}));
  Options bad;
  bad.block_size = 100;
  using Plan = cuda::SpmmPlan<double, std::int32_t>;
  EXPECT_THROW(Plan(d_a.view(), Operation::NonTranspose, bad), InvalidArgument);
  Options bad_lanes;
  bad_lanes.subwarp = 3;
  EXPECT_THROW(Plan(d_a.view(), Operation::NonTranspose, bad_lanes), InvalidArgument);
  bad_lanes.subwarp = 64;
  EXPECT_THROW(Plan(d_a.view(), Operation::NonTranspose, bad_lanes), InvalidArgument);
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());
}

// One plan, four streams at once, each with its own Y (k = 8 and 32, both layouts): the plan owns no
// workspace, so the products may overlap and each must equal the single-stream result bit for bit
// (op = N sums every entry in a fixed order).
TEST(CudaSpmm, OnePlanFromSeveralStreams) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<double, std::int32_t>(gen::random_uniform(1 << 18, 1 << 18, 12, 21));
  const cuda::DeviceCsr<double, std::int32_t> d_a(a);
  const cuda::SpmmPlan<double, std::int32_t> plan(d_a.view());
  for (std::int64_t k : {8, 32})
    for (Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " " + std::string(to_string(layout)));
      const std::int64_t n = a.rows;
      std::vector<double> x(static_cast<std::size_t>(n * k));
      SplitMix64 rng(static_cast<std::uint64_t>(k));
      for (auto& v : x) v = rng.symmetric();
      const cuda::DeviceBuffer<double> d_x{std::span<const double>(x)};
      auto view = [&](const double* p) {
        return DenseView<const double>{p, n, k, layout == Layout::RowMajor ? k : n, layout};
      };
      auto out = [&](double* p) { return DenseView<double>{p, n, k, layout == Layout::RowMajor ? k : n, layout}; };
      cuda::DeviceBuffer<double> d_ref(x.size());
      plan.apply(1.0, view(d_x.data()), 0.0, out(d_ref.data()));
      const auto expected = d_ref.to_host();
      constexpr int kStreams = 4;
      std::vector<cudaStream_t> streams(kStreams);
      std::vector<cuda::DeviceBuffer<double>> ys;
      for (auto& s : streams) SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (int s = 0; s < kStreams; ++s) ys.emplace_back(x.size());
      SPMV_CUDA_CHECK(cudaDeviceSynchronize());
      for (int round = 0; round < 5; ++round)
        for (int s = 0; s < kStreams; ++s) plan.apply(1.0, view(d_x.data()), 0.0, out(ys[s].data()), streams[s]);
      SPMV_CUDA_CHECK(cudaDeviceSynchronize());
      for (int s = 0; s < kStreams; ++s) {
        const auto got = ys[s].to_host();
        EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(double)), 0) << "stream " << s;
      }
      for (auto s : streams) SPMV_CUDA_CHECK(cudaStreamDestroy(s));
    }
}

// One plan from several host threads at once, each on its own stream (and one on the per-thread
// default stream): every result equals the single-thread one bit for bit.
TEST(CudaSpmm, OnePlanFromSeveralThreads) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<float, std::int32_t>(gen::random_uniform(1 << 17, 1 << 17, 10, 23));
  const cuda::DeviceCsr<float, std::int32_t> d_a(a);
  const cuda::SpmmPlan<float, std::int32_t> plan(d_a.view());
  const std::int64_t n = a.rows, k = 16;
  std::vector<float> x(static_cast<std::size_t>(n * k));
  SplitMix64 rng(31);
  for (auto& v : x) v = static_cast<float>(rng.symmetric());
  const cuda::DeviceBuffer<float> d_x{std::span<const float>(x)};
  cuda::DeviceBuffer<float> d_ref(x.size());
  plan.apply(1.0f, row_major(d_x.data(), n, k), 0.0f, row_major(d_ref.data(), n, k));
  const auto expected = d_ref.to_host();
  constexpr int kThreads = 4;
  std::vector<cuda::DeviceBuffer<float>> ys;
  for (int t = 0; t < kThreads; ++t) ys.emplace_back(x.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      cudaStream_t stream = cudaStreamPerThread;
      if (t > 0) SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      for (int round = 0; round < 10; ++round)
        plan.apply(1.0f, row_major(d_x.data(), n, k), 0.0f, row_major(ys[t].data(), n, k), stream);
      SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (t > 0) SPMV_CUDA_CHECK(cudaStreamDestroy(stream));
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    const auto got = ys[t].to_host();
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0) << "thread " << t;
  }
}

// apply() allocates nothing and only enqueues kernels: it can be captured and replayed.
TEST(CudaSpmm, CapturedInAGraph) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = convert<float, std::int32_t>(zoo_matrix("power_law_rmat12"));
  const cuda::DeviceCsr<float, std::int32_t> d_a(a);
  const std::int64_t k = 16;
  std::vector<float> x(static_cast<std::size_t>(a.cols * k));
  SplitMix64 rng(9);
  for (auto& v : x) v = static_cast<float>(rng.symmetric());
  const cuda::DeviceBuffer<float> d_x{std::span<const float>(x)};
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const cuda::SpmmPlan<float, std::int32_t> plan(d_a.view(), op);
    const DenseView<const float> xv = row_major(d_x.data(), plan.x_rows(), k);
    cuda::DeviceBuffer<float> d_direct(static_cast<std::size_t>(plan.y_rows() * k)), d_graph(d_direct.size());
    plan.apply(2.0f, xv, 0.0f, row_major(d_direct.data(), plan.y_rows(), k));
    cudaStream_t stream;
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    SPMV_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    plan.apply(2.0f, xv, 0.0f, row_major(d_graph.data(), plan.y_rows(), k), stream);
    SPMV_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    SPMV_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    SPMV_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto direct = d_direct.to_host(), replayed = d_graph.to_host();
    if (op == Operation::NonTranspose) {
      EXPECT_EQ(std::memcmp(direct.data(), replayed.data(), direct.size() * sizeof(float)), 0);
    } else {  // atomics: same sums in another order; the bound of error_bound.hpp, relative to |y|'s scale
      for (std::size_t i = 0; i < direct.size(); ++i)
        EXPECT_NEAR(direct[i], replayed[i], 1e-3f * (1.0f + std::abs(direct[i]))) << i;
    }
    SPMV_CUDA_CHECK(cudaGraphExecDestroy(exec));
    SPMV_CUDA_CHECK(cudaGraphDestroy(graph));
    SPMV_CUDA_CHECK(cudaStreamDestroy(stream));
  }
}

}  // namespace
}  // namespace spmv::test
