#pragma once
// What a kernel written once for the SpMV and the semiring product writes into y.
//  - For a finished row alone (csr_scalar.cuh, csr_coop.cuh, lightspmv.cuh, csr_adaptive.cuh): the SpMV's
//    y = alpha * sum + beta * y, y unread when beta == 0 (ScaledRow), or the semiring product's y = the row's ⊕-sum,
//    no alpha or beta (PlainRow).
//  - For a finished row and a carry into a row that another tile or block finished (merge-path's, segmented-sum's),
//    and y ⊕= v as one atomic step: ScaledRows and SemiringRows, atomic_add. Written for merge-path (merge_path.cuh)
//    and shared with PCSR, Hola and segmented-sum (pcsr.cuh, hola_spmv.cuh, segmented_sum.cuh), whose kernels take
//    RowOutput<Ops> from two scalars (row_output below).
#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

#include "core/semiring_ops.hpp"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/semiring_cub.cuh"

namespace spmv::cuda {

template <class Real>
struct ScaledRow {
  Real alpha, beta;
  template <class Index>
  __device__ __forceinline__ void operator()(Real* y, Index row, Real sum) const {
    y[row] = axpby(alpha, sum, beta, y, row);
  }
};

template <class Real>
struct PlainRow {
  template <class Index>
  __device__ __forceinline__ void operator()(Real* y, Index row, Real sum) const {
    y[row] = sum;
  }
};

// The SpMV's rows: y = alpha * sum + beta * y; a carry into a row finished by a later tile adds
// alpha * carry (atomically: several tiles may carry into one long row).
template <class Real>
struct ScaledRows {
  Real alpha, beta;
  template <class Index>
  __device__ __forceinline__ void row(Real* y, Index r, Real sum) const {
    y[r] = axpby(alpha, sum, beta, y, r);  // beta applied here, once: the tile finishing the row
  }
  template <class Index>
  __device__ __forceinline__ void carry(Real* y, Index r, Real sum) const {
    if (sum != Real(0)) atomicAdd(y + r, alpha * sum);
  }
};

// y = y ⊕ v as one atomic step: atomicAdd for plus, else a compare-and-swap loop on the bits (min,
// max and or have no floating-point atomics). Global or shared memory. Exact for min, max and or in any
// order of the steps (they are associative, commutative and round nothing), so the result does not
// depend on timing, a zero's sign aside (max(+0, -0) keeps its first operand).
template <class Ops, class Real>
__device__ __forceinline__ void atomic_add(Real* p, Real v) {
  if constexpr (std::is_same_v<Ops, semiring_ops::PlusTimes<Real>>) {
    atomicAdd(p, v);
  } else {
    using Bits = std::conditional_t<sizeof(Real) == 8, unsigned long long, unsigned int>;
    static_assert(sizeof(Bits) == sizeof(Real));
    auto* word = reinterpret_cast<Bits*>(p);
    Bits seen = *reinterpret_cast<volatile Bits*>(word);
    for (;;) {
      Real now;
      memcpy(&now, &seen, sizeof now);
      const Real next = Ops::add(now, v);
      Bits want;
      memcpy(&want, &next, sizeof want);
      if (want == seen) return;
      const Bits before = atomicCAS(word, seen, want);
      if (before == seen) return;
      seen = before;
    }
  }
}

// The semiring plan's rows: y = the row's ⊕-sum (no alpha, no beta); a carry is ⊕-added.
template <class Ops, class Real>
struct SemiringRows {
  template <class Index>
  __device__ __forceinline__ void row(Real* y, Index r, Real sum) const {
    y[r] = sum;
  }
  template <class Index>
  __device__ __forceinline__ void carry(Real* y, Index r, Real sum) const {
    if (sum != Ops::zero()) atomic_add<Ops>(y + r, sum);
  }
};

// The rows of a kernel templated on the semiring alone (PCSR, Hola, segmented-sum), made from the two scalars its
// launch passes: plus-times gets the SpMV's epilogue, and the semiring product over plus-times passes alpha = 1 and
// beta = 0 (y = 1 * sum = sum exactly, y unread), so it runs the SpMV's kernels; the other semirings get the ⊕-sum
// (alpha and beta unread). Two scalars rather than the Output struct as the kernels' parameter: a struct parameter
// changed the SpMV's generated code (PCSR's reduce kernel, cuobjdump -sass: NVVM hoisted other loop terms out of
// its tile loop), two scalars keep it as it was.
template <class Ops, class Real>
using RowOutput = std::conditional_t<kIsPlusTimes<Ops>, ScaledRows<Real>, SemiringRows<Ops, Real>>;

template <class Ops, class Real>
__device__ __forceinline__ RowOutput<Ops, Real> row_output(Real alpha, Real beta) {
  if constexpr (kIsPlusTimes<Ops>)
    return {alpha, beta};
  else
    return {};
}

}  // namespace spmv::cuda
