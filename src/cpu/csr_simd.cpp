// SIMD CSR rows on the CPU with Google Highway: the file is compiled once per target by
// hwy/foreach_target.h and the best target for the running CPU is chosen at the first call
// (HWY_DYNAMIC_DISPATCH), so one binary runs on any x86 or ARM CPU.
//
// Why not one running sum per row: the scalar loop spends ~5 instructions per nonzero and, for f32,
// is bound by instruction throughput rather than memory (issue 17: f32 no faster than f64). Two
// shapes replace it, chosen per row by its length:
//  * short rows (fewer than kDirectRowVectors vectors; stencils, FEM, most power-law rows): a block
//    of consecutive rows is processed as one flat run of nonzeros, products val[k] * x[col[k]] a
//    whole vector at a time (vector loads of values and indices, one gather of x) into a buffer held
//    in L1, then each row sums its slice of the buffer. No lane is wasted on row ends, whatever the
//    row length, at the price of one store and reload per nonzero in L1.
//  * long rows: a dot product with four independent vector accumulators (fused multiply-add), so
//    the add latency is hidden, then a horizontal sum and a scalar tail.
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

HWY_BEFORE_NAMESPACE();
namespace spmv::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Tuning (measured on the 2-core AMD EPYC (Zen 3, AVX2) development machine, 2 threads, f32 and
// f64, poisson2d n=1000, stencil27 n=60, rmat scale 18; see docs/PERFORMANCE.md):
// products buffered per block of short rows: 2048 values (8-16 KB) stay in a 32 KB L1 with x and A
// streaming past; rows of at least 8 vectors (64 f32 / 32 f64 on AVX2) gain nothing from the buffer.
constexpr std::int64_t kBufferValues = 2048;
constexpr std::int64_t kDirectRowVectors = 8;

// The lanes of x gathered per step: a full vector of Value, or, when the index is wider than the
// value (f32 with int64 indices), as many lanes as one vector of indices holds.
template <class Value, class Index>
using GatherTag = std::conditional_t<(sizeof(Index) > sizeof(Value)), hn::Rebind<Value, hn::ScalableTag<Index>>,
                                     hn::ScalableTag<Value>>;

// Loads Lanes(d) column indices as the signed integer lanes GatherIndex takes for d.
template <class D, class Index>
HWY_INLINE auto load_index(D d, const Index* p) {
  using Lane = hwy::MakeSigned<hn::TFromD<D>>;
  const hn::RebindToSigned<D> di;
  if constexpr (sizeof(Index) == sizeof(Lane)) {
    return hn::LoadU(di, reinterpret_cast<const Lane*>(p));
  } else if constexpr (sizeof(Index) < sizeof(Lane)) {  // int32 indices, f64 values
    return hn::PromoteTo(di, hn::LoadU(hn::Rebind<Index, D>(), p));
  } else {  // int64 indices, f32 values: the caller checked that every column fits in int32
    const hn::Rebind<std::uint64_t, D> du64;
    const hn::Rebind<std::uint32_t, D> du32;
    const hn::Rebind<Index, D> dl;
    return hn::BitCast(di, hn::TruncateTo(du32, hn::BitCast(du64, hn::LoadU(dl, p))));
  }
}

template <class Value, class Index>
HWY_INLINE Value dot_range(const Index* col, const Value* val, const Value* x, std::int64_t k, std::int64_t end) {
  const GatherTag<Value, Index> d;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (; k + 4 * n <= end; k += 4 * n) {
    a0 = hn::MulAdd(hn::LoadU(d, val + k), hn::GatherIndex(d, x, load_index(d, col + k)), a0);
    a1 = hn::MulAdd(hn::LoadU(d, val + k + n), hn::GatherIndex(d, x, load_index(d, col + k + n)), a1);
    a2 = hn::MulAdd(hn::LoadU(d, val + k + 2 * n), hn::GatherIndex(d, x, load_index(d, col + k + 2 * n)), a2);
    a3 = hn::MulAdd(hn::LoadU(d, val + k + 3 * n), hn::GatherIndex(d, x, load_index(d, col + k + 3 * n)), a3);
  }
  for (; k + n <= end; k += n)
    a0 = hn::MulAdd(hn::LoadU(d, val + k), hn::GatherIndex(d, x, load_index(d, col + k)), a0);
  Value s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; k < end; ++k) s += val[k] * x[col[k]];
  return s;
}

