// ELLPACK family, converted from the device CSR at plan time:
//  - ELL (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
//    processors", SC'09, ELLPACK format): every row padded to the longest, column-major, one thread per
//    row walking all slots.
//  - ELLPACK-R (Vázquez, Fernández & Garzón, "A new approach for sparse matrix vector product on NVIDIA
//    GPUs", Concurrency Computat.: Pract. Exper. 23(8), 2011): ELL plus each row's length, so a thread
//    stops at its row's end instead of loading padding.
//  - ELLR-T (Vázquez, Fernández & Garzón, "Automatic tuning of the sparse matrix vector product on GPUs
//    based on the ELLR-T approach", Parallel Computing 38, 2012): T threads per row, each taking every
//    T-th slot, then a shuffle reduction (its policy, layout and row walk in ellr_vector.cuh, shared with the
//    semiring product).
// All three refuse (spmv::Unsupported, before allocating) when rows * width exceeds the padding rule.
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/row_output.cuh"
#include "cuda/ellr_vector.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv::cuda {
namespace {

using format::EllStorage;

// Launch policies (tuning as data). Thread-per-row kernels: 256 threads per block, a first value to be
// tuned on the H100/H200 (the benchmark sweeps Options.block_size 32..1024).
struct EllPolicy {
  int block_size;
};
constexpr EllPolicy ell_policy(int /*value_bytes*/) { return {256}; }

template <class Value, class Index>
class Ell final : public CudaAlgorithm<Value, Index> {
 public:
  // stop_at_length: ELLPACK-R (keeps the row lengths), else plain ELL.
  Ell(const CsrView<Value, Index>& a, bool stop_at_length, const Options& options, cudaStream_t stream)
      : block_(format::resolve_block_size(options.block_size, ell_policy(sizeof(Value)).block_size,
                                          stop_at_length ? "ellr" : "ell")),
        stop_at_length_(stop_at_length) {
    const Index width = format::checked_ell_width(a, stop_at_length ? "ELL-R" : "ELL", Index(1), options, stream);
    ell_ = format::build_ell(a, width, 1, stream);
    if (stop_at_length) row_length_ = format::row_lengths(a.row_ptr, a.rows, stream);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    format::launch_ell_product(ell_, stop_at_length_ ? row_length_.data() : nullptr, block_, alpha, x, beta, y,
                               stream);
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " width=" + std::to_string(ell_.width) +
           " unroll=" + std::to_string(format::kSlotUnroll) + (stop_at_length_ ? " stop=row_length" : " stop=width");
  }
  std::size_t extra_bytes() const override { return ell_.bytes() + row_length_.bytes(); }

 private:
  int block_;
  bool stop_at_length_;
  EllStorage<Value, Index> ell_;
  DeviceBuffer<Index> row_length_;
};

// ELLR-T: T threads per row, the row walk of ellr_vector.cuh (shared with the semiring product's
// semiring_ellr_vector.cu) with plus-times and the SpMV's epilogue. alpha and beta stay two scalars of the
// kernel (row_output.cuh says why).
template <int T, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    ellr_vector_kernel(Index rows, const Index* __restrict__ col_idx, const Value* __restrict__ values,
                       const Index* __restrict__ row_length, Value alpha, const Value* __restrict__ x, Value beta,
                       Value* __restrict__ y) {
  ellr_vector::rows<T, semiring_ops::PlusTimes<Value>>(rows, col_idx, values, row_length, x, y,
                                                       ScaledRow<Value>{alpha, beta});
}

template <class Value, class Index>
class EllRVector final : public CudaAlgorithm<Value, Index> {
 public:
  EllRVector(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : layout_(a, options, stream) {}

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    ellr_vector::with_threads_per_row(layout_.threads_per_row, [&](auto t) {
      constexpr int T = decltype(t)::value;
      ellr_vector_kernel<T><<<layout_.grid(T), layout_.block, 0, stream>>>(
          layout_.ell.rows, layout_.ell.col_idx.data(), layout_.ell.values.data(), layout_.row_length.data(), alpha,
          x, beta, y);
      SPMV_CHECK_LAUNCH("ellr_vector_kernel");
    });
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override { return layout_.policy(); }
  std::size_t extra_bytes() const override { return layout_.bytes(); }

 private:
  ellr_vector::Layout<Value, Index> layout_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_ell(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                    cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Ell, op);
  return std::make_unique<Ell<Value, Index>>(matrix, false, options, stream);
}

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_ellr(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                     cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::EllR, op);
  return std::make_unique<Ell<Value, Index>>(matrix, true, options, stream);
}

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_ellr_vector(const CsrView<Value, Index>& matrix, Operation op,
                                            const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::EllRVector, op);
  return std::make_unique<EllRVector<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_ell)
SPMV_INSTANTIATE_FACTORY(make_ellr)
SPMV_INSTANTIATE_FACTORY(make_ellr_vector)

}  // namespace spmv::cuda
