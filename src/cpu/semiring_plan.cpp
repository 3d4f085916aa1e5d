// SemiringPlan (spmv/semiring.hpp), the CPU semiring product planned once: the constructor resolves Auto (the
// rule of semiring_multiply.cpp), converts A for the format kernels with the caller's Options, makes merge-path's
// split, and refuses what cannot run; apply() checks x and y and runs one kernel (semiring_rows.cpp,
// semiring_merge.cpp, semiring_sell.cpp, semiring_ell.cpp, semiring_hyb.cpp, semiring_coo.cpp, semiring_dia.cpp,
// semiring_compressed_csr.cpp).
// The one-shot semiring_multiply is this plan made and applied once, so each format has one conversion and one
// dispatch. apply() is const and the plan holds no scratch: the kernels allocate a call's accumulators and carries
// themselves, so one plan may be applied from several threads at once (as the CUDA plan's row kernel may on
// several streams).
#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>

#include "core/debug_log.hpp"
#include "core/native_values.hpp"
#include "core/semiring_ops.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"

namespace spmv {
namespace {

// Fewer stored slots than nonzeros means to_dia merged some duplicates (semiring_ops::refuse_dia_duplicates).
template <class Value, class Index>
std::int64_t merged_duplicates(const CsrMatrix<Value, Index>& a, const DiaMatrix<Value, Index>& m) {
  std::int64_t stored = 0;
  for (const std::uint32_t word : m.stored) stored += std::popcount(word);
  return static_cast<std::int64_t>(a.nnz()) - stored;
}

std::string slots_text(std::int64_t slots, std::int64_t nnz) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "slots=%lld (%.2f per nonzero)", static_cast<long long>(slots),
                nnz ? static_cast<double>(slots) / static_cast<double>(nnz) : 0.0);
  return buf;
}

}  // namespace

template <class Value, class Index>
struct SemiringPlan<Value, Index>::Impl {
  Semiring semiring = Semiring::PlusTimes;
  Algorithm algorithm = Algorithm::RowLoop;
  int team = 1;                                   // OpenMP threads of every product
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const CsrMatrix<Value, Index>* a = nullptr;     // RowLoop and MergeParallel: the caller's A
  cpu::detail::SemiringMergeSplit<Index> split;   // MergeParallel
  // The converted copy of the format algorithms (one alternative a format; ELL-R keeps its row lengths).
  std::variant<std::monostate, SellMatrix<Value, Index>, EllMatrix<Value, Index>, EllRMatrix<Value, Index>,
               HybMatrix<Value, Index>, CooMatrix<Value, Index>, DiaMatrix<Value, Index>,
               CompressedCsrMatrix<Value, Index>, cpu::ColumnChunkedPlan<Value, Index>>
      held;
};

