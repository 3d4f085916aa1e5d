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

// base[index] for every lane: Highway's GatherIndex, except on x86 where GCC (12) expands the gather
// intrinsics so that the instruction merges into a destination register that the previous gather wrote
// (an undefined source on AVX-512; on AVX2 a zero source that it drops because the mask is all ones):
// every gather then waits for the one before it (measured: a vector per row on rows of ~6, cti f32, ran
// 2.3x faster without that chain; docs/algorithms/cpu_simd.md). A mask the compiler cannot see through
// keeps the zero source, whose register is zeroed per gather and breaks the chain.
template <class D, class VI>
HWY_INLINE auto gather(D d, const hn::TFromD<D>* HWY_RESTRICT base, VI index) {
  using T = hn::TFromD<D>;
  using V = decltype(hn::Zero(d));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D()) * sizeof(T) == 64) {
    __mmask16 all = 0xFFFF;
    asm("" : "+r"(all));  // opaque: an all-ones constant would let GCC drop the zero source
    if constexpr (std::is_same_v<T, float>)
      return V{_mm512_mask_i32gather_ps(_mm512_setzero_ps(), all, index.raw, base, 4)};
    else if constexpr (std::is_same_v<T, double>)
      return V{_mm512_mask_i64gather_pd(_mm512_setzero_pd(), static_cast<__mmask8>(all), index.raw, base, 8)};
    else if constexpr (sizeof(T) == 4)
      return V{_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), all, index.raw, base, 4)};
    else
      return V{_mm512_mask_i64gather_epi64(_mm512_setzero_si512(), static_cast<__mmask8>(all), index.raw, base, 8)};
  }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (hn::MaxLanes(D()) * sizeof(T) == 32) {
    __m256i all = _mm256_set1_epi32(-1);
    asm("" : "+x"(all));  // opaque, as above
    if constexpr (std::is_same_v<T, float>)
      return V{_mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, index.raw, _mm256_castsi256_ps(all), 4)};
    else if constexpr (std::is_same_v<T, double>)
      return V{_mm256_mask_i64gather_pd(_mm256_setzero_pd(), base, index.raw, _mm256_castsi256_pd(all), 8)};
    else if constexpr (sizeof(T) == 4)
      return V{_mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(base), index.raw,
                                           all, 4)};
    else
      return V{_mm256_mask_i64gather_epi64(_mm256_setzero_si256(), reinterpret_cast<const long long*>(base),
                                           index.raw, all, 8)};
  }
#endif
  return hn::GatherIndex(d, base, index);
}

}  // namespace spmv::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SPMV_CPU_SIMD_GATHER_INL_H_
