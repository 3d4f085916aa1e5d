// One plan (or one Operator) used from several CUDA streams and host threads at once (issue 19), and
// alpha = 0 on the CUDA-native API (issue 20). Every algorithm, products enqueued back to back on
// matrices large enough that kernels of different streams overlap unless the plan orders them. The
// rule itself is also tested without a GPU (tests/core/workspace_order_test.cpp). Skips without a
// device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/error_bound.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::Algorithm;
using spmv::Operation;
using Matrix = spmv::CsrMatrix<double, std::int32_t>;

#define SKIP_WITHOUT_GPU() \
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device"

std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  spmv::test::SplitMix64 rng(seed);
  std::vector<double> v(n);
  for (auto& e : v) e = rng.symmetric();
  return v;
}

// The matrices: uniform rows (12 M nonzeros: each product lasts tens of microseconds, so products
// enqueued on several streams overlap), power-law rows (HYB gets a COO part, merge-path and Hola
// many carry-outs) and a few very long rows (CSR-vector splits them over warps, with a workspace).
struct Case {
  const char* name;
  Matrix a;
};
const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    c.push_back({"random_uniform", spmv::convert<double, std::int32_t>(spmv::gen::random_uniform(1 << 20, 1 << 20, 12, 7))});
    c.push_back({"rmat", spmv::convert<double, std::int32_t>(spmv::gen::rmat(18, 16, 11))});
    c.push_back({"long_rows", spmv::convert<double, std::int32_t>(spmv::gen::long_rows(1 << 18, 1 << 18, 16, 50000, 8, 5))});
    return c;
  }();
  return all;
}

// y = y0 + rounds * alpha * op(A) x, the result of `rounds` products with beta = 1. Each product adds
// at most c(n)*eps*(|alpha| sum|a x| + |y|) (error_bound.hpp) and |y| stays below
// |y0| + rounds*|alpha|*sum|a x|, so rounds * c(n) * eps * (|y0| + rounds*|alpha|*sum|a x|) bounds the total.
struct Expected {
  std::vector<double> y0, y, bound;
};
Expected expected(const Matrix& a, Operation op, const std::vector<double>& x, double alpha, int rounds,
                  std::uint64_t seed) {
  Expected e;
  const std::size_t ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  e.y0 = random_vector(ny, seed);
  std::vector<double> ax(ny, 0.0);
  spmv::cpu::reference(a, op, 1.0, std::span<const double>(x), 0.0, std::span<double>(ax));
  const auto magnitude = spmv::cpu::reference_magnitude(a, op, std::span<const double>(x));
  const auto lengths = spmv::test::output_row_lengths(a, op);
  e.y.resize(ny);
  e.bound.resize(ny);
  for (std::size_t i = 0; i < ny; ++i) {
    e.y[i] = e.y0[i] + rounds * alpha * ax[i];
    const double scale = std::abs(e.y0[i]) + rounds * std::abs(alpha) * magnitude[i];
    e.bound[i] = rounds * spmv::test::bound_factor(lengths[i]) * std::numeric_limits<double>::epsilon() * scale +
                 std::numeric_limits<double>::min();
  }
  return e;
}

// Rows of y outside the bound (0 when right); the first is described in `first`.
std::size_t wrong_rows(const std::vector<double>& y, const Expected& e, std::string& first) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!(std::abs(y[i] - e.y[i]) <= e.bound[i])) {
      if (wrong++ == 0)
        first = "row " + std::to_string(i) + ": " + std::to_string(y[i]) + " vs " + std::to_string(e.y[i]);
    }
  return wrong;
}

class Streams {
 public:
  explicit Streams(int n) : streams_(static_cast<std::size_t>(n)) {
    for (auto& s : streams_) SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  ~Streams() {
    for (auto s : streams_) cudaStreamDestroy(s);
  }
  cudaStream_t operator[](std::size_t k) const { return streams_[k]; }
  std::size_t size() const { return streams_.size(); }

 private:
  std::vector<cudaStream_t> streams_;
};

// `rounds` products of `plan` with beta = 1 on each of `streams.size()` streams, all enqueued back to back
// (every stream's product in flight before any finishes), then each stream's y against its expectation.
void expect_products_on_streams(spmv::cuda::Plan<double, std::int32_t>& plan, const Streams& streams, int rounds,
                                double alpha, std::vector<spmv::cuda::DeviceBuffer<double>>& d_x,
                                std::vector<spmv::cuda::DeviceBuffer<double>>& d_y, const std::vector<Expected>& want) {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < streams.size(); ++k) plan.apply(alpha, d_x[k].data(), 1.0, d_y[k].data(), streams[k]);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (std::size_t k = 0; k < streams.size(); ++k) {
    std::string first;
    EXPECT_EQ(wrong_rows(d_y[k].to_host(), want[k], first), 0u) << "stream " << k << ", first " << first;
  }
}

