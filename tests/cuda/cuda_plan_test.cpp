// The CUDA-native API: plans on device arrays, CUDA graph capture and replay, degenerate shapes,
// error reporting and clean failure on out-of-memory. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/symmetric_check.hpp"
#include "spmv/cpu.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/device.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::Algorithm;
using spmv::Operation;
using Matrix = spmv::CsrMatrix<double, std::int32_t>;

#define SKIP_WITHOUT_GPU() \
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device"

std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(n);
  for (auto& e : v) e = std::ldexp(static_cast<double>(rng() % 2001) - 1000.0, -10);  // exact in double
  return v;
}

// |y - ref| <= 64 * eps * (|beta y0| + |alpha| sum|a x|) row-wise: 64 covers the rows of these test
// matrices (at most 5 entries per row in poisson2d, so far below the gamma_n bound of Higham §3.1).
void expect_close(const std::vector<double>& y, const std::vector<double>& ref, const std::vector<double>& scale) {
  ASSERT_EQ(y.size(), ref.size());
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_LE(std::abs(y[i] - ref[i]), 64 * std::numeric_limits<double>::epsilon() * scale[i] + 1e-300)
        << "row " << i << ": " << y[i] << " vs " << ref[i];
}

// y = A x (beta = 0) against the CPU reference, within expect_close's bound.
void expect_product(const Matrix& a, const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> ref(static_cast<std::size_t>(a.rows));
  spmv::cpu::reference(a, Operation::NonTranspose, 1.0, std::span<const double>(x), 0.0, std::span<double>(ref));
  expect_close(y, ref, spmv::cpu::reference_magnitude(a, Operation::NonTranspose, std::span<const double>(x)));
}

TEST(CudaPlan, GraphCaptureAndReplay) {
  SKIP_WITHOUT_GPU();
  const Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(64));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    for (Algorithm alg : spmv::backend_algorithms(spmv::Backend::Cuda, op)) {
      SCOPED_TRACE(std::string(spmv::to_string(alg)) + " op=" + std::string(spmv::to_string(op)));
      cudaStream_t stream;
      ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
      spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), alg, op, {}, stream);
      const auto x = random_vector(plan.x_size(), 1);
      const auto y0 = random_vector(plan.y_size(), 2);
      spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{std::span<const double>(y0)};
      const double alpha = 0.5, beta = -1.0;
      cudaGraph_t graph;
      ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
      plan.apply(alpha, d_x.data(), beta, d_y.data(), stream);
      ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << "apply() is not capturable";
      cudaGraphExec_t exec;
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      // Two replays: y = alpha op(A) x + beta (alpha op(A) x + beta y0).
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      std::vector<double> ref = y0;
      spmv::cpu::reference(a, op, alpha, std::span<const double>(x), beta, std::span<double>(ref));
      spmv::cpu::reference(a, op, alpha, std::span<const double>(x), beta, std::span<double>(ref));
      auto scale = spmv::cpu::reference_magnitude(a, op, std::span<const double>(x));
      for (std::size_t i = 0; i < scale.size(); ++i) scale[i] = 2 * (scale[i] + std::abs(y0[i]));
      expect_close(d_y.to_host(), ref, scale);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      cudaStreamDestroy(stream);
    }
  }
}

TEST(CudaPlan, DegenerateShapesScaleY) {
  SKIP_WITHOUT_GPU();
  struct Shape { std::int32_t rows, cols; };
  for (Shape s : {Shape{0, 0}, Shape{0, 5}, Shape{5, 0}, Shape{6, 4}}) {
    Matrix a;  // no nonzeros at all
    a.rows = s.rows;
    a.cols = s.cols;
    a.row_ptr.assign(s.rows + 1, 0);
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (Algorithm alg : spmv::backend_algorithms(spmv::Backend::Cuda, op)) {
        spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), alg, op);
        std::vector<double> y(plan.y_size(), std::numeric_limits<double>::quiet_NaN());
        spmv::cuda::DeviceBuffer<double> d_x(plan.x_size()), d_y{std::span<const double>(y)};
        plan.apply(1.0, d_x.data(), 0.0, d_y.data());  // beta = 0 overwrites NaN with 0
        for (double v : d_y.to_host()) ASSERT_EQ(v, 0.0) << spmv::to_string(alg);
        std::vector<double> y2(plan.y_size(), 3.0);
        d_y.upload(y2);
        plan.apply(1.0, d_x.data(), -2.0, d_y.data());
        for (double v : d_y.to_host()) ASSERT_EQ(v, -6.0) << spmv::to_string(alg);
      }
  }
}

TEST(CudaPlan, RefusesWhatItDoesNotOffer) {
  SKIP_WITHOUT_GPU();
  const Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(8));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  EXPECT_THROW((spmv::cuda::Plan<double, std::int32_t>(d_a.view(), Algorithm::RowLoop)), spmv::Unsupported);
  EXPECT_THROW((spmv::cuda::Plan<double, std::int32_t>(d_a.view(), Algorithm::CsrScalar, Operation::Transpose)),
               spmv::Unsupported);
  try {
    spmv::cuda::Plan<double, std::int32_t>(d_a.view(), Algorithm::MergeParallel);
    FAIL() << "expected Unsupported";
  } catch (const spmv::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("merge-parallel"), std::string::npos) << e.what();
  }
}

