#pragma once
// Sparse times dense with many right-hand sides on the CPU (SpMM): Y = alpha*op(A)*X + beta*Y, X and
// Y dense (include/spmv/dense.hpp) with k columns, either layout, any leading dimension.
// X is op(A).cols x k, Y is op(A).rows x k. The conventions are SpMV's: beta == 0 never reads Y (it
// may hold NaN); alpha == 0 reads neither A nor X (NaN/Inf in X never reach Y): Y = beta*Y. Sizes
// that do not match, negative sizes and leading dimensions below the contiguous extent throw
// InvalidArgument. The CUDA twin is spmv::cuda::SpmmPlan (include/spmv/cuda/spmm.hpp).
// Instantiated for float/double x int32_t/int64_t.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/dense.hpp"

namespace spmv::cpu {

// A plan bound to one matrix (docs/ALGORITHMS.md "SpMM"). Rows are split into blocks of about equal
// rows + nonzeros, run by OpenMP threads; each row is walked once per tile of X's columns (tiles of
// 32/16/8/4/2/1 columns, the widest that fits what is left), the tile's sums held in a small array the
// compiler vectorises. op = Transpose: the plan builds A^T once (a second copy of A, extra_bytes) and
// runs the same kernel on it, so that the product has no scatter and every output is written by one
// thread: deterministic for any thread count.
// apply() is const and allocates nothing; the plan owns no per-product scratch, so any number of
// threads may call it at once (on different Y).
template <class Value, class Index>
class SpmmPlan {
 public:
  // Validates A (O(nnz)) and copies it (transposed for op = T). threads <= 0: omp_get_max_threads().
  explicit SpmmPlan(const CsrMatrix<Value, Index>& a, Operation op = Operation::NonTranspose, int threads = 0);

  void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) const;

  Operation operation() const { return op_; }
  std::int64_t x_rows() const { return a_.cols; }  // op(A).cols
  std::int64_t y_rows() const { return a_.rows; }  // op(A).rows
  std::string policy() const;
  std::size_t extra_bytes() const;  // the transposed copy (op = T) and the row blocks

 private:
  CsrMatrix<Value, Index> a_;  // op(A) as a CSR matrix: A, or A^T
  Operation op_;
  int threads_;
  std::vector<Index> block_rows_;  // row-block boundaries (blocks + 1)
};

// One product with a plan built for it (validates and copies A on every call).
template <class Value, class Index>
void spmm(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, DenseView<const Value> x, Value beta,
          DenseView<Value> y, int threads = 0);

}  // namespace spmv::cpu
