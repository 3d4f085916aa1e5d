// ELLPACK family, converted from the device CSR at plan time:
//  - ELL (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
//    processors", SC'09, ELLPACK format): every row padded to the longest, column-major, one thread per
//    row walking all slots.
//  - ELLPACK-R (Vázquez, Fernández & Garzón, "A new approach for sparse matrix vector product on NVIDIA
//    GPUs", Concurrency Computat.: Pract. Exper. 23(8), 2011): ELL plus each row's length, so a thread
//    stops at its row's end instead of loading padding.
//  - ELLR-T (Vázquez, Fernández & Garzón, "Automatic tuning of the sparse matrix vector product on GPUs
//    based on the ELLR-T approach", Parallel Computing 38, 2012): T threads per row, each taking every
//    T-th slot, then a shuffle reduction.
// All three refuse (spmv::Unsupported, before allocating) when rows * width exceeds the padding rule.
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/format_ell.cuh"
#include "cuda/common/launch.cuh"
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

// ELLR-T: T is chosen so that each of a row's T threads takes about kEntriesPerLane entries: fewer and
// the log2(T) shuffle steps dominate, more and long rows serialise on too few lanes (the 2012 paper tunes
// T per matrix and finds it grows with the row length). First value, to be tuned on the H100/H200.
struct EllRVectorPolicy {
  int block_size;
  double entries_per_lane;
};
constexpr EllRVectorPolicy ellr_vector_policy(int /*value_bytes*/) { return {256, 4.0}; }

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

// ELLR-T: T threads per row (T a power of two <= 32, so a row's threads sit in one warp). Thread t of row
// r takes the row's slots t, t + T, t + 2T, ... over the group-T layout, where they are adjacent to the
// slots of the row's other threads: a warp's step is one contiguous segment (32 slots). Each thread stops
// at the row's length (ELLPACK-R); the T partial sums meet in a butterfly of log2(T) shuffles. The loop
// over row groups is uniform per warp (blockDim is a multiple of 32), so every lane reaches the shuffles.
template <int T, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    ellr_vector_kernel(Index rows, const Index* __restrict__ col_idx, const Value* __restrict__ values,
                       const Index* __restrict__ row_length, Value alpha, const Value* __restrict__ x, Value beta,
                       Value* __restrict__ y) {
  static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0, "T must be a power of two <= 32");
  constexpr int kRowsPerWarp = 32 / T;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int sub = lane & (T - 1);  // this thread's place among its row's T threads
  const long long warp = format::global_thread() / 32;
  const long long warps = format::grid_threads() / 32;
  const Index step = rows * T;  // between a thread's consecutive slots
  for (long long first_row = warp * kRowsPerWarp; first_row < rows; first_row += warps * kRowsPerWarp) {
    const long long row = first_row + lane / T;
    Value sum = 0;
    if (row < rows) {
      const auto r = static_cast<Index>(row);
      const Index length = format::load_stream(row_length + r);
      const Index count = length > sub ? (length - sub + T - 1) / T : 0;  // slots t + j*T < length
      sum = format::strided_row_dot<false>(col_idx, values, r * T + sub, step, count, x);
    }
#pragma unroll
    for (int offset = T / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (row < rows && sub == 0) y[row] = axpby(alpha, sum, beta, y, row);
  }
}

template <class Value, class Index>
class EllRVector final : public CudaAlgorithm<Value, Index> {
 public:
  EllRVector(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : block_(format::resolve_block_size(options.block_size, ellr_vector_policy(sizeof(Value)).block_size,
                                          "ellr-vector")) {
    const RowStatistics stats = row_statistics(a, stream);
    threads_per_row_ = choose_threads_per_row(stats.mean, options.subwarp);
    const Index group = threads_per_row_;
    const std::int64_t width = (stats.max + group - 1) / group * group;
    format::check_padded_size<Index>("ELLR-T", static_cast<long double>(a.rows) * static_cast<long double>(width),
                                     a.nnz, options, format::kEllAlternatives, sizeof(Index) + sizeof(Value));
    ell_ = format::build_ell(a, static_cast<Index>(width), threads_per_row_, stream);
    row_length_ = format::row_lengths(a.row_ptr, a.rows, stream);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    switch (threads_per_row_) {
      case 1: launch<1>(alpha, x, beta, y, stream); break;
      case 2: launch<2>(alpha, x, beta, y, stream); break;
      case 4: launch<4>(alpha, x, beta, y, stream); break;
      case 8: launch<8>(alpha, x, beta, y, stream); break;
      case 16: launch<16>(alpha, x, beta, y, stream); break;
      default: launch<32>(alpha, x, beta, y, stream); break;
    }
  }
  bool writes_workspace() const override { return false; }
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " threads_per_row=" + std::to_string(threads_per_row_) +
           " width=" + std::to_string(ell_.width) + " unroll=" + std::to_string(format::kSlotUnroll);
  }
  std::size_t extra_bytes() const override { return ell_.bytes() + row_length_.bytes(); }

 private:
  // Options.subwarp overrides; otherwise the smallest T in {2, 4, 8, 16, 32} giving each thread at most
  // entries_per_lane of an average row.
  static int choose_threads_per_row(double mean, int subwarp) {
    if (subwarp > 0) {
      if (subwarp > 32 || (subwarp & (subwarp - 1)) != 0)
        throw InvalidArgument("ellr-vector: subwarp = " + std::to_string(subwarp) +
                              " is not a power of two in [1, 32] (or 0 to choose from the mean row length)");
      return subwarp;
    }
    const double per_lane = ellr_vector_policy(sizeof(Value)).entries_per_lane;
    int t = 2;
    while (t < 32 && t * per_lane < mean) t *= 2;
    return t;
  }

  template <int T>
  void launch(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) {
    const std::int64_t threads = static_cast<std::int64_t>(ell_.rows) * T;
    ellr_vector_kernel<T><<<grid_for(threads, block_), block_, 0, stream>>>(
        ell_.rows, ell_.col_idx.data(), ell_.values.data(), row_length_.data(), alpha, x, beta, y);
    SPMV_CHECK_LAUNCH("ellr_vector_kernel");
  }

  int block_;
  int threads_per_row_ = 2;
  EllStorage<Value, Index> ell_;
  DeviceBuffer<Index> row_length_;
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