TEST(CudaPlan, AutoResolvesAndLogsItsChoice) {
  SKIP_WITHOUT_GPU();
  const Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(32));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  spmv::cuda::Plan<double, std::int32_t> plan(d_a.view());
  EXPECT_NE(plan.algorithm(), Algorithm::Auto);
  EXPECT_EQ(plan.algorithm(), spmv::cuda::choose_algorithm(a.nnz() / double(a.rows), 0.3, 5, a.rows, a.nnz(),
                                                           Operation::NonTranspose));
}

// The rule alone (no device needed): A^T x holds a second copy of the matrix only when the caller
// expects enough products and the copy fits; otherwise a copy-free kernel by row shape.
TEST(CudaAuto, TransposeCopiesOnlyWhenAskedAndItFits) {
  using spmv::cuda::choose_algorithm;
  const auto t = Operation::Transpose;
  // poisson-like: mean 5, std 0.3, max 5; power-law: mean 16, std 150, max 40000.
  EXPECT_EQ(choose_algorithm(5, 0.3, 5, 1 << 22, 5 << 22, t), Algorithm::TransposeAtomic);
  EXPECT_EQ(choose_algorithm(16, 150, 40000, 1 << 20, 16 << 20, t), Algorithm::SegmentedSum);
  EXPECT_EQ(choose_algorithm(26, 2, 27, 1 << 20, 26 << 20, t), Algorithm::SegmentedSum);
  EXPECT_EQ(choose_algorithm(5, 0.3, 5, 1 << 22, 5 << 22, t, 1000), Algorithm::ExplicitTranspose);
  EXPECT_EQ(choose_algorithm(16, 150, 40000, 1 << 20, 16 << 20, t, 1000, /*transpose_copy_fits=*/false),
            Algorithm::SegmentedSum);
  EXPECT_EQ(choose_algorithm(5, 0.3, 5, 1 << 22, 5 << 22, t, 10), Algorithm::TransposeAtomic);  // not repaid
  // Launch-bound products (below 2^20 nonzeros) take CSR-vector's scatter unless a row is longer than
  // 64 times the mean: cage10-like (mean 13, max 24), PGPgiantcompo-like (mean 4.6, max 205), and
  // adder_dcop_05-like (mean 6, max 1307), which goes to segmented-sum's stripes.
  EXPECT_EQ(choose_algorithm(13.2, 4, 24, 11397, 150645, t), Algorithm::CsrVector);
  EXPECT_EQ(choose_algorithm(5, 0.3, 5, 200000, (1 << 20) - 1, t), Algorithm::CsrVector);
  EXPECT_EQ(choose_algorithm(5, 0.3, 5, 210000, 1 << 20, t), Algorithm::TransposeAtomic);
  EXPECT_EQ(choose_algorithm(4.55, 14, 205, 10680, 48632, t), Algorithm::CsrVector);
  EXPECT_EQ(choose_algorithm(6.1, 30.7, 1307, 1813, 11156, t), Algorithm::SegmentedSum);
  // The hint does not change A x.
  EXPECT_EQ(choose_algorithm(5, 0.3, 5, 1 << 22, 5 << 22, Operation::NonTranspose, 1000),
            choose_algorithm(5, 0.3, 5, 1 << 22, 5 << 22, Operation::NonTranspose));
}

TEST(CudaPlan, AutoTransposeHoldsNoCopyWithoutTheHint) {
  SKIP_WITHOUT_GPU();
  const Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::rmat(14, 8, 2));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  spmv::cuda::Plan<double, std::int32_t> plain(d_a.view(), Algorithm::Auto, Operation::Transpose);
  EXPECT_NE(plain.algorithm(), Algorithm::ExplicitTranspose);
  EXPECT_LT(plain.extra_bytes(), d_a.bytes() / 4);
  spmv::Options hinted;
  hinted.expected_applies = 1000;
  spmv::cuda::Plan<double, std::int32_t> copy(d_a.view(), Algorithm::Auto, Operation::Transpose, hinted);
  EXPECT_EQ(copy.algorithm(), Algorithm::ExplicitTranspose);
  EXPECT_GE(copy.extra_bytes(), std::size_t(a.nnz()) * (sizeof(double) + sizeof(std::int32_t)));
}

// A^T x on a matrix equal to its transpose runs A x's plan; the device check finds the entry the host
// check names (tests/common/symmetric_check.hpp).
TEST(CudaPlan, SymmetricRunsTransposeAsAx) {
  SKIP_WITHOUT_GPU();
  spmv::test::check_symmetric_route(spmv::Backend::Cuda);
}

