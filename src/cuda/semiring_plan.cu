// SemiringPlan (spmv/cuda/semiring.hpp): y = A ⊕.⊗ x with one of two kernels, chosen once here from
// the row statistics:
//  - the one-launch row kernel of semiring_multiply.cu (Algorithm::CsrVector: a sub-warp per row, its
//    width from csr-vector's rule from 2^20 nonzeros on rows at most half empty, else the plain one:
//    row_kernel_width), faster on small matrices (one launch instead of two) and on regular or
//    irregular rows;
//  - on few huge, power-law and mostly or half empty rows, the merge-based kernel of merge_path.cuh
//    (Algorithm::MergePath), instantiated per semiring: the tile boundaries are searched once here;
//    each product runs the tile kernel (finished rows stored, each tile's open row carried out) and
//    the fix-up, which ⊕-adds the carries into the rows finished by later tiles. The carries are a
//    workspace, so products on different streams are chained by WorkspaceOrder as Plan's are;
//  - only when asked for (Algorithm::Sell), SELL-C-sigma (semiring_sell.cu): the SELL SpMV's layout,
//    converted here, and its walk with the semiring's ops; no workspace. Auto does not take it (it has not
//    been timed on a GPU: docs/SEMIRINGS.md);
//  - only when asked for (Algorithm::Ell, EllR, Hyb, Coo, Dia), the SpMV's formats (semiring_formats.cuh: one
//    file each), converted here by the SpMV's device conversions; COO and HYB's COO part reduce their runs of
//    equal rows into a workspace, so their products on different streams are chained as merge-path's. Auto
//    never takes them (not timed on a GPU). A matrix without entries converts nothing: every row gets the
//    semiring's zero from the row kernel (nothing to walk);
//  - only when asked for (Algorithm::CsrScalar, CsrCoop, CsrAdaptive, LightSpmv), the SpMV's CSR kernels with the
//    semiring's ops behind the same interface (semiring_formats.cuh: one file each, the kernel bodies shared with
//    the SpMV through csr_scalar.cuh, csr_coop.cuh, csr_adaptive.cuh and lightspmv.cuh): A read in place,
//    CSR-Adaptive's row blocks built here; LightSpMV's row counter is a workspace (products on different streams
//    chained). Auto never takes them (not timed on a GPU); a matrix without entries as for the formats;
//  - only when asked for (Algorithm::Pcsr, Hola, SegmentedSum), the SpMV's balanced CSR kernels with the
//    semiring's ops (semiring_pcsr.cu, semiring_hola.cu, semiring_segmented_sum.cu, behind the formats'
//    interface): nothing converted, their tiles or blocks planned here. PCSR's products array and
//    segmented-sum's carries are a workspace (products on different streams chained as merge-path's); Hola
//    has none. Auto never takes them (not timed on a GPU). A matrix without entries: as the formats.
//  - only when asked for (Algorithm::ColumnChunked, EllRVector), the SpMV's column-chunked blocks (each block a
//    SemiringPlan of its own, Auto; the later blocks' results ⊕-added into y through a partial vector, a workspace:
//    products on different streams chained) and ELLR-T (its group-T ELL converted here; no workspace), behind the
//    formats' interface (semiring_column_chunked.cu, semiring_ellr_vector.cu). Not run on a GPU yet; Auto never
//    takes them. A matrix without entries: as the formats.
//  - only when asked for (Algorithm::CompressedCsr), the SpMV's compressed CSR (its device conversion and row walk,
//    compressed_csr.cuh) behind the formats' interface (semiring_compressed_csr.cu): one thread a row, no workspace.
//    Not run on a GPU yet; Auto never takes it. A matrix without entries: as the formats.
#include <algorithm>
#include <optional>
#include <string>

#include "core/auto_rule.hpp"
#include "core/native_values.hpp"
#include "core/semiring_ops.hpp"
#include "core/workspace_order.hpp"
#include "cpu/instantiate.hpp"
#include "cuda/csr_vector_policy.cuh"
#include "cuda/event_driver.cuh"
#include "cuda/merge_path.cuh"
#include "cuda/row_statistics.cuh"
#include "cuda/semiring_formats.cuh"
#include "cuda/semiring_rows.cuh"
#include "cuda/semiring_sell.cuh"
#include "spmv/cuda/semiring.hpp"

