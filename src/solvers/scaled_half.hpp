#pragma once
// Private: the entry type of a GMRES basis stored in IEEE half precision (GmresBasis::Float16, float
// solves): the value times 2^7, rounded to fp16 (round to nearest even, as __float2half_rn). Both
// backends use this one type, so the CPU and CUDA solvers store the same bits.
//
// Why a scale: a basis vector has norm 1, so its entries are about n^-1/2 (5e-4 at 4 M unknowns), close
// to fp16's smallest normal number (6.1e-5), below which it keeps fewer significant bits. Times 2^7
// (exact: a power of two) they sit well inside the normal range, and the largest entry a step can
// write stays finite: Arnoldi normalises by beta1 >= 2^-6 ||w|| (gmres_arnoldi.hpp), and
// ||w - V_j h|| <= 3 ||w|| for a basis orthogonal to sqrt(eps), so entries stay below 192 * 2^7 = 24576,
// under fp16's largest, 65504.
#include <cstdint>

#ifdef __CUDACC__
#include <cuda_fp16.h>
#define SPMV_SCALED_HALF_HD __host__ __device__
#else
#define SPMV_SCALED_HALF_HD
#endif

#include "spmv/value_storage.hpp"

namespace spmv::solvers {

struct ScaledHalf {
  static constexpr float kScale = 0x1p7f;
  static constexpr float kInverseScale = 0x1p-7f;
  // The unit roundoff of the stored value: fp16's 11 significant bits.
  static constexpr double kEpsilon = 0x1p-10;

  std::uint16_t bits;

  ScaledHalf() = default;
  SPMV_SCALED_HALF_HD explicit ScaledHalf(float value) : bits(encode(value * kScale)) {}
  // Through float, on both backends: the CUDA kernels and the CPU loops round a double the same way.
  SPMV_SCALED_HALF_HD explicit ScaledHalf(double value) : ScaledHalf(static_cast<float>(value)) {}
  SPMV_SCALED_HALF_HD explicit operator float() const { return decode(bits) * kInverseScale; }
  SPMV_SCALED_HALF_HD explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }

 private:
  SPMV_SCALED_HALF_HD static std::uint16_t encode(float v) {
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(v));
#else
    return float_to_f16_bits(v);
#endif
  }
  SPMV_SCALED_HALF_HD static float decode(std::uint16_t b) {
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(b));
#else
    return f16_bits_to_float(b);
#endif
  }
};

// The type a basis entry is updated in: the entry type itself, or float for ScaledHalf (which has no
// arithmetic of its own).
template <class Basis>
struct BasisArithmetic {
  using type = Basis;
};
template <>
struct BasisArithmetic<ScaledHalf> {
  using type = float;
};
template <class Basis>
using basis_arithmetic_t = typename BasisArithmetic<Basis>::type;

}  // namespace spmv::solvers

#undef SPMV_SCALED_HALF_HD
