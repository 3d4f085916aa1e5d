// segmented-sum (src/cuda/segmented_sum.cu) beyond the differential zoo: arrays that do not allow its
// 16-byte loads (a view into someone else's arrays, offset by one element), power-law rows whose tiles
// carry into rows spanning many tiles, with empty rows mapped through its row list, block sizes 32 and
// 1024, an infinite x entry that must stay in its own row, and Auto's power-law and half-empty long-row
// classes (with and without Options::deterministic), and A^T x read in stripes. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "common/error_bound.hpp"
#include "spmv/cpu.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/device.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::Algorithm;
using spmv::Operation;

// y = alpha op(A) x + beta y through a plan on `view`, checked row by row against the double reference
// (tests/common/error_bound.hpp); y starts as NaN when beta is 0, which must not leak.
template <class Value, class Index>
Algorithm check_view(const spmv::CsrMatrix<Value, Index>& a, const spmv::cuda::CsrView<Value, Index>& view,
                     double alpha, double beta, Algorithm algorithm = Algorithm::SegmentedSum,
                     const spmv::Options& options = {}, std::vector<Value> x = {},
                     Operation op = Operation::NonTranspose) {
  spmv::cuda::Plan<Value, Index> plan(view, algorithm, op, options);
  const bool n = op == Operation::NonTranspose;
  std::vector<Value> y0(static_cast<std::size_t>(n ? a.rows : a.cols));
  if (x.empty()) {
    x.resize(static_cast<std::size_t>(n ? a.cols : a.rows));
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = static_cast<Value>(std::ldexp(double(j % 37) - 18.0, -4));
  }
  for (std::size_t i = 0; i < y0.size(); ++i)
    y0[i] = beta == 0 ? std::numeric_limits<Value>::quiet_NaN() : static_cast<Value>(double(i % 11) - 5.0);
  spmv::cuda::DeviceBuffer<Value> d_x{std::span<const Value>(x)}, d_y{std::span<const Value>(y0)};
  plan.apply(static_cast<Value>(alpha), d_x.data(), static_cast<Value>(beta), d_y.data());
  const std::vector<Value> y = d_y.to_host();
  std::vector<double> xd(x.begin(), x.end()), ref(y0.begin(), y0.end());
  if (beta == 0) std::fill(ref.begin(), ref.end(), 0.0);
  const auto ad = spmv::convert<double, Index>(a);
  spmv::cpu::reference(ad, op, alpha, std::span<const double>(xd), beta, std::span<double>(ref));
  const auto magnitude = spmv::cpu::reference_magnitude(ad, op, std::span<const double>(xd));
  const auto lengths = spmv::test::output_row_lengths(a, op);
  const auto report = spmv::test::check_error_bound<Value>(y, ref, y0, magnitude, lengths, alpha, beta);
  EXPECT_TRUE(report.passed()) << plan.policy() << ": " << report.describe();
  return plan.algorithm();
}

// A's column indices and values copied one element past a 16-byte boundary, and a view of d_a that reads
// them there: every lane of a kernel with vector loads takes the element-by-element path.
template <class Value, class Index>
struct OffsetArrays {
  spmv::cuda::DeviceBuffer<Index> cols;
  spmv::cuda::DeviceBuffer<Value> vals;
  spmv::cuda::CsrView<Value, Index> view;
  OffsetArrays(const spmv::CsrMatrix<Value, Index>& a, const spmv::cuda::DeviceCsr<Value, Index>& d_a)
      : cols(shifted(a.col_idx)), vals(shifted(a.values)), view(d_a.view()) {
    view.col_idx = cols.data() + 1;
    view.values = vals.data() + 1;
  }
  template <class T>
  static spmv::cuda::DeviceBuffer<T> shifted(const std::vector<T>& v) {
    std::vector<T> host(1, T(0));
    host.insert(host.end(), v.begin(), v.end());
    return spmv::cuda::DeviceBuffer<T>{std::span<const T>(host)};
  }
};

