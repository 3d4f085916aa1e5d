#pragma once
// Private: the (value, index) combinations the CPU backend is compiled for. A file instantiates its
// templates with
//   #define SPMV_INSTANTIATE(V, I) template void f(const CsrMatrix<V, I>&, ...);
//   SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
//   #undef SPMV_INSTANTIATE
#include <cstdint>

#define SPMV_CPU_FOR_EACH_TYPE(M) \
  M(float, std::int32_t)          \
  M(float, std::int64_t)          \
  M(double, std::int32_t)         \
  M(double, std::int64_t)
