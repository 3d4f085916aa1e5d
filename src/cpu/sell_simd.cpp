// SELL-C-sigma on the CPU, parallel and vectorised (y = alpha*A*x + beta*y; Aᵀ keeps the sequential
// scatter of format_kernels.cpp). Kreutzer, Hager, Wellein, Fehske & Bishop, "A unified sparse matrix
// data format for efficient general sparse matrix-vector multiplication on modern processors with
// wide SIMD units" (SIAM J. Sci. Comput. 2014), §3: with C equal to the SIMD width, a slice is C rows
// stored column-major, so slot k of the slice is one vector of C values, one vector of C column indices
// and one gather of x, and each vector lane accumulates its own row: no horizontal sum, no row-length
// branch per row (CSR's cost on rows of 5-30, docs/algorithms/cpu_simd.md), padding only up to the
// longest row of C neighbours sorted within sigma.
//
// Slots where every lane of the slice holds an entry (up to the slice's shortest row) run unmasked; the
// rest mask the padding lanes (index -1): their gather reads x[0] and the lane is zeroed, so 0 * Inf
// never enters a sum. A slice whose rows were not reordered by the sort writes its C results with one
// vector store. Threads take contiguous ranges of slices balanced by slots + rows (the merge-path
// measure of work), fixed at plan time; a row's result does not depend on the thread count.
//
// SIMD: Google Highway with run-time dispatch as src/cpu/csr_simd.cpp; Options::cpu_simd = 0 or
// SPMV_CPU_SIMD=0 runs the same slices with a plain loop.
//
// Half-precision values (Options::values = f16 / bf16, float plans; docs/algorithms/half_values_cpu.md):
// the slices hold the values' 16-bit bits (rounded once, to nearest even, after the conversion to
// SELL), and each slot's vector of C values is widened to f32 lanes by Highway's PromoteTo (F16C's
// vcvtph2ps for fp16 on x86, a shift for bfloat16) before the same multiply-add; the scalar fallback
// widens value by value (cpu/half_widen.hpp). Widening is exact, so the product is that of the rounded
// matrix with the f32 kernel's summation order. Aᵀ x with half values is the sequential scatter of
// format_kernels.cpp over the 16-bit slices.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/sell_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/half_widen.hpp"
#include "cpu/simd_gather-inl.h"

#ifndef SPMV_CPU_SELL_SLICES_DEFINED
#define SPMV_CPU_SELL_SLICES_DEFINED
namespace spmv::cpu::detail {
// The arrays a sweep reads (the converted SellMatrix plus the per-slice count of unmasked slots).
// Stored is Value, or hwy::float16_t / hwy::bfloat16_t for half-precision values (Value float).
template <class Value, class Index, class Stored = Value>
struct SellView {
  std::int64_t rows, c;
  const std::int64_t* slice_ptr;
  const Index* slice_width;
  const Index* full;  // slots every lane of the slice holds (its shortest row)
  const Index* perm;
  const std::uint8_t* in_place;  // 1: the slice's rows are unpermuted (y written with vector stores)
  const Index* col;
  const Stored* val;
};

// One stored value as Value (exact).
template <class Value, class Stored>
Value widen_value(Stored v) {
  if constexpr (std::is_same_v<Stored, Value>) {
    return v;
  } else {
    std::uint16_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    if constexpr (std::is_same_v<Stored, hwy::float16_t>) return spmv::detail::WidenF16{}(bits);
    else return bf16_bits_to_float(bits);
  }
}
}  // namespace spmv::cpu::detail
#endif

HWY_BEFORE_NAMESPACE();
namespace spmv::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes(d) stored values as d's lanes: loaded, or loaded as 16-bit halves and widened (exact).
template <class D, class Stored>
HWY_INLINE auto load_values(D d, const Stored* p) {
  if constexpr (std::is_same_v<Stored, hn::TFromD<D>>) return hn::LoadU(d, p);
  else return hn::PromoteTo(d, hn::LoadU(hn::Rebind<Stored, D>(), p));
}

