#pragma once
// Private: the SIMD CSR row kernels of the CPU backend (src/cpu/csr_simd.cpp), compiled by Google
// Highway for every x86/ARM target it knows and chosen at run time (HWY_DYNAMIC_DISPATCH), so one
// binary uses AVX-512, AVX2, SSE4, NEON or SVE where the CPU has them. MergeParallel and RowLoop call
// these for the non-transposed product when simd_enabled(); the scalar loops stay as the fallback.
#include <cstdint>
#include <string>

namespace spmv::cpu::detail {

// Whether a plan built now uses the SIMD kernels: `requested` is Options::cpu_simd (1 on, 0 off);
// -1 reads the environment variable SPMV_CPU_SIMD ("0" forces the scalar loops, anything else or
// unset means on), so CI can run the whole test suite down both paths.
bool simd_enabled(int requested);

// Whether the kernels can take A: with int64 indices and f32 values the gather uses 32-bit lanes, so
// every column index must fit in int32.
template <class Value, class Index>
bool simd_fits(std::int64_t cols) {
  return sizeof(Index) <= sizeof(Value) || cols <= std::int64_t{INT32_MAX};
}

// The Highway target the dispatcher picks on this CPU, e.g. "AVX2" (for policy strings).
std::string simd_target();

// Rows of at least this many nonzeros take the vector dot product on this CPU's target (four vectors:
// 64 f32 / 32 f64 on AVX-512). Shorter rows run the scalar loop.
template <class Value, class Index>
std::int64_t simd_row_threshold();

// Whether some row of A reaches simd_row_threshold. When none does, the plans call the scalar loop on
// every row directly: csr_rows_simd would only add a pass that finds runs of short rows, which cost
// 5-14% on matrices of 4-20 nonzeros per row (cage10, bayer10, cti, cs4; f32 and f64, one thread, the
// 2-core Zen 4 VM, 2026-11-26).
template <class Value, class Index>
bool simd_row_reached(const Index* row_ptr, Index rows) {
  const std::int64_t threshold = simd_row_threshold<Value, Index>();
  for (Index r = 0; r < rows; ++r)
    if (std::int64_t{row_ptr[r + 1] - row_ptr[r]} >= threshold) return true;
  return false;
}

// The policy words of a CSR plan: "simd=AVX3", "simd=AVX3 unused (rows < 64)" or "simd=off".
template <class Value, class Index>
std::string simd_policy(bool enabled, bool reached) {
  if (!enabled) return "simd=off";
  return "simd=" + simd_target() +
         (reached ? "" : " unused (rows < " + std::to_string(simd_row_threshold<Value, Index>()) + ")");
}

// For r in [r_begin, r_end): s = sum_k val[k] * x[col[k]] over row r, then
// y[r] = alpha * s (beta == 0: y is not read) or alpha * s + beta * y[r]. Rows may be empty.
template <class Value, class Index>
void csr_rows_simd(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                   Index r_end, Value alpha, Value beta, Value* y);

// The same in plain scalar code, compiled for the baseline target (src/cpu/row_loop.cpp): the SIMD
// kernels hand runs of short rows to it, because the same loop compiled inside a Highway target with
// FMA becomes one chain of fused multiply-adds (4-cycle latency on Zen 4 against an add's 3): on the
// H200 host's Zen 4 (AVX3), one thread, f32, it ran EX5 / bcsstk16 / cage10 / bayer10 / stencil27 at
// 0.25 / 0.19 / 0.11 / 0.081 / 4.7 ms against 0.16 / 0.15 / 0.088 / 0.061 / 3.0 ms for this one.
template <class Value, class Index>
void csr_rows_scalar(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                     Index r_end, Value alpha, Value beta, Value* y);

// sum_{k in [k_begin, k_end)} val[k] * x[col[k]] (a piece of one row, for merge-path carries).
template <class Value, class Index>
Value csr_dot_simd(const Index* col, const Value* val, const Value* x, std::int64_t k_begin, std::int64_t k_end);

}  // namespace spmv::cpu::detail
