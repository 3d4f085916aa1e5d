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
// vector store, the others with a scatter through the permutation. A slice whose columns span less than
// 2^16 - 1 stores them as 16-bit offsets from its smallest column (6 bytes a slot in f32 instead of 8;
// the gather's base moves to that column), when at least 15 of 16 slices can. Threads take contiguous
// ranges of slices balanced by slots + rows (the merge-path measure of work), fixed at plan time; a row's
// result does not depend on the thread count.
//
// x by gathers or by scalar loads (SellX): the unmasked slots may load x lane by lane and pack the lanes by
// inserts instead of gathering, and then write a permuted slice's results lane by lane instead of scattering
// them; faster where x stays in L1/L2 on Zen 4, slower where it spills. A plan built with the expected-applies
// hint races the two forms on A; without it, it gathers. The sweep reads each slice's fields from one record
// (SliceDesc). docs/algorithms/cpu_simd.md, "x by scalar loads, one record a slice".
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
// A slice's column indices are stored in one of two forms. Narrow: 16-bit offsets from the slice's smallest
// column (col16; the gather reads x + base[s]); padding kNarrowPadding. Wide: Index columns (col); padding -1.
// col_at[s] is where slice s's slots start in the array of its form, in the slot layout of val.
constexpr std::uint16_t kNarrowPadding = 0xFFFF;

// What the SIMD sweep reads of slice s, in one record instead of six arrays (packed_slices). With fewer loads and
// live registers per slice, slices of rows of 2-13 ran faster than through the arrays (Zen 4 VM, one thread, f32,
// x by loads, ms: cs4 0.047 -> 0.039, cti 0.037 -> 0.031, luxembourg_osm 0.18 -> 0.13, cage10 0.046 -> 0.043).
struct SliceDesc {
  std::int64_t col_at;  // where the slice's slots start in the array of its form (col16 or col)
  std::int64_t base;    // x offset of a narrow slice's columns (0 for wide)
  std::int64_t full;    // slots every lane holds (the slice's shortest row)
  std::int64_t width;   // slots (its longest row)
  std::uint8_t narrow;  // 16-bit column offsets
  std::uint8_t in_place;  // rows unpermuted: y written with one vector store
};

template <class Value, class Index, class Stored = Value>
struct SellView {
  std::int64_t rows, c;
  const std::int64_t* slice_ptr;
  const Index* slice_width;
  const Index* full;  // slots every lane of the slice holds (its shortest row)
  const Index* perm;
  const std::uint8_t* in_place;  // 1: the slice's rows are unpermuted (y written with vector stores)
  const std::uint8_t* narrow;    // 1: the slice's columns are 16-bit offsets from base
  const Index* base;
  const std::int64_t* col_at;
  const std::uint16_t* col16;
  const Index* col;
  const Stored* val;
  const SliceDesc* desc;

