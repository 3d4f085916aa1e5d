#pragma once
// Private: the definition of detail::csr_rows_scalar (declared in csr_simd.hpp), instantiated for f64 in
// row_loop.cpp and for f32 in row_loop_f32.cpp, which is compiled without GCC's vectoriser.
#include "cpu/csr_simd.hpp"

namespace spmv::cpu {

template <class Value, class Index>
void detail::csr_rows_scalar(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                             Index r_end, Value alpha, Value beta, Value* y) {
  for (Index r = r_begin; r < r_end; ++r) {
    Value s = 0;
    for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += val[k] * x[col[k]];
    y[r] = beta == 0 ? alpha * s : alpha * s + beta * y[r];
  }
}

}  // namespace spmv::cpu
