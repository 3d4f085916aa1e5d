// SPMV_PLACEHOLDER: replaced by the file's owner; throws until then.
#include "cuda/algorithms.cuh"
namespace spmv::cuda {
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_csr_coop(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_csr_coop: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_csr_coop)
}  // namespace spmv::cuda
