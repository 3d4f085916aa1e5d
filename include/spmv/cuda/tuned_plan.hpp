#pragma once
// Run-time tuning on the device (Algorithm::Tune; docs/algorithms/tuning.md). A TunedPlan is bound to
// one matrix like a Plan. Its first products each run a candidate configuration (Auto's choice first,
// then a pruned local search over algorithms and their parameters) timed with CUDA events that are
// read back later with cudaEventQuery, never by waiting; after at most 10 timed products it settles on
// the fastest and from then on is a plain Plan of that choice. Every product is right, also while
// tuning: each candidate is an ordinary Plan.
//
// While tuning (until settled()):
// - apply() may build a candidate's Plan (on a private stream, waited for on the host: the plan's
//   preprocessing), which allocates; settling releases the other candidates (cudaFree synchronizes
//   the device). After settling, apply() allocates nothing, as Plan::apply.
// - Tuning products are serialized on the device whatever the streams: a product on another stream
//   than the previous tuning product first waits (cudaStreamWaitEvent, no host wait) for it, so that
//   no two timed products overlap. Products of other work running at the same time on the device
//   distort the samples; tune from one stream when that matters.
// - A product captured into a CUDA graph (cudaStreamIsCapturing) never tunes: it runs the best
//   choice so far, which is Auto's until the first sample is read back, and records no event. Capture
//   after settled() to capture the tuned choice.
// - alpha == 0 products read neither A nor x and are not samples.
// The first product of each candidate runs once more, untimed, into a scratch vector of the plan
// (lazy module loading, cold caches): that product's time shows as warm-up in the report.
//
// Wisdom: with Options::tuning_wisdom or SPMV_TUNING_WISDOM naming a file, a plan whose key (device,
// types, operation, matrix fingerprint) is in the file starts settled, and a plan that settles adds
// its choice to the file. SPMV_DEBUG_LOG=1 prints each step of the search.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "spmv/cuda/plan.hpp"
#include "spmv/tuning.hpp"

namespace spmv::cuda {

template <class Value, class Index>
class TunedPlan {
 public:
  // Builds Auto's plan (as Plan does) and reads the wisdom file if one is named; throws ParseError
  // when that file is not a wisdom file.
  TunedPlan(CsrView<Value, Index> matrix, Operation op = Operation::NonTranspose, const Options& options = {},
            cudaStream_t stream = nullptr);
  ~TunedPlan();
  TunedPlan(TunedPlan&&) noexcept;
  TunedPlan& operator=(TunedPlan&&) noexcept;

  // As Plan::apply (device arrays, asynchronous on `stream`, safe from several threads and streams).
  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream = nullptr);

  bool settled() const;
  TuningReport report() const;
  Algorithm algorithm() const;  // the best choice so far (Auto's before the first sample)
  Operation operation() const;
  std::string policy() const;
  double setup_ms() const;          // Auto's plan and the wisdom look-up
  std::size_t extra_bytes() const;  // the plans held now and the scratch vector while tuning
  Index x_size() const;
  Index y_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
