// Column-chunked CSR (Reguly & Giles, "Efficient sparse matrix-vector multiplication on cache-based
// GPUs", InPar 2012; the CPU variant of the same idea): a long x (N) or y (T) does not stay in cache
// while the rows sweep over it, so the columns are cut into spans whose piece of the vector fits L2,
// and every row advances a cursor through its (sorted) entries one span at a time.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cpu {
namespace {

template <class Value, class Index>
bool columns_sorted(const CsrMatrix<Value, Index>& a) {
  for (Index r = 0; r < a.rows; ++r)
    for (Index k = a.row_ptr[r] + 1; k < a.row_ptr[r + 1]; ++k)
      if (a.col_idx[k - 1] > a.col_idx[k]) return false;
  return true;
}

// Stable, so duplicates stay separate entries in input order (the product treats them so too).
template <class Value, class Index>
void sort_columns(CsrMatrix<Value, Index>& a) {
  std::vector<std::pair<Index, Value>> row;
  for (Index r = 0; r < a.rows; ++r) {
    row.clear();
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) row.emplace_back(a.col_idx[k], a.values[k]);
    std::stable_sort(row.begin(), row.end(), [](const auto& p, const auto& q) { return p.first < q.first; });
    for (std::size_t i = 0; i < row.size(); ++i) {
      a.col_idx[a.row_ptr[r] + static_cast<Index>(i)] = row[i].first;
      a.values[a.row_ptr[r] + static_cast<Index>(i)] = row[i].second;
    }
  }
}

// The N walk of one segment's rows [r0, r1): span by span, each row advances its cursor through its entries of the
// span and folds them into its result with the semiring's ops, from Ops::zero(); then finish(r, result) writes
// each row. cursor and result are the segment's own (indexed r - r0). Plus-times is the SpMV's walk (a + v * x).
template <class Ops, class Value, class Index, class Finish>
void fold_segment(const CsrMatrix<Value, Index>& a, Index r0, Index r1, std::int64_t span, const Value* x,
                  Index* cursor, Value* result, Finish&& finish) {
  const Index* row_ptr = a.row_ptr.data();
  const Index* col = a.col_idx.data();
  const Value* val = a.values.data();
  const std::int64_t cols = a.cols;
  for (Index r = r0; r < r1; ++r) {
    cursor[r - r0] = row_ptr[r];
    result[r - r0] = Ops::zero();
  }
  for (std::int64_t c0 = 0; c0 < cols; c0 += span) {
    const Index c1 = static_cast<Index>(std::min(cols, c0 + span));
    for (Index r = r0; r < r1; ++r) {
      Index k = cursor[r - r0];
      const Index end = row_ptr[r + 1];
      Value acc = result[r - r0];
      for (; k < end && col[k] < c1; ++k) acc = Ops::add(acc, Ops::mul(val[k], x[col[k]]));
      cursor[r - r0] = k;
      result[r - r0] = acc;
    }
  }
  for (Index r = r0; r < r1; ++r) finish(r, result[r - r0]);
}

template <class Value>
void scale(Value beta, Value* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
}

}  // namespace

template <class Value, class Index>
ColumnChunkedPlan<Value, Index>::ColumnChunkedPlan(const CsrMatrix<Value, Index>& a, Operation op,
                                                   std::int64_t span, int threads)
    : a_(convert<Value, Index>(a)), op_(op) {  // convert: the copy on huge pages (spmv/host_memory.hpp)
  validate(a_);
  // Sorted columns are needed for T (an entry seen after its span was reduced would be lost) and
  // give N its cache reuse; sorting a copy keeps the caller's matrix as it was.
  if (!columns_sorted(a_)) {
    sort_columns(a_);
    sorted_copy_ = true;
  }
  const std::int64_t cols = a_.cols;
  span_ = std::max<std::int64_t>(1, std::min<std::int64_t>(span > 0 ? span : default_column_span<Value>(),
                                                           std::max<std::int64_t>(cols, 1)));
  segments_ = threads > 0 ? threads : std::max(1, omp_get_max_threads());
  // Contiguous row segments of about equal rows + nnz (row_ptr[r] + r is increasing in r).
  segment_rows_.resize(static_cast<std::size_t>(segments_) + 1);
  const std::int64_t total = static_cast<std::int64_t>(a_.nnz()) + a_.rows;
  for (int s = 0; s <= segments_; ++s) {
    const std::int64_t target = total * s / segments_;
    Index lo = 0, hi = a_.rows;
    while (lo < hi) {
      const Index mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(a_.row_ptr[mid]) + mid < target) lo = mid + 1;
      else hi = mid;
    }
    segment_rows_[s] = lo;
  }
  segment_rows_[segments_] = a_.rows;
  cursor_.resize(static_cast<std::size_t>(a_.rows));
  if (op_ == Operation::NonTranspose) sum_.resize(static_cast<std::size_t>(a_.rows));
  else chunk_buffer_.resize(static_cast<std::size_t>(segments_) * static_cast<std::size_t>(span_));
}

