// SPMV_PLACEHOLDER: replaced by the file's owner; throws until then.
#include "cuda/algorithms.cuh"
namespace spmv::cuda {
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_lightspmv(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_lightspmv: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_lightspmv)
}  // namespace spmv::cuda
