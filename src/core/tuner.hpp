#pragma once
// Run-time tuning (issue 9, after Reguly & Giles, InPar 2012: "empirical search on a non-convex
// domain, from 84% to 98% of the best in 7 iterations"). CUDA-free so that the search is tested on
// simulated timings in CI (tests/core/tuner_test.cpp); the CPU tuned operator (src/cpu/tuned_operator.cpp)
// and spmv::cuda::TunedPlan (src/cuda/tuned_plan.cu) drive it with wall-clock and CUDA-event times.
//
// The space: a few algorithm families chosen from row statistics (build_tuning_space), each with a
// few parameter axes (block size, coop, repeat, sub-warp width, CPU threads). A point is an algorithm
// plus, per axis, either "the policy's choice" or one value of the axis. Knobs the user set in
// Options are never varied (STYLE.md §7). Converted formats (SELL, ELL-R, DIA, HYB, compressed CSR,
// explicit transpose) enter only when Options::expected_applies says their conversion can be repaid.
//
// The search (Tuner), one timed product per sample:
//   1. screening: Auto's choice first, then the policy point of each other family, once each;
//   2. local search: the neighbours of the best point (one step along one axis), moving to a
//      neighbour only when it beats the best by more than kMinGain; a neighbour faster by less (a
//      lead) stays behind the best, but its own neighbours join the end of the queue. The first point
//      sampled (Auto's choice), once it loses the best on its single sample by less than kConfirmBand,
//      is sampled once more before anything else: the first sample after a plan is built can run slow
//      (H200: watt_2 f64, 1.54x its later time, lost to csr-coop at 0.968 and never sampled again);
//      When the best's neighbourhood is done, the neighbours of the fastest point of another family
//      within kMinGain of the best (a tie the hysteresis kept behind it) are sampled too, leaving
//      two samples for the confirmation: which of two tied families has the better knob is not
//      known until both are explored (H200: poisson3d 140^3 f64, csr-scalar screened at 0.992 of
//      Auto's csr-vector, its block size 64 7% faster than anything of csr-vector's);
//   3. confirmation: the best and a runner-up within kConfirmBand are sampled once more;
//   then it settles, at the latest after kMaxTuningSamples samples. A sample above kPruneRatio times
//   the best so far prunes its point: it never runs again and its neighbours are not explored.
// A point's estimate is the minimum of its samples (interference only ever adds time).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/operator.hpp"
#include "spmv/tuning.hpp"

