#pragma once
// Private: the types a GMRES Krylov basis is stored in on the CPU (SolverOptions::gmres_basis): the value
// type, float, or IEEE binary16 (Float16, below). A binary16 entry holds s * v with s = kBasisScale, a
// power of two, so the scaling is exact: the entries of a unit vector of n rows are about 1/sqrt(n),
// which for n in the millions sits at the bottom of binary16's normal range (6.1e-5), where it would
// lose precision and underflow; s = 1024 lifts them by ten binades and keeps a unit vector's largest
// possible entry (1 -> 1024) far below binary16's maximum (65504). The conversions apply s, so the
// sweeps see unscaled values. The CUDA path (src/cuda/solvers/gmres.cu) stores __half with the same
// scale and rounding (double -> float -> binary16, each to nearest even).
#include <cstdint>
#include <limits>
#include <type_traits>

#include "spmv/value_storage.hpp"

namespace spmv::solvers {

inline constexpr double kBasisScale = 1024.0;

struct Float16 {
  std::uint16_t bits = 0;
  Float16() = default;
  explicit Float16(double v) : bits(float_to_f16_bits(static_cast<float>(v * kBasisScale))) {}
  explicit operator double() const { return f16_bits_to_float(bits) / kBasisScale; }
};

// The unit roundoff of the storage: what orthogonality_tolerance takes the square root of.
template <class Basis>
constexpr double basis_epsilon() {
  if constexpr (std::is_same_v<Basis, Float16>) return 0x1p-10;
  else return std::numeric_limits<Basis>::epsilon();
}

// A stored entry as double / a double rounded to the storage.
template <class Basis>
double widen(Basis b) {
  return static_cast<double>(b);
}
template <class Basis>
Basis narrow(double v) {
  return static_cast<Basis>(v);
}

}  // namespace spmv::solvers
