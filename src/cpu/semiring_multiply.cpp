// The CPU product over a semiring (spmv/semiring.hpp): checks the arguments, then runs the row loop
// (semiring_rows.cpp) or the nnz-balanced merge-path kernel (semiring_merge.cpp), the one asked for or
// the one the row statistics below choose, or, when asked for, SELL-C-sigma (semiring_sell.cpp) or ELL, ELL-R,
// HYB, COO or DIA (semiring_ell.cpp, semiring_hyb.cpp, semiring_coo.cpp, semiring_dia.cpp) on a conversion made
// by this call (Auto never takes them: docs/SEMIRINGS.md has SELL's times and the formats' padding rule).
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>

#include "core/debug_log.hpp"
#include "core/semiring_ops.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"
#include "spmv/error.hpp"

namespace spmv {
namespace {

// Auto's rule, on more than one thread (one thread has nothing to balance: the row loop; the kernels ran
// within noise of each other there). Fitted with bench/semiring_cpu_rule.py on half of a sweep of
// spmv_bench_semiring_cpu_kernels (2-core Zen 4 VM, 2026-11-29, three interleaved processes, min-plus,
// or-and and plus-times, each kernel's fastest sample; docs/SEMIRINGS.md "The CPU kernels on power-law
// rows" has the table and the held-out half).
//
// From this many nonzeros, merge-path. On two threads its sixteen contiguous segments a thread ran
// 1.00-1.44x as fast as the row loop's 512-row chunks on 2D/3D Poisson, random rows and road graphs (a row
// loop with 4096-row chunks ran as fast as merge-path there: the gap is the 512-row chunks' dispatch and,
// likely, restarted prefetch), and 0.93-1.12x on R-MAT scale 16-20. Below the bound the row loop was up to 1.33x
// faster (mostly_empty, 32,832 nonzeros; PGPgiantcompo, 48,632), from cs4 (87,716) on merge-path was as
// fast or within 3%; 2^16 is the geometric middle of that gap, rounded.
constexpr std::int64_t kMergeFromNnz = std::int64_t(1) << 16;
// Below it, merge-path when the heaviest chunk of kSemiringRowChunk rows holds more rows + nonzeros than a
// thread's share of the matrix: the row loop cannot finish before the thread walking that chunk, whatever
// the schedule does with the rest. The fit's matrices under the size bound did not pin this bound (any
// value above 0.19 fitted them); 1 is the bound the argument gives. Above the size bound, one row of
// 100,000 among 999 rows of 3 (share 1.96) ran 1.8-1.9x faster on merge-path.
constexpr double kMergeFromChunkShare = 1.0;

int resolve_threads(int threads) { return threads > 0 ? threads : std::max(1, omp_get_max_threads()); }

template <class Value, class Index>
Algorithm choose(const CsrMatrix<Value, Index>& a, int team) {
  const std::int64_t rows = a.rows;
  if (team == 1 || rows == 0) return Algorithm::RowLoop;
  if (a.nnz() >= kMergeFromNnz) return Algorithm::MergeParallel;
  const Index* row_ptr = a.row_ptr.data();
  std::int64_t heaviest = 0;  // rows / kSemiringRowChunk reads of row_ptr
  for (std::int64_t begin = 0; begin < rows; begin += cpu::detail::kSemiringRowChunk) {
    const std::int64_t end = std::min(begin + cpu::detail::kSemiringRowChunk, rows);
    heaviest = std::max<std::int64_t>(heaviest, static_cast<std::int64_t>(row_ptr[end] - row_ptr[begin]) + (end - begin));
  }
  const double per_thread = static_cast<double>(rows + a.nnz()) / team;
  return static_cast<double>(heaviest) > kMergeFromChunkShare * per_thread ? Algorithm::MergeParallel
                                                                           : Algorithm::RowLoop;
}

}  // namespace

template <class Value, class Index>
Algorithm semiring_cpu_algorithm(const CsrMatrix<Value, Index>& a, int threads) {
  return choose(a, resolve_threads(threads));
}

template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                       int threads, Algorithm algorithm) {
  semiring_ops::check_lengths(s, a.rows, a.cols, x.size(), y.size());
  const int team = resolve_threads(threads);
  if (algorithm == Algorithm::Auto) {
    algorithm = choose(a, team);
    if (spmv::detail::debug_log_enabled())
      std::fprintf(stderr, "[spmv] semiring_multiply %s: Auto chose %s (%d threads, %lld nonzeros)\n",
                   std::string(to_string(s)).c_str(), std::string(to_string(algorithm)).c_str(), team,
                   static_cast<long long>(a.nnz()));
  }
  switch (algorithm) {
    case Algorithm::RowLoop: return cpu::detail::semiring_rows(s, a, x.data(), y.data(), team);
    case Algorithm::MergeParallel: return cpu::detail::semiring_merge(s, a, x.data(), y.data(), team);
    case Algorithm::Sell: {
      // Converted on every call (the one-shot function keeps nothing): C the SIMD width as the SELL SpMV's,
      // sigma the default window; refused (Unsupported) by the SpMV's padding rule, before the slots exist.
      Options sell;
      sell.sell_c = spmv::detail::cpu_sell_c<Value, Index>(Options{});
      const SellMatrix<Value, Index> m = to_sell(a, sell);
      return cpu::detail::semiring_sell(s, m, x.data(), y.data(), team);
    }
    // The other formats, converted on every call with the SpMV's default Options (max_padding 3, HYB's width by
    // the Bell & Garland rule): the conversions' refusals (Unsupported, e.g. ELL's padding) pass through.
    case Algorithm::Ell: {
      const EllMatrix<Value, Index> m = to_ell(a);
      return cpu::detail::semiring_ell(s, m, static_cast<const Index*>(nullptr), x.data(), y.data(), team);
    }
    case Algorithm::EllR: {
      const EllRMatrix<Value, Index> m = to_ellr(a);
      return cpu::detail::semiring_ell(s, m.ell, m.row_length.data(), x.data(), y.data(), team);
    }
    case Algorithm::Hyb: return cpu::detail::semiring_hyb(s, to_hyb(a), x.data(), y.data(), team);
    case Algorithm::Coo: {
      validate(a);  // to_coo copies without checking; the other conversions validate
      return cpu::detail::semiring_coo(s, to_coo(a), x.data(), y.data(), team);
    }
    case Algorithm::Dia: {
      const DiaMatrix<Value, Index> m = to_dia(a);
      // DIA holds one value a (row, diagonal): to_dia sums duplicate entries. For plus-times that is the product's
      // own distributivity (within rounding: what the SpMV's DIA does); for the others a_1 ⊗ x ⊕ a_2 ⊗ x is not
      // (a_1 + a_2) ⊗ x (min-plus: min(a_1, a_2) + x), so a matrix with duplicates is refused rather than answered
      // wrongly. Fewer stored slots than nonzeros means the conversion merged some.
      if (s != Semiring::PlusTimes) {
        std::int64_t stored = 0;
        for (const std::uint32_t word : m.stored) stored += std::popcount(word);
        if (stored != static_cast<std::int64_t>(a.nnz()))
          throw Unsupported("semiring_multiply: DIA holds one value a row and diagonal and sums duplicate entries, "
                            "which changes a " + std::string(to_string(s)) + " product (" +
                            std::to_string(static_cast<std::int64_t>(a.nnz()) - stored) +
                            " duplicates); merge them first or use row-loop");
      }
      return cpu::detail::semiring_dia(s, m, x.data(), y.data(), team);
    }
    default:
      throw Unsupported("semiring_multiply: algorithm " + std::string(to_string(algorithm)) +
                        " on the CPU (Auto, RowLoop, MergeParallel, Sell, Ell, EllR, Hyb, Coo or Dia)");
  }
}

#define SPMV_INSTANTIATE(V, I)                                                                                \
  template void semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int,  \
                                  Algorithm);                                                               \
  template Algorithm semiring_cpu_algorithm(const CsrMatrix<V, I>&, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