TEST(CudaPlan, DeviceSymmetryCheckFindsTheHostsEntry) {
  SKIP_WITHOUT_GPU();
  spmv::test::check_symmetry_verdicts(spmv::Backend::Cuda);
  // Many blocks, the break in the last row: every block runs and the smallest nonzero is reported.
  Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(400));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  spmv::cuda::Plan<double, std::int32_t> symmetric(d_a.view(), Algorithm::Symmetric, Operation::Transpose);
  const spmv::cuda::Plan<double, std::int32_t> plain(d_a.view());
  EXPECT_EQ(symmetric.extra_bytes(), plain.extra_bytes());
  a.values[a.values.size() - 2] += 1;  // (n-1, n-2), facing (n-2, n-1)
  spmv::cuda::DeviceCsr<double, std::int32_t> d_b(a);
  const std::string words = spmv::symmetry_violation(a).value_or("");
  EXPECT_NE(words.find("entry (159998, 159999) = "), std::string::npos) << words;  // the first of the pair
  try {
    spmv::cuda::Plan<double, std::int32_t> refused(d_b.view(), Algorithm::Symmetric, Operation::Transpose);
    ADD_FAILURE() << "accepted a matrix that differs from its transpose";
  } catch (const spmv::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
  // Under Options::deterministic Auto's A^T x of a symmetric matrix needs no copy.
  spmv::Options deterministic;
  deterministic.deterministic = true;
  spmv::cuda::Plan<double, std::int32_t> reproducible(d_a.view(), Algorithm::Auto, Operation::Transpose, deterministic);
  EXPECT_EQ(reproducible.algorithm(), Algorithm::Symmetric) << reproducible.policy();
  EXPECT_TRUE(reproducible.reproducible());
  EXPECT_LT(reproducible.extra_bytes(), d_a.bytes() / 4);
}

TEST(CudaPlan, AutoTakesDiaForBandedMatricesOnlyWithTheHint) {
  SKIP_WITHOUT_GPU();
  using Plan = spmv::cuda::Plan<double, std::int32_t>;
  spmv::Options hinted;
  hinted.expected_applies = 1000;
  const Matrix stencil = spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(500));  // 1.25 M nonzeros
  spmv::cuda::DeviceCsr<double, std::int32_t> d_stencil(stencil);
  const Plan plain(d_stencil.view());
  const Plan banded(d_stencil.view(), Algorithm::Auto, Operation::NonTranspose, hinted);
  EXPECT_NE(plain.algorithm(), Algorithm::Dia);
  EXPECT_EQ(banded.algorithm(), Algorithm::Dia);
  // Under 2^20 nonzeros (launch-bound products) no DIA, however many products are expected.
  const Matrix small = spmv::convert<double, std::int32_t>(spmv::gen::stencil27(30));  // 0.66 M nonzeros
  spmv::cuda::DeviceCsr<double, std::int32_t> d_small(small);
  spmv::Options many = hinted;
  many.expected_applies = 1000000;
  EXPECT_NE(Plan(d_small.view(), Algorithm::Auto, Operation::NonTranspose, many).algorithm(), Algorithm::Dia);
  // Not banded: DIA would pad far beyond the rule, so the CSR choice stands.
  const Matrix graph = spmv::convert<double, std::int32_t>(spmv::gen::rmat(14, 8, 2));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_graph(graph);
  const Plan scattered(d_graph.view(), Algorithm::Auto, Operation::NonTranspose, hinted);
  EXPECT_NE(scattered.algorithm(), Algorithm::Dia);
  // Short rows of equal length, not banded: ELL (no row pointers, no padding).
  const Matrix uniform = spmv::convert<double, std::int32_t>(spmv::gen::random_uniform(400000, 400000, 4, 2));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_uniform(uniform);
  const Plan ell(d_uniform.view(), Algorithm::Auto, Operation::NonTranspose, hinted);
  EXPECT_EQ(ell.algorithm(), Algorithm::Ell);
  EXPECT_EQ(Plan(d_uniform.view()).algorithm(), Algorithm::CsrScalar);
  // Long rows of equal length (16 a row, at most 128): ELL too; without the hint csr-vector.
  const Matrix sixteen = spmv::convert<double, std::int32_t>(spmv::gen::random_uniform(200000, 200000, 16, 2));
  spmv::cuda::DeviceCsr<double, std::int32_t> d_sixteen(sixteen);
  EXPECT_EQ(Plan(d_sixteen.view(), Algorithm::Auto, Operation::NonTranspose, hinted).algorithm(), Algorithm::Ell);
  EXPECT_EQ(Plan(d_sixteen.view()).algorithm(), Algorithm::CsrVector);
}

