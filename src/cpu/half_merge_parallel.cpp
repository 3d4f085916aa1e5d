// Merge-parallel over half-precision values (Options::values = f16 / bf16; docs/algorithms/
// half_values_cpu.md): the merge-path split of merge_parallel.cpp (Merrill & Garland, SC'16, §4; the
// same coordinates, cpu/merge_path.hpp) over a plan that keeps A's values as 16-bit bits, converted
// once here with the exact round-to-nearest-even conversions of spmv/value_storage.hpp. x, y, alpha,
// beta and every sum are f32, so the result is that of the rounded matrix (round_values) with the f32
// merge loop's error.
//
// fp16 (and the transpose of both): each thread walks its segment's nonzeros in blocks of kWidenBlock;
// a block is widened into an L1 buffer (Highway's PromoteTo, half_widen.cpp; the scalar functors with
// SPMV_CPU_SIMD=0) and summed from there in the order of the f32 loop, so a block boundary inside a row
// changes nothing. bfloat16's A x widens each value in the loop (a shift), as the half row loop does:
// on R-MAT scale 18 (2 threads, 2-core Zen 4 VM) that took 2.7 ms against 3.2 ms through the buffer
// (poisson2d n = 1000: 2.2-2.8 against 2.3-2.4, noise). A x: the rows
// whose end a segment consumes are written by it; the partial sum of the row it stops inside is its
// carry-out, added after the parallel region in segment order, so a product is bit-reproducible for a
// given thread count (not across counts: the split moves). A^T x: each segment scatters into a private
// y, summed in segment order.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/half_widen.hpp"
#include "cpu/merge_path.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::detail {
namespace {

template <class Index>
class HalfMergePlan {
 public:
  HalfMergePlan(const CsrMatrix<float, Index>& a, Operation op, ValueStorage storage, int threads, int simd)
      : m_(a, storage), op_(op), threads_(threads > 0 ? threads : std::max(1, omp_get_max_threads())),
        segments_(cpu::detail::merge_path_segments(op == Operation::Transpose, threads_,
                                                   std::int64_t(a.rows) + std::int64_t(a.nnz()))),
        simd_(cpu::detail::simd_enabled(simd)), widen_(widen_block_for(storage, simd_)) {
    cpu::detail::merge_path_split(m_.row_ptr.data(), m_.rows, a.nnz(), segments_, start_row_, start_nz_);
    if (op_ == Operation::NonTranspose) carry_value_.resize(static_cast<std::size_t>(segments_));
    else private_y_.resize(static_cast<std::size_t>(segments_) * static_cast<std::size_t>(m_.cols));
  }

  void apply(float alpha, const float* x, float beta, float* y) {
    const int segments = segments_;
    if (alpha == 0) {  // BLAS: neither A nor x is read; beta == 0 never reads y
      const std::int64_t ny = op_ == Operation::NonTranspose ? m_.rows : m_.cols;
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (std::int64_t i = 0; i < ny; ++i) y[i] = beta == 0 ? 0.0f : beta * y[i];
      return;
    }
    if (op_ == Operation::NonTranspose) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
      for (int s = 0; s < segments; ++s) carry_value_[s] = segment_rows(s, alpha, x, beta, y);
      // Fix-up in segment order: deterministic, and race-free since the region above has ended.
      for (int s = 0; s < segments; ++s)
        if (start_row_[s + 1] < m_.rows) y[start_row_[s + 1]] += alpha * carry_value_[s];
      return;
    }
    float* priv = private_y_.data();
    const std::int64_t cols = m_.cols;
#pragma omp parallel num_threads(threads_)
    {
#pragma omp for schedule(static, 1)
      for (int s = 0; s < segments; ++s) segment_scatter(s, x, priv + static_cast<std::size_t>(s) * cols);
#pragma omp for schedule(static)
      for (std::int64_t j = 0; j < cols; ++j) {
        float acc = 0;
        for (int s = 0; s < segments; ++s) acc += priv[static_cast<std::size_t>(s) * cols + j];
        y[j] = beta == 0 ? alpha * acc : alpha * acc + beta * y[j];
      }
    }
  }

  std::string policy() const {
    const std::int64_t total = std::int64_t(m_.rows) + std::int64_t(m_.col.size());
    return "threads=" + std::to_string(threads_) + " segments=" + std::to_string(segments_) + " items_per_segment=" +
           std::to_string((total + segments_ - 1) / segments_) + " values=" + std::string(to_string(m_.storage)) +
           (op_ == Operation::NonTranspose ? " carry-out-fixup" : " private-y-per-thread") +
           (m_.storage == ValueStorage::Bf16 && op_ == Operation::NonTranspose ? std::string(" widen=in-loop")
            : simd_ ? " widen=" + cpu::detail::simd_target()
                    : std::string(" widen=scalar (simd=off)"));
  }

