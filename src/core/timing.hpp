#pragma once
// Host-clock timing shared by the CPU backend and host-side benchmarks: warm-up, then samples of
// enough products to last min_sample_ms each, reporting the median per-product time.
#include <functional>

#include "spmv/operator.hpp"

namespace spmv::detail {

// `run(n)` performs n products and returns the elapsed milliseconds of those n (the caller decides
// how to measure: host clock here, CUDA events in the CUDA backend).
Timing measure(const std::function<double(int)>& run, const TimingOptions& options);

// Wall-clock milliseconds of `n` calls to `product`.
double host_elapsed_ms(const std::function<void()>& product, int n);

}  // namespace spmv::detail
