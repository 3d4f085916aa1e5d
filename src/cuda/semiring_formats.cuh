#pragma once
// Private: ELL, ELL-R, HYB, COO and DIA of the semiring product (SemiringPlan with Algorithm::Ell, EllR, Hyb, Coo or
// Dia), one file each (semiring_ell.cu for ELL and ELL-R, semiring_hyb.cu, semiring_coo.cu, semiring_dia.cu). Each
// converts A once with the SpMV's device conversion of its format and the plan's Options (format_ell.cuh,
// format_hyb.cuh, format_coo.cuh, format_dia.cuh: max_padding, hyb_ell_width), so it refuses (Unsupported, the
// conversion's message) exactly where the SpMV's format does with those Options, and walks it with the semiring's
// add, multiply and zero (core/semiring_ops.hpp).
// The SpMV's CSR kernels csr-scalar, csr-coop, CSR-Adaptive and LightSpMV (Algorithm::CsrScalar, CsrCoop,
// CsrAdaptive, LightSpmv) sit behind the same interface, one file each (semiring_csr_scalar.cu,
// semiring_csr_coop.cu, semiring_csr_adaptive.cu, semiring_lightspmv.cu): they run the SpMV's kernel body
// (csr_scalar.cuh, csr_coop.cuh, csr_adaptive.cuh, lightspmv.cuh) with the semiring's ops on A in place, with the
// SpMV's launch rule and the Options it reads (block_size; coop and repeat; subwarp). So do the balanced CSR
// kernels PCSR, Hola and segmented-sum (Algorithm::Pcsr, Hola, SegmentedSum; semiring_pcsr.cu, semiring_hola.cu,
// semiring_segmented_sum.cu over pcsr.cuh, hola_spmv.cuh, segmented_sum.cuh), and compressed CSR
// (Algorithm::CompressedCsr; semiring_compressed_csr.cu over compressed_csr.cuh: the SpMV's device conversion and row
// walk).
// The objects stay behind this interface, so semiring_plan.cu does not compile the conversions' CUB calls.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cuda {

template <class Value, class Index>
class SemiringFormat {
 public:
  virtual ~SemiringFormat() = default;
  // y = A ⊕.⊗ x with the semiring the object was made for: no allocation, no synchronisation.
  virtual void apply(const Value* x, Value* y, cudaStream_t stream) = 0;
  virtual std::string policy() const = 0;
  virtual std::size_t bytes() const = 0;  // the converted copy and any workspace
  // True when a product writes memory the object owns (COO's per-row results and CUB's scratch): the plan then
  // orders its products over streams (core/workspace_order.hpp).
  virtual bool writes_workspace() const = 0;
};

template <class Value, class Index>
using SemiringFormatPtr = std::unique_ptr<SemiringFormat<Value, Index>>;

namespace semiring_format {

// The format object for the semiring `s`: Format<Ops, Value, Index>(args...) with Ops its add, multiply and zero,
// fixed for the plan's life (one semiring a plan), so a product dispatches nothing.
template <template <class, class, class> class Format, class Value, class Index, class... Args>
SemiringFormatPtr<Value, Index> make_for(Semiring s, Args&&... args) {
  return semiring_ops::with_semiring<Value>(s, [&](auto ops) -> SemiringFormatPtr<Value, Index> {
    return std::make_unique<Format<decltype(ops), Value, Index>>(args...);
  });
}

}  // namespace semiring_format

// Each factory takes a matrix with rows and entries (the plan handles the others), converts it on `stream` and
// synchronises it.
// ELL: every slot walked, padding skipped by its column.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_ell(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);
// ELL-R: each row stops at its length.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_ellr(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);
// HYB: the ELL part, then the COO overflow ⊕-folded into its rows.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_hyb(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);
// COO: a segmented reduction over the runs of equal rows (no atomics; plus-times not bitwise reproducible; a
// workspace).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_coo(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);
// DIA with its stored-slot mask; refuses duplicate entries for the semirings other than plus-times.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_dia(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);

// The CSR kernels: no conversion; A's arrays are read by every product (they must outlive the object).
// CSR-scalar: one thread a row (no workspace).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_csr_scalar(const CsrView<Value, Index>& a, Semiring s,
                                                         const Options& options, cudaStream_t stream);