  // The merge-path coordinates, carries and the transpose's private vectors; the 16-bit values replace
  // the f32 ones.
  std::size_t extra_bytes() const {
    return (start_row_.size() + start_nz_.size()) * sizeof(Index) + (carry_value_.size() + private_y_.size()) * sizeof(float);
  }

 private:
  // A x over segment s: writes the rows whose end it consumes, returns the carry-out (the partial sum of
  // row start_row_[s + 1], which the next segments finish).
  float segment_rows(int s, float alpha, const float* x, float beta, float* y) const {
    const Index* row_ptr = m_.row_ptr.data();
    const Index* col = m_.col.data();
    Index r = start_row_[s];
    const Index r_end = start_row_[s + 1];
    std::int64_t k = start_nz_[s];
    const std::int64_t k_end = start_nz_[s + 1];
    if (m_.storage == ValueStorage::Bf16) {  // widened in the loop (a shift): the f32 merge loop's shape
      const std::uint16_t* val = m_.values.data();
      float acc = 0;
      for (; r < r_end; ++r) {
        for (; k < row_ptr[r + 1]; ++k) acc += bf16_bits_to_float(val[k]) * x[col[k]];
        y[r] = beta == 0 ? alpha * acc : alpha * acc + beta * y[r];
        acc = 0;
      }
      for (; k < k_end; ++k) acc += bf16_bits_to_float(val[k]) * x[col[k]];
      return acc;
    }
    float buf[kWidenBlock];
    float acc = 0;
    do {  // one block of nonzeros per pass; rows before r_end all end by k_end
      const std::int64_t k0 = k, block_end = std::min(k + kWidenBlock, k_end);
      widen_(m_.values.data() + k0, static_cast<std::size_t>(block_end - k0), buf);
      for (; r < r_end && row_ptr[r + 1] <= block_end; ++r) {
        for (; k < row_ptr[r + 1]; ++k) acc += buf[k - k0] * x[col[k]];
        y[r] = beta == 0 ? alpha * acc : alpha * acc + beta * y[r];
        acc = 0;
      }
      for (; k < block_end; ++k) acc += buf[k - k0] * x[col[k]];  // row r continues (or is the carry)
    } while (k < k_end);
    return acc;
  }

  // A^T x over segment s into its private vector py (no carry: a split row only means two segments
  // share x[r]).
  void segment_scatter(int s, const float* x, float* py) const {
    const Index* row_ptr = m_.row_ptr.data();
    const Index* col = m_.col.data();
    std::fill(py, py + m_.cols, 0.0f);
    Index r = start_row_[s];
    std::int64_t k = start_nz_[s];
    const std::int64_t k_end = start_nz_[s + 1];
    float buf[kWidenBlock];
    while (k < k_end) {
      const std::int64_t k0 = k, block_end = std::min(k + kWidenBlock, k_end);
      widen_(m_.values.data() + k0, static_cast<std::size_t>(block_end - k0), buf);
      while (k < block_end) {
        while (row_ptr[r + 1] <= k) ++r;  // rows that ended (empty ones included)
        const float xr = x[r];
        const std::int64_t stop = std::min<std::int64_t>(row_ptr[r + 1], block_end);
        for (; k < stop; ++k) py[col[k]] += buf[k - k0] * xr;
      }
    }
  }

  HalfCsr<Index> m_;
  Operation op_;
  int threads_;
  int segments_;  // cpu::detail::merge_path_segments: the f32 plan's split, so that both sum in one order
  bool simd_;
  WidenBlockFn widen_;
  std::vector<Index> start_row_, start_nz_;  // segments_ + 1 merge-path coordinates (row, nonzero)
  std::vector<float> carry_value_;           // per segment (A x)
  std::vector<float> private_y_;             // segments_ * cols (A^T x)
};

}  // namespace

template <class Index>
CpuKernel<float, Index> make_half_merge_kernel(const CsrMatrix<float, Index>& a, Operation op, ValueStorage values,
                                               int threads, int simd) {
  return plan_kernel<float, Index>(std::make_shared<HalfMergePlan<Index>>(a, op, values, threads, simd));
}

template CpuKernel<float, std::int32_t> make_half_merge_kernel(const CsrMatrix<float, std::int32_t>&, Operation,
                                                               ValueStorage, int, int);
template CpuKernel<float, std::int64_t> make_half_merge_kernel(const CsrMatrix<float, std::int64_t>&, Operation,
                                                               ValueStorage, int, int);

}  // namespace spmv::detail
