#pragma once
// The device-side face of a matrix for iterative solvers: y = alpha*op(A)*x + beta*y on device arrays,
// enqueued on a stream, with Plan::apply's conventions (beta == 0 never reads y; alpha == 0 reads
// neither A nor x). A Plan is one (PlanOperator); matrix-free operators (FEM local matrix assembly)
// are others. Host-vector twin: spmv::LinearOperator.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "spmv/conversion_checks.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::cuda {

template <class Value>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual std::int64_t rows() const = 0;  // of op(A): y's length
  virtual std::int64_t cols() const = 0;  // of op(A): x's length
  virtual void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) = 0;
  // Called by the solvers between iterations with the products made so far: an operator may change how
  // it applies A now (ConvertingPlanOperator converts its matrix). Returns true when it did, so that a
  // CUDA graph captured from the old apply is captured again. Never called inside a graph capture.
  virtual bool reconsider(std::int64_t applies, cudaStream_t stream) {
    (void)applies, (void)stream;
    return false;
  }
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

// Auto's plan for A x made without Options::expected_applies, allowed to convert the matrix during a solve:
// at each of its ConversionChecks (16, 32, 64, ... products) it asks whether Auto, told to expect as many
// products again as were made so far, would convert (DIA, ELL, SELL or column chunks; src/core/auto_rule.hpp)
// and if so builds that plan and applies it from then on. The products already made stand for those to
// come, so the conversion is bought once the products made would have repaid it (the ski-rental rule): a
// solve that stops early pays nothing, a long one one conversion (docs/SOLVERS.md "Conversion during a
// solve"). The solvers' front doors (solve_csr, the Python Matrix) use it where converts_during_solve says
// so; a caller's Plan is never changed.
template <class Value, class Index>
class ConvertingPlanOperator final : public LinearOperator<Value> {
 public:
  // `plan` (Auto's, for A x) and the matrix it views must outlive the operator; `options` are the plan's.
  ConvertingPlanOperator(CsrView<Value, Index> matrix, Plan<Value, Index>& plan, const Options& options);
  ~ConvertingPlanOperator() override;
  std::int64_t rows() const override { return current().y_size(); }
  std::int64_t cols() const override { return current().x_size(); }
  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    active().apply(alpha, x, beta, y, stream);
  }
  bool reconsider(std::int64_t applies, cudaStream_t stream) override;
  const Plan<Value, Index>& current() const { return converted_ ? *converted_ : first_; }
  std::int64_t converted_after() const { return checks_.converted_after(); }
  // The plan's label (algorithm_label), and the first plan's with the product count before a conversion.
  std::string label() const;

 private:
  Plan<Value, Index>& active() { return converted_ ? *converted_ : first_; }
  struct Shape;
  CsrView<Value, Index> matrix_;
  Plan<Value, Index>& first_;
  Options options_;
  std::unique_ptr<Shape> shape_;  // measured at the first check
  std::unique_ptr<Plan<Value, Index>> converted_;
  ConversionChecks checks_;
};

}  // namespace spmv::cuda