template <class Value, class Index>
void check_offset_and_aligned(const spmv::CsrMatrix<Value, Index>& a) {
  // Aligned: the device copy's own arrays.
  const spmv::cuda::DeviceCsr<Value, Index> d_a(a);
  check_view(a, d_a.view(), 1.0, 0.0);
  check_view(a, d_a.view(), -0.5, 2.0);
  // Offset by one element: every lane takes the element-by-element path.
  const OffsetArrays<Value, Index> offset(a, d_a);
  check_view(a, offset.view, 1.0, 0.0);
  check_view(a, offset.view, 1.0, -1.0);
  check_view(a, offset.view, -1.0, 1.0);
}

TEST(CudaSegmentedSum, PowerLawRowsAlignedAndOffset) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto rmat = spmv::gen::rmat(14, 16, 3);  // rows of 0 to thousands: carries over many tiles, empty rows
  check_offset_and_aligned(spmv::convert<float, std::int32_t>(rmat));
  check_offset_and_aligned(spmv::convert<double, std::int32_t>(rmat));
  check_offset_and_aligned(spmv::convert<float, std::int64_t>(rmat));
  check_offset_and_aligned(spmv::convert<double, std::int64_t>(rmat));
}

TEST(CudaSegmentedSum, NoEmptyRowsNeedNoRowList) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto grid = spmv::gen::poisson2d(100);
  const auto a = spmv::convert<float, std::int32_t>(grid);
  const spmv::cuda::DeviceCsr<float, std::int32_t> d_a(a);
  const spmv::cuda::Plan<float, std::int32_t> plan(d_a.view(), Algorithm::SegmentedSum, Operation::NonTranspose);
  EXPECT_NE(plan.policy().find("empty_rows=0"), std::string::npos) << plan.policy();
  check_offset_and_aligned(a);
}

// A^T x on the same tiles, read in stripes (no copy of A): a nonzero's row comes from the row-end bits,
// through the row list when rows are empty (R-MAT), directly when none is (the grid), on a rectangular
// matrix (x of A's rows, y of its columns), at block sizes 32 and 1024, with a view offset by one element.
template <class Value, class Index>
void check_transpose(const spmv::CsrMatrix<double, std::int64_t>& m) {
  const auto a = spmv::convert<Value, Index>(m);
  const spmv::cuda::DeviceCsr<Value, Index> d_a(a);
  for (const auto& [alpha, beta] : {std::pair{1.0, 0.0}, {-0.5, 2.0}, {1.0, -1.0}, {2.5, 1.0}})
    EXPECT_EQ(check_view(a, d_a.view(), alpha, beta, Algorithm::SegmentedSum, {}, {}, Operation::Transpose),
              Algorithm::SegmentedSum);
  for (int block : {32, 1024}) {
    spmv::Options options;
    options.block_size = block;
    check_view(a, d_a.view(), 1.0, 0.5, Algorithm::SegmentedSum, options, {}, Operation::Transpose);
  }
  const OffsetArrays<Value, Index> offset(a, d_a);
  check_view(a, offset.view, -1.0, 0.0, Algorithm::SegmentedSum, {}, {}, Operation::Transpose);
}

TEST(CudaSegmentedSum, TransposeInStripes) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto rmat = spmv::gen::rmat(14, 16, 3);
  check_transpose<float, std::int32_t>(rmat);
  check_transpose<double, std::int32_t>(rmat);
  check_transpose<double, std::int64_t>(rmat);
  check_transpose<float, std::int32_t>(spmv::gen::poisson2d(100));
  check_transpose<double, std::int64_t>(spmv::gen::random_uniform(3000, 700, 9, 11));
  // Under Options::deterministic the scatter (atomics) is refused, as for A x.
  const auto a = spmv::convert<float, std::int32_t>(rmat);
  const spmv::cuda::DeviceCsr<float, std::int32_t> d_a(a);
  spmv::Options deterministic;
  deterministic.deterministic = true;
  using Plan = spmv::cuda::Plan<float, std::int32_t>;
  EXPECT_THROW(Plan(d_a.view(), Algorithm::SegmentedSum, Operation::Transpose, deterministic), spmv::Unsupported);
}

TEST(CudaSegmentedSum, BlockSizesFrom32To1024) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = spmv::convert<double, std::int32_t>(spmv::gen::rmat(13, 16, 5));
  const spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  for (int block : {32, 1024}) {
    spmv::Options options;
    options.block_size = block;
    check_view(a, d_a.view(), 1.0, 0.5, Algorithm::SegmentedSum, options);
  }
}

