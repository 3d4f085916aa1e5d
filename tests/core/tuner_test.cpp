// The run-time tuner's search on simulated timings (no device): convex, non-convex, noisy and tied
// landscapes, the sample budget, pruning, out-of-order times (CUDA events read back late), refusals
// and duplicates, the space built from row statistics, and wisdom files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/auto_rule.hpp"
#include "core/tuner.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

using TimeFn = std::function<double(Algorithm, const Options&)>;

struct Outcome {
  int best = -1;
  std::string best_label;
  int samples = 0;
  std::vector<int> runs;  // points in the order they ran
  bool settled = false;
};

// Policy point: coop 2, block 128 (the seeds of coop_space()).
int coop_of(const Options& o) { return o.coop ? o.coop : 2; }
int block_of(const Options& o) { return o.block_size ? o.block_size : 128; }
// csr-vector's width: 0 is the policy's (not resolved here, so a width equal to it costs a sample).
int width_of(const Options& o) { return o.subwarp; }

// Drives the tuner with `time`; `lag` products run before their time is known (0: at once). Like the
// backends, a point that resolves to the plan of an earlier one (same algorithm, same effective
// coop and block) is reported as a duplicate.
Outcome drive(Tuner& tuner, const TimeFn& time, int lag = 0, int max_products = 100) {
  Outcome out;
  std::deque<std::pair<int, double>> pending;
  std::map<std::string, int> built;
  auto resolved = [&](int c) {
    const Options o = tuner.options(c, {});
    return std::string(to_string(tuner.algorithm(c))) + "/" + std::to_string(coop_of(o)) + "/" +
           std::to_string(block_of(o)) + "/" + std::to_string(width_of(o));
  };
  for (int product = 0; product < max_products; ++product) {
    Tuner::Next n = tuner.next();
    while (n.kind == Tuner::Next::Run) {
      const auto [it, fresh] = built.emplace(resolved(n.candidate), n.candidate);
      if (fresh || it->second == n.candidate) break;
      tuner.duplicate(n.candidate, it->second);
      n = tuner.next();
    }
    if (n.kind == Tuner::Next::Settled) break;
    if (n.kind == Tuner::Next::Run) {
      out.runs.push_back(n.candidate);
      pending.emplace_back(n.candidate, time(tuner.algorithm(n.candidate), tuner.options(n.candidate, {})));
    }
    while (static_cast<int>(pending.size()) > (n.kind == Tuner::Next::Wait ? 0 : lag)) {
      tuner.record(pending.front().first, pending.front().second);
      pending.pop_front();
    }
  }
  out.settled = tuner.settled();
  out.best = tuner.best();
  out.best_label = tuner.label(out.best);
  out.samples = tuner.samples();
  return out;
}

Axis make_axis(Knob k, std::vector<int> values, int seed) { return Axis{k, std::move(values), seed}; }

// One family (csr-coop) with a coop axis 1..32 (seed at 2) and a block axis 64..512 (seed 128).
TuningSpace coop_space() {
  TuningSpace s;
  s.families.push_back({Algorithm::CsrCoop,
                        {make_axis(Knob::Coop, {1, 2, 4, 8, 16, 32}, 1), make_axis(Knob::BlockSize, {64, 128, 256, 512}, 1)},
                        false});
  s.families.push_back({Algorithm::CsrVector, {}, false});
  s.families.push_back({Algorithm::Hola, {}, false});
  return s;
}

TEST(Tuner, ConvexLandscapeReachesTheOptimumWithinTheBudget) {
  // Minimum at coop 16, block 256; the other families are 40% slower than the policy point.
  const TimeFn time = [](Algorithm a, const Options& o) {
    if (a != Algorithm::CsrCoop) return 14.0;
    const double c = std::log2(coop_of(o)) - 4, b = std::log2(block_of(o)) - 8;
    return 1.0 + 0.1 * (c * c + b * b);
  };
  Tuner tuner(coop_space());
  const Outcome out = drive(tuner, time);
  ASSERT_TRUE(out.settled);
  EXPECT_LE(out.samples, kMaxTuningSamples);
  const Options o = tuner.options(out.best, {});
  EXPECT_EQ(tuner.algorithm(out.best), Algorithm::CsrCoop);
  EXPECT_EQ(coop_of(o), 16) << out.best_label;
  EXPECT_EQ(block_of(o), 256) << out.best_label;
}

TEST(Tuner, NonConvexLandscapeFindsTheBetterFamilyAndStaysWithinTheBudget) {
  // The coop axis has a local minimum at its seed (coop 2) and the global one at coop 32 behind a
  // bump; another family (hola) is better than both: screening finds it, the local search cannot
  // walk over the bump.
  const TimeFn time = [](Algorithm a, const Options& o) {
    if (a == Algorithm::Hola) return 0.8;
    if (a == Algorithm::CsrVector) return 1.6;
    static const std::map<int, double> coop{{1, 1.2}, {2, 1.0}, {4, 1.3}, {8, 1.5}, {16, 1.1}, {32, 0.7}};
    return coop.at(coop_of(o)) * (block_of(o) == 128 ? 1.0 : 1.2);
  };
  Tuner tuner(coop_space());
  const Outcome out = drive(tuner, time);
  ASSERT_TRUE(out.settled);
  EXPECT_LE(out.samples, kMaxTuningSamples);
  EXPECT_EQ(tuner.algorithm(out.best), Algorithm::Hola);
  // 0.7 / 0.8 = 87.5% of the exhaustive best: the search is local, not exhaustive (documented).
  EXPECT_GE(0.7 / tuner.estimate(out.best), 0.85);
}

TEST(Tuner, ALeadsNeighboursAreExplored) {
  // coop 4 is 2.5% faster than the policy point (coop 2): not enough to move the best (kMinGain), but
  // a lead, so its neighbour coop 8 (20% faster, reachable only through it) is sampled and wins.
  // H200, 2026-11-30: bayer10 f32 (csr-vector 4 lanes 0.971 of Auto's 2, the sweep's best at 8) and
  // stencil27 f64 (8 lanes 0.977, the best at 8 lanes in blocks of 64) were such landscapes.
  const TimeFn time = [](Algorithm a, const Options& o) {
    if (a == Algorithm::CsrVector) return 1.3;
    if (a == Algorithm::Hola) return 1.4;
    static const std::map<int, double> coop{{1, 1.1}, {2, 1.0}, {4, 0.975}, {8, 0.8}, {16, 1.15}, {32, 1.2}};
    return coop.at(coop_of(o)) * (block_of(o) == 128 ? 1.0 : 1.05);
  };
  Tuner tuner(coop_space());
  const Outcome out = drive(tuner, time);
  ASSERT_TRUE(out.settled);
  EXPECT_LE(out.samples, kMaxTuningSamples);
  EXPECT_EQ(coop_of(tuner.options(out.best, {})), 8) << out.best_label;
  bool lead = false;
  for (const TunerEvent& e : tuner.trajectory()) lead = lead || e.decision.rfind("lead", 0) == 0;
  EXPECT_TRUE(lead);
}

TEST(Tuner, ANearTieOfAnotherFamilyHasItsNeighboursExplored) {
  // H200, 2026-11-30, poisson3d 140^3 f64: Auto's csr-vector and csr-scalar screened at 0.992 of it (a
  // tie: the hysteresis keeps Auto's choice), csr-vector's knobs all within 3% of it, and csr-scalar in
  // blocks of 64 7% faster than anything of csr-vector's; the search settled on csr-vector at 93.3% of
  // the exhaustive best. Here csr-scalar's blocks of 64 (one step from its policy's 128) are 4% faster.
  TuningSpace space;
  space.families.push_back({Algorithm::CsrVector,
                            {make_axis(Knob::Subwarp, {2, 4, 8}, 0), make_axis(Knob::BlockSize, {64, 128, 256, 512}, 1)},
                            false});
  space.families.push_back({Algorithm::CsrScalar, {make_axis(Knob::BlockSize, {64, 128, 256, 512}, 1)}, false});
  space.families.push_back({Algorithm::CsrCoop, {}, false});
  const TimeFn time = [](Algorithm a, const Options& o) {
    if (a == Algorithm::CsrCoop) return 2.5;
    if (a == Algorithm::CsrVector) return o.subwarp == 4 ? 1.46 : o.subwarp == 8 ? 1.9 : o.block_size == 64 ? 0.99 : 1.0;
    static const std::map<int, double> scalar{{64, 0.955}, {128, 0.992}, {256, 1.0}, {512, 1.01}};
    return scalar.at(block_of(o));
  };
  Tuner tuner(space);
  const Outcome out = drive(tuner, time);
  std::string path;
  for (const TunerEvent& e : tuner.trajectory()) path += e.label + ": " + e.decision + "\n";
  ASSERT_TRUE(out.settled);
  EXPECT_LE(out.samples, kMaxTuningSamples);
  EXPECT_EQ(tuner.algorithm(out.best), Algorithm::CsrScalar) << path;
  EXPECT_EQ(block_of(tuner.options(out.best, {})), 64) << path;
}

TEST(Tuner, ABeatenOriginIsSampledAgain) {
  // The policy point (Auto's choice, the first sample) is the fastest, but its first sample runs 1.5x
  // slow, as the first product after a plan is built can (H200, 2026-11-30: watt_2 f64's first burst
  // 5.7 us, later 3.7). csr-vector at 1.4 takes the best from it on that sample by less than
  // kConfirmBand; the origin's second sample wins it back.
  int origin_samples = 0;
  const TimeFn time = [&](Algorithm a, const Options& o) {
    if (a == Algorithm::CsrVector) return 1.4;
    if (a == Algorithm::Hola) return 1.45;
    if (coop_of(o) == 2 && block_of(o) == 128) return ++origin_samples == 1 ? 1.5 : 1.0;
    return 1.47;
  };
  Tuner tuner(coop_space());
  const Outcome out = drive(tuner, time);
  ASSERT_TRUE(out.settled);
  EXPECT_LE(out.samples, kMaxTuningSamples);
  EXPECT_EQ(out.best, 0) << out.best_label;
  EXPECT_GE(origin_samples, 2);
}

TEST(Tuner, SettlesWithinTheBudgetOnRandomLandscapes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.5, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::map<std::string, double> table;
    Tuner tuner(coop_space());
    const TimeFn time = [&](Algorithm a, const Options& o) {
      const std::string key = std::string(to_string(a)) + std::to_string(coop_of(o)) + "/" + std::to_string(block_of(o));
      if (!table.count(key)) table[key] = u(rng);
      return table[key];
    };
    const Outcome out = drive(tuner, time);
    ASSERT_TRUE(out.settled) << "trial " << trial;
    EXPECT_LE(out.samples, kMaxTuningSamples) << "trial " << trial;
    EXPECT_LE(static_cast<int>(out.runs.size()), kMaxTuningSamples);
    // The settled point is the best estimate, up to the hysteresis kMinGain.
    double lowest = 1e300;
    for (int i = 0; i < tuner.point_count(); ++i)
      if (tuner.estimate(i) > 0) lowest = std::min(lowest, tuner.estimate(i));
    EXPECT_LE(tuner.estimate(out.best), lowest / (1 - kMinGain) + 1e-12) << "trial " << trial;
  }
}

TEST(Tuner, NeverRerunsAPrunedPointAndRerunsOnlyToConfirm) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.5, 3.0);
  int pruned_total = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::map<std::string, double> table;
    Tuner tuner(coop_space());
    const TimeFn time = [&](Algorithm a, const Options& o) {
      const std::string key = std::string(to_string(a)) + std::to_string(coop_of(o)) + "/" + std::to_string(block_of(o));
      if (!table.count(key)) table[key] = u(rng);
      return table[key];
    };
    const Outcome out = drive(tuner, time);
    std::set<int> pruned;
    std::map<int, int> runs;
    for (int c : out.runs) ++runs[c];
    // A pruned point ran once (the sample that pruned it) and never again.
    for (const TunerEvent& e : tuner.trajectory()) {
      if (e.ms > 0 && e.decision.rfind("settled", 0) != 0)
        EXPECT_FALSE(pruned.count(e.candidate)) << "trial " << trial << ": pruned " << e.label << " ran again";
      if (e.decision.rfind("pruned", 0) == 0) pruned.insert(e.candidate);
    }
    pruned_total += static_cast<int>(pruned.size());
    int reruns = 0;
    for (const auto& [c, n] : runs) reruns += n - 1;
    // A beaten origin once, then the best and one runner-up, once each.
    EXPECT_LE(reruns, 3) << "trial " << trial;
  }
  EXPECT_GT(pruned_total, 0) << "the landscapes never exercised pruning";
}

TEST(Tuner, ResultIndependentOfNoiseBelowOnePercent) {
  // Every pair of distinct times differs by >= 10% and no ratio sits near kPruneRatio or 1 - kMinGain,
  // so multiplicative noise up to +-1% cannot change a decision.
  const TimeFn truth = [](Algorithm a, const Options& o) {
    if (a == Algorithm::Hola) return 2.0;
    if (a == Algorithm::CsrVector) return 1.25;
    static const std::map<int, double> coop{{1, 1.0}, {2, 0.8}, {4, 0.6}, {8, 0.5}, {16, 0.62}, {32, 1.1}};
    return coop.at(coop_of(o)) * (block_of(o) == 256 ? 0.85 : block_of(o) == 128 ? 1.0 : 1.15);
  };
  Tuner clean(coop_space());
  const Outcome expected = drive(clean, truth);
  ASSERT_TRUE(expected.settled);
  for (int seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(-0.01, 0.01);
    Tuner tuner(coop_space());
    const Outcome out = drive(tuner, [&](Algorithm a, const Options& o) { return truth(a, o) * (1 + noise(rng)); });
    EXPECT_EQ(out.best_label, expected.best_label) << "seed " << seed;
    EXPECT_EQ(out.runs, expected.runs) << "seed " << seed;
  }
}

TEST(Tuner, TiesKeepAutosChoice) {
  for (double other : {1.0, 0.99, 1.01}) {
    Tuner tuner(coop_space());
    const Outcome out = drive(tuner, [&](Algorithm a, const Options&) { return a == Algorithm::CsrCoop ? 1.0 : other; });
    ASSERT_TRUE(out.settled);
    EXPECT_EQ(out.best, 0) << "other at " << other << ": " << out.best_label;
  }
}

TEST(Tuner, OutstandingTimesGiveTheSameChoice) {
  const TimeFn time = [](Algorithm a, const Options& o) {
    if (a != Algorithm::CsrCoop) return 3.0;
    const double c = std::log2(coop_of(o)) - 3;
    return 1.0 + 0.2 * c * c + (block_of(o) == 128 ? 0.0 : 0.3);
  };
  Tuner now(coop_space());
  const Outcome expected = drive(now, time, 0);
  for (int lag : {1, 2, 3}) {
    Tuner later(coop_space());
    const Outcome out = drive(later, time, lag);
    ASSERT_TRUE(out.settled) << "lag " << lag;
    EXPECT_EQ(out.best_label, expected.best_label) << "lag " << lag;
    EXPECT_LE(out.samples, kMaxTuningSamples);
  }
}

TEST(Tuner, RefusedAndDuplicatePointsCostNoSample) {
  Tuner tuner(coop_space());
  int refused = 0, duplicates = 0;
  for (int product = 0; product < 50 && !tuner.settled(); ++product) {
    Tuner::Next n = tuner.next();
    while (n.kind == Tuner::Next::Run && (tuner.algorithm(n.candidate) == Algorithm::Hola ||
                                          (n.candidate != 0 && tuner.options(n.candidate, {}).coop == 2 &&
                                           tuner.options(n.candidate, {}).block_size == 0))) {
      if (tuner.algorithm(n.candidate) == Algorithm::Hola) {
        tuner.refuse(n.candidate, "refused");
        ++refused;
      } else {
        tuner.duplicate(n.candidate, 0);  // coop=2 is what the policy picks
        ++duplicates;
      }
      n = tuner.next();
    }
    if (n.kind == Tuner::Next::Run) tuner.record(n.candidate, 1.0 + 0.01 * n.candidate);
  }
  EXPECT_TRUE(tuner.settled());
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(duplicates, 1);
  int timed = 0;
  for (const TunerEvent& e : tuner.trajectory())
    if (e.decision.rfind("best", 0) == 0 || e.decision.rfind("kept", 0) == 0 || e.decision.rfind("lead", 0) == 0 ||
        e.decision.rfind("pruned", 0) == 0)
      ++timed;
  EXPECT_EQ(tuner.samples(), timed);
}

TEST(Tuner, NothingTimedSettlesOnAutosChoice) {
  TuningSpace s;
  s.families.push_back({Algorithm::CsrVector, {}, false});
  Tuner tuner(s);
  const Tuner::Next first = tuner.next();
  ASSERT_EQ(first.kind, Tuner::Next::Run);
  tuner.refuse(first.candidate, "no");
  EXPECT_EQ(tuner.next().kind, Tuner::Next::Settled);
  EXPECT_EQ(tuner.best(), 0);
}

TEST(Tuner, SettleOnRejectsPointsOutsideTheSpace) {
  Tuner tuner(coop_space());
  EXPECT_FALSE(tuner.settle_on({5, {}}, "x"));
  EXPECT_FALSE(tuner.settle_on({0, {9, -1}}, "x"));
  EXPECT_FALSE(tuner.settled());
  EXPECT_TRUE(tuner.settle_on({0, {3, -1}}, "x"));
  EXPECT_TRUE(tuner.settled());
  EXPECT_EQ(tuner.options(tuner.best(), {}).coop, 8);
  EXPECT_EQ(tuner.next().kind, Tuner::Next::Settled);
}

TEST(Tuner, StopSettlesOnTheBestSoFarAndRefusesWhileTimesAreOutstanding) {
  Tuner tuner(coop_space());
  const Tuner::Next a = tuner.next(), b = tuner.next();
  ASSERT_EQ(a.kind, Tuner::Next::Run);
  ASSERT_EQ(b.kind, Tuner::Next::Run);
  tuner.record(a.candidate, 2.0);
  EXPECT_THROW(tuner.stop("budget"), std::logic_error);  // b's time is still outstanding
  tuner.record(b.candidate, 1.0);
  tuner.stop("budget");
  EXPECT_TRUE(tuner.settled());
  EXPECT_EQ(tuner.best(), b.candidate);
  EXPECT_EQ(tuner.next().kind, Tuner::Next::Settled);

  Tuner untimed(coop_space());  // nothing timed: Auto's choice
  untimed.stop("budget");
  EXPECT_TRUE(untimed.settled());
  EXPECT_EQ(untimed.best(), 0);
}

TEST(Tuner, ExhaustiveSpaceCoversEveryAxisValue) {
  Tuner tuner(coop_space());
  const auto space = tuner.exhaustive_space();
  EXPECT_EQ(space.size(), 7u * 5u + 1 + 1);  // coop {policy, 6 values} x block {policy, 4 values}, vector, hola
  EXPECT_EQ(space[0].algorithm, Algorithm::Auto);
  std::set<std::string> labels;
  for (const auto& c : space) labels.insert(c.label);
  EXPECT_EQ(labels.size(), space.size());
}

// ---- The space from row statistics ---------------------------------------------------------------

TuningInputs cuda_inputs(double mean, double stddev, std::int64_t max) {
  TuningInputs in;
  in.backend = Backend::Cuda;
  in.op = Operation::NonTranspose;
  in.rows = 1000000;
  in.cols = 1000000;
  in.nnz = static_cast<std::int64_t>(mean * 1e6);
  in.row_mean = mean;
  in.row_std = stddev;
  in.row_max = max;
  in.auto_choice = Algorithm::CsrScalar;
  in.offered = {Algorithm::CsrScalar, Algorithm::CsrVector, Algorithm::CsrCoop, Algorithm::CsrAdaptive,
                Algorithm::MergePath, Algorithm::Hola,      Algorithm::SegmentedSum, Algorithm::Dia,
                Algorithm::EllR,      Algorithm::Sell,      Algorithm::Hyb,          Algorithm::CompressedCsr};
  return in;
}

bool has(const TuningSpace& s, Algorithm a) {
  return std::any_of(s.families.begin(), s.families.end(), [&](const Family& f) { return f.algorithm == a; });
}

TEST(TuningSpace, ConvertsOnlyWithAnExpectedAppliesHintThatRepaysTheConversion) {
  TuningInputs in = cuda_inputs(5, 0.3, 5);
  TuningSpace s = build_tuning_space(in);
  EXPECT_EQ(s.families[0].algorithm, Algorithm::CsrScalar);
  for (const Family& f : s.families) EXPECT_FALSE(f.converts) << to_string(f.algorithm);
  in.user.expected_applies = 10;  // below every measured payback
  for (const Family& f : build_tuning_space(in).families) EXPECT_FALSE(f.converts) << to_string(f.algorithm);
  in.user.expected_applies = 40;
  s = build_tuning_space(in);
  EXPECT_TRUE(has(s, Algorithm::Dia));
  EXPECT_TRUE(has(s, Algorithm::EllR));
  EXPECT_FALSE(has(s, Algorithm::Sell));  // repaid after 641 products at best
  in.excluded = {Algorithm::Dia};          // e.g. Auto already tried it and DIA refused
  EXPECT_FALSE(has(build_tuning_space(in), Algorithm::Dia));
}

TEST(TuningSpace, RowStatisticsPrune) {
  // Power-law rows: no thread-per-row kernel, no DIA/ELL-R/HYB/SELL even with a large hint.
  TuningInputs in = cuda_inputs(8, 40, 5000);
  in.auto_choice = Algorithm::Hola;
  in.user.expected_applies = 1000000;
  const TuningSpace s = build_tuning_space(in);
  EXPECT_EQ(s.families[0].algorithm, Algorithm::Hola);
  EXPECT_FALSE(has(s, Algorithm::CsrScalar));
  EXPECT_FALSE(has(s, Algorithm::Dia));
  EXPECT_FALSE(has(s, Algorithm::EllR));
  EXPECT_FALSE(has(s, Algorithm::Sell));
  EXPECT_TRUE(has(s, Algorithm::CsrVector));
  EXPECT_TRUE(has(s, Algorithm::SegmentedSum));  // long rows: the power-law kernel is a candidate
  EXPECT_TRUE(has(s, Algorithm::CompressedCsr));
  EXPECT_FALSE(has(build_tuning_space(cuda_inputs(8, 0.3, 9)), Algorithm::SegmentedSum));  // regular rows
}

TEST(TuningSpace, CsrVectorWidthSeededAtTheTypicalRowOnIrregularRows) {
  // The seed is a quarter of the typical row (csr-vector's L / 4): mean 16 with regular rows seeds 4;
  // with cv 4 the typical row is mean / cv = 4 long, which seeds 1, i.e. the narrowest width, 2.
  TuningInputs regular = cuda_inputs(16, 2, 40);
  regular.auto_choice = Algorithm::CsrVector;
  TuningInputs irregular = cuda_inputs(16, 64, 5000);
  irregular.auto_choice = Algorithm::CsrVector;
  auto width_seed = [](const TuningSpace& s) {
    for (const Axis& a : s.families[0].axes)
      if (a.knob == Knob::Subwarp) return a.values[a.seed];
    return -1;
  };
  EXPECT_EQ(width_seed(build_tuning_space(regular)), 4);
  EXPECT_EQ(width_seed(build_tuning_space(irregular)), 2);
}

// The one-wave jump: only for launch-bound products of irregular rows on a device whose resident warps are
// known, to the widest width whose sub-warps all fit at once, and only when that width splits no row.
TEST(TuningSpace, CsrVectorWidthJumpsToOneWaveOnSmallIrregularMatrices) {
  auto width_jump = [](const TuningSpace& s) {
    for (const Axis& a : s.families[0].axes)
      if (a.knob == Knob::Subwarp) return a.jump < 0 ? -1 : a.values[a.jump];
    return -2;
  };
  auto small = [](double mean, double stddev, std::int64_t rows) {
    TuningInputs in = cuda_inputs(mean, stddev, 200);
    in.rows = in.cols = rows;
    in.nnz = static_cast<std::int64_t>(mean * double(rows));
    in.auto_choice = Algorithm::CsrVector;
    in.resident_warps = 132 * 64;  // an H200
    return in;
  };
  EXPECT_EQ(width_jump(build_tuning_space(small(4.6, 8.1, 10680))), 16);  // 10680 * 16 / 32 <= 8448 < * 32
  EXPECT_EQ(width_jump(build_tuning_space(small(4.6, 8.1, 5000))), 32);
  EXPECT_EQ(width_jump(build_tuning_space(small(4.6, 2.0, 10680))), -1);   // regular rows: no split to avoid
  EXPECT_EQ(width_jump(build_tuning_space(small(4.6, 8.1, 40000))), -1);   // one wave only at 4 lanes (splits)
  TuningInputs unknown = small(4.6, 8.1, 10680);
  unknown.resident_warps = 0;
  EXPECT_EQ(width_jump(build_tuning_space(unknown)), -1);
  TuningInputs large = small(4.6, 8.1, 10680);
  large.nnz = kLaunchBoundNnz;  // not launch-bound
  EXPECT_EQ(width_jump(build_tuning_space(large)), -1);
  TuningInputs set = small(4.6, 8.1, 10680);
  set.user.subwarp = 4;  // a width the user set is not varied
  EXPECT_EQ(width_jump(build_tuning_space(set)), -2);
}

// A landscape like PGPgiantcompo's (power-law rows, mean 4.6, std 8.1, longest 205; microseconds, from
// its H200 sweeps): Auto's csr-vector at 2 lanes, the best at 16 (4.56 us), three doublings away, 4 lanes
// within the tuner's 3% of 2 and 8 slower (all three split the rows past their head). Seeded at 2, the
// search stops at its neighbours; the one-wave jump tries 16 in the first neighbour round.
TEST(Tuner, IrregularRowsReachAWideWidthThroughTheJump) {
  TuningInputs in = cuda_inputs(4.6, 8.1, 205);
  in.rows = 10680;
  in.cols = 10680;
  in.nnz = 48632;
  in.auto_choice = Algorithm::CsrVector;
  in.resident_warps = 132 * 64;
  const TimeFn time = [](Algorithm a, const Options& o) {
    if (a != Algorithm::CsrVector) return 6.5;
    const std::map<int, double> by_width{{0, 5.44}, {2, 5.44}, {4, 5.41}, {8, 5.63}, {16, 4.99}, {32, 5.2}};
    return by_width.at(width_of(o)) + 0.05 * std::abs(std::log2(block_of(o) / 128.0));
  };
  Tuner tuner(build_tuning_space(in));
  const Outcome out = drive(tuner, time);
  ASSERT_TRUE(out.settled);
  EXPECT_LE(out.samples, kMaxTuningSamples);
  EXPECT_EQ(tuner.algorithm(out.best), Algorithm::CsrVector);
  EXPECT_EQ(width_of(tuner.options(out.best, {})), 16) << out.best_label;

  // Without the jump the same search stops short of 16.
  TuningSpace no_jump = build_tuning_space(in);
  for (Axis& a : no_jump.families[0].axes) a.jump = -1;
  Tuner plain(no_jump);
  const Outcome before = drive(plain, time);
  EXPECT_NE(width_of(plain.options(before.best, {})), 16) << before.best_label;
}

TEST(TuningSpace, KnobsTheUserSetAreNotVaried) {
  TuningInputs in = cuda_inputs(30, 2, 40);
  in.auto_choice = Algorithm::CsrVector;
  in.user.coop = 4;
  in.user.block_size = 256;
  for (const Family& f : build_tuning_space(in).families)
    for (const Axis& a : f.axes) {
      EXPECT_NE(a.knob, Knob::Coop);
      EXPECT_NE(a.knob, Knob::BlockSize);
    }
  Tuner tuner(build_tuning_space(in));
  for (const auto& c : tuner.exhaustive_space()) {
    EXPECT_EQ(with_knobs(in.user, c).coop, 4);
    EXPECT_EQ(with_knobs(in.user, c).block_size, 256);
  }
}

TEST(TuningSpace, CpuThreadsAxisSeededAtAutosThreads) {
  TuningInputs in;
  in.backend = Backend::Cpu;
  in.rows = in.cols = 1000;
  in.nnz = 5000;
  in.row_mean = 5;
  in.auto_choice = Algorithm::MergeParallel;
  in.offered = {Algorithm::RowLoop, Algorithm::MergeParallel, Algorithm::ColumnChunked};
  in.max_threads = 8;
  in.auto_threads = 4;
  const TuningSpace s = build_tuning_space(in);
  ASSERT_EQ(s.families[0].algorithm, Algorithm::MergeParallel);
  ASSERT_EQ(s.families[0].axes.size(), 1u);
  EXPECT_EQ(s.families[0].axes[0].values, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(s.families[0].axes[0].values[s.families[0].axes[0].seed], 4);
  EXPECT_FALSE(has(s, Algorithm::ColumnChunked));  // x of 8 KB stays cached
}

// ---- Wisdom ---------------------------------------------------------------------------------------

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() / ("spmv_tuner_test_" + name + "_" +
                                                         std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                                         ".json")).string()) {
    std::filesystem::remove(path);
  }
  ~TempFile() { std::filesystem::remove(path); }
};

WisdomKey sample_key() {
  WisdomKey k{"test device", "f64", "i32", "N", false, 10, 10, 30, "fnv1a64:0000000000000001"};
  return k;
}

TEST(TuningWisdom, RoundTripReplaceAndStaleEntries) {
  TempFile f("roundtrip");
  std::string note;
  EXPECT_FALSE(load_wisdom(f.path, sample_key(), &note));  // no file: no wisdom, no error
  WisdomEntry e{sample_key(), "csr-coop", {{"coop", 8}, {"block_size", 256}}, 0.5, 9};
  save_wisdom(f.path, e);
  auto back = load_wisdom(f.path, sample_key());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->algorithm, "csr-coop");
  auto knobs = back->knobs;
  std::sort(knobs.begin(), knobs.end());
  EXPECT_EQ(knobs, (std::vector<std::pair<std::string, int>>{{"block_size", 256}, {"coop", 8}}));
  // Replacing the entry of the same key, adding one of another key.
  e.algorithm = "csr-vector";
  e.knobs = {{"subwarp", 4}};
  save_wisdom(f.path, e);
  WisdomEntry other = e;
  other.key.operation = "T";
  save_wisdom(f.path, other);
  back = load_wisdom(f.path, sample_key());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->algorithm, "csr-vector");
  // The same sizes with another structure: stale, ignored, and said so.
  WisdomKey changed = sample_key();
  changed.structure = "fnv1a64:0000000000000002";
  EXPECT_FALSE(load_wisdom(f.path, changed, &note));
  EXPECT_NE(note.find("stale"), std::string::npos) << note;
  WisdomKey device = sample_key();
  device.device = "another";
  EXPECT_FALSE(load_wisdom(f.path, device, &note));
}

TEST(TuningWisdom, CorruptFileIsAClearErrorAndIsNotOverwritten) {
  TempFile f("corrupt");
  for (const std::string text : {std::string("{ not json"), std::string("{\"entries\": []}"),
                                 std::string("{\"spmv_tuning_wisdom\": 1, \"entries\": [{\"device\": 3}]}")}) {
    { std::ofstream(f.path) << text; }
    try {
      load_wisdom(f.path, sample_key());
      ADD_FAILURE() << "no error for: " << text;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(f.path), std::string::npos) << e.what();
    }
    EXPECT_THROW(save_wisdom(f.path, WisdomEntry{sample_key(), "csr-vector", {}, 1, 1}), ParseError);
    std::ifstream in(f.path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text);
  }
}

TEST(TuningWisdom, CandidateMapsBackToThePoint) {
  Tuner tuner(coop_space());
  const auto c = wisdom_candidate(tuner, WisdomEntry{sample_key(), "csr-coop", {{"coop", 16}}, 1, 1});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->family, 0);
  EXPECT_EQ(c->position, (std::vector<int>{4, -1}));
  EXPECT_FALSE(wisdom_candidate(tuner, WisdomEntry{sample_key(), "csr-coop", {{"coop", 3}}, 1, 1}));
  EXPECT_FALSE(wisdom_candidate(tuner, WisdomEntry{sample_key(), "csr-coop", {{"subwarp", 4}}, 1, 1}));
  EXPECT_FALSE(wisdom_candidate(tuner, WisdomEntry{sample_key(), "dia", {}, 1, 1}));
  ASSERT_TRUE(tuner.settle_on(*c, "test"));
  const WisdomEntry e = wisdom_entry(tuner, tuner.best(), sample_key());
  EXPECT_EQ(e.algorithm, "csr-coop");
  EXPECT_EQ(e.knobs, (std::vector<std::pair<std::string, int>>{{"coop", 16}}));
}

TEST(TuningWisdom, StructureHashSeesRowPointersAndSampledColumns) {
  const std::vector<std::int32_t> rp{0, 2, 3}, cols{0, 1, 1};
  const std::string h = structure_hash<std::int32_t>(2, 2, 3, rp, cols);
  EXPECT_EQ(h, structure_hash<std::int32_t>(2, 2, 3, rp, cols));
  EXPECT_NE(h, structure_hash<std::int32_t>(2, 2, 3, std::vector<std::int32_t>{0, 1, 3}, cols));
  EXPECT_NE(h, structure_hash<std::int32_t>(2, 2, 3, rp, std::vector<std::int32_t>{0, 1, 0}));
  EXPECT_NE(h, structure_hash<std::int32_t>(2, 3, 3, rp, cols));
  const ColumnSample s = wisdom_column_sample(1000000);
  EXPECT_EQ(s.count, kWisdomColumnSample);
  EXPECT_LT((s.count - 1) * s.stride, 1000000);
  EXPECT_EQ(wisdom_column_sample(10).count, 10);
}

}  // namespace
}  // namespace spmv::detail
