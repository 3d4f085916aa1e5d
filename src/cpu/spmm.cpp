// CPU SpMM, Y = alpha*op(A)*X + beta*Y (include/spmv/spmm.hpp, docs/ALGORITHMS.md "SpMM").
// The matrix is read once per tile of X's columns, not once per column: each row's nonzeros are
// walked for a tile of T columns with T running sums in a small array (T = 32/16/8/4/2/1, the widest
// power of two that fits the columns left), so that for row-major X the inner loop over the tile is
// contiguous and the compiler turns it into vector FMAs; the row's indices and values come from L1 on
// the second and later tiles. Column-major X gathers the tile's entries (stride ld); the loop is the
// same. Rows are split into blocks of about equal rows + nonzeros (nonzero-balanced, so one long row
// does not leave the other threads idle for the whole product), taken by OpenMP threads dynamically.
#include "spmv/spmm.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv::cpu {
namespace {

// Tile widths: at most 128 bytes of sums per tile (two AVX-512 / four AVX2 registers), enough to
// keep the FMA units busy while leaving registers for the gathers; not measured beyond that.
template <class Value>
constexpr int kMaxTile = 128 / static_cast<int>(sizeof(Value));
// Threads a product uses: one per this many multiply-adds (nnz * k), at most the plan's threads. The
// CPU Auto's former SpMV rule (16384 nonzeros per thread; src/cpu/cpu_dispatch.cpp now starts threads
// from far less work) at k = 4: below it an OpenMP fork/join costs more than the work it shares out.
// Not measured for SpMM.
constexpr std::int64_t kMultiplyAddsPerThread = 16384 * 4;
// Blocks per thread: more than one so that dynamic scheduling can even out what the row+nnz split
// misses (memory-bound rows of different locality).
constexpr int kBlocksPerThread = 4;

// acc[t] = sum_p val[p] * X(col[p], c0 + t) for the T columns of the tile; x points at X(0, c0).
#define SPMV_SPMM_INLINE [[gnu::always_inline]] inline

template <int T, bool ContiguousTile, class Value, class Index>
SPMV_SPMM_INLINE void row_tile(const Index* __restrict col, const Value* __restrict val, std::int64_t begin, std::int64_t end,
                     const Value* __restrict x, std::int64_t x_row_stride, std::int64_t x_col_stride,
                     Value* __restrict acc) {
  for (int t = 0; t < T; ++t) acc[t] = Value(0);
  for (std::int64_t p = begin; p < end; ++p) {
    const Value v = val[p];
    const Value* __restrict xr = x + static_cast<std::int64_t>(col[p]) * x_row_stride;
    if constexpr (ContiguousTile) {
#pragma omp simd
      for (int t = 0; t < T; ++t) acc[t] += v * xr[t];
    } else {
      for (int t = 0; t < T; ++t) acc[t] += v * xr[t * x_col_stride];
    }
  }
}

template <int T, class Value>
SPMV_SPMM_INLINE void store_tile(const Value* __restrict acc, Value alpha, Value beta, Value* __restrict y,
                       std::int64_t y_col_stride) {
  if (beta == Value(0)) {
    for (int t = 0; t < T; ++t) y[t * y_col_stride] = alpha * acc[t];
  } else {
    for (int t = 0; t < T; ++t) y[t * y_col_stride] = alpha * acc[t] + beta * y[t * y_col_stride];
  }
}

template <int T, bool ContiguousTile, class Value, class Index>
SPMV_SPMM_INLINE void run_tile(const CsrMatrix<Value, Index>& a, std::int64_t row, Value alpha, const DenseView<const Value>& x,
                     Value beta, const DenseView<Value>& y, std::int64_t c0) {
  alignas(64) Value acc[T];
  row_tile<T, ContiguousTile>(a.col_idx.data(), a.values.data(), a.row_ptr[row], a.row_ptr[row + 1],
                              x.data + c0 * x.col_stride(), x.row_stride(), x.col_stride(), acc);
  store_tile<T>(acc, alpha, beta, y.data + y.offset(row, c0), y.col_stride());
}

template <bool ContiguousTile, class Value, class Index>
SPMV_SPMM_INLINE void run_rows(const CsrMatrix<Value, Index>& a, std::int64_t first, std::int64_t last, Value alpha,
                               const DenseView<const Value>& x, Value beta, const DenseView<Value>& y) {
  const std::int64_t k = x.cols;
  for (std::int64_t row = first; row < last; ++row) {
    for (std::int64_t c0 = 0; c0 < k;) {
      const std::int64_t left = std::min<std::int64_t>(k - c0, kMaxTile<Value>);
      // The widest compiled tile that fits: a bounded set of widths (STYLE.md §6).
      if (left >= 32 && kMaxTile<Value> >= 32) {
        run_tile<(kMaxTile<Value> >= 32 ? 32 : 16), ContiguousTile>(a, row, alpha, x, beta, y, c0);
        c0 += kMaxTile<Value> >= 32 ? 32 : 16;
      } else if (left >= 16) {
        run_tile<16, ContiguousTile>(a, row, alpha, x, beta, y, c0);
        c0 += 16;
      } else if (left >= 8) {
        run_tile<8, ContiguousTile>(a, row, alpha, x, beta, y, c0);
        c0 += 8;
      } else if (left >= 4) {
        run_tile<4, ContiguousTile>(a, row, alpha, x, beta, y, c0);
        c0 += 4;
      } else if (left >= 2) {
        run_tile<2, ContiguousTile>(a, row, alpha, x, beta, y, c0);
        c0 += 2;
      } else {
        run_tile<1, ContiguousTile>(a, row, alpha, x, beta, y, c0);
        c0 += 1;
      }
    }
  }
}

// The instruction sets the row loop is compiled for, chosen once per plan from the CPU (GCC function
// targets: the helpers above are always inlined, so each entry below compiles the whole loop with its
// vector width and FMA). The library itself is built for the x86-64 baseline (SSE2, no FMA), where the
// tile loop runs 2 doubles or 4 floats a step. SPMV_CPU_SIMD=0 forces the baseline, as for the SpMV kernels.
enum class Isa { Baseline, Avx2, Avx512 };

inline std::string_view to_string(Isa isa) {
  return isa == Isa::Avx512 ? "avx512" : isa == Isa::Avx2 ? "avx2" : "baseline";
}

Isa detect_isa() {
  const char* env = std::getenv("SPMV_CPU_SIMD");
  if (env && std::string_view(env) == "0") return Isa::Baseline;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
#endif
  return Isa::Baseline;
}

template <bool ContiguousTile, class Value, class Index>
void rows_baseline(const CsrMatrix<Value, Index>& a, std::int64_t first, std::int64_t last, Value alpha,
                   const DenseView<const Value>& x, Value beta, const DenseView<Value>& y) {
  run_rows<ContiguousTile>(a, first, last, alpha, x, beta, y);
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <bool ContiguousTile, class Value, class Index>
[[gnu::target("avx2,fma")]] void rows_avx2(const CsrMatrix<Value, Index>& a, std::int64_t first, std::int64_t last,
                                           Value alpha, const DenseView<const Value>& x, Value beta,
                                           const DenseView<Value>& y) {
  run_rows<ContiguousTile>(a, first, last, alpha, x, beta, y);
}
template <bool ContiguousTile, class Value, class Index>
[[gnu::target("avx512f,avx512vl,avx2,fma")]] void rows_avx512(const CsrMatrix<Value, Index>& a, std::int64_t first,
                                                              std::int64_t last, Value alpha,
                                                              const DenseView<const Value>& x, Value beta,
                                                              const DenseView<Value>& y) {
  run_rows<ContiguousTile>(a, first, last, alpha, x, beta, y);
}
#endif

template <bool ContiguousTile, class Value, class Index>
void rows_for(Isa isa, const CsrMatrix<Value, Index>& a, std::int64_t first, std::int64_t last, Value alpha,
              const DenseView<const Value>& x, Value beta, const DenseView<Value>& y) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (isa == Isa::Avx512) return rows_avx512<ContiguousTile>(a, first, last, alpha, x, beta, y);
  if (isa == Isa::Avx2) return rows_avx2<ContiguousTile>(a, first, last, alpha, x, beta, y);
#endif
  (void)isa;
  rows_baseline<ContiguousTile>(a, first, last, alpha, x, beta, y);
}

// Y = beta * Y (Y = 0 when beta == 0, never reading Y).
template <class Value>
void scale_dense(Value beta, const DenseView<Value>& y, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < y.rows; ++i)
    for (std::int64_t j = 0; j < y.cols; ++j) {
      Value& v = y(i, j);
      v = beta == Value(0) ? Value(0) : beta * v;
    }
}

}  // namespace

