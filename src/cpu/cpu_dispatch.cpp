// CPU dispatch: validates the matrix, resolves Auto, refuses what the CPU backend does not offer,
// builds the algorithm's plan (timed as setup) and wraps it in the common CPU Operator.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/auto_rule.hpp"
#include "core/backends.hpp"
#include "core/memory_budget.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"

namespace spmv {
namespace detail {

namespace {

// Auto on the CPU: MergeParallel, whose merge-path split keeps threads balanced whatever the row
// lengths, from kAutoMinParallelNnz nonzeros with one thread per kAutoNnzPerThread nonzeros (at least
// two), at most the team OpenMP allows (OMP_NUM_THREADS / omp_set_num_threads); with one thread,
// RowLoop. A thread count the user sets (Options::threads > 0) is used as given. Basis (issue 17,
// 2026-11-27, merge-parallel timed at each thread count in one process, products back to back,
// docs/PERFORMANCE.md "Auto's thread count"): a fork/join costs about 1-1.5 us for two threads and
// 3-5 us for 16, so a second thread pays from about 4 k nonzeros (fitted on half of 26 matrices of
// 0.1-150 k nonzeros on the 2-core Intel VM: 1.00 of the best of one or two threads, 0.96 on the other
// half), and on the 16-core Intel host more threads kept paying down to about 1 k nonzeros each (fitted
// on half of 28 matrices of 0.1-800 k nonzeros at 1-16 threads: 0.97 of the best count, 0.97 on the
// other half; the former 16 k per thread gave 0.49 there, cs4 on 5 threads instead of 16).
constexpr std::int64_t kAutoMinParallelNnz = 4096;
constexpr std::int64_t kAutoNnzPerThread = 1024;

// SELL's sorting window, when Options::sell_sigma is left 0: the whole matrix instead of the default window
// where sorting all rows by length stores more than this share fewer slots. Power-law and mostly-empty
// rows, whose long rows are rare, pad each window of 256 rows to its longest (rmat: 2.2 slots a nonzero
// in f32, 1.05 sorted whole; long_rows 4.6 and 1.14); SELL sorted whole ran them 1.1-2x faster than
// sorted in windows and than CSR, and within 5% either way where the whole sort saves little (ct2010,
// nh2010, cage10, cti, EX5; one thread, the 2-core Intel VM, 2026-11-28; docs/algorithms/cpu_simd.md).
// Fitted on the fit half of the 17 CPU matrices (sorted by nonzeros, every other one): ct2010 f64 (the
// whole sort saves 7% of the slots) ran 13% slower sorted whole, ct2010 f32 (16%) and long_rows (75%) ran
// faster, nh2010 f64 (9%) the same, so any gain from 0.07 to 0.16 splits that half alike; rmat and
// mostly_empty (test half) are the cases it was not fitted on.
constexpr double kSellWholeSortMinGain = 0.1;

// Aᵀx with the expected-applies hint: the explicit transpose (Aᵀ built once, then Auto's non-transposed
// plan on it) when at least this many products are expected and the copy takes at most
// kTransposeCopyMemoryShare of the memory available. Basis: docs/PERFORMANCE.md, "The explicit transpose
// on the CPU".
constexpr std::int64_t kTransposeMinApplies = 128;
constexpr double kTransposeCopyMemoryShare = 0.5;
// Aᵀx with the hint on a square matrix: A == Aᵀ is checked first (symmetry_violation: a binary search
// per nonzero, stopping at the first violation) and, when it holds, Aᵀx runs A x's own plan without a
// copy. The check took 15 / 25 / 2.3 ms on poisson2d n=1000, stencil27 n=60 and bcsstk16 (2-core Intel
// VM, 2026-11-27; 2 ms on a matrix that fails at its first row), repaid against merge-parallel's scatter
// after about 5 / 12 / 31 products; hence this many. Without the hint nothing depends on the values.
constexpr std::int64_t kSymmetricMinApplies = 32;

// The algorithm Auto runs with `threads` threads.
Algorithm auto_algorithm(int threads) { return threads == 1 ? Algorithm::RowLoop : Algorithm::MergeParallel; }

}  // namespace

// The thread count Auto uses for a matrix of `nnz` nonzeros (see kAutoNnzPerThread).
int auto_threads(std::int64_t nnz, const Options& options) {
  if (options.threads > 0) return options.threads;
  const std::int64_t allowed = std::max(1, omp_get_max_threads());
  if (nnz < kAutoMinParallelNnz) return 1;
  return static_cast<int>(std::min(allowed, std::max<std::int64_t>(2, nnz / kAutoNnzPerThread)));
}

// What the CPU rule (src/core/auto_rule.hpp, "CPU Auto") reads: row statistics and the slots DIA and
// SELL-C-sigma (at the CPU's C and sigma) would store. One pass over the row pointers, then, when a
// conversion could be repaid at all, one over the column indices; run only with the expected-applies hint.
template <class Value, class Index>
std::pair<RowShape, CpuFormatSlots> count_formats(const CsrMatrix<Value, Index>& a, const Options& options,
                                                  int value_bytes, int threads, int* sell_sigma) {
  RowShape s{a.rows, a.cols, a.nnz()};
  CpuFormatSlots slots;
  std::vector<std::int64_t> length(static_cast<std::size_t>(a.rows));
  double sq = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t n = a.row_ptr[r + 1] - a.row_ptr[r];
    length[r] = n;
    s.max = std::max(s.max, n);
    s.empty_rows += n == 0;
    slots.length_changes += r > 0 && n != length[r - 1];
    sq += double(n) * double(n);
  }
  s.mean = a.rows > 0 ? double(s.nnz) / double(a.rows) : 0;
  s.stddev = a.rows > 0 ? std::sqrt(std::max(0.0, sq / double(a.rows) - s.mean * s.mean)) : 0;
  if (!cpu_conversion_may_repay(s, value_bytes, options.expected_applies, threads)) return {s, slots};

  std::vector<std::uint8_t> occupied(static_cast<std::size_t>(a.rows + a.cols), 0);  // offset j - i + rows
  std::int64_t diagonals = 0;
  const auto limit = static_cast<std::int64_t>(kCpuDiaMaxPadding * double(s.nnz));
  for (std::int64_t r = 0; r < a.rows && diagonals * a.rows <= limit; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const auto d = static_cast<std::size_t>(a.col_idx[k] - r + a.rows);
      if (!occupied[d]) {
        occupied[d] = 1;
        ++diagonals;
      }
    }
  if (diagonals * a.rows <= limit) slots.dia = diagonals * a.rows;

  // SELL: lengths sorted (descending) within sigma windows; a slice stores C times its first row.
  const std::int64_t c = cpu_sell_c<Value, Index>(options);
  const std::int64_t sigma = options.sell_sigma > 0 ? options.sell_sigma : std::max<std::int64_t>(kDefaultSellSigma, c);
  const std::vector<std::int64_t> lengths = length;  // each window size sorts its own copy
  const auto count_sell = [&](std::int64_t window) {
    length = lengths;
    std::int64_t n = 0;
    for (std::int64_t w = 0; w < a.rows; w += window) {
      const auto begin = length.begin() + w, end = length.begin() + std::min(w + window, std::int64_t(a.rows));
      std::sort(begin, end, std::greater<>());
      for (auto it = begin; it < end; it += std::min<std::int64_t>(c, end - it)) n += c * *it;
    }
    return n;
  };
  slots.sell = count_sell(sigma);
  // Left unset, sigma may widen to the whole matrix where that sort stores kSellWholeSortMinGain fewer slots;
  // on several threads to one thread's share of the rows instead where that stores at most as much more
  // than the whole sort, so that the permutation keeps each thread's writes to y in its own part (sorted
  // whole, ct2010 f32 ran 0.150 against 0.120 ms sorted by halves on the VM's two threads).
  const auto window_of = [&](std::int64_t rows) { return (rows + c - 1) / c * c; };
  const std::int64_t whole = window_of(a.rows), share = window_of((a.rows + threads - 1) / std::max(threads, 1));
  if (sell_sigma && options.sell_sigma == 0 && whole > sigma && whole <= std::numeric_limits<int>::max()) {
    const std::int64_t whole_slots = count_sell(whole);
    if (double(slots.sell) > (1 + kSellWholeSortMinGain) * double(whole_slots)) {
      slots.sell = whole_slots;
      *sell_sigma = static_cast<int>(whole);
      if (share > sigma && share < whole) {
        const std::int64_t share_slots = count_sell(share);
        if (double(share_slots) <= (1 + kSellWholeSortMinGain) * double(whole_slots)) {
          slots.sell = share_slots;
          *sell_sigma = static_cast<int>(share);
        }
      }
    }
  }
  return {s, slots};
}

namespace {

// Every algorithm offers both operations, except the last two, the explicit transpose and the symmetric
// route (Aᵀx only).
constexpr Algorithm kCpuAlgorithms[] = {
    Algorithm::Reference, Algorithm::RowLoop, Algorithm::ColumnChunked, Algorithm::MergeParallel,
    Algorithm::Coo,       Algorithm::Ell,     Algorithm::EllR,          Algorithm::EllRVector,
    Algorithm::Dia,       Algorithm::Hyb,     Algorithm::Sell,          Algorithm::CompressedCsr,
#ifdef SPMV_HAS_EIGEN
    Algorithm::Eigen,
#endif
#ifdef SPMV_HAS_MKL
    Algorithm::Mkl,
#endif
    Algorithm::ExplicitTranspose, Algorithm::Symmetric,
};

bool offered(Algorithm algorithm, Operation op) {
  const auto list = cpu_algorithms(op);
  return std::find(list.begin(), list.end(), algorithm) != list.end();
}

std::string offered_list(Operation op) {
  std::string s;
  for (Algorithm a : cpu_algorithms(op)) s += (s.empty() ? "" : ", ") + std::string(to_string(a));
  return s;
}

// Half-precision values (Options::values, docs/algorithms/half_values_cpu.md): the row loop, merge-parallel
// and SELL-C-sigma keep 16-bit values and widen them in their loops (Auto picks among them by the f32
// rule); every other algorithm, Tune and the vendor baselines refuse rather than ignore the option, and
// so do double operators.
constexpr Algorithm kHalfAlgorithms[] = {Algorithm::Auto, Algorithm::RowLoop, Algorithm::MergeParallel,
                                         Algorithm::Sell};

template <class Value>
void check_half_storage(Algorithm algorithm, const Options& options) {
  const std::string storage = "values=" + std::string(to_string(options.values));
  if constexpr (!std::is_same_v<Value, float>)
    throw Unsupported(storage + ": half storage computes in f32; use a float operator");
  if (std::find(std::begin(kHalfAlgorithms), std::end(kHalfAlgorithms), algorithm) == std::end(kHalfAlgorithms)) {
    std::string list;
    for (Algorithm a : kHalfAlgorithms) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
    throw Unsupported(storage + " is not offered by the cpu algorithm " + std::string(to_string(algorithm)) +
                      "; the cpu algorithms that offer it: " + list);
  }
}

// Runs `run` with the OpenMP team size set to `threads` for the parallel regions it opens (and those
// of the format kernels and Eigen, which ask omp_get_max_threads()), restoring it afterwards.
template <class Value, class Index>
void pin_threads(CpuKernel<Value, Index>& kernel, int threads) {
  kernel.run = [inner = std::move(kernel.run), threads](Value alpha, const Value* x, Value beta, Value* y) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    inner(alpha, x, beta, y);
    omp_set_num_threads(saved);
  };
}

// Auto's A x plan on `m` (the same options) as a kernel, with its policy and extra bytes: what the two
// transposes that run a non-transposed plan wrap (the explicit one on Aᵀ, the symmetric route on A).
template <class Value, class Index>
CpuKernel<Value, Index> auto_product_kernel(const CsrMatrix<Value, Index>& m, const Options& options) {
  std::shared_ptr<Operator<Value, Index>> inner =
      make_cpu_operator(m, Algorithm::Auto, Operation::NonTranspose, options);
  const auto x_size = static_cast<std::size_t>(m.cols), y_size = static_cast<std::size_t>(m.rows);
  CpuKernel<Value, Index> kernel;
  kernel.run = [inner, x_size, y_size](Value alpha, const Value* x, Value beta, Value* y) {
    inner->apply(alpha, std::span<const Value>(x, x_size), beta, std::span<Value>(y, y_size));
  };
  kernel.policy = inner->policy();
  kernel.extra_bytes = inner->extra_bytes();
  return kernel;
}

}  // namespace

template <class Value, class Index>
CpuKernel<Value, Index> build_kernel(const CsrMatrix<Value, Index>& a, Algorithm algorithm, Operation op,
                                     const Options& options) {
  const std::size_t x_size = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
  const std::size_t y_size = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  CpuKernel<Value, Index> kernel;
  switch (algorithm) {
    case Algorithm::Reference:
    case Algorithm::RowLoop: {
      if constexpr (std::is_same_v<Value, float>)
        if (options.values != ValueStorage::Native)  // check_half_storage has run: RowLoop here
          return make_half_rows_kernel(a, op, options.values, options.threads);
      // convert: the plan's copy on huge pages (spmv/host_memory.hpp)
      auto m = std::make_shared<const CsrMatrix<Value, Index>>(convert<Value, Index>(a));
      // RowLoop's N product runs the dispatched row kernels when enabled (T scatters: scalar): the SIMD
      // one where some row is long enough for it, else the chosen short-row loop on every row.
      const bool enabled = algorithm == Algorithm::RowLoop && op == Operation::NonTranspose &&
                           cpu::detail::simd_enabled(options.cpu_simd) && cpu::detail::simd_fits<Value, Index>(a.cols);
      const cpu::detail::RowKernels rows =
          enabled ? cpu::detail::row_kernels<Value, Index>(options.cpu_rows, a.row_ptr.data(), a.col_idx.data(),
                                                           a.rows, a.cols)
                  : cpu::detail::RowKernels{};
      if (algorithm == Algorithm::Reference)
        kernel.run = [m, op](Value alpha, const Value* x, Value beta, Value* y) {
          cpu::detail::reference_kernel(*m, op, alpha, x, beta, y);
        };
      else if (rows.long_rows || rows.short_rows != cpu::detail::ShortRows::Plain)
        kernel.run = [m, rows](Value alpha, const Value* x, Value beta, Value* y) {
          if (alpha == 0) return cpu::detail::row_loop_kernel(*m, Operation::NonTranspose, alpha, x, beta, y);
          if (rows.long_rows)
            cpu::detail::csr_rows_simd(m->row_ptr.data(), m->col_idx.data(), m->values.data(), x, Index{0}, m->rows,
                                       alpha, beta, y, rows.short_rows);
          else
            cpu::detail::csr_rows_short(rows.short_rows, m->row_ptr.data(), m->col_idx.data(), m->values.data(), x,
                                        Index{0}, m->rows, alpha, beta, y);
        };
      else
        kernel.run = [m, op](Value alpha, const Value* x, Value beta, Value* y) {
          cpu::detail::row_loop_kernel(*m, op, alpha, x, beta, y);
        };
      kernel.policy = algorithm == Algorithm::RowLoop ? "sequential " + cpu::detail::simd_policy<Value, Index>(enabled, rows)
                      : op == Operation::NonTranspose
                          ? "sequential, double accumulation"
                          // the oracle favours obviousness over the no-allocation rule of plans
                          : "sequential, double accumulation, allocates a double y per product";
      return kernel;
    }
    case Algorithm::ExplicitTranspose: {  // offered for Aᵀx only
      // Aᵀ built once (a second copy of the matrix), then Auto's non-transposed plan on it, with the
      // same options: the expected-applies hint lets that plan convert or race its row kernel too.
      const auto at = transpose(a);
      kernel = auto_product_kernel(at, options);
      kernel.policy = "A^T copy, then " + kernel.policy;
      kernel.extra_bytes += at.row_ptr.size() * sizeof(Index) + at.col_idx.size() * sizeof(Index) +
                            at.values.size() * sizeof(Value);
      return kernel;
    }
    case Algorithm::Symmetric: {  // offered for Aᵀx only
      // A == Aᵀ exactly: Aᵀx is A x term for term, so A x's Auto plan (same options) serves it.
      if (const auto violation = symmetry_violation(a))
        throw Unsupported("symmetric runs Aᵀx as A x and needs A == Aᵀ exactly: " + *violation);
      kernel = auto_product_kernel(a, options);
      kernel.policy = "A == A^T, A x's plan: " + kernel.policy;
      return kernel;
    }
    case Algorithm::ColumnChunked: {
      auto plan = std::make_shared<cpu::ColumnChunkedPlan<Value, Index>>(a, op, options.column_span, options.threads);
      kernel.run = [plan, x_size, y_size](Value alpha, const Value* x, Value beta, Value* y) {
        plan->apply(alpha, std::span<const Value>(x, x_size), beta, std::span<Value>(y, y_size));
      };
      kernel.policy = plan->policy();
      kernel.extra_bytes = plan->extra_bytes();
      return kernel;
    }
    case Algorithm::MergeParallel: {
      if constexpr (std::is_same_v<Value, float>)
        if (options.values != ValueStorage::Native)  // check_half_storage has run
          return make_half_merge_kernel(a, op, options.values, options.threads, options.cpu_simd);
      auto plan = std::make_shared<cpu::MergeParallelPlan<Value, Index>>(a, op, options.threads, options.cpu_simd,
                                                                         options.cpu_rows);
      kernel.run = [plan, x_size, y_size](Value alpha, const Value* x, Value beta, Value* y) {
        plan->apply(alpha, std::span<const Value>(x, x_size), beta, std::span<Value>(y, y_size));
      };
      kernel.policy = plan->policy();
      kernel.extra_bytes = plan->extra_bytes();
      return kernel;
    }
#ifdef SPMV_HAS_EIGEN
    case Algorithm::Eigen:
      return make_eigen_kernel(a, op);
#endif
#ifdef SPMV_HAS_MKL
    case Algorithm::Mkl:
      return make_mkl_kernel(a, op, options.expected_applies);
#endif
    default:  // the format-backed algorithms (offered() has been checked)
      return make_cpu_format_kernel(a, algorithm, op, options);
  }
}

#define SPMV_INSTANTIATE(V, I)                                                                                    \
  template std::pair<RowShape, CpuFormatSlots> count_formats(const CsrMatrix<V, I>&, const Options&, int, int, int*); \
  template CpuKernel<V, I> build_kernel(const CsrMatrix<V, I>&, Algorithm, Operation, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

std::span<const Algorithm> cpu_algorithms(Operation op) {
  const std::span<const Algorithm> all = kCpuAlgorithms;
  return op == Operation::Transpose ? all : all.first(all.size() - 2);
}

}  // namespace detail

std::span<const std::string_view> cpu_row_kernel_names() { return cpu::detail::kRowKernelNames; }

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_cpu_operator(const CsrMatrix<Value, Index>& a, Algorithm algorithm,
                                                          Operation op, const Options& options) {
  validate(a);
  // Every CPU kernel sums in a fixed order for a given thread count, except the tuner's choice (set by
  // timing) and MKL's (not promised without its CNR mode).
  if (options.deterministic && (algorithm == Algorithm::Tune || algorithm == Algorithm::Mkl))
    throw Unsupported(std::string(to_string(algorithm)) +
                      " is not offered with Options::deterministic (the choice or the vendor's summation order "
                      "may change run to run); every other CPU algorithm is reproducible for a fixed thread count");
  if (options.values != ValueStorage::Native) detail::check_half_storage<Value>(algorithm, options);
  if (options.reorder != Reorder::None) return detail::make_reordered_cpu_operator(a, algorithm, op, options);
  Algorithm resolved = algorithm;
  Options chosen = options;
  std::string why;
  if (algorithm == Algorithm::Tune) {
    // Nothing to tune on degenerate shapes: Auto only scales y there.
    if (a.rows == 0 || a.cols == 0 || a.nnz() == 0) return make_cpu_operator(a, Algorithm::Auto, op, options);
    const int threads = detail::auto_threads(a.nnz(), options);
    return detail::make_tuned_cpu_operator(a, op, options, detail::auto_algorithm(threads), threads);
  }
  const auto start = std::chrono::steady_clock::now();
  std::optional<detail::CpuKernel<Value, Index>> converted;
  if (algorithm == Algorithm::Auto) {
    const std::int64_t nnz = a.nnz();
    chosen.threads = detail::auto_threads(nnz, options);
    // Half storage follows the f32 rule: the row loop and merge-parallel both offer it.
    const bool half = options.values != ValueStorage::Native;
    resolved = detail::auto_algorithm(chosen.threads);
    why = "auto(nnz=" + std::to_string(nnz) + " threads=" + std::to_string(chosen.threads) +
          (options.threads > 0 ? " as set"
                               : " of " + std::to_string(std::max(1, omp_get_max_threads())) + " at " +
                                     std::to_string(detail::kAutoNnzPerThread) + " nnz/thread from " +
                                     std::to_string(detail::kAutoMinParallelNnz)) +
          (half ? "; values=" + std::string(to_string(options.values)) + ": the f32 rule" : "");
    // With the expected-applies hint, A x may run on a converted copy (DIA or SELL) when the CPU rule
    // says the products repay it; the counting is part of the setup time. Half storage asks the rule
    // with f32 values (it converts where f32 would) and takes SELL with 16-bit slices; DIA does not
    // offer half values, so its choice keeps the CSR kernel (logged).
    if (op == Operation::NonTranspose && options.expected_applies > 0 && nnz > 0) {
      int sell_sigma = 0;  // set when the whole-matrix sort is worth it
      const auto [shape, slots] = detail::count_formats(a, options, sizeof(Value), chosen.threads, &sell_sigma);
      // The fitted costs scaled for this CPU (measured once per process), unless the choice must not
      // depend on a measurement: deterministic products pick the same kernel in every run.
      const bool counted = detail::cpu_conversion_may_repay(shape, sizeof(Value), options.expected_applies,
                                                            chosen.threads);
      const detail::CpuFormatScales scales =
          counted && !options.deterministic ? detail::cpu_format_scales<Value>() : detail::CpuFormatScales{};
      Algorithm format =
          detail::cpu_format_for(shape, slots, sizeof(Value), options.expected_applies, chosen.threads, scales);
      // Near the rule's boundary (a scale kCpuRuleBand larger or smaller would choose otherwise) the
      // conversion is built and raced against the unconverted plan below, also on one thread: there the
      // fitted costs' error on the matrix, not the CPU's scales, decides, and a choice that turned on the
      // last percent of the scales flipped between processes (docs/PERFORMANCE.md, "A steady CPU
      // calibration").
      bool near_boundary = false;
      Algorithm rival = Algorithm::Auto;  // DIA against SELL near the boundary: both built and raced
      if (counted && !options.deterministic && options.expected_applies >= detail::kRaceMinApplies &&
          detail::cpu_measuring_allowed()) {
        const detail::CpuFormatBand band = detail::cpu_format_band(
            shape, slots, sizeof(Value), options.expected_applies, chosen.threads, scales, detail::kCpuRuleBand);
        if (band.near_boundary) {
          near_boundary = true;
          format = band.format;
          if (!half) rival = band.rival;
        }
      }
      why += " applies=" + std::to_string(options.expected_applies) + " dia_slots=" + std::to_string(slots.dia) +
             " sell_slots=" + std::to_string(slots.sell) + " length_changes=" + std::to_string(slots.length_changes) +
             (counted ? " " + detail::cpu_scales_policy(scales) : "");
      if (near_boundary) why += " near the rule's boundary";
      if ((format == Algorithm::Sell || rival == Algorithm::Sell) && sell_sigma > 0) {
        chosen.sell_sigma = sell_sigma;
        why += " sell sorted by " + std::to_string(sell_sigma) + " rows";
      }
      if (half && format == Algorithm::Dia) {
        why += " dia (no half storage there) kept " + std::string(to_string(resolved));
      } else if (format != Algorithm::Auto) {
        try {
          converted = detail::build_kernel(a, format, op, chosen);
          resolved = format;
          if (rival != Algorithm::Auto) {
            try {
              auto other = detail::build_kernel(a, rival, op, chosen);
              if (detail::second_format_is_faster(a, *converted, format, other, rival, why)) {
                converted = std::move(other);
                resolved = rival;
              }
            } catch (const Unsupported&) {  // the rival refused (padding): the rule's choice stands
            }
          }
          why += " converts to " + std::string(to_string(resolved));
        } catch (const Unsupported& e) {  // e.g. padding above Options::max_padding: logged, CSR instead
          why += " " + std::string(to_string(format)) + " refused (" + e.what() + ")";
        }
      } else {
        why += " no conversion repaid";
      }
      // On several threads the converted plan must also beat the unconverted one, measured (the row
      // kernel race below then chooses the latter's row kernel).
      if (converted && (chosen.threads > 1 || near_boundary) && !options.deterministic &&
          options.expected_applies >= detail::kRaceMinApplies &&
          detail::unconverted_is_faster(a, *converted, detail::auto_algorithm(chosen.threads), chosen, why,
                                        near_boundary)) {
        converted.reset();
        resolved = detail::auto_algorithm(chosen.threads);
      }
    }
    // Aᵀx on a matrix equal to its transpose: A x's plan (no copy), checked once when the hint repays it.
    if (op == Operation::Transpose && !half && nnz > 0 && a.rows == a.cols &&
        options.expected_applies >= detail::kSymmetricMinApplies) {
      try {
        converted = detail::build_kernel(a, Algorithm::Symmetric, op, chosen);
        resolved = Algorithm::Symmetric;
        why += " A == A^T";
      } catch (const Unsupported&) {  // the check found an entry without an equal mirror
        why += " A != A^T";
      }
    }
    // Aᵀx: the explicit transpose when the hint repays the copy and it fits (its own Auto then decides
    // the non-transposed plan, conversions and row kernel included).
    if (op == Operation::Transpose && !half && nnz > 0 && resolved != Algorithm::Symmetric &&
        options.expected_applies >= detail::kTransposeMinApplies) {
      const double copy = double(nnz) * double(sizeof(Value) + sizeof(Index)) + (double(a.cols) + 1) * sizeof(Index);
      const detail::MemoryBudget budget = detail::memory_budget(0);
      if (copy <= detail::kTransposeCopyMemoryShare * double(budget.bytes)) {
        resolved = Algorithm::ExplicitTranspose;
        why += " applies=" + std::to_string(options.expected_applies) + " A^T copy repaid";
      } else {
        why += " A^T copy (" + detail::format_bytes(copy) + ") over half of " + budget.source;
      }
    }
    // The CSR row kernel measured on A (src/cpu/row_kernel_race.cpp), unless named or not allowed to vary.
    if (!converted && op == Operation::NonTranspose && !half && !options.deterministic && nnz > 0 &&
        cpu::detail::simd_enabled(options.cpu_simd) && cpu::detail::simd_fits<Value, Index>(a.cols) &&
        !cpu::detail::requested_row_kernel(options.cpu_rows)) {
      if (options.expected_applies >= detail::kRaceMinApplies)
        converted = detail::race_row_kernels(a, resolved, chosen, why);
      else
        chosen.cpu_rows = detail::sample_row_kernels(a, why);
    }
    // Row groups (src/cpu/row_groups.cpp) against the plan chosen so far, with the hint (it repacks the
    // values), where A's rows share columns in runs. Reported as row-loop: a loop over rows, a group at a time.
    if (op == Operation::NonTranspose && !half && !options.deterministic && nnz > 0 &&
        options.expected_applies >= detail::kRaceMinApplies && cpu::detail::simd_enabled(options.cpu_simd) &&
        !cpu::detail::requested_row_kernel(options.cpu_rows)) {
      if (!converted) converted = detail::build_kernel(a, resolved, op, chosen);
      if (auto groups = detail::race_row_groups(a, *converted, chosen, why)) {
        converted = std::move(groups);
        resolved = Algorithm::RowLoop;
      }
    }
    why += ") ";
  }
  if (!detail::offered(resolved, op))
    throw Unsupported("the cpu backend does not offer algorithm " + std::string(to_string(resolved)) +
                      " (op " + std::string(to_string(op)) + "); it offers: " + detail::offered_list(op));

  detail::CpuKernel<Value, Index> kernel =
      converted ? std::move(*converted) : detail::build_kernel(a, resolved, op, chosen);
  const double setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (options.threads > 0) detail::pin_threads(kernel, options.threads);
  kernel.policy = why + kernel.policy;
  return detail::wrap_cpu_kernel(std::move(kernel), resolved, op, a.rows, a.cols, setup_ms);
}

#define SPMV_INSTANTIATE(V, I)                                                                                   \
  template std::unique_ptr<Operator<V, I>> make_cpu_operator(const CsrMatrix<V, I>&, Algorithm, Operation, \
                                                             const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv
