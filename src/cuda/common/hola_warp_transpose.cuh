#pragma once
// Register transpose of one warp's tile from the striped layout that coalesced vector loads produce
// to the blocked layout Hola's local load balancing works on (Steinberger, Zayer & Seidel, ICS'17,
// Alg. 5 "data loading"): shuffles only, no shared memory and no dynamically indexed registers
// (those would be demoted to local memory).
//
// Layout. A warp holds 32*N items, N = C*V per lane (V = elements of one vector load, C = vector
// loads per lane). Striped: register c*V + v of lane l holds item (c*32 + l)*V + v, so each of the C
// load instructions of the warp reads 32*V consecutive items. Blocked: register k of lane t holds item
// t*N + k, i.e. each lane owns N consecutive nonzeros. The vector slot v never moves; per slot this
// is the classic 32 x C striped -> blocked exchange: item s = c*32 + l goes to lane s / C, register
// s % C. Every item of a receiving lane t comes from the same register index c_t = t / (32/C) of C
// different senders, so the exchange takes C shuffle rounds; the lane-dependent register choice on
// both sides is a rotation, done with log2(C) predicated static rotations (Catanzaro, Keller &
// Garland, "A decomposition for in-place matrix transposition", PPoPP'14, uses the same trick).
#include <cuda_runtime.h>

namespace spmv::cuda::hola {

// a'[m] = a[(m - s) mod C] for a lane-dependent s in [0, C).
template <int C, class T>
__device__ __forceinline__ void rotate_right(T (&a)[C], int s) {
#pragma unroll
  for (int step = 1; step < C; step *= 2) {
    const bool take = (s & step) != 0;
    T rotated[C];
#pragma unroll
    for (int m = 0; m < C; ++m) rotated[m] = a[(m - step + C) % C];
#pragma unroll
    for (int m = 0; m < C; ++m) a[m] = take ? rotated[m] : a[m];
  }
}

// In place: data[] of every lane of the (fully active) warp goes from striped to blocked.
template <int V, int N, class T>
__device__ __forceinline__ void striped_to_blocked(T (&data)[N], int lane) {
  constexpr int C = N / V;
  static_assert(N % V == 0, "items per lane must be a multiple of the vector width");
  static_assert(C >= 1 && C <= 32 && (C & (C - 1)) == 0, "vector loads per lane must be a power of two <= 32");
  if constexpr (C > 1) {
    constexpr int group = 32 / C;            // receivers fed by one register index
    const int send_rotation = lane % C;      // sender l sends register (l%C - j) mod C in round j
    const int source_register = lane / group;  // c_t: the register all of this lane's items come from
    const int source_base = (lane % group) * C;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      // send[j] = data[(send_rotation - j) mod C]: a static reversal, then a rotation by send_rotation.
      T send[C];
#pragma unroll
      for (int j = 0; j < C; ++j) send[j] = data[((C - j) % C) * V + v];
      rotate_right(send, send_rotation);
      // Round j: receive register (j + c_t) mod C of the blocked layout.
      T got[C];
#pragma unroll
      for (int j = 0; j < C; ++j) got[j] = __shfl_sync(0xffffffffu, send[j], source_base + (j + source_register) % C);
      rotate_right(got, source_register);
#pragma unroll
      for (int m = 0; m < C; ++m) data[m * V + v] = got[m];
    }
  }
}

}  // namespace spmv::cuda::hola