namespace spmv::cuda {

namespace {

// Auto: merge-path for the SpMV rule's few-huge-rows, power-law (launch-bound or not), mostly-empty and
// half-empty long-row classes (src/core/auto_rule.cpp), and for more than half of the rows empty with
// more than kSemiringEmptyLongLength a non-empty row; the rows kernel for the others (small, irregular,
// short, long). Fitted (bench/semiring_rule.py) on the even members of bench/auto_families.py's families
// and the SuiteSparse files (H200, 2026-11-26, min-plus, f32 and f64): each class took the kernel faster
// in harmonic mean there. On the odd members (96 cases) Auto ran at 0.975 of the faster kernel (hmean)
// and 1.07x cuSPARSE's plus-times product; the first rule (rows below 2^18 nonzeros or under 12 per
// regular row) had 0.940 and 1.06x. Refitted with the row kernel at csr-vector's widths (H200,
// 2026-11-29): the same kernel per class, on the odd members 0.997 and 1.18x (docs/SEMIRINGS.md).
// The bound on non-empty rows the semiring rule was fitted with: the SpMV rule's kEmptyLongLength moved
// to 40 with segmented-sum (2026-11-29), but the row kernel gives every row, empty ones too, a sub-warp.
constexpr double kSemiringEmptyLongLength = 20.0;

bool row_kernel_fits(const detail::RowShape& shape) {
  if (shape.rows == 0 || shape.nnz == 0) return true;  // nothing to balance
  if (detail::groups_empty_rows(shape.empty_rows, shape.rows) &&
      double(shape.nnz) > kSemiringEmptyLongLength * double(shape.rows - shape.empty_rows))
    return false;
  const detail::RowClass c = detail::classify_rows(shape);
  return c != detail::RowClass::FewHugeRows && c != detail::RowClass::PowerLaw &&
         c != detail::RowClass::LaunchBoundLongRows && c != detail::RowClass::MostlyEmpty &&
         c != detail::RowClass::MostlyEmptyLongRows &&
         c != detail::RowClass::HalfEmptyLongRows;
}

// The row kernel's lanes per row: csr-vector's width rule (csr_vector_policy.cuh) on the mean length of
// the non-empty rows, 16 rounded up to 32 (the kernel is compiled for 2, 4, 8 and 32 lanes). The plain
// rule's widths (plain_rows_width, from the mean over all rows) stay
//  - below detail::kLaunchBoundNnz, where a product lasts a few microseconds and each row's chain of
//    passes is its critical path. H200, 2026-11-29, min-plus and or-and, us per product, plain against
//    csr-vector's: cage10 (13 a row: 32 lanes against 4) 3.9-4.2 / 4.3-4.7, bcsstk16 (59 a row) 3.9 /
//    4.6-4.9, EX5 (45 a row) 3.8-4.9 / 4.6-4.8;
//  - for rows more than half empty: csr-vector walks them 32 rows a warp, this kernel gives each empty
//    row its sub-warp (min-plus, speed against cuSPARSE's plus-times f32 / f64 at csr-vector's 8 lanes
//    for 16 a non-empty row: 85% empty 0.49 / 0.61, 75% 0.65 / 0.72, 65% 0.80 / 0.89; merge-path
//    0.91-0.93).
// From 2^20 nonzeros csr-vector's widths won by 1.1-2.9x on bands, stencils, 2D/3D Poisson and random
// rows of 2 and 16, and ran within 0.97-1.09x at 8 and 24 a row (docs/SEMIRINGS.md).
int row_kernel_width(const RowStatistics& s, std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  if (nnz < detail::kLaunchBoundNnz || detail::groups_empty_rows(s.empty_rows, rows))
    return plain_rows_width(rows, nnz);
  const double nonempty = double(rows - s.empty_rows);  // at least half the rows
  const int w = csr_vector_policy::width_for(double(nnz) / nonempty,
                                            csr_vector_policy::local_columns(s.mean_span, double(cols)));
  return w <= 8 ? w : 32;
}

// The kernels behind SemiringFormat (semiring_formats.cuh): the formats and the SpMV's CSR kernels (the
// balanced ones, PCSR, Hola and segmented-sum, included).
bool is_format(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Ell:
    case Algorithm::EllR:
    case Algorithm::Hyb:
    case Algorithm::Coo:
    case Algorithm::Dia:
    case Algorithm::CsrScalar:
    case Algorithm::CsrCoop:
    case Algorithm::CsrAdaptive:
    case Algorithm::LightSpmv:
    case Algorithm::Pcsr:
    case Algorithm::Hola:
    case Algorithm::SegmentedSum:
    case Algorithm::ColumnChunked:
    case Algorithm::EllRVector:
    case Algorithm::CompressedCsr: return true;
    default: return false;
  }
}

// The format asked for, converted from `a` (rows and entries) for `s`, or the CSR kernel asked for.
template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_format(Algorithm algorithm, const CsrView<Value, Index>& a, Semiring s,
                                            const Options& options, cudaStream_t stream) {
  switch (algorithm) {
    case Algorithm::Ell: return make_semiring_ell(a, s, options, stream);
    case Algorithm::EllR: return make_semiring_ellr(a, s, options, stream);
    case Algorithm::Hyb: return make_semiring_hyb(a, s, options, stream);
    case Algorithm::Coo: return make_semiring_coo(a, s, options, stream);
    case Algorithm::CsrScalar: return make_semiring_csr_scalar(a, s, options, stream);
    case Algorithm::CsrCoop: return make_semiring_csr_coop(a, s, options, stream);
    case Algorithm::CsrAdaptive: return make_semiring_csr_adaptive(a, s, options, stream);
    case Algorithm::LightSpmv: return make_semiring_lightspmv(a, s, options, stream);
    case Algorithm::Pcsr: return make_semiring_pcsr(a, s, options, stream);
    case Algorithm::Hola: return make_semiring_hola(a, s, options, stream);
    case Algorithm::SegmentedSum: return make_semiring_segmented_sum(a, s, options, stream);
    case Algorithm::ColumnChunked: return make_semiring_column_chunked(a, s, options, stream);
    case Algorithm::EllRVector: return make_semiring_ellr_vector(a, s, options, stream);
    case Algorithm::CompressedCsr: return make_semiring_compressed_csr(a, s, options, stream);
    default: return make_semiring_dia(a, s, options, stream);
  }
}

// Options::subwarp as the row kernel reads it: 2, 4, 8 or 32 lanes a row (its compiled widths), 0 for the rule.
int checked_row_width(int requested) {
  if (requested > 0 && requested != 2 && requested != 4 && requested != 8 && requested != 32)
    throw InvalidArgument("spmv::cuda::SemiringPlan: subwarp (lanes per row of csr-vector) must be 2, 4, 8 or 32, "
                          "got " + std::to_string(requested));
  return std::max(requested, 0);
}

}  // namespace

