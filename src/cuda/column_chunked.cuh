#pragma once
// Algorithm::ColumnChunked on the CUDA backend (src/cuda/column_chunked.cu): one CSR block per chunk of
// `span` columns, converted on the device; Auto takes it with the expected-applies hint when x exceeds L2
// and the blocks win a race against the whole matrix (dispatch.cu).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda/algorithm_base.cuh"
#include "spmv/cuda/device_buffer.hpp"

namespace spmv::cuda {

// A span is raised until the columns make at most this many chunks (each chunk is a plan and a pass over
// the rows; the rule asks for a few dozen at most). Chunk numbers are 16-bit sort keys.
inline constexpr std::int64_t kMaxColumnChunks = std::int64_t(1) << 10;

template <class Value, class Index>
class ColumnChunkedAlgorithm : public CudaAlgorithm<Value, Index> {
 public:
  virtual Index span() const = 0;  // columns per chunk, as used
};

// The span a plan uses for `requested` columns per chunk (Options::column_span; 0 or less: the cost model,
// detail::column_span_for with the device's L2), clamped to [cols / kMaxColumnChunks, cols]: the SpMV's and the
// semiring product's one rule.
template <class Value, class Index>
Index column_span_of(const CsrView<Value, Index>& matrix, std::int64_t requested);

// The blocks' arrays, converted on the device (column_chunked.cu has the conversion): chunk k's block holds the
// rows of A and the `span` columns from k * span (the last chunk fewer), renumbered from 0; its row offsets from 0
// at offsets[k * (rows + 1)], its entries at [firsts[k], firsts[k + 1]) of col_idx and values, each row's in its
// input order. Shared by the SpMV (ColumnChunked) and the semiring product (semiring_column_chunked.cu).
template <class Value, class Index>
struct ColumnChunks {
  Index rows = 0, cols = 0, span = 0;
  std::int64_t chunks = 0;
  DeviceBuffer<Index> col_idx;
  DeviceBuffer<Value> values;
  DeviceBuffer<Index> offsets;  // chunks x (rows + 1)
  std::vector<Index> firsts;    // chunks + 1 (the last nnz)

  Index first_column(std::int64_t k) const { return static_cast<Index>(k * span); }
  CsrView<Value, Index> block(std::int64_t k) const {
    const Index first = first_column(k);
    const Index width = static_cast<Index>(std::min<std::int64_t>(span, std::int64_t(cols) - first));
    const Index begin = firsts[k];
    return {rows, width, firsts[k + 1] - begin, offsets.data() + k * (std::int64_t(rows) + 1), col_idx.data() + begin,
            values.data() + begin};
  }
  std::size_t bytes() const { return col_idx.bytes() + values.bytes() + offsets.bytes(); }
};

// Converts `matrix` (rows and entries) into chunks of `span` columns (a span column_span_of gave) on `stream`, and
// synchronises it. Refuses (require_device_memory) when the blocks and their conversion exceed the free memory.
template <class Value, class Index>
ColumnChunks<Value, Index> chunk_columns(const CsrView<Value, Index>& matrix, Index span, cudaStream_t stream);

// The blocks for chunks of `span` columns (clamped to [cols / kMaxColumnChunks, cols]); each block served
// by an Auto plan of its own with `options` (column_span cleared).
template <class Value, class Index>
std::unique_ptr<ColumnChunkedAlgorithm<Value, Index>> make_column_chunked_span(const CsrView<Value, Index>& matrix,
                                                                                std::int64_t span, Operation op,
                                                                                const Options& options,
                                                                                cudaStream_t stream);

// Auto's step for A x with Options::expected_applies (dispatch.cu): where detail::column_chunks_may_pay and the
// blocks fit half the free device memory, builds them and times a few products of each against `whole`
// (the plan Auto built for the whole matrix); returns the blocks when the time they save over the
// expected applies exceeds their measured setup, else null (the reason logged under SPMV_DEBUG_LOG).
// The current device's L2 size in bytes (the chunks' span rule reads it).
int l2_cache_bytes();

template <class Value, class Index>
AlgorithmPtr<Value, Index> race_column_chunked(const CsrView<Value, Index>& matrix, CudaAlgorithm<Value, Index>& whole,
                                               const Options& options, cudaStream_t stream);

}  // namespace spmv::cuda
