// Nonzero-split SpMV: every warp takes the same number of nonzeros (a chunk of 32 * kSteps), whatever the
// rows, as cuSPARSE's COO kernel does, but from CSR: the rows are found from the row pointers on the fly
// instead of read from a row index per nonzero (4 bytes per nonzero fewer than COO).
//  - A chunk owns the rows that start inside it (row_ptr[r] in [s, e)), empty ones included; the rows are
//    found once at plan time (first owned row per chunk, one binary search per chunk).
//  - Per chunk, the warp marks the start of each owned non-empty row in a shared-memory bitmap (one
//    32-bit word per step of 32 nonzeros) with its row beside it, and writes beta * y for owned empty rows.
//  - Per step, each lane multiplies one nonzero (coalesced loads of values and column indices, all steps'
//    loads issued before any reduction), then a segmented warp scan keyed by the bitmap word sums each
//    row's products; the lane ending a row writes y. A row still open at the step's end carries over in
//    a register; the row open at the chunk's start (begun by an earlier chunk) goes to a carry-out.
//  - A second small kernel adds alpha * carry into y (the owner wrote y in the first kernel).
// Every lane does useful work on every step (no per-row divergence), the motivation: on power-law and
// mostly-empty matrices csr-vector kept 66-73% of lanes busy where cuSPARSE's COO kept ~96%
// (docs/PERFORMANCE.md, profiler counters). docs/algorithms/nnz_split.md has the details.
#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Steps (of 32 nonzeros) per chunk: enough independent loads per lane in flight to cover the gather's
// latency; a chunk of 512 nonzeros keeps the per-chunk row bookkeeping small against the products.
constexpr int kSteps = 16;
constexpr int kChunk = 32 * kSteps;
constexpr int kDefaultBlockThreads = 128;
// Compiled block sizes (a bounded set, STYLE.md §6); larger blocks buy nothing here, warps are independent.
int checked_nnz_split_threads(int requested) {
  const int threads = requested > 0 ? requested : kDefaultBlockThreads;
  if (threads != 64 && threads != 128 && threads != 256)
    throw InvalidArgument("NnzSplit: block_size must be 64, 128 or 256 (its warps work independently), got " +
                          std::to_string(threads));
  return threads;
}
template <class F>
void with_nnz_split_threads(int threads, F&& f) {
  if (threads == 64) return f(std::integral_constant<int, 64>{});
  if (threads == 256) return f(std::integral_constant<int, 256>{});
  return f(std::integral_constant<int, 128>{});
}

// First row of each chunk: the first r with row_ptr[r] >= c * kChunk; the end sentinel is `rows`, so the
// last chunk owns the trailing empty rows (those starting at nnz).
template <class Index>
__global__ void nnz_split_chunk_rows_kernel(const Index* row_ptr, Index rows, Index nnz, long long chunks,
                                            Index* chunk_rows) {
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c <= chunks;
       c += static_cast<long long>(gridDim.x) * blockDim.x) {
    if (c == chunks) {
      chunk_rows[c] = rows;
      continue;
    }
    const long long start = c * kChunk;
    long long lo = 0, hi = rows;  // lower bound over row_ptr[0..rows]; row_ptr[rows] = nnz > start
    while (lo < hi) {
      const long long mid = lo + (hi - lo) / 2;
      if (static_cast<long long>(row_ptr[mid]) < start)
        lo = mid + 1;
      else
        hi = mid;
    }
    chunk_rows[c] = static_cast<Index>(lo);
    (void)nnz;
  }
}

template <class Value>
__device__ __forceinline__ Value shfl_up(Value v, int delta) {
  return __shfl_up_sync(0xffffffffu, v, delta);
}

