// Private, per-target (Highway "-inl.h" convention: re-included once per target by the files that
// include hwy/foreach_target.h): the gather of x shared by the CPU SIMD kernels (csr_simd.cpp,
// sell_simd.cpp), for every (value, index) combination the backend is compiled for.
#if defined(SPMV_CPU_SIMD_GATHER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPMV_CPU_SIMD_GATHER_INL_H_
#undef SPMV_CPU_SIMD_GATHER_INL_H_
#else
#define SPMV_CPU_SIMD_GATHER_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace spmv::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The lanes of x gathered per step: a full vector of Value, or, when the index is wider than the
// value (f32 with int64 indices), as many lanes as one vector of indices holds.
template <class Value, class Index>
using GatherTag = std::conditional_t<(sizeof(Index) > sizeof(Value)), hn::Rebind<Value, hn::ScalableTag<Index>>,
                                     hn::ScalableTag<Value>>;

// Loads Lanes(d) column indices as the signed integer lanes GatherIndex takes for d.
template <class D, class Index>
HWY_INLINE auto load_index(D /* tag */, const Index* p) {
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

}  // namespace spmv::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SPMV_CPU_SIMD_GATHER_INL_H_
