// DIA on the CPU, parallel and vectorised (y = alpha*A*x + beta*y; Aᵀ keeps the sequential loop of
// format_kernels.cpp). Issue 17: the sequential DIA loop took 5.5 ms on poisson2d f32 where MKL takes
// 0.8 ms. A diagonal is a contiguous stream of values against a contiguous, shifted piece of x, so a
// DIA product needs no index and no gather: per vector of rows one load of values, one unaligned load
// of x and one fused multiply-add, and it reads value bytes only (4 per entry in f32 against CSR's 8).
//
// Rows are cut into blocks of kBlockRows whose sums stay in L1 (acc); threads take contiguous ranges of
// blocks (OpenMP static schedule). For each block, every diagonal adds its stored runs: padding slots
// (outside [0, cols) or holding no entry) are skipped rather than multiplied, so 0 * Inf never enters a
// sum and the result is that of the CSR kernels for any x. The runs (maximal ranges of consecutive
// stored slots of one diagonal) are found once when the kernel is built. Each row sums its diagonals
// in offset order, as the sequential loop does, so the result does not depend on the thread count.
//
// SIMD: Google Highway with run-time dispatch, as src/cpu/csr_simd.cpp; Options::cpu_simd = 0 or
// SPMV_CPU_SIMD=0 runs the same blocks with a plain loop.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dia_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace spmv::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// acc[j] += v[j] * xs[j] for j in [0, n).
template <class Value>
HWY_INLINE void multiply_add(Value* HWY_RESTRICT acc, const Value* v, const Value* xs, std::int64_t n) {
  const hn::ScalableTag<Value> d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) {
    hn::StoreU(hn::MulAdd(hn::LoadU(d, v + j), hn::LoadU(d, xs + j), hn::LoadU(d, acc + j)), d, acc + j);
    hn::StoreU(hn::MulAdd(hn::LoadU(d, v + j + lanes), hn::LoadU(d, xs + j + lanes), hn::LoadU(d, acc + j + lanes)),
               d, acc + j + lanes);
  }
  for (; j + lanes <= n; j += lanes)
    hn::StoreU(hn::MulAdd(hn::LoadU(d, v + j), hn::LoadU(d, xs + j), hn::LoadU(d, acc + j)), d, acc + j);
  for (; j < n; ++j) acc[j] += v[j] * xs[j];
}

void multiply_add_f32(float* acc, const float* v, const float* xs, std::int64_t n) { multiply_add(acc, v, xs, n); }
void multiply_add_f64(double* acc, const double* v, const double* xs, std::int64_t n) {
  multiply_add(acc, v, xs, n);
}

}  // namespace spmv::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"

