// SPMV_PLACEHOLDER: replaced by the file's owner; throws until then.
#include "cuda/algorithms.cuh"
namespace spmv::cuda {
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hola(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_hola: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_hola)
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hola_buffered(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_hola_buffered: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_hola_buffered)
}  // namespace spmv::cuda