template <int Threads, class Value, class Index>
__global__ void __launch_bounds__(Threads)
    nnz_split_kernel(CsrView<Value, Index> a, const Index* __restrict__ chunk_rows, long long chunks, Value alpha,
                     const Value* __restrict__ x, Value beta, Value* __restrict__ y, Index* __restrict__ carry_rows,
                     Value* __restrict__ carry_values) {
  constexpr int kWarps = Threads / 32;
  __shared__ unsigned heads[kWarps][kSteps + 1];  // bit l of word k: a row starts at nonzero s + 32k + l
  __shared__ Index head_row[kWarps][kChunk];      // that row (at most 32 KiB per block of 256 threads)
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const long long chunk = static_cast<long long>(blockIdx.x) * kWarps + warp;
  if (chunk >= chunks) return;  // whole warps leave together: no block-wide barrier below

  const long long s = chunk * kChunk;
  const long long e = min(s + kChunk, static_cast<long long>(a.nnz));
  const Index first_row = chunk_rows[chunk];
  const Index end_row = chunk_rows[chunk + 1];

  // The products first: their loads do not depend on the row bookkeeping below and overlap it.
  Value product[kSteps];
#pragma unroll
  for (int k = 0; k < kSteps; ++k) {
    const long long j = s + k * 32 + lane;
    product[k] = j < e ? a.values[j] * __ldg(x + a.col_idx[j]) : Value(0);
  }

  if (lane <= kSteps) heads[warp][lane] = 0;
  __syncwarp();
  for (long long r = static_cast<long long>(first_row) + lane; r < end_row; r += 32) {
    const long long begin = a.row_ptr[r];
    const long long end = a.row_ptr[r + 1];
    if (begin == end) {
      y[r] = axpby(alpha, Value(0), beta, y, r);
    } else {
      const int pos = static_cast<int>(begin - s);
      atomicOr(&heads[warp][pos >> 5], 1u << (pos & 31));
      head_row[warp][pos] = static_cast<Index>(r);
    }
  }
  // The row open at the chunk start, begun by an earlier chunk, is a carry-out (the fix-up adds it).
  const bool continues = first_row > 0 && static_cast<long long>(a.row_ptr[first_row]) > s;
  if (lane == 0) carry_rows[chunk] = continues ? first_row - 1 : a.rows;
  __syncwarp();

  long long open_row = static_cast<long long>(first_row) - 1;  // the row of the segment still open
  Value open = 0;                                             // its sum so far
  const unsigned lanes_up_to_me = lane == 31 ? 0xffffffffu : (2u << lane) - 1;
#pragma unroll
  for (int k = 0; k < kSteps; ++k) {
    const long long j = s + k * 32 + lane;
    if (s + k * 32 >= e) break;  // warp-uniform
    const unsigned word = heads[warp][k];
    const unsigned mine = word & lanes_up_to_me;
    const int seg_start = mine ? 31 - __clz(mine) : -1;  // lane where my segment starts in this step
    Value v = product[k];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const Value other = shfl_up(v, d);
      if (lane - d >= seg_start && lane >= d) v += other;
    }
    if (seg_start < 0) v += open;
    const long long row = seg_start < 0 ? open_row : static_cast<long long>(head_row[warp][k * 32 + seg_start]);
    const bool next_head = lane < 31 ? (word >> (lane + 1)) & 1u : heads[warp][k + 1] & 1u;
    const bool complete = j < e && (j + 1 == e || next_head);
    if (complete) {
      if (row < first_row)
        carry_values[chunk] = v;
      else
        y[row] = axpby(alpha, v, beta, y, row);
    }
    // Lane 31 holds the segment crossing into the next step (if it is complete, the next step starts
    // with a row head and `open` is not used).
    open = __shfl_sync(0xffffffffu, v, 31);
    open_row = __shfl_sync(0xffffffffu, row, 31);
  }
}

// Adds alpha * carry for every chunk that began inside a row owned by an earlier chunk (written in the
// main kernel); several chunks may carry into one long row, hence the atomics.
template <class Value, class Index>
__global__ void nnz_split_fixup_kernel(const Index* __restrict__ carry_rows, const Value* __restrict__ carry_values,
                                       long long chunks, Index rows, Value alpha, Value* __restrict__ y) {
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < chunks;
       c += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Index row = carry_rows[c];
    if (row < rows) atomicAdd(y + row, alpha * carry_values[c]);
  }
}

template <class Value, class Index>
class NnzSplit final : public CudaAlgorithm<Value, Index> {
 public:
  NnzSplit(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        threads_(checked_nnz_split_threads(options.block_size)),
        chunks_((static_cast<long long>(a.nnz) + kChunk - 1) / kChunk),
        chunk_rows_(static_cast<std::size_t>(chunks_ + 1)),
        carry_rows_(static_cast<std::size_t>(chunks_)),
        carry_values_(static_cast<std::size_t>(chunks_)) {
    nnz_split_chunk_rows_kernel<<<grid_for(chunks_ + 1, kSetupBlock), kSetupBlock, 0, stream>>>(
        a.row_ptr, a.rows, a.nnz, chunks_, chunk_rows_.data());
    SPMV_CHECK_LAUNCH("nnz_split_chunk_rows_kernel");
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    with_nnz_split_threads(threads_, [&](auto threads) {
      constexpr int kThreads = decltype(threads)::value;
      nnz_split_kernel<kThreads, Value, Index><<<grid_for(chunks_, kThreads / 32), kThreads, 0, stream>>>(
          a_, chunk_rows_.data(), chunks_, alpha, x, beta, y, carry_rows_.data(), carry_values_.data());
      SPMV_CHECK_LAUNCH("nnz_split_kernel");
    });
    if (chunks_ > 1) {  // the first chunk never carries
      nnz_split_fixup_kernel<<<grid_for(chunks_, kSetupBlock), kSetupBlock, 0, stream>>>(
          carry_rows_.data(), carry_values_.data(), chunks_, a_.rows, alpha, y);
      SPMV_CHECK_LAUNCH("nnz_split_fixup_kernel");
    }
  }

  std::string policy() const override {
    return "block=" + std::to_string(threads_) + " chunk=" + std::to_string(kChunk) +
           " chunks=" + std::to_string(chunks_);
  }
  std::size_t extra_bytes() const override {
    return chunk_rows_.bytes() + carry_rows_.bytes() + carry_values_.bytes();
  }

 private:
  static constexpr int kSetupBlock = 256;

  CsrView<Value, Index> a_;
  int threads_;
  long long chunks_;
  DeviceBuffer<Index> chunk_rows_;    // chunks + 1: first owned row per chunk, then `rows`
  DeviceBuffer<Index> carry_rows_;    // per chunk: the row open at its start (rows: none)
  DeviceBuffer<Value> carry_values_;  // per chunk: that row's partial sum inside the chunk
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_nnz_split(const CsrView<Value, Index>& matrix, Operation op, const Options& options,
                                          cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::NnzSplit, op);
  return std::make_unique<NnzSplit<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_nnz_split)

}  // namespace spmv::cuda
