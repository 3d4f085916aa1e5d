#pragma once
// Private: the CPU vector operations of the solvers, OpenMP over the entries. Reductions accumulate
// in double (solvers.hpp) with a static schedule, so that a solve is reproducible for a fixed thread
// count. Method-specific fused sweeps (e.g. CG's x/r update with its two dots) sit with the method.
#include <cmath>
#include <cstdint>
#include <span>

namespace spmv::solvers::cpu {

template <class Value>
double dot(std::span<const Value> a, std::span<const Value> b) {
  const auto n = static_cast<std::int64_t>(a.size());
  double sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}

template <class Value>
double norm(std::span<const Value> a) {
  return std::sqrt(dot(a, a));
}

// y = x (a plain copy, parallel so that first touch matches the later sweeps).
template <class Value>
void copy(std::span<const Value> x, std::span<Value> y) {
  const auto n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i];
}

// y = value everywhere.
template <class Value>
void fill(std::span<Value> y, Value value) {
  const auto n = static_cast<std::int64_t>(y.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) y[i] = value;
}

// y = d .* x, or y = x when d is empty (no preconditioner).
template <class Value>
void scale_by(std::span<const Value> d, std::span<const Value> x, std::span<Value> y) {
  if (d.empty()) return copy(x, y);
  const auto n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) y[i] = d[i] * x[i];
}

// Index of the first entry that is NaN or Inf, or -1.
template <class Value>
std::int64_t first_non_finite(std::span<const Value> a) {
  const auto n = static_cast<std::int64_t>(a.size());
  std::int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first)
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isfinite(a[i]) && i < first) first = i;
  return first == n ? -1 : first;
}

}  // namespace spmv::solvers::cpu
