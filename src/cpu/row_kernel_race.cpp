// Auto's CSR row kernel on the CPU, chosen by timing the candidates on the matrix itself
// (cpu::detail::ShortRows, src/cpu/csr_simd.hpp). Which kernel wins is a property of the CPU and the
// matrix together: on a Sapphire Rapids core a vector per row ran 1.1-2.1x the rule's loop on FEM rows of
// 45-60, R-MAT and road networks in f64, and 0.3-0.5x on f32 rows of 4-7; rows in lanes 1.1-1.3x on f32
// rows of 2-5 of scattered columns and 0.1-0.9x elsewhere; on Zen 3/4 gathers lost to the scalar loops
// (docs/algorithms/cpu_simd.md). No rule from row statistics separates these, so Auto measures:
//  - with the expected-applies hint (>= kRaceMinApplies): whole products of each candidate plan;
//  - without it, on matrices of at least kSampleMinNonzeros whose x fits in kSampleMaxXBytes: the kernels
//    alone, on one thread, on three blocks of rows (a quarter, half and three quarters down the matrix)
//    of kSampleNonzeros nonzeros in all: about 1 ms once per plan (setup_ms). A sample stands for the
//    whole product only where x stays in cache in both: on larger x the sampled times favoured the scalar
//    loop (a 17-point band in f64: a tie in the sample, 1.2x for a vector per row over the whole product;
//    2-core Sapphire Rapids VM, 2026-11-27), so those keep the rule without the hint.
// Challengers are only the kernels that waste few lanes here (kRaceMaxLanesPerNonzero), so that no
// candidate is slow enough to make the race itself expensive. SPMV_CPU_CALIBRATION=0 and
// Options::deterministic skip both races (the rule's kernel, the same in every run).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"

