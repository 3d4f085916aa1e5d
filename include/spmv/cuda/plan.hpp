#pragma once
// The CUDA-native API: a CSR matrix on the device (owned, or a view of someone else's arrays, e.g.
// CuPy's) and a Plan bound to it. The plan does all preprocessing and allocation at construction;
// apply() allocates nothing and only enqueues work on the given stream, so it can be captured in a
// CUDA graph. The matrix arrays must outlive the plan.
//
// Streams and threads: one plan may be applied from any number of host threads and streams at once,
// and every product is right. Algorithms whose products write a workspace of the plan (merge-path,
// PCSR, LightSpMV, COO, HYB with a COO part, CSR-vector with split long rows, the cuSPARSE
// baselines) chain their products on the device: after each product the plan records an event on
// its stream, and a product on another stream first waits for it. Those products therefore run one
// after another, whatever the streams; build one plan per stream where they must overlap. All other
// algorithms write only y and run concurrently. A single stream pays one event record per product
// and never waits. docs/ARCHITECTURE.md ("Streams and threads") gives the reasons.
//
// Graphs: a product captured into a CUDA graph uses the plan's workspace when the graph is launched.
// Launch such a graph on the capturing stream, or order its launches yourself (events, or one
// stream) against other launches of it and against apply() calls of the same plan on other
// streams; a plan built for the graph alone needs nothing.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/operator.hpp"

namespace spmv::cuda {

// Non-owning view of device CSR arrays.
template <class Value, class Index>
struct CsrView {
  Index rows = 0;
  Index cols = 0;
  Index nnz = 0;
  const Index* row_ptr = nullptr;  // rows + 1
  const Index* col_idx = nullptr;  // nnz
  const Value* values = nullptr;   // nnz
};

// Owning device copy of a host CSR matrix.
template <class Value, class Index>
class DeviceCsr {
 public:
  DeviceCsr() = default;
  // Validates, then uploads; on failure (e.g. out of memory) nothing stays allocated.
  explicit DeviceCsr(const CsrMatrix<Value, Index>& host, cudaStream_t stream = nullptr);

  CsrView<Value, Index> view() const {
    return {rows_, cols_, nnz_, row_ptr_.data(), col_idx_.data(), values_.data()};
  }
  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Index nnz() const { return nnz_; }
  std::size_t bytes() const { return row_ptr_.bytes() + col_idx_.bytes() + values_.bytes(); }

 private:
  Index rows_ = 0, cols_ = 0, nnz_ = 0;
  DeviceBuffer<Index> row_ptr_;
  DeviceBuffer<Index> col_idx_;
  DeviceBuffer<Value> values_;
};

template <class Value, class Index>
class Plan {
 public:
  // Resolves Auto, runs the algorithm's preprocessing on `stream` (timed, see setup_ms) and sizes its
  // workspace. Throws Unsupported when the algorithm does not offer `op` or refuses the matrix.
  // Options::values (f16 / bf16, float plans with 32-bit indices) rounds the values once into a half-
  // precision copy the plan owns (counted in extra_bytes) and runs the algorithms that offer it
  // (docs/ALGORITHMS.md "Half-precision values"); the view's float values are not read after setup.
  // Set SPMV_DEBUG_LOG=1 in the environment to print the chosen algorithm and policy to stderr.
  Plan(CsrView<Value, Index> matrix, Algorithm algorithm = Algorithm::Auto,
       Operation op = Operation::NonTranspose, const Options& options = {}, cudaStream_t stream = nullptr);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  // y = alpha * op(A) * x + beta * y on device arrays; x has op(A).cols entries, y op(A).rows. When
  // beta == 0, y is not read (it may hold NaN). When alpha == 0, neither A nor x is read (x may be
  // null or hold NaN/Inf): y = beta * y (BLAS). Allocates nothing; asynchronous on `stream`; safe on
  // several streams and threads at once (see the top of this file).
  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream = nullptr);

  Algorithm algorithm() const;
  Operation operation() const;
  std::string policy() const;
  double setup_ms() const;          // preprocessing time (device work timed with events)
  std::size_t extra_bytes() const;  // device memory held by the plan beyond the matrix and vectors
  bool reproducible() const;        // every product gives the same bits, run to run (Options::deterministic)
  Index x_size() const;             // op(A).cols
  Index y_size() const;             // op(A).rows

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The rule Algorithm::Auto applies before any conversion (documented in docs/ALGORITHMS.md); exposed
// for tests and logs. expected_applies: Options::expected_applies; transpose_copy_fits: whether a
// second copy of the matrix (the explicit transpose) fits the free device memory with room to spare;
// empty_rows: rows without nonzeros.
Algorithm choose_algorithm(double row_mean, double row_std, std::int64_t row_max, std::int64_t rows,
                           std::int64_t nnz, Operation op, std::int64_t expected_applies = 0,
                           bool transpose_copy_fits = true, std::int64_t empty_rows = 0);

}  // namespace spmv::cuda
