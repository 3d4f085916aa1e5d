#pragma once
// What an iterative solver needs from a matrix and nothing more: the shape of op(A) and
// y = alpha*op(A)*x + beta*y on host vectors. Operator (an algorithm bound to a CSR matrix) is one;
// matrix-free operators (the FEM local-matrix-assembly operator) are others. The CUDA twin, on device
// arrays and a stream, is spmv::cuda::LinearOperator.
#include <cstdint>
#include <span>

namespace spmv {

template <class Value>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual std::int64_t rows() const = 0;  // of op(A): y's length
  virtual std::int64_t cols() const = 0;  // of op(A): x's length
  // BLAS conventions: beta == 0 never reads y; alpha == 0 reads neither A nor x (y = beta*y).
  virtual void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) = 0;
  // Called by the solvers before each product with the products made so far: an operator may change how
  // it applies A now (spmv::ConvertingOperator converts its matrix). Returns true when it did.
  virtual bool reconsider(std::int64_t applies) {
    (void)applies;
    return false;
  }
};

}  // namespace spmv
