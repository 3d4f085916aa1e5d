#pragma once
// Half-precision storage of a matrix's values (the mixed-precision mode cuSPARSE offers): the plan
// keeps A's values as IEEE fp16 or bfloat16, and x, y, alpha, beta and every sum stay fp32. It halves
// the value bytes a product reads; the product is that of the *rounded* matrix, so results differ from
// the f32 product by the storage rounding (|a - fl16(a)| <= u16 |a|, u16 = 2^-11 for fp16 and 2^-8 for
// bfloat16, for values inside the format's range) plus the usual f32 summation error.
//
// Set Options::values on a float plan or operator: the values are rounded once at construction
// (round to nearest even; beyond fp16's range they become +-inf, as the conversion defines). double
// plans refuse it. docs/ALGORITHMS.md "Half-precision values" lists the algorithms that offer it.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "spmv/csr.hpp"

namespace spmv {

enum class ValueStorage {
  Native,  // the plan's value type (float or double)
  F16,     // IEEE 754 binary16: 11 significant bits, max 65504
  Bf16,    // bfloat16: 8 significant bits, float's exponent range
};

std::string_view to_string(ValueStorage s);  // "native", "f16", "bf16"
// Accepts the names printed by to_string, case-insensitive.
std::optional<ValueStorage> parse_value_storage(std::string_view name);

// Unit roundoff of the storage: the largest relative error of rounding a float to it (0 for Native).
constexpr double storage_unit_roundoff(ValueStorage s) {
  return s == ValueStorage::F16 ? 0x1p-11 : s == ValueStorage::Bf16 ? 0x1p-8 : 0.0;
}

// Bit conversions, exact and round-to-nearest-even, identical to the CUDA intrinsics
// (__float2half_rn, __float2bfloat16_rn, and the widening ones); NaN stays NaN.
std::uint16_t float_to_f16_bits(float value);
float f16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16_bits(float value);
inline float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

// `value` rounded to the storage and widened back: the value a product with that storage uses.
float round_to_storage(float value, ValueStorage s);

// `a` with its values rounded to the storage: the matrix a product with Options::values == s computes
// with exactly (its reference; tests and `spmv bench` verify against it). Pass an rvalue to round in
// place without a copy.
template <class Index>
CsrMatrix<float, Index> round_values(CsrMatrix<float, Index> a, ValueStorage s);

}  // namespace spmv
