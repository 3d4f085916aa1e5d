// Two more row kernels of the dispatched CPU path, for the rows the scalar loops leave to add latency and
// branch misses on CPUs whose gathers are cheap (Intel AVX-512 cores: docs/algorithms/cpu_simd.md):
//  - rows in lanes (ShortRows::Lanes): N consecutive rows, one per vector lane (N = the value vector's
//    lanes), stepped together; step t gathers each lane's t-th column index, value and x, and lanes
//    whose row has ended are masked. SELL-C without converting the matrix: no horizontal sum, no per-row
//    exit branch. For rows of a few nonzeros.
//  - one vector per row (ShortRows::Vector): each row a vector dot product (two accumulators, loads of
//    values and indices, one gather of x per vector) with a masked last vector instead of a scalar tail,
//    so rows of 16-128 take no per-nonzero branch and no scalar add chain.
// Both are compiled per Highway target and dispatched at run time, like csr_simd.cpp; which one a plan
// runs is measured on the running CPU (csr_simd.hpp, choose_row_kernels). Lanes of a finished row gather
// position 0 (a valid entry of a non-empty matrix) and are then discarded by a select, so 0 * Inf from a
// finished lane never enters a sum.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/csr_rows_vector.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "cpu/csr_simd.hpp"
#include "cpu/simd_gather-inl.h"
#include "spmv/error.hpp"

HWY_BEFORE_NAMESPACE();
namespace spmv::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class Value>
HWY_INLINE void store_row(Value s, Value alpha, Value beta, Value* y) {
  *y = beta == 0 ? alpha * s : alpha * s + beta * *y;
}

// Signed lanes of d's width from lanes of the same count (int32 -> int64 for f64 values with int32
// indices).
template <class D, class V>
HWY_INLINE auto widen(D di, V v) {
  if constexpr (sizeof(hn::TFromV<V>) == sizeof(hn::TFromD<D>)) return v;
  else return hn::PromoteTo(di, v);
}

template <class Value, class Index>
void lanes(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin, Index r_end,
           Value alpha, Value beta, Value* y) {
  const hn::ScalableTag<Value> d;
  const hn::RebindToSigned<decltype(d)> di;  // positions and columns at the value's width, for its gathers
  const hn::Rebind<Index, decltype(d)> dp;   // positions and columns as stored, for the gather of indices
  const auto n = static_cast<Index>(hn::Lanes(d));
  const auto va = hn::Set(d, alpha), vb = hn::Set(d, beta);
  Index r = r_begin;
  for (; r + n <= r_end; r += n) {
    const auto start = hn::LoadU(dp, row_ptr + r);
    const auto length = hn::Sub(hn::LoadU(dp, row_ptr + r + 1), start);
    const auto wide_length = widen(di, length);
    const Index steps = hn::GetLane(hn::MaxOfLanes(dp, length));
    auto acc = hn::Zero(d);
    for (Index t = 0; t < steps; ++t) {
      const auto live = hn::Lt(hn::Set(dp, t), length);
      const auto wide_live = hn::Lt(hn::Set(di, t), wide_length);
      const auto pos = hn::IfThenElseZero(live, hn::Add(start, hn::Set(dp, t)));
      const auto c = hn::IfThenElseZero(wide_live, widen(di, gather(dp, col, pos)));
      const auto product = hn::Mul(gather(d, val, widen(di, pos)), gather(d, x, c));
      acc = hn::IfThenElse(hn::RebindMask(d, wide_live), hn::Add(acc, product), acc);
    }
    const auto result = hn::Mul(va, acc);
    hn::StoreU(beta == 0 ? result : hn::MulAdd(vb, hn::LoadU(d, y + r), result), d, y + r);
  }
  csr_rows_scalar(row_ptr, col, val, x, r, r_end, alpha, beta, y);
}

// Rows in lanes is built for the combinations whose positions fit the value's lanes: f32 with int64
// indices runs the plain loop.
template <class Value, class Index>
void lanes_or_plain(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                    Index r_end, Value alpha, Value beta, Value* y) {
  if constexpr (sizeof(Index) > sizeof(Value)) csr_rows_scalar(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);
  else lanes(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);
}

template <class Value, class Index>
void vector_rows(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                 Index r_end, Value alpha, Value beta, Value* y) {
  const GatherTag<Value, Index> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto n = static_cast<std::int64_t>(hn::Lanes(d));
  // A masked last vector reads whole vectors of indices and values past its row: in bounds up to the
  // range's last nonzero; the last rows' tails past that take the scalar tail.
  const std::int64_t bound = row_ptr[r_end];
  for (Index r = r_begin; r < r_end; ++r) {
    std::int64_t k = row_ptr[r];
    const std::int64_t end = row_ptr[r + 1];
    auto a0 = hn::Zero(d), a1 = hn::Zero(d);
    for (; k + 2 * n <= end; k += 2 * n) {
      a0 = hn::MulAdd(hn::LoadU(d, val + k), gather(d, x, load_index(d, col + k)), a0);
      a1 = hn::MulAdd(hn::LoadU(d, val + k + n), gather(d, x, load_index(d, col + k + n)), a1);
    }
    if (k + n <= end) {
      a0 = hn::MulAdd(hn::LoadU(d, val + k), gather(d, x, load_index(d, col + k)), a0);
      k += n;
    }
    Value tail = 0;
    if (k < end && k + n <= bound) {
      const auto live = hn::FirstN(di, static_cast<std::size_t>(end - k));
      const auto c = hn::IfThenElseZero(live, load_index(d, col + k));
      const auto product = hn::Mul(hn::LoadU(d, val + k), gather(d, x, c));
      a1 = hn::Add(a1, hn::IfThenElseZero(hn::RebindMask(d, live), product));
    } else {
      for (; k < end; ++k) tail += val[k] * x[col[k]];
    }
    store_row(hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, a1))) + tail, alpha, beta, y + r);
  }
}

