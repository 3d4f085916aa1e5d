#pragma once
// The device-side face of a matrix for iterative solvers: y = alpha*op(A)*x + beta*y on device arrays,
// enqueued on a stream, with Plan::apply's conventions (beta == 0 never reads y; alpha == 0 reads
// neither A nor x). A Plan is one (PlanOperator); matrix-free operators (FEM local matrix assembly)
// are others. Host-vector twin: spmv::LinearOperator.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "spmv/cuda/plan.hpp"

namespace spmv::cuda {

template <class Value>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual std::int64_t rows() const = 0;  // of op(A): y's length
  virtual std::int64_t cols() const = 0;  // of op(A): x's length
  virtual void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) = 0;
};

// A plan seen as a LinearOperator; the plan (and its matrix) must outlive the adapter.
template <class Value, class Index>
class PlanOperator final : public LinearOperator<Value> {
 public:
  explicit PlanOperator(Plan<Value, Index>& plan) : plan_(plan) {}
  std::int64_t rows() const override { return plan_.y_size(); }
  std::int64_t cols() const override { return plan_.x_size(); }
  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    plan_.apply(alpha, x, beta, y, stream);
  }

 private:
  Plan<Value, Index>& plan_;
};

}  // namespace spmv::cuda
