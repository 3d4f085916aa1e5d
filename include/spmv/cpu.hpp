#pragma once
// The CPU backend's algorithms on host spans, below the Operator interface (make_cpu_operator wraps
// them). Each computes y = alpha*op(A)*x + beta*y with BLAS semantics: beta == 0 overwrites y without
// reading it (y may hold NaN), alpha == 0 skips A (y = beta*y). x has op(A).cols entries and y
// op(A).rows; other sizes throw InvalidArgument. The free functions validate A on every call
// (O(nnz)); the plan classes validate once, own a copy of A and their workspace, and allocate
// nothing in apply; one plan runs one product at a time (the workspace is shared). Instantiated for
// float/double x int32_t/int64_t.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"

namespace spmv {
enum class Semiring;  // spmv/semiring.hpp
}  // namespace spmv

namespace spmv::cpu {

// ---- Oracle ---------------------------------------------------------------------------------------

// Sequential, accumulating in double for every value type (one rounding to Value per output entry).
// This is the oracle of the differential tests.
template <class Value, class Index>
void reference(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x, Value beta,
               std::span<Value> y);

// Per output entry i of op(A): sum_j |op(A)_ij * x_j| in double, the scale of the rounding error of
// any summation order (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.1).
template <class Value, class Index>
std::vector<double> reference_magnitude(const CsrMatrix<Value, Index>& a, Operation op,
                                        std::span<const Value> x);

// ---- Row loop -------------------------------------------------------------------------------------

// Naive sequential loop accumulating in Value: one running sum per row (N), or a scatter of
// alpha*x_i*a_ij into y (T). The baseline every other algorithm has to beat. (The CPU operator's
// RowLoop runs the SIMD row kernels for N when they are enabled; this free function stays scalar.)
template <class Value, class Index>
void row_loop(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x, Value beta,
              std::span<Value> y);

// ---- Column chunked -------------------------------------------------------------------------------

// Bytes of the vector chunk (x for N, y for T) that one column span covers: about the per-core L2
// share of current x86 servers, so the chunk stays cached while every row walks through it.
inline constexpr std::size_t kColumnChunkBytes = std::size_t{1} << 20;

template <class Value>
constexpr std::int64_t default_column_span() {
  return static_cast<std::int64_t>(kColumnChunkBytes / sizeof(Value));
}

// Reguly & Giles (2012), CPU variant: the columns are processed in chunks of `span` so that the
// chunk of x (N) or y (T) is reused from cache by every row, each row keeping a cursor into its
// entries. Rows are split into `threads` contiguous segments of about equal rows + nnz. For T, each
// segment scatters into a private chunk buffer, summed in segment order (deterministic for a given
// thread count; workspace threads * span values).
// Needs columns sorted within rows (for T, an entry met after its span was reduced would be lost;
// for N, sorting is what gives the reuse): the plan sorts a copy when they are not, keeping
// duplicates, and says so in policy(). The free function builds a plan per call.
template <class Value, class Index>
class ColumnChunkedPlan {
 public:
  // span <= 0: default_column_span<Value>(); threads <= 0: omp_get_max_threads().
  ColumnChunkedPlan(const CsrMatrix<Value, Index>& a, Operation op, std::int64_t span = 0, int threads = 0);
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y);
  // y = A ⊕.⊗ x over a semiring (spmv/semiring.hpp), N plans only (InvalidArgument otherwise): the same walk of
  // the spans, each row folded from the semiring's zero, y only written (no alpha or beta). Const and safe from
  // many threads at once: its cursors and row results are the call's own (a segment's, allocated by the call),
  // not the plan's. spmv::SemiringPlan's Algorithm::ColumnChunked.
  void apply(Semiring s, std::span<const Value> x, std::span<Value> y) const;
  std::string policy() const;
  std::size_t extra_bytes() const;  // cursors, row sums (N), chunk buffers (T); a sorted copy replaces A
  std::size_t matrix_bytes() const;  // the plan's copy of A (sorted when the input was not)
  bool sorted_copy() const { return sorted_copy_; }

 private:
  CsrMatrix<Value, Index> a_;
  Operation op_;
  std::int64_t span_;
  int segments_;
  bool sorted_copy_ = false;
  std::vector<Index> segment_rows_;  // segments_ + 1 row boundaries
  std::vector<Index> cursor_;        // per row
  std::vector<Value> sum_;           // per row (N)
  std::vector<Value> chunk_buffer_;  // segments_ * span (T)
};

template <class Value, class Index>
void column_chunked(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x,
                    Value beta, std::span<Value> y, std::int64_t span = 0, int threads = 0);

// ---- Merge-path parallel --------------------------------------------------------------------------

// Merrill & Garland (2016), §4: the merge path of (row end offsets, nonzero indices) has rows + nnz
// steps; each segment takes an equal share, so a thread gets as much work whatever the row lengths.
// N: a few segments a thread, taken in turn (a thread the OS or a hypervisor holds back leaves its
// later segments to the others); T: one a thread. A row split between segments is finished by the
// segment that reaches its end; the earlier segments' partial sums (carry-outs) are added afterwards in
// segment order.
// T: each segment scatters into a private y of op(A).rows entries and the private vectors are summed
// in segment order (chosen over an explicit transpose: no second copy of A, and the merge-path
// balance of nonzeros per thread carries over unchanged; workspace threads * cols values).
// Deterministic for a given thread count: the split and every summation order depend only on it.
// The free function builds a plan per call.
template <class Value, class Index>
class MergeParallelPlan {
 public:
  // threads <= 0: omp_get_max_threads(). simd: as Options::cpu_simd (-1: environment SPMV_CPU_SIMD);
  // when on, the N product runs each segment's rows with the SIMD row kernels (src/cpu/csr_simd.cpp),
  // `rows` as Options::cpu_rows (-1: environment SPMV_CPU_ROWS, else the plan's rule).
  MergeParallelPlan(const CsrMatrix<Value, Index>& a, Operation op, int threads = 0, int simd = -1, int rows = -1);
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y);
  std::string policy() const;
  std::size_t extra_bytes() const;

 private:
  CsrMatrix<Value, Index> a_;
  Operation op_;
  int threads_;
  int segments_;
  bool simd_;       // the SIMD row kernels are on and can take A
  bool long_rows_ = false;  // and some row is long enough to use them (else the short-row loop runs)
  int short_rows_ = 0;      // and the short-row kernel, as Options::cpu_rows (src/cpu/csr_simd.hpp, ShortRows)
  std::vector<Index> start_row_;      // segments_ + 1 merge-path coordinates (row, nonzero)
  std::vector<Index> start_nz_;
  std::vector<Index> carry_row_;      // per segment (N)
  std::vector<Value> carry_value_;    // per segment (N)
  std::vector<Value> private_y_;      // segments_ * cols (T)
};

template <class Value, class Index>
void merge_parallel(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x,
                    Value beta, std::span<Value> y, int threads = 0);

namespace detail {
// Throws InvalidArgument unless x and y have the sizes op(A) needs; `who` names the caller.
template <class Value, class Index>
void check_vectors(const CsrMatrix<Value, Index>& a, Operation op, std::size_t x_size, std::size_t y_size,
                   const char* who);

// The bodies of reference() and row_loop() without the O(nnz) validation, for operators that
// validated their copy of A once at construction. Sizes must already be checked.
template <class Value, class Index>
void reference_kernel(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, const Value* x, Value beta,
                      Value* y);
template <class Value, class Index>
void row_loop_kernel(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, const Value* x, Value beta,
                     Value* y);
}  // namespace detail

}  // namespace spmv::cpu
