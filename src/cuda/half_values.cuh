#pragma once
// Options::values on the CUDA backend: a float plan whose matrix values are kept as fp16 or bfloat16
// (include/spmv/value_storage.hpp). Called by the Plan (dispatch.cu) instead of its own table.
#include <span>

#include "cuda/algorithm_base.cuh"

namespace spmv::cuda {

// The algorithms that serve half-precision values: for A x every CSR kernel whose loads are written for
// any value width and the sliced format SELL-C-sigma; for A^T x csr-vector's atomic scatter.
std::span<const Algorithm> half_value_algorithms();

// Throws Unsupported, naming what is offered, for what half-precision values cannot serve:
// Options::reorder, algorithms outside half_value_algorithms(), A^T x other than by csr-vector (Auto is
// always fine).
void check_half_values(Algorithm algorithm, Operation op, const Options& options);

// Rounds the values of `matrix` once to options.values on the device (round to nearest even) and
// builds `algorithm` on the copy (Auto: the CSR rule of src/core/auto_rule.hpp). The result owns the
// copy, reports it in extra_bytes and says `values=f16|bf16` in its policy. Call after
// check_half_values (the plan does, for empty matrices too); throws with Options::deterministic for an
// algorithm that is not reproducible.
// `chosen` receives the algorithm built (Auto resolved).
AlgorithmPtr<float, std::int32_t> make_half_values(const CsrView<float, std::int32_t>& matrix, Algorithm algorithm,
                                                   Operation op, const Options& options, cudaStream_t stream,
                                                   Algorithm* chosen);

}  // namespace spmv::cuda