template <class Value, class Index>
struct SemiringPlan<Value, Index>::Impl {
  static constexpr int kThreads = merge_path::policy_for(sizeof(Value)).block_threads;
  static constexpr int kTileItems = kThreads * merge_path::items_per_thread<kThreads, Value>();

  CsrView<Value, Index> a;
  Semiring semiring;
  bool row_kernel = true;  // semiring_rows' kernel; else merge-path
  int width = 4;           // the row kernel's lanes per row
  bool aligned = false;
  merge_path::Tiles<Value, Index> tiles;  // merge-path only
  std::optional<detail::WorkspaceOrder<EventDriver>> order;
  bool sell = false;                        // Algorithm::Sell
  std::optional<SemiringSell<Value, Index>> sell_layout;  // Sell on a matrix with rows
  Algorithm format = Algorithm::Auto;                      // Ell, EllR, Hyb, Coo, Dia or a CSR kernel when asked
  SemiringFormatPtr<Value, Index> format_kernel;           // that format or kernel, on a matrix with entries
};

template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(const CsrView<Value, Index>& a, Semiring s, Algorithm algorithm,
                                         cudaStream_t stream)
    : SemiringPlan(a, s, algorithm, Options{}, stream) {}

template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(const CsrView<Value, Index>& a, Semiring s, Algorithm algorithm,
                                         const Options& options, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  spmv::detail::require_native_values(options, "the semiring product");
  const auto kernels = semiring_algorithms(Backend::Cuda);
  if (std::find(kernels.begin(), kernels.end(), algorithm) == kernels.end())
    throw Unsupported("spmv::cuda::SemiringPlan: algorithm " + std::string(to_string(algorithm)) +
                      " has no semiring kernel; use " + semiring_algorithm_names(Backend::Cuda));
  if (a.rows < 0 || a.cols < 0 || a.nnz < 0) throw InvalidArgument("spmv::cuda::SemiringPlan: negative matrix size");
  if (a.nnz > 0 && (!a.row_ptr || !a.col_idx || !a.values))
    throw InvalidArgument("spmv::cuda::SemiringPlan: null matrix array");
  if (a.rows > 0 && !a.row_ptr) throw InvalidArgument("spmv::cuda::SemiringPlan: null row_ptr");
  Impl& p = *impl_;
  p.a = a;
  p.semiring = s;
  p.aligned = is_aligned(a.values, 16) && is_aligned(a.col_idx, 16);
  if (algorithm == Algorithm::Sell) {
    p.sell = true;
    p.row_kernel = false;
    if (a.rows > 0) p.sell_layout.emplace(a, options, stream);  // no rows: nothing to convert or write
    return;
  }
  if (is_format(algorithm)) {
    p.format = algorithm;
    p.row_kernel = false;
    if (a.rows == 0 || a.nnz == 0) return;  // nothing to convert: apply writes the zeros (or nothing)
    p.format_kernel = make_format(algorithm, a, s, options, stream);
    if (p.format_kernel->writes_workspace()) p.order.emplace(EventDriver());
    return;
  }
  const int requested_width = algorithm == Algorithm::MergePath ? 0 : checked_row_width(options.subwarp);
  RowStatistics stats;
  if (algorithm != Algorithm::MergePath && a.rows > 0 && a.nnz > 0) stats = row_statistics(a, stream);
  p.row_kernel = algorithm == Algorithm::Auto ? row_kernel_fits(row_shape(a, stats))
                                              : algorithm == Algorithm::CsrVector;
  if (p.row_kernel) p.width = requested_width > 0 ? requested_width : row_kernel_width(stats, a.rows, a.cols, a.nnz);
  if (p.row_kernel || a.rows == 0) return;  // no tiles: nothing to plan, or no rows to write
  p.tiles = merge_path::Tiles<Value, Index>(a.row_ptr, a.rows, a.nnz, Impl::kTileItems, stream);
  p.order.emplace(EventDriver());
}

