// ConvertingOperator (include/spmv/solvers.hpp): Auto's CPU operator for A x that converts the matrix during a
// solve once the products made would have repaid the conversion (the CUDA twin: src/cuda/
// converting_plan_operator.cu).
#include <string>

#include "core/auto_rule.hpp"
#include "cpu/cpu_operator.hpp"
#include "spmv/solvers.hpp"

namespace spmv {

template <class Value, class Index>
struct ConvertingOperator<Value, Index>::Shape {
  detail::RowShape rows;
  int threads = 1;
};

template <class Value, class Index>
ConvertingOperator<Value, Index>::ConvertingOperator(const CsrMatrix<Value, Index>& a, Operator<Value, Index>& first,
                                                     const Options& options)
    : a_(a), first_(first), options_(options) {}

template <class Value, class Index>
ConvertingOperator<Value, Index>::~ConvertingOperator() = default;

template <class Value, class Index>
bool ConvertingOperator<Value, Index>::reconsider(std::int64_t applies) {
  if (!checks_.due(applies)) return false;
  if (a_.rows == 0 || a_.cols == 0 || a_.nnz() == 0) {
    checks_.stop();  // a degenerate operator runs no kernel: nothing to convert
    return false;
  }
  if (!shape_) {
    // The row pass of Auto's own count (no hint: it stops before the column indices).
    Shape shape;
    shape.threads = detail::auto_threads(a_.nnz(), options_);
    Options plain = options_;
    plain.expected_applies = 0;
    shape.rows = detail::count_formats(a_, plain, sizeof(Value), shape.threads).first;
    shape_ = std::make_unique<Shape>(shape);
  }
  if (!detail::cpu_conversion_may_repay(shape_->rows, sizeof(Value), applies, shape_->threads)) return false;
  Options hinted = options_;
  hinted.expected_applies = applies;
  auto op = make_cpu_operator(a_, Algorithm::Auto, Operation::NonTranspose, hinted);
  const bool changed = op->algorithm() != first_.algorithm();  // (a hinted policy names its hint)
  checks_.attempted(applies, op->algorithm(), changed);
  if (changed) converted_ = std::move(op);
  return changed;
}

template <class Value, class Index>
std::string ConvertingOperator<Value, Index>::label() const {
  const std::string first = algorithm_label(first_.algorithm(), first_.policy());
  return converted_ ? checks_.label(first, algorithm_label(converted_->algorithm(), converted_->policy())) : first;
}

template class ConvertingOperator<float, std::int32_t>;
template class ConvertingOperator<float, std::int64_t>;
template class ConvertingOperator<double, std::int32_t>;
template class ConvertingOperator<double, std::int64_t>;

}  // namespace spmv
