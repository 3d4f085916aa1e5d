#pragma once
// What a tuned operator (Algorithm::Tune) reports about its search: the trajectory, the settled
// choice, and the whole candidate space (so that `spmv bench --tune` can compare the choice with an
// exhaustive sweep). docs/algorithms/tuning.md describes the search.
#include <string>
#include <vector>

#include "spmv/algorithm.hpp"

namespace spmv {

struct Options;

struct TuningStep {
  std::string candidate;  // e.g. "#3 csr-coop coop=8"
  double ms = 0;          // the timed product (0 for steps without a sample)
  double warmup_ms = 0;   // the untimed first product of a new candidate (into scratch), if any
  int products = 1;       // products the sample timed: a burst on CUDA while products are short; ms is their mean
  std::string decision;   // "best", "kept (1.12 of the best)", "pruned (...)", "refused: ...", "settled ..."
};

// One point of the candidate space: make_operator(backend, a, algorithm, op, options) builds it.
// `algorithm` is Auto for the first point (Auto's choice, built as Auto builds it).
struct TuningCandidate {
  std::string label;
  Algorithm algorithm = Algorithm::Auto;
  int block_size = 0, coop = 0, repeat = 0, subwarp = 0, threads = 0;  // 0: the policy's choice
};

struct TuningReport {
  bool settled = false;
  bool from_wisdom = false;    // settled at construction from a wisdom file
  int samples = 0;             // timed products so far
  int applies = 0;             // products (apply calls) so far, tuning or not
  int applies_to_settle = 0;   // the apply count at which it settled (0 while tuning)
  std::string choice;          // label of the best point so far
  std::vector<TuningStep> trajectory;
  std::vector<TuningCandidate> space;  // every point of the space (all axis values of every family)
};

// The user's options with a candidate's knobs set.
Options with_knobs(const Options& user, const TuningCandidate& c);

}  // namespace spmv