// With the hint, rows of which three quarters are empty go to SELL (src/core/auto_rule.cpp), in f32 and
// f64; without it Auto keeps CSR. The f32 product is checked against the double reference: |y - ref| <=
// 64 eps_f32 (|A| |x|) row-wise (32 entries per non-empty row, x and the values exact in f32, so each
// product term is exact and only the f32 sums round: gamma_32 < 64 eps_f32).
TEST(CudaPlan, AutoTakesSellForHalfEmptyRowsWithTheHint) {
  SKIP_WITHOUT_GPU();
  spmv::Options hinted;
  hinted.expected_applies = 1000;
  const Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::mostly_empty(1000000, 1000000, 0.25, 32, 4));
  const auto af = spmv::convert<float, std::int32_t>(a);
  spmv::cuda::DeviceCsr<float, std::int32_t> d_af(af);
  spmv::cuda::Plan<float, std::int32_t> sell(d_af.view(), Algorithm::Auto, Operation::NonTranspose, hinted);
  EXPECT_EQ(sell.algorithm(), Algorithm::Sell) << sell.policy();
  using FloatPlan = spmv::cuda::Plan<float, std::int32_t>;
  using DoublePlan = spmv::cuda::Plan<double, std::int32_t>;
  EXPECT_NE(FloatPlan(d_af.view()).algorithm(), Algorithm::Sell);
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  EXPECT_EQ(DoublePlan(d_a.view(), Algorithm::Auto, Operation::NonTranspose, hinted).algorithm(), Algorithm::Sell);
  const auto x = random_vector(static_cast<std::size_t>(a.cols), 6);
  const std::vector<float> xf(x.begin(), x.end());
  const std::vector<float> poison(static_cast<std::size_t>(a.rows), std::numeric_limits<float>::quiet_NaN());
  spmv::cuda::DeviceBuffer<float> d_x{std::span<const float>(xf)}, d_y{std::span<const float>(poison)};
  sell.apply(1.0f, d_x.data(), 0.0f, d_y.data());
  const std::vector<float> y = d_y.to_host();
  std::vector<double> ref(static_cast<std::size_t>(a.rows));
  const Matrix exact = spmv::convert<double, std::int32_t>(af);  // the f32 values, exactly
  spmv::cpu::reference(exact, Operation::NonTranspose, 1.0, std::span<const double>(x), 0.0, std::span<double>(ref));
  const auto scale = spmv::cpu::reference_magnitude(exact, Operation::NonTranspose, std::span<const double>(x));
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_LE(std::abs(double(y[i]) - ref[i]), 64 * std::numeric_limits<float>::epsilon() * scale[i])
        << "row " << i << ": " << y[i] << " vs " << ref[i];
}

// SELL leaves mostly-empty rows (more than half empty) out of its slices and writes their y = beta y
// from a bit mask (src/cuda/format_sell.cu). Rectangular matrices with 10% of the rows non-empty (1 to
// 70 entries), every row empty (no nonzero: the plan writes y = beta y itself, before any kernel), one
// non-empty row, and exactly half empty (kept in the slices); 1, 2 and 4 threads per row (rows of 1 to 70
// slots: threads with no slot, counts not a multiple of the threads) and the rule's; alpha,
// beta in {1, -2} x {0 with NaN-poisoned y, 1, -0.5}; double, against the reference: |y - ref| <= 4 (n + 2)
// eps (|alpha| |A| |x| + |beta y|) row-wise (n <= 70 products summed; gamma_n bounds the sum's rounding).
TEST(CudaSell, MostlyEmptyRowsLeaveTheSlices) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(17);
  const auto sparse_rows = [&](std::int32_t rows, std::int32_t cols, double nonempty) {
    Matrix a;
    a.rows = rows, a.cols = cols;
    a.row_ptr.assign(1, 0);
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<std::int32_t> length(1, 70), col(0, cols - 1);
    for (std::int32_t r = 0; r < rows; ++r) {
      if (u(rng) < nonempty) {
        const std::int32_t n = std::min(length(rng), cols);
        std::vector<std::int32_t> c;
        while (static_cast<std::int32_t>(c.size()) < n) {
          const std::int32_t j = col(rng);
          if (std::find(c.begin(), c.end(), j) == c.end()) c.push_back(j);
        }
        std::sort(c.begin(), c.end());
        for (std::int32_t j : c) a.col_idx.push_back(j), a.values.push_back(u(rng) - 0.5);
      }
      a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
    }
    return a;
  };
  Matrix one_row = sparse_rows(777, 50, 0.0);
  for (std::int32_t r = 400; r < 777; ++r) one_row.row_ptr[r + 1] = 3;
  one_row.col_idx = {1, 7, 49}, one_row.values = {0.5, -1.25, 2.0};
  Matrix half = sparse_rows(2000, 900, 1.0);  // then rows 0, 2, 4, ... emptied: exactly half empty
  {
    Matrix h = half;
    h.col_idx.clear(), h.values.clear(), h.row_ptr.assign(1, 0);
    for (std::int32_t r = 0; r < half.rows; ++r) {
      if (r % 2)
        for (std::int32_t k = half.row_ptr[r]; k < half.row_ptr[r + 1]; ++k)
          h.col_idx.push_back(half.col_idx[k]), h.values.push_back(half.values[k]);
      h.row_ptr.push_back(static_cast<std::int32_t>(h.col_idx.size()));
    }
    half = h;
  }
  const struct {
    const char* name;
    Matrix a;
    bool compact;
  } cases[] = {{"10% of 5000 x 300", sparse_rows(5000, 300, 0.1), true},
               {"10% of 3000 x 40000", sparse_rows(3000, 40000, 0.1), true},
               {"every row empty (the plan's own y = beta y)", sparse_rows(1000, 64, 0.0), false},
               {"one non-empty row", one_row, true},
               {"exactly half empty", half, false}};
  for (const auto& c : cases)
    for (int threads : {0, 1, 2, 4}) {  // threads per row: the rule's, then each compiled width
      SCOPED_TRACE(std::string(c.name) + ", threads per row " + std::to_string(threads));
      spmv::Options options;
      options.subwarp = threads;
      spmv::cuda::DeviceCsr<double, std::int32_t> d_a(c.a);
      spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), Algorithm::Sell, Operation::NonTranspose, options);
      ASSERT_EQ(plan.algorithm(), Algorithm::Sell);
      EXPECT_EQ(plan.policy().find("nonempty_rows=") != std::string::npos, c.compact) << plan.policy();
      if (threads > 0 && c.a.nnz() > 0)
        EXPECT_NE(plan.policy().find("threads_per_row=" + std::to_string(threads)), std::string::npos) << plan.policy();
      const auto x = random_vector(static_cast<std::size_t>(c.a.cols), 3);
      const auto y0 = random_vector(static_cast<std::size_t>(c.a.rows), 4);
      const auto scale = spmv::cpu::reference_magnitude(c.a, Operation::NonTranspose, std::span<const double>(x));
      for (double alpha : {1.0, -2.0})
        for (double beta : {0.0, 1.0, -0.5}) {
          std::vector<double> start = y0;
          if (beta == 0) std::fill(start.begin(), start.end(), std::numeric_limits<double>::quiet_NaN());
          spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{std::span<const double>(start)};
          plan.apply(alpha, d_x.data(), beta, d_y.data());
          const std::vector<double> y = d_y.to_host();
          std::vector<double> ref = y0;
          spmv::cpu::reference(c.a, Operation::NonTranspose, alpha, std::span<const double>(x), beta,
                               std::span<double>(ref));
          for (std::size_t i = 0; i < y.size(); ++i) {
            const double bound = 4 * 72 * std::numeric_limits<double>::epsilon() *
                                 (std::abs(alpha) * scale[i] + std::abs(beta * y0[i]));
            ASSERT_LE(std::abs(y[i] - ref[i]), bound) << "row " << i << " alpha " << alpha << " beta " << beta << ": "
                                                      << y[i] << " vs " << ref[i];
          }
        }
    }
  spmv::Options three;  // threads per row: only 1, 2 and 4 are compiled
  three.subwarp = 3;
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(cases[0].a);
  using Plan = spmv::cuda::Plan<double, std::int32_t>;
  EXPECT_THROW(Plan(d_a.view(), Algorithm::Sell, Operation::NonTranspose, three), spmv::InvalidArgument);
}