template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(const CsrMatrix<Value, Index>& a, Semiring s, Algorithm algorithm,
                                         const Options& options)
    : impl_(std::make_unique<Impl>()) {
  spmv::detail::require_native_values(options, "the semiring product");
  Impl& p = *impl_;
  p.semiring = s;
  p.team = cpu::detail::semiring_team(options.threads);
  p.rows = a.rows;
  p.cols = a.cols;
  p.nnz = static_cast<std::int64_t>(a.nnz());
  if (algorithm == Algorithm::Auto) {
    algorithm = semiring_cpu_algorithm(a, p.team);
    if (spmv::detail::debug_log_enabled())
      std::fprintf(stderr, "[spmv] semiring plan %s: Auto chose %s (%d threads, %lld nonzeros)\n",
                   std::string(to_string(s)).c_str(), std::string(to_string(algorithm)).c_str(), p.team,
                   static_cast<long long>(p.nnz));
  }
  p.algorithm = algorithm;
  // The conversions' refusals (Unsupported, e.g. ELL's padding over options.max_padding) pass through.
  switch (algorithm) {
    case Algorithm::RowLoop: p.a = &a; break;
    case Algorithm::MergeParallel:
      p.a = &a;
      p.split = cpu::detail::semiring_merge_split(a, p.team);
      break;
    case Algorithm::Sell: {
      Options sell = options;
      sell.sell_c = spmv::detail::cpu_sell_c<Value, Index>(options);  // C = the SIMD width unless set, as the SpMV's
      p.held = to_sell(a, sell);
      break;
    }
    case Algorithm::ColumnChunked:  // its copy of A (columns sorted), spans of options.column_span columns
      p.held = cpu::ColumnChunkedPlan<Value, Index>(a, Operation::NonTranspose, options.column_span, p.team);
      break;
    case Algorithm::Ell: p.held = to_ell(a, options); break;
    case Algorithm::EllR: p.held = to_ellr(a, options); break;
    case Algorithm::Hyb: p.held = to_hyb(a, options); break;
    case Algorithm::Coo:
      validate(a);  // to_coo copies without checking; the other conversions validate
      p.held = to_coo(a);
      break;
    case Algorithm::Dia: {
      DiaMatrix<Value, Index> m = to_dia(a, options);
      semiring_ops::refuse_dia_duplicates(s, merged_duplicates(a, m), "semiring_multiply", "row-loop");
      p.held = std::move(m);
      break;
    }
    // Refused with the conversion's messages: a row above 65535 entries, a slice spanning 2^32 columns, the padding.
    case Algorithm::CompressedCsr: p.held = to_compressed_csr(a, options); break;
    default:
      throw Unsupported("semiring_multiply: algorithm " + std::string(to_string(algorithm)) +
                        " has no semiring kernel on the CPU; use " + semiring_algorithm_names(Backend::Cpu));
  }
}

template <class Value, class Index>
SemiringPlan<Value, Index>::~SemiringPlan() = default;
template <class Value, class Index>
SemiringPlan<Value, Index>::SemiringPlan(SemiringPlan&&) noexcept = default;
template <class Value, class Index>
SemiringPlan<Value, Index>& SemiringPlan<Value, Index>::operator=(SemiringPlan&&) noexcept = default;

template <class Value, class Index>
void SemiringPlan<Value, Index>::apply(std::span<const Value> x, std::span<Value> y) const {
  if (!impl_) throw InvalidArgument("spmv::SemiringPlan::apply on a moved-from plan");
  const Impl& p = *impl_;
  semiring_ops::check_lengths(p.semiring, p.rows, p.cols, x.size(), y.size());
  const Semiring s = p.semiring;
  const Value* xp = x.data();
  Value* yp = y.data();
  switch (p.algorithm) {
    case Algorithm::RowLoop: return cpu::detail::semiring_rows(s, *p.a, xp, yp, p.team);
    case Algorithm::MergeParallel: return cpu::detail::semiring_merge(s, *p.a, p.split, xp, yp, p.team);
    case Algorithm::Sell: return cpu::detail::semiring_sell(s, std::get<SellMatrix<Value, Index>>(p.held), xp, yp, p.team);
    case Algorithm::ColumnChunked:
      return std::get<cpu::ColumnChunkedPlan<Value, Index>>(p.held).apply(s, x, y);
    case Algorithm::Ell:
      return cpu::detail::semiring_ell(s, std::get<EllMatrix<Value, Index>>(p.held), static_cast<const Index*>(nullptr),
                                       xp, yp, p.team);
    case Algorithm::EllR: {
      const auto& m = std::get<EllRMatrix<Value, Index>>(p.held);
      return cpu::detail::semiring_ell(s, m.ell, m.row_length.data(), xp, yp, p.team);
    }
    case Algorithm::Hyb: return cpu::detail::semiring_hyb(s, std::get<HybMatrix<Value, Index>>(p.held), xp, yp, p.team);
    case Algorithm::Coo: return cpu::detail::semiring_coo(s, std::get<CooMatrix<Value, Index>>(p.held), xp, yp, p.team);
    case Algorithm::Dia: return cpu::detail::semiring_dia(s, std::get<DiaMatrix<Value, Index>>(p.held), xp, yp, p.team);
    case Algorithm::CompressedCsr:
      return cpu::detail::semiring_compressed_csr(s, std::get<CompressedCsrMatrix<Value, Index>>(p.held), xp, yp,
                                                  p.team);
    default: throw Unsupported("spmv::SemiringPlan::apply: no kernel");  // the constructor refused it already
  }
}