namespace spmv::detail {

// The search's constants. First values, chosen against the budget (settle within 10
// products at >= 95% of the exhaustive best) and checked on simulated landscapes in
// tests/core/tuner_test.cpp; to be re-measured with `spmv bench --tune` on the H200 suite.
// At most this many timed products before settling (issue 9: "within <= 10 applies").
inline constexpr int kMaxTuningSamples = 10;
// A point whose sample is above this multiple of the best so far is pruned after one sample
// (Reguly & Giles drop candidates that are clearly worse; 1.5 leaves room for a first sample that
// is 10-20% slow from cold caches or a busy device).
inline constexpr double kPruneRatio = 1.5;
// A challenger replaces the best only when faster by more than this fraction: ties (and noise
// below about half of it) keep the earlier point, Auto's choice first. The target is 95% of
// the best, so missing a gain below 3% costs little, while chasing noise costs samples.
inline constexpr double kMinGain = 0.03;
// A neighbour faster than the best by more than this but less than kMinGain is a lead: its own
// neighbours are queued after the best's. 2% is above the +-1% noise the tests allow (a tie then
// measures at most 0.99 / 1.01 = 0.980 of the other), so noise alone does not send the search off.
inline constexpr double kLeadGain = 0.02;
// After the local search, a runner-up within this fraction of the best gets a second sample, and so
// does the best (one noisy sample must not decide between near-equal points).
inline constexpr double kConfirmBand = 0.10;
// Screening samples at most this many families (Auto's included); the rest of the budget goes to the
// local search around the best.
inline constexpr int kMaxScreenedFamilies = 5;
// Products whose times may still be outstanding while screening continues (CUDA events read back
// later); the local search waits for every outstanding time before choosing the next point.
inline constexpr int kMaxInFlight = 4;

enum class Knob { BlockSize, Coop, Repeat, Subwarp, Threads };
std::string_view to_string(Knob knob);
// The Options field a knob sets.
int& knob_field(Options& options, Knob knob);

struct Axis {
  Knob knob;
  std::vector<int> values;  // increasing
  // Where the policy's choice is expected to sit (a search seed from row statistics, not the policy
  // itself): the neighbours of the policy point on this axis are values[seed-1 .. seed+1].
  int seed = 0;
  // A second estimate from other row statistics, tried with those neighbours when it differs (-1: none).
  int jump = -1;
};

struct Family {
  Algorithm algorithm = Algorithm::Auto;
  std::vector<Axis> axes;
  bool converts = false;  // holds a converted copy of the matrix (built once)
};

struct TuningSpace {
  std::vector<Family> families;  // families[0] is Auto's choice; screening follows this order
};

// What the space is built from. Statistics of op(A)'s stored rows (A's rows for both operations).
struct TuningInputs {
  Backend backend = Backend::Cpu;
  Operation op = Operation::NonTranspose;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double row_mean = 0, row_std = 0;
  std::int64_t row_max = 0;
  int value_bytes = 8;
  Algorithm auto_choice = Algorithm::Auto;  // what Auto resolved to (first family)
  std::vector<Algorithm> offered;           // the backend's algorithms for op
  std::vector<Algorithm> excluded;          // known to refuse here (e.g. DIA that Auto already tried)
  Options user;                             // knobs set here are not varied
  int max_threads = 1;                      // CPU: the OpenMP team
  int auto_threads = 1;                     // CPU: the threads Auto uses (seed of the threads axis)
  std::int64_t resident_warps = 0;          // CUDA: warps the device holds at once (0: unknown)
};

// Minimum expected products for a converted format to enter the space: the fewest products after
// which its conversion was repaid on the H200 suite (docs/PERFORMANCE.md, "pays off after"), i.e.
// the most optimistic measured case; 0 when the algorithm converts nothing.
std::int64_t conversion_min_applies(Algorithm algorithm, Backend backend);

TuningSpace build_tuning_space(const TuningInputs& in);

// A point of the space: family index and, per axis, -1 (the policy's choice) or a value index.
struct Candidate {
  int family = 0;
  std::vector<int> position;
  bool operator==(const Candidate&) const = default;
};

struct TunerEvent {
  int candidate = -1;
  std::string label;
  double ms = 0;         // the sample (0 where none)
  double warmup_ms = 0;  // the untimed first product of the point, if the backend ran one
  int products = 1;      // products the sample timed back to back (ms is their mean)
  std::string decision;  // "best", "kept", "pruned", "refused: ...", "same plan as #k", "settled", ...
};

class Tuner {
 public:
  explicit Tuner(TuningSpace space, int max_samples = kMaxTuningSamples);

  struct Next {
    enum Kind { Run, Wait, Settled } kind;
    int candidate = -1;  // for Run, and for Wait/Settled the point to use now (the best so far)
  };
  // The point to run for the next product. Run: time it and record(); Wait: earlier times are
  // outstanding, run the returned point untimed; Settled: the search is over.
  Next next();
  // ms: the sample's time per product, the mean of `products` back-to-back products.
  void record(int candidate, double ms, double warmup_ms = 0, int products = 1);
  // The point could not be built (the algorithm refused the matrix): no sample spent.
  void refuse(int candidate, const std::string& why);
  // The point resolved to the same plan as `earlier` (the backend compares their policies).
  void duplicate(int candidate, int earlier);
  // Ends the search now on the best point so far (Auto's when nothing was timed): the backend ran out
  // of its apply budget. Every outstanding time must have been recorded.
  void stop(const std::string& why);
  // Settles at once on `c` (from wisdom); false when c is not a point of this space.
  bool settle_on(const Candidate& c, const std::string& why);

  bool settled() const { return settled_; }
  int best() const { return best_; }  // -1 before the first record
  int samples() const { return samples_; }
  int in_flight() const { return static_cast<int>(in_flight_.size()); }
  const TuningSpace& space() const { return space_; }
  const Candidate& candidate(int c) const { return points_[c].candidate; }
  Algorithm algorithm(int c) const { return space_.families[points_[c].candidate.family].algorithm; }
  // The user's options with the point's knobs set.
  Options options(int c, const Options& user) const;
  std::string label(int c) const;
  double estimate(int c) const { return points_[c].estimate; }  // min of samples, 0 if none
  const std::vector<TunerEvent>& trajectory() const { return trajectory_; }
  int point_count() const { return static_cast<int>(points_.size()); }
  // The public report's trajectory and space (include/spmv/tuning.hpp).
  std::vector<TuningStep> steps() const;
  std::vector<TuningCandidate> exhaustive_space() const;  // every family x every axis value (and policy)

