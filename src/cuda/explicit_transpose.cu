// ExplicitTranspose: y = alpha*A^T*x + beta*y as a non-transposed product with A^T, which the plan
// builds once on the GPU (CSR of A -> CSC of A = CSR of A^T). No atomics at apply time: the result is
// the same bit for bit on every run, the deterministic transpose (docs/algorithms/transpose.md). The
// price is the conversion (setup time) and a second copy of the matrix (extra_bytes).
//
// The conversion is our own, for both index types (cusparseCsr2cscEx2 takes 32-bit indices only): a
// stable radix sort of the column indices (cub::DeviceRadixSort, only the bits that columns use)
// yields the permutation into column-major order, each entry keeps row order within its column (so
// the CSC is the same for every run, duplicates and unsorted rows included); rows come back by binary
// search in row_ptr, column starts by binary search in the sorted columns.
#include <cub/device/device_radix_sort.cuh>

#include <type_traits>

#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy of the conversion kernels (plan time only; not tuned).
struct ExplicitTransposePolicy {
  int block_size;
};
constexpr ExplicitTransposePolicy explicit_transpose_policy() { return {256}; }

// Grid-stride loops with 64-bit counters (i + stride must not overflow a 32-bit Index).
#define SPMV_GRID_STRIDE(i, n)                                                                           \
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);             \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

template <class Index>
__global__ void iota_kernel(Index* __restrict__ out, Index n) {
  SPMV_GRID_STRIDE(i, n) out[i] = static_cast<Index>(i);
}

// Entry k of A^T (column-major order of A) is nonzero perm[k] of A: its row becomes the column index.
template <class Value, class Index>
__global__ void gather_transposed_kernel(const Index* __restrict__ row_ptr, Index rows,
                                         const Value* __restrict__ values, const Index* __restrict__ perm,
                                         Index nnz, Index* __restrict__ t_col_idx, Value* __restrict__ t_values) {
  SPMV_GRID_STRIDE(k, nnz) {
    const Index p = perm[k];
    // The last row r with row_ptr[r] <= p: the nonempty row holding nonzero p.
    Index lo = 0, hi = rows;
    while (hi - lo > 1) {
      const Index mid = lo + (hi - lo) / 2;
      if (row_ptr[mid] <= p) lo = mid;
      else hi = mid;
    }
    t_col_idx[k] = lo;
    t_values[k] = values[p];
  }
}

// t_row_ptr[j] = number of nonzeros in columns < j (lower bound of j in the sorted columns), j <= cols.
template <class Key, class Index>
__global__ void column_starts_kernel(const Key* __restrict__ sorted_cols, Index nnz, Index cols,
                                     Index* __restrict__ t_row_ptr) {
  SPMV_GRID_STRIDE(j, static_cast<long long>(cols) + 1) {
    Index lo = 0, hi = nnz;  // first position with sorted_cols[pos] >= j
    while (lo < hi) {
      const Index mid = lo + (hi - lo) / 2;
      if (static_cast<long long>(sorted_cols[mid]) < j) lo = mid + 1;
      else hi = mid;
    }
    t_row_ptr[j] = lo;
  }
}

#undef SPMV_GRID_STRIDE

template <class Value, class Index>
class ExplicitTranspose final : public CudaAlgorithm<Value, Index> {
 public:
  ExplicitTranspose(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : t_row_ptr_(static_cast<std::size_t>(a.cols) + 1),
        t_col_idx_(static_cast<std::size_t>(a.nnz)),
        t_values_(static_cast<std::size_t>(a.nnz)) {
    convert(a, stream);
    const CsrView<Value, Index> at{a.cols, a.rows, a.nnz, t_row_ptr_.data(), t_col_idx_.data(), t_values_.data()};
    // Reuse of a non-transposed kernel through the factory API (one warp or sub-warp per row of A^T,
    // a fixed reduction order per row).
    inner_ = make_csr_vector<Value, Index>(at, Operation::NonTranspose, options, stream);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    inner_->apply(alpha, x, beta, y, stream);
  }
  bool writes_workspace() const override { return inner_->writes_workspace(); }
  bool reproducible() const override { return inner_->reproducible(); }  // the CSC build is a stable sort
  std::string policy() const override { return "csc=stable-radix-sort inner=CsrVector[" + inner_->policy() + "]"; }
  std::size_t extra_bytes() const override {
    return t_row_ptr_.bytes() + t_col_idx_.bytes() + t_values_.bytes() + inner_->extra_bytes();
  }

 private:
  void convert(const CsrView<Value, Index>& a, cudaStream_t stream) {
    using Key = std::make_unsigned_t<Index>;  // columns are >= 0: unsigned order is the same
    const int block = explicit_transpose_policy().block_size;
    const auto n = static_cast<std::size_t>(a.nnz);
    DeviceBuffer<Index> order(n), perm(n);
    DeviceBuffer<Key> sorted_cols(n);
    int end_bit = 1;  // only the bits columns use
    while (end_bit < static_cast<int>(8 * sizeof(Key)) && (static_cast<unsigned long long>(a.cols - 1) >> end_bit) != 0)
      ++end_bit;

    iota_kernel<<<grid_for(a.nnz, block), block, 0, stream>>>(order.data(), a.nnz);
    SPMV_CHECK_LAUNCH("iota_kernel");
    const Key* keys_in = reinterpret_cast<const Key*>(a.col_idx);
    std::size_t temp_bytes = 0;
    SPMV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, sorted_cols.data(), order.data(),
                                                    perm.data(), a.nnz, 0, end_bit, stream));
    DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
    SPMV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys_in, sorted_cols.data(),
                                                    order.data(), perm.data(), a.nnz, 0, end_bit, stream));
    gather_transposed_kernel<<<grid_for(a.nnz, block), block, 0, stream>>>(a.row_ptr, a.rows, a.values, perm.data(),
                                                                           a.nnz, t_col_idx_.data(), t_values_.data());
    SPMV_CHECK_LAUNCH("gather_transposed_kernel");
    column_starts_kernel<<<grid_for(static_cast<std::int64_t>(a.cols) + 1, block), block, 0, stream>>>(
        sorted_cols.data(), a.nnz, a.cols, t_row_ptr_.data());
    SPMV_CHECK_LAUNCH("column_starts_kernel");
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the temporaries are freed
  }

  DeviceBuffer<Index> t_row_ptr_;
  DeviceBuffer<Index> t_col_idx_;
  DeviceBuffer<Value> t_values_;
  AlgorithmPtr<Value, Index> inner_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_explicit_transpose(const CsrView<Value, Index>& matrix, Operation op,
                                                   const Options& options, cudaStream_t stream) {
  if (op != Operation::Transpose) throw unsupported_operation(Algorithm::ExplicitTranspose, op);
  return std::make_unique<ExplicitTranspose<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_explicit_transpose)

}  // namespace spmv::cuda