  // Column of slot `slot` (k * c + lane) of slice s; -1 for padding.
  Index column(std::int64_t s, std::int64_t slot) const {
    if (!narrow[s]) return col[col_at[s] + slot];
    const std::uint16_t offset = col16[col_at[s] + slot];
    return offset == kNarrowPadding ? Index(-1) : static_cast<Index>(base[s] + offset);
  }
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

// One slot's column offsets as the gather's index lanes: 16-bit offsets widened, or Index columns as stored.
template <class D>
HWY_INLINE auto load_columns(D /* tag */, const std::uint16_t* p) {
  const hn::RebindToSigned<D> di;
  const auto narrow = hn::LoadU(hn::Rebind<std::uint16_t, D>(), p);
  if constexpr (sizeof(hn::TFromD<D>) == 4) return hn::PromoteTo(di, narrow);
  else return hn::PromoteTo(di, hn::PromoteTo(hn::Rebind<std::int32_t, D>(), narrow));  // no u16 -> i64 in Highway 1.0
}
template <class D, class Index>
HWY_INLINE auto load_columns(D d, const Index* p) {
  return load_index(d, p);
}

// The lanes of a slot that hold an entry (the others are padding).
template <class DI, class VI>
HWY_INLINE auto stored_lanes(DI di, VI idx, const std::uint16_t* /* narrow */) {
  return hn::Ne(idx, hn::Set(di, kNarrowPadding));
}
template <class DI, class VI, class Index>
HWY_INLINE auto stored_lanes(DI di, VI idx, const Index* /* wide */) {
  return hn::Gt(idx, hn::Set(di, -1));
}

// x at Lanes(d) stored columns p[0..): one scalar load a lane, packed into 128-bit parts and inserted (x86 with
// AVX2 or AVX-512), else the gather. On the Zen 4 VM (AVX-512, one thread, 2026-11-29) slots of 16 (8) rows ran
// 1.1-1.4x faster this way than through vgatherdps / vgatherqpd on the small files whose x sits in L1/L2 (cs4,
// cti, cage10, EX5, bayer10, luxembourg_osm; docs/PERFORMANCE.md "SELL's x by scalar loads"); where gathers are
// the faster form a plan keeps them (SellX).
template <class D, class Col>
HWY_INLINE auto load_lanes(D d, const hn::TFromD<D>* HWY_RESTRICT x, const Col* p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  using T = hn::TFromD<D>;
  using V = decltype(hn::Zero(d));
  constexpr std::size_t kBytes = hn::MaxLanes(D()) * sizeof(T);
  if constexpr (std::is_same_v<T, float> && kBytes >= 16) {
    const auto part = [&](int i) {
      return _mm_set_ps(x[p[4 * i + 3]], x[p[4 * i + 2]], x[p[4 * i + 1]], x[p[4 * i]]);
    };
    if constexpr (kBytes == 16) {
      return V{part(0)};
    } else if constexpr (kBytes == 32) {
      return V{_mm256_insertf128_ps(_mm256_castps128_ps256(part(0)), part(1), 1)};
    } else {
#if HWY_TARGET <= HWY_AVX3
      const __m256 lo = _mm256_insertf128_ps(_mm256_castps128_ps256(part(0)), part(1), 1);
      const __m256 hi = _mm256_insertf128_ps(_mm256_castps128_ps256(part(2)), part(3), 1);
      return V{_mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1)};
#endif
    }
  } else if constexpr (std::is_same_v<T, double> && kBytes >= 16) {
    const auto part = [&](int i) { return _mm_loadh_pd(_mm_load_sd(x + p[2 * i]), x + p[2 * i + 1]); };
    if constexpr (kBytes == 16) {
      return V{part(0)};
    } else if constexpr (kBytes == 32) {
      return V{_mm256_insertf128_pd(_mm256_castpd128_pd256(part(0)), part(1), 1)};
    } else {
#if HWY_TARGET <= HWY_AVX3
      const __m256d lo = _mm256_insertf128_pd(_mm256_castpd128_pd256(part(0)), part(1), 1);
      const __m256d hi = _mm256_insertf128_pd(_mm256_castpd128_pd256(part(2)), part(3), 1);
      return V{_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1)};
#endif
    }
  }
#endif
  return gather(d, x, load_columns(d, p));
}

// x at one full slot's columns: by scalar loads (kLoads) or by the gather.
template <bool kLoads, class D, class Col>
HWY_INLINE auto slot_x(D d, const hn::TFromD<D>* HWY_RESTRICT x, const Col* p) {
  if constexpr (kLoads) return load_lanes(d, x, p);
  else return gather(d, x, load_columns(d, p));
}

// One vector of a slice's lanes: two accumulators (even and odd slots, hiding the fused multiply-add latency
// of rows of a few slots); x is the slice's base (narrow) or x itself (wide).
template <bool kLoads, class D, class Col, class Stored>
HWY_INLINE auto slice_sum(D d, const Col* cp, const Stored* vp, const hn::TFromD<D>* x, std::int64_t full,
                          std::int64_t width, std::int64_t c) {
  const hn::RebindToSigned<D> di;
  auto a0 = hn::Zero(d), a1 = hn::Zero(d);
  std::int64_t k = 0;
  for (; k + 2 <= full; k += 2) {
    a0 = hn::MulAdd(load_values(d, vp + k * c), slot_x<kLoads>(d, x, cp + k * c), a0);
    a1 = hn::MulAdd(load_values(d, vp + (k + 1) * c), slot_x<kLoads>(d, x, cp + (k + 1) * c), a1);
  }
  for (; k < full; ++k) a0 = hn::MulAdd(load_values(d, vp + k * c), slot_x<kLoads>(d, x, cp + k * c), a0);
  for (; k < width; ++k) {  // some lanes are padding
    const auto idx = load_columns(d, cp + k * c);
    const auto stored = stored_lanes(di, idx, cp);
    const auto xs = hn::IfThenElseZero(hn::RebindMask(d, stored), gather(d, x, hn::IfThenElseZero(stored, idx)));
    a0 = hn::MulAdd(load_values(d, vp + k * c), xs, a0);
  }
  return hn::Add(a0, a1);
}

