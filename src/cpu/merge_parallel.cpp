// Merge-path CSR SpMV on the CPU (Merrill & Garland, "Merge-based parallel sparse matrix-vector
// multiplication", SC'16, §4 and their cpu_spmv code): the rows + nnz steps of merging the row end
// offsets with the nonzero indices are split evenly, so one huge row or many empty rows cannot
// leave a thread with more work than another.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "cpu/merge_path.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"

namespace spmv::cpu {

template <class Value, class Index>
MergeParallelPlan<Value, Index>::MergeParallelPlan(const CsrMatrix<Value, Index>& a, Operation op, int threads,
                                                   int simd, int rows)
    : a_(convert<Value, Index>(a)), op_(op) {  // convert: the copy on huge pages (spmv/host_memory.hpp)
  validate(a_);
  // The SIMD kernels serve the N product; T scatters into y, where lanes would conflict.
  simd_ = op_ == Operation::NonTranspose && detail::simd_enabled(simd) && detail::simd_fits<Value, Index>(a_.cols);
  if (simd_) {
    const auto k = detail::row_kernels<Value, Index>(rows, a_.row_ptr.data(), a_.col_idx.data(), a_.rows, a_.cols);
    long_rows_ = k.long_rows;
    short_rows_ = static_cast<int>(k.short_rows);
  }
  threads_ = threads > 0 ? threads : std::max(1, omp_get_max_threads());
  segments_ = detail::merge_path_segments(op_ == Operation::Transpose, threads_,
                                          static_cast<std::int64_t>(a_.rows) + a_.nnz());
  detail::merge_path_split(a_.row_ptr.data(), a_.rows, a_.nnz(), segments_, start_row_, start_nz_);
  if (op_ == Operation::NonTranspose) {
    carry_row_.resize(static_cast<std::size_t>(segments_));
    carry_value_.resize(static_cast<std::size_t>(segments_));
  } else {
    private_y_.resize(static_cast<std::size_t>(segments_) * static_cast<std::size_t>(a_.cols));
  }
}

template <class Value, class Index>
void MergeParallelPlan<Value, Index>::apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) {
  detail::check_vectors(a_, op_, x.size(), y.size(), "spmv::cpu::MergeParallelPlan");
  const int segments = segments_;
  Value* yp = y.data();
  if (alpha == 0) {
    const auto n = static_cast<std::int64_t>(y.size());
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t i = 0; i < n; ++i) yp[i] = beta == 0 ? Value(0) : beta * yp[i];
    return;
  }
  const Index* row_ptr = a_.row_ptr.data();
  const Index* col = a_.col_idx.data();
  const Value* val = a_.values.data();
  const Value* xp = x.data();
  const Index rows = a_.rows;

  if (op_ == Operation::NonTranspose) {
    // Each segment writes y only for rows whose end it consumes (exactly one segment per row); the
    // partial sum of the row it stops inside is its carry-out, added after the parallel region.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
    for (int s = 0; s < segments; ++s) {
      Index r = start_row_[s], k = start_nz_[s];
      const Index r_end = start_row_[s + 1], k_end = start_nz_[s + 1];
      const auto short_rows = static_cast<detail::ShortRows>(short_rows_);
      // f32's plain loop too goes to the row kernels (csr_rows_scalar, compiled without GCC's vectoriser):
      // this file's own loop got the vectoriser's SLP form of an f32 row sum, 1.33-1.69x slower on 2D
      // Poisson, where f64's 2-wide form ran 1.09-1.16x faster than the kernel's loop on one thread (2-core
      // Zen 4 VM, 2026-11-29, docs/PERFORMANCE.md "Merge-parallel's f32 rows and segments").
      if (long_rows_ || short_rows != detail::ShortRows::Plain || sizeof(Value) == 4) {
        // The dispatched kernels: the row the segment starts inside (or at its first nonzero) and the
        // carry-out are pieces of rows (a dot product); the whole rows between go to the row kernel.
        const auto piece = [&](std::int64_t begin, std::int64_t end) {
          if (long_rows_) return detail::csr_dot_simd(col, val, xp, begin, end);
          Value acc = 0;
          for (std::int64_t j = begin; j < end; ++j) acc += val[j] * xp[col[j]];
          return acc;
        };
        if (r < r_end) {
          const Value acc = piece(k, row_ptr[r + 1]);
          yp[r] = beta == 0 ? alpha * acc : alpha * acc + beta * yp[r];
          if (long_rows_)
            detail::csr_rows_simd(row_ptr, col, val, xp, static_cast<Index>(r + 1), r_end, alpha, beta, yp,
                                  short_rows);
          else
            detail::csr_rows_short(short_rows, row_ptr, col, val, xp, static_cast<Index>(r + 1), r_end, alpha,
                                   beta, yp);
          k = row_ptr[r_end];
        }
        carry_row_[s] = r_end;
        carry_value_[s] = piece(k, k_end);
        continue;
      }
      Value acc = 0;
      for (; r < r_end; ++r) {
        for (; k < row_ptr[r + 1]; ++k) acc += val[k] * xp[col[k]];
        yp[r] = beta == 0 ? alpha * acc : alpha * acc + beta * yp[r];
        acc = 0;
      }
      for (; k < k_end; ++k) acc += val[k] * xp[col[k]];
      carry_row_[s] = r_end;
      carry_value_[s] = acc;
    }
    // Fix-up in segment order: deterministic, and race-free since the region above has ended.
    for (int s = 0; s < segments; ++s)
      if (carry_row_[s] < rows) yp[carry_row_[s]] += alpha * carry_value_[s];
    return;
  }

  // T: nonzeros scatter into a private y per segment (no carry needed: a split row only means two
  // segments share x[r]); the private vectors are then summed in segment order.
  const std::int64_t cols = a_.cols;
  Value* priv = private_y_.data();