// Slices [s_begin, s_end): each vector of lanes sums its rows in two accumulators (even and odd slots,
// hiding the fused multiply-add latency of rows of a few slots), then writes y through the permutation.
template <class Value, class Index, class Stored>
void slices(const SellView<Value, Index, Stored>& m, std::int64_t s_begin, std::int64_t s_end, Value alpha, const Value* x,
            Value beta, Value* y) {
  const GatherTag<Value, Index> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t c = m.c;
  HWY_ALIGN Value sums[hn::MaxLanes(d)];
  for (std::int64_t s = s_begin; s < s_end; ++s) {
    const std::int64_t full = m.full[s], width = m.slice_width[s];
    for (std::int64_t v = 0; v < c; v += lanes) {
      const Index* cp = m.col + m.slice_ptr[s] + v;
      const Stored* vp = m.val + m.slice_ptr[s] + v;
      auto a0 = hn::Zero(d), a1 = hn::Zero(d);
      std::int64_t k = 0;
      for (; k + 2 <= full; k += 2) {
        a0 = hn::MulAdd(load_values(d, vp + k * c), gather(d, x, load_index(d, cp + k * c)), a0);
        a1 = hn::MulAdd(load_values(d, vp + (k + 1) * c), gather(d, x, load_index(d, cp + (k + 1) * c)), a1);
      }
      for (; k < full; ++k)
        a0 = hn::MulAdd(load_values(d, vp + k * c), gather(d, x, load_index(d, cp + k * c)), a0);
      for (; k < width; ++k) {  // some lanes are padding (index -1)
        const auto idx = load_index(d, cp + k * c);
        const auto stored = hn::Gt(idx, hn::Set(di, -1));
        const auto xs = hn::IfThenElseZero(hn::RebindMask(d, stored), gather(d, x, hn::IfThenElseZero(stored, idx)));
        a0 = hn::MulAdd(load_values(d, vp + k * c), xs, a0);
      }
      const std::int64_t p0 = s * c + v;
      if (m.in_place[s]) {
        const auto sum = hn::Mul(hn::Set(d, alpha), hn::Add(a0, a1));
        hn::StoreU(beta == 0 ? sum : hn::MulAdd(hn::Set(d, beta), hn::LoadU(d, y + p0), sum), d, y + p0);
        continue;
      }
      hn::Store(hn::Add(a0, a1), d, sums);
      const std::int64_t n = p0 + lanes <= m.rows ? lanes : m.rows - p0;  // the last slice is padded to C
      for (std::int64_t l = 0; l < n; ++l) {
        const Index r = m.perm[p0 + l];
        y[r] = beta == 0 ? alpha * sums[l] : alpha * sums[l] + beta * y[r];
      }
    }
  }
}

// HWY_EXPORT takes plain function names: one per (value, index, stored) combination.
#define SPMV_SELL_SLICES(V, I, S, suffix)                                                              \
  void slices_##suffix(const SellView<V, I, S>& m, std::int64_t s_begin, std::int64_t s_end, V alpha, \
                       const V* x, V beta, V* y) {                                                    \
    slices<V, I, S>(m, s_begin, s_end, alpha, x, beta, y);                                            \
  }
#define SPMV_SELL_ENTRY(V, I, suffix)    \
  SPMV_SELL_SLICES(V, I, V, suffix)      \
  std::int64_t lanes_##suffix() { return static_cast<std::int64_t>(hn::Lanes(GatherTag<V, I>())); }
SPMV_SELL_ENTRY(float, std::int32_t, f32_i32)
SPMV_SELL_ENTRY(float, std::int64_t, f32_i64)
SPMV_SELL_ENTRY(double, std::int32_t, f64_i32)
SPMV_SELL_ENTRY(double, std::int64_t, f64_i64)
SPMV_SELL_SLICES(float, std::int32_t, hwy::float16_t, f32_i32_f16)
SPMV_SELL_SLICES(float, std::int64_t, hwy::float16_t, f32_i64_f16)
SPMV_SELL_SLICES(float, std::int32_t, hwy::bfloat16_t, f32_i32_bf16)
SPMV_SELL_SLICES(float, std::int64_t, hwy::bfloat16_t, f32_i64_bf16)
#undef SPMV_SELL_ENTRY
#undef SPMV_SELL_SLICES

}  // namespace spmv::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"