// y[rows[l]] = sums[l] (+ beta * y[rows[l]]) for the first n lanes of `sums`, lane by lane. The empty asm keeps GCC
// from vectorising these loops into the scatter that the loads form avoids (Zen 4 VM, one thread, f32, a stand-alone
// copy of the loads form: vscatterdps 0.146 ms against 0.126 lane by lane on luxembourg_osm, cs4 0.044 / 0.041).
template <class D, class Value, class Index>
HWY_INLINE void store_lanes(D d, decltype(hn::Zero(D())) v, const Index* rows, std::int64_t n, Value beta, Value* y) {
  HWY_ALIGN Value sums[hn::MaxLanes(d)];
  hn::Store(v, d, sums);
  if (beta == 0) {
    for (std::int64_t l = 0; l < n; ++l) {
      Index r = rows[l];
      asm("" : "+r"(r));
      y[r] = sums[l];
    }
  } else {
    for (std::int64_t l = 0; l < n; ++l) {
      Index r = rows[l];
      asm("" : "+r"(r));
      y[r] = sums[l] + beta * y[r];
    }
  }
}

// Vector v of slice s: its lanes' sums (slice_sum), written to y with one vector store where the slice's
// rows are in place, else, with gathers, a scatter through the permutation (a lane-by-lane loop cost as much as
// the sums on rows of ~6: cti, Intel VM), with loads lane by lane, and lane by lane in the padded last slice.
template <bool kLoads, class D, class Value, class Index, class Stored>
HWY_INLINE void slice_vector(D d, const SellView<Value, Index, Stored>& m, std::int64_t s, std::int64_t v, Value alpha,
                             const Value* HWY_RESTRICT x, Value beta, Value* HWY_RESTRICT y) {
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t c = m.c, full = m.full[s], width = m.slice_width[s];
  const Stored* vp = m.val + m.slice_ptr[s] + v;
  const auto sum = m.narrow[s] ? slice_sum<kLoads>(d, m.col16 + m.col_at[s] + v, vp, x + m.base[s], full, width, c)
                               : slice_sum<kLoads>(d, m.col + m.col_at[s] + v, vp, x, full, width, c);
  const std::int64_t p0 = s * c + v;
  const auto scaled = hn::Mul(hn::Set(d, alpha), sum);
  if (m.in_place[s]) {
    hn::StoreU(beta == 0 ? scaled : hn::MulAdd(hn::Set(d, beta), hn::LoadU(d, y + p0), scaled), d, y + p0);
  } else if (kLoads) {  // lane by lane, the last slice's padding lanes left out
    store_lanes(d, scaled, m.perm + p0, p0 + lanes <= m.rows ? lanes : m.rows - p0, beta, y);
  } else if (p0 + lanes <= m.rows) {
    const auto rows = load_index(d, m.perm + p0);
    hn::ScatterIndex(beta == 0 ? scaled : hn::MulAdd(hn::Set(d, beta), gather(d, y, rows), scaled), d, y, rows);
  } else {  // the last slice is padded to C
    HWY_ALIGN Value sums[hn::MaxLanes(d)];
    hn::Store(scaled, d, sums);
    for (std::int64_t l = 0; l < m.rows - p0; ++l) {
      const Index r = m.perm[p0 + l];
      y[r] = beta == 0 ? sums[l] : sums[l] + beta * y[r];
    }
  }
}

