#pragma once
// Block sizes for kernels built on CUB block primitives (cub::BlockReduce / cub::BlockScan take the
// block size as a template argument): a bounded set of compiled variants (STYLE.md §6), chosen at run
// time from Options.block_size or the algorithm's policy.
#include <string>
#include <string_view>
#include <type_traits>

#include "spmv/error.hpp"

namespace spmv::cuda {

// The compiled block sizes: powers of two from one warp to the hardware limit.
inline constexpr int kMinBlockThreads = 32;
inline constexpr int kMaxBlockThreads = 1024;

// `requested` (Options.block_size; <= 0: `policy_default`) checked against the compiled set.
inline int checked_block_threads(int requested, int policy_default, std::string_view algorithm) {
  const int threads = requested > 0 ? requested : policy_default;
  if (threads < kMinBlockThreads || threads > kMaxBlockThreads || (threads & (threads - 1)) != 0)
    throw InvalidArgument(std::string(algorithm) + ": block_size must be a power of two in [32, 1024] (it uses " +
                          "CUB block primitives compiled for those sizes), got " + std::to_string(threads));
  return threads;
}

// Calls f(std::integral_constant<int, threads>{}) for a size accepted by checked_block_threads.
template <class F>
decltype(auto) with_block_threads(int threads, F&& f) {
  switch (threads) {
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    case 512: return f(std::integral_constant<int, 512>{});
    case 1024: return f(std::integral_constant<int, 1024>{});
    default: throw InvalidArgument("block_size " + std::to_string(threads) + " is not a compiled block size");
  }
}

}  // namespace spmv::cuda