template <class Value, class Index>
SpmmPlan<Value, Index>::SpmmPlan(const CsrMatrix<Value, Index>& a, Operation op, int threads)
    : op_(op), threads_(threads > 0 ? threads : omp_get_max_threads()), isa_(static_cast<int>(detect_isa())) {
  validate(a);
  a_ = op == Operation::NonTranspose ? convert<Value, Index>(a) : transpose(a);  // both on huge pages
  // Block b starts at the first row r with r + row_ptr[r] >= b * (rows + nnz) / blocks (the merge
  // path's diagonal, rounded to whole rows).
  const std::int64_t rows = a_.rows;
  const std::int64_t work = rows + static_cast<std::int64_t>(a_.nnz());
  const std::int64_t blocks = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, std::int64_t(threads_) * kBlocksPerThread));
  block_rows_.resize(static_cast<std::size_t>(blocks) + 1);
  block_rows_[0] = 0;
  block_rows_[blocks] = static_cast<Index>(rows);
  for (std::int64_t b = 1; b < blocks; ++b) {
    const std::int64_t target = work / blocks * b + work % blocks * b / blocks;
    std::int64_t lo = 0, hi = rows;  // first r in [0, rows] with r + row_ptr[r] >= target
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (mid + static_cast<std::int64_t>(a_.row_ptr[mid]) < target) lo = mid + 1;
      else hi = mid;
    }
    block_rows_[b] = static_cast<Index>(std::max<std::int64_t>(lo, block_rows_[b - 1]));
  }
}

template <class Value, class Index>
void SpmmPlan<Value, Index>::apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) const {
  const std::int64_t k = x.cols;
  detail::check_dense("spmv::cpu::SpmmPlan::apply", "X", x, a_.cols, k);
  detail::check_dense("spmv::cpu::SpmmPlan::apply", "Y", y, a_.rows, k);
  // Degenerate shapes first (STYLE.md §4); alpha == 0 reads neither A nor X (BLAS).
  if (k == 0 || a_.rows == 0) return;
  if (alpha == Value(0) || a_.cols == 0 || a_.nnz() == 0) {
    scale_dense(beta, y, threads_);
    return;
  }
  const std::int64_t blocks = static_cast<std::int64_t>(block_rows_.size()) - 1;
  const bool contiguous = x.layout == Layout::RowMajor || k == 1;
  const int threads = static_cast<int>(std::clamp<std::int64_t>(
      static_cast<std::int64_t>(a_.nnz()) * k / kMultiplyAddsPerThread, 1, threads_));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    if (contiguous)
      rows_for<true>(static_cast<Isa>(isa_), a_, block_rows_[b], block_rows_[b + 1], alpha, x, beta, y);
    else
      rows_for<false>(static_cast<Isa>(isa_), a_, block_rows_[b], block_rows_[b + 1], alpha, x, beta, y);
  }
}

template <class Value, class Index>
std::string SpmmPlan<Value, Index>::policy() const {
  return "cpu-spmm threads=" + std::to_string(threads_) + " blocks=" + std::to_string(block_rows_.size() - 1) +
         " tile<=" + std::to_string(kMaxTile<Value>) + " isa=" + std::string(to_string(static_cast<Isa>(isa_))) +
         (op_ == Operation::Transpose ? " explicit-transpose" : "");
}

template <class Value, class Index>
std::size_t SpmmPlan<Value, Index>::extra_bytes() const {
  std::size_t bytes = block_rows_.size() * sizeof(Index);
  if (op_ == Operation::Transpose)
    bytes += a_.row_ptr.size() * sizeof(Index) + a_.col_idx.size() * sizeof(Index) + a_.values.size() * sizeof(Value);
  return bytes;
}

template <class Value, class Index>
void spmm(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, DenseView<const Value> x, Value beta,
          DenseView<Value> y, int threads) {
  SpmmPlan<Value, Index>(a, op, threads).apply(alpha, x, beta, y);
}

#define SPMV_INSTANTIATE(V, I)                                                                           \
  template class SpmmPlan<V, I>;                                                                         \
  template void spmm(const CsrMatrix<V, I>&, Operation, V, DenseView<const V>, V, DenseView<V>, int);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu
