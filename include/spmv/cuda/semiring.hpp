#pragma once
// The semiring products of spmv/semiring.hpp on device arrays: y = A ⊕.⊗ x for a CSR view, enqueued on
// `stream` (nothing allocated, no synchronisation; safe from any number of streams and threads, it has
// no workspace), and SemiringPlan for a matrix applied many times. The same add, multiply and zero as the
// CPU kernel (src/core/semiring_ops.hpp), so min, max and or-and give the CPU's bits; plus-times rounds
// in its own order (use a Plan for fast A x).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "spmv/cuda/plan.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cuda {

// x holds a.cols entries and y a.rows on the current device; y is only written. One launch, no
// allocation; a sub-warp per row, fast on small matrices and short rows (docs/SEMIRINGS.md).
template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y,
                       cudaStream_t stream = nullptr);

// The same product planned once for a matrix applied many times (BFS, shortest paths, PageRank). The construction
// reads the row statistics on `stream` and synchronises it (unless merge-path is asked for). Algorithm::Auto picks
// from them between Algorithm::CsrVector, the one-launch kernel of semiring_multiply at csr-vector's lanes per row
// (most matrices), and Algorithm::MergePath, the merge-based kernel generic over the semiring (equal work per block
// for any row lengths: a few huge rows, power-law and mostly-empty rows; tile boundaries found here, a small
// workspace, extra_bytes). Algorithm::Sell, only when asked for, converts A to SELL-C-sigma here (the SELL SpMV's
// layout and padding rule with `options`: Unsupported where that refuses; extra_bytes) and walks its slices with the
// semiring's ops, padding never entering a row; no workspace. Algorithm::Ell, EllR, Hyb, Coo and Dia, only when asked
// for, convert A here with the SpMV's device conversion of that format and `options` (Unsupported, with the
// conversion's message, where it refuses: padding beyond Options::max_padding; extra_bytes holds the converted copy,
// policy() names the format) and fold only the stored entries: ELL's padding (column -1) and DIA's slots outside the
// matrix or without a stored entry (a stored-slot mask) never enter a row. COO, and HYB's COO part, reduce each run
// of equal rows with the semiring's add (cub::DeviceReduce::ReduceByKey into a workspace: no atomics, but
// plus-times's last bits may vary from product to product, CUB's look-back order; the other semirings are exact); HYB
// ⊕-adds its COO part into the rows its ELL part wrote. Dia refuses, for the semirings other than plus-times, a
// matrix with duplicate entries (the conversion sums them). Algorithm::CsrScalar, CsrCoop, CsrAdaptive and LightSpmv,
// only when asked for, run the SpMV's CSR kernels of those names with the semiring's ops, on A in place and with the
// SpMV's launch rules and the Options it reads: csr-scalar (a thread a row), csr-coop (a group of lanes a row, its
// partials combined with ⊕), CSR-Adaptive (its row blocks built here, extra_bytes; a row split over CUDA blocks gets
// the semiring's zero first, then each chunk ⊕-added atomically) and LightSpMV (rows handed out by an atomic row
// counter: a workspace). Algorithm::Pcsr, Hola and SegmentedSum, only when asked for, run the SpMV's balanced CSR
// kernels likewise (their tiles or blocks planned here, extra_bytes): PCSR folds each row in one block
// (deterministic); Hola and segmented-sum ⊕-add the partial folds of rows that cross blocks or tiles with atomics (a
// compare-and-swap loop for min, max and or: exact; atomicAdd for plus-times: not bit-reproducible).
// Algorithm::ColumnChunked and EllRVector, only when asked for, run the SpMV's column-chunked
// CSR (its blocks of options.column_span columns, 0 for the L2 cost model, converted here, extra_bytes; each block a
// SemiringPlan of its own with Auto; block 0 writes y, each later block a partial vector ⊕-added into y in chunk
// order: no atomics) and ELLR-T (the SpMV's group-T ELL with row lengths, converted here with its padding rule, T
// threads a row combined with ⊕; deterministic). Algorithm::CompressedCsr, only when asked for,
// converts A here with the SpMV's device conversion (options.block_size, max_padding; Unsupported, with its message,
// for a row above 65535 entries, a slice spanning 2^32 columns or the padding rule; extra_bytes) and runs its row
// walk with the semiring's ops (a thread a row up to its length; deterministic, no workspace). A matrix without
// entries converts nothing (y = the semiring's zero).
// Other algorithms are refused. A's arrays must outlive the plan (COO and the CSR kernels read them in place).
// Merge-path, COO, HYB (when its COO part holds entries), LightSpMV, PCSR (its products array), segmented-sum (its
// carries) and column-chunked (its partial vector, with two blocks or more) products on different streams are ordered
// one after another, as for Plan (their workspace); the others run at once. y is only written, x and y as for
// semiring_multiply. Options read: subwarp (csr-vector's lanes a row: 2, 4, 8 or 32; 0 for the rule; also SELL's
// threads a row: 1 or 2; LightSpMV's vector: 2 to 32; ELLR-T's threads a row: a power of two in [1, 32]), sell_c,
// sell_sigma, max_padding, hyb_ell_width, column_span (column-chunked, whose blocks' Auto plans read the rest) and
// values (half precision is refused: Unsupported); block_size only by the CSR kernels, ELLR-T and compressed CSR
// (csr-scalar, csr-coop, LightSpMV, Hola, segmented-sum, ELLR-T and compressed CSR: a multiple of 32 up to 1024 for
// all but csr-scalar; CSR-Adaptive and PCSR: a power of two in [32, 1024]), coop and repeat by csr-coop,
// hola_sort_columns by Hola, as the SpMV reads them; the others are not (the other kernels' block sizes are their
// compiled ones). The overload without Options takes the defaults.
template <class Value, class Index>
class SemiringPlan {
 public:
  SemiringPlan(const CsrView<Value, Index>& a, Semiring s, Algorithm algorithm = Algorithm::Auto,
               cudaStream_t stream = nullptr);
  SemiringPlan(const CsrView<Value, Index>& a, Semiring s, Algorithm algorithm, const Options& options,
               cudaStream_t stream = nullptr);
  ~SemiringPlan();
  SemiringPlan(SemiringPlan&&) noexcept;
  SemiringPlan& operator=(SemiringPlan&&) noexcept;

  void apply(const Value* x, Value* y, cudaStream_t stream = nullptr);

  // CsrVector, MergePath, Sell, Ell, EllR, Hyb, Coo, Dia, CsrScalar, CsrCoop, CsrAdaptive, LightSpmv, Pcsr, Hola,
  // SegmentedSum, ColumnChunked, EllRVector or CompressedCsr
  Algorithm algorithm() const;
  Semiring semiring() const;
  std::string policy() const;
  std::size_t extra_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
