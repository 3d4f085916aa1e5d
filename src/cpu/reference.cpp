// The sequential oracle: every other algorithm, on every backend, is compared with it. It favours
// obviousness over speed: double accumulation, one loop, BLAS alpha/beta semantics spelled out.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/instantiate.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"

namespace spmv::cpu {

namespace detail {

template <class Value, class Index>
void check_vectors(const CsrMatrix<Value, Index>& a, Operation op, std::size_t x_size, std::size_t y_size,
                   const char* who) {
  const auto rows = static_cast<std::size_t>(a.rows);
  const auto cols = static_cast<std::size_t>(a.cols);
  const std::size_t want_x = op == Operation::NonTranspose ? cols : rows;
  const std::size_t want_y = op == Operation::NonTranspose ? rows : cols;
  if (x_size != want_x || y_size != want_y)
    throw InvalidArgument(std::string(who) + ": x has " + std::to_string(x_size) + " entries and y " +
                          std::to_string(y_size) + ", expected " + std::to_string(want_x) + " and " +
                          std::to_string(want_y) + " for op(A) = " + std::string(to_string(op)) + " of a " +
                          std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
}

}  // namespace detail

namespace {

// y_i = alpha*s_i + beta*y_i in double, y_i not read when beta == 0.
template <class Value>
Value combine(double alpha, double s, double beta, Value y) {
  return static_cast<Value>(beta == 0 ? alpha * s : alpha * s + beta * static_cast<double>(y));
}

}  // namespace

template <class Value, class Index>
void detail::reference_kernel(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, const Value* x,
                              Value beta, Value* y) {
  const double da = alpha, db = beta;
  const Index y_size = op == Operation::NonTranspose ? a.rows : a.cols;
  if (alpha == 0) {  // BLAS: A and x are not touched (their NaN/Inf do not propagate)
    for (Index i = 0; i < y_size; ++i) y[i] = combine(0.0, 0.0, db, y[i]);
    return;
  }
  if (op == Operation::NonTranspose) {
    for (Index r = 0; r < a.rows; ++r) {
      double s = 0;
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        s += static_cast<double>(a.values[k]) * static_cast<double>(x[a.col_idx[k]]);
      y[r] = combine(da, s, db, y[r]);
    }
  } else {
    std::vector<double> s(static_cast<std::size_t>(a.cols), 0.0);
    for (Index r = 0; r < a.rows; ++r)
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        s[a.col_idx[k]] += static_cast<double>(a.values[k]) * static_cast<double>(x[r]);
    for (Index c = 0; c < a.cols; ++c) y[c] = combine(da, s[c], db, y[c]);
  }
}

template <class Value, class Index>
void reference(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, std::span<const Value> x, Value beta,
               std::span<Value> y) {
  validate(a);
  detail::check_vectors(a, op, x.size(), y.size(), "spmv::cpu::reference");
  detail::reference_kernel(a, op, alpha, x.data(), beta, y.data());
}

template <class Value, class Index>
std::vector<double> reference_magnitude(const CsrMatrix<Value, Index>& a, Operation op,
                                        std::span<const Value> x) {
  validate(a);
  const std::size_t out = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  detail::check_vectors(a, op, x.size(), out, "spmv::cpu::reference_magnitude");
  std::vector<double> m(out, 0.0);
  for (Index r = 0; r < a.rows; ++r)
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const Index i = op == Operation::NonTranspose ? r : a.col_idx[k];
      const Index j = op == Operation::NonTranspose ? a.col_idx[k] : r;
      m[i] += std::abs(static_cast<double>(a.values[k]) * static_cast<double>(x[j]));
    }
  return m;
}

#define SPMV_INSTANTIATE(V, I)                                                                              \
  template void reference(const CsrMatrix<V, I>&, Operation, V, std::span<const V>, V, std::span<V>);       \
  template std::vector<double> reference_magnitude(const CsrMatrix<V, I>&, Operation, std::span<const V>); \
  template void detail::check_vectors(const CsrMatrix<V, I>&, Operation, std::size_t, std::size_t, const char*); \
  template void detail::reference_kernel(const CsrMatrix<V, I>&, Operation, V, const V*, V, V*);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cpu
