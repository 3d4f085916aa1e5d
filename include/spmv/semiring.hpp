#pragma once
// Sparse products over semirings for graph analytics (issue 11): y_i = ⊕_j (a_ij ⊗ x_j) over the stored
// entries of row i, as GraphBLAS's mxv. Plus-times is the ordinary product; the others replace its add
// and multiply:
//   min-plus   (min, +)   shortest paths (Bellman–Ford relaxation); an empty row gives +inf
//   max-times  (max, *)   most reliable paths;                     an empty row gives -inf
//   or-and     (or, and)  reachability, BFS on pattern matrices;   entries and x read as true when nonzero,
//                         y is 1 or 0; an empty row gives 0
//   max-min    (max, min) bottleneck (widest) paths;               an empty row gives -inf
// min and max ignore NaN as C's fmin / fmax do (a NaN term loses to any number, the identity included):
// a row whose terms are all NaN gives the same as an empty row (both kernels fold from the identity).
// A zero result's sign may depend on the order terms are combined in (max(+0, -0)), so CPU and CUDA
// agree on values, not always on the sign of a zero. Pattern matrices (Matrix Market "pattern") store 1 for every entry. There is no
// alpha or beta: y is overwritten (y = A x for plus-times). For y = A^T ⊕.⊗ x, multiply transpose(A)
// (spmv/csr.hpp), once for an iterative algorithm.
// On the CPU, SemiringPlan chooses the kernel and converts A once (an iterative algorithm applies it every step);
// semiring_multiply is one product (a plan made and applied once: the formats convert on every call).
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/operator.hpp"

namespace spmv {

enum class Semiring { PlusTimes, MinPlus, MaxTimes, OrAnd, MaxMin };

std::string_view to_string(Semiring s);  // "plus-times", "min-plus", "max-times", "or-and", "max-min"
std::optional<Semiring> parse_semiring(std::string_view name);  // those names (case-insensitive)
std::string semiring_names();            // "plus-times, min-plus, max-times, or-and, max-min"

// The identity of the semiring's add, which an empty row gives: 0, +inf, -inf, 0, -inf.
template <class Value>
Value semiring_zero(Semiring s);

// The algorithms with a semiring kernel on `backend`, Auto first: what SemiringPlan (CPU) and
// spmv::cuda::SemiringPlan accept, the others refused with Unsupported. One table for the plans, the CLI and Python.
std::span<const Algorithm> semiring_algorithms(Backend backend);
std::string semiring_algorithm_names(Backend backend);  // those, as "auto, row-loop, merge-parallel, ..."

// The CPU product planned once for a matrix applied many times (BFS, Bellman-Ford, PageRank): the kernel is
// chosen, and A converted for it, by the constructor; apply() runs the kernel alone. As spmv::cuda::SemiringPlan
// (spmv/cuda/semiring.hpp) on the device. The kernels:
//   Algorithm::RowLoop        rows in chunks handed out on demand, each row walked by one thread;
//   Algorithm::MergeParallel  the merge-path split of rows + nonzeros (as the SpMV's merge-parallel), made here:
//                             equal work per thread however long the rows; a row split between threads has its
//                             pieces ⊕-added afterwards in a fixed order (plus-times: the same bits for a given
//                             thread count, not the row loop's);
//   Algorithm::ColumnChunked  the column-chunked CSR walk (spmv::cpu::ColumnChunkedPlan, Reguly & Giles): a copy of A
//                             (its columns sorted), the columns cut into spans of options.column_span (0: a span of
//                             x that fits L2), each row advancing a cursor through its entries span by span; rows in
//                             contiguous segments of equal rows + nonzeros, a thread each; the row loop's bits for
//                             plus-times when the columns were sorted;
//   Algorithm::Sell           A converted to SELL-C-sigma (to_sell: C = options.sell_c, 0: the SIMD width, as the
//                             SELL SpMV's; sigma = options.sell_sigma, 0: 256), slices of C rows on demand; padding
//                             never enters a row; the row loop's bits for plus-times;
//   Algorithm::Ell, EllR,     A converted with `options` (to_ell, to_ellr, to_hyb with options.hyb_ell_width, to_coo,
//   Hyb, Coo, Dia             to_dia; spmv/formats.hpp), then chunks of rows on demand, each row written once by one
//                             thread. Only stored entries enter a row: ELL padding (column -1) and DIA slots outside
//                             the matrix or without a stored entry (DIA's stored-slot mask) are skipped, never
//                             folded as 0 ⊗ x_j.
//   Algorithm::CompressedCsr  A converted with `options` (to_compressed_csr: slices of 32 rows, 16/32-bit column
//                             offsets, values as pattern, codes or raw), slices on demand; each row folded in storage
//                             order up to its own length (padding never enters it); Unsupported for a row above
//                             65535 entries or a slice spanning 2^32 columns, with the conversion's message.
// Algorithm::Auto (the default) takes the one semiring_cpu_algorithm names for options.threads (RowLoop or
// MergeParallel); it never converts. The construction throws Unsupported, with the conversion's message, where
// the conversion refuses (padding over options.max_padding, SELL's included), for Dia with a semiring other than
// plus-times on a matrix with duplicate entries (to_dia sums them, and for min-plus min(a1 + x, a2 + x) is not
// (a1 + a2) + x), for half-precision options.values and for other algorithms; InvalidArgument on malformed
// options (sell_c not a power of two, ...). Options read: threads (0: the OpenMP default, resolved here),
// max_padding, sell_c, sell_sigma, hyb_ell_width, column_span, values; the others are not.
//
// Lifetime: RowLoop and MergeParallel (so Auto) read A in every apply: A must outlive the plan, unchanged. The format
// plans and ColumnChunked hold their copy (extra_bytes) and do not read A after the construction. Threads: apply() is
// const and writes nothing in the plan (a call's scratch, the threads' accumulators, merge-path's carries and
// column-chunked's cursors, is its own), so any number of threads may apply one plan at once, each with its own y.
template <class Value, class Index>
class SemiringPlan {
 public:
  SemiringPlan(const CsrMatrix<Value, Index>& a, Semiring s, Algorithm algorithm = Algorithm::Auto,
               const Options& options = {});
  ~SemiringPlan();
  SemiringPlan(SemiringPlan&&) noexcept;
  SemiringPlan& operator=(SemiringPlan&&) noexcept;

