// SIMD CSR rows on the CPU with Google Highway: the file is compiled once per target by
// hwy/foreach_target.h and the best target for the running CPU is chosen at the first call
// (HWY_DYNAMIC_DISPATCH), so one binary runs on any x86 or ARM CPU.
//
// Shape: rows of at least kDirectRowVectors vectors run a dot product with four independent vector
// accumulators (fused multiply-add; vector loads of values and indices, one gather of x per vector),
// so the add latency is hidden, then a horizontal sum and a scalar tail. Runs of shorter rows go to
// the scalar loops compiled for the baseline target (csr_rows_scalar, or csr_rows_unrolled where the
// plan chose it): a horizontal sum per row costs more than it saves there, and the loop compiled here
// would chain fused multiply-adds. A first version also ran
// runs of short rows as one flat range of products into an L1 buffer, then per-row sums of the
// buffer; on the 2-core Zen 3 (AVX2) it took 1.4-2x the CPU time of the scalar loop on poisson2d
// (5 per row), since the buffer's per-row bookkeeping outweighs the vector products and Zen 3's
// gathers load no faster than scalar loads; it was dropped (docs/algorithms/cpu_simd.md).
// The summation order differs from the scalar loop's; the result stays within the error bound of
// any order (tests/common/error_bound.hpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/csr_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "cpu/csr_simd.hpp"
#include "cpu/simd_gather-inl.h"

HWY_BEFORE_NAMESPACE();
namespace spmv::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of at least this many vectors (32 f32 / 16 f64 on AVX2) take the vector dot product. Measured
// on the 2-core AMD EPYC (Zen 3, AVX2) development machine, row-loop, CPU time, best of 4 under load
// (bench/cpu_simd_speed.cpp): thresholds of 1, 2 and 4 vectors were within the machine's noise (about
// +-15%) of the scalar loop on poisson2d n=1000, stencil27 n=60 and rmat scale 18; 4 keeps the
// horizontal sum to rows long enough to amortise it on any target.
constexpr std::int64_t kDirectRowVectors = 4;
// ... and at least this many nonzeros whatever the vector length: on the 2-core Zen 4 VM (AVX-512, one
// thread, 2026-11-26, CPU ms, same process) f64 rows of 32 (4 vectors of 8) ran slower through the
// 8-lane gathers than through the scalar loop: mostly_empty (rows of 32 or 0) 6.6 ms against 4.2-4.8.
// Shorter rows gained nothing measurable on Zen 3 either.
constexpr std::int64_t kDirectRowMin = 64;

// That threshold in nonzeros on this target (simd_row_threshold).
template <class Value, class Index>
HWY_INLINE std::int64_t direct_row_length() {
  const std::int64_t vectors = kDirectRowVectors * static_cast<std::int64_t>(hn::Lanes(GatherTag<Value, Index>()));
  return vectors > kDirectRowMin ? vectors : kDirectRowMin;
}

template <class Value, class Index>
HWY_INLINE Value dot_range(const Index* col, const Value* val, const Value* x, std::int64_t k, std::int64_t end) {
  const GatherTag<Value, Index> d;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (; k + 4 * n <= end; k += 4 * n) {
    a0 = hn::MulAdd(hn::LoadU(d, val + k), gather(d, x, load_index(d, col + k)), a0);
    a1 = hn::MulAdd(hn::LoadU(d, val + k + n), gather(d, x, load_index(d, col + k + n)), a1);
    a2 = hn::MulAdd(hn::LoadU(d, val + k + 2 * n), gather(d, x, load_index(d, col + k + 2 * n)), a2);
    a3 = hn::MulAdd(hn::LoadU(d, val + k + 3 * n), gather(d, x, load_index(d, col + k + 3 * n)), a3);
  }
  for (; k + n <= end; k += n)
    a0 = hn::MulAdd(hn::LoadU(d, val + k), gather(d, x, load_index(d, col + k)), a0);
  Value s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; k < end; ++k) s += val[k] * x[col[k]];
  return s;
}