// Auto's conversion to SELL (more than half the rows empty, 1000 expected products) ignores a subwarp meant
// for CSR kernels (8: SELL compiles 1, 2 and 4 threads a row and refuses 8 when asked for it by name),
// instead of failing the plan; the product against the reference (rows of 32: gamma_n with n = 34).
TEST(CudaSell, AutoConversionIgnoresCsrLanes) {
  SKIP_WITHOUT_GPU();
  const Matrix a = spmv::convert<double, std::int32_t>(spmv::gen::mostly_empty(1000000, 1000000, 0.25, 32, 1));
  spmv::Options options;
  options.expected_applies = 1000;
  options.subwarp = 8;
  spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  using Plan = spmv::cuda::Plan<double, std::int32_t>;
  Plan plan(d_a.view(), Algorithm::Auto, Operation::NonTranspose, options);
  EXPECT_EQ(plan.algorithm(), Algorithm::Sell) << plan.policy();
  EXPECT_THROW(Plan(d_a.view(), Algorithm::Sell, Operation::NonTranspose, options), spmv::InvalidArgument);
  const auto x = random_vector(static_cast<std::size_t>(a.cols), 5);
  std::vector<double> start(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
  spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{std::span<const double>(start)};
  plan.apply(1.0, d_x.data(), 0.0, d_y.data());
  const std::vector<double> y = d_y.to_host();
  std::vector<double> ref(static_cast<std::size_t>(a.rows), 0.0);
  spmv::cpu::reference(a, Operation::NonTranspose, 1.0, std::span<const double>(x), 0.0, std::span<double>(ref));
  const auto scale = spmv::cpu::reference_magnitude(a, Operation::NonTranspose, std::span<const double>(x));
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_LE(std::abs(y[i] - ref[i]), 4 * 34 * std::numeric_limits<double>::epsilon() * scale[i]) << "row " << i;
}

// DIA stores its slots as one bit when every diagonal holds at most two values, else as one-byte codes
// into a table when they hold at most 256 distinct values, the padding's 0 included
// (src/cuda/format_dia.cu): a band of 255 distinct non-zero values plus its corner padding takes codes,
// one more value keeps raw slots, a 5-point stencil (4, -1 and the boundary's 0) and bands of one value
// a diagonal take bits, a band of three values on each diagonal codes, SPMV_DIA_CODES=8 codes and =0 raw
// slots. Every product, in double and float, against the double reference with NaN-poisoned y (beta = 0)
// and with beta != 0, also at pointers off a 16-byte boundary; bound as expect_close's (at most 9
// entries a row, every product term exact: x and the values are short dyadic fractions).
TEST(CudaDia, BitsOrCodesWhenTheValuesAreFew) {
  SKIP_WITHOUT_GPU();
  auto with_values = [](Matrix a, int distinct) {  // (k % distinct + 1) / 64: exact, never 0
    for (std::size_t k = 0; k < a.values.size(); ++k) a.values[k] = static_cast<double>(k % distinct + 1) / 64.0;
    return a;
  };
  const Matrix band = spmv::convert<double, std::int32_t>(spmv::gen::banded(3000, 4, 7));
  auto one_value_a_diagonal = [](Matrix a) {  // (col - row + 5) / 8
    for (std::int32_t r = 0; r < a.rows; ++r)
      for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        a.values[k] = static_cast<double>(a.col_idx[k] - r + 5) / 8.0;
    return a;
  };
  // Nine consecutive offsets (f64 reads them as runs of three, the third across the first bit word's
  // end), and five (runs of three and two).
  const Matrix per_diagonal = one_value_a_diagonal(band);
  const Matrix five = one_value_a_diagonal(spmv::convert<double, std::int32_t>(spmv::gen::banded(2999, 2, 7)));
  Matrix by_row = band;  // three values on every diagonal: (row % 3 + 1) / 64
  for (std::int32_t r = 0; r < by_row.rows; ++r)
    for (std::int32_t k = by_row.row_ptr[r]; k < by_row.row_ptr[r + 1]; ++k) by_row.values[k] = (r % 3 + 1) / 64.0;
  const Matrix stencil = spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(70));
  struct Case {
    const char* name;
    Matrix a;
    const char* values;  // what the policy must say
    const char* env;     // SPMV_DIA_CODES, or null
  };
  const Case cases[] = {
      {"255 values + padding", with_values(band, 255), "values=codes8 table=256", nullptr},
      {"256 values + padding", with_values(band, 256), "values=raw", nullptr},
      {"three values on each diagonal", by_row, "values=codes8 table=4", nullptr},
      {"one value a diagonal", per_diagonal, "values=bit-per-slot", nullptr},
      {"one value a diagonal, five diagonals", five, "values=bit-per-slot", nullptr},
      {"poisson2d", stencil, "values=bit-per-slot", nullptr},
      {"poisson2d, SPMV_DIA_CODES=8", stencil, "values=codes8 table=3", "8"},
      {"poisson2d, SPMV_DIA_CODES=0", stencil, "values=raw", "0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.env) setenv("SPMV_DIA_CODES", c.env, 1);
    const Matrix& a = c.a;
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
    spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), Algorithm::Dia);
    const auto af = spmv::convert<float, std::int32_t>(a);
    spmv::cuda::DeviceCsr<float, std::int32_t> d_af(af);
    spmv::cuda::Plan<float, std::int32_t> plan_f(d_af.view(), Algorithm::Dia);
    unsetenv("SPMV_DIA_CODES");
    EXPECT_NE(plan.policy().find(c.values), std::string::npos) << plan.policy();
    EXPECT_NE(plan_f.policy().find(c.values), std::string::npos) << plan_f.policy();
    const auto x = random_vector(static_cast<std::size_t>(a.cols), 8);
    const auto y0 = random_vector(static_cast<std::size_t>(a.rows), 9);
    const auto scale = spmv::cpu::reference_magnitude(a, Operation::NonTranspose, std::span<const double>(x));
    for (const double beta : {0.0, 0.5}) {
      SCOPED_TRACE("beta " + std::to_string(beta));
      std::vector<double> start = y0;
      if (beta == 0) std::fill(start.begin(), start.end(), std::numeric_limits<double>::quiet_NaN());
      std::vector<double> ref = y0;
      spmv::cpu::reference(a, Operation::NonTranspose, -1.5, std::span<const double>(x), beta, std::span<double>(ref));
      std::vector<double> bound(scale.size());
      for (std::size_t i = 0; i < bound.size(); ++i) bound[i] = 1.5 * scale[i] + std::abs(beta * y0[i]);
      spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{std::span<const double>(start)};
      plan.apply(-1.5, d_x.data(), beta, d_y.data());
      expect_close(d_y.to_host(), ref, bound);
      const std::vector<float> xf(x.begin(), x.end()), startf(start.begin(), start.end());
      spmv::cuda::DeviceBuffer<float> d_xf{std::span<const float>(xf)}, d_yf{std::span<const float>(startf)};
      plan_f.apply(-1.5f, d_xf.data(), static_cast<float>(beta), d_yf.data());
      const std::vector<float> yf = d_yf.to_host();
      for (std::size_t i = 0; i < yf.size(); ++i)
        ASSERT_LE(std::abs(double(yf[i]) - ref[i]), 64 * std::numeric_limits<float>::epsilon() * bound[i])
            << "float, row " << i << ": " << yf[i] << " vs " << ref[i];
      // x and y one element past a 16-byte boundary: the kernels' vector accesses must step aside.
      std::vector<double> x1(x.size() + 1, 0.0), start1(start.size() + 1, 0.0);
      std::copy(x.begin(), x.end(), x1.begin() + 1);
      std::copy(start.begin(), start.end(), start1.begin() + 1);
      spmv::cuda::DeviceBuffer<double> d_x1{std::span<const double>(x1)}, d_y1{std::span<const double>(start1)};
      plan.apply(-1.5, d_x1.data() + 1, beta, d_y1.data() + 1);
      const std::vector<double> y1 = d_y1.to_host();
      expect_close(std::vector<double>(y1.begin() + 1, y1.end()), ref, bound);
    }
  }
}