  // y = A ⊕.⊗ x: x has A.cols entries, y A.rows (InvalidArgument otherwise; and on a moved-from plan); y is only
  // written, and must not overlap x.
  void apply(std::span<const Value> x, std::span<Value> y) const;

  Algorithm algorithm() const;  // resolved: never Auto
  Semiring semiring() const;
  std::string policy() const;     // the kernel and its parameters, e.g. "sell threads=2 C=8 sigma=256 slices=..."
  std::size_t extra_bytes() const;  // held beyond A: the converted matrix, or merge-path's split

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One product y = A ⊕.⊗ x on the CPU with `threads` OpenMP threads (0: the OpenMP default): a SemiringPlan made
// and applied once (the same kernels, refusals and errors; x and y checked before any conversion). Sell and the
// formats convert A on every call, with the default Options; for an iterative algorithm keep a SemiringPlan.
template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                       int threads = 0, Algorithm algorithm = Algorithm::Auto);

// The kernel Auto runs for `a` on `threads` threads (0: the OpenMP default): on one thread RowLoop; on
// more, MergeParallel from 2^16 nonzeros (its contiguous segments were as fast or faster there, up to
// 1.44x on regular rows), and below that when a chunk of 512 rows holds more rows + nonzeros than a
// thread's share (a few huge rows), else RowLoop. Reads A.rows / 512 row pointers (docs/SEMIRINGS.md).
template <class Value, class Index>
Algorithm semiring_cpu_algorithm(const CsrMatrix<Value, Index>& a, int threads = 0);

// The same on host vectors for either backend, one product per call: on the CPU SemiringPlan(a, s, algorithm,
// options) applied once (options.threads and the format knobs read as above), or on CUDA a spmv::cuda::SemiringPlan
// with `algorithm` (spmv/cuda/semiring.hpp: Auto, CsrVector, MergePath, Sell, Ell, EllR, Hyb, Coo or Dia) after
// copying A and x to options.device, y copied back (the same values as the CPU for min-plus, max-times, or-and
// and max-min). Each backend refuses (Unsupported) the algorithms it has no semiring kernel for. For an iterative
// algorithm keep a plan (on CUDA, A on the device: spmv::cuda::DeviceCsr). Backend::Cuda throws Unsupported when
// spmv was built without CUDA.
template <class Value, class Index>
void semiring_multiply(Backend backend, Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x,
                       std::span<Value> y, const Options& options = {}, Algorithm algorithm = Algorithm::Auto);

}  // namespace spmv
