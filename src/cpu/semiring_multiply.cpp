// The CPU product over a semiring (spmv/semiring.hpp): Auto's rule between the row loop (semiring_rows.cpp) and
// the nnz-balanced merge-path kernel (semiring_merge.cpp), from the row statistics below, and the one-shot
// semiring_multiply, a SemiringPlan (semiring_plan.cpp: the conversions for SELL-C-sigma, ELL, ELL-R, HYB, COO and
// DIA, and the dispatch) made and applied once. Auto never takes the formats (docs/SEMIRINGS.md has their times
// and the padding rule).
#include <algorithm>
#include <cstdint>

#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"

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
  return choose(a, cpu::detail::semiring_team(threads));
}

// One product: a plan made and applied once (semiring_plan.cpp holds the conversions and the dispatch). The lengths
// are checked first, so that a wrong y is refused before a conversion is paid for.
template <class Value, class Index>
void semiring_multiply(Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x, std::span<Value> y,
                       int threads, Algorithm algorithm) {
  semiring_ops::check_lengths(s, a.rows, a.cols, x.size(), y.size());
  Options options;
  options.threads = threads;
  SemiringPlan<Value, Index>(a, s, algorithm, options).apply(x, y);
}

#define SPMV_INSTANTIATE(V, I)                                                                                \
  template void semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int,  \
                                  Algorithm);                                                               \
  template Algorithm semiring_cpu_algorithm(const CsrMatrix<V, I>&, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
