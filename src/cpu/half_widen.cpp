// Widening a block of fp16 values to f32 with Google Highway (compiled per target by hwy/foreach_target.h,
// chosen at the first call by HWY_DYNAMIC_DISPATCH, as csr_simd.cpp): the half row loop
// (half_rows.cpp) widens each run of rows' values into an L1 buffer with this, then runs the plain f32
// row loop over the buffer. On x86 the AVX2 and AVX-512 targets convert with F16C (8 or 16 values per
// instruction); a scalar widening per value in the row loop cost about 4 instructions per nonzero and
// ran 1.65x slower than f32 (docs/algorithms/half_values_cpu.md).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/half_widen.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "cpu/cpu_operator.hpp"
#include "spmv/value_storage.hpp"

HWY_BEFORE_NAMESPACE();
namespace spmv::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void widen_f16(const std::uint16_t* in, std::size_t n, float* out) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const std::size_t lanes = hn::Lanes(df);
  const auto* h = reinterpret_cast<const hwy::float16_t*>(in);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, h + i)), df, out + i);
  for (; i < n; ++i) out[i] = f16_bits_to_float(in[i]);
}

}  // namespace spmv::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spmv::detail {

HWY_EXPORT(widen_f16);

void widen_f16_block(const std::uint16_t* in, std::size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(widen_f16)(in, n, out);
}

}  // namespace spmv::detail
#endif  // HWY_ONCE
