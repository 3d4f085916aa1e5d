#pragma once
// Launch rules shared by the warp-cooperative CSR kernels (CSR-vector, CSR-coop, LightSpMV): block
// size checks, sub-warp widths, and the switch from a run-time width to one of a bounded set of
// compiled kernels (STYLE.md §6).
#include <string>
#include <type_traits>

#include "spmv/error.hpp"

namespace spmv::cuda {

// Largest block the warp kernels accept. They declare __launch_bounds__(kMaxWarpKernelBlock) so that
// every size of the benchmark's block sweep (32..1024) launches (at most 64 registers per thread).
inline constexpr int kMaxWarpKernelBlock = 1024;

// Options.block_size (<= 0: `fallback`) for a kernel whose sub-warp masks assume whole warps.
inline int warp_block_size(int requested, int fallback, const char* algorithm) {
  const int block = requested > 0 ? requested : fallback;
  if (block < 32 || block > kMaxWarpKernelBlock || block % 32 != 0)
    throw InvalidArgument(std::string(algorithm) + ": block_size must be a multiple of 32 in [32, " +
                          std::to_string(kMaxWarpKernelBlock) + "], got " + std::to_string(block));
  return block;
}

// Smallest power of two >= value, clamped to [lo, hi] (lo, hi powers of two).
inline int pow2_at_least(double value, int lo, int hi) {
  int w = lo;
  while (w < hi && double(w) < value) w *= 2;
  return w;
}

inline bool is_power_of_two(int w) { return w > 0 && (w & (w - 1)) == 0; }

// A width option such as Options.subwarp or Options.coop (<= 0: `fallback`), checked against the
// compiled widths [lo, 32]; `option` names it in the error, e.g. "CsrVector: subwarp".
inline int checked_width(int requested, int fallback, int lo, const char* option) {
  const int w = requested > 0 ? requested : fallback;
  if (!is_power_of_two(w) || w < lo || w > 32)
    throw InvalidArgument(std::string(option) + " must be a power of two in [" + std::to_string(lo) + ", 32], got " +
                          std::to_string(w));
  return w;
}

// Calls f(std::integral_constant<int, W>{}) with W == w, for w a power of two in [Lo, Hi]: the
// bounded set of compiled widths.
template <int Lo, int Hi = 32, class F>
void with_width(int w, F&& f) {
  if constexpr (Lo <= Hi) {
    if (w == Lo) {
      f(std::integral_constant<int, Lo>{});
    } else {
      with_width<Lo * 2, Hi>(w, f);
    }
  } else {
    throw InvalidArgument("no kernel compiled for width " + std::to_string(w));
  }
}

}  // namespace spmv::cuda