// Cooperative CSR: `coop` lanes a row, `repeat` rows a group (no workspace).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_csr_coop(const CsrView<Value, Index>& a, Semiring s,
                                                       const Options& options, cudaStream_t stream);
// CSR-Adaptive: its row blocks built here (synchronises `stream`); long rows split over CUDA blocks, their chunks
// ⊕-added atomically into y (no workspace: the row blocks are only read).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_csr_adaptive(const CsrView<Value, Index>& a, Semiring s,
                                                           const Options& options, cudaStream_t stream);
// LightSpMV: rows handed out by an atomic row counter (a workspace).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_lightspmv(const CsrView<Value, Index>& a, Semiring s,
                                                        const Options& options, cudaStream_t stream);

// The balanced CSR kernels of the SpMV over a semiring (SemiringPlan with Algorithm::Pcsr, Hola or SegmentedSum), one
// file each (semiring_pcsr.cu, semiring_hola.cu, semiring_segmented_sum.cu), running the SpMV's kernels (pcsr.cuh,
// hola_spmv.cuh, segmented_sum.cuh) with the semiring's ops. Nothing is converted: PCSR and segmented-sum plan their
// tiles on `stream` (synchronised), Hola its blocks on the host, and each reads A in place on every product (A must
// outlive the plan). Options read: block_size (each kernel's own rule, as the SpMV), and hola_sort_columns for Hola.
// PCSR: the products array, then each tile's rows folded in shared memory; deterministic, a workspace.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_pcsr(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);
// Hola-SpMV (op = NonTranspose): rows shared between blocks ⊕-added into y with atomics (a compare-and-swap loop for
// min, max and or); no workspace.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_hola(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream);
// Segmented sum: warp tiles of the nonzeros with row-end bits; each tile's carry ⊕-added by a second kernel; a
// workspace (the carries).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_segmented_sum(const CsrView<Value, Index>& a, Semiring s,
                                                            const Options& options, cudaStream_t stream);

// Column-chunked CSR and ELLR-T of the SpMV over a semiring (SemiringPlan with Algorithm::ColumnChunked or
// EllRVector; semiring_column_chunked.cu, semiring_ellr_vector.cu). Column-chunked: the SpMV's blocks
// (column_chunked.cuh, Options.column_span), each block a SemiringPlan of its own (Auto); block 0 writes y, each later
// one a partial vector ⊕-added into y by a second launch (no atomics; a workspace with two blocks or more).
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_column_chunked(const CsrView<Value, Index>& a, Semiring s,
                                                             const Options& options, cudaStream_t stream);
// ELLR-T: the SpMV's group-T ELL with row lengths (ellr_vector.cuh; Options.block_size, subwarp, max_padding), T
// threads a row combined with ⊕ by shuffles; deterministic, no workspace.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_ellr_vector(const CsrView<Value, Index>& a, Semiring s,
                                                          const Options& options, cudaStream_t stream);

// Compressed CSR (SemiringPlan with Algorithm::CompressedCsr; semiring_compressed_csr.cu): the SpMV's layout,
// conversion and row walk (compressed_csr.cuh; Options.block_size, max_padding) with the semiring's ops, one thread
// a row up to its length; refused with the SpMV's messages (rows above 65535 entries, slices spanning 2^32 columns,
// the padding rule); deterministic, no workspace.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_compressed_csr(const CsrView<Value, Index>& a, Semiring s,
                                                             const Options& options, cudaStream_t stream);

// Each factory's file instantiates it for SemiringPlan's (value, index) pairs (cpu/instantiate.hpp's).
#define SPMV_INSTANTIATE_SEMIRING_FORMAT(name)                                                                \
  template SemiringFormatPtr<float, std::int32_t> name(const CsrView<float, std::int32_t>&, Semiring,        \
                                                       const Options&, cudaStream_t);                         \
  template SemiringFormatPtr<float, std::int64_t> name(const CsrView<float, std::int64_t>&, Semiring,        \
                                                       const Options&, cudaStream_t);                         \
  template SemiringFormatPtr<double, std::int32_t> name(const CsrView<double, std::int32_t>&, Semiring,      \
                                                        const Options&, cudaStream_t);                        \
  template SemiringFormatPtr<double, std::int64_t> name(const CsrView<double, std::int64_t>&, Semiring,      \
                                                        const Options&, cudaStream_t);

}  // namespace spmv::cuda
