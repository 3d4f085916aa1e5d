// Options::reorder on the CUDA backend (reordered.cuh). The order is computed on the host once at
// plan construction (part of setup_ms); each product gathers x into the plan's x' (one pass), runs
// B's plan into y' with beta = 0, and scatters y = y' + beta * y (one pass). The two vectors of
// scratch make this a workspace algorithm: products of one plan on several streams are chained.
#include "cuda/reordered.cuh"

#include <string>
#include <vector>

#include "cuda/common/launch.cuh"
#include "spmv/reorder.hpp"

namespace spmv::cuda {
namespace {

template <class Value, class Index>
__global__ void gather_kernel(const Index* order, const Value* x, Value* x_new, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    x_new[i] = x[order[i]];
}

// beta == 0 never reads y (it may hold NaN).
template <class Value, class Index>
__global__ void scatter_kernel(const Index* order, const Value* y_new, Value beta, Value* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const Index old = order[i];
    y[old] = beta == Value(0) ? y_new[i] : y_new[i] + beta * y[old];
  }
}

template <class Value, class Index>
CsrMatrix<Value, Index> download(const CsrView<Value, Index>& m, cudaStream_t stream) {
  CsrMatrix<Value, Index> h;
  h.rows = m.rows;
  h.cols = m.cols;
  h.row_ptr.resize(static_cast<std::size_t>(m.rows) + 1);
  h.col_idx.resize(static_cast<std::size_t>(m.nnz));
  h.values.resize(static_cast<std::size_t>(m.nnz));
  SPMV_CUDA_CHECK(cudaMemcpyAsync(h.row_ptr.data(), m.row_ptr, h.row_ptr.size() * sizeof(Index),
                                  cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaMemcpyAsync(h.col_idx.data(), m.col_idx, h.col_idx.size() * sizeof(Index),
                                  cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaMemcpyAsync(h.values.data(), m.values, h.values.size() * sizeof(Value),
                                  cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

template <class Value, class Index>
class Reordered final : public ReorderedAlgorithm<Value, Index> {
 public:
  Reordered(const CsrMatrix<Value, Index>& b, const std::vector<Index>& order, Reorder how, Algorithm algorithm,
            Operation op, const Options& options, cudaStream_t stream)
      : how_(how), n_(static_cast<std::int64_t>(order.size())), matrix_(b, stream),
        order_(std::span<const Index>(order), stream), x_new_(order.size()), y_new_(order.size()),
        plan_(matrix_.view(), algorithm, op, options, stream) {}

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    const unsigned block = 256;
    const unsigned grid = grid_for(n_, block);
    gather_kernel<<<grid, block, 0, stream>>>(order_.data(), x, x_new_.data(), n_);
    SPMV_CHECK_LAUNCH(gather_kernel);
    plan_.apply(alpha, x_new_.data(), Value(0), y_new_.data(), stream);
    scatter_kernel<<<grid, block, 0, stream>>>(order_.data(), y_new_.data(), beta, y, n_);
    SPMV_CHECK_LAUNCH(scatter_kernel);
  }
  std::string policy() const override { return "reorder=" + std::string(to_string(how_)) + " " + plan_.policy(); }
  std::size_t extra_bytes() const override {
    return matrix_.bytes() + order_.bytes() + x_new_.bytes() + y_new_.bytes() + plan_.extra_bytes();
  }
  Algorithm inner_algorithm() const override { return plan_.algorithm(); }
  bool reproducible() const override { return plan_.reproducible(); }  // the permutations are plain copies

 private:
  Reorder how_;
  std::int64_t n_;
  DeviceCsr<Value, Index> matrix_;
  DeviceBuffer<Index> order_;
  DeviceBuffer<Value> x_new_, y_new_;
  Plan<Value, Index> plan_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<ReorderedAlgorithm<Value, Index>> make_reordered(const CsrView<Value, Index>& matrix,
                                                                 Algorithm algorithm, Operation op,
                                                                 const Options& options, cudaStream_t stream) {
  if (algorithm == Algorithm::Tune)
    throw Unsupported("reorder " + std::string(to_string(options.reorder)) +
                      " is not offered with tune: reorder the matrix with spmv::permute_symmetric and tune that");
  const CsrMatrix<Value, Index> a = download(matrix, stream);
  const std::vector<Index> order = reorder_permutation(a, options.reorder);
  Options inner = options;
  inner.reorder = Reorder::None;
  return std::make_unique<Reordered<Value, Index>>(permute_symmetric(a, order), order, options.reorder, algorithm,
                                                   op, inner, stream);
}

#define SPMV_INSTANTIATE(V, I)                                                                            \
  template std::unique_ptr<ReorderedAlgorithm<V, I>> make_reordered(const CsrView<V, I>&, Algorithm, \
                                                                    Operation, const Options&, cudaStream_t);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::cuda
