#pragma once
// Private: the add, multiply and zero of each semiring of spmv/semiring.hpp, as static members callable
// from host and device code (the CPU kernel and the CUDA one use the same definitions). min and max
// ignore NaN like fmin / fmax, written out so that host and device give the same bits.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "spmv/semiring.hpp"

#if defined(__CUDACC__)
#define SPMV_HOST_DEVICE __host__ __device__
#else
#define SPMV_HOST_DEVICE
#endif

namespace spmv::semiring_ops {

// Throws InvalidArgument unless x has A's cols entries and y its rows (host; src/core/semiring.cpp).
void check_lengths(Semiring s, std::int64_t rows, std::int64_t cols, std::size_t x, std::size_t y);

// DIA holds one value a (row, diagonal), so its conversions sum duplicate entries: plus-times's own distributivity
// (within rounding), but for the others a_1 ⊗ x ⊕ a_2 ⊗ x is not (a_1 + a_2) ⊗ x (min-plus: min(a_1, a_2) + x).
// Throws Unsupported, naming `where` and the kernels to use `instead`, when `duplicates` were merged for such a
// semiring (host; both backends' DIA plans).
void refuse_dia_duplicates(Semiring s, std::int64_t duplicates, std::string_view where, std::string_view instead);

// Two selects and no short-circuit, so that the compiler emits minsd / maxsd and a blend instead of
// branches, which random data mispredicts (R-MAT scale 16 min-plus, one thread: 5.1 -> 1.6 ms).
template <class Value>
SPMV_HOST_DEVICE inline Value min_ignoring_nan(Value a, Value b) {
  const Value m = b < a ? b : a;  // b NaN: a
  return a != a ? b : m;          // a NaN: b (NaN only when both are)
}
template <class Value>
SPMV_HOST_DEVICE inline Value max_ignoring_nan(Value a, Value b) {
  const Value m = b > a ? b : a;
  return a != a ? b : m;
}

template <class Value>
struct PlusTimes {
  static constexpr bool kOrderFree = false;  // a sum rounds differently in another order
  static SPMV_HOST_DEVICE Value zero() { return Value(0); }
  static SPMV_HOST_DEVICE Value add(Value a, Value b) { return a + b; }
  static SPMV_HOST_DEVICE Value mul(Value a, Value x) { return a * x; }
};
template <class Value>
struct MinPlus {
  static constexpr bool kOrderFree = true;  // exact in any order
  static SPMV_HOST_DEVICE Value zero() { return std::numeric_limits<Value>::infinity(); }
  static SPMV_HOST_DEVICE Value add(Value a, Value b) { return min_ignoring_nan(a, b); }
  static SPMV_HOST_DEVICE Value mul(Value a, Value x) { return a + x; }
};
template <class Value>
struct MaxTimes {
  static constexpr bool kOrderFree = true;  // exact in any order
  static SPMV_HOST_DEVICE Value zero() { return -std::numeric_limits<Value>::infinity(); }
  static SPMV_HOST_DEVICE Value add(Value a, Value b) { return max_ignoring_nan(a, b); }
  static SPMV_HOST_DEVICE Value mul(Value a, Value x) { return a * x; }
};
template <class Value>
struct OrAnd {
  static constexpr bool kOrderFree = true;  // exact in any order
  static SPMV_HOST_DEVICE Value zero() { return Value(0); }
  static SPMV_HOST_DEVICE Value add(Value a, Value b) { return Value((a != Value(0)) | (b != Value(0))); }
  static SPMV_HOST_DEVICE Value mul(Value a, Value x) { return Value((a != Value(0)) & (x != Value(0))); }
};
template <class Value>
struct MaxMin {
  static constexpr bool kOrderFree = true;  // exact in any order
  static SPMV_HOST_DEVICE Value zero() { return -std::numeric_limits<Value>::infinity(); }
  static SPMV_HOST_DEVICE Value add(Value a, Value b) { return max_ignoring_nan(a, b); }
  static SPMV_HOST_DEVICE Value mul(Value a, Value x) { return min_ignoring_nan(a, x); }
};

// Calls body(Ops{}) with the ops type of `s`.
template <class Value, class Body>
decltype(auto) with_semiring(Semiring s, Body&& body) {
  switch (s) {
    case Semiring::MinPlus: return body(MinPlus<Value>{});
    case Semiring::MaxTimes: return body(MaxTimes<Value>{});
    case Semiring::OrAnd: return body(OrAnd<Value>{});
    case Semiring::MaxMin: return body(MaxMin<Value>{});
    case Semiring::PlusTimes: break;
  }
  return body(PlusTimes<Value>{});
}

}  // namespace spmv::semiring_ops
