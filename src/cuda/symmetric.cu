// Symmetric: y = alpha*A^T*x + beta*y on a matrix that equals its transpose, run as A x through A's
// own Auto plan (same options: the expected-applies hint, determinism). No copy of the matrix and no
// atomics, so A^T x costs what A x costs. The plan checks A == A^T once on the device, exactly as
// spmv::symmetry_violation does on the host (square, strictly increasing columns in every row, every
// stored a_ij facing a stored, equal a_ji), and refuses the matrix otherwise, naming the first entry
// that breaks it (docs/algorithms/transpose.md).
#include <optional>
#include <string>

#include "cuda/algorithms.cuh"
#include "core/symmetry_violation.hpp"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

constexpr int kCheckBlock = 256;
constexpr unsigned long long kNone = ~0ull;
using detail::SymmetryBreak;

// Whether nonzero k breaks A == A^T (as spmv::symmetry_violation checks it); its row, and the position
// of its mirror a_ji when one is stored.
template <class Value, class Index>
__device__ SymmetryBreak break_at(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                                  const Value* __restrict__ values, Index rows, Index k, Index* row, Index* mirror) {
  Index lo = 0, hi = rows;  // the last row i with row_ptr[i] <= k: the (non-empty) row holding k
  while (hi - lo > 1) {
    const Index mid = lo + (hi - lo) / 2;
    if (row_ptr[mid] <= k) lo = mid;
    else hi = mid;
  }
  const Index i = lo, j = col_idx[k];
  *row = i;
  if (k > row_ptr[i] && col_idx[k - 1] >= j) return SymmetryBreak::ColumnsNotIncreasing;
  Index first = row_ptr[j], last = row_ptr[j + 1];  // lower bound of i in row j (sorted, or caught there)
  while (first < last) {
    const Index mid = first + (last - first) / 2;
    if (col_idx[mid] < i) first = mid + 1;
    else last = mid;
  }
  if (first == row_ptr[j + 1] || col_idx[first] != i) return SymmetryBreak::MirrorMissing;
  *mirror = first;
  return values[first] == values[k] ? SymmetryBreak::None : SymmetryBreak::MirrorDiffers;
}

// The smallest nonzero that breaks it into *first_break (kNone when none does). Threads past a break
// already found stop, so a matrix that is not symmetric costs little more than a launch.
template <class Value, class Index>
__global__ void find_break_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                                  const Value* __restrict__ values, Index rows, Index nnz,
                                  unsigned long long* first_break) {
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    if (*static_cast<volatile unsigned long long*>(first_break) <= static_cast<unsigned long long>(k)) return;
    Index row = 0, mirror = 0;
    if (break_at(row_ptr, col_idx, values, rows, static_cast<Index>(k), &row, &mirror) != SymmetryBreak::None)
      atomicMin(first_break, static_cast<unsigned long long>(k));
  }
}

struct Break {
  SymmetryBreak why;
  long long row, col, previous;
  double value, mirror;
};

template <class Value, class Index>
__global__ void describe_break_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                                      const Value* __restrict__ values, Index rows,
                                      const unsigned long long* first_break, Break* out) {
  const auto k = static_cast<Index>(*first_break);
  Index row = 0, mirror = 0;
  out->why = break_at(row_ptr, col_idx, values, rows, k, &row, &mirror);
  out->row = row;
  out->col = col_idx[k];
  out->previous = k > row_ptr[row] ? col_idx[k - 1] : -1;
  out->value = static_cast<double>(values[k]);
  out->mirror = out->why == SymmetryBreak::MirrorDiffers ? static_cast<double>(values[mirror]) : 0.0;
}

// std::nullopt when A == A^T exactly, else the first break in words (as spmv::symmetry_violation).
template <class Value, class Index>
std::optional<std::string> device_symmetry_violation(const CsrView<Value, Index>& a, cudaStream_t stream) {
  if (a.rows != a.cols)
    return "A is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", not square";
  DeviceBuffer<unsigned long long> first_break(1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(first_break.data(), 0xff, sizeof(unsigned long long), stream));  // kNone
  find_break_kernel<<<grid_for(a.nnz, kCheckBlock), kCheckBlock, 0, stream>>>(a.row_ptr, a.col_idx, a.values, a.rows,
                                                                              a.nnz, first_break.data());
  SPMV_CHECK_LAUNCH("find_break_kernel");
  unsigned long long found = kNone;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&found, first_break.data(), sizeof found, cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (found == kNone) return std::nullopt;
  DeviceBuffer<Break> described(1);
  describe_break_kernel<<<1, 1, 0, stream>>>(a.row_ptr, a.col_idx, a.values, a.rows, first_break.data(),
                                             described.data());
  SPMV_CHECK_LAUNCH("describe_break_kernel");
  Break b{};
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&b, described.data(), sizeof b, cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return detail::describe_symmetry_break(b.why, b.row, b.col, b.value, b.mirror, b.previous);
}

template <class Value, class Index>
class Symmetric final : public CudaAlgorithm<Value, Index> {
 public:
  Symmetric(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : inner_(a, Algorithm::Auto, Operation::NonTranspose, options, stream) {}

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    inner_.apply(alpha, x, beta, y, stream);
  }
  bool writes_workspace() const override { return false; }  // the inner plan orders its own products
  bool reproducible() const override { return inner_.reproducible(); }
  std::string policy() const override {
    return "A == A^T, A x's plan: " + std::string(to_string(inner_.algorithm())) + " (" + inner_.policy() + ")";
  }
  std::size_t extra_bytes() const override { return inner_.extra_bytes(); }

 private:
  Plan<Value, Index> inner_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_symmetric(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                          cudaStream_t stream) {
  if (op != Operation::Transpose) throw unsupported_operation(Algorithm::Symmetric, op);
  if (const auto violation = device_symmetry_violation(matrix, stream))
    throw Unsupported("symmetric runs A^T x as A x and needs A == A^T exactly: " + *violation);
  return std::make_unique<Symmetric<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_symmetric)

}  // namespace spmv::cuda