// CSR-vector's width rule (docs/algorithms/csr_vector.md): rows of 15 with local columns take 4 lanes,
// the same rows with scattered columns 8; the products are right either way.
TEST(CudaPlan, CsrVectorWidthFollowsColumnLocality) {
  SKIP_WITHOUT_GPU();
  using Plan = spmv::cuda::Plan<double, std::int32_t>;
  const Matrix band = spmv::convert<double, std::int32_t>(spmv::gen::banded(20000, 7, 3));
  const Matrix scattered = spmv::convert<double, std::int32_t>(spmv::gen::random_uniform(20000, 20000, 15, 3));
  for (const Matrix* m : {&band, &scattered}) {
    spmv::cuda::DeviceCsr<double, std::int32_t> d(*m);
    Plan plan(d.view(), Algorithm::CsrVector);
    const bool local = m == &band;
    EXPECT_NE(plan.policy().find(local ? "subwarp=4 " : "subwarp=8 "), std::string::npos) << plan.policy();
    EXPECT_EQ(plan.policy().find("columns=local") != std::string::npos, local) << plan.policy();
    const auto x = random_vector(static_cast<std::size_t>(m->cols), 5);
    spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{static_cast<std::size_t>(m->rows)};
    plan.apply(1.0, d_x.data(), 0.0, d_y.data());
    expect_product(*m, x, d_y.to_host());
  }
}