template <class Value, class Index>
void rows(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin, Index r_end,
          Value alpha, Value beta, Value* y, ShortRows short_rows) {
  const std::int64_t direct = direct_row_length<Value, Index>();
  for (Index r = r_begin; r < r_end;) {
    if (row_ptr[r + 1] - row_ptr[r] >= direct) {
      const Value s = dot_range(col, val, x, std::int64_t{row_ptr[r]}, std::int64_t{row_ptr[r + 1]});
      y[r] = beta == 0 ? alpha * s : alpha * s + beta * y[r];
      ++r;
      continue;
    }
    // A run of short rows: the baseline-target loop (csr_simd.hpp says why it is not compiled here).
    Index end = r + 1;
    while (end < r_end && row_ptr[end + 1] - row_ptr[end] < direct) ++end;
    csr_rows_short(short_rows, row_ptr, col, val, x, r, end, alpha, beta, y);
    r = end;
  }
}

// HWY_EXPORT takes plain function names: one per (value, index) combination.
#define SPMV_SIMD_ENTRY(V, I, suffix)                                                                          \
  std::int64_t threshold_##suffix() { return direct_row_length<V, I>(); }                                     \
  void rows_##suffix(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end, V alpha,  \
                     V beta, V* y, ShortRows short_rows) {                                                     \
    rows<V, I>(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y, short_rows);                              \
  }                                                                                                            \
  V dot_##suffix(const I* col, const V* val, const V* x, std::int64_t k_begin, std::int64_t k_end) {          \
    return dot_range<V, I>(col, val, x, k_begin, k_end);                                                       \
  }
SPMV_SIMD_ENTRY(float, std::int32_t, f32_i32)
SPMV_SIMD_ENTRY(float, std::int64_t, f32_i64)
SPMV_SIMD_ENTRY(double, std::int32_t, f64_i32)
SPMV_SIMD_ENTRY(double, std::int64_t, f64_i64)
#undef SPMV_SIMD_ENTRY

}  // namespace spmv::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spmv::cpu::detail {

HWY_EXPORT(rows_f32_i32);
HWY_EXPORT(rows_f32_i64);
HWY_EXPORT(rows_f64_i32);
HWY_EXPORT(rows_f64_i64);
HWY_EXPORT(dot_f32_i32);
HWY_EXPORT(dot_f32_i64);
HWY_EXPORT(dot_f64_i32);
HWY_EXPORT(dot_f64_i64);
HWY_EXPORT(threshold_f32_i32);
HWY_EXPORT(threshold_f32_i64);
HWY_EXPORT(threshold_f64_i32);
HWY_EXPORT(threshold_f64_i64);

bool simd_enabled(int requested) {
  if (requested >= 0) return requested != 0;
  const char* env = std::getenv("SPMV_CPU_SIMD");
  return env == nullptr || std::string(env) != "0";
}

std::string simd_target() {
  // The dispatcher's choice: the best (lowest bit) of the compiled targets this CPU supports.
  const auto targets = static_cast<std::int64_t>(hwy::SupportedTargets()) & static_cast<std::int64_t>(HWY_TARGETS);
  const std::int64_t best = targets & -targets;
  return hwy::TargetName(best != 0 ? best : static_cast<std::int64_t>(HWY_STATIC_TARGET));
}

#define SPMV_SIMD_DISPATCH(V, I, suffix)                                                                       \
  template <>                                                                                                  \
  void csr_rows_simd<V, I>(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end,     \
                           V alpha, V beta, V* y, ShortRows short_rows) {                                      \
    HWY_DYNAMIC_DISPATCH(rows_##suffix)(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y, short_rows);    \
  }                                                                                                            \
  template <>                                                                                                  \
  std::int64_t simd_row_threshold<V, I>() {                                                                   \
    return HWY_DYNAMIC_DISPATCH(threshold_##suffix)();                                                         \
  }                                                                                                            \
  template <>                                                                                                  \
  V csr_dot_simd<V, I>(const I* col, const V* val, const V* x, std::int64_t k_begin, std::int64_t k_end) {    \
    return HWY_DYNAMIC_DISPATCH(dot_##suffix)(col, val, x, k_begin, k_end);                                    \
  }
SPMV_SIMD_DISPATCH(float, std::int32_t, f32_i32)
SPMV_SIMD_DISPATCH(float, std::int64_t, f32_i64)
SPMV_SIMD_DISPATCH(double, std::int32_t, f64_i32)
SPMV_SIMD_DISPATCH(double, std::int64_t, f64_i64)
#undef SPMV_SIMD_DISPATCH

}  // namespace spmv::cpu::detail
#endif  // HWY_ONCE
