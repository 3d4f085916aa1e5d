#pragma once
// Private: widening the 16-bit values of the half-precision-values kernels (Options::values;
// docs/algorithms/half_values_cpu.md) to f32: per value (branch-free scalar functors) and per block
// (Highway, run-time dispatch, half_widen.cpp). Shared by the row loop (half_rows.cpp), merge-parallel
// (half_merge_parallel.cpp) and SELL-C-sigma (sell_simd.cpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/host_memory.hpp"

#include "spmv/value_storage.hpp"

namespace spmv::detail {

// Values widened at once into an L1 buffer by the CSR half loops: 4 KB of f32, which stays in L1 beside
// x's lines. Measured on the 2-core Zen 4 VM (AVX-512, one thread, poisson2d n=1000 and rmat scale 18):
// docs/algorithms/half_values_cpu.md.
constexpr std::int64_t kWidenBlock = 1024;

// fp16 -> f32 without a branch on the value (equal to f16_bits_to_float for every pattern; tested
// exhaustively through the operator): the 15 magnitude bits shifted into a float's exponent and mantissa
// give the value scaled by 2^-112 (the bias difference 127 - 15), normal or subnormal alike, and one
// exact multiplication by 2^112 rescales it; exponent 31 (inf, NaN) becomes 255 by a select. Relies on
// subnormal floats being honoured (no denormals-are-zero mode, which the library never sets).
struct WidenF16 {
  float operator()(std::uint16_t h) const {
    const std::uint32_t magnitude = std::uint32_t(h & 0x7fffu) << 13;
    float scaled;
    std::memcpy(&scaled, &magnitude, sizeof(scaled));
    const float rescaled = scaled * 0x1p112f;
    std::uint32_t bits;
    std::memcpy(&bits, &rescaled, sizeof(bits));
    bits = magnitude >= 0x0f800000u ? magnitude | 0x7f800000u : bits;
    bits |= std::uint32_t(h & 0x8000u) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
};

struct WidenBf16 {  // bfloat16 is a float's upper half
  float operator()(std::uint16_t h) const { return bf16_bits_to_float(h); }
};

// Implemented in src/cpu/half_widen.cpp (Highway, run-time dispatch): out[i] = the f32 value of the
// fp16 / bfloat16 bits in[i], i < n.
void widen_f16_block(const std::uint16_t* in, std::size_t n, float* out);
void widen_bf16_block(const std::uint16_t* in, std::size_t n, float* out);

// The same with the scalar functors (the SPMV_CPU_SIMD=0 fallback).
template <class Widen>
void widen_block_plain(const std::uint16_t* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Widen{}(in[i]);
}

using WidenBlockFn = void (*)(const std::uint16_t*, std::size_t, float*);

// The block widening of `storage` (F16 or Bf16): Highway's when `simd`, else the scalar functors'.
inline WidenBlockFn widen_block_for(ValueStorage storage, bool simd) {
  if (storage == ValueStorage::F16) return simd ? widen_f16_block : widen_block_plain<WidenF16>;
  return simd ? widen_bf16_block : widen_block_plain<WidenBf16>;
}

// The 16-bit bits of `storage` for a float (round to nearest even).
inline std::uint16_t (*narrow_for(ValueStorage storage))(float) {
  return storage == ValueStorage::F16 ? float_to_f16_bits : float_to_bf16_bits;
}

// A CSR matrix whose values are kept as the 16-bit bits of `storage` (rounded once here): the data of
// the half row loop's and half merge-parallel's plans.
template <class Index>
struct HalfCsr {
  HalfCsr(const CsrMatrix<float, Index>& a, ValueStorage s)
      : rows(a.rows),
        cols(a.cols),
        storage(s),
        row_ptr(copy_on_huge_pages(a.row_ptr)),
        col(copy_on_huge_pages(a.col_idx)),
        values(vector_on_huge_pages<std::uint16_t>(a.values.size())) {
    const auto narrow = narrow_for(s);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = narrow(a.values[i]);
  }
  Index rows, cols;
  ValueStorage storage;
  std::vector<Index> row_ptr, col;
  std::vector<std::uint16_t> values;
};

}  // namespace spmv::detail