template <class Value, class Index>
SemiringPlan<Value, Index>::~SemiringPlan() = default;
template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(SemiringPlan&&) noexcept = default;
template <class Value, class Index>
SemiringPlan<Value, Index>& SemiringPlan<Value, Index>::operator=(SemiringPlan&&) noexcept = default;

template <class Value, class Index>
void SemiringPlan<Value, Index>::apply(const Value* x, Value* y, cudaStream_t stream) {
  if (!impl_) throw InvalidArgument("spmv::cuda::SemiringPlan::apply on a moved-from plan");
  Impl& p = *impl_;
  if (p.a.rows == 0) return;  // nothing to write
  if ((p.a.cols > 0 && !x) || !y) throw InvalidArgument("spmv::cuda::SemiringPlan::apply: null x or y");
  if (p.row_kernel) return semiring_rows(p.semiring, p.a, x, y, p.width, stream);  // no workspace: no ordering
  if (p.sell) return p.sell_layout->apply(p.semiring, x, y, stream);                 // the same
  if (p.format != Algorithm::Auto) {
    // No entries: every row is empty, the row kernel writes the semiring's zero (one launch, x unread).
    if (!p.format_kernel) return semiring_rows(p.semiring, p.a, x, y, p.width, stream);
    if (!p.order) return p.format_kernel->apply(x, y, stream);  // no workspace: no ordering
    return p.order->run(stream, [&] { p.format_kernel->apply(x, y, stream); });
  }
  p.order->run(stream, [&] {
    semiring_ops::with_semiring<Value>(p.semiring, [&](auto ops) {
      using Ops = decltype(ops);
      p.tiles.template run<Impl::kThreads, Ops>(p.a, p.aligned, merge_path::SemiringRows<Ops, Value>{}, x, y, stream);
    });
  });
}

template <class Value, class Index>
Algorithm SemiringPlan<Value, Index>::algorithm() const {
  if (impl_->format != Algorithm::Auto) return impl_->format;
  return impl_->sell ? Algorithm::Sell : impl_->row_kernel ? Algorithm::CsrVector : Algorithm::MergePath;
}

template <class Value, class Index>
Semiring SemiringPlan<Value, Index>::semiring() const {
  return impl_->semiring;
}

template <class Value, class Index>
std::string SemiringPlan<Value, Index>::policy() const {
  if (impl_->sell) return impl_->sell_layout ? impl_->sell_layout->policy() : "sell (no rows)";
  if (impl_->format_kernel) return impl_->format_kernel->policy();
  if (impl_->format != Algorithm::Auto)
    return std::string(to_string(impl_->format)) + " (no entries: nothing converted, every row the semiring's zero)";
  if (impl_->row_kernel) return "one launch, subwarp=" + std::to_string(impl_->width) + " (lanes per row)";
  return "merge-path block=" + std::to_string(Impl::kThreads) +
         " items_per_thread=" + std::to_string(Impl::kTileItems / Impl::kThreads) +
         " tiles=" + std::to_string(impl_->tiles.count()) + " vector_loads=" + (impl_->aligned ? "on" : "off");
}

template <class Value, class Index>
std::size_t SemiringPlan<Value, Index>::extra_bytes() const {
  return impl_->tiles.bytes() + (impl_->sell_layout ? impl_->sell_layout->bytes() : 0) +
         (impl_->format_kernel ? impl_->format_kernel->bytes() : 0);
}

#define SPMV_INSTANTIATE(V, I) template class SemiringPlan<V, I>;
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)  // the same (value, index) pairs as the CPU backend
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda
