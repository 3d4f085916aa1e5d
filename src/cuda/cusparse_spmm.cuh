#pragma once
// Vendor baseline for SpMM: cusparseSpMM (CSR), wrapped the way cusparse_baseline.cu wraps
// cusparseSpMV: handle and sparse descriptor created once; the dense descriptors, workspace and
// cusparseSpMM_preprocess are (re)made when apply() meets a new shape (k, layout, leading dimensions),
// so the first product of a shape allocates (the bench's warm-up) and later ones only re-point the
// descriptors and call cusparseSpMM.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "spmv/cuda/plan.hpp"
#include "spmv/dense.hpp"

namespace spmv::cuda {

// The cuSPARSE algorithms offered, by index: CUSPARSE_SPMM_ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3.
inline constexpr const char* kCusparseSpmmNames[] = {"cusparse-spmm-default", "cusparse-spmm-csr-alg1",
                                                     "cusparse-spmm-csr-alg2", "cusparse-spmm-csr-alg3"};

template <class Value, class Index>
class CusparseSpmm {
 public:
  CusparseSpmm(CsrView<Value, Index> a, Operation op, int variant);
  ~CusparseSpmm();
  CusparseSpmm(const CusparseSpmm&) = delete;
  CusparseSpmm& operator=(const CusparseSpmm&) = delete;
  // X and Y must share a layout (cuSPARSE's requirement); throws CudaError when cuSPARSE refuses.
  void apply(Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y, cudaStream_t stream);
  std::string name() const;
  std::string policy() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
