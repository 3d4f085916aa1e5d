// The CPU row loop over half-precision values (Options::values, issue 11; docs/algorithms/
// half_values_cpu.md): the plan keeps A's values as fp16 or bfloat16 bits, converted once here with the
// exact round-to-nearest-even conversions of spmv/value_storage.hpp, and widens each value to f32 where
// the product uses it; x, y, alpha, beta and every sum are f32. The result is that of the rounded
// matrix (round_values), computed with the f32 row loop's error.
//
// A x: each thread owns a contiguous range of rows holding about (rows + nnz) / threads steps (the
// merge-path measure, so that one huge row or a run of empty rows does not unbalance the split), and
// sums each row in order: the result does not depend on the thread count. bfloat16 widens each value
// in the loop (a shift); fp16 widens runs of rows into an L1 buffer with Highway (half_widen.cpp,
// F16C on x86) and sums them from there, in the same order. A^T x: each thread scatters
// its rows into a private y (the merge-parallel transpose's structure), summed in thread order after;
// on one thread the loop scatters into y directly.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/half_widen.hpp"
#include "cpu/instantiate.hpp"
#include "cpu/merge_path.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::detail {
namespace {

template <class Index>
class HalfRowsPlan {
 public:
  HalfRowsPlan(const CsrMatrix<float, Index>& a, Operation op, ValueStorage storage, int threads)
      : m_(a, storage), op_(op), segments_(threads > 0 ? threads : std::max(1, omp_get_max_threads())) {
    // Whole rows per segment: the rows where merge-parallel's equal merge-path pieces start.
    std::vector<Index> start_nz;
    cpu::detail::merge_path_split(m_.row_ptr.data(), m_.rows, a.nnz(), segments_, start_row_, start_nz);
    if (op_ == Operation::Transpose && segments_ > 1)
      private_y_.resize(static_cast<std::size_t>(segments_) * static_cast<std::size_t>(m_.cols));
  }

  void apply(float alpha, const float* x, float beta, float* y) {
    if (m_.storage == ValueStorage::F16) run(WidenF16{}, alpha, x, beta, y);
    else run(WidenBf16{}, alpha, x, beta, y);
  }

  std::string policy() const {
    return "threads=" + std::to_string(segments_) + " values=" + std::string(to_string(m_.storage)) +
           (op_ == Operation::NonTranspose ? " rows-per-thread"
            : segments_ > 1                ? " private-y-per-thread"
                                           : " scatter");
  }

  // The row split and the transpose's private vectors; the 16-bit values replace the f32 ones.
  std::size_t extra_bytes() const { return start_row_.size() * sizeof(Index) + private_y_.size() * sizeof(float); }

 private:
  template <class Widen>
  void run(Widen widen, float alpha, const float* x, float beta, float* y) {
    const Index* row_ptr = m_.row_ptr.data();
    const Index* col = m_.col.data();
    const std::uint16_t* val = m_.values.data();
    const Index* start = start_row_.data();
    const int segments = segments_;
    const std::int64_t ny = op_ == Operation::NonTranspose ? m_.rows : m_.cols;
    if (alpha == 0 || (op_ == Operation::Transpose && segments == 1)) {  // beta == 0 never reads y
#pragma omp parallel for schedule(static) num_threads(segments)
      for (std::int64_t i = 0; i < ny; ++i) y[i] = beta == 0 ? 0.0f : beta * y[i];
      if (alpha == 0) return;  // BLAS: neither A nor x is read
    }
    if (op_ == Operation::NonTranspose) {
#pragma omp parallel for schedule(static, 1) num_threads(segments)
      for (int s = 0; s < segments; ++s) {
        if constexpr (std::is_same_v<Widen, WidenF16>) {
          f16_rows(start[s], start[s + 1], alpha, x, beta, y);
        } else {
          for (Index r = start[s]; r < start[s + 1]; ++r) {
            float sum = 0;
            for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += widen(val[k]) * x[col[k]];
            y[r] = beta == 0 ? alpha * sum : alpha * sum + beta * y[r];
          }
        }
      }
      return;
    }
    if (segments == 1) {  // y was scaled above
      for (Index r = 0; r < m_.rows; ++r) {
        const float ax = alpha * x[r];
        for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) y[col[k]] += widen(val[k]) * ax;
      }
      return;
    }
    float* priv = private_y_.data();
    const std::int64_t cols = m_.cols;
#pragma omp parallel num_threads(segments)
    {
#pragma omp for schedule(static, 1)
      for (int s = 0; s < segments; ++s) {
        float* py = priv + static_cast<std::size_t>(s) * static_cast<std::size_t>(cols);
        std::fill(py, py + cols, 0.0f);
        for (Index r = start[s]; r < start[s + 1]; ++r) {
          const float xr = x[r];
          for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) py[col[k]] += widen(val[k]) * xr;
        }
      }
#pragma omp for schedule(static)
      for (std::int64_t j = 0; j < cols; ++j) {
        float acc = 0;
        for (int s = 0; s < segments; ++s) acc += priv[static_cast<std::size_t>(s) * static_cast<std::size_t>(cols) + j];
        y[j] = beta == 0 ? alpha * acc : alpha * acc + beta * y[j];
      }
    }
  }

  // A x over fp16 values, rows [r, r_end): each run of whole rows with at most kWidenBlock values is
  // widened into the buffer at once, then summed row by row; a longer row is summed piece by piece.
  void f16_rows(Index r, Index r_end, float alpha, const float* x, float beta, float* y) const {
    const Index* row_ptr = m_.row_ptr.data();
    const Index* col = m_.col.data();
    const std::uint16_t* val = m_.values.data();
    float buf[kWidenBlock];
    const auto store = [&](Index row, float sum) { y[row] = beta == 0 ? alpha * sum : alpha * sum + beta * y[row]; };
    while (r < r_end) {
      const std::int64_t k0 = row_ptr[r];
      if (row_ptr[r + 1] - k0 > kWidenBlock) {
        float sum = 0;
        for (std::int64_t k = k0; k < row_ptr[r + 1]; k += kWidenBlock) {
          const std::int64_t n = std::min<std::int64_t>(kWidenBlock, row_ptr[r + 1] - k);
          widen_f16_block(val + k, static_cast<std::size_t>(n), buf);
          for (std::int64_t j = 0; j < n; ++j) sum += buf[j] * x[col[k + j]];
        }
        store(r++, sum);
        continue;
      }
      Index run_end = r + 1;
      while (run_end < r_end && row_ptr[run_end + 1] - k0 <= kWidenBlock) ++run_end;
      widen_f16_block(val + k0, static_cast<std::size_t>(row_ptr[run_end] - k0), buf);
      for (; r < run_end; ++r) {
        float sum = 0;
        for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += buf[k - k0] * x[col[k]];
        store(r, sum);
      }
    }
  }

  HalfCsr<Index> m_;
  Operation op_;
  int segments_;
  std::vector<Index> start_row_;
  std::vector<float> private_y_;
};

}  // namespace

template <class Index>
CpuKernel<float, Index> make_half_rows_kernel(const CsrMatrix<float, Index>& a, Operation op, ValueStorage values,
                                              int threads) {
  return plan_kernel<float, Index>(std::make_shared<HalfRowsPlan<Index>>(a, op, values, threads));
}

template CpuKernel<float, std::int32_t> make_half_rows_kernel(const CsrMatrix<float, std::int32_t>&, Operation,
                                                              ValueStorage, int);
template CpuKernel<float, std::int64_t> make_half_rows_kernel(const CsrMatrix<float, std::int64_t>&, Operation,
                                                              ValueStorage, int);

}  // namespace spmv::detail
