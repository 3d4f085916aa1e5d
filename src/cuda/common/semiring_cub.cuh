#pragma once
// CUB's warp and block reductions and scans with a semiring's add (core/semiring_ops.hpp), for the kernels written
// once for the SpMV and the semiring product (pcsr.cuh, hola_spmv.cuh, segmented_sum.cuh). For plus-times the
// calls stay CUB's own (Sum, cuda::std::plus), so the SpMV's generated code does not change with the template; the
// other semirings pass Ops::add as the reduction operator. Every value these kernels reduce is a fold from the
// semiring's zero, never NaN for min and max (min_ignoring_nan keeps its non-NaN operand), so starting CUB's
// reductions from the first value and not from the zero gives the same result.
#include <cuda/std/functional>

#include <type_traits>

#include "core/semiring_ops.hpp"

namespace spmv::cuda {

template <class Ops>
struct IsPlusTimes : std::false_type {};
template <class Value>
struct IsPlusTimes<semiring_ops::PlusTimes<Value>> : std::true_type {};
template <class Ops>
inline constexpr bool kIsPlusTimes = IsPlusTimes<Ops>::value;

// The semiring's add as a CUB reduction operator.
template <class Ops>
struct OpsAdd {
  template <class Value>
  __device__ __forceinline__ Value operator()(const Value& a, const Value& b) const {
    return Ops::add(a, b);
  }
};

// The operator CUB is given: cuda::std::plus for plus-times (what the SpMV kernels always passed), else Ops::add.
template <class Ops>
using CubAdd = std::conditional_t<kIsPlusTimes<Ops>, ::cuda::std::plus<>, OpsAdd<Ops>>;

// reducer.Sum(v) for plus-times, reducer.Reduce(v, Ops::add) otherwise (cub::WarpReduce, cub::BlockReduce).
template <class Ops, class Reducer, class Value>
__device__ __forceinline__ Value cub_sum(Reducer&& reducer, Value v) {
  if constexpr (kIsPlusTimes<Ops>)
    return reducer.Sum(v);
  else
    return reducer.Reduce(v, OpsAdd<Ops>{});
}

}  // namespace spmv::cuda