template <class Value, class Index>
Algorithm SemiringPlan<Value, Index>::algorithm() const {
  return impl_->algorithm;
}

template <class Value, class Index>
Semiring SemiringPlan<Value, Index>::semiring() const {
  return impl_->semiring;
}

template <class Value, class Index>
std::string SemiringPlan<Value, Index>::policy() const {
  const Impl& p = *impl_;
  std::string kernel = std::string(to_string(p.algorithm)) + " threads=" + std::to_string(p.team);
  const std::int64_t nnz = p.nnz;
  switch (p.algorithm) {
    case Algorithm::RowLoop:
      return kernel + " chunk=" + std::to_string(cpu::detail::kSemiringRowChunk) + " rows";
    case Algorithm::MergeParallel: return kernel + " segments=" + std::to_string(p.split.segments());
    case Algorithm::Sell: {
      const auto& m = std::get<SellMatrix<Value, Index>>(p.held);
      return kernel + " C=" + std::to_string(m.c) + " sigma=" + std::to_string(m.sigma) +
             " slices=" + std::to_string(m.num_slices()) + " " + slots_text(m.slice_ptr.back(), nnz);
    }
    case Algorithm::Ell: {
      const auto& m = std::get<EllMatrix<Value, Index>>(p.held);
      return kernel + " width=" + std::to_string(m.width) + " " + slots_text(m.slots(), nnz);
    }
    case Algorithm::EllR: {
      const auto& m = std::get<EllRMatrix<Value, Index>>(p.held);
      return kernel + " width=" + std::to_string(m.ell.width) + " " + slots_text(m.ell.slots(), nnz);
    }
    case Algorithm::Hyb: {
      const auto& m = std::get<HybMatrix<Value, Index>>(p.held);
      return kernel + " ell_width=" + std::to_string(m.ell.width) + " coo_nnz=" + std::to_string(m.coo.values.size());
    }
    case Algorithm::Coo: return kernel + " nnz=" + std::to_string(nnz);
    case Algorithm::ColumnChunked:
      return "column-chunked " + std::get<cpu::ColumnChunkedPlan<Value, Index>>(p.held).policy();
    case Algorithm::Dia: {
      const auto& m = std::get<DiaMatrix<Value, Index>>(p.held);
      return kernel + " diagonals=" + std::to_string(m.offsets.size()) + " " + slots_text(m.slots(), nnz);
    }
    case Algorithm::CompressedCsr:
      return kernel + " " + compressed_csr_summary(std::get<CompressedCsrMatrix<Value, Index>>(p.held));
    default: return kernel;
  }
}

template <class Value, class Index>
std::size_t SemiringPlan<Value, Index>::extra_bytes() const {
  const Impl& p = *impl_;
  const std::size_t split = (p.split.start_row.size() + p.split.start_nz.size()) * sizeof(Index);
  return split + std::visit(
                     [](const auto& m) -> std::size_t {
                       using Held = std::decay_t<decltype(m)>;
                       if constexpr (std::is_same_v<Held, std::monostate>) return 0;
                       else if constexpr (std::is_same_v<Held, cpu::ColumnChunkedPlan<Value, Index>>)
                         return m.matrix_bytes() + m.extra_bytes();  // its copy of A, cursors and row sums
                       else return storage_bytes(m);
                     },
                     p.held);
}

#define SPMV_INSTANTIATE(V, I) template class SemiringPlan<V, I>;
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