// Scattered columns past 14 a row: about 3 gathers a lane (rows of 32 take 16 lanes, of 64 take 32), but a
// few huge rows are still split off; rows that are mostly empty keep the flat walk of 32 rows a warp at
// any length, with the rule's width or a chosen one. Every plan's product is checked.
TEST(CudaPlan, CsrVectorWidthForScatteredAndMostlyEmptyRows) {
  SKIP_WITHOUT_GPU();
  using Plan = spmv::cuda::Plan<double, std::int32_t>;
  const auto make = [](const spmv::gen::Matrix& m) { return spmv::convert<double, std::int32_t>(m); };
  const Matrix empty_rows = make(spmv::gen::mostly_empty(40000, 40000, 0.25, 64, 3));
  // Enough rows for 11 warps per multiprocessor at 32 rows a warp: the walk takes the rows' own width.
  const Matrix many_empty_rows = make(spmv::gen::mostly_empty(200000, 200000, 0.25, 64, 3));
  struct Case {
    const char* name;
    const Matrix& a;
    int subwarp;           // Options::subwarp (0: the rule's)
    const char* expected;  // in the policy
  };
  const Matrix rows32 = make(spmv::gen::random_uniform(20000, 20000, 32, 3));
  const Matrix rows64 = make(spmv::gen::random_uniform(20000, 20000, 64, 3));
  // 64 rows of 30,000 among 100,000 of 9 (mean 28): the long rows are split, never a warp each unsplit.
  const Matrix dense = make(spmv::gen::dense_rows(100000, 64, 0.3, 8, 3));
  // 75% empty with ten rows of 1,000 (longer than the flat walk's head at 8 lanes): those are split, the
  // rest still walk 32 rows a warp, the ten long rows' empty neighbours included.
  Matrix empty_long_rows;
  empty_long_rows.rows = empty_rows.rows;
  empty_long_rows.cols = empty_rows.cols;
  for (std::int32_t r = 0; r < empty_rows.rows; ++r) {
    if (r % 4000 == 17) {
      for (std::int32_t k = 0; k < 1000; ++k) {
        empty_long_rows.col_idx.push_back(k * 37);
        empty_long_rows.values.push_back(1.0 / (k + 1));
      }
    } else {
      for (std::int32_t k = empty_rows.row_ptr[r]; k < empty_rows.row_ptr[r + 1]; ++k) {
        empty_long_rows.col_idx.push_back(empty_rows.col_idx[k]);
        empty_long_rows.values.push_back(empty_rows.values[k]);
      }
    }
    empty_long_rows.row_ptr.push_back(empty_long_rows.nnz());
  }
  // Few uniform rows: too few warps to run a warp a row (11 per SM for rows longer than a chunk of
  // 2,048, 1.5 within one), so they are split.
  const Matrix few_long = make(spmv::gen::random_uniform(100, 100000, 10000, 3));
  const Matrix few_chunk_long = make(spmv::gen::random_uniform(40, 100000, 2000, 3));
  const Matrix many_chunk_long = make(spmv::gen::random_uniform(1100, 100000, 1000, 3));
  const Case cases[] = {{"32 a row, scattered", rows32, 0, "subwarp=16 "},
                        {"64 a row, scattered", rows64, 0, "subwarp=32 "},
                        {"64 dense rows", dense, 0, "split_rows=64 "},
                        {"100 rows of 10,000", few_long, 0, "split_rows=100 "},
                        {"40 rows of 2,000", few_chunk_long, 0, "split_rows=40 "},
                        {"1,100 rows of 1,000", many_chunk_long, 0, "subwarp=32 "},
                        {"75% empty, 64 a row", empty_rows, 0, "subwarp=8 elements_per_load=1 unroll=4 walk=flat "
                                                               "rows_per_warp=32"},
                        {"75% empty, 64 a row, 200,000 rows", many_empty_rows, 0,
                         "subwarp=32 elements_per_load=1 unroll=4 walk=flat rows_per_warp=32"},
                        {"75% empty, 64 a row, 8 lanes chosen", empty_rows, 8, "rows_per_warp=32"},
                        {"75% empty, 64 a row, 16 lanes chosen", empty_rows, 16, "subwarp=16 elements_per_load=1 "
                                                                                 "unroll=4 walk=flat rows_per_warp=32"},
                        {"75% empty, 64 a row, 32 lanes chosen", empty_rows, 32, "subwarp=32 elements_per_load=1 "
                                                                                 "unroll=4 walk=flat rows_per_warp=32"},
                        {"75% empty, ten rows of 1,000", empty_long_rows, 0, "rows_per_warp=32 split_rows=10 "}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    spmv::Options options;
    options.subwarp = c.subwarp;
    spmv::cuda::DeviceCsr<double, std::int32_t> d(c.a);
    Plan plan(d.view(), Algorithm::CsrVector, Operation::NonTranspose, options);
    EXPECT_NE(plan.policy().find(c.expected), std::string::npos) << plan.policy();
    const auto x = random_vector(static_cast<std::size_t>(c.a.cols), 5);
    spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{static_cast<std::size_t>(c.a.rows)};
    plan.apply(1.0, d_x.data(), 0.0, d_y.data());
    expect_product(c.a, x, d_y.to_host());
  }
}

