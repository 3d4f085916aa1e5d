#pragma once
// SpMM on the GPU: Y = alpha*op(A)*X + beta*Y on device arrays, X and Y dense (include/spmv/dense.hpp)
// with k columns, row-major or column-major, any leading dimension. The CPU twin is
// spmv::cpu::SpmmPlan (include/spmv/spmm.hpp); docs/ALGORITHMS.md "SpMM" describes the kernels.
//
// An SpmmPlan is bound to one device CSR matrix (which must outlive it). Its constructor reads the
// row statistics once (the column-major kernel's sub-warp width); apply() allocates nothing, only
// enqueues kernels on the given stream, and can be captured in a CUDA graph. The plan owns no device
// workspace: every product writes nothing but Y, so one plan may be applied from any number of host
// threads and streams at once (on different Y).
//
// Conventions (SpMV's): X has op(A).cols rows, Y op(A).rows, both k columns. beta == 0 never reads Y
// (it may hold NaN); alpha == 0 reads neither A nor X (NaN/Inf in X never reach Y): Y = beta*Y. k = 0,
// 0 rows, 0 columns and 0 nonzeros are handled before any launch. Wrong sizes, negative sizes,
// leading dimensions below the contiguous extent and null pointers with entries throw InvalidArgument.
// op = Transpose scatters alpha*a_ij*X(i, :) into Y(j, :) with atomics after Y = beta*Y (no second
// copy of A): results are not bit-reproducible run to run (reproducible() says so). Rows longer than
// 1024 nonzeros are cut into chunks added with atomics, in both operations (then op = N is not
// bit-reproducible either; policy() names the split). Row-major X whose rows start on 16-byte
// boundaries runs the vector tiles (SPMV_SPMM_TILE=scalar in the environment turns them off).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "spmv/algorithm.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/dense.hpp"
#include "spmv/operator.hpp"

namespace spmv::cuda {

template <class Value, class Index>
class SpmmPlan {
 public:
  // Knobs read: options.block_size (a multiple of 32, <= 512; 0: the policy) and options.subwarp (the
  // vector tiles' lanes per row, a power of two <= 32, rounded up to a compiled one; 0: from the mean
  // row length).
  explicit SpmmPlan(CsrView<Value, Index> matrix, Operation op = Operation::NonTranspose, const Options& options = {},
                    cudaStream_t stream = nullptr);
  ~SpmmPlan();
  SpmmPlan(SpmmPlan&&) noexcept;
  SpmmPlan& operator=(SpmmPlan&&) noexcept;

  // Asynchronous on `stream`; x and y point to device memory.
  void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y, cudaStream_t stream = nullptr) const;

  Operation operation() const;
  std::int64_t x_rows() const;  // op(A).cols
  std::int64_t y_rows() const;  // op(A).rows
  // The kernel and tile apply() runs for k columns in `layout`, e.g. "row-major lanes=8 cols/lane=1 block=128".
  std::string policy(std::int64_t k, Layout layout) const;
  double setup_ms() const;
  bool reproducible() const;  // op = N without split rows: one sub-warp sums each entry in a fixed order

 private:
  void split_long_rows(cudaStream_t stream);
  bool uses_vector_tiles(const DenseView<const Value>& x) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
