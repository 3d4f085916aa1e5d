// Widening a block of fp16 or bfloat16 values to f32 with Google Highway (compiled per target by
// hwy/foreach_target.h, chosen at the first call by HWY_DYNAMIC_DISPATCH, as csr_simd.cpp): the half row
// loop (half_rows.cpp, fp16) and merge-parallel (half_merge_parallel.cpp, both) widen runs of values
// into an L1 buffer with this, then run plain f32 loops over the buffer. On x86 the AVX2 and AVX-512 targets convert with F16C (8 or 16 values per
// instruction); a scalar widening per value in the row loop cost about 4 instructions per nonzero and
// ran 1.65x slower than f32 (docs/algorithms/half_values_cpu.md).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/half_widen.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cpu/half_widen.hpp"
#include "spmv/value_storage.hpp"

HWY_BEFORE_NAMESPACE();
namespace spmv::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Half is hwy::float16_t or hwy::bfloat16_t (the same bits as the uint16_t the plans keep).
template <class Half>
void widen(const std::uint16_t* in, std::size_t n, float* out) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<Half, decltype(df)> dh;
  const std::size_t lanes = hn::Lanes(df);
  const auto* h = reinterpret_cast<const Half*>(in);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, h + i)), df, out + i);
  for (; i < n; ++i) out[i] = std::is_same_v<Half, hwy::float16_t> ? f16_bits_to_float(in[i]) : bf16_bits_to_float(in[i]);
}

void widen_f16(const std::uint16_t* in, std::size_t n, float* out) { widen<hwy::float16_t>(in, n, out); }
void widen_bf16(const std::uint16_t* in, std::size_t n, float* out) { widen<hwy::bfloat16_t>(in, n, out); }

}  // namespace spmv::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spmv::detail {

HWY_EXPORT(widen_f16);
HWY_EXPORT(widen_bf16);

void widen_f16_block(const std::uint16_t* in, std::size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(widen_f16)(in, n, out);
}

void widen_bf16_block(const std::uint16_t* in, std::size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(widen_bf16)(in, n, out);
}

}  // namespace spmv::detail
#endif  // HWY_ONCE