// Slices [s_begin, s_end) of C = one vector of lanes, from their records (SliceDesc): the value pointer runs on from
// slice to slice; results go to y as slice_vector writes them.
template <bool kLoads, class Value, class Index, class Stored>
HWY_INLINE void packed_slices(const SellView<Value, Index, Stored>& m, std::int64_t s_begin, std::int64_t s_end,
                                Value alpha, const Value* HWY_RESTRICT x, Value beta, Value* HWY_RESTRICT y) {
  const GatherTag<Value, Index> d;
  constexpr std::int64_t lanes = static_cast<std::int64_t>(hn::MaxLanes(d));
  const SliceDesc* HWY_RESTRICT desc = m.desc;
  const Stored* vp = m.val + m.slice_ptr[s_begin];
  const std::int64_t whole = m.rows / lanes;  // slices with C rows; the last may hold fewer
  const auto va = hn::Set(d, alpha);
  for (std::int64_t s = s_begin; s < s_end; ++s) {
    const SliceDesc sd = desc[s];
    const auto sum = sd.narrow ? slice_sum<kLoads>(d, m.col16 + sd.col_at, vp, x + sd.base, sd.full, sd.width, lanes)
                               : slice_sum<kLoads>(d, m.col + sd.col_at, vp, x, sd.full, sd.width, lanes);
    vp += sd.width * lanes;
    const auto scaled = hn::Mul(va, sum);
    Value* ys = y + s * lanes;
    const Index* rows = m.perm + s * lanes;
    if (sd.in_place) {
      hn::StoreU(beta == 0 ? scaled : hn::MulAdd(hn::Set(d, beta), hn::LoadU(d, ys), scaled), d, ys);
    } else if (kLoads || s >= whole) {  // lane by lane, the last slice's padding lanes left out
      store_lanes(d, scaled, rows, s < whole ? lanes : m.rows - s * lanes, beta, y);
    } else {
      const auto r = load_index(d, rows);
      hn::ScatterIndex(beta == 0 ? scaled : hn::MulAdd(hn::Set(d, beta), gather(d, y, r), scaled), d, y, r);
    }
  }
}

// Slices [s_begin, s_end), one vector of lanes at a time.
template <bool kLoads, class Value, class Index, class Stored>
void slices(const SellView<Value, Index, Stored>& view, std::int64_t s_begin, std::int64_t s_end, Value alpha,
            const Value* x, Value beta, Value* y) {
  const GatherTag<Value, Index> d;
  const SellView<Value, Index, Stored> m = view;  // a local copy: y's stores cannot alias its fields
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  if (s_begin >= s_end) return;
  if (m.c == lanes) return packed_slices<kLoads>(m, s_begin, s_end, alpha, x, beta, y);  // the default C
  for (std::int64_t s = s_begin; s < s_end; ++s)
    for (std::int64_t v = 0; v < m.c; v += lanes) slice_vector<kLoads>(d, m, s, v, alpha, x, beta, y);
}

