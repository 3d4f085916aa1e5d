#pragma once
// SPMV_DIA_CODES, read by both backends' DIA plans when they choose how to store the slots (for
// measurements): "0" keeps the raw values where a table or bits would do; "8" takes one-byte codes where
// one bit a slot would do (CUDA; the CPU DIA has no bit form).
#include <cstdlib>
#include <cstring>

namespace spmv::detail {

inline bool dia_codes_allowed() {
  const char* env = std::getenv("SPMV_DIA_CODES");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

inline bool dia_bits_allowed() {
  const char* env = std::getenv("SPMV_DIA_CODES");
  return env == nullptr || std::strcmp(env, "8") != 0;
}

}  // namespace spmv::detail
