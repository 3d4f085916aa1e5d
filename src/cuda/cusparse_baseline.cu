// SPMV_PLACEHOLDER: replaced by the file's owner; throws until then.
#include "cuda/algorithms.cuh"
namespace spmv::cuda {
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_cusparse_csr_alg1(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_cusparse_csr_alg1: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_cusparse_csr_alg1)
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_cusparse_csr_alg2(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_cusparse_csr_alg2: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_cusparse_csr_alg2)
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_cusparse_coo_alg1(const CsrView<Value, Index>&, Operation, const Options&, cudaStream_t) {
  throw Unsupported("make_cusparse_coo_alg1: not built yet");
}
SPMV_INSTANTIATE_FACTORY(make_cusparse_coo_alg1)
}  // namespace spmv::cuda