// buf[k - begin] = val[k] * x[col[k]] for k in [begin, end).
template <class Value, class Index>
HWY_INLINE void products(const Index* col, const Value* val, const Value* x, std::int64_t begin, std::int64_t end,
                         Value* HWY_RESTRICT buf) {
  const GatherTag<Value, Index> d;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t k = begin;
  for (; k + 2 * n <= end; k += 2 * n) {
    const auto p0 = hn::Mul(hn::LoadU(d, val + k), hn::GatherIndex(d, x, load_index(d, col + k)));
    const auto p1 = hn::Mul(hn::LoadU(d, val + k + n), hn::GatherIndex(d, x, load_index(d, col + k + n)));
    hn::StoreU(p0, d, buf + (k - begin));
    hn::StoreU(p1, d, buf + (k - begin) + n);
  }
  for (; k + n <= end; k += n)
    hn::StoreU(hn::Mul(hn::LoadU(d, val + k), hn::GatherIndex(d, x, load_index(d, col + k))), d, buf + (k - begin));
  for (; k < end; ++k) buf[k - begin] = val[k] * x[col[k]];
}

// Sum of p[0..len): full vectors, then the remainder; rows shorter than one vector are a plain loop.
template <class Value>
HWY_INLINE Value buffer_sum(const Value* p, std::int64_t len) {
  const hn::ScalableTag<Value> d;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  Value s = 0;
  std::int64_t k = 0;
  if (len >= n) {
    auto acc = hn::LoadU(d, p);
    for (k = n; k + n <= len; k += n) acc = hn::Add(acc, hn::LoadU(d, p + k));
    s = hn::GetLane(hn::SumOfLanes(d, acc));
  }
  for (; k < len; ++k) s += p[k];
  return s;
}

template <class Value, class Index>
void rows(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin, Index r_end,
          Value alpha, Value beta, Value* y) {
  const std::int64_t direct = kDirectRowVectors * static_cast<std::int64_t>(hn::Lanes(GatherTag<Value, Index>()));
  static_assert(kBufferValues >= 16 * kDirectRowVectors, "a short row must fit the buffer (AVX-512 f32: 16 lanes)");
  HWY_ALIGN Value buf[kBufferValues];
  const auto finish = [&](Index r, Value s) { y[r] = beta == 0 ? alpha * s : alpha * s + beta * y[r]; };
  Index r = r_begin;
  while (r < r_end) {
    const std::int64_t k0 = row_ptr[r];
    if (row_ptr[r + 1] - k0 >= direct) {
      finish(r, dot_range(col, val, x, k0, static_cast<std::int64_t>(row_ptr[r + 1])));
      ++r;
      continue;
    }
    // The longest run of short rows from r whose nonzeros fit the buffer (at least row r).
    Index re = r + 1;
    while (re < r_end && row_ptr[re + 1] - row_ptr[re] < direct && row_ptr[re + 1] - k0 <= kBufferValues) ++re;
    products(col, val, x, k0, static_cast<std::int64_t>(row_ptr[re]), buf);
    for (; r < re; ++r) finish(r, buffer_sum(buf + (row_ptr[r] - k0), static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r])));
  }
}

// HWY_EXPORT takes plain function names: one per (value, index) combination.
#define SPMV_SIMD_ENTRY(V, I, suffix)                                                                          \
  void rows_##suffix(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end, V alpha,  \
                     V beta, V* y) {                                                                           \
    rows<V, I>(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);                                          \
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
                           V alpha, V beta, V* y) {                                                            \
    HWY_DYNAMIC_DISPATCH(rows_##suffix)(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);                \
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