template <class Value, class Index>
void ColumnChunkedPlan<Value, Index>::apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) {
  detail::check_vectors(a_, op_, x.size(), y.size(), "spmv::cpu::ColumnChunkedPlan");
  if (alpha == 0) {
    scale(beta, y.data(), static_cast<std::int64_t>(y.size()));
    return;
  }
  const Index* row_ptr = a_.row_ptr.data();
  const Index* col = a_.col_idx.data();
  const Value* val = a_.values.data();
  const Value* xp = x.data();
  Value* yp = y.data();
  Index* cursor = cursor_.data();
  const std::int64_t cols = a_.cols;
  const std::int64_t span = span_;
  const int segments = segments_;

  if (op_ == Operation::NonTranspose) {
    Value* sum = sum_.data();
#pragma omp parallel for schedule(static, 1) num_threads(segments)
    for (int s = 0; s < segments; ++s) {
      const Index r0 = segment_rows_[s], r1 = segment_rows_[s + 1];
      fold_segment<semiring_ops::PlusTimes<Value>>(
          a_, r0, r1, span, xp, cursor + r0, sum + r0,
          [&](Index r, Value acc) { yp[r] = beta == 0 ? alpha * acc : alpha * acc + beta * yp[r]; });
    }
    return;
  }

  // T: the span [c0, c1) of y is owned by this sweep; each segment scatters its rows' entries of the
  // span into a private buffer, then the buffers are summed in segment order into y.
  Value* buffers = chunk_buffer_.data();
#pragma omp parallel num_threads(segments)
  {
#pragma omp for schedule(static, 1)
    for (int s = 0; s < segments; ++s)
      for (Index r = segment_rows_[s]; r < segment_rows_[s + 1]; ++r) cursor[r] = row_ptr[r];
    for (std::int64_t c0 = 0; c0 < cols; c0 += span) {
      const Index c1 = static_cast<Index>(std::min(cols, c0 + span));
      const std::int64_t len = c1 - c0;
#pragma omp for schedule(static, 1)
      for (int s = 0; s < segments; ++s) {
        Value* buf = buffers + static_cast<std::size_t>(s) * static_cast<std::size_t>(span);
        std::fill(buf, buf + len, Value(0));
        for (Index r = segment_rows_[s]; r < segment_rows_[s + 1]; ++r) {
          Index k = cursor[r];
          const Index end = row_ptr[r + 1];
          const Value xr = xp[r];
          for (; k < end && col[k] < c1; ++k) buf[col[k] - c0] += val[k] * xr;
          cursor[r] = k;
        }
      }
#pragma omp for schedule(static)
      for (std::int64_t j = 0; j < len; ++j) {
        Value acc = 0;
        for (int s = 0; s < segments; ++s) acc += buffers[static_cast<std::size_t>(s) * span + j];
        Value& yj = yp[c0 + j];
        yj = beta == 0 ? alpha * acc : alpha * acc + beta * yj;
      }
    }
  }
}

template <class Value, class Index>
void ColumnChunkedPlan<Value, Index>::apply(Semiring s, std::span<const Value> x, std::span<Value> y) const {
  if (op_ != Operation::NonTranspose)
    throw InvalidArgument("spmv::cpu::ColumnChunkedPlan: the semiring product needs a plan for A x (op N)");
  semiring_ops::check_lengths(s, a_.rows, a_.cols, x.size(), y.size());
  const Value* xp = x.data();
  Value* yp = y.data();
  semiring_ops::with_semiring<Value>(s, [&](auto ops) {
    using Ops = decltype(ops);
#pragma omp parallel for schedule(static, 1) num_threads(segments_)
    for (int seg = 0; seg < segments_; ++seg) {
      const Index r0 = segment_rows_[seg], r1 = segment_rows_[seg + 1];
      std::vector<Index> cursor(static_cast<std::size_t>(r1 - r0));  // the call's own: applies may overlap
      std::vector<Value> result(static_cast<std::size_t>(r1 - r0));
      fold_segment<Ops>(a_, r0, r1, span_, xp, cursor.data(), result.data(), [&](Index r, Value acc) { yp[r] = acc; });
    }
  });
}

template <class Value, class Index>
std::size_t ColumnChunkedPlan<Value, Index>::matrix_bytes() const {
  return a_.row_ptr.size() * sizeof(Index) + a_.col_idx.size() * sizeof(Index) + a_.values.size() * sizeof(Value);
}

template <class Value, class Index>
std::string ColumnChunkedPlan<Value, Index>::policy() const {
  const std::int64_t chunks = a_.cols == 0 ? 0 : (a_.cols + span_ - 1) / span_;
  return "threads=" + std::to_string(segments_) + " span=" + std::to_string(span_) + " chunks=" +
         std::to_string(chunks) + (sorted_copy_ ? " sorted-copy (input columns unsorted)" : "");
}

template <class Value, class Index>
std::size_t ColumnChunkedPlan<Value, Index>::extra_bytes() const {
  return cursor_.size() * sizeof(Index) + (sum_.size() + chunk_buffer_.size()) * sizeof(Value) +
         segment_rows_.size() * sizeof(Index);
}

template <class Value, class Index>
void column_chunked(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x,
                    Value beta, std::span<Value> y, std::int64_t span, int threads) {
  ColumnChunkedPlan<Value, Index>(a, op, span, threads).apply(alpha, x, beta, y);
}

#define SPMV_INSTANTIATE(V, I)                                                                             \
  template class ColumnChunkedPlan<V, I>;                                                                  \
  template void column_chunked(const CsrMatrix<V, I>&, Operation, V, std::span<const V>, V, std::span<V>, \
                               std::int64_t, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu
