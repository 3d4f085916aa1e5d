#include "core/tuner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/auto_rule.hpp"
#include "core/debug_log.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

// Row-statistics pruning of the space. Deliberately looser than Auto's thresholds
// (src/cuda/dispatch.cu: kLongRowFactor 32, kIrregularCv 1.0, kScalarMaxMean 8) so that near Auto's
// boundaries the tuner still tries the algorithm on the other side of them.
// A longest row above this multiple of (mean + 1) counts as a long row.
constexpr double kTryLongRowFactor = 16.0;
// Row lengths varying more than this relative to the mean count as irregular.
constexpr double kTryIrregularCv = 0.5;
// A thread per row (csr-scalar, transpose-atomic) is tried up to this mean row length.
constexpr double kTryScalarMaxMean = 16.0;
// CPU column-chunked is tried only when x exceeds this many bytes (about a last-level-cache share;
// below it the whole x stays cached and chunking only adds cursor traffic).
constexpr double kColumnChunkedMinXBytes = 8.0 * 1024 * 1024;

// Axis values: powers of two (the kernels are compiled for these widths, STYLE.md §6).
const std::vector<int> kBlockSizes{64, 128, 256, 512};
const std::vector<int> kWidths{2, 4, 8, 16, 32};  // csr-vector sub-warp widths (kMinSubwarp = 2)
const std::vector<int> kCoops{1, 2, 4, 8, 16, 32};
const std::vector<int> kRepeats{1, 2, 4, 8, 16, 32};

int index_of_nearest(const std::vector<int>& values, double target) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(values.size()); ++i)
    if (std::abs(std::log2(double(values[i])) - std::log2(std::max(target, 1e-9))) <
        std::abs(std::log2(double(values[best])) - std::log2(std::max(target, 1e-9))))
      best = i;
  return best;
}

Axis axis(Knob knob, std::vector<int> values, double seed_value) {
  Axis a{knob, std::move(values), 0};
  a.seed = index_of_nearest(a.values, seed_value);
  return a;
}

// csr-vector splits rows only at widths up to 8 lanes (kFlatMaxWidth, src/cuda/csr_vector.cu).
constexpr int kUnsplitWidth = 16;

// The index in kWidths of the widest sub-warp width at which every row's sub-warp is resident at once
// (rows * width / 32 warps within TuningInputs::resident_warps); -1 when unknown or none fits.
int one_wave_width(const TuningInputs& in) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(kWidths.size()); ++i)
    if (in.resident_warps > 0 && double(in.rows) * kWidths[i] / 32.0 <= double(in.resident_warps)) best = i;
  return best;
}

bool contains(const std::vector<Algorithm>& list, Algorithm a) {
  return std::find(list.begin(), list.end(), a) != list.end();
}

// The axes of an algorithm, leaving out knobs the user set. Seeds: the block sizes of the algorithms'
// policies (src/cuda/<algorithm>.cu) and the row-statistics estimates their fixed rules start from
// (csr_coop.md: coop ~ sqrt(mean), repeat ~ rows*coop/(block*1500); csr_vector.md: width ~ mean).
// Only seeds: when one is off, the neighbours still explore the axis, and a neighbour that resolves
// to the policy's own choice is recognized by the backend (same policy) and costs no product.
std::vector<Axis> axes_of(Algorithm a, const TuningInputs& in) {
  std::vector<Axis> axes;
  const Options& u = in.user;
  const double mean = in.row_mean;
  if (in.backend == Backend::Cpu) {
    if (a == Algorithm::MergeParallel && u.threads == 0 && in.max_threads > 1) {
      std::vector<int> threads;
      for (int t = 1; t < in.max_threads; t *= 2) threads.push_back(t);
      threads.push_back(in.max_threads);
      axes.push_back(axis(Knob::Threads, threads, in.auto_threads));
    }
    return axes;
  }
  switch (a) {
    case Algorithm::CsrVector:
      // Seeded where csr-vector's own rule puts short rows, a quarter of the typical row (width_for,
      // csr_vector.md), so that both halving and doubling are tried (fem3d:n=100, 14.8 a row, seeded at
      // the mean: 8, 16 and 32 tried, best 4; H100, 2026-11-26). On irregular rows the typical row is
      // shorter than the mean (a few long rows carry it): mean / cv (rmat scale 20: best width 2 at
      // mean 15, cv ~3; H200, issue 9).
      // In a launch-bound product of irregular rows the width axis also jumps to the widest width whose
      // sub-warps all fit in one wave of the device (one_wave_width): there csr-vector splits no row
      // (it splits long rows at 8 lanes and fewer, atomics and a workspace), and lanes idle on short rows
      // cost nothing while the long rows' chains shrink. PGPgiantcompo (10,680 rows, mean 4.6, longest
      // 205) is seeded at 2 lanes and its best, 16, lay three steps away (H200, 2026-11-29: 81.5% of
      // the exhaustive best after ten products; docs/PERFORMANCE.md).
      if (u.subwarp == 0) {
        const bool irregular_rows = in.row_std > mean && mean > 0;
        const double typical = irregular_rows ? mean * mean / in.row_std : mean;
        Axis width = axis(Knob::Subwarp, kWidths, typical / 4.0);
        if (irregular_rows && in.nnz < kLaunchBoundNnz) {
          const int jump = one_wave_width(in);
          if (jump > width.seed && kWidths[jump] >= kUnsplitWidth) width.jump = jump;
        }
        axes.push_back(width);
      }
      if (u.block_size == 0) axes.push_back(axis(Knob::BlockSize, kBlockSizes, 128));
      break;
    case Algorithm::CsrCoop: {
      const double coop = std::clamp(std::sqrt(std::max(mean, 1.0)), 1.0, 32.0);
      if (u.coop == 0) axes.push_back(axis(Knob::Coop, kCoops, coop));
      if (u.repeat == 0)
        axes.push_back(axis(Knob::Repeat, kRepeats, std::max(1.0, double(in.rows) * coop / (128.0 * 1500.0))));
      if (u.block_size == 0) axes.push_back(axis(Knob::BlockSize, kBlockSizes, 128));
      break;
    }
    case Algorithm::CsrScalar:
    case Algorithm::CsrAdaptive:
    case Algorithm::TransposeAtomic:
      if (u.block_size == 0) axes.push_back(axis(Knob::BlockSize, kBlockSizes, 256));
      break;
    default:  // merge-path, Hola and the formats: their policies only (value-dependent tiles)
      break;
  }
  return axes;
}

}  // namespace

std::string_view to_string(Knob knob) {
  switch (knob) {
    case Knob::BlockSize: return "block_size";
    case Knob::Coop: return "coop";
    case Knob::Repeat: return "repeat";
    case Knob::Subwarp: return "subwarp";
    case Knob::Threads: return "threads";
  }
  return "unknown";
}

int& knob_field(Options& o, Knob knob) {
  switch (knob) {
    case Knob::BlockSize: return o.block_size;
    case Knob::Coop: return o.coop;
    case Knob::Repeat: return o.repeat;
    case Knob::Subwarp: return o.subwarp;
    case Knob::Threads: return o.threads;
  }
  throw std::logic_error("knob_field: unknown knob");
}

std::int64_t conversion_min_applies(Algorithm a, Backend backend) {
  // docs/PERFORMANCE.md, H200 2026-11-21/23, "pays off after (products, vs fastest CSR)": the
  // smallest value over the suite. Not measured on the CPU, where the same table is used (the CPU
  // conversions are host loops of the same order of cost per nonzero as one product, or more) except
  // for compressed CSR, whose CUDA conversion runs on the device and the CPU's on the host.
  switch (a) {
    case Algorithm::ExplicitTranspose: return 19;   // 19-105 (686 on poisson2d f32)
    case Algorithm::Dia: return 36;                 // 36-54 on the stencils, refused elsewhere
    case Algorithm::EllR: return 38;                // 38-146
    case Algorithm::Hyb: return 138;                // 138-408, never on irregular rows
    case Algorithm::Sell: return 641;               // 641-2640
    case Algorithm::CompressedCsr:  // device conversion 123-1761 (2026-11-23); host 22 000-43 000
      return backend == Backend::Cuda ? 123 : 22000;
    case Algorithm::ColumnChunked:  // CUDA: its blocks, 12-151 (2026-11-30; Auto's choice where x exceeds L2);
      return backend == Backend::Cuda ? 12 : 0;  // the CPU's cursors convert nothing
    default: return 0;
  }
}

TuningSpace build_tuning_space(const TuningInputs& in) {
  const double mean = in.row_mean;
  const bool long_rows = double(in.row_max) > kTryLongRowFactor * (mean + 1);
  const bool irregular = in.row_std > kTryIrregularCv * mean;
  const bool short_rows = mean <= kTryScalarMaxMean;
  const bool transpose = in.op == Operation::Transpose;

  std::vector<Algorithm> csr;  // CSR alternatives, most promising first
  std::vector<Algorithm> converted;
  if (in.backend == Backend::Cpu) {
    if (in.max_threads > 1) csr.push_back(Algorithm::MergeParallel);
    csr.push_back(Algorithm::RowLoop);
    if (double(transpose ? in.rows : in.cols) * in.value_bytes > kColumnChunkedMinXBytes)
      csr.push_back(Algorithm::ColumnChunked);
  } else if (!transpose) {
    if (!long_rows && !irregular) {
      if (short_rows) csr.push_back(Algorithm::CsrScalar);
      csr.insert(csr.end(), {Algorithm::CsrVector, Algorithm::CsrCoop});
    } else {
      csr.insert(csr.end(), {Algorithm::CsrVector, Algorithm::Hola});
      csr.push_back(long_rows ? Algorithm::SegmentedSum : Algorithm::CsrAdaptive);
      csr.insert(csr.end(), {Algorithm::MergePath, Algorithm::CsrCoop});
    }
  } else {
    // segmented-sum: Auto's copy-free A^T x for long rows and from 2^20 nonzeros.
    csr.insert(csr.end(), {Algorithm::SegmentedSum, Algorithm::Hola});
    if (!long_rows && !irregular && short_rows) csr.push_back(Algorithm::TransposeAtomic);
    csr.insert(csr.end(), {Algorithm::CsrVector, Algorithm::HolaBuffered});
  }

  // Converted formats: only with the caller's hint, when the most optimistic measured payback fits
  // in it, and when the row statistics do not rule the format out (padding, banding).
  if (in.user.expected_applies > 0) {
    const double ell_padding = mean > 0 ? double(in.row_max) / mean : 0;
    const double max_padding = in.user.max_padding > 0 ? in.user.max_padding : 3.0;
    std::vector<Algorithm> formats;
    if (transpose && contains(in.offered, Algorithm::ExplicitTranspose)) {
      formats.push_back(Algorithm::ExplicitTranspose);
    } else {
      if (!long_rows && !irregular) formats.push_back(Algorithm::Dia);  // banded matrices have regular rows
      formats.push_back(Algorithm::CompressedCsr);
      if (ell_padding <= max_padding) formats.push_back(Algorithm::EllR);
      if (!irregular) formats.push_back(Algorithm::Hyb);
      if (!long_rows) formats.push_back(Algorithm::Sell);
    }
    for (Algorithm f : formats)
      if (in.user.expected_applies >= conversion_min_applies(f, in.backend)) converted.push_back(f);
  }

  auto usable = [&](Algorithm a) { return contains(in.offered, a) && !contains(in.excluded, a); };
  TuningSpace space;
  auto add = [&](Algorithm a, bool converts) {
    for (const Family& f : space.families)
      if (f.algorithm == a) return;
    space.families.push_back({a, axes_of(a, in), converts});
  };
  add(in.auto_choice, conversion_min_applies(in.auto_choice, in.backend) > 0);
  // Screening order: the best CSR alternative, then the converted formats the hint allows (they read
  // fewer bytes, the largest wins measured), then the other CSR alternatives.
  std::vector<Algorithm> c, v;
  for (Algorithm a : csr)
    if (usable(a)) c.push_back(a);
  for (Algorithm a : converted)
    if (usable(a)) v.push_back(a);
  if (!c.empty()) add(c[0], false);
  for (std::size_t i = 0; i < v.size() && i < 2; ++i) add(v[i], true);
  for (std::size_t i = 1; i < c.size(); ++i) add(c[i], false);
  for (std::size_t i = 2; i < v.size(); ++i) add(v[i], true);
  return space;
}

// ---- Tuner ----------------------------------------------------------------------------------------

Tuner::Tuner(TuningSpace space, int max_samples) : space_(std::move(space)), max_samples_(max_samples) {
  if (space_.families.empty()) throw std::logic_error("Tuner: empty space");
  const int screened = std::min<int>(kMaxScreenedFamilies, static_cast<int>(space_.families.size()));
  for (int f = 0; f < screened; ++f) {
    Candidate c{f, std::vector<int>(space_.families[f].axes.size(), -1)};
    screening_.push_back(find_or_add(c));
  }
}

int Tuner::find_or_add(const Candidate& c) {
  for (int i = 0; i < point_count(); ++i)
    if (points_[i].candidate == c) return i;
  points_.push_back({c});
  return point_count() - 1;
}

Options Tuner::options(int c, const Options& user) const {
  Options o = user;
  const Candidate& cand = points_[c].candidate;
  const Family& f = space_.families[cand.family];
  for (std::size_t i = 0; i < f.axes.size(); ++i)
    if (cand.position[i] >= 0) knob_field(o, f.axes[i].knob) = f.axes[i].values[cand.position[i]];
  return o;
}

std::string Tuner::label(int c) const {
  const Candidate& cand = points_[c].candidate;
  const Family& f = space_.families[cand.family];
  std::string s = "#" + std::to_string(c) + " " + std::string(spmv::to_string(f.algorithm));
  if (c == 0) s += " (auto)";
  for (std::size_t i = 0; i < f.axes.size(); ++i)
    if (cand.position[i] >= 0)
      s += " " + std::string(to_string(f.axes[i].knob)) + "=" + std::to_string(f.axes[i].values[cand.position[i]]);
  return s;
}

void Tuner::log(int c, double ms, std::string decision, double warmup_ms, int products) {
  trajectory_.push_back({c, c >= 0 ? label(c) : std::string(), ms, warmup_ms, products, decision});
  if (debug_log_enabled())
    std::fprintf(stderr, "[spmv] tune %s: %.6f ms (mean of %d, warm-up %.6f ms) -> %s\n",
                 c >= 0 ? label(c).c_str() : "-", ms, products, warmup_ms, decision.c_str());
}

std::vector<TuningStep> Tuner::steps() const {
  std::vector<TuningStep> out;
  for (const TunerEvent& e : trajectory_) out.push_back({e.label, e.ms, e.warmup_ms, e.products, e.decision});
  return out;
}

std::vector<TuningCandidate> Tuner::exhaustive_space() const {
  std::vector<TuningCandidate> out;
  for (int f = 0; f < static_cast<int>(space_.families.size()); ++f) {
    const Family& fam = space_.families[f];
    std::vector<int> pos(fam.axes.size(), -1);  // odometer over {-1, 0, .., n-1} per axis
    while (true) {
      TuningCandidate c;
      c.algorithm = fam.algorithm;
      c.label = std::string(spmv::to_string(fam.algorithm));
      bool policy_point = true;
      Options o;
      for (std::size_t i = 0; i < fam.axes.size(); ++i)
        if (pos[i] >= 0) {
          policy_point = false;
          knob_field(o, fam.axes[i].knob) = fam.axes[i].values[pos[i]];
          c.label += " " + std::string(to_string(fam.axes[i].knob)) + "=" + std::to_string(fam.axes[i].values[pos[i]]);
        }
      if (f == 0 && policy_point) {
        c.algorithm = Algorithm::Auto;
        c.label += " (auto)";
      }
      c.block_size = o.block_size;
      c.coop = o.coop;
      c.repeat = o.repeat;
      c.subwarp = o.subwarp;
      c.threads = o.threads;
      out.push_back(c);
      std::size_t i = 0;
      for (; i < pos.size(); ++i) {
        if (++pos[i] < static_cast<int>(fam.axes[i].values.size())) break;
        pos[i] = -1;
      }
      if (i == pos.size()) break;
    }
  }
  return out;
}

void Tuner::queue_neighbours(int c, bool after_the_queue) {
  if (!after_the_queue) queue_.clear();
  const Candidate cand = points_[c].candidate;
  const Family& f = space_.families[cand.family];
  for (std::size_t i = 0; i < f.axes.size(); ++i) {
    const Axis& ax = f.axes[i];
    const int p = cand.position[i];
    const std::vector<int> steps = p < 0 ? std::vector<int>{ax.seed, ax.jump, ax.seed - 1, ax.seed + 1}
                                         : std::vector<int>{p - 1, p + 1};
    for (int q : steps) {
      if (q < 0 || q >= static_cast<int>(ax.values.size())) continue;
      Candidate n = cand;
      n.position[i] = q;
      const int idx = find_or_add(n);
      if (points_[idx].state == State::New && std::find(queue_.begin(), queue_.end(), idx) == queue_.end())
        queue_.push_back(idx);
    }
  }
}

int Tuner::near_tie_of_another_family() const {
  const int family = points_[best_].candidate.family;
  int tie = -1;
  for (int i = 0; i < point_count(); ++i)
    if (points_[i].candidate.family != family && points_[i].state == State::Sampled &&
        points_[i].estimate < points_[best_].estimate * (1 + kMinGain) &&
        (tie < 0 || points_[i].estimate < points_[tie].estimate))
      tie = i;
  return tie;
}

void Tuner::finish(const std::string& why) {
  settled_ = true;
  log(best_, best_ >= 0 ? points_[best_].estimate : 0.0, why);
}

Tuner::Next Tuner::next() {
  if (settled_) return {Next::Settled, best_};
  const int fallback = best_ >= 0 ? best_ : 0;
  auto run = [&](int p) {
    points_[p].state = State::InFlight;
    in_flight_.push_back(p);
    ++samples_;
    return Next{Next::Run, p};
  };
  // 1. Screening: a fixed list, so it may run ahead of outstanding times.
  while (screened_ < screening_.size()) {
    const int p = screening_[screened_];
    if (points_[p].state != State::New) {
      ++screened_;
      continue;
    }
    if (samples_ >= max_samples_) break;
    if (in_flight() >= kMaxInFlight) return {Next::Wait, fallback};
    ++screened_;
    return run(p);
  }
  // Every later choice depends on the times so far.
  if (!in_flight_.empty()) return {Next::Wait, fallback};
  if (best_ < 0) {  // nothing was timed (every point refused): Auto's choice stands
    settled_ = true;
    best_ = 0;
    log(0, 0, "settled: nothing timed");
    return {Next::Settled, best_};
  }
  if (!searching_) {
    searching_ = true;
    queue_neighbours(best_);
  }
  // 2. Local search around the best, after a second look at a beaten origin.
  if (recheck_ >= 0 && !confirming_ && samples_ < max_samples_) {
    const int p = recheck_;
    recheck_ = -1;
    return run(p);
  }
  for (;;) {
    const int budget = max_samples_ - (tie_explored_ ? 2 : 0);
    while (!confirming_ && !queue_.empty() && samples_ < budget) {
      const int p = queue_.front();
      queue_.erase(queue_.begin());
      if (points_[p].state == State::New) return run(p);
    }
    if (confirming_ || tie_explored_ || samples_ + 2 >= max_samples_) break;
    tie_explored_ = true;
    queue_.clear();
    if (const int tie = near_tie_of_another_family(); tie >= 0) queue_neighbours(tie);
  }
  // 3. Confirmation of a near tie.
  if (!confirming_) {
    confirming_ = true;
    int runner = -1;
    for (int i = 0; i < point_count(); ++i)
      if (i != best_ && points_[i].state == State::Sampled &&
          (runner < 0 || points_[i].estimate < points_[runner].estimate))
        runner = i;
    if (runner >= 0 && points_[runner].estimate <= points_[best_].estimate * (1 + kConfirmBand) &&
        samples_ + 2 <= max_samples_)
      confirm_ = {best_, runner};
  }
  if (!confirm_.empty()) {
    const int p = confirm_.front();
    confirm_.erase(confirm_.begin());
    return run(p);
  }
  finish("settled after " + std::to_string(samples_) + " samples");
  return {Next::Settled, best_};
}

void Tuner::record(int c, double ms, double warmup_ms, int products) {
  const auto it = std::find(in_flight_.begin(), in_flight_.end(), c);
  if (it == in_flight_.end()) throw std::logic_error("Tuner::record: point " + std::to_string(c) + " is not running");
  in_flight_.erase(it);
  Point& p = points_[c];
  p.estimate = p.samples == 0 ? ms : std::min(p.estimate, ms);
  ++p.samples;
  p.state = State::Sampled;
  char ratio[64];
  if (best_ < 0) {
    best_ = origin_ = c;
    return log(c, ms, "best (first)", warmup_ms, products);
  }
  if (c == best_) return log(c, ms, "best (again)", warmup_ms, products);
  const double r = p.estimate / points_[best_].estimate;
  std::snprintf(ratio, sizeof ratio, "%.3f of the best", r);
  if (p.estimate < points_[best_].estimate * (1 - kMinGain)) {
    // A narrow win over the origin's single sample is not trusted (as in the confirmation's band).
    if (best_ == origin_ && points_[best_].samples == 1 && r >= 1 - kConfirmBand && !confirming_) recheck_ = best_;
    best_ = c;
    log(c, ms, std::string("best (") + ratio + ")", warmup_ms, products);
    if (searching_ && !confirming_) queue_neighbours(c);
    return;
  }
  // A lead: faster than the best by more than kLeadGain, but not by kMinGain. It does not replace the best (noise must not
  // move the search), but its neighbours are worth the samples left after the best's own.
  if (r < 1 - kLeadGain && searching_ && !confirming_) {
    queue_neighbours(c, true);
    return log(c, ms, std::string("lead (") + ratio + ")", warmup_ms, products);
  }
  if (r > kPruneRatio) {
    p.state = State::Pruned;
    return log(c, ms, std::string("pruned (") + ratio + ")", warmup_ms, products);
  }
  log(c, ms, std::string("kept (") + ratio + ")", warmup_ms, products);
}

void Tuner::refuse(int c, const std::string& why) {
  const auto it = std::find(in_flight_.begin(), in_flight_.end(), c);
  if (it == in_flight_.end()) throw std::logic_error("Tuner::refuse: point is not running");
  in_flight_.erase(it);
  points_[c].state = State::Refused;
  --samples_;
  log(c, 0, "refused: " + why);
}

void Tuner::duplicate(int c, int earlier) {
  const auto it = std::find(in_flight_.begin(), in_flight_.end(), c);
  if (it == in_flight_.end()) throw std::logic_error("Tuner::duplicate: point is not running");
  in_flight_.erase(it);
  points_[c].state = State::Duplicate;
  --samples_;
  log(c, 0, "same plan as #" + std::to_string(earlier));
}

void Tuner::stop(const std::string& why) {
  if (settled_) return;
  if (!in_flight_.empty()) throw std::logic_error("Tuner::stop: times are outstanding");
  if (best_ < 0) best_ = 0;
  finish(why);
}

bool Tuner::settle_on(const Candidate& c, const std::string& why) {
  if (c.family < 0 || c.family >= static_cast<int>(space_.families.size())) return false;
  const Family& f = space_.families[c.family];
  if (c.position.size() != f.axes.size()) return false;
  for (std::size_t i = 0; i < f.axes.size(); ++i)
    if (c.position[i] < -1 || c.position[i] >= static_cast<int>(f.axes[i].values.size())) return false;
  best_ = find_or_add(c);
  settled_ = true;
  log(best_, 0, "settled: " + why);
  return true;
}

}  // namespace spmv::detail

namespace spmv {
Options with_knobs(const Options& user, const TuningCandidate& c) {
  Options o = user;
  if (c.block_size > 0) o.block_size = c.block_size;
  if (c.coop > 0) o.coop = c.coop;
  if (c.repeat > 0) o.repeat = c.repeat;
  if (c.subwarp > 0) o.subwarp = c.subwarp;
  if (c.threads > 0) o.threads = c.threads;
  return o;
}
}  // namespace spmv