// x[0] = +Inf reaches only the row holding column 0: the scan must not carry it into the rows that
// share its lane and tile.
TEST(CudaSegmentedSum, AnInfiniteEntryStaysInItsRow) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  spmv::CsrMatrix<float, std::int32_t> a;
  a.rows = 600, a.cols = 100;
  a.row_ptr.assign(1, 0);
  for (std::int32_t r = 0; r < a.rows; ++r) {
    if (r % 7 != 3) {  // some empty rows too
      const std::int32_t first = r == 300 ? 0 : 1 + r % 90;
      for (std::int32_t j = 0; j < 3; ++j) a.col_idx.push_back(first + 3 * j), a.values.push_back(0.5f + j);
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  std::vector<float> x(100, 1.0f);
  x[0] = std::numeric_limits<float>::infinity();
  const spmv::cuda::DeviceCsr<float, std::int32_t> d_a(a);
  check_view(a, d_a.view(), 1.0, 0.0, Algorithm::SegmentedSum, {}, x);
  check_view(a, d_a.view(), -2.0, 1.0, Algorithm::SegmentedSum, {}, x);
}

// Auto's power-law class (2^20 nonzeros and more, long rows of cv up to 18) runs segmented-sum; under
// Options::deterministic Auto swaps in csr-vector, whose long rows' chunks are added in order.
TEST(CudaSegmentedSum, AutoTakesItForPowerLawRows) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = spmv::convert<float, std::int32_t>(spmv::gen::rmat(17, 16, 3));
  ASSERT_GE(a.nnz(), std::int32_t(1) << 20);
  const spmv::cuda::DeviceCsr<float, std::int32_t> d_a(a);
  EXPECT_EQ(check_view(a, d_a.view(), 1.0, 0.0, Algorithm::Auto), Algorithm::SegmentedSum);
  spmv::Options deterministic;
  deterministic.deterministic = true;
  EXPECT_EQ(check_view(a, d_a.view(), 1.0, 0.0, Algorithm::Auto, deterministic), Algorithm::CsrVector);
  using Plan = spmv::cuda::Plan<float, std::int32_t>;
  EXPECT_THROW(Plan(d_a.view(), Algorithm::SegmentedSum, Operation::NonTranspose, deterministic), spmv::Unsupported);
}

// Auto's half-empty long-row class (over half the rows empty, over 40 a non-empty row, 2^20 nonzeros and
// more) runs segmented-sum through its row list, in both precisions, with beta 0 (NaN y) and not;
// deterministic: csr-vector. Under 2^20 nonzeros merge-path.
TEST(CudaSegmentedSum, AutoTakesItForHalfEmptyLongRows) {
  if (!spmv::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = spmv::convert<double, std::int32_t>(spmv::gen::mostly_empty(200000, 200000, 0.25, 64, 3));
  ASSERT_GE(a.nnz(), std::int32_t(1) << 20);
  const spmv::cuda::DeviceCsr<double, std::int32_t> d_a(a);
  EXPECT_EQ(check_view(a, d_a.view(), 1.0, 0.0, Algorithm::Auto), Algorithm::SegmentedSum);
  EXPECT_EQ(check_view(a, d_a.view(), -1.5, 0.5, Algorithm::Auto), Algorithm::SegmentedSum);
  const auto af = spmv::convert<float, std::int32_t>(a);
  const spmv::cuda::DeviceCsr<float, std::int32_t> d_af(af);
  EXPECT_EQ(check_view(af, d_af.view(), 1.0, 0.0, Algorithm::Auto), Algorithm::SegmentedSum);
  spmv::Options deterministic;
  deterministic.deterministic = true;
  EXPECT_EQ(check_view(a, d_a.view(), 1.0, 0.0, Algorithm::Auto, deterministic), Algorithm::CsrVector);
  const auto small = spmv::convert<double, std::int32_t>(spmv::gen::mostly_empty(40000, 40000, 0.25, 64, 3));
  const spmv::cuda::DeviceCsr<double, std::int32_t> d_small(small);
  EXPECT_EQ(check_view(small, d_small.view(), 1.0, 0.0, Algorithm::Auto), Algorithm::MergePath);
}

}  // namespace