// HWY_EXPORT takes plain function names: one per (value, index) combination.
#define SPMV_VECTOR_ROWS_ENTRY(V, I, suffix)                                                                   \
  std::int64_t width_##suffix(bool lanes) {                                                                    \
    return static_cast<std::int64_t>(lanes ? hn::Lanes(hn::ScalableTag<V>()) : hn::Lanes(GatherTag<V, I>()));  \
  }                                                                                                            \
  void vector_##suffix(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end, V alpha, \
                       V beta, V* y) {                                                                         \
    vector_rows<V, I>(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);                                   \
  }                                                                                                            \
  void lanes_##suffix(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end, V alpha,  \
                      V beta, V* y) {                                                                          \
    lanes_or_plain<V, I>(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);                                \
  }
SPMV_VECTOR_ROWS_ENTRY(float, std::int32_t, f32_i32)
SPMV_VECTOR_ROWS_ENTRY(float, std::int64_t, f32_i64)
SPMV_VECTOR_ROWS_ENTRY(double, std::int32_t, f64_i32)
SPMV_VECTOR_ROWS_ENTRY(double, std::int64_t, f64_i64)
#undef SPMV_VECTOR_ROWS_ENTRY

}  // namespace spmv::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spmv::cpu::detail {

HWY_EXPORT(width_f32_i32);
HWY_EXPORT(width_f32_i64);
HWY_EXPORT(width_f64_i32);
HWY_EXPORT(width_f64_i64);
HWY_EXPORT(vector_f32_i32);
HWY_EXPORT(vector_f32_i64);
HWY_EXPORT(vector_f64_i32);
HWY_EXPORT(vector_f64_i64);
HWY_EXPORT(lanes_f32_i32);
HWY_EXPORT(lanes_f32_i64);
HWY_EXPORT(lanes_f64_i32);
HWY_EXPORT(lanes_f64_i64);

std::optional<ShortRows> requested_row_kernel(int requested) {
  constexpr ShortRows kernels[] = {ShortRows::Plain, ShortRows::Unrolled, ShortRows::Lanes, ShortRows::Vector};
  if (requested >= 0 && requested < 4) return kernels[requested];
  if (requested != -1)
    throw InvalidArgument("Options::cpu_rows = " + std::to_string(requested) +
                          ": expected -1 (the rule), 0 plain, 1 unrolled, 2 lanes or 3 vector");
  const char* env = std::getenv("SPMV_CPU_ROWS");
  if (env == nullptr || *env == 0) return std::nullopt;
  for (int k = 0; k < 4; ++k)
    if (std::string(env) == kRowKernelNames[k]) return kernels[k];
  throw InvalidArgument(std::string("SPMV_CPU_ROWS=") + env + ": expected plain, unrolled, lanes or vector");
}

// lanes_per_nonzero for a kernel of `n` lanes: rows in lanes (`lanes`) fill n times each group's longest
// row, a vector per row n times each row's vectors.
template <class Index>
double lanes_filled(bool lanes, std::int64_t n, const Index* row_ptr, Index rows) {
  std::int64_t filled = 0;
  if (lanes) {
    for (std::int64_t r = 0; r < rows; r += n) {
      std::int64_t longest = 0;
      for (std::int64_t i = r; i < std::min<std::int64_t>(r + n, rows); ++i)
        longest = std::max<std::int64_t>(longest, row_ptr[i + 1] - row_ptr[i]);
      filled += n * longest;
    }
  } else {
    for (std::int64_t r = 0; r < rows; ++r) filled += n * ((row_ptr[r + 1] - row_ptr[r] + n - 1) / n);
  }
  const std::int64_t nnz = rows > 0 ? std::int64_t{row_ptr[rows]} - row_ptr[0] : 0;
  return nnz > 0 ? static_cast<double>(filled) / static_cast<double>(nnz) : 1.0;
}

#define SPMV_VECTOR_ROWS_DISPATCH(V, I, suffix)                                                                \
  template <>                                                                                                  \
  double lanes_per_nonzero<V, I>(ShortRows kernel, const I* row_ptr, I rows) {                                \
    const bool lanes = kernel == ShortRows::Lanes;                                                             \
    return lanes_filled(lanes, HWY_DYNAMIC_DISPATCH(width_##suffix)(lanes), row_ptr, rows);                    \
  }                                                                                                            \
  template <>                                                                                                  \
  void csr_rows_vector<V, I>(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end,   \
                             V alpha, V beta, V* y) {                                                          \
    HWY_DYNAMIC_DISPATCH(vector_##suffix)(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);               \
  }                                                                                                            \
  template <>                                                                                                  \
  void csr_rows_lanes<V, I>(const I* row_ptr, const I* col, const V* val, const V* x, I r_begin, I r_end,    \
                            V alpha, V beta, V* y) {                                                           \
    HWY_DYNAMIC_DISPATCH(lanes_##suffix)(row_ptr, col, val, x, r_begin, r_end, alpha, beta, y);                \
  }
SPMV_VECTOR_ROWS_DISPATCH(float, std::int32_t, f32_i32)
SPMV_VECTOR_ROWS_DISPATCH(float, std::int64_t, f32_i64)
SPMV_VECTOR_ROWS_DISPATCH(double, std::int32_t, f64_i32)
SPMV_VECTOR_ROWS_DISPATCH(double, std::int64_t, f64_i64)
#undef SPMV_VECTOR_ROWS_DISPATCH

}  // namespace spmv::cpu::detail
#endif  // HWY_ONCE
