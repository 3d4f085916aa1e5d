// DIA (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09, DIA format): one column of `rows` values per occupied diagonal, no column indices.
// One thread per row walks the diagonals; for diagonal d, consecutive rows read consecutive values and
// consecutive x entries (x[row + offset[d]]), so both loads are contiguous across a warp.
//
// Conversion on the device at plan time (format_dia.cuh, shared with the semiring product): the occupied
// diagonals numbered by a scan, the padding rule checked before the values are allocated, the entries
// scattered (duplicates of a row summed on their slot by the row's own thread).
//
// Padding: slots whose column is outside [0, cols) are never multiplied (the kernel tests the column, so x
// is never read out of range). Slots inside the matrix that hold no entry store 0 and are multiplied like
// an explicit zero: 0 * x[j], which differs from CSR only when x[j] is Inf or NaN. Storing a mask to tell
// the two apart would cost a load per slot on every product; the host DIA keeps one, the kernel here does
// not (formats.hpp allows this). The semiring product's DIA (semiring_dia.cu), for which a padding slot must
// never enter a row, asks build_dia for the mask.
//
// Fewer value bytes (issue 13 §1): when every diagonal holds at most two values (a stencil's coefficient
// and the boundary's 0), a slot is stored as one bit; else, when the slots hold at most 256 distinct
// values (padding's 0 included), as a one-byte code into a table of them (bit-exact,
// cuda/common/value_table.cuh) that each block copies to shared memory. Both kernels take four rows a
// thread. A 5-point f32 stencil then reads 1 + 8 bytes a row instead of 28. The table costs a sort of
// the slots at plan time; where its memory is not free, or with SPMV_DIA_CODES=0 in the environment (for
// measurements; =8 skips the bits), the values stay raw.
#include <algorithm>
#include <bit>
#include <cstdint>

#include <string>
#include <type_traits>
#include <vector>

#include "core/dia_values_env.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_dia.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/value_table.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data): one thread per row, 256 threads per block, a first value to be tuned on
// the H100/H200.
struct DiaPolicy {
  int block_size;
};
constexpr DiaPolicy dia_policy(int /*value_bytes*/) { return {256}; }

// At most this many distinct slot values are stored as one-byte codes.
constexpr long long kDiaMaxCodes = 256;
// The codes kernel's rows per thread: one 4-byte load holds their codes on a diagonal (one-byte loads
// kept too few bytes in flight per thread). Each diagonal's codes start at a multiple of kDiaCodeAlign.
constexpr int kDiaCodeRows = 4;
constexpr long long kDiaCodeAlign = 16;
// Slots sorted first to find out cheaply that a matrix has too many values for codes.
constexpr std::size_t kDiaCodeSample = 1 << 16;

// codes[d * stride + r] = position of slot (d, r)'s value bits in the ascending table.
template <class Value>
__global__ void encode_dia_kernel(const Value* __restrict__ values, long long rows, long long slots, long long stride,
                                  const Value* __restrict__ table, int table_size, std::uint8_t* __restrict__ codes) {
  using Bits = format::ValueBits<Value>;
  for (long long s = format::global_thread(); s < slots; s += format::grid_threads())
    codes[s / rows * stride + s % rows] = static_cast<std::uint8_t>(
        format::table_code(reinterpret_cast<const Bits*>(table), table_size, format::value_bits(values[s])));
}

// Thread per row over all diagonals, in ascending offset order (= ascending column, CSR's order for a
// sorted row). Offsets are the same for the whole warp (one broadcast load). kSlotUnroll diagonals are
// loaded before their products, for bytes in flight. Columns are computed in 64 bits: row + offset can
// leave the 32-bit range when rows + cols > 2^31.
template <class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    dia_kernel(Index rows, Index cols, Index ndiag, const Index* __restrict__ offsets,
               const Value* __restrict__ values, Value alpha, const Value* __restrict__ x, Value beta,
               Value* __restrict__ y) {
  constexpr int kUnroll = format::kSlotUnroll;
  for (long long i = format::global_thread(); i < rows; i += format::grid_threads()) {
    const auto row = static_cast<Index>(i);
    Value sum = 0;
    Index d = 0;
    for (; d + kUnroll <= ndiag; d += kUnroll) {
      long long col[kUnroll];
      Value v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        col[u] = static_cast<long long>(row) + __ldg(offsets + d + u);
        v[u] = format::load_stream(values + (d + u) * rows + row);
      }
      Value xv[kUnroll];  // gathered in a pass of their own so that the loads are not serialised by FMAs
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) xv[u] = col[u] >= 0 && col[u] < cols ? __ldg(x + col[u]) : Value(0);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (col[u] >= 0 && col[u] < cols) sum += v[u] * xv[u];
    }
    for (; d < ndiag; ++d) {
      const long long col = static_cast<long long>(row) + __ldg(offsets + d);
      const Value v = format::load_stream(values + d * rows + row);
      if (col >= 0 && col < cols) sum += v * __ldg(x + col);
    }
    y[row] = axpby(alpha, sum, beta, y, row);
  }
}

// x[base, base + 4) for a 16-byte aligned x, branch-free: the aligned vectors that cover it, then a
// select by base's offset within them (the same for the whole warp). The caller guarantees that the
// covering vectors lie inside x (base rounded down to 4 elements, plus 8).
template <class Value>
__device__ __forceinline__ void load_four_covering(const Value* __restrict__ x, long long base, Value (&v)[4]) {
  if constexpr (std::is_same_v<Value, float>) {  // two float4 from base rounded down to 4 elements
    const long long start = base & ~3LL;
    const int shift = static_cast<int>(base - start);
    const float4 p = __ldg(reinterpret_cast<const float4*>(x + start));
    const float4 q = __ldg(reinterpret_cast<const float4*>(x + start + 4));
    const float w[8] = {p.x, p.y, p.z, p.w, q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[j] = shift == 0 ? w[j] : shift == 1 ? w[j + 1] : shift == 2 ? w[j + 2] : w[j + 3];
  } else {  // three double2 from base rounded down to 2 elements
    const long long start = base & ~1LL;
    const bool odd = base != start;
    double w[6];
#pragma unroll
    for (int h = 0; h < 3; ++h) {
      const double2 p = __ldg(reinterpret_cast<const double2*>(x + start) + h);
      w[2 * h] = p.x, w[2 * h + 1] = p.y;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = odd ? w[j + 1] : w[j];
  }
}

// f32 bits: x[base, base + 4) of a 16-byte aligned x from the aligned float4 that cover it: calls
// add(shift, w) with x[base + j] = w[shift + j] and shift = base's place in its float4 as a
// std::integral_constant. The groups start at multiples of four rows, so the shift is a diagonal's
// offset mod 4: the same for the whole warp, and the switch on it does not diverge. It reads one float4
// where the shift is 0 and selects no element at run time: H200 poisson2d / poisson3d / stencil27 f32
// 13% / 15% / 6% faster than load_four_covering. (The codes kernel keeps load_four_covering: with the
// switch, presumably because its branch stops the unrolled loop from issuing the next diagonals' loads
// early, it was 3-19% slower there, except stencil27 f64, 4% faster.)
// The caller guarantees that x holds base rounded down to 4 elements, plus 8.
template <class Add>
__device__ __forceinline__ void with_four_x(const float* __restrict__ x, long long base, Add&& add) {
  using std::integral_constant;
  const float4* v = reinterpret_cast<const float4*>(x + (base & ~3LL));
  const float4 p = __ldg(v);
  if ((base & 3) == 0) {
    const float w[4] = {p.x, p.y, p.z, p.w};
    add(integral_constant<int, 0>{}, w);
    return;
  }
  const float4 q = __ldg(v + 1);
  const float w[8] = {p.x, p.y, p.z, p.w, q.x, q.y, q.z, q.w};
  switch (static_cast<int>(base & 3)) {
    case 1: add(integral_constant<int, 1>{}, w); break;
    case 2: add(integral_constant<int, 2>{}, w); break;
    default: add(integral_constant<int, 3>{}, w); break;
  }
}

// f64: a run of up to kDiaMaxRun diagonals with consecutive offsets reads its four rows' x from one
// window, x[base, base + run + 3) from the aligned double2 that cover it (w) and base's parity (odd). A
// 27-point stencil's 27 diagonals are nine runs of three: a group loads 36 vectors instead of 81, and the
// L1 traffic (88% of its peak on stencil27 f64, Nsight Compute, H200) falls with them: H100 stencil27
// 14% faster, poisson3d 6%. In f32 the same windows (three float4, a four-way select) were 17-50% slower
// than a diagonal's two covering float4: there the kernel is bound by its instructions, not by L1.
// The caller guarantees that x holds base rounded down to even plus 8 elements.
constexpr int kDiaMaxRun = 3;
struct XWindow {
  double w[8];  // covers odd + kDiaMaxRun + 3 elements
  bool odd;
  __device__ __forceinline__ void load(const double* __restrict__ x, long long base, int run) {
    const long long start = base & ~1LL;
    odd = base != start;
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      if (2 * v >= static_cast<int>(odd) + run + 3) break;  // warp-uniform: odd and run are the warp's
      const double2 p = __ldg(reinterpret_cast<const double2*>(x + start) + v);
      w[2 * v] = p.x, w[2 * v + 1] = p.y;
    }
  }
  // x[base + i] for an i known at compile time once unrolled (< kDiaMaxRun + 3).
  __device__ __forceinline__ double at(int i) const { return odd ? w[i + 1] : w[i]; }
};

// y[first, first + 4) = alpha * sum + beta * y with 16-byte (f32) / two 16-byte (f64) accesses.
template <class Value>
__device__ __forceinline__ void store_four(Value* __restrict__ y, long long first, const Value (&sum)[4], Value alpha,
                                          Value beta) {
  Value out[4];
  if (beta == Value(0)) {
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = alpha * sum[j];
  } else {
    Value old[4];
    if constexpr (std::is_same_v<Value, float>) {
      const float4 q = *reinterpret_cast<const float4*>(y + first);
      old[0] = q.x, old[1] = q.y, old[2] = q.z, old[3] = q.w;
    } else {
      const double2 p = reinterpret_cast<const double2*>(y + first)[0];
      const double2 q = reinterpret_cast<const double2*>(y + first)[1];
      old[0] = p.x, old[1] = p.y, old[2] = q.x, old[3] = q.y;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = alpha * sum[j] + beta * old[j];
  }
  if constexpr (std::is_same_v<Value, float>) {
    *reinterpret_cast<float4*>(y + first) = make_float4(out[0], out[1], out[2], out[3]);
  } else {
    reinterpret_cast<double2*>(y + first)[0] = make_double2(out[0], out[1]);
    reinterpret_cast<double2*>(y + first)[1] = make_double2(out[2], out[3]);
  }
}

// A group's y: one 16-byte store (two in f64) where y is aligned and the group lies inside it, else a
// store a row.
template <class Value, class Index>
__device__ __forceinline__ void write_four(Value* __restrict__ y, long long first, Index rows, bool y_aligned,
                                          const Value (&sum)[4], Value alpha, Value beta) {
  if (y_aligned && first + 4 <= rows) {
    store_four(y, first, sum, alpha, beta);
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (first + j < rows) y[first + j] = axpby(alpha, sum[j], beta, y, first + j);
}

// The same sums from one-byte codes: a thread takes kDiaCodeRows consecutive rows, reads their codes on
// a diagonal with one 4-byte load and looks the values up in the block's copy of the table. Each row
// still adds its diagonals in ascending offset order, so the results equal dia_kernel's bit for bit.
// Where x and y are 16-byte aligned, groups whose covering vectors of x lie inside it read x with
// aligned vector loads (a select by the diagonal's offset, branch-free, so four diagonals' loads stay in
// flight together; a branch per diagonal between vector and scalar loads made stencil27 19-22% slower),
// and a group writes y in one 16-byte access (two in f64) instead of four strided stores.
template <class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    dia_codes_kernel(Index rows, Index cols, Index ndiag, const Index* __restrict__ offsets,
                     const std::uint8_t* __restrict__ codes, long long stride, const Value* __restrict__ g_table,
                     int table_size, Value alpha, const Value* __restrict__ x, bool x_aligned, Value beta,
                     Value* __restrict__ y, bool y_aligned) {
  static_assert(kDiaCodeRows == 4, "one 32-bit load of codes per diagonal");
  __shared__ Value table[kDiaMaxCodes];
  for (int t = threadIdx.x; t < table_size; t += blockDim.x) table[t] = __ldg(g_table + t);
  __syncthreads();
  const long long groups = (static_cast<long long>(rows) + kDiaCodeRows - 1) / kDiaCodeRows;
  const long long lowest = ndiag > 0 ? __ldg(offsets) : 0, highest = ndiag > 0 ? __ldg(offsets + ndiag - 1) : 0;
  for (long long g = format::global_thread(); g < groups; g += format::grid_threads()) {
    const long long first = g * kDiaCodeRows;
    Value sum[kDiaCodeRows] = {};
    if (x_aligned && first + lowest >= 0 && first + highest + 8 <= cols) {
#pragma unroll 4
      for (Index d = 0; d < ndiag; ++d) {
        const unsigned four = format::load_stream(reinterpret_cast<const unsigned*>(codes + d * stride + first));
        Value xv[kDiaCodeRows];
        load_four_covering(x, first + __ldg(offsets + d), xv);
#pragma unroll
        for (int j = 0; j < kDiaCodeRows; ++j) sum[j] += table[(four >> (8 * j)) & 0xffu] * xv[j];
      }
    } else {
#pragma unroll 4
      for (Index d = 0; d < ndiag; ++d) {
        const long long col0 = first + __ldg(offsets + d);
        const unsigned four = format::load_stream(reinterpret_cast<const unsigned*>(codes + d * stride + first));
#pragma unroll
        for (int j = 0; j < kDiaCodeRows; ++j) {
          const long long col = col0 + j;
          if (col >= 0 && col < cols) sum[j] += table[(four >> (8 * j)) & 0xffu] * __ldg(x + col);
        }
      }
    }
    write_four(y, first, rows, y_aligned, sum, alpha, beta);
  }
}

// ---- Two values a diagonal: one bit a slot --------------------------------------------------------
// A stencil's diagonal holds its coefficient and the boundary's 0. When every diagonal holds at most two
// distinct values (its first slot's and one other), a slot is one bit: bit 4 dd + j of word (w, g) is
// set when slot (8 w + dd, 4 g + j) holds the diagonal's second value; word (w, g) lies at w * groups + g,
// so a warp reads 128 contiguous bytes per eight diagonals. stencil27 then reads 4 bytes of values a
// row instead of 27 codes.
constexpr int kDiaBitDiagonals = 8;

// second[d] = the smallest bits of diagonal d that differ from its first slot's (all ones if none). A
// warp whose slots lie on one diagonal takes the minimum across its lanes first: one atomic a warp, not
// one a slot (every interior slot of a diagonal that starts in the padding differs from its first).
template <class Value>
__global__ void dia_second_value_kernel(const Value* __restrict__ values, long long rows, long long slots,
                                        format::ValueBits<Value>* __restrict__ second) {
  using Bits = format::ValueBits<Value>;
  const long long span = (slots + 31) / 32 * 32;  // whole warps run every iteration (shuffles)
  for (long long s = format::global_thread(); s < span; s += format::grid_threads()) {
    const long long d = (s < slots ? s : slots - 1) / rows;
    Bits candidate = ~Bits(0);
    if (s < slots) {
      const auto bits = format::value_bits(values[s]), first = format::value_bits(values[d * rows]);
      if (bits != first) candidate = bits;
    }
    if (__all_sync(0xffffffffu, d == __shfl_sync(0xffffffffu, d, 0))) {
      for (int step = 16; step > 0; step /= 2) {
        const Bits other = __shfl_xor_sync(0xffffffffu, candidate, step);
        candidate = other < candidate ? other : candidate;
      }
      if ((threadIdx.x & 31) == 0 && candidate != ~Bits(0)) atomicMin(second + d, candidate);
    } else if (candidate != ~Bits(0)) {
      atomicMin(second + d, candidate);
    }
  }
}

// *third = 1 when a slot holds neither its diagonal's first value nor `second` (one store a warp).
template <class Value>
__global__ void dia_third_value_kernel(const Value* __restrict__ values, long long rows, long long slots,
                                       const format::ValueBits<Value>* __restrict__ second, int* __restrict__ third) {
  const long long span = (slots + 31) / 32 * 32;
  for (long long s = format::global_thread(); s < span; s += format::grid_threads()) {
    bool other = false;
    if (s < slots) {
      const auto bits = format::value_bits(values[s]), first = format::value_bits(values[s / rows * rows]);
      other = bits != first && bits != second[s / rows];
    }
    if (__any_sync(0xffffffffu, other) && (threadIdx.x & 31) == 0) *third = 1;
  }
}

// The bit words, a thread per word; lo / hi = each diagonal's first and second value.
template <class Value>
__global__ void encode_dia_bits_kernel(const Value* __restrict__ values, long long rows, long long ndiag,
                                       long long groups, const format::ValueBits<Value>* __restrict__ second,
                                       unsigned* __restrict__ words, Value* __restrict__ lo, Value* __restrict__ hi) {
  const long long blocks = (ndiag + kDiaBitDiagonals - 1) / kDiaBitDiagonals;
  for (long long t = format::global_thread(); t < blocks * groups; t += format::grid_threads()) {
    const long long w = t / groups, g = t % groups;
    unsigned word = 0;
    for (int dd = 0; dd < kDiaBitDiagonals && w * kDiaBitDiagonals + dd < ndiag; ++dd) {
      const long long d = w * kDiaBitDiagonals + dd;
      const auto first = format::value_bits(values[d * rows]);
      for (int j = 0; j < kDiaCodeRows && g * kDiaCodeRows + j < rows; ++j) {
        const auto bits = format::value_bits(values[d * rows + g * kDiaCodeRows + j]);
        if (bits != first && bits == second[d]) word |= 1u << (dd * kDiaCodeRows + j);
      }
    }
    words[t] = word;
  }
  for (long long d = format::global_thread(); d < ndiag; d += format::grid_threads()) {
    lo[d] = values[d * rows];
    hi[d] = std::bit_cast<Value>(second[d]);
  }
}

// The sums from the bits: a thread per group of four rows, each row adding its diagonals in ascending
// offset order (bit for bit dia_kernel's result); x and y accessed as in dia_codes_kernel, except that
// f64 reads x of a run of diagonals from one window (XWindow). The variant for the policy's blocks asks
// for kDiaBitsMinBlocks of them per SM (f32: 40 registers at most; see Dia::apply for where it is
// faster). Issuing two, four or eight diagonals' x loads before their sums was slower (H100: up to 33%
// with four, 2-3x with eight): warps, not one thread's loads in flight, hide the latency here.
constexpr int kDiaBitsBlock = dia_policy(0).block_size;
template <class Value>
constexpr int kDiaBitsMinBlocks = sizeof(Value) == 8 ? 4 : 6;
template <class Value, class Index, bool kBounded>
__global__ void __launch_bounds__(kBounded ? kDiaBitsBlock : format::kMaxBlockSize,
                                  kBounded ? kDiaBitsMinBlocks<Value> : 1)
    dia_bits_kernel(Index rows, Index cols, Index ndiag, const Index* __restrict__ offsets,
                    const unsigned char* __restrict__ runs, const unsigned* __restrict__ words, long long groups,
                    const Value* __restrict__ lo, const Value* __restrict__ hi, Value alpha,
                    const Value* __restrict__ x, bool x_aligned, Value beta, Value* __restrict__ y, bool y_aligned) {
  const long long lowest = ndiag > 0 ? __ldg(offsets) : 0, highest = ndiag > 0 ? __ldg(offsets + ndiag - 1) : 0;
  const Index blocks = (ndiag + kDiaBitDiagonals - 1) / kDiaBitDiagonals;
  for (long long g = format::global_thread(); g < groups; g += format::grid_threads()) {
    const long long first = g * kDiaCodeRows;
    Value sum[kDiaCodeRows] = {};
    if (x_aligned && first + lowest >= 0 && first + highest + 8 <= cols) {
      if constexpr (std::is_same_v<Value, double>) {
        Index word_index = -1;
        unsigned word = 0;
        for (Index d = 0; d < ndiag;) {
          const int run = __ldg(runs + d);
          XWindow window;
          window.load(x, first + __ldg(offsets + d), run);
#pragma unroll
          for (int u = 0; u < kDiaMaxRun; ++u) {
            if (u >= run) break;
            const Index e = d + u;
            if (e / kDiaBitDiagonals != word_index) {  // warp-uniform
              word_index = e / kDiaBitDiagonals;
              word = format::load_stream(words + static_cast<long long>(word_index) * groups + g);
            }
            const int bit = (e % kDiaBitDiagonals) * kDiaCodeRows;
            const Value l = __ldg(lo + e), h = __ldg(hi + e);
#pragma unroll
            for (int j = 0; j < kDiaCodeRows; ++j) sum[j] += ((word >> (bit + j)) & 1u ? h : l) * window.at(u + j);
          }
          d += run;
        }
      } else {
        for (Index w = 0; w < blocks; ++w) {
          const unsigned word = format::load_stream(words + static_cast<long long>(w) * groups + g);
          const int count = min(kDiaBitDiagonals, static_cast<int>(ndiag - w * kDiaBitDiagonals));
#pragma unroll
          for (int dd = 0; dd < kDiaBitDiagonals; ++dd) {
            if (dd >= count) break;
            const Index d = w * kDiaBitDiagonals + dd;
            const Value l = __ldg(lo + d), h = __ldg(hi + d);
            with_four_x(x, first + __ldg(offsets + d), [&](auto shift, const auto& xw) {
#pragma unroll
              for (int j = 0; j < kDiaCodeRows; ++j)
                sum[j] += ((word >> (dd * kDiaCodeRows + j)) & 1u ? h : l) * xw[shift + j];
            });
          }
        }
      }
    } else {
      for (Index w = 0; w < blocks; ++w) {
        const unsigned word = format::load_stream(words + static_cast<long long>(w) * groups + g);
        const int count = min(kDiaBitDiagonals, static_cast<int>(ndiag - w * kDiaBitDiagonals));
        for (int dd = 0; dd < count; ++dd) {
          const Index d = w * kDiaBitDiagonals + dd;
          const long long col0 = first + __ldg(offsets + d);
          const Value l = __ldg(lo + d), h = __ldg(hi + d);
#pragma unroll
          for (int j = 0; j < kDiaCodeRows; ++j) {
            const long long col = col0 + j;
            if (col >= 0 && col < cols)
              sum[j] += ((word >> (dd * kDiaCodeRows + j)) & 1u ? h : l) * __ldg(x + col);
          }
        }
      }
    }
    write_four(y, first, rows, y_aligned, sum, alpha, beta);
  }
}

// Runs of consecutive offsets, at most kDiaMaxRun long: runs[d] = the length of the run that starts at
// diagonal d (other entries unused). A stencil's {-n-1, -n, -n+1} is one run.
template <class Index>
std::vector<unsigned char> offset_runs(const std::vector<Index>& offsets) {
  std::vector<unsigned char> runs(offsets.size(), 0);
  for (std::size_t d = 0; d < offsets.size();) {
    std::size_t length = 1;
    while (length < kDiaMaxRun && d + length < offsets.size() && offsets[d + length] == offsets[d] + Index(length))
      ++length;
    runs[d] = static_cast<unsigned char>(length);
    d += length;
  }
  return runs;
}

template <class Value, class Index>
class Dia final : public CudaAlgorithm<Value, Index> {
 public:
  Dia(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : rows_(a.rows),
        cols_(a.cols),
        block_(format::resolve_block_size(options.block_size, dia_policy(sizeof(Value)).block_size, "dia")) {
    format::DiaStorage<Value, Index> m = format::build_dia(a, options, /*stored_mask=*/false, stream);
    ndiag_ = m.ndiag;
    offsets_ = std::move(m.offsets);
    values_ = std::move(m.values);
    if (values_.size() > 0 && detail::dia_codes_allowed()) encode_values(stream);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    const long long groups = (static_cast<long long>(rows_) + kDiaCodeRows - 1) / kDiaCodeRows;
    const bool x_aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
    const bool y_aligned = reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
    if (words_.size() > 0) {
      // The bounded variant (more warps per SM) on the policy's block size: H100, 5- and 7-point stencils
      // 10-13% faster in f32; stencil27 (27 diagonals) 7% slower. In f64 it keeps the 64 registers the
      // run windows need (at 48, with spills, 35-45% slower).
      const bool bounded = block_ == kDiaBitsBlock && (sizeof(Value) == 8 || ndiag_ <= kDiaBitDiagonals);
      const auto kernel = bounded ? dia_bits_kernel<Value, Index, true> : dia_bits_kernel<Value, Index, false>;
      kernel<<<grid_for(groups, block_), block_, 0, stream>>>(rows_, cols_, ndiag_, offsets_.data(), runs_.data(),
                                                              words_.data(), groups, lo_.data(), hi_.data(), alpha,
                                                              x, x_aligned, beta, y, y_aligned);
      SPMV_CHECK_LAUNCH("dia_bits_kernel");
      return;
    }
    if (codes_.size() > 0) {
      dia_codes_kernel<<<grid_for(groups, block_), block_, 0, stream>>>(
          rows_, cols_, ndiag_, offsets_.data(), codes_.data(), code_stride_, table_.data(),
          static_cast<int>(table_.size()), alpha, x, x_aligned, beta, y, y_aligned);
      SPMV_CHECK_LAUNCH("dia_codes_kernel");
      return;
    }
    dia_kernel<<<grid_for(rows_, block_), block_, 0, stream>>>(rows_, cols_, ndiag_, offsets_.data(), values_.data(),
                                                               alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("dia_kernel");
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " diagonals=" + std::to_string(ndiag_) +
           " unroll=" + std::to_string(format::kSlotUnroll) +
           (words_.size() > 0   ? std::string(" values=bit-per-slot (two a diagonal) rows_per_thread=4")
            : codes_.size() > 0 ? " values=codes8 table=" + std::to_string(table_.size()) + " rows_per_thread=4"
                                : std::string(" values=raw"));
  }
  std::size_t extra_bytes() const override {
    return offsets_.bytes() + values_.bytes() + codes_.bytes() + table_.bytes() + words_.bytes() + lo_.bytes() +
           hi_.bytes() + runs_.bytes();
  }

 private:
  // Replaces the raw slots by bits when every diagonal holds at most two distinct values (two passes over
  // the slots, no sort); returns whether it did.
  bool encode_two_values(cudaStream_t stream) {
    using Bits = format::ValueBits<Value>;
    const auto slots = static_cast<long long>(values_.size());
    const long long rows = rows_, ndiag = ndiag_;
    DeviceBuffer<Bits> second(static_cast<std::size_t>(ndiag));
    DeviceBuffer<int> third(1);
    SPMV_CUDA_CHECK(cudaMemsetAsync(second.data(), 0xff, second.bytes(), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(third.data(), 0, third.bytes(), stream));
    const unsigned grid = grid_for(slots, format::kPlanBlock);
    dia_second_value_kernel<<<grid, format::kPlanBlock, 0, stream>>>(values_.data(), rows, slots, second.data());
    SPMV_CHECK_LAUNCH("dia_second_value_kernel");
    dia_third_value_kernel<<<grid, format::kPlanBlock, 0, stream>>>(values_.data(), rows, slots, second.data(),
                                                                    third.data());
    SPMV_CHECK_LAUNCH("dia_third_value_kernel");
    if (format::read_device_value(third.data(), stream) != 0) return false;
    const long long groups = (rows + kDiaCodeRows - 1) / kDiaCodeRows;
    const long long blocks = (ndiag + kDiaBitDiagonals - 1) / kDiaBitDiagonals;
    words_ = DeviceBuffer<unsigned>(static_cast<std::size_t>(blocks * groups));
    if constexpr (std::is_same_v<Value, double>)
      runs_ = DeviceBuffer<unsigned char>(std::span<const unsigned char>(offset_runs(offsets_.to_host(stream))),
                                          stream);
    lo_ = DeviceBuffer<Value>(static_cast<std::size_t>(ndiag));
    hi_ = DeviceBuffer<Value>(static_cast<std::size_t>(ndiag));
    encode_dia_bits_kernel<<<grid_for(blocks * groups, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        values_.data(), rows, ndiag, groups, second.data(), words_.data(), lo_.data(), hi_.data());
    SPMV_CHECK_LAUNCH("encode_dia_bits_kernel");
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // `second` is freed on return
    values_ = DeviceBuffer<Value>();
    return true;
  }

  // Replaces the raw slots by one-byte codes when they hold at most kDiaMaxCodes distinct values; keeps
  // them raw when there are more, or when the sort's memory is not free (a plan must not fail for an
  // optimisation).
  void encode_values(cudaStream_t stream) {
    if (detail::dia_bits_allowed() && encode_two_values(stream)) return;
    DeviceBuffer<Value> table;
    try {
      // A prefix first, so that matrices of many values (FEM, random coefficients) do not pay the sort
      // of every slot to learn it.
      const std::size_t sample = std::min<std::size_t>(values_.size(), kDiaCodeSample);
      if (format::distinct_values(values_.data(), sample, kDiaMaxCodes, table, "dia", stream) > kDiaMaxCodes) return;
      if (sample < values_.size() &&
          format::distinct_values(values_.data(), values_.size(), kDiaMaxCodes, table, "dia", stream) > kDiaMaxCodes)
        return;
    } catch (const MemoryLimitExceeded&) {
      return;
    }
    // Each diagonal's codes padded to a multiple of kDiaCodeAlign (zeros, never used for a product).
    code_stride_ = (static_cast<long long>(rows_) + kDiaCodeAlign - 1) / kDiaCodeAlign * kDiaCodeAlign;
    codes_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(code_stride_ * ndiag_));
    SPMV_CUDA_CHECK(cudaMemsetAsync(codes_.data(), 0, codes_.bytes(), stream));
    const auto slots = static_cast<long long>(values_.size());
    encode_dia_kernel<<<grid_for(slots, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        values_.data(), static_cast<long long>(rows_), slots, code_stride_, table.data(),
        static_cast<int>(table.size()), codes_.data());
    SPMV_CHECK_LAUNCH("encode_dia_kernel");
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    table_ = std::move(table);
    values_ = DeviceBuffer<Value>();
  }

  Index rows_;
  Index cols_;
  int block_;
  Index ndiag_ = 0;
  DeviceBuffer<Index> offsets_;  // ndiag, ascending (col - row)
  DeviceBuffer<Value> values_;   // ndiag * rows, diagonal-major: slot (d, row) at d * rows + row; or empty, and
  DeviceBuffer<std::uint8_t> codes_;  // the same slots as positions in table_, diagonal d at d * code_stride_
  DeviceBuffer<Value> table_;
  long long code_stride_ = 0;
  DeviceBuffer<unsigned> words_;  // or one bit a slot, eight diagonals of four rows a word,
  DeviceBuffer<Value> lo_, hi_;   // and each diagonal's first and second value, and
  DeviceBuffer<unsigned char> runs_;  // f64: at each run's first diagonal, its length (offset_runs)
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_dia(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                    cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Dia, op);
  return std::make_unique<Dia<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_dia)

}  // namespace spmv::cuda
