#pragma once
// Private: the definition of detail::csr_rows_scalar (declared in csr_simd.hpp), instantiated for f64 in
// row_loop.cpp and for f32 in row_loop_f32.cpp, which is compiled without GCC's vectoriser.
#include "cpu/csr_simd.hpp"

namespace spmv::cpu {

namespace detail {

// The row sums of rows [r_begin, r_end), each handed to store(r, sum).
template <class Value, class Index, class Store>
inline void for_each_row_sum(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                             Index r_end, Store store) {
  for (Index r = r_begin; r < r_end; ++r) {
    Value s = 0;
    for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += val[k] * x[col[k]];
    store(r, s);
  }
}

}  // namespace detail

template <class Value, class Index>
void detail::csr_rows_scalar(const Index* row_ptr, const Index* col, const Value* val, const Value* x, Index r_begin,
                             Index r_end, Value alpha, Value beta, Value* y) {
  // y = A x (what A @ x and the solvers ask for) stores the sum as it is: the same bits as alpha * s with
  // alpha = 1, one multiply and the beta test fewer a row, 8-13% less time on 2D Poisson's rows of 5 on one Zen 4
  // core (docs/algorithms/cpu_simd.md)
  if (alpha == 1 && beta == 0)
    return for_each_row_sum(row_ptr, col, val, x, r_begin, r_end, [y](Index r, Value s) { y[r] = s; });
  for_each_row_sum(row_ptr, col, val, x, r_begin, r_end,
                   [=](Index r, Value s) { y[r] = beta == 0 ? alpha * s : alpha * s + beta * y[r]; });
}

}  // namespace spmv::cpu
