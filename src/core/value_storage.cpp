// Half-precision storage: names and the exact bit conversions (include/spmv/value_storage.hpp).
#include "spmv/value_storage.hpp"

#include <cctype>
#include <string>

namespace spmv {

std::string_view to_string(ValueStorage s) {
  switch (s) {
    case ValueStorage::Native: return "native";
    case ValueStorage::F16: return "f16";
    case ValueStorage::Bf16: return "bf16";
  }
  return "?";
}

std::optional<ValueStorage> parse_value_storage(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (ValueStorage s : {ValueStorage::Native, ValueStorage::F16, ValueStorage::Bf16})
    if (lower == to_string(s)) return s;
  return std::nullopt;
}

namespace {
std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
float float_of(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
// Drops the low `shift` bits of `m`, rounding to nearest, ties to even.
std::uint32_t round_shift(std::uint32_t m, unsigned shift) {
  const std::uint32_t kept = m >> shift;
  const std::uint32_t rest = m & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1)) ? 1 : 0);
}
}  // namespace

std::uint16_t float_to_f16_bits(float value) {
  const std::uint32_t x = bits_of(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return std::uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));  // NaN, quiet
  if (magnitude >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent, round 23 -> 10 mantissa bits
    const std::uint32_t rebased = magnitude - ((127u - 15u) << 23);
    return std::uint16_t(sign | round_shift(rebased, 13));  // a carry into the exponent is right
  }
  if (magnitude <= 0x33000000u) return std::uint16_t(sign);  // <= 2^-25: the tie goes to even zero
  // Subnormal half: units of 2^-24; the float's significand m is m * 2^(e - 150).
  const std::uint32_t exponent = magnitude >> 23;
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  return std::uint16_t(sign | round_shift(significand, 126u - exponent));
}

float f16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = float(mantissa) * 0x1p-24f;  // zero or subnormal, exact
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_of(sign | 0x7f800000u | (mantissa << 13));
  return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t x = bits_of(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((x >> 16) | 0x40u);  // NaN, quiet
  return std::uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float round_to_storage(float value, ValueStorage s) {
  switch (s) {
    case ValueStorage::F16: return f16_bits_to_float(float_to_f16_bits(value));
    case ValueStorage::Bf16: return bf16_bits_to_float(float_to_bf16_bits(value));
    case ValueStorage::Native: break;
  }
  return value;
}

template <class Index>
CsrMatrix<float, Index> round_values(CsrMatrix<float, Index> a, ValueStorage s) {
  for (float& v : a.values) v = round_to_storage(v, s);
  return a;
}

template CsrMatrix<float, std::int32_t> round_values(CsrMatrix<float, std::int32_t>, ValueStorage);
template CsrMatrix<float, std::int64_t> round_values(CsrMatrix<float, std::int64_t>, ValueStorage);

}  // namespace spmv
