// The naive sequential CSR loop in the value type: what a textbook writes, and what Auto picks for
// matrices too small to pay for starting threads.
#include <cstdint>

#include "cpu/csr_rows_scalar-inl.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/cpu.hpp"

namespace spmv::cpu {

// Made in row_loop_f32.cpp (without GCC's vectoriser): never instantiated here.
extern template void detail::csr_rows_scalar(const std::int32_t*, const std::int32_t*, const float*, const float*,
                                             std::int32_t, std::int32_t, float, float, float*);
extern template void detail::csr_rows_scalar(const std::int64_t*, const std::int64_t*, const float*, const float*,
                                             std::int64_t, std::int64_t, float, float, float*);

template <class Value, class Index>
void detail::row_loop_kernel(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, const Value* x,
                             Value beta, Value* y) {
  const Index* row_ptr = a.row_ptr.data();
  const Index* col = a.col_idx.data();
  const Value* val = a.values.data();
  if (alpha == 0 || op == Operation::Transpose) {  // y = beta*y first; beta == 0 must not read y
    const Index y_size = op == Operation::NonTranspose ? a.rows : a.cols;
    for (Index i = 0; i < y_size; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
    if (alpha == 0) return;
  }
  if (op == Operation::NonTranspose) {
    detail::csr_rows_scalar(row_ptr, col, val, x, Index{0}, a.rows, alpha, beta, y);
  } else {
    for (Index r = 0; r < a.rows; ++r) {
      const Value ax = alpha * x[r];
      for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) y[col[k]] += val[k] * ax;
    }
  }
}

template <class Value, class Index>
void row_loop(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x, Value beta,
              std::span<Value> y) {
  validate(a);
  detail::check_vectors(a, op, x.size(), y.size(), "spmv::cpu::row_loop");
  detail::row_loop_kernel(a, op, alpha, x.data(), beta, y.data());
}

#define SPMV_INSTANTIATE(V, I)                                                                        \
  template void row_loop(const CsrMatrix<V, I>&, Operation, V, std::span<const V>, V, std::span<V>); \
  template void detail::row_loop_kernel(const CsrMatrix<V, I>&, Operation, V, const V*, V, V*);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE
// f64 here; f32 in row_loop_f32.cpp, compiled without GCC's vectoriser (src/CMakeLists.txt says why).
template void detail::csr_rows_scalar(const std::int32_t*, const std::int32_t*, const double*, const double*,
                                      std::int32_t, std::int32_t, double, double, double*);
template void detail::csr_rows_scalar(const std::int64_t*, const std::int64_t*, const double*, const double*,
                                      std::int64_t, std::int64_t, double, double, double*);

}  // namespace spmv::cpu
