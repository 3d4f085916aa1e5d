#pragma once
// COO product on the device, shared by COO (format_coo.cu) and the COO part of HYB (format_hyb.cu), and
// the plan-time helpers that build row lists and row indices from a device CSR matrix.
//
// The product is a segmented reduction over entries sorted by row (Bell & Garland SC'09, COO format),
// done with cub::DeviceReduce::ReduceByKey: keys are the row indices, values the products
// val[k] * x[col[k]] produced on the fly by a transform iterator, and the output is a compact list of one
// sum per row that holds entries. Rows that hold entries are known at plan time (ascending, exactly the
// order of ReduceByKey's runs), so an epilogue kernel applies alpha / beta to them from a plan-time list,
// and sets y = beta * y on the rows that hold none. No atomics; CUB documents ReduceByKey as run-to-run
// deterministic on one device, so results are bit-identical from call to call.
#include <cuda_runtime.h>

#include <cub/device/device_partition.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstddef>

#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"

namespace spmv::cuda::format {

// --- plan-time helpers -------------------------------------------------------------------------------

template <class Index>
__global__ void mark_row_heads_kernel(const Index* __restrict__ row_ptr, Index rows, Index* __restrict__ row_idx) {
  for (long long i = global_thread(); i < rows; i += grid_threads()) {
    const auto r = static_cast<Index>(i);
    if (row_ptr[r + 1] > row_ptr[r]) row_idx[row_ptr[r]] = r;  // only non-empty rows: heads never collide
  }
}

// row_idx[k] = the row holding entry k (row_idx has nnz entries). Each non-empty row writes its index at
// its first entry, and an inclusive max-scan carries it across the row: O(nnz) and fully parallel, so one
// huge row costs no more than many short ones.
template <class Index>
void expand_row_indices(const Index* row_ptr, Index rows, Index nnz, Index* row_idx, cudaStream_t stream) {
  SPMV_CUDA_CHECK(cudaMemsetAsync(row_idx, 0, static_cast<std::size_t>(nnz) * sizeof(Index), stream));
  mark_row_heads_kernel<<<grid_for(rows, kPlanBlock), kPlanBlock, 0, stream>>>(row_ptr, rows, row_idx);
  SPMV_CHECK_LAUNCH("mark_row_heads_kernel");
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::InclusiveScan(temp, bytes, row_idx, row_idx, ::cuda::maximum<>{}, nnz, stream);
      },
      stream);
}

template <class Index>
struct RowLongerThan {
  const Index* row_ptr;
  Index threshold;
  __device__ bool operator()(Index r) const { return row_ptr[r + 1] - row_ptr[r] > threshold; }
};

// Partitions 0..rows-1: rows holding more than `threshold` entries first (ascending), the others after them
// (in reverse order, which no caller depends on). `out` has `rows` entries.
template <class Index>
std::int64_t partition_rows(const Index* row_ptr, Index rows, Index threshold, Index* out, cudaStream_t stream) {
  DeviceBuffer<Index> selected(1);
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DevicePartition::If(temp, bytes, thrust::counting_iterator<Index>(0), out, selected.data(),
                                        rows, RowLongerThan<Index>{row_ptr, threshold}, stream);
      },
      stream);
  return read_device_value(selected.data(), stream);
}

// --- the product -------------------------------------------------------------------------------------

// Entry k's term a_k ⊗ x[col_k]: Ops a semiring's (core/semiring_ops.hpp), plus-times for the SpMV.
template <class Value, class Index, class Ops = semiring_ops::PlusTimes<Value>>
struct CooEntryProduct {
  const Index* col_idx;
  const Value* values;
  const Value* x;
  __device__ Value operator()(Index k) const {
    return Ops::mul(load_stream(values + k), __ldg(x + load_stream(col_idx + k)));
  }
};

// i < runs: row_list[i] is the i-th row holding entries and sum[i] its sum; y[row] = alpha * sum + beta * y
// (kAccumulate: y[row] += alpha * sum, for HYB, whose ELL kernel already applied beta). runs <= i < runs +
// empty: row_list[i] holds no entry; y[row] = alpha * 0 + beta * y, exactly what CSR gives an empty row.
template <bool kAccumulate, class Value, class Index>
__global__ void __launch_bounds__(kMaxBlockSize)
    coo_epilogue_kernel(const Index* __restrict__ row_list, const Value* __restrict__ sum, Index runs, Index empty,
                        Value alpha, Value beta, Value* __restrict__ y) {
  const long long total = static_cast<long long>(runs) + empty;
  for (long long i = global_thread(); i < total; i += grid_threads()) {
    const Index row = row_list[i];
    const Value s = i < runs ? sum[i] : Value(0);
    if (kAccumulate)
      y[row] += alpha * s;
    else
      y[row] = axpby(alpha, s, beta, y, row);
  }
}

// The segmented reduction both COO products share: views of the entries (sorted by row) and of the row list, and
// sums()[i] = Reduce over the i-th run of equal rows of the terms Ops::mul(a_k, x[col_k]) (cub::DeviceReduce::
// ReduceByKey; its keys are the row indices; CUB documents it as run-to-run deterministic on one device). Ops and
// Reduce: plus-times and + for the SpMV (CooProduct below), a semiring's ⊗ and ⊕ for its product
// (semiring_format_kernels.cuh). Owns the per-run results and CUB's temporary storage, allocated here at plan
// time: reduce() allocates nothing and never synchronises.
template <class Value, class Index, class Ops, class Reduce>
class CooRuns {
 public:
  CooRuns() = default;
  // row_list: the `runs` rows that hold entries (ascending, the runs' order), then `empty` rows that hold none.
  CooRuns(const Index* row_idx, const Index* col_idx, const Value* values, Index nnz, const Index* row_list,
          Index runs, Index empty)
      : row_idx_(row_idx), col_idx_(col_idx), values_(values), nnz_(nnz), row_list_(row_list), runs_(runs),
        empty_(empty), sums_(static_cast<std::size_t>(runs)) {
    SPMV_CUDA_CHECK(call(nullptr, temp_bytes_, nullptr, nullptr));
    temp_ = DeviceBuffer<unsigned char>(temp_bytes_);
  }

  void reduce(const Value* x, cudaStream_t stream) {
    if (runs_ == 0) return;
    std::size_t bytes = temp_bytes_;
    SPMV_CUDA_CHECK(call(temp_.data(), bytes, x, stream));
  }
  const Index* row_list() const { return row_list_; }
  const Value* sums() const { return sums_.data(); }
  Index runs() const { return runs_; }
  Index empty() const { return empty_; }
  std::size_t bytes() const { return sums_.bytes() + temp_.bytes(); }

 private:
  using Products = thrust::transform_iterator<CooEntryProduct<Value, Index, Ops>, thrust::counting_iterator<Index>>;

  // With temp == nullptr only sizes the temporary storage (the same call, hence the same iterator types,
  // at plan time and in reduce).
  cudaError_t call(void* temp, std::size_t& bytes, const Value* x, cudaStream_t stream) {
    const Products products(thrust::counting_iterator<Index>(0),
                            CooEntryProduct<Value, Index, Ops>{col_idx_, values_, x});
    return cub::DeviceReduce::ReduceByKey(temp, bytes, row_idx_, thrust::make_discard_iterator(), products,
                                          sums_.data(), thrust::make_discard_iterator(), Reduce{}, nnz_, stream);
  }

  const Index* row_idx_ = nullptr;
  const Index* col_idx_ = nullptr;
  const Value* values_ = nullptr;
  Index nnz_ = 0;
  const Index* row_list_ = nullptr;
  Index runs_ = 0;
  Index empty_ = 0;
  DeviceBuffer<Value> sums_;
  std::size_t temp_bytes_ = 0;
  DeviceBuffer<unsigned char> temp_;
};

// y = alpha * A_coo * x + beta * y (or y += alpha * A_coo * x when accumulate). Holds views of the COO
// arrays and the row list (owned by the caller, sorted by row) and owns the per-run sums and CUB's
// temporary storage, both allocated here at plan time: apply() allocates nothing and never synchronises.
template <class Value, class Index>
class CooProduct {
 public:
  CooProduct() = default;
  // row_list: the `runs` rows that hold entries (ascending), then `empty` rows that hold none.
  CooProduct(const Index* row_idx, const Index* col_idx, const Value* values, Index nnz, const Index* row_list,
             Index runs, Index empty, bool accumulate, int block)
      : runs_(row_idx, col_idx, values, nnz, row_list, runs, empty), accumulate_(accumulate), block_(block) {}

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) {
    runs_.reduce(x, stream);
    const Index runs = runs_.runs(), empty = runs_.empty();
    const unsigned grid = grid_for(static_cast<std::int64_t>(runs) + empty, block_);
    const Index* rows = runs_.row_list();
    if (accumulate_) {
      coo_epilogue_kernel<true><<<grid, block_, 0, stream>>>(rows, runs_.sums(), runs, empty, alpha, beta, y);
      SPMV_CHECK_LAUNCH("coo_epilogue_kernel<accumulate>");
    } else {
      coo_epilogue_kernel<false><<<grid, block_, 0, stream>>>(rows, runs_.sums(), runs, empty, alpha, beta, y);
      SPMV_CHECK_LAUNCH("coo_epilogue_kernel");
    }
  }

  std::size_t bytes() const { return runs_.bytes(); }
  Index runs() const { return runs_.runs(); }

 private:
  CooRuns<Value, Index, semiring_ops::PlusTimes<Value>, ::cuda::std::plus<>> runs_;
  bool accumulate_ = false;
  int block_ = 256;
};

}  // namespace spmv::cuda::format
