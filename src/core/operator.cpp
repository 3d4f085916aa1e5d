#include "spmv/operator.hpp"

#include <cstdint>

#include "spmv/error.hpp"
#include "core/backends.hpp"

namespace spmv {

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_operator(Backend backend, const CsrMatrix<Value, Index>& a,
                                                      Algorithm algorithm, Operation op, const Options& options) {
  if (backend == Backend::Cuda) return make_cuda_operator(a, algorithm, op, options);
  return make_cpu_operator(a, algorithm, op, options);
}

std::span<const Algorithm> backend_algorithms(Backend backend, Operation op) {
  return backend == Backend::Cuda ? detail::cuda_algorithms(op) : detail::cpu_algorithms(op);
}

#ifndef SPMV_HAS_CUDA
// Built without the CUDA backend: say so instead of failing to link.
bool cuda_available() { return false; }
std::span<const Algorithm> detail::cuda_algorithms(Operation) { return {}; }

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_cuda_operator(const CsrMatrix<Value, Index>&, Algorithm, Operation,
                                                           const Options&) {
  throw Unsupported("spmv was built without the CUDA backend (configure with -DSPMV_ENABLE_CUDA=ON)");
}
#define SPMV_INSTANTIATE_CUDA_STUB(V, I)                                                                   \
  template std::unique_ptr<Operator<V, I>> make_cuda_operator(const CsrMatrix<V, I>&, Algorithm, Operation, \
                                                              const Options&);
SPMV_INSTANTIATE_CUDA_STUB(float, std::int32_t)
SPMV_INSTANTIATE_CUDA_STUB(float, std::int64_t)
SPMV_INSTANTIATE_CUDA_STUB(double, std::int32_t)
SPMV_INSTANTIATE_CUDA_STUB(double, std::int64_t)
#endif

#define SPMV_INSTANTIATE_OPERATOR(V, I)                                                                       \
  template std::unique_ptr<Operator<V, I>> make_operator(Backend, const CsrMatrix<V, I>&, Algorithm, Operation, \
                                                         const Options&);
SPMV_INSTANTIATE_OPERATOR(float, std::int32_t)
SPMV_INSTANTIATE_OPERATOR(float, std::int64_t)
SPMV_INSTANTIATE_OPERATOR(double, std::int32_t)
SPMV_INSTANTIATE_OPERATOR(double, std::int64_t)

}  // namespace spmv