namespace spmv::detail {

HWY_EXPORT(multiply_add_f32);
HWY_EXPORT(multiply_add_f64);

namespace {

// Rows per block: kBlockRows sums (4 KB in f32, 8 KB in f64) stay in a 32 KB L1 while the diagonals and
// x stream past. Measured on the 2-core AMD EPYC (Zen 3, AVX2) development machine, poisson2d n=1000 and
// stencil27 n=60 (docs/PERFORMANCE.md); blocks must also be long against a vector so that run ends are rare.
constexpr std::int64_t kBlockRows = 1024;

template <class Value>
void multiply_add_plain(Value* acc, const Value* v, const Value* xs, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) acc[j] += v[j] * xs[j];
}

template <class Value, class Index>
struct DiaRuns {
  DiaMatrix<Value, Index> m;
  // Runs of diagonal d: run_begin/run_end[run_ptr[d] .. run_ptr[d + 1]), rows, increasing.
  std::vector<std::int64_t> run_ptr, run_begin, run_end;
};

template <class Value, class Index>
std::shared_ptr<const DiaRuns<Value, Index>> find_runs(DiaMatrix<Value, Index> m) {
  auto r = std::make_shared<DiaRuns<Value, Index>>();
  const std::int64_t rows = m.rows, cols = m.cols;
  r->run_ptr.push_back(0);
  for (std::size_t d = 0; d < m.offsets.size(); ++d) {
    const std::int64_t off = m.offsets[d];
    const std::int64_t lo = std::max<std::int64_t>(0, -off), hi = std::min<std::int64_t>(rows, cols - off);
    const std::int64_t base = static_cast<std::int64_t>(d) * rows;
    for (std::int64_t i = lo; i < hi;) {
      if (!m.is_stored(base + i)) {
        ++i;
        continue;
      }
      const std::int64_t begin = i;
      while (i < hi && m.is_stored(base + i)) ++i;
      r->run_begin.push_back(begin);
      r->run_end.push_back(i);
    }
    r->run_ptr.push_back(static_cast<std::int64_t>(r->run_begin.size()));
  }
  r->m = std::move(m);
  return r;
}

template <class Value, class Index>
void dia_blocks(const DiaRuns<Value, Index>& r, bool simd, int threads, Value alpha, const Value* x, Value beta,
                Value* y) {
  using MultiplyAdd = void (*)(Value*, const Value*, const Value*, std::int64_t);
  MultiplyAdd multiply_add = multiply_add_plain<Value>;
  if (simd) {
    if constexpr (std::is_same_v<Value, float>) multiply_add = &HWY_DYNAMIC_DISPATCH(multiply_add_f32);
    else multiply_add = &HWY_DYNAMIC_DISPATCH(multiply_add_f64);
  }
  const std::int64_t rows = r.m.rows;
  const std::int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  const auto ndiag = static_cast<std::int64_t>(r.m.offsets.size());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t b = 0; b < blocks; ++b) {
    alignas(64) Value acc[kBlockRows];
    const std::int64_t i0 = b * kBlockRows, i1 = std::min(rows, i0 + kBlockRows);
    std::fill(acc, acc + (i1 - i0), Value(0));
    for (std::int64_t d = 0; d < ndiag; ++d) {
      const std::int64_t off = r.m.offsets[static_cast<std::size_t>(d)];
      const Value* v = r.m.values.data() + d * rows;
      const std::int64_t* ends = r.run_end.data();
      // First run of d that ends after i0.
      std::int64_t k = std::upper_bound(ends + r.run_ptr[d], ends + r.run_ptr[d + 1], i0) - ends;
      for (; k < r.run_ptr[d + 1] && r.run_begin[k] < i1; ++k) {
        const std::int64_t lo = std::max(r.run_begin[k], i0), hi = std::min(r.run_end[k], i1);
        multiply_add(acc + (lo - i0), v + lo, x + lo + off, hi - lo);
      }
    }
    if (beta == 0)
      for (std::int64_t i = i0; i < i1; ++i) y[i] = alpha * acc[i - i0];
    else
      for (std::int64_t i = i0; i < i1; ++i) y[i] = alpha * acc[i - i0] + beta * y[i];
  }
}

}  // namespace

template <class Value, class Index>
CpuKernel<Value, Index> make_dia_simd_kernel(DiaMatrix<Value, Index> m, const Options& options) {
  const std::int64_t diagonals = static_cast<std::int64_t>(m.offsets.size());
  const std::size_t extra = m.values.size() * sizeof(Value) + m.offsets.size() * sizeof(Index) +
                            m.stored.size() * sizeof(std::uint32_t);
  auto runs = find_runs(std::move(m));
  const bool simd = cpu::detail::simd_enabled(options.cpu_simd);
  const int threads = options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());
  CpuKernel<Value, Index> kernel;
  kernel.extra_bytes =
      extra + (runs->run_ptr.size() + runs->run_begin.size() + runs->run_end.size()) * sizeof(std::int64_t);
  kernel.policy = "dia diagonals=" + std::to_string(diagonals) + " runs=" + std::to_string(runs->run_begin.size()) +
                  " threads=" + std::to_string(threads) + " block_rows=" + std::to_string(kBlockRows) +
                  (simd ? " simd=" + cpu::detail::simd_target() : std::string(" simd=off"));
  kernel.run = [runs, simd, threads](Value alpha, const Value* x, Value beta, Value* y) {
    const std::int64_t rows = runs->m.rows;
    if (alpha == 0) {  // y = beta * y without reading A or x; beta == 0 does not read y
      for (std::int64_t i = 0; i < rows; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
      return;
    }
    dia_blocks(*runs, simd, threads, alpha, x, beta, y);
  };
  return kernel;
}

#define SPMV_INSTANTIATE(V, I) template CpuKernel<V, I> make_dia_simd_kernel(DiaMatrix<V, I>, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
#endif  // HWY_ONCE
