#pragma once
// Private: every CPU algorithm is a kernel closure over its (possibly converted) data wrapped in one
// Operator class, so that size checks and timing are written once.
#include <cstddef>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/auto_rule.hpp"
#include "spmv/formats.hpp"
#include "spmv/operator.hpp"

namespace spmv::detail {

template <class Value, class Index>
struct CpuKernel {
  // y = alpha * op(A) * x + beta * y on raw host arrays already checked for size.
  std::function<void(Value alpha, const Value* x, Value beta, Value* y)> run;
  std::string policy;            // parameters that were chosen, e.g. "threads=2 span=65536"
  std::size_t extra_bytes = 0;   // converted data held beyond the CSR input
};

// The kernel of a plan whose apply(alpha, x, beta, y) takes raw arrays (the half-value plans), with its
// policy() and extra_bytes().
template <class Value, class Index, class Plan>
CpuKernel<Value, Index> plan_kernel(std::shared_ptr<Plan> plan) {
  CpuKernel<Value, Index> kernel;
  kernel.policy = plan->policy();
  kernel.extra_bytes = plan->extra_bytes();
  kernel.run = [plan = std::move(plan)](Value alpha, const Value* x, Value beta, Value* y) {
    plan->apply(alpha, x, beta, y);
  };
  return kernel;
}

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> wrap_cpu_kernel(CpuKernel<Value, Index> kernel, Algorithm algorithm,
                                                        Operation op, Index rows, Index cols, double setup_ms);

// Implemented in src/cpu/cpu_dispatch.cpp: the kernel of `algorithm` on A as the dispatch builds it
// (converting for the format-backed ones), and what the CPU rule reads of A: its row statistics and
// the slots DIA and SELL-C-sigma would store (counted only where options.expected_applies could repay
// a conversion). With `sell_sigma` and Options::sell_sigma left 0, SELL's slots may be counted sorted over
// the whole matrix, whose window is then written there (kSellWholeSortMinGain, cpu_dispatch.cpp).
template <class Value, class Index>
CpuKernel<Value, Index> build_kernel(const CsrMatrix<Value, Index>& a, Algorithm algorithm, Operation op,
                                     const Options& options);
// The thread count Auto uses for a matrix of `nnz` nonzeros (Options::threads when set).
int auto_threads(std::int64_t nnz, const Options& options);
template <class Value, class Index>
std::pair<RowShape, CpuFormatSlots> count_formats(const CsrMatrix<Value, Index>& a, const Options& options,
                                                  int value_bytes, int threads, int* sell_sigma = nullptr);

// Times `count` candidates on this CPU, alternately: `rounds` rounds, each a sample of every candidate
// repeating run(c) for at least `min_seconds`; returns each candidate's fastest sample per run (a sample
// that lost the core to another process is slower, never faster). Every candidate runs once untimed
// first, or, with `warm_each_sample`, before each of its samples (after the others evicted its data).
// The CPU rule's calibration and Auto's row-kernel races measure with it.
template <class Run>
std::vector<double> time_alternately(std::size_t count, int rounds, double min_seconds, bool warm_each_sample,
                                     Run run) {
  std::vector<double> best(count, std::numeric_limits<double>::infinity());
  if (!warm_each_sample)
    for (std::size_t c = 0; c < count; ++c) run(c);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t c = 0; c < count; ++c) {
      if (warm_each_sample) run(c);
      const auto start = std::chrono::steady_clock::now();
      double seconds = 0;
      int runs = 0;
      do {
        run(c);
        ++runs;
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (seconds < min_seconds);
      best[c] = std::min(best[c], seconds / runs);
    }
  return best;
}

// Whether the dispatch may measure on this CPU at plan time (the rule's scales, the row-kernel races):
// not when the environment sets SPMV_CPU_CALIBRATION=0 (src/cpu/cpu_calibration.cpp).
bool cpu_measuring_allowed();

// With the hint, a conversion the rule chooses with its scales divided by this factor but not with them
// multiplied by it (or the reverse) is raced against the unconverted plan (cpu_dispatch.cpp). On the Zen 4
// VM the fitted costs missed single matrices by 1.4-2x at such boundaries (rmat f32: SELL sorted whole 2.9
// ms, the row loop 4.8; ct2010 and nh2010 f64: SELL 0.26 / 0.18 ms, a vector per row 0.52 / 0.38), so a
// measurement decides there; 1.25 takes in the boundaries that the scales' spread between processes crossed.
constexpr double kCpuRuleBand = 1.25;

// Implemented in src/cpu/row_kernel_race.cpp: Auto's CSR row kernel (Options::cpu_rows) measured on A.
// With the expected-applies hint (at least kRaceMinApplies), race_row_kernels builds the plan of
// `algorithm` (RowLoop or MergeParallel, A x) with the rule's row kernel and with each challenger that
// wastes few lanes, times whole products and returns the fastest (no value when there is no
// challenger). Without it, sample_row_kernels times the row kernels alone on a sample of A's rows (from
// kSampleMinNonzeros nonzeros, for an x of at most 1 MiB) and returns the cpu_rows value to build with
// (-1: the rule's). Both add their times to `why`; neither runs with SPMV_CPU_CALIBRATION=0. Below
// kSampleMinNonzeros a product takes tens of microseconds, and the race's millisecond would weigh.
constexpr std::int64_t kRaceMinApplies = 100;
// Every race (the row kernels, the conversions, SELL's x forms in sell_simd.cpp): each candidate runs
// untimed once, then kRaceRounds rounds of samples of at least kRaceSampleSeconds (a conversion's race:
// kConversionRaceSampleSeconds), alternating, keeping minima (a sample that lost the core to another
// process is slower, never faster). A challenger replaces the incumbent only when kRaceMargin faster:
// timing noise must not flip a tie, and a sample of rows must not stand for the whole matrix on a small
// difference.
constexpr int kRaceRounds = 3;
constexpr double kRaceSampleSeconds = 0.1e-3;
// The race of a conversion against the unconverted plan samples at least this long: on many threads a
// product takes 0.07-0.6 ms, so 0.1 ms samples were single products, each just after the other plan's, and
// on the 16-core Intel host 3 of 68 races (16 of them DIA's) timed DIA at 0.99-2.7 ms against 0.14-0.23 ms
// in other processes (2026-11-29), dropping it for merge-parallel (stencil27 f64 0.75x, banded f32 0.61x
// MKL instead of 1.8-3.3x). Several products a sample, and away from the rule's boundary a second race
// before the rule is overridden.
constexpr double kConversionRaceSampleSeconds = 1e-3;
constexpr double kRaceMargin = 0.95;
constexpr std::int64_t kSampleMinNonzeros = std::int64_t{1} << 16;
template <class Value, class Index>
std::optional<CpuKernel<Value, Index>> race_row_kernels(const CsrMatrix<Value, Index>& a, Algorithm algorithm,
                                                        const Options& options, std::string& why);
template <class Value, class Index>
int sample_row_kernels(const CsrMatrix<Value, Index>& a, std::string& why);
// With the hint on several threads: whether Auto's unconverted plan (`plain`: merge-parallel) runs whole
// products kRaceMargin faster than the `converted` one (DIA or SELL) the rule chose; adds both times to
// `why`. The rule prices a conversion against the row loop, which on many threads misjudges what
// merge-parallel's split of long rows gains (docs/PERFORMANCE.md, the 16-core Intel host: long_rows f32,
// SELL sorted whole 0.39-0.51 ms against merge-parallel's 0.24-0.25). With `converted_must_win` (near the
// rule's boundary, kCpuRuleBand; also on one thread) a tie goes the other way: the converted plan stays
// only when kRaceMargin faster, so that matrices where the two run alike keep CSR in every process
// instead of following the timing noise. Without it the unconverted plan must win two races in a row
// (the second's times are the ones `why` reports).
// Near the rule's boundary between its two formats (the choice flips between DIA and SELL within
// kCpuRuleBand of the scales): whether the `second` converted plan runs whole products faster than the
// `first`; adds both times to `why`. The rule prices DIA by its raw values, so a DIA that keeps 8-bit value
// codes reads a quarter of the bytes it counts (the 16-core Intel host, stencil27 n=120 f32: SELL 3.30 ms
// where DIA with codes ran f64 in 1.21; docs/PERFORMANCE.md).
template <class Value, class Index>
bool second_format_is_faster(const CsrMatrix<Value, Index>& a, const CpuKernel<Value, Index>& first, Algorithm first_name,
                             const CpuKernel<Value, Index>& second, Algorithm second_name, std::string& why);
template <class Value, class Index>
bool unconverted_is_faster(const CsrMatrix<Value, Index>& a, const CpuKernel<Value, Index>& converted,
                           Algorithm plain, const Options& options, std::string& why,
                           bool converted_must_win = false);

// Implemented in src/cpu/cpu_calibration.cpp: the CPU rule's format scales for this CPU and value type,
// measured once per process (about 90 ms, at the first call) and rounded to a third of an octave; the
// fitted costs (all 1) when the environment sets SPMV_CPU_CALIBRATION=0. cpu_scales_policy says which,
// for the policy string.
template <class Value>
const CpuFormatScales& cpu_format_scales();
std::string cpu_scales_policy(const CpuFormatScales& scales);

// Implemented with the format conversions (src/cpu/format_kernels.cpp): the CPU operator of a
// format-backed algorithm (Coo, Ell, EllR, EllRVector, Dia, Hyb, Sell, CompressedCsr), converting once here.
template <class Value, class Index>
CpuKernel<Value, Index> make_cpu_format_kernel(const CsrMatrix<Value, Index>& a, Algorithm algorithm,
                                               Operation op, const Options& options);

// Implemented in src/cpu/compressed_csr.cpp: the compressed CSR loops (alpha != 0; beta == 0 never reads y).
template <class Value, class Index>
void compressed_csr_apply(const CompressedCsrMatrix<Value, Index>& m, Operation op, Value alpha, const Value* x,
                          Value beta, Value* y);
// Implemented in src/cpu/dia_simd.cpp: DIA's non-transposed product, parallel over row blocks and
// vectorised along the diagonals (Options::threads, Options::cpu_simd).
template <class Value, class Index>
CpuKernel<Value, Index> make_dia_simd_kernel(DiaMatrix<Value, Index> m, const Options& options);
// The most distinct slot values DIA stores as one-byte codes for these options: a vector of lanes of
// the dispatched target (its in-register table lookup), 256 with the SIMD kernels off.
template <class Value>
std::int64_t dia_code_capacity(const Options& options);

// Implemented in src/cpu/sell_simd.cpp: SELL-C-sigma's non-transposed product, parallel over slices,
// one vector lane per row (Options::threads, Options::cpu_simd). cpu_sell_c is the slice height the
// CPU converts to: Options::sell_c, or 0 there: the SIMD width of (Value, Index) on this CPU.
template <class Value, class Index>
int cpu_sell_c(const Options& options);
template <class Value, class Index>
CpuKernel<Value, Index> make_sell_simd_kernel(SellMatrix<Value, Index> m, const Options& options);
// The same with half-precision values (Options::values f16 / bf16): the slices keep 16-bit values, widened
// to f32 lanes in the kernel; A x as above, A^T x the sequential scatter. Converted by the caller.
template <class Index>
CpuKernel<float, Index> make_half_sell_kernel(SellMatrix<float, Index> m, Operation op, const Options& options);

// Implemented in src/cpu/row_groups.cpp: row groups (A x only), consecutive rows with the same columns
// whose columns come in runs of consecutive indices: one masked vector load of x per run and group,
// shared by the group's rows, where SELL gathers x once per vector of nonzeros (finite-element matrices
// with several unknowns per node). Auto takes it, with the hint, only when race_row_groups measures it
// faster than the plan it chose. Groups hold at most kGroupMaxRows rows (kernels for 1-4 rows).
constexpr std::int64_t kGroupMaxRows = 4;
struct RowGroupsShape {
  std::int64_t groups = 0, runs = 0;  // runs: x loads per product (a run of one group)
  std::int64_t lanes = 1;             // the longest run: the value vector's lanes on the dispatched target
};
// The longest run on the dispatched target (the value vector's lanes).
template <class Value, class Index>
std::int64_t row_group_lanes();
// Counts A's groups and runs; stops counting once runs exceed `max_runs` (-1: never).
template <class Value, class Index>
RowGroupsShape row_groups_shape(const CsrMatrix<Value, Index>& a, std::int64_t max_runs = -1);
template <class Value, class Index>
CpuKernel<Value, Index> make_row_groups_kernel(const CsrMatrix<Value, Index>& a, const Options& options);
// Implemented in src/cpu/row_kernel_race.cpp: with the hint, row groups against `incumbent` (the plan Auto
// chose), when A has at least as many nonzeros per x load as a gather has lanes (else not tried); returns
// the groups' kernel when it is kRaceMargin faster. Adds the times to `why`.
template <class Value, class Index>
std::optional<CpuKernel<Value, Index>> race_row_groups(const CsrMatrix<Value, Index>& a,
                                                       const CpuKernel<Value, Index>& incumbent,
                                                       const Options& options, std::string& why);

// Implemented in src/cpu/half_rows.cpp: the row loop over fp16 / bfloat16 values (Options::values != Native;
// float operators only: values are narrowed once here, sums stay f32), rows split over `threads` threads
// (0: OpenMP's default).
template <class Index>
CpuKernel<float, Index> make_half_rows_kernel(const CsrMatrix<float, Index>& a, Operation op, ValueStorage values,
                                              int threads);
// Implemented in src/cpu/half_merge_parallel.cpp: merge-parallel over fp16 / bfloat16 values (the same
// merge-path split, carries added in segment order), `simd` as Options::cpu_simd for the widening.
template <class Index>
CpuKernel<float, Index> make_half_merge_kernel(const CsrMatrix<float, Index>& a, Operation op, ValueStorage values,
                                               int threads, int simd);

// Implemented in src/cpu/tuned_operator.cpp: Algorithm::Tune (docs/algorithms/tuning.md), starting
// from Auto's choice (`auto_choice` with `auto_threads`).
template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_tuned_cpu_operator(const CsrMatrix<Value, Index>& a, Operation op,
                                                                const Options& options, Algorithm auto_choice,
                                                                int auto_threads);

// Implemented in src/cpu/reordered_operator.cpp: Options::reorder (the operator of P A P^T behind the
// permutations of x and y).
template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_reordered_cpu_operator(const CsrMatrix<Value, Index>& a,
                                                                    Algorithm algorithm, Operation op,
                                                                    const Options& options);

#ifdef SPMV_HAS_MKL
// Implemented in src/cpu/mkl_baseline.cpp (compiled only with SPMV_WITH_MKL): the MKL baseline.
template <class Value, class Index>
CpuKernel<Value, Index> make_mkl_kernel(const CsrMatrix<Value, Index>& a, Operation op, std::int64_t expected_applies);
#endif

#ifdef SPMV_HAS_EIGEN
// Implemented in src/cpu/eigen_baseline.cpp (compiled only with Eigen): the vendor baseline.
template <class Value, class Index>
CpuKernel<Value, Index> make_eigen_kernel(const CsrMatrix<Value, Index>& a, Operation op);
#endif

}  // namespace spmv::detail