TEST(CudaStreams, OnePlanSharedByManyStreams) {
  SKIP_WITHOUT_GPU();
  constexpr int kRounds = 3;
  constexpr double kAlpha = 0.75;
  for (const Case& c : cases()) {
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(c.a);
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      const std::size_t nx = static_cast<std::size_t>(op == Operation::NonTranspose ? c.a.cols : c.a.rows);
      // One x and one expected result per stream, computed once for every algorithm.
      std::vector<std::vector<double>> xs;
      std::vector<Expected> want;
      for (int k = 0; k < 8; ++k) {
        xs.push_back(random_vector(nx, 100 + k));
        want.push_back(expected(c.a, op, xs.back(), kAlpha, kRounds, 200 + k));
      }
      std::vector<spmv::cuda::DeviceBuffer<double>> d_x;
      for (const auto& x : xs) d_x.emplace_back(std::span<const double>(x));
      for (Algorithm alg : spmv::backend_algorithms(spmv::Backend::Cuda, op)) {
        std::unique_ptr<spmv::cuda::Plan<double, std::int32_t>> plan;
        try {
          plan = std::make_unique<spmv::cuda::Plan<double, std::int32_t>>(d_a.view(), alg, op);
        } catch (const spmv::Unsupported&) {
          continue;  // padded formats refuse these shapes; the differential tests cover them elsewhere
        }
        for (int n : {2, 8}) {
          SCOPED_TRACE(std::string(c.name) + " " + std::string(spmv::to_string(alg)) + " op=" +
                       std::string(spmv::to_string(op)) + " streams=" + std::to_string(n) + " [" + plan->policy() +
                       "]");
          Streams streams(n);
          std::vector<spmv::cuda::DeviceBuffer<double>> d_y;
          for (int k = 0; k < n; ++k) d_y.emplace_back(std::span<const double>(want[k].y0));
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          // Back to back: every stream's product is in flight before any finishes.
          for (int r = 0; r < kRounds; ++r)
            for (int k = 0; k < n; ++k) plan->apply(kAlpha, d_x[k].data(), 1.0, d_y[k].data(), streams[k]);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          for (int k = 0; k < n; ++k) {
            std::string first;
            EXPECT_EQ(wrong_rows(d_y[k].to_host(), want[k], first), 0u) << "stream " << k << ", first " << first;
          }
        }
      }
    }
  }
}

// Options::reorder gives every plan two vectors of scratch (x' and y'), so its products must chain
// across streams even when the kernel underneath writes only y (CSR-scalar, CSR-vector, atomic A^T).
TEST(CudaStreams, ReorderedPlanSharedByManyStreams) {
  SKIP_WITHOUT_GPU();
  constexpr int kRounds = 3, kStreams = 8;
  constexpr double kAlpha = 0.75;
  for (const Case& c : {cases()[0], cases()[1]}) {
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(c.a);
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      std::vector<Expected> want;
      std::vector<spmv::cuda::DeviceBuffer<double>> d_x, d_y;
      for (int k = 0; k < kStreams; ++k) {
        const auto x = random_vector(static_cast<std::size_t>(c.a.cols), 500 + k);
        want.push_back(expected(c.a, op, x, kAlpha, kRounds, 600 + k));
        d_x.emplace_back(std::span<const double>(x));
        d_y.emplace_back(std::span<const double>(want.back().y0));
      }
      for (spmv::Reorder how : {spmv::Reorder::Rcm, spmv::Reorder::Degree})
        for (Algorithm alg : op == Operation::NonTranspose
                                 ? std::vector{Algorithm::CsrScalar, Algorithm::CsrVector, Algorithm::Auto}
                                 : std::vector{Algorithm::TransposeAtomic, Algorithm::Auto}) {
          spmv::Options options;
          options.reorder = how;
          spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), alg, op, options);
          SCOPED_TRACE(std::string(c.name) + " " + std::string(spmv::to_string(how)) + " [" + plan.policy() +
                       "] op=" + std::string(spmv::to_string(op)));
          for (int k = 0; k < kStreams; ++k) d_y[k].upload(std::span<const double>(want[k].y0));
          expect_products_on_streams(plan, Streams(kStreams), kRounds, kAlpha, d_x, d_y, want);
        }
    }
  }
}

// Column-chunked runs several plans (one per chunk) inside one product, each ordering its own
// workspace across streams (merge-path or segmented-sum blocks on power-law rows); A x adds every block
// into the same y, A^T x writes each block's chunk of y: 8 streams' products in flight at once must
// still give each stream its own result.
TEST(CudaStreams, ColumnChunkedPlanSharedByManyStreams) {
  SKIP_WITHOUT_GPU();
  constexpr int kRounds = 3, kStreams = 8;
  constexpr double kAlpha = 0.75;
  for (const Case& c : cases()) {
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(c.a);
    spmv::Options options;
    options.column_span = c.a.cols / 5 + 1;  // 5 chunks
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      const std::size_t nx = static_cast<std::size_t>(op == Operation::NonTranspose ? c.a.cols : c.a.rows);
      std::vector<Expected> want;
      std::vector<spmv::cuda::DeviceBuffer<double>> d_x, d_y;
      for (int k = 0; k < kStreams; ++k) {
        const auto x = random_vector(nx, 700 + k);
        want.push_back(expected(c.a, op, x, kAlpha, kRounds, 800 + k));
        d_x.emplace_back(std::span<const double>(x));
        d_y.emplace_back(std::span<const double>(want.back().y0));
      }
      spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), Algorithm::ColumnChunked, op, options);
      SCOPED_TRACE(std::string(c.name) + " [" + plan.policy() + "] op=" + std::string(spmv::to_string(op)));
      expect_products_on_streams(plan, Streams(kStreams), kRounds, kAlpha, d_x, d_y, want);
    }
  }
}

TEST(CudaStreams, HostThreadsEachWithTheirOwnStream) {
  SKIP_WITHOUT_GPU();
  const Case& c = cases()[1];  // power-law rows
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(c.a);
  constexpr int kThreads = 8, kRounds = 4;
  std::vector<std::vector<double>> xs;
  std::vector<Expected> want;
  for (int k = 0; k < kThreads; ++k) {
    xs.push_back(random_vector(static_cast<std::size_t>(c.a.cols), 300 + k));
    want.push_back(expected(c.a, Operation::NonTranspose, xs.back(), 1.0, kRounds, 400 + k));
  }
  for (Algorithm alg : {Algorithm::MergePath, Algorithm::Pcsr, Algorithm::LightSpmv, Algorithm::Hyb, Algorithm::Coo,
                        Algorithm::CsrVector, Algorithm::CusparseCsrAlg2, Algorithm::Auto}) {
    SCOPED_TRACE(std::string(spmv::to_string(alg)));
    spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), alg);
    Streams streams(kThreads);
    std::vector<std::size_t> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k)
      threads.emplace_back([&, k] {
        spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(xs[k])}, d_y{std::span<const double>(want[k].y0)};
        for (int r = 0; r < kRounds; ++r) plan.apply(1.0, d_x.data(), 1.0, d_y.data(), streams[k]);
        std::string first;
        wrong[k] = wrong_rows(d_y.to_host(streams[k]), want[k], first);  // copied on the products' stream
      });
    for (auto& t : threads) t.join();
    for (int k = 0; k < kThreads; ++k) EXPECT_EQ(wrong[k], 0u) << "thread " << k;
  }
}

TEST(CudaStreams, OperatorFromManyHostThreads) {
  SKIP_WITHOUT_GPU();
  const Matrix& a = cases()[1].a;
  constexpr int kThreads = 8;
  for (Algorithm alg : {Algorithm::MergePath, Algorithm::Hyb, Algorithm::CsrScalar}) {
    SCOPED_TRACE(std::string(spmv::to_string(alg)));
    auto oper = spmv::make_operator(spmv::Backend::Cuda, a, alg, Operation::NonTranspose);
    std::vector<std::size_t> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k)
      threads.emplace_back([&, k] {
        const auto x = random_vector(static_cast<std::size_t>(a.cols), 500 + k);
        const Expected want = expected(a, Operation::NonTranspose, x, 1.0, 1, 600 + k);
        for (int r = 0; r < 3; ++r) {
          std::vector<double> y = want.y0;
          oper->apply(1.0, x, 1.0, y);
          std::string first;
          wrong[k] += wrong_rows(y, want, first);
        }
      });
    for (auto& t : threads) t.join();
    for (int k = 0; k < kThreads; ++k) EXPECT_EQ(wrong[k], 0u) << "thread " << k;
  }
}

TEST(CudaStreams, AlphaZeroReadsNeitherMatrixNorX) {
  SKIP_WITHOUT_GPU();
  // NaN in A's values and x = null: alpha = 0 must give y = beta * y on every algorithm.
  Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::rmat(10, 8, 3));
  for (auto& v : a.values) v = std::numeric_limits<double>::quiet_NaN();
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (Algorithm alg : spmv::backend_algorithms(spmv::Backend::Cuda, op)) {
      std::unique_ptr<spmv::cuda::Plan<double, std::int32_t>> plan;
      try {
        plan = std::make_unique<spmv::cuda::Plan<double, std::int32_t>>(d_a.view(), alg, op);
      } catch (const spmv::Unsupported&) {
        continue;
      }
      SCOPED_TRACE(std::string(spmv::to_string(alg)) + " op=" + std::string(spmv::to_string(op)));
      const auto y0 = random_vector(static_cast<std::size_t>(plan->y_size()), 9);
      spmv::cuda::DeviceBuffer<double> d_y{std::span<const double>(y0)};
      plan->apply(0.0, nullptr, 2.5, d_y.data());
      const auto y = d_y.to_host();
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], 2.5 * y0[i]) << "row " << i;  // one rounding, exact
      plan->apply(0.0, nullptr, 0.0, d_y.data());
      for (double v : d_y.to_host()) ASSERT_EQ(v, 0.0);
    }
}

}  // namespace
