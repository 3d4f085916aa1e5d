#pragma once
// A value's bits as an unsigned integer: the value tables of the compressed formats (compressed CSR, the
// CPU DIA's codes) find distinct values bit-exactly (-0.0 != 0.0, NaN payloads kept), never by a
// floating-point compare. (CUDA code uses format::ValueBits, cuda/common/value_table.cuh: the same
// widths as the types atomicMin takes.)
#include <bit>
#include <cstdint>
#include <type_traits>

namespace spmv::detail {

template <class Value>
using ValueBits = std::conditional_t<sizeof(Value) == 4, std::uint32_t, std::uint64_t>;

template <class Value>
ValueBits<Value> value_bits(Value v) {
  return std::bit_cast<ValueBits<Value>>(v);
}

}  // namespace spmv::detail
