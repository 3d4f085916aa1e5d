// The half-precision conversions against independent oracles: GCC's _Float16 (IEEE binary16 with
// round-to-nearest-even) where the compiler has it, and the defining properties (exact round trips,
// nearest representable value, ties to even) everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "spmv/value_storage.hpp"

namespace spmv {
namespace {

TEST(ValueStorage, NamesRoundTrip) {
  for (ValueStorage s : {ValueStorage::Native, ValueStorage::F16, ValueStorage::Bf16})
    EXPECT_EQ(parse_value_storage(to_string(s)), s);
  EXPECT_EQ(parse_value_storage("BF16"), ValueStorage::Bf16);
  EXPECT_FALSE(parse_value_storage("f8").has_value());
}

// Every half (all 65536 bit patterns) widens to a float that rounds back to the same bits.
TEST(ValueStorage, EveryHalfRoundTripsExactly) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float wide = f16_bits_to_float(std::uint16_t(bits));
    if (std::isnan(wide)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(wide)))) << bits;
      continue;
    }
    EXPECT_EQ(float_to_f16_bits(wide), bits) << bits;
    const float bwide = bf16_bits_to_float(std::uint16_t(bits));
    if (!std::isnan(bwide)) EXPECT_EQ(float_to_bf16_bits(bwide), bits) << bits;
  }
}

TEST(ValueStorage, KnownValues) {
  EXPECT_EQ(f16_bits_to_float(float_to_f16_bits(65504.0f)), 65504.0f);            // the largest half
  EXPECT_EQ(float_to_f16_bits(65519.99f), 0x7bffu);                             // below the tie: max
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00u);                              // the tie rounds to inf
  EXPECT_EQ(float_to_f16_bits(-1e6f), 0xfc00u);
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001u);                              // the smallest subnormal
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000u);                              // tie to even: zero
  EXPECT_EQ(float_to_f16_bits(0x1.8p-25f), 0x0001u);                            // above the tie
  EXPECT_EQ(float_to_f16_bits(1.0f + 0x1p-11f), 0x3c00u);                       // tie, even stays 1
  EXPECT_EQ(float_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02u);                   // tie, odd rounds up
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80u);                       // tie to even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82u);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80u);    // rounds to inf
  EXPECT_TRUE(std::isnan(round_to_storage(std::nanf(""), ValueStorage::F16)));
  EXPECT_TRUE(std::isnan(round_to_storage(std::nanf(""), ValueStorage::Bf16)));
  EXPECT_EQ(round_to_storage(-0.0f, ValueStorage::F16), 0.0f);
  EXPECT_TRUE(std::signbit(round_to_storage(-0.0f, ValueStorage::F16)));
}

// Random floats over the whole exponent range: the rounded value is within the unit roundoff
// (normal range) and no representable value lies strictly closer.
TEST(ValueStorage, RoundingIsToNearest) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t x = any_bits(rng);
    float value;
    std::memcpy(&value, &x, sizeof(value));
    if (!std::isfinite(value)) continue;
#if defined(__FLT16_MAX__)
    const float oracle = float(static_cast<_Float16>(value));
    if (!std::isnan(oracle)) EXPECT_EQ(round_to_storage(value, ValueStorage::F16), oracle) << value;
#endif
    for (ValueStorage s : {ValueStorage::F16, ValueStorage::Bf16}) {
      const float rounded = round_to_storage(value, s);
      const bool normal = s == ValueStorage::Bf16 ? std::fabs(value) >= 0x1p-126f
                                                   : std::fabs(value) >= 0x1p-14f && std::fabs(value) <= 65504.0f;
      if (normal && std::isfinite(rounded))
        EXPECT_LE(std::fabs(double(rounded) - value), storage_unit_roundoff(s) * std::fabs(double(value))) << value;
      if (std::isfinite(rounded)) {  // neither neighbour of the result is closer
        const std::uint16_t bits = s == ValueStorage::F16 ? float_to_f16_bits(value) : float_to_bf16_bits(value);
        for (int step : {-1, 1}) {
          const std::uint16_t next = std::uint16_t(bits + step);
          const float neighbour = s == ValueStorage::F16 ? f16_bits_to_float(next) : bf16_bits_to_float(next);
          if (std::isfinite(neighbour) && std::signbit(neighbour) == std::signbit(rounded))
            EXPECT_GE(std::fabs(double(neighbour) - value), std::fabs(double(rounded) - value)) << value;
        }
      }
    }
  }
}

TEST(ValueStorage, RoundValuesKeepsTheStructure) {
  CsrMatrix<float, std::int32_t> a;
  a.rows = 2;
  a.cols = 3;
  a.row_ptr = {0, 2, 3};
  a.col_idx = {0, 2, 1};
  a.values = {0.1f, 3.0f, 1e5f};
  const auto r = round_values(a, ValueStorage::F16);
  EXPECT_EQ(r.row_ptr, a.row_ptr);
  EXPECT_EQ(r.col_idx, a.col_idx);
  EXPECT_EQ(r.values[0], f16_bits_to_float(float_to_f16_bits(0.1f)));
  EXPECT_NE(r.values[0], 0.1f);
  EXPECT_EQ(r.values[1], 3.0f);
  EXPECT_TRUE(std::isinf(r.values[2]));
  EXPECT_EQ(round_values(a, ValueStorage::Native).values, a.values);
}

}  // namespace
}  // namespace spmv
