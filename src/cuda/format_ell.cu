// SPMV_PLACEHOLDER: replaced by the file's owner; throws until then.
#include "cuda/algorithms.cuh"
namespace spmv::cuda {
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_ell(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_ell: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_ell)
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_ellr(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_ellr: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_ellr)
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_ellr_vector(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_ellr_vector: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_ellr_vector)
}  // namespace spmv::cuda
