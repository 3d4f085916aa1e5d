// SPMV_PLACEHOLDER: replaced by the file's owner; throws until then.
#include "cuda/algorithms.cuh"
namespace spmv::cuda {
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_transpose_atomic(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_transpose_atomic: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_transpose_atomic)
}  // namespace spmv::cuda
