#pragma once
// Algorithm::ColumnChunked on the CUDA backend (src/cuda/column_chunked.cu): one CSR block per chunk of
// `span` columns, converted on the device; Auto takes it with the expected-applies hint when x exceeds L2
// and the blocks win a race against the whole matrix (dispatch.cu).
#include <cstdint>
#include <memory>

#include "cuda/algorithm_base.cuh"

namespace spmv::cuda {

// A span is raised until the columns make at most this many chunks (each chunk is a plan and a pass over
// the rows; the rule asks for a few dozen at most). Chunk numbers are 16-bit sort keys.
inline constexpr std::int64_t kMaxColumnChunks = std::int64_t(1) << 10;

template <class Value, class Index>
class ColumnChunkedAlgorithm : public CudaAlgorithm<Value, Index> {
 public:
  virtual Index span() const = 0;  // columns per chunk, as used
};

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
template <class Value, class Index>
AlgorithmPtr<Value, Index> race_column_chunked(const CsrView<Value, Index>& matrix, CudaAlgorithm<Value, Index>& whole,
                                               const Options& options, cudaStream_t stream);

}  // namespace spmv::cuda