namespace spmv::cpu::detail {

// Vectors per slice: C = kSellSliceVectors * the SIMD width of (Value, Index) on the dispatched target
// (8 f32 / 4 f64 lanes on AVX2). Kreutzer et al. take C = the SIMD width; measured on the 2-core Zen 3
// (AVX2) development machine, one thread: see docs/PERFORMANCE.md "CPU Auto with the expected-applies
// hint" for C = 1 and 2 widths.
constexpr std::int64_t kSellSliceVectors = 1;

HWY_EXPORT(slices_f32_i32);
HWY_EXPORT(slices_f32_i64);
HWY_EXPORT(slices_f64_i32);
HWY_EXPORT(slices_f64_i64);
HWY_EXPORT(lanes_f32_i32);
HWY_EXPORT(lanes_f32_i64);
HWY_EXPORT(lanes_f64_i32);
HWY_EXPORT(lanes_f64_i64);
HWY_EXPORT(slices_f32_i32_f16);
HWY_EXPORT(slices_f32_i64_f16);
HWY_EXPORT(slices_f32_i32_bf16);
HWY_EXPORT(slices_f32_i64_bf16);

namespace {

template <class Value, class Index, class Stored = Value>
using SlicesFn = void (*)(const SellView<Value, Index, Stored>&, std::int64_t, std::int64_t, Value, const Value*,
                          Value, Value*);

// The dispatched target's kernel and vector length for (Value, Index, Stored).
template <class Value, class Index, class Stored = Value>
SlicesFn<Value, Index, Stored> simd_slices() {
  constexpr bool i32 = std::is_same_v<Index, std::int32_t>;
  if constexpr (std::is_same_v<Stored, hwy::float16_t>) {
    if constexpr (i32) return &HWY_DYNAMIC_DISPATCH(slices_f32_i32_f16);
    else return &HWY_DYNAMIC_DISPATCH(slices_f32_i64_f16);
  } else if constexpr (std::is_same_v<Stored, hwy::bfloat16_t>) {
    if constexpr (i32) return &HWY_DYNAMIC_DISPATCH(slices_f32_i32_bf16);
    else return &HWY_DYNAMIC_DISPATCH(slices_f32_i64_bf16);
  } else if constexpr (std::is_same_v<Value, float> && i32) return &HWY_DYNAMIC_DISPATCH(slices_f32_i32);
  else if constexpr (std::is_same_v<Value, float>) return &HWY_DYNAMIC_DISPATCH(slices_f32_i64);
  else if constexpr (std::is_same_v<Index, std::int32_t>) return &HWY_DYNAMIC_DISPATCH(slices_f64_i32);
  else return &HWY_DYNAMIC_DISPATCH(slices_f64_i64);
}

template <class Value, class Index>
std::int64_t simd_lanes() {
  if constexpr (std::is_same_v<Value, float> && std::is_same_v<Index, std::int32_t>) return HWY_DYNAMIC_DISPATCH(lanes_f32_i32)();
  else if constexpr (std::is_same_v<Value, float>) return HWY_DYNAMIC_DISPATCH(lanes_f32_i64)();
  else if constexpr (std::is_same_v<Index, std::int32_t>) return HWY_DYNAMIC_DISPATCH(lanes_f64_i32)();
  else return HWY_DYNAMIC_DISPATCH(lanes_f64_i64)();
}

// The scalar fallback: the same slices, lane by lane.
template <class Value, class Index, class Stored>
void slices_plain(const SellView<Value, Index, Stored>& m, std::int64_t s_begin, std::int64_t s_end, Value alpha,
                  const Value* x, Value beta, Value* y) {
  const std::int64_t c = m.c;
  for (std::int64_t s = s_begin; s < s_end; ++s)
    for (std::int64_t l = 0; l < c && s * c + l < m.rows; ++l) {
      const std::int64_t base = m.slice_ptr[s] + l;
      Value sum = 0;
      for (std::int64_t k = 0; k < m.slice_width[s]; ++k) {
        const Index col = m.col[base + k * c];
        if (col < 0) break;  // rows are padded at their end
        sum += widen_value<Value>(m.val[base + k * c]) * x[col];
      }
      const Index r = m.perm[s * c + l];
      y[r] = beta == 0 ? alpha * sum : alpha * sum + beta * y[r];
    }
}

// A^T x over every slice, sequentially, in the order of format_kernels.cpp's sell_apply (alpha != 0):
// y = beta * y, then y[col] += a * (alpha * x[row]) slot by slot.
template <class Value, class Index, class Stored>
void slices_scatter(const SellView<Value, Index, Stored>& m, std::int64_t cols, Value alpha, const Value* x,
                    Value beta, Value* y) {
  for (std::int64_t j = 0; j < cols; ++j) y[j] = beta == 0 ? Value(0) : beta * y[j];
  const std::int64_t c = m.c;
  for (std::int64_t p = 0; p < m.rows; ++p) {
    const Value t = alpha * x[m.perm[p]];
    const std::int64_t base = m.slice_ptr[p / c] + p % c;
    for (std::int64_t k = 0; k < m.slice_width[p / c]; ++k) {
      const Index col = m.col[base + k * c];
      if (col < 0) break;
      y[col] += widen_value<Value>(m.val[base + k * c]) * t;
    }
  }
}

template <class Value, class Index, class Stored = Value>
struct SellPlan {
  SellMatrix<Value, Index> m;  // col_idx and values moved to col / val below
  std::vector<Index> full;
  std::vector<std::uint8_t> in_place;
  std::vector<std::int64_t> bounds;  // threads + 1 slice boundaries
  std::unique_ptr<Index[]> col;
  std::unique_ptr<Stored[]> val;
  SellView<Value, Index, Stored> view() const {
    return {m.rows,          m.c,       m.slice_ptr.data(), m.slice_width.data(), full.data(), m.perm.data(),
            in_place.data(), col.get(), val.get()};
  }
};

// First touch: the slots of each thread's slices are copied into fresh, uninitialised storage by that
// thread, so that on a machine of several memory nodes their pages sit on the node of the thread that
// reads them (Linux places a page where it is first written; to_sell wrote the padded arrays on one
// thread). Both copies exist for the moment of the copy.
template <class T>
std::unique_ptr<T[]> first_touch_copy(std::vector<T>& source, const std::vector<std::int64_t>& slice_ptr,
                                      const std::vector<std::int64_t>& bounds) {
  std::unique_ptr<T[]> placed(new T[source.size()]);  // default-initialised: not written here
  const int threads = static_cast<int>(bounds.size()) - 1;
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int t = 0; t < threads; ++t)
    std::copy(source.begin() + slice_ptr[bounds[t]], source.begin() + slice_ptr[bounds[t + 1]],
              placed.get() + slice_ptr[bounds[t]]);
  std::vector<T>().swap(source);
  return placed;
}

}  // namespace
}  // namespace spmv::cpu::detail

