// ConvertingPlanOperator (include/spmv/cuda/linear_operator.hpp): Auto's plan for A x that converts the
// matrix during a solve once the products made would have repaid the conversion.
#include <string>

#include "core/auto_rule.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/row_statistics.cuh"
#include "spmv/cuda/linear_operator.hpp"
#include "spmv/solvers.hpp"

namespace spmv::cuda {

template <class Value, class Index>
struct ConvertingPlanOperator<Value, Index>::Shape {
  detail::RowShape rows;
};

template <class Value, class Index>
ConvertingPlanOperator<Value, Index>::ConvertingPlanOperator(CsrView<Value, Index> matrix, Plan<Value, Index>& plan,
                                                             const Options& options)
    : matrix_(matrix), first_(plan), options_(options) {}

template <class Value, class Index>
ConvertingPlanOperator<Value, Index>::~ConvertingPlanOperator() = default;

template <class Value, class Index>
bool ConvertingPlanOperator<Value, Index>::reconsider(std::int64_t applies, cudaStream_t stream) {
  if (!checks_.due(applies)) return false;
  if (matrix_.rows == 0 || matrix_.cols == 0 || matrix_.nnz == 0) {
    checks_.stop();  // a degenerate plan runs no kernel: nothing to convert
    return false;
  }
  if (!shape_) shape_ = std::make_unique<Shape>(Shape{row_shape(matrix_, row_statistics(matrix_, stream))});
  if (!auto_hint_may_convert(shape_->rows, sizeof(Value), applies)) return false;
  Options hinted = options_;
  hinted.expected_applies = applies;
  auto plan = std::make_unique<Plan<Value, Index>>(matrix_, Algorithm::Auto, Operation::NonTranspose, hinted, stream);
  const bool changed = plan->algorithm() != first_.algorithm();
  checks_.attempted(applies, plan->algorithm(), changed);
  if (changed) converted_ = std::move(plan);
  return changed;
}

template <class Value, class Index>
std::string ConvertingPlanOperator<Value, Index>::label() const {
  const std::string first = algorithm_label(first_.algorithm(), first_.policy());
  return converted_ ? checks_.label(first, algorithm_label(converted_->algorithm(), converted_->policy())) : first;
}

template class ConvertingPlanOperator<float, std::int32_t>;
template class ConvertingPlanOperator<float, std::int64_t>;
template class ConvertingPlanOperator<double, std::int32_t>;
template class ConvertingPlanOperator<double, std::int64_t>;

}  // namespace spmv::cuda
