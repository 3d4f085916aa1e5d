#include "core/timing.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace spmv::detail {

Timing measure(const std::function<double(int)>& run, const TimingOptions& options) {
  if (options.warmup > 0) run(options.warmup);
  // Grow the batch until one sample lasts min_sample_ms, so that timer resolution and launch
  // overhead stay small against the measured time.
  int iterations = 1;
  double ms = run(iterations);
  while (ms < options.min_sample_ms && iterations < (1 << 20)) {
    iterations = ms <= 0 ? iterations * 8 : std::max(iterations * 2, static_cast<int>(iterations * 1.2 * options.min_sample_ms / ms));
    ms = run(iterations);
  }
  std::vector<double> samples;
  const int reps = std::max(1, options.repetitions);
  for (int r = 0; r < reps; ++r) samples.push_back(run(iterations) / iterations);
  std::sort(samples.begin(), samples.end());
  Timing t;
  t.median_ms = samples.size() % 2 ? samples[samples.size() / 2]
                                   : 0.5 * (samples[samples.size() / 2 - 1] + samples[samples.size() / 2]);
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  t.repetitions = reps;
  t.iterations = iterations;
  return t;
}

double host_elapsed_ms(const std::function<void()>& product, int n) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) product();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace spmv::detail