namespace spmv::detail {
using cpu::detail::SellPlan;
using cpu::detail::SellView;
using cpu::detail::SlicesFn;
using cpu::detail::first_touch_copy;

template <class Value, class Index>
int cpu_sell_c(const Options& options) {
  if (options.sell_c != 0) return options.sell_c;
  return static_cast<int>(cpu::detail::simd_lanes<Value, Index>() * cpu::detail::kSellSliceVectors);
}

namespace {

// The SELL plan of `m` and its kernel: A x parallel over slices (SIMD or the plain loop), or, for A^T x
// (half values only: the f32 transpose is format_kernels.cpp's), the sequential scatter. Stored is Value,
// or the 16-bit type of `storage` (Value float), into which the values are rounded here.
template <class Value, class Index, class Stored>
CpuKernel<Value, Index> build_sell_kernel(SellMatrix<Value, Index> m, Operation op, ValueStorage storage,
                                          const Options& options) {
  auto plan = std::make_shared<SellPlan<Value, Index, Stored>>();
  const std::int64_t c = m.c, rows = m.rows, cols = m.cols, slices = m.num_slices();
  // The shortest row of a slice is its last (rows sorted by length, descending, within windows that
  // are multiples of C); positions past the last row have none.
  plan->full.resize(static_cast<std::size_t>(slices));
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t last = s * c + c - 1;
    Index n = 0;
    if (last < rows)
      while (n < m.slice_width[s] && m.col_idx[m.slice_ptr[s] + static_cast<std::int64_t>(n) * c + c - 1] >= 0) ++n;
    plan->full[s] = n;
  }
  // Slices whose C rows all exist in their original order (most of a stencil's: equal lengths keep
  // their order in the stable sort) write y with vector stores instead of through the permutation.
  plan->in_place.resize(static_cast<std::size_t>(slices));
  for (std::int64_t s = 0; s < slices; ++s) {
    bool same = s * c + c <= rows;
    for (std::int64_t l = 0; same && l < c; ++l) same = m.perm[s * c + l] == s * c + l;
    plan->in_place[s] = same;
  }
  const bool transpose = op == Operation::Transpose;
  const int threads =
      transpose ? 1 : options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());
  // Slice boundaries that give each thread an equal share of slots + rows.
  const auto work = [&](std::int64_t s) { return m.slice_ptr[s] + s * c; };
  const std::int64_t total = work(slices);
  plan->bounds.resize(static_cast<std::size_t>(threads) + 1);
  for (int t = 0; t <= threads; ++t) {
    const std::int64_t target = total / threads * t + total % threads * t / threads;
    std::int64_t lo = 0, hi = slices;
    while (lo < hi) {  // first slice whose start reaches the target
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (work(mid) < target) lo = mid + 1;
      else hi = mid;
    }
    plan->bounds[t] = lo;
  }
  const bool simd = !transpose && cpu::detail::simd_enabled(options.cpu_simd) &&
                    cpu::detail::simd_fits<Value, Index>(m.cols) && c % cpu::detail::simd_lanes<Value, Index>() == 0;
  CpuKernel<Value, Index> kernel;
  kernel.extra_bytes = storage_bytes(m) - m.values.size() * (sizeof(Value) - sizeof(Stored)) +
                       plan->full.size() * sizeof(Index) + plan->in_place.size();
  kernel.policy = "sell C=" + std::to_string(c) + " sigma=" + std::to_string(m.sigma) +
                  " slices=" + std::to_string(slices) + " slots=" + std::to_string(m.slice_ptr.back()) +
                  " threads=" + std::to_string(threads) +
                  (storage != ValueStorage::Native ? " values=" + std::string(to_string(storage)) : std::string()) +
                  (transpose ? " (transpose: sequential scatter)"
                   : simd    ? " simd=" + cpu::detail::simd_target()
                             : std::string(" simd=off"));
  plan->m = std::move(m);
  plan->col = first_touch_copy(plan->m.col_idx, plan->m.slice_ptr, plan->bounds);
  if constexpr (std::is_same_v<Stored, Value>) {
    plan->val = first_touch_copy(plan->m.values, plan->m.slice_ptr, plan->bounds);
  } else {
    std::vector<Stored> narrowed(plan->m.values.size());
    const auto narrow = narrow_for(storage);
    for (std::size_t i = 0; i < narrowed.size(); ++i) {
      const std::uint16_t bits = narrow(plan->m.values[i]);
      std::memcpy(&narrowed[i], &bits, sizeof(bits));
    }
    std::vector<Value>().swap(plan->m.values);
    plan->val = first_touch_copy(narrowed, plan->m.slice_ptr, plan->bounds);
  }
  const SlicesFn<Value, Index, Stored> run = simd ? cpu::detail::simd_slices<Value, Index, Stored>()
                                                  : &cpu::detail::slices_plain<Value, Index, Stored>;
  kernel.run = [plan, run, threads, transpose, cols](Value alpha, const Value* x, Value beta, Value* y) {
    const std::int64_t n = transpose ? cols : plan->m.rows;
    if (alpha == 0) {  // y = beta * y without reading A or x; beta == 0 does not read y
      for (std::int64_t i = 0; i < n; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
      return;
    }
    const SellView<Value, Index, Stored> view = plan->view();
    if (transpose) return cpu::detail::slices_scatter(view, cols, alpha, x, beta, y);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int t = 0; t < threads; ++t) run(view, plan->bounds[t], plan->bounds[t + 1], alpha, x, beta, y);
  };
  return kernel;
}

}  // namespace

template <class Value, class Index>
CpuKernel<Value, Index> make_sell_simd_kernel(SellMatrix<Value, Index> m, const Options& options) {
  return build_sell_kernel<Value, Index, Value>(std::move(m), Operation::NonTranspose, ValueStorage::Native, options);
}

template <class Index>
CpuKernel<float, Index> make_half_sell_kernel(SellMatrix<float, Index> m, Operation op, const Options& options) {
  if (options.values == ValueStorage::F16)
    return build_sell_kernel<float, Index, hwy::float16_t>(std::move(m), op, options.values, options);
  return build_sell_kernel<float, Index, hwy::bfloat16_t>(std::move(m), op, options.values, options);
}

template CpuKernel<float, std::int32_t> make_half_sell_kernel(SellMatrix<float, std::int32_t>, Operation,
                                                              const Options&);
template CpuKernel<float, std::int64_t> make_half_sell_kernel(SellMatrix<float, std::int64_t>, Operation,
                                                              const Options&);

#define SPMV_INSTANTIATE(V, I)                                                                               \
  template int cpu_sell_c<V, I>(const Options&);                                                             \
  template CpuKernel<V, I> make_sell_simd_kernel(SellMatrix<V, I>, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
#endif  // HWY_ONCE
