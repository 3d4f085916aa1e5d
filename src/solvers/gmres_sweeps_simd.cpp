// The CPU GMRES's two Arnoldi sweeps, block by block, with Highway's run-time dispatch (the contract is in
// src/solvers/gmres_sweeps.hpp; the step that calls them in src/solvers/gmres_arnoldi.hpp).
//
// A block's rows are a vector of doubles at a time: a float column is loaded half a vector's bytes at a
// time and widened (PromoteTo, exact), so the f32 basis streams 4 bytes an entry and computes in double
// on Lanes(double) lanes (8 on AVX-512) instead of the baseline build's 2. The multi-dot widens w's block
// once into a buffer of doubles (a double w is read in place) and dots every column against it; the fused
// update sums the projection column by column into the same kind of buffer (L1), writes the new entries,
// keeps them widened in the buffer, and dots the block's columns (read again, from L2) against it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "solvers/gmres_sweeps_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "solvers/gmres_sweeps.hpp"

HWY_BEFORE_NAMESPACE();
namespace spmv::solvers::arnoldi::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<double>;

// Lanes(d) entries of p as doubles (float widened, exact).
template <class T>
HWY_INLINE auto load_wide(DF d, const T* HWY_RESTRICT p) {
  if constexpr (std::is_same_v<T, double>) return hn::LoadU(d, p);
  else return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, DF>(), p));
}

// sum_i a[i] * x[i] over [0, len): four vectors of partial sums, added pairwise, then the lanes, then the
// last len % Lanes entries in order.
template <class T>
HWY_INLINE double dot(const T* HWY_RESTRICT a, const double* HWY_RESTRICT x, std::int64_t len) {
  const DF d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  std::int64_t i = 0;
  for (; i + 4 * lanes <= len; i += 4 * lanes) {
    s0 = hn::MulAdd(load_wide(d, a + i), hn::LoadU(d, x + i), s0);
    s1 = hn::MulAdd(load_wide(d, a + i + lanes), hn::LoadU(d, x + i + lanes), s1);
    s2 = hn::MulAdd(load_wide(d, a + i + 2 * lanes), hn::LoadU(d, x + i + 2 * lanes), s2);
    s3 = hn::MulAdd(load_wide(d, a + i + 3 * lanes), hn::LoadU(d, x + i + 3 * lanes), s3);
  }
  for (; i + lanes <= len; i += lanes) s0 = hn::MulAdd(load_wide(d, a + i), hn::LoadU(d, x + i), s0);
  double sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; i < len; ++i) sum += static_cast<double>(a[i]) * x[i];
  return sum;
}

// local[c] += V_c[i0, i0 + len) . x for c < columns, local[columns] += x . x.
template <class Basis>
HWY_INLINE void dots(const Basis* HWY_RESTRICT v, std::int64_t n, int columns, std::int64_t i0, const double* x,
                     std::int64_t len, double* local) {
  for (int c = 0; c < columns; ++c) local[c] += dot(v + c * n + i0, x, len);
  local[columns] += dot(x, x, len);
}

template <class Basis, class W>
HWY_INLINE void multi_dot(const Basis* HWY_RESTRICT v, std::int64_t n, int columns, const W* HWY_RESTRICT w,
                          std::int64_t i0, std::int64_t len, double* local) {
  if constexpr (std::is_same_v<W, double>) {
    dots(v, n, columns, i0, w + i0, len, local);
  } else {
    const DF d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    HWY_ALIGN double wide[kRowBlock];
    std::int64_t i = 0;
    for (; i + lanes <= len; i += lanes) hn::Store(load_wide(d, w + i0 + i), d, wide + i);
    for (; i < len; ++i) wide[i] = static_cast<double>(w[i0 + i]);
    dots(v, n, columns, i0, wide, len, local);
  }
}

template <class Basis, class W>
HWY_INLINE void update(const Basis* HWY_RESTRICT v, std::int64_t n, int columns, const double* h, double scale,
                       const W* w, Basis* out, std::int64_t i0, std::int64_t len, double* local) {
  const DF d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t whole = len - len % lanes;
  HWY_ALIGN double buffer[kRowBlock];  // the projection, then the new entries widened
  for (std::int64_t i = 0; i < whole; i += lanes) hn::Store(hn::Zero(d), d, buffer + i);
  for (std::int64_t i = whole; i < len; ++i) buffer[i] = 0;
  for (int c = 0; c < columns; ++c) {
    const Basis* col = v + c * n + i0;
    const auto hc = hn::Set(d, h[c]);
    for (std::int64_t i = 0; i < whole; i += lanes)
      hn::Store(hn::MulAdd(hc, load_wide(d, col + i), hn::Load(d, buffer + i)), d, buffer + i);
    for (std::int64_t i = whole; i < len; ++i) buffer[i] += h[c] * static_cast<double>(col[i]);
  }
  const auto s = hn::Set(d, scale);
  const W* in = w + i0;
  Basis* o = out + i0;
  for (std::int64_t i = 0; i < whole; i += lanes) {
    const auto value = hn::Mul(hn::Sub(load_wide(d, in + i), hn::Load(d, buffer + i)), s);
    if constexpr (std::is_same_v<Basis, double>) {
      hn::StoreU(value, d, o + i);
      hn::Store(value, d, buffer + i);
    } else {
      const hn::Rebind<float, DF> df;
      const auto rounded = hn::DemoteTo(df, value);
      hn::StoreU(rounded, df, o + i);
      hn::Store(hn::PromoteTo(d, rounded), d, buffer + i);
    }
  }
  for (std::int64_t i = whole; i < len; ++i) {
    o[i] = static_cast<Basis>((static_cast<double>(in[i]) - buffer[i]) * scale);
    buffer[i] = static_cast<double>(o[i]);
  }
  dots(v, n, columns, i0, buffer, len, local);
}

// The exported entry points: (basis, w) = (f64, f64), (f32, f32) and the compressed (f32, f64).
void multi_dot_f64(const double* v, std::int64_t n, int columns, const double* w, std::int64_t i0, std::int64_t len,
                   double* local) {
  multi_dot(v, n, columns, w, i0, len, local);
}
void multi_dot_f32(const float* v, std::int64_t n, int columns, const float* w, std::int64_t i0, std::int64_t len,
                   double* local) {
  multi_dot(v, n, columns, w, i0, len, local);
}
void multi_dot_f32_f64(const float* v, std::int64_t n, int columns, const double* w, std::int64_t i0,
                       std::int64_t len, double* local) {
  multi_dot(v, n, columns, w, i0, len, local);
}
void update_f64(const double* v, std::int64_t n, int columns, const double* h, double scale, const double* w,
                double* out, std::int64_t i0, std::int64_t len, double* local) {
  update(v, n, columns, h, scale, w, out, i0, len, local);
}
void update_f32(const float* v, std::int64_t n, int columns, const double* h, double scale, const float* w, float* out,
                std::int64_t i0, std::int64_t len, double* local) {
  update(v, n, columns, h, scale, w, out, i0, len, local);
}
void update_f32_f64(const float* v, std::int64_t n, int columns, const double* h, double scale, const double* w,
                    float* out, std::int64_t i0, std::int64_t len, double* local) {
  update(v, n, columns, h, scale, w, out, i0, len, local);
}

}  // namespace spmv::solvers::arnoldi::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "solvers/scaled_half.hpp"

namespace spmv::solvers::arnoldi {

HWY_EXPORT(multi_dot_f64);
HWY_EXPORT(multi_dot_f32);
HWY_EXPORT(multi_dot_f32_f64);
HWY_EXPORT(update_f64);
HWY_EXPORT(update_f32);
HWY_EXPORT(update_f32_f64);

template <class Basis, class W>
void multi_dot_block(const Basis* v, std::int64_t n, int columns, const W* w, std::int64_t i0, std::int64_t len,
                     double* local) {
  if constexpr (std::is_same_v<Basis, double>) {
    HWY_DYNAMIC_DISPATCH(multi_dot_f64)(v, n, columns, w, i0, len, local);
  } else if constexpr (std::is_same_v<Basis, float> && std::is_same_v<W, float>) {
    HWY_DYNAMIC_DISPATCH(multi_dot_f32)(v, n, columns, w, i0, len, local);
  } else if constexpr (std::is_same_v<Basis, float>) {
    HWY_DYNAMIC_DISPATCH(multi_dot_f32_f64)(v, n, columns, w, i0, len, local);
  } else {
    for (int c = 0; c < columns; ++c) local[c] += block_dot(v + c * n + i0, w + i0, len);  // ScaledHalf
    local[columns] += block_dot(w + i0, w + i0, len);
  }
}

template <class Basis, class W>
void update_block(const Basis* v, std::int64_t n, int columns, const double* h, double scale, const W* w, Basis* out,
                  std::int64_t i0, std::int64_t len, double* local) {
  if constexpr (std::is_same_v<Basis, double>) {
    HWY_DYNAMIC_DISPATCH(update_f64)(v, n, columns, h, scale, w, out, i0, len, local);
  } else if constexpr (std::is_same_v<Basis, float> && std::is_same_v<W, float>) {
    HWY_DYNAMIC_DISPATCH(update_f32)(v, n, columns, h, scale, w, out, i0, len, local);
  } else if constexpr (std::is_same_v<Basis, float>) {
    HWY_DYNAMIC_DISPATCH(update_f32_f64)(v, n, columns, h, scale, w, out, i0, len, local);
  } else {
    double projection[kRowBlock];  // ScaledHalf: in its float arithmetic, entry by entry
    project_block(v, n, columns, h, i0, len, projection);
    Basis* o = out + i0;
    const W* in = w + i0;
    for (std::int64_t i = 0; i < len; ++i)
      o[i] = static_cast<Basis>((in[i] - static_cast<W>(projection[i])) * scale);
    for (int c = 0; c < columns; ++c) local[c] += block_dot(v + c * n + i0, o, len);
    local[columns] += block_dot(o, o, len);
  }
}

// The bases GMRES stores (src/solvers/gmres.cpp): the value type's, float for a double solve
// (GmresBasis::Float32) and ScaledHalf for a float one (GmresBasis::Float16).
template void multi_dot_block(const double*, std::int64_t, int, const double*, std::int64_t, std::int64_t, double*);
template void multi_dot_block(const float*, std::int64_t, int, const float*, std::int64_t, std::int64_t, double*);
template void multi_dot_block(const float*, std::int64_t, int, const double*, std::int64_t, std::int64_t, double*);
template void multi_dot_block(const ScaledHalf*, std::int64_t, int, const float*, std::int64_t, std::int64_t,
                              double*);
template void update_block(const double*, std::int64_t, int, const double*, double, const double*, double*,
                           std::int64_t, std::int64_t, double*);
template void update_block(const float*, std::int64_t, int, const double*, double, const float*, float*, std::int64_t,
                           std::int64_t, double*);
template void update_block(const float*, std::int64_t, int, const double*, double, const double*, float*,
                           std::int64_t, std::int64_t, double*);
template void update_block(const ScaledHalf*, std::int64_t, int, const double*, double, const float*, ScaledHalf*,
                           std::int64_t, std::int64_t, double*);

}  // namespace spmv::solvers::arnoldi
#endif  // HWY_ONCE
