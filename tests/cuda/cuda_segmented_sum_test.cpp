// segmented-sum (src/cuda/segmented_sum.cu) beyond the differential zoo: arrays that do not allow its
// 16-byte loads (a view into someone else's arrays, offset by one element), and power-law rows whose
// tiles carry into rows spanning many tiles, with empty rows mapped through its row list. Skips
// without a device.
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
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::Algorithm;
using spmv::Operation;

// y = alpha A x + beta y through a plan on `view`, checked row by row against the double reference
// (tests/common/error_bound.hpp); y starts as NaN when beta is 0, which must not leak.
template <class Value, class Index>
void check_view(const spmv::CsrMatrix<Value, Index>& a, const spmv::cuda::CsrView<Value, Index>& view, double alpha,
                double beta) {
  spmv::cuda::Plan<Value, Index> plan(view, Algorithm::SegmentedSum, Operation::NonTranspose);
  std::vector<Value> x(static_cast<std::size_t>(a.cols)), y0(static_cast<std::size_t>(a.rows));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = static_cast<Value>(std::ldexp(double(j % 37) - 18.0, -4));
  for (std::size_t i = 0; i < y0.size(); ++i)
    y0[i] = beta == 0 ? std::numeric_limits<Value>::quiet_NaN() : static_cast<Value>(double(i % 11) - 5.0);
  spmv::cuda::DeviceBuffer<Value> d_x{std::span<const Value>(x)}, d_y{std::span<const Value>(y0)};
  plan.apply(static_cast<Value>(alpha), d_x.data(), static_cast<Value>(beta), d_y.data());
  const std::vector<Value> y = d_y.to_host();
  std::vector<double> xd(x.begin(), x.end()), ref(y0.begin(), y0.end());
  if (beta == 0) std::fill(ref.begin(), ref.end(), 0.0);
  const auto ad = spmv::convert<double, Index>(a);
  spmv::cpu::reference(ad, Operation::NonTranspose, alpha, std::span<const double>(xd), beta, std::span<double>(ref));
  const auto magnitude = spmv::cpu::reference_magnitude(ad, Operation::NonTranspose, std::span<const double>(xd));
  const auto lengths = spmv::test::output_row_lengths(a, Operation::NonTranspose);
  const auto report = spmv::test::check_error_bound<Value>(y, ref, y0, magnitude, lengths, alpha, beta);
  EXPECT_TRUE(report.passed()) << plan.policy() << ": " << report.describe();
}

template <class Value, class Index>
void check_offset_and_aligned(const spmv::CsrMatrix<Value, Index>& a) {
  // Aligned: the device copy's own arrays.
  const spmv::cuda::DeviceCsr<Value, Index> d_a(a);
  check_view(a, d_a.view(), 1.0, 0.0);
  check_view(a, d_a.view(), -0.5, 2.0);
  // Offset by one element: every lane takes the element-by-element path.
  std::vector<Index> cols(1, Index(0));
  std::vector<Value> vals(1, Value(0));
  cols.insert(cols.end(), a.col_idx.begin(), a.col_idx.end());
  vals.insert(vals.end(), a.values.begin(), a.values.end());
  spmv::cuda::DeviceBuffer<Index> d_cols{std::span<const Index>(cols)};
  spmv::cuda::DeviceBuffer<Value> d_vals{std::span<const Value>(vals)};
  spmv::cuda::CsrView<Value, Index> offset = d_a.view();
  offset.col_idx = d_cols.data() + 1;
  offset.values = d_vals.data() + 1;
  check_view(a, offset, 1.0, 0.0);
  check_view(a, offset, 1.0, -1.0);
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

}  // namespace