TEST(CudaErrors, FailedCallIsNamedAndOutOfMemoryLeavesNothing) {
  SKIP_WITHOUT_GPU();
  std::size_t free_before = 0, total = 0, free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  try {
    spmv::cuda::DeviceBuffer<double> huge(std::size_t(1) << 45);  // 256 TiB
    FAIL() << "expected CudaError";
  } catch (const spmv::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos) << e.what();
  }
  cudaGetLastError();  // clear the sticky-free allocation error
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  // Other allocations may be released meanwhile (free memory can grow), never lost.
  EXPECT_GE(free_after, free_before);
}

TEST(CudaDevice, CopyBandwidthIsPlausible) {
  SKIP_WITHOUT_GPU();
  const auto info = spmv::cuda_device_info();
  EXPECT_GT(info.multiprocessors, 0);
  const double gbs = spmv::cuda_copy_bandwidth_gbs();
  // Any CUDA GPU of the last decade copies faster than 50 GB/s and no HBM3e part reaches 20 TB/s.
  EXPECT_GT(gbs, 50.0);
  EXPECT_LT(gbs, 20000.0);
}

}  // namespace

namespace {

// The device conversion of compressed-csr builds the host conversion's layout (the one CI checks): the
// same slices, offset widths, value encoding, table size and slots, read from the plan's policy; and it
// refuses what the host refuses.
TEST(CudaCompressedCsr, DeviceConversionMatchesTheHostLayout) {
  SKIP_WITHOUT_GPU();
  std::vector<Matrix> cases;
  cases.push_back(spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(70)));                 // u8 table
  cases.push_back(spmv::convert<double, std::int32_t>(spmv::gen::random_uniform(3000, 200000, 7, 5)));  // wide, raw
  Matrix pattern = spmv::convert<double, std::int32_t>(spmv::gen::banded(5000, 3, 9));
  std::fill(pattern.values.begin(), pattern.values.end(), 1.0);
  cases.push_back(pattern);                                                                       // pattern
  Matrix signs = pattern;
  for (std::size_t i = 0; i < signs.values.size(); ++i)
    signs.values[i] = std::ldexp(static_cast<double>(i % 300) - 150.0, -3) * (i % 7 == 0 ? -1.0 : 1.0);
  signs.values[0] = -0.0;
  cases.push_back(signs);                                                                         // u16 table, signs
  for (const Matrix& a : cases) {
    spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
    spmv::cuda::Plan<double, std::int32_t> plan(d_a.view(), Algorithm::CompressedCsr);
    const std::string host = spmv::compressed_csr_summary(spmv::to_compressed_csr(a));
    EXPECT_NE(plan.policy().find(host), std::string::npos) << plan.policy() << " vs host " << host;
    const auto x = random_vector(static_cast<std::size_t>(a.cols), 3);
    const std::vector<double> y(static_cast<std::size_t>(a.rows), std::nan(""));  // beta = 0: never read
    spmv::cuda::DeviceBuffer<double> d_x{std::span<const double>(x)}, d_y{std::span<const double>(y)};
    plan.apply(1.0, d_x.data(), 0.0, d_y.data());
    expect_product(a, x, d_y.to_host());
  }
  // A row longer than a 16-bit length: refused on both sides.
  Matrix long_row = spmv::convert<double, std::int32_t>(spmv::gen::random_uniform(2, 70000, 66000, 1));
  EXPECT_THROW((void)spmv::to_compressed_csr(long_row), spmv::Unsupported);
  spmv::cuda::DeviceCsr<double, std::int32_t> d_long(long_row);
  EXPECT_THROW((spmv::cuda::Plan<double, std::int32_t>(d_long.view(), Algorithm::CompressedCsr)), spmv::Unsupported);
}

}  // namespace
