#pragma once
// Private: the device pieces the semiring product's format files share (semiring_ell.cu, semiring_hyb.cu,
// semiring_coo.cu, semiring_dia.cu): the launch policy, the ELL walk (ELL, ELL-R and HYB's ELL part), the
// reduction of COO's runs of equal rows (COO and HYB's COO part), and the factories' dispatch on the semiring.
#include <cuda_runtime.h>

#include <memory>

#include "core/semiring_ops.hpp"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_coo.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda::semiring_format {

// Launch policy: the SpMV formats' 256 threads a block (format_ell.cu's EllPolicy, format_coo.cu's CooPolicy,
// format_dia.cu's DiaPolicy: first values, not tuned for the semirings, which have not been timed on a GPU).
inline constexpr int kThreads = 256;

// One thread per row over a group-1 ELL: format_ell.cuh's ell_kernel with the semiring's ops (strided_row_fold,
// kSlotUnroll slots in flight). kStopAtLength (ELL-R): the row stops at its length; otherwise every slot is
// walked and padding (column -1) skipped by its column, never folded as 0 ⊗ x_j. A row's entries are folded in
// storage order in one chain from the semiring's zero, so an empty row gives the zero.
template <bool kStopAtLength, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kThreads)
    semiring_ell_kernel(Index rows, Index width, const Index* __restrict__ col_idx, const Value* __restrict__ values,
                        const Index* __restrict__ row_length, const Value* __restrict__ x, Value* __restrict__ y) {
  for (long long i = format::global_thread(); i < rows; i += format::grid_threads()) {
    const auto r = static_cast<Index>(i);
    const Index count = kStopAtLength ? format::load_stream(row_length + r) : width;
    y[r] = format::strided_row_fold<!kStopAtLength, Ops>(col_idx, values, r, rows, count, x);
  }
}

// y = A_ell ⊕.⊗ x for every row; row_length != nullptr selects ELL-R's walk.
template <class Ops, class Value, class Index>
void launch_ell(const format::EllStorage<Value, Index>& ell, const Index* row_length, const Value* x, Value* y,
                cudaStream_t stream) {
  const unsigned grid = grid_for(ell.rows, kThreads);
  if (row_length) {
    semiring_ell_kernel<true, Ops><<<grid, kThreads, 0, stream>>>(ell.rows, ell.width, ell.col_idx.data(),
                                                                  ell.values.data(), row_length, x, y);
    SPMV_CHECK_LAUNCH("semiring_ell_kernel<stop at length>");
  } else {
    semiring_ell_kernel<false, Ops><<<grid, kThreads, 0, stream>>>(ell.rows, ell.width, ell.col_idx.data(),
                                                                   ell.values.data(), row_length, x, y);
    SPMV_CHECK_LAUNCH("semiring_ell_kernel");
  }
}

// The semiring's add as CUB's reduction operator.
template <class Ops>
struct SemiringAdd {
  template <class Value>
  __device__ Value operator()(Value a, Value b) const {
    return Ops::add(a, b);
  }
};

// i < runs: row_list[i] holds entries and run[i] is their ⊕. CUB's reduction of a run starts from the run's
// first term, not from the semiring's zero (a run of min-plus's NaN terms reduces to NaN, where the definition,
// which ignores NaN, gives the zero), so run[i] is ⊕-added to the zero, or, kAccumulate (HYB), to y[row], which
// already holds the row's ELL part folded from the zero. runs <= i < runs + empty (COO): rows without entries get
// the zero.
template <bool kAccumulate, class Ops, class Value, class Index>
__global__ void __launch_bounds__(kThreads)
    coo_fold_kernel(const Index* __restrict__ row_list, const Value* __restrict__ run, Index runs, Index empty,
                    Value* __restrict__ y) {
  const long long total = static_cast<long long>(runs) + empty;
  for (long long i = format::global_thread(); i < total; i += format::grid_threads()) {
    const Index row = row_list[i];
    if (kAccumulate)
      y[row] = Ops::add(y[row], run[i]);
    else
      y[row] = i < runs ? Ops::add(Ops::zero(), run[i]) : Ops::zero();
  }
}

// COO's product over the semiring: cub::DeviceReduce::ReduceByKey over the entries, sorted by row, with ⊗ making the
// terms on the fly and ⊕ reducing each run of equal rows (format_coo.cuh's CooRuns, the SpMV COO's segmented
// reduction), then coo_fold_kernel writes each row once. No atomics, but plus-times is not bitwise reproducible:
// ReduceByKey's decoupled look-back combines a run's tile prefixes in an order set by timing (CUB issue #471; seen on
// an H200, rmat 15, 2026-11-30), so its last bits may vary; min, max and or-and are exact in any order. The per-run
// results and CUB's scratch are a workspace (the plan orders products over streams). Views of the arrays and the row
// list: the caller owns them. accumulate (HYB): ⊕-add into y's rows, which hold the ELL part.
template <class Ops, class Value, class Index>
class CooFold {
 public:
  CooFold() = default;
  CooFold(const Index* row_idx, const Index* col_idx, const Value* values, Index nnz, const Index* row_list,
          Index runs, Index empty, bool accumulate)
      : runs_(row_idx, col_idx, values, nnz, row_list, runs, empty), accumulate_(accumulate) {}

  void apply(const Value* x, Value* y, cudaStream_t stream) {
    runs_.reduce(x, stream);
    const Index runs = runs_.runs(), empty = runs_.empty();
    const unsigned grid = grid_for(static_cast<std::int64_t>(runs) + empty, kThreads);
    const auto fold =
        accumulate_ ? coo_fold_kernel<true, Ops, Value, Index> : coo_fold_kernel<false, Ops, Value, Index>;
    fold<<<grid, kThreads, 0, stream>>>(runs_.row_list(), runs_.sums(), runs, empty, y);
    SPMV_CHECK_LAUNCH("coo_fold_kernel");
  }
  std::size_t bytes() const { return runs_.bytes(); }
  Index runs() const { return runs_.runs(); }

 private:
  format::CooRuns<Value, Index, Ops, SemiringAdd<Ops>> runs_;
  bool accumulate_ = false;
};

}  // namespace spmv::cuda::semiring_format
