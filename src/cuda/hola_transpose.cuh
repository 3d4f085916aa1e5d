#pragma once
// Hola-SpMVT (op = Transpose), defined in hola_transpose.cu; make_hola and make_hola_buffered
// (hola.cu) forward to it.
#include "cuda/algorithms.cuh"

namespace spmv::cuda::hola {

// buffered = false: Alg. 7 with direct atomics (Algorithm::Hola); true: updates to one column are
// combined in shared memory per block first (Algorithm::HolaBuffered).
template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hola_transpose(const CsrView<Value, Index>& matrix, const Options& options,
                                               bool buffered);

}  // namespace spmv::cuda::hola