 private:
  enum class State { New, InFlight, Sampled, Pruned, Refused, Duplicate };
  struct Point {
    Candidate candidate;
    State state = State::New;
    double estimate = 0;
    int samples = 0;
  };
  int find_or_add(const Candidate& c);
  // The queue becomes c's unexplored neighbours, or they join its end (after_the_queue: a lead's).
  void queue_neighbours(int c, bool after_the_queue = false);
  // The fastest sampled point of a family other than the best's, within kMinGain of the best (-1: none).
  int near_tie_of_another_family() const;
  void finish(const std::string& why);
  void log(int c, double ms, std::string decision, double warmup_ms = 0, int products = 1);

  TuningSpace space_;
  int max_samples_;
  std::vector<Point> points_;
  std::vector<int> screening_;      // points to screen, in order
  std::size_t screened_ = 0;        // next index into screening_
  std::vector<int> queue_;          // local search: neighbours of the best, in order
  std::vector<int> in_flight_;
  std::vector<int> confirm_;        // confirmation samples still to run
  int origin_ = -1;   // the first point sampled
  int recheck_ = -1;  // the origin, beaten on its single sample: sampled again before the local search
  bool searching_ = false;
  bool tie_explored_ = false;  // the near tie's neighbours were queued (they keep two samples back)
  bool confirming_ = false;
  int best_ = -1;
  int samples_ = 0;
  bool settled_ = false;
  std::vector<TunerEvent> trajectory_;
};

// Wisdom: the settled choice of earlier runs, in a small JSON file (format in docs/algorithms/tuning.md).
struct WisdomKey {
  std::string device;     // CPU model / thread count, or the CUDA device name
  std::string value;      // "f32" / "f64"
  std::string index;      // "i32" / "i64"
  std::string operation;  // "N" / "T"
  bool conversions = false;  // expected_applies was given (converted formats were allowed)
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::string structure;  // hash of row_ptr and a sample of col_idx
  bool operator==(const WisdomKey&) const = default;
};

struct WisdomEntry {
  WisdomKey key;
  std::string algorithm;
  std::vector<std::pair<std::string, int>> knobs;  // knob name -> value (absent: the policy's choice)
  double ms = 0;
  int samples = 0;
};

// FNV-1a over rows, cols, nnz, the whole row_ptr and up to kWisdomColumnSample evenly spaced col_idx.
inline constexpr std::int64_t kWisdomColumnSample = 4096;
// The sampled positions are k * stride for k < count (so that a device copy is one strided memcpy).
struct ColumnSample {
  std::int64_t stride = 1, count = 0;
};
ColumnSample wisdom_column_sample(std::int64_t nnz);
template <class Index>
std::string structure_hash(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::span<const Index> row_ptr,
                           std::span<const Index> col_sample);
// "cpu: <model name> x<threads>" (Linux /proc/cpuinfo; "cpu" elsewhere).
std::string cpu_device_name(int threads);

// The path from Options (tuning_wisdom) or the environment (SPMV_TUNING_WISDOM); empty: no wisdom.
std::string wisdom_path(const Options& options);
// The entry with this key, if any. A missing file is no wisdom; a file that is not wisdom JSON
// throws ParseError naming it (the user pointed spmv at it: silently overwriting it would lose data).
// `note` (when given) says why nothing matched: no file, no entry, or a stale entry (same sizes, other
// structure hash).
std::optional<WisdomEntry> load_wisdom(const std::string& path, const WisdomKey& key, std::string* note = nullptr);
// Adds or replaces the entry with the same key (write to a temporary file, then rename).
void save_wisdom(const std::string& path, const WisdomEntry& entry);
// The point of `tuner`'s space that an entry names, if the space holds it.
std::optional<Candidate> wisdom_candidate(const Tuner& tuner, const WisdomEntry& entry);
WisdomEntry wisdom_entry(const Tuner& tuner, int c, const WisdomKey& key);

}  // namespace spmv::detail