// HWY_EXPORT takes plain function names: one per (value, index, stored) combination.
#define SPMV_SELL_SLICES(V, I, S, suffix)                                                              \
  void slices_##suffix(const SellView<V, I, S>& m, std::int64_t s_begin, std::int64_t s_end, V alpha, \
                       const V* x, V beta, V* y) {                                                    \
    slices<false, V, I, S>(m, s_begin, s_end, alpha, x, beta, y);                                     \
  }                                                                                                   \
  void loads_##suffix(const SellView<V, I, S>& m, std::int64_t s_begin, std::int64_t s_end, V alpha,  \
                      const V* x, V beta, V* y) {                                                     \
    slices<true, V, I, S>(m, s_begin, s_end, alpha, x, beta, y);                                      \
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
#include <hwy/aligned_allocator.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"
#include "spmv/host_memory.hpp"

namespace spmv::cpu::detail {

// Vectors per slice: C = kSellSliceVectors * the SIMD width of (Value, Index) on the dispatched target
// (8 f32 / 4 f64 lanes on AVX2). Kreutzer et al. take C = the SIMD width; measured on the 2-core Zen 3
// (AVX2) development machine, one thread: see docs/PERFORMANCE.md "CPU Auto with the expected-applies
// hint" for C = 1 and 2 widths.
constexpr std::int64_t kSellSliceVectors = 1;

// The share of slices whose columns fit 16-bit offsets from which the narrow form is used (below it every
// slice keeps Index columns). A guess, not a fit: 15 of 16 slices bounds the form's mispredicted branches to
// a few per hundred slices; the suite's SuiteSparse files are narrow in every slice of 256-row windows
// except luxembourg_osm, whose slices are wide (sorted whole, ct2010 keeps 1% of its slots wide).
constexpr double kSellMinNarrowShare = 15.0 / 16.0;

// How a SIMD plan reads x in its full slots: Gathers (vgatherdps / vgatherqpd on x86) or Loads (a scalar load
// a lane, packed by inserts: load_lanes; a permuted slice's results then go to y lane by lane, not by a scatter).
// Neither wins everywhere. On the 2-core Zen 4 VM (one thread, 2026-11-29, docs/PERFORMANCE.md "SELL's x by scalar
// loads") loads ran 1.4-1.8x faster on the SuiteSparse files, whose x sits in L1/L2, and 1.3x slower where x
// spills the 1 MiB L2 (rmat scale 18 f64, 5% of a million rows of 32); gathers are cheap on Intel cores without
// the gather microcode mitigation. So with the expected-applies hint the plan races the two forms on A
// (kRaceMargin: a tie keeps gathers); without it, it keeps gathers. The two forms give the same bits (the same
// products and sums, only x's loads differ). SPMV_CPU_SELL_X=gathers|loads names one (tests, benchmarks).
enum class SellX { Gathers, Loads };

// SPMV_CPU_SELL_X resolved: "gathers" or "loads"; unset or empty: none (the plan decides). Throws
// InvalidArgument for anything else.
std::optional<SellX> requested_sell_x() {
  const char* env = std::getenv("SPMV_CPU_SELL_X");
  if (env == nullptr || *env == 0) return std::nullopt;
  if (std::string(env) == "gathers") return SellX::Gathers;
  if (std::string(env) == "loads") return SellX::Loads;
  throw InvalidArgument(std::string("SPMV_CPU_SELL_X=") + env + ": expected gathers or loads");
}

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
HWY_EXPORT(loads_f32_i32);
HWY_EXPORT(loads_f32_i64);
HWY_EXPORT(loads_f64_i32);
HWY_EXPORT(loads_f64_i64);
HWY_EXPORT(loads_f32_i32_f16);
HWY_EXPORT(loads_f32_i64_f16);
HWY_EXPORT(loads_f32_i32_bf16);
HWY_EXPORT(loads_f32_i64_bf16);

namespace {

template <class Value, class Index, class Stored = Value>
using SlicesFn = void (*)(const SellView<Value, Index, Stored>&, std::int64_t, std::int64_t, Value, const Value*,
                          Value, Value*);

// The dispatched target's kernel for (Value, Index, Stored): x by gathers, or by scalar loads (`loads`).
template <class Value, class Index, class Stored = Value>
SlicesFn<Value, Index, Stored> simd_slices(bool loads) {
  constexpr bool i32 = std::is_same_v<Index, std::int32_t>;
#define SPMV_SELL_PICK(suffix) \
  return loads ? &HWY_DYNAMIC_DISPATCH(loads_##suffix) : &HWY_DYNAMIC_DISPATCH(slices_##suffix)
  if constexpr (std::is_same_v<Stored, hwy::float16_t>) {
    if constexpr (i32) SPMV_SELL_PICK(f32_i32_f16);
    else SPMV_SELL_PICK(f32_i64_f16);
  } else if constexpr (std::is_same_v<Stored, hwy::bfloat16_t>) {
    if constexpr (i32) SPMV_SELL_PICK(f32_i32_bf16);
    else SPMV_SELL_PICK(f32_i64_bf16);
  } else if constexpr (std::is_same_v<Value, float> && i32) SPMV_SELL_PICK(f32_i32);
  else if constexpr (std::is_same_v<Value, float>) SPMV_SELL_PICK(f32_i64);
  else if constexpr (std::is_same_v<Index, std::int32_t>) SPMV_SELL_PICK(f64_i32);
  else SPMV_SELL_PICK(f64_i64);
#undef SPMV_SELL_PICK
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
        const Index col = m.column(s, k * c + l);
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
      const Index col = m.column(p / c, k * c + p % c);
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
  std::vector<std::uint8_t> narrow;
  std::vector<Index> base;
  std::vector<std::int64_t> col_at;
  hwy::AlignedFreeUniquePtr<std::uint16_t[]> col16;
  hwy::AlignedFreeUniquePtr<Index[]> col;
  hwy::AlignedFreeUniquePtr<Stored[]> val;
  std::vector<SliceDesc> desc;
  SellView<Value, Index, Stored> view() const {
    return {m.rows,        m.c,         m.slice_ptr.data(), m.slice_width.data(), full.data(), m.perm.data(),
            in_place.data(), narrow.data(), base.data(),    col_at.data(),        col16.get(), col.get(),
            val.get(),   desc.data()};
  }
};

// First touch: the slots of each thread's slices are copied into fresh, uninitialised storage by that
// thread, so that on a machine of several memory nodes their pages sit on the node of the thread that
// reads them (Linux places a page where it is first written; to_sell wrote the padded arrays on one
// thread). Both copies exist for the moment of the copy. The storage is 64-byte aligned, so that a slot's
// vector of values or columns does not straddle cache lines (new[] gave 16-byte alignment: cage10 and
// bcsstk16 f32 ran 5-10% slower with the slots 16 bytes off a line; docs/algorithms/cpu_simd.md).
template <class T>
hwy::AlignedFreeUniquePtr<T[]> first_touch_copy(std::vector<T>& source, const std::vector<std::int64_t>& slice_ptr,
                                                const std::vector<std::int64_t>& bounds) {
  auto placed = hwy::AllocateAligned<T>(std::max<std::size_t>(source.size(), 1));  // not written here
  advise_huge_pages(placed.get(), source.size() * sizeof(T));  // before the copy's first touch
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
  // Slices whose stored columns span less than 2^16 - 1 keep 16-bit offsets from their smallest column: 6
  // bytes a slot instead of 8 in f32, which kept bcsstk16 (290 k nonzeros) in the 2 MiB L2 of the Intel VM
  // (docs/algorithms/cpu_simd.md). Each form's slots are packed in slice order.
  plan->narrow.resize(static_cast<std::size_t>(slices));
  plan->base.resize(static_cast<std::size_t>(slices));
  plan->col_at.resize(static_cast<std::size_t>(slices));
  std::vector<std::int64_t> narrow_ptr(static_cast<std::size_t>(slices) + 1, 0), wide_ptr = narrow_ptr;
  std::int64_t narrow_slices = 0;
  for (std::int64_t s = 0; s < slices; ++s) {
    Index lo = std::numeric_limits<Index>::max(), hi = -1;
    for (std::int64_t k = m.slice_ptr[s]; k < m.slice_ptr[s + 1]; ++k)
      if (m.col_idx[k] >= 0) lo = std::min(lo, m.col_idx[k]), hi = std::max(hi, m.col_idx[k]);
    if (hi < 0) lo = hi = 0;
    plan->base[s] = lo;
    plan->narrow[s] = static_cast<std::int64_t>(hi) - lo < cpu::detail::kNarrowPadding;
    narrow_slices += plan->narrow[s];
  }
  // A per-slice branch between the two forms costs a misprediction wherever they alternate (luxembourg_osm,
  // rows of 2, ran 19% slower with both forms mixed): below kSellMinNarrowShare of narrow slices, all are wide.
  const bool use_narrow = narrow_slices >= cpu::detail::kSellMinNarrowShare * static_cast<double>(slices);
  for (std::int64_t s = 0; s < slices; ++s) {
    plan->narrow[s] = plan->narrow[s] && use_narrow;
    const bool narrow = plan->narrow[s];
    const std::int64_t slots = m.slice_ptr[s + 1] - m.slice_ptr[s];
    if (!narrow) plan->base[s] = 0;
    plan->col_at[s] = narrow ? narrow_ptr[s] : wide_ptr[s];
    narrow_ptr[s + 1] = narrow_ptr[s] + (narrow ? slots : 0);
    wide_ptr[s + 1] = wide_ptr[s] + (narrow ? 0 : slots);
  }
  plan->desc.resize(static_cast<std::size_t>(slices));
  for (std::int64_t s = 0; s < slices; ++s)
    plan->desc[s] = {plan->col_at[s], static_cast<std::int64_t>(plan->base[s]),
                     static_cast<std::int64_t>(plan->full[s]), static_cast<std::int64_t>(m.slice_width[s]),
                     plan->narrow[s], plan->in_place[s]};
  std::vector<std::uint16_t> col16(static_cast<std::size_t>(narrow_ptr.back()));
  std::vector<Index> col_wide(static_cast<std::size_t>(wide_ptr.back()));
  for (std::int64_t s = 0; s < slices; ++s)
    for (std::int64_t k = m.slice_ptr[s]; k < m.slice_ptr[s + 1]; ++k) {
      const std::int64_t at = plan->col_at[s] + k - m.slice_ptr[s];
      const Index col = m.col_idx[k];
      if (!plan->narrow[s]) col_wide[at] = col;
      else col16[at] = col < 0 ? cpu::detail::kNarrowPadding : static_cast<std::uint16_t>(col - plan->base[s]);
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
                    cpu::detail::simd_fits<Value, Index>(std::max<std::int64_t>(m.cols, m.rows)) &&
                    c % cpu::detail::simd_lanes<Value, Index>() == 0;
  CpuKernel<Value, Index> kernel;
  kernel.extra_bytes = storage_bytes(m) - m.values.size() * (sizeof(Value) - sizeof(Stored)) -
                       col16.size() * (sizeof(Index) - sizeof(std::uint16_t)) +
                       plan->full.size() * (2 * sizeof(Index) + sizeof(std::int64_t)) + 2 * plan->in_place.size() +
                       plan->desc.size() * sizeof(cpu::detail::SliceDesc);
  kernel.policy = "sell C=" + std::to_string(c) + " sigma=" + std::to_string(m.sigma) +
                  " slices=" + std::to_string(slices) + " slots=" + std::to_string(m.slice_ptr.back()) +
                  " narrow=" + std::to_string(narrow_ptr.back()) + " threads=" + std::to_string(threads) +
                  (storage != ValueStorage::Native ? " values=" + std::string(to_string(storage)) : std::string()) +
                  (transpose ? " (transpose: sequential scatter)"
                   : simd    ? " simd=" + cpu::detail::simd_target()
                             : std::string(" simd=off"));
  plan->m = std::move(m);
  std::vector<Index>().swap(plan->m.col_idx);
  plan->col16 = first_touch_copy(col16, narrow_ptr, plan->bounds);
  plan->col = first_touch_copy(col_wide, wide_ptr, plan->bounds);
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
  // The product with slice kernel `run`.
  const auto product = [plan, threads, transpose, cols](SlicesFn<Value, Index, Stored> run) {
    return [plan, run, threads, transpose, cols](Value alpha, const Value* x, Value beta, Value* y) {
      const std::int64_t n = transpose ? cols : plan->m.rows;
      if (alpha == 0) {  // y = beta * y without reading A or x; beta == 0 does not read y
        for (std::int64_t i = 0; i < n; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
        return;
      }
      const SellView<Value, Index, Stored> view = plan->view();
      if (transpose) return cpu::detail::slices_scatter(view, cols, alpha, x, beta, y);
      if (threads == 1) return run(view, 0, plan->m.num_slices(), alpha, x, beta, y);  // no team to fork
#pragma omp parallel for schedule(static, 1) num_threads(threads)
      for (int t = 0; t < threads; ++t) run(view, plan->bounds[t], plan->bounds[t + 1], alpha, x, beta, y);
    };
  };
  if (!simd) {
    kernel.run = product(&cpu::detail::slices_plain<Value, Index, Stored>);
    return kernel;
  }
  // x by gathers or by scalar loads (SellX): named, raced with the hint, else gathers.
  using cpu::detail::SellX;
  std::optional<SellX> form = cpu::detail::requested_sell_x();
  std::string raced;
  if (!form && options.expected_applies >= kRaceMinApplies && cpu_measuring_allowed()) {
    const std::vector<Value> ones(static_cast<std::size_t>(cols), Value(1));
    std::vector<Value> out(static_cast<std::size_t>(plan->m.rows));
    const decltype(kernel.run) forms[] = {product(cpu::detail::simd_slices<Value, Index, Stored>(false)),
                                          product(cpu::detail::simd_slices<Value, Index, Stored>(true))};
    const auto best = time_alternately(2, kRaceRounds, kRaceSampleSeconds, false,
                                       [&](std::size_t f) { forms[f](Value(1), ones.data(), Value(0), out.data()); });
    form = best[1] < kRaceMargin * best[0] ? SellX::Loads : SellX::Gathers;
    char words[80];
    std::snprintf(words, sizeof words, " (raced: gathers %.3g ms, loads %.3g ms)", best[0] * 1e3, best[1] * 1e3);
    raced = words;
  }
  const bool loads = form == SellX::Loads;
  kernel.policy += std::string(loads ? " x=loads" : " x=gathers") + raced;
  kernel.run = product(cpu::detail::simd_slices<Value, Index, Stored>(loads));
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