namespace spmv::detail {
namespace {

using cpu::detail::ShortRows;

// kRaceRounds, kRaceSampleSeconds, kRaceMargin: cpu_operator.hpp. The sampled race's margin:
constexpr double kSampleMargin = 0.9;
// The sampled race: nonzeros timed per candidate run, and the largest x (bytes) it is run for (the L2 of
// one core of the CPUs measured: 1-2 MiB).
constexpr std::int64_t kSampleNonzeros = std::int64_t{1} << 15;
constexpr std::int64_t kSampleMaxXBytes = std::int64_t{1} << 20;

// The rule's kernel (-1) and the challengers that waste at most kRaceMaxLanesPerNonzero lanes on A; with
// `scalar_loops`, also the scalar loop the rule did not pick (plain or unrolled: choose_row_kernels' row
// statistics, fitted from 12 nonzeros a row up, miss shorter rows where unrolling gains: bayer10, 4.4 a
// row, ran 0.043 ms unrolled against 0.048 plain in f32 and f64; 2-core Zen 4 VM, one thread,
// docs/PERFORMANCE.md "A steady CPU calibration"). Only the hint's race of whole products takes it: the
// sampled race without the hint times rows, not plans, and stays as it was measured.
template <class Value, class Index>
std::vector<int> candidates(const CsrMatrix<Value, Index>& a, bool scalar_loops) {
  std::vector<int> list = {-1};
  if (scalar_loops) {
    const cpu::detail::RowKernels rule =
        cpu::detail::row_kernels<Value, Index>(-1, a.row_ptr.data(), a.col_idx.data(), a.rows, a.cols);
    list.push_back(static_cast<int>(rule.short_rows == ShortRows::Unrolled ? ShortRows::Plain : ShortRows::Unrolled));
  }
  for (ShortRows k : {ShortRows::Lanes, ShortRows::Vector}) {
    if (k == ShortRows::Lanes && sizeof(Index) > sizeof(Value)) continue;  // runs the plain loop there
    if (cpu::detail::lanes_per_nonzero<Value, Index>(k, a.row_ptr.data(), a.rows) <=
        cpu::detail::kRaceMaxLanesPerNonzero)
      list.push_back(static_cast<int>(k));
  }
  return list;
}

// The fastest candidate that beats the rule's (index 0) by the margin; 0 if none does.
std::size_t winner(const std::vector<double>& best, double margin) {
  std::size_t w = 0;
  for (std::size_t c = 1; c < best.size(); ++c)
    if (best[c] < margin * best[0] && best[c] < best[w]) w = c;
  return w;
}

// " rows raced: rule 0.412 ms, lanes 0.318 ms, vector 0.505 ms; lanes"
std::string race_words(const std::string& what, const std::vector<int>& list, const std::vector<double>& best,
                       std::size_t w) {
  std::string words = " " + what + ":";
  for (std::size_t c = 0; c < list.size(); ++c) {
    char ms[32];
    std::snprintf(ms, sizeof ms, " %.3g ms", best[c] * 1e3);
    words += (c ? ", " : " ") + std::string(c ? cpu::detail::kRowKernelNames[list[c]] : "rule") + ms;
  }
  return words + "; " + std::string(w ? cpu::detail::kRowKernelNames[list[w]] : "rule");
}

// Whole products of each plan on x = 1, raced by time_alternately: each plan's fastest sample.
template <class Value, class Index>
std::vector<double> time_plans(const CsrMatrix<Value, Index>& a,
                               const std::vector<const CpuKernel<Value, Index>*>& plans,
                               double sample_seconds = kRaceSampleSeconds) {
  const std::vector<Value> x(static_cast<std::size_t>(a.cols), Value(1));
  std::vector<Value> y(static_cast<std::size_t>(a.rows));
  return time_alternately(plans.size(), kRaceRounds, sample_seconds, false, [&](std::size_t c) {
    plans[c]->run(Value(1), x.data(), Value(0), y.data());
  });
}

}  // namespace

template <class Value, class Index>
std::optional<CpuKernel<Value, Index>> race_row_kernels(const CsrMatrix<Value, Index>& a, Algorithm algorithm,
                                                        const Options& options, std::string& why) {
  if (!cpu_measuring_allowed()) return std::nullopt;
  const std::vector<int> list = candidates(a, true);
  std::vector<CpuKernel<Value, Index>> kernels;
  for (int k : list) {
    Options o = options;
    o.cpu_rows = k;
    kernels.push_back(build_kernel(a, algorithm, Operation::NonTranspose, o));
  }
  std::vector<const CpuKernel<Value, Index>*> plans;
  for (const auto& k : kernels) plans.push_back(&k);
  const auto best = time_plans(a, plans);
  const std::size_t w = winner(best, kRaceMargin);
  why += race_words("rows raced", list, best, w);
  return std::move(kernels[w]);
}

template <class Value, class Index>
int sample_row_kernels(const CsrMatrix<Value, Index>& a, std::string& why) {
  const std::int64_t nnz = a.nnz();
  if (!cpu_measuring_allowed() || nnz < kSampleMinNonzeros ||
      std::int64_t{a.cols} * static_cast<std::int64_t>(sizeof(Value)) > kSampleMaxXBytes)
    return -1;
  const std::vector<int> list = candidates(a, false);
  if (list.size() == 1) return -1;
  // Three blocks of rows, each from a quarter point down to kSampleNonzeros / 3 nonzeros.
  std::vector<std::pair<Index, Index>> blocks;
  for (int q = 1; q <= 3; ++q) {
    const auto first = static_cast<Index>(std::int64_t{a.rows} * q / 4);
    const auto target = static_cast<Index>(std::min<std::int64_t>(a.row_ptr[first] + kSampleNonzeros / 3, nnz));
    const auto last = static_cast<Index>(
        std::lower_bound(a.row_ptr.begin() + first, a.row_ptr.end(), target) - a.row_ptr.begin());
    blocks.emplace_back(first, std::max(first, std::min(last, a.rows)));
  }
  std::vector<cpu::detail::RowKernels> kernels;
  for (int k : list)
    kernels.push_back(cpu::detail::row_kernels<Value, Index>(k, a.row_ptr.data(), a.col_idx.data(), a.rows, a.cols));
  const std::vector<Value> x(static_cast<std::size_t>(a.cols), Value(1));
  std::vector<Value> y(static_cast<std::size_t>(a.rows));
  const auto best = time_alternately(kernels.size(), kRaceRounds, kRaceSampleSeconds, false, [&](std::size_t c) {
    for (const auto& [first, last] : blocks) {
      if (kernels[c].long_rows)
        cpu::detail::csr_rows_simd(a.row_ptr.data(), a.col_idx.data(), a.values.data(), x.data(), first, last,
                                   Value(1), Value(0), y.data(), kernels[c].short_rows);
      else
        cpu::detail::csr_rows_short(kernels[c].short_rows, a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                                    x.data(), first, last, Value(1), Value(0), y.data());
    }
  });
  const std::size_t w = winner(best, kSampleMargin);
  why += race_words("rows sampled (" + std::to_string(kSampleNonzeros) + " nonzeros)", list, best, w);
  return list[w];
}

template <class Value, class Index>
std::optional<CpuKernel<Value, Index>> race_row_groups(const CsrMatrix<Value, Index>& a,
                                                       const CpuKernel<Value, Index>& incumbent,
                                                       const Options& options, std::string& why) {
  if (!cpu_measuring_allowed()) return std::nullopt;
  // Fewer nonzeros per load of x than a gather's lanes: SELL and the gather kernels read x with fewer
  // instructions (bcsstk13, 3.8 per load: row groups ran 2x slower than SELL; docs/algorithms/cpu_simd.md).
  const std::int64_t nnz = a.nnz();
  const std::int64_t lanes = row_group_lanes<Value, Index>();
  const RowGroupsShape shape = row_groups_shape(a, nnz / lanes);
  if (shape.runs * shape.lanes > nnz) return std::nullopt;
  std::optional<CpuKernel<Value, Index>> groups = make_row_groups_kernel(a, options);
  const auto best = time_plans(a, {&incumbent, &*groups});
  const bool faster = best[1] < kRaceMargin * best[0];
  char words[96];
  std::snprintf(words, sizeof words, " row groups raced (%.1f nonzeros a load): chosen %.3g ms, groups %.3g ms; %s",
                double(nnz) / double(std::max<std::int64_t>(shape.runs, 1)), best[0] * 1e3, best[1] * 1e3,
                faster ? "groups" : "chosen");
  why += words;
  if (!faster) return std::nullopt;
  return groups;
}

template <class Value, class Index>
bool unconverted_is_faster(const CsrMatrix<Value, Index>& a, const CpuKernel<Value, Index>& converted,
                           Algorithm plain, const Options& options, std::string& why, bool converted_must_win) {
  if (!cpu_measuring_allowed()) return false;
  const CpuKernel<Value, Index> unconverted = build_kernel(a, plain, Operation::NonTranspose, options);
  const auto race = [&] {
    const auto best = time_plans(a, {&converted, &unconverted}, kConversionRaceSampleSeconds);
    const bool faster = converted_must_win ? !(best[0] < kRaceMargin * best[1]) : best[1] < kRaceMargin * best[0];
    return std::pair{best, faster};
  };
  auto [best, faster] = race();
  // Overriding the rule's conversion takes a second race that agrees (the first may have sat in one of the
  // host's slow episodes: see kConversionRaceSampleSeconds).
  if (faster && !converted_must_win) std::tie(best, faster) = race();
  char words[112];
  std::snprintf(words, sizeof words, " conversion raced: converted %.3g ms, %s %.3g ms; %s", best[0] * 1e3,
                std::string(to_string(plain)).c_str(), best[1] * 1e3, faster ? "unconverted" : "converted");
  why += words;
  return faster;
}

template <class Value, class Index>
bool second_format_is_faster(const CsrMatrix<Value, Index>& a, const CpuKernel<Value, Index>& first, Algorithm first_name,
                             const CpuKernel<Value, Index>& second, Algorithm second_name, std::string& why) {
  if (!cpu_measuring_allowed()) return false;
  const auto best = time_plans(a, {&first, &second}, kConversionRaceSampleSeconds);
  const bool faster = best[1] < best[0];
  char words[112];
  std::snprintf(words, sizeof words, " formats raced: %s %.3g ms, %s %.3g ms;", std::string(to_string(first_name)).c_str(),
                best[0] * 1e3, std::string(to_string(second_name)).c_str(), best[1] * 1e3);
  why += words;
  return faster;
}

#define SPMV_INSTANTIATE(V, I)                                                                                \
  template bool second_format_is_faster(const CsrMatrix<V, I>&, const CpuKernel<V, I>&, Algorithm,           \
                                        const CpuKernel<V, I>&, Algorithm, std::string&);                     \
  template bool unconverted_is_faster(const CsrMatrix<V, I>&, const CpuKernel<V, I>&, Algorithm, const Options&, \
                                      std::string&, bool);                                                    \
  template std::optional<CpuKernel<V, I>> race_row_groups(const CsrMatrix<V, I>&, const CpuKernel<V, I>&,     \
                                                          const Options&, std::string&);                      \
  template std::optional<CpuKernel<V, I>> race_row_kernels(const CsrMatrix<V, I>&, Algorithm, const Options&, \
                                                           std::string&);                                     \
  template int sample_row_kernels(const CsrMatrix<V, I>&, std::string&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
