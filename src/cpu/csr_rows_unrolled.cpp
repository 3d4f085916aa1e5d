// The unrolled short-row CSR loop of the dispatched CPU path (detail::csr_rows_unrolled, csr_simd.hpp):
// four nonzeros per step summed pairwise into two accumulators, so a row of n nonzeros waits on about
// n/2 dependent adds instead of n (the plain loop's one chain is what bounds rows of 12-60 on Zen 4:
// docs/algorithms/cpu_simd.md). Compiled for the baseline target, as the plain loop, so that the adds
// stay adds (inside a Highway target with FMA the compiler contracts them into a chain of fused
// multiply-adds), and without GCC's vectoriser (src/CMakeLists.txt), whose SLP form of such sums was
// slower than the scalar code on short rows.
#include <cstdint>

#include "cpu/csr_simd.hpp"

namespace spmv::cpu {

template <class Value, class Index>
void detail::csr_rows_unrolled(const Index* row_ptr, const Index* col, const Value* val, const Value* x,
                               Index r_begin, Index r_end, Value alpha, Value beta, Value* y) {
  if (r_begin >= r_end) return;
  // The column and value pointers run on from row to row (rows are contiguous in CSR); each row makes
  // n / 4 steps, then a pair and a single by the low bits of n.
  const Index* c = col + row_ptr[r_begin];
  const Value* v = val + row_ptr[r_begin];
  for (Index r = r_begin; r < r_end; ++r) {
    const Index n = row_ptr[r + 1] - row_ptr[r];
    const Index* const steps_end = c + (n & ~Index{3});
    Value s0 = 0, s1 = 0;
    for (; c != steps_end; c += 4, v += 4) {
      s0 += v[0] * x[c[0]] + v[1] * x[c[1]];
      s1 += v[2] * x[c[2]] + v[3] * x[c[3]];
    }
    if (n & 2) {
      s0 += v[0] * x[c[0]];
      s1 += v[1] * x[c[1]];
      c += 2;
      v += 2;
    }
    if (n & 1) {
      s0 += v[0] * x[c[0]];
      ++c;
      ++v;
    }
    const Value s = s0 + s1;
    y[r] = beta == 0 ? alpha * s : alpha * s + beta * y[r];
  }
}

template void detail::csr_rows_unrolled(const std::int32_t*, const std::int32_t*, const float*, const float*,
                                        std::int32_t, std::int32_t, float, float, float*);
template void detail::csr_rows_unrolled(const std::int64_t*, const std::int64_t*, const float*, const float*,
                                        std::int64_t, std::int64_t, float, float, float*);
template void detail::csr_rows_unrolled(const std::int32_t*, const std::int32_t*, const double*, const double*,
                                        std::int32_t, std::int32_t, double, double, double*);
template void detail::csr_rows_unrolled(const std::int64_t*, const std::int64_t*, const double*, const double*,
                                        std::int64_t, std::int64_t, double, double, double*);

}  // namespace spmv::cpu
