#pragma once
// Every CUDA algorithm's factory; each is defined (and explicitly instantiated for float/double x
// int32_t/int64_t) in the file named beside it. dispatch.cu maps Algorithm -> factory.
#include "core/auto_rule.hpp"
#include "cuda/algorithm_base.cuh"

namespace spmv::cuda {

// Factories of the algorithms that also serve half-precision storage (Options::values) are templated
// on the stored value type and return an algorithm of its compute type.
#define SPMV_DECLARE_STORED_FACTORY(name)                                                                  \
  template <class Value, class Index>                                                                      \
  AlgorithmPtr<compute_t<Value>, Index> name(const CsrView<Value, Index>& matrix, Operation op,             \
                                             const Options& options, cudaStream_t stream);

#define SPMV_DECLARE_FACTORY(name)                                                                         \
  template <class Value, class Index>                                                                      \
  AlgorithmPtr<Value, Index> name(const CsrView<Value, Index>& matrix, Operation op, const Options& options, \
                                  cudaStream_t stream);

SPMV_DECLARE_STORED_FACTORY(make_csr_scalar)     // csr_scalar.cu
SPMV_DECLARE_STORED_FACTORY(make_csr_vector)     // csr_vector.cu
SPMV_DECLARE_STORED_FACTORY(make_csr_coop)       // csr_coop.cu
SPMV_DECLARE_STORED_FACTORY(make_csr_adaptive)   // csr_adaptive.cu
SPMV_DECLARE_STORED_FACTORY(make_pcsr)           // pcsr.cu
SPMV_DECLARE_STORED_FACTORY(make_lightspmv)      // lightspmv.cu
SPMV_DECLARE_STORED_FACTORY(make_merge_path)     // merge_path.cu
SPMV_DECLARE_STORED_FACTORY(make_hola)           // hola.cu (also Hola-SpMVT for op = Transpose)
SPMV_DECLARE_FACTORY(make_hola_buffered)         // hola.cu (buffered Hola-SpMVT)
SPMV_DECLARE_FACTORY(make_segmented_sum)         // segmented_sum.cu
SPMV_DECLARE_FACTORY(make_transpose_atomic)      // transpose_atomic.cu
SPMV_DECLARE_FACTORY(make_explicit_transpose)    // explicit_transpose.cu
SPMV_DECLARE_FACTORY(make_symmetric)             // symmetric.cu
SPMV_DECLARE_FACTORY(make_coo)                   // format_coo.cu
SPMV_DECLARE_FACTORY(make_ell)                   // format_ell.cu
SPMV_DECLARE_FACTORY(make_ellr)                  // format_ell.cu
SPMV_DECLARE_FACTORY(make_ellr_vector)           // format_ell.cu
SPMV_DECLARE_FACTORY(make_dia)                   // format_dia.cu
SPMV_DECLARE_FACTORY(make_hyb)                   // format_hyb.cu
SPMV_DECLARE_STORED_FACTORY(make_sell)           // format_sell.cu
SPMV_DECLARE_FACTORY(make_compressed_csr)        // format_compressed_csr.cu
SPMV_DECLARE_FACTORY(make_column_chunked)        // column_chunked.cu (Options::column_span; 0: the cost model)
SPMV_DECLARE_FACTORY(make_cusparse_csr_alg1)     // cusparse_baseline.cu
SPMV_DECLARE_FACTORY(make_cusparse_csr_alg2)     // cusparse_baseline.cu
SPMV_DECLARE_FACTORY(make_cusparse_coo_alg1)     // cusparse_baseline.cu

#undef SPMV_DECLARE_FACTORY
#undef SPMV_DECLARE_STORED_FACTORY

// Explicit instantiation of one factory for the four supported type pairs.
#define SPMV_INSTANTIATE_FACTORY(name)                                                                      \
  template AlgorithmPtr<float, std::int32_t> name(const CsrView<float, std::int32_t>&, Operation,         \
                                                  const Options&, cudaStream_t);                           \
  template AlgorithmPtr<float, std::int64_t> name(const CsrView<float, std::int64_t>&, Operation,         \
                                                  const Options&, cudaStream_t);                           \
  template AlgorithmPtr<double, std::int32_t> name(const CsrView<double, std::int32_t>&, Operation,       \
                                                   const Options&, cudaStream_t);                          \
  template AlgorithmPtr<double, std::int64_t> name(const CsrView<double, std::int64_t>&, Operation,       \
                                                   const Options&, cudaStream_t);

// The half-precision instantiations of a stored-value factory: fp16 and bfloat16 values with 32-bit
// indices (a bounded set: half storage is offered with 32-bit indices only).
#define SPMV_INSTANTIATE_HALF_FACTORY(name)                                                                 \
  template AlgorithmPtr<float, std::int32_t> name(const CsrView<__half, std::int32_t>&, Operation,         \
                                                  const Options&, cudaStream_t);                           \
  template AlgorithmPtr<float, std::int32_t> name(const CsrView<__nv_bfloat16, std::int32_t>&, Operation,  \
                                                  const Options&, cudaStream_t);

// Facts of the Auto rule that the tuner (tuned_plan.cu) needs, defined in dispatch.cu beside the rule.
// Whether Auto tries DIA for this operation, shape and hint (and so a CSR choice means DIA refused).
bool auto_tries_dia(Operation op, const detail::RowShape& shape, int value_bytes, std::int64_t expected_applies);
// Whether Auto's A x plan with this hint tries something its plan without the hint does not (a conversion or
// column chunks): ConvertingPlanOperator builds a plan only then.
bool auto_hint_may_convert(const detail::RowShape& shape, int value_bytes, std::int64_t expected_applies);
// Whether the explicit transpose's copy and build scratch fit the device memory share Auto allows.
template <class Value, class Index>
bool explicit_transpose_fits(const CsrView<Value, Index>& a);

}  // namespace spmv::cuda
