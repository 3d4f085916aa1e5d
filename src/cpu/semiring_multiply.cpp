// The CPU product over a semiring (spmv/semiring.hpp): checks the arguments, then runs the row loop
// (semiring_rows.cpp) or the nnz-balanced merge-path kernel (semiring_merge.cpp), the one asked for or
// the one the row statistics below choose.
#include <omp.h>

#include <algorithm>
#include <string>

#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "cpu/semiring_kernels.hpp"
#include "spmv/error.hpp"

namespace spmv {
namespace {

// The merge-path kernel when the heaviest chunk of kSemiringRowChunk rows holds more than this share
// of one thread's work (rows + nonzeros over the threads): the row loop's threads cannot finish before
// the one holding that chunk, whatever the dynamic schedule does with the rest.
// Measured on the 2-core Zen 4 VM (docs/SEMIRINGS.md, "The CPU kernels on power-law rows").
constexpr double kMergeFromChunkShare = 0.5;

int resolve_threads(int threads) { return threads > 0 ? threads : std::max(1, omp_get_max_threads()); }

template <class Value, class Index>
Algorithm choose(const CsrMatrix<Value, Index>& a, int team) {
  const std::int64_t rows = a.rows;
  if (team == 1 || rows == 0) return Algorithm::RowLoop;  // one thread: nothing to balance
  const Index* row_ptr = a.row_ptr.data();
  std::int64_t heaviest = 0;  // rows / kSemiringRowChunk reads of row_ptr: negligible next to the product
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
  if (algorithm == Algorithm::Auto) algorithm = choose(a, team);
  switch (algorithm) {
    case Algorithm::RowLoop: return cpu::detail::semiring_rows(s, a, x.data(), y.data(), team);
    case Algorithm::MergeParallel: return cpu::detail::semiring_merge(s, a, x.data(), y.data(), team);
    default:
      throw Unsupported("semiring_multiply: algorithm " + std::string(to_string(algorithm)) +
                        " on the CPU (Auto, RowLoop or MergeParallel)");
  }
}

#define SPMV_INSTANTIATE(V, I)                                                                                \
  template void semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, int,  \
                                  Algorithm);                                                               \
  template Algorithm semiring_cpu_algorithm(const CsrMatrix<V, I>&, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
