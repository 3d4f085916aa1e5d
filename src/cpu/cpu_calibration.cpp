// The CPU rule's cost scales (core/auto_rule.hpp, CpuFormatScales) measured on the running CPU. The
// rule's costs were fitted on one machine, and how fast SELL's gathers, DIA's streams and the row loop's
// row ends run differs between CPUs by more than the rule's margin: with the hint, SELL took 0.36-0.72
// of the row loop's time on a Sapphire Rapids core, and was slower than it on small files on Zen 4
// (docs/ALGORITHMS.md, "CPU Auto"; docs/PERFORMANCE.md). Three small synthetic matrices built here
// (regular and irregular short rows, a band) are multiplied by the row loop and by SELL or DIA,
// alternately, on one thread; each scale is a measured ratio over the ratio the fitted costs predict,
// rounded to a third of an octave (bounded() says why). About 90 ms per value type (80 ms of timing, the
// window that keeps the scales steady: measure(); 2-core Zen 4 VM), once per process, and only when a
// conversion is weighed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "spmv/csr.hpp"

namespace spmv::detail {
namespace {

using Index = std::int32_t;

// Short rows near the diagonal: of 5 nonzeros each (`irregular` false), or of 3-7 changing from row to
// row (true): the rows where the rule weighs SELL against CSR (road networks, circuit and FEM matrices
// of 3-15 per row), with and without the mispredicted row ends that CSR pays per length change.
template <class Value>
CsrMatrix<Value, Index> short_rows(Index n, bool irregular) {
  CsrMatrix<Value, Index> a;
  a.rows = a.cols = n;
  for (Index r = 0; r < n; ++r) {
    const Index length = irregular ? 3 + (r * 7) % 5 : 5;
    std::vector<Index> cols;
    for (Index t = 0; t < length; ++t) cols.push_back((r + t * 37 + n - 64) % n);
    std::sort(cols.begin(), cols.end());
    for (Index t = 0; t < length; ++t) {
      a.col_idx.push_back(cols[t]);
      a.values.push_back(Value(1) / Value(t + 2));
    }
    a.row_ptr.push_back(static_cast<Index>(a.col_idx.size()));
  }
  return a;
}

// Five full diagonals (offsets 0, +-1, +-128): where the rule weighs DIA against CSR (stencils, bands).
template <class Value>
CsrMatrix<Value, Index> banded(Index n) {
  CsrMatrix<Value, Index> a;
  a.rows = a.cols = n;
  for (Index r = 0; r < n; ++r) {
    for (Index d : {-128, -1, 0, 1, 128})
      if (r + d >= 0 && r + d < n) {
        a.col_idx.push_back(r + d);
        a.values.push_back(d == 0 ? Value(4) : Value(-1));
      }
    a.row_ptr.push_back(static_cast<Index>(a.col_idx.size()));
  }
  return a;
}

// A synthetic matrix with what the rule reads of it (counted once).
template <class Value>
struct Probe {
  CsrMatrix<Value, Index> a;
  RowShape shape;
  CpuFormatSlots slots;
};

template <class Value>
Probe<Value> probe(CsrMatrix<Value, Index> a) {
  Options options;
  options.expected_applies = std::numeric_limits<std::int32_t>::max();  // count both formats' slots
  auto [shape, slots] = count_formats(a, options, sizeof(Value), 1);
  return {std::move(a), shape, slots};
}

// A product to time, and its prediction from the fitted costs.
template <class Value>
struct Sample {
  const Probe<Value>* p;
  Algorithm algorithm;
  double seconds = std::numeric_limits<double>::infinity();  // measured, one product
};

// One thread; the samples alternate in rounds of at least kRoundSeconds each, kRounds rounds a block,
// blocks repeated until kWindowSeconds have passed, and keep their minima (a round slowed by other work
// is slower, never faster). The window, not the number of rounds, is what makes the scales steady: on
// the 2-core Zen 4 VM (docs/PERFORMANCE.md, "A steady CPU calibration") the host slows this VM's
// memory-reading loops in episodes of 10-50 ms (now and then a few hundred), most often in the first
// tens of ms of a process's work: the row loop runs 1.5-1.7x slower, SELL and DIA 1.2-1.35x, register-only
// loops not at all. A calibration inside one episode, 5 rounds in ~12 ms, read SELL's scale as 0.57-0.80
// instead of 0.95 (f32) / 0.83 (f64), in 5-30% of the processes of a batch; with the window, in 6 of 340
// processes (all right after a generated matrix of millions of nonzeros was built), and the rounding
// (bounded()) absorbed those.
template <class Value>
void measure(std::vector<Sample<Value>>& samples) {
  constexpr int kRounds = 5;
  constexpr double kRoundSeconds = 0.4e-3;
  constexpr double kWindowSeconds = 80e-3;
  Options options;
  options.threads = 1;
  std::vector<CpuKernel<Value, Index>> kernels;
  for (const auto& s : samples) kernels.push_back(build_kernel(s.p->a, s.algorithm, Operation::NonTranspose, options));
  std::vector<Value> x(std::size_t{1} << 16, Value(1)), y(std::size_t{1} << 16);
  const auto start = std::chrono::steady_clock::now();
  do {
    const auto best = time_alternately(samples.size(), kRounds, kRoundSeconds, true, [&](std::size_t k) {
      kernels[k].run(Value(1), x.data(), Value(0), y.data());
    });
    for (std::size_t k = 0; k < samples.size(); ++k) samples[k].seconds = std::min(samples[k].seconds, best[k]);
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kWindowSeconds);
}

template <class Value>
double predicted_ms(const Sample<Value>& s, const CpuFormatScales& scales = {}) {
  return cpu_product_ms(s.algorithm, s.p->shape, s.p->slots, sizeof(Value), scales);
}

// Outside this range the measurement, not the CPU, is suspect: a clamped scale keeps a disturbed
// calibration from turning the rule upside down. Within it, a scale is rounded to the nearest of
// kScaleStepsPerOctave steps an octave (powers of 2^(1/3): ..., 0.63, 0.79, 1, 1.26, ...; the clamp's ends
// are steps). Even a steady measurement moves by 1-3% from process to process, and a matrix whose choice
// turns on a scale within that of the measured one (rmat f64 and EX5 f64 on the Zen 4 VM, at SELL 0.81 and
// 0.83) changed plans between processes; rounded, every process of one machine reads the same scale unless
// the machine's own lies within ~2% of a step's edge (the VM's f32 SELL 0.93-0.97 and f64 0.80-0.84 are
// 4-6% from the edges at 0.89 and 0.89). The cost: a scale off by up to 12%, about the fitted costs' own
// error per matrix (kCpuMinGain's 10%); near the rule's boundary a race decides (kCpuRuleBand).
constexpr double kScaleStepsPerOctave = 3;
double bounded(double scale) {
  const double clamped = std::clamp(scale, 0.25, 4.0);
  return std::exp2(std::round(std::log2(clamped) * kScaleStepsPerOctave) / kScaleStepsPerOctave);
}

template <class Value>
CpuFormatScales calibrate() {
  if (!cpu_measuring_allowed()) return {};
  const Probe<Value> regular = probe(short_rows<Value>(Index{1} << 14, false));
  const Probe<Value> irregular = probe(short_rows<Value>(Index{1} << 14, true));
  const Probe<Value> band = probe(banded<Value>(Index{1} << 15));
  std::vector<Sample<Value>> s = {{&regular, Algorithm::RowLoop}, {&regular, Algorithm::Sell},
                                  {&irregular, Algorithm::RowLoop}, {&band, Algorithm::RowLoop},
                                  {&band, Algorithm::Dia}};
  measure(s);
  CpuFormatScales scales;
  // Each format against the row loop on the same matrix, over the ratio the fitted costs predict.
  scales.sell = bounded(s[1].seconds / s[0].seconds / (predicted_ms(s[1]) / predicted_ms(s[0])));
  scales.dia = bounded(s[4].seconds / s[3].seconds / (predicted_ms(s[4]) / predicted_ms(s[3])));
  // The row loop's cost of changing lengths: the irregular rows' time (in the regular rows' predicted
  // units) beyond what their nonzeros and rows cost, over what the fitted costs say.
  const double without_changes = predicted_ms(s[2], CpuFormatScales{1, 1, 0});
  const double measured_change = s[2].seconds / s[0].seconds * predicted_ms(s[0]) - without_changes;
  scales.length_change = bounded(measured_change / (predicted_ms(s[2]) - without_changes));
  return scales;
}

}  // namespace

bool cpu_measuring_allowed() {
  const char* env = std::getenv("SPMV_CPU_CALIBRATION");
  return !(env && std::string(env) == "0");
}

template <class Value>
const CpuFormatScales& cpu_format_scales() {
  static const CpuFormatScales scales = calibrate<Value>();  // thread-safe, once per process
  return scales;
}

std::string cpu_scales_policy(const CpuFormatScales& s) {
  if (s.dia == 1 && s.sell == 1 && s.length_change == 1) return "fitted costs";
  char words[96];
  std::snprintf(words, sizeof words, "costs x dia %.2f sell %.2f length-change %.2f on this cpu", s.dia, s.sell,
                s.length_change);
  return words;
}

template const CpuFormatScales& cpu_format_scales<float>();
template const CpuFormatScales& cpu_format_scales<double>();

}  // namespace spmv::detail
