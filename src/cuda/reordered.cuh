#pragma once
// Options::reorder on the CUDA backend (src/cuda/reordered.cu): a plan of B = P A P^T behind two
// permutation kernels, x' = P x in and y = P^T y' out, within every product.
#include <memory>

#include "cuda/algorithm_base.cuh"

namespace spmv::cuda {

template <class Value, class Index>
class ReorderedAlgorithm : public CudaAlgorithm<Value, Index> {
 public:
  virtual Algorithm inner_algorithm() const = 0;
};

// Downloads A, computes the order on the host (include/spmv/reorder.hpp), uploads B and builds its
// plan with `algorithm` (Auto resolves on B). Throws Unsupported for Tune; the plan refuses a
// non-square A before calling this.
template <class Value, class Index>
std::unique_ptr<ReorderedAlgorithm<Value, Index>> make_reordered(const CsrView<Value, Index>& matrix,
                                                                 Algorithm algorithm, Operation op,
                                                                 const Options& options, cudaStream_t stream);

}  // namespace spmv::cuda