#pragma omp parallel num_threads(segments)
  {
#pragma omp for schedule(static, 1)
    for (int s = 0; s < segments; ++s) {
      Value* py = priv + static_cast<std::size_t>(s) * static_cast<std::size_t>(cols);
      std::fill(py, py + cols, Value(0));
      Index r = start_row_[s], k = start_nz_[s];
      const Index r_end = start_row_[s + 1], k_end = start_nz_[s + 1];
      for (; r < r_end; ++r) {
        const Value xr = xp[r];
        for (; k < row_ptr[r + 1]; ++k) py[col[k]] += val[k] * xr;
      }
      if (k < k_end) {  // r < rows here: the path ends inside row r
        const Value xr = xp[r];
        for (; k < k_end; ++k) py[col[k]] += val[k] * xr;
      }
    }
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < cols; ++j) {
      Value acc = 0;
      for (int s = 0; s < segments; ++s) acc += priv[static_cast<std::size_t>(s) * cols + j];
      yp[j] = beta == 0 ? alpha * acc : alpha * acc + beta * yp[j];
    }
  }
}

template <class Value, class Index>
std::string MergeParallelPlan<Value, Index>::policy() const {
  const std::int64_t total = static_cast<std::int64_t>(a_.rows) + a_.nnz();
  return "threads=" + std::to_string(threads_) + " segments=" + std::to_string(segments_) + " items_per_segment=" +
         std::to_string((total + segments_ - 1) / segments_) +
         (op_ == Operation::Transpose ? " private-y-per-thread" : " carry-out-fixup") +
         " " + detail::simd_policy<Value, Index>(simd_, {long_rows_, static_cast<detail::ShortRows>(short_rows_)});
}

template <class Value, class Index>
std::size_t MergeParallelPlan<Value, Index>::extra_bytes() const {
  return (start_row_.size() + start_nz_.size() + carry_row_.size()) * sizeof(Index) +
         (carry_value_.size() + private_y_.size()) * sizeof(Value);
}

template <class Value, class Index>
void merge_parallel(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x,
                    Value beta, std::span<Value> y, int threads) {
  MergeParallelPlan<Value, Index>(a, op, threads).apply(alpha, x, beta, y);
}

#define SPMV_INSTANTIATE(V, I)                                                                             \
  template class MergeParallelPlan<V, I>;                                                                  \
  template void merge_parallel(const CsrMatrix<V, I>&, Operation, V, std::span<const V>, V, std::span<V>, \
                               int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu
