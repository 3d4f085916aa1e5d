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
#include <memory>
#include <string>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/dense.hpp"
#include "spmv/operator.hpp"

namespace spmv::cpu {

// A plan bound to one matrix (docs/ALGORITHMS.md "SpMM"). Rows are split into blocks of about equal
// rows + nonzeros, run by OpenMP threads; each row is walked once per tile of X's columns (tiles of
// 32/16/8/4/2/1 columns, the widest that fits what is left), the tile's sums held in a small array the
// compiler vectorises (AVX-512 or AVX2 with FMA when the CPU has them, chosen at run time;
// SPMV_CPU_SIMD=0 keeps the x86-64 baseline). op = Transpose: the plan builds A^T once (a second copy of A, extra_bytes) and
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
  int isa_;                        // the instruction set the row loop runs (src/cpu/spmm.cpp)
  std::vector<Index> block_rows_;  // row-block boundaries (blocks + 1)
};

// One product with a plan built for it (validates and copies A on every call).
template <class Value, class Index>
void spmm(const CsrMatrix<Value, Index>& a, Operation op, Value alpha, DenseView<const Value> x, Value beta,
          DenseView<Value> y, int threads = 0);

}  // namespace spmv::cpu

namespace spmv {

// What an SpmmOperator runs: spmv's SpMM kernels, the vendor's SpMM (cusparseSpMM on CUDA; none on the
// CPU), or k separate SpMV products of the backend's Auto operator (the baseline SpMM must beat).
enum class SpmmKernel { Spmm, Vendor, ColumnSpmv };

// The backend-neutral face of SpMM on HOST views, as Operator is for SpMV: what `spmv bench --k` and
// the Python package drive. The CUDA operator copies X (and Y when beta != 0) to the device and Y back
// per call. Calls on one operator are serialized (the CUDA one owns its device copies).
template <class Value, class Index>
class SpmmOperator {
 public:
  virtual ~SpmmOperator() = default;
  virtual Backend backend() const = 0;
  virtual SpmmKernel kernel() const = 0;
  virtual Operation operation() const = 0;
  virtual std::string name() const = 0;                                  // e.g. "spmm", "cusparse-spmm-csr-alg2"
  virtual std::string policy(std::int64_t k, Layout layout) const = 0;  // what apply() runs for k columns
  virtual double setup_ms() const = 0;
  virtual void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) = 0;
  // Times repeated products on backend-resident copies of X and Y (CUDA: events after warm-up); Y's
  // contents afterwards are unspecified.
  virtual Timing time(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y,
                      const TimingOptions& options) = 0;
};

// Vendor variants (CUDA: CUSPARSE_SPMM_ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3; `variant` indexes
// them); ignored by the other kernels. Throws Unsupported for what a backend lacks (the CPU has no
// vendor SpMM; a cuSPARSE algorithm may refuse a layout or operation).
inline constexpr int kVendorSpmmVariants = 4;
template <class Value, class Index>
std::unique_ptr<SpmmOperator<Value, Index>> make_spmm_operator(Backend backend, const CsrMatrix<Value, Index>& a,
                                                               Operation op, SpmmKernel kernel,
                                                               const Options& options = {}, int variant = 0);

namespace detail {
// Defined by the CUDA backend (src/cuda/spmm_operator.cu); without it, throws Unsupported.
template <class Value, class Index>
std::unique_ptr<SpmmOperator<Value, Index>> make_cuda_spmm_operator(const CsrMatrix<Value, Index>& a, Operation op,
                                                                    SpmmKernel kernel, const Options& options,
                                                                    int variant);
}  // namespace detail

}  // namespace spmv
