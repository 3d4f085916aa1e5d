// Hola-SpMVT, y = alpha*A^T*x + beta*y on the CSR arrays of A (Steinberger, Zayer & Seidel, ICS'17,
// §3.4, Alg. 7): the same global and local balancing as Hola-SpMV (hola_common.cuh); each thread
// multiplies its values by x[row] once per row, sorts its (column, product) pairs, adds up runs of
// equal columns and scatters them into y with atomic adds (y = beta*y first, by the first kernel).
// The buffered variant (Algorithm::HolaBuffered) first combines the updates of the whole block in a
// shared-memory hash table keyed by column, then flushes one atomic per distinct column.
#include <cub/thread/thread_sort.cuh>

#include "cuda/hola_common.cuh"
#include "cuda/hola_transpose.cuh"

namespace spmv::cuda::hola {
namespace {

// Marks slots past the end of the matrix; sorts after every real column.
template <class Index>
constexpr Index kNoColumn = std::numeric_limits<Index>::max();
// Empty hash slot (columns are >= 0).
template <class Index>
constexpr Index kEmptyKey = Index(-1);

// Alg. 7: the row's x is loaded once per row and multiplies the values of that row.
template <int N, class Value, class Index, class Cursor>
__device__ __forceinline__ void scale_by_row(const Value (&val)[N], const Index (&col)[N], int n, Cursor cursor,
                                             const Value* __restrict__ x, Value (&q)[N], Index (&c)[N]) {
  Value xr = n > 0 ? __ldg(x + cursor.row) : Value(0);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (k < n) {
      q[k] = val[k] * xr;
      c[k] = col[k];
      if (cursor.is_end(k)) {
        cursor.advance(k, n);
        if (k + 1 < n) xr = __ldg(x + cursor.row);
      }
    } else {
      q[k] = Value(0);
      c[k] = kNoColumn<Index>;
    }
  }
}

template <class Index>
__device__ __forceinline__ Index atomic_cas_index(Index* address, Index compare, Index value) {
  if constexpr (sizeof(Index) == 4) {
    return static_cast<Index>(atomicCAS(reinterpret_cast<int*>(address), static_cast<int>(compare),
                                        static_cast<int>(value)));
  } else {
    return static_cast<Index>(atomicCAS(reinterpret_cast<unsigned long long*>(address),
                                        static_cast<unsigned long long>(compare),
                                        static_cast<unsigned long long>(value)));
  }
}

// Multiplicative (Fibonacci) hashing: consecutive columns, the common case, spread over the table.
template <class Index>
__device__ __forceinline__ unsigned hash_slot(Index col, int bits) {
  const auto u = static_cast<unsigned long long>(col);
  return (static_cast<unsigned>(u ^ (u >> 32)) * 2654435761u) >> (32 - bits);
}

// Where the combined updates go: y directly (atomics), or the block's shared hash table.
template <bool Buffered, class Value, class Index>
struct ColumnSink {
  Value alpha;
  Value* y;
  Index* keys;   // Buffered: 2^bits slots, kEmptyKey when free
  Value* sums;
  int bits;
  __device__ __forceinline__ void add(Index col, Value v) const {
    if constexpr (!Buffered) {
      atomicAdd(y + col, alpha * v);
    } else {
      // Linear probing; a slot goes from empty to one column exactly once (CAS), so every thread that
      // adds column `col` settles on the same slot. At most nnz_per_block distinct columns fill at most
      // half of the table, so the probe always terminates.
      const unsigned mask = (1u << bits) - 1;
      unsigned slot = hash_slot(col, bits);
      while (true) {
        const Index key = *reinterpret_cast<volatile Index*>(keys + slot);
        if (key == col) break;
        if (key == kEmptyKey<Index>) {
          const Index old = atomic_cas_index(keys + slot, kEmptyKey<Index>, col);
          if (old == kEmptyKey<Index> || old == col) break;
        }
        slot = (slot + 1) & mask;
      }
      atomicAdd(sums + slot, v);
    }
  }
};

template <int MaxBlock, int N, bool Buffered, class Value, class Index>
__global__ void __launch_bounds__(MaxBlock)
    hola_spmvt_kernel(HolaParams<Value, Index> p, int hash_bits, Value alpha, const Value* __restrict__ x,
                      Value* __restrict__ y) {
  constexpr int V = kVectorWidth<Value, Index>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int capacity = Buffered ? 1 << hash_bits : 0;
  const auto [sums, keys, start_row, end_mask, warp_flag, tid, lane, warp, range, warp_begin] =
      block_setup<N>(smem, p, capacity, capacity);
  const Index* __restrict__ row_ptr = p.a.row_ptr;

  // Alg. 5: coalesced vector loads of values and column ids.
  Value val[N];
  Index col[N];
  load_striped<N, V>(p.a.values, p.a.col_idx, range, warp_begin, lane, p.vector_loads, val, col);
  if constexpr (Buffered) {
    for (int i = tid; i < capacity; i += blockDim.x) {
      keys[i] = kEmptyKey<Index>;
      sums[i] = Value(0);
    }
  }

  Value q[N];
  Index c[N];
  if (range.single_row) {
    // §3.3: one row covers the block; every value is multiplied by the same x, and the rows do not
    // matter, so the nonzeros stay striped.
    if constexpr (Buffered) __syncthreads();
    const Value xr = __ldg(x + range.first_row);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const bool in = striped_local<V>(warp_begin, lane, k) < range.nnz;
      q[k] = in ? val[k] * xr : Value(0);
      c[k] = in ? col[k] : kNoColumn<Index>;
    }
  } else {
    local_balance<N>(row_ptr, range, start_row, end_mask, warp_flag);  // §3.2 (ends with a barrier)
    striped_to_blocked<V>(val, lane);  // Alg. 5: each thread holds N consecutive nonzeros
    striped_to_blocked<V>(col, lane);
    const int n = thread_nnz<N>(range.nnz, tid);
    if (n > 0 && (range.many_rows || warp_flag[warp]))  // §3.3: empty rows / COO-like mode
      scale_by_row<N>(val, col, n, RowPtrCursor<Index>(row_ptr, range.stop_row, range.begin + tid * N, start_row[tid]),
                      x, q, c);
    else
      scale_by_row<N>(val, col, n, MaskCursor<Index>{n > 0 ? start_row[tid] : range.first_row, n > 0 ? end_mask[tid] : 0u},
                      x, q, c);
  }

  // Alg. 7: sort by column so that equal columns of the thread (rows sharing columns, duplicates)
  // become neighbours; each run is added up and leaves the thread as one update.
  if (p.sort_columns) cub::StableOddEvenSort(c, q, ::cuda::std::less<Index>{});
  const ColumnSink<Buffered, Value, Index> sink{alpha, y, keys, sums, hash_bits};
  Index run_col = kNoColumn<Index>;
  Value run = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (c[k] == run_col) {
      run += q[k];
    } else {
      if (run_col != kNoColumn<Index>) sink.add(run_col, run);
      run_col = c[k];
      run = q[k];
    }
  }
  if (run_col != kNoColumn<Index>) sink.add(run_col, run);

  if constexpr (Buffered) {
    // One global atomic per distinct column of the block.
    __syncthreads();
    for (int i = tid; i < capacity; i += blockDim.x) {
      const Index key = keys[i];
      if (key != kEmptyKey<Index>) atomicAdd(y + key, alpha * sums[i]);
    }
  }
}

template <class Value, class Index>
using SpmvtKernel = void (*)(HolaParams<Value, Index>, int, Value, const Value*, Value*);

template <bool Buffered, class Value, class Index>
SpmvtKernel<Value, Index> spmvt_kernel_for(int variant) {
  constexpr int N = kNnzPerThreadT<Value>;
  switch (variant) {
    case 256: return hola_spmvt_kernel<256, N, Buffered, Value, Index>;
    case 512: return hola_spmvt_kernel<512, N, Buffered, Value, Index>;
    default: return hola_spmvt_kernel<1024, N, Buffered, Value, Index>;
  }
}

// log2 of the hash capacity: a power of two with at least twice as many slots as nonzeros per block
// (load factor <= 1/2 however many distinct columns the block holds).
inline int hash_bits_for(int nnz_per_block) {
  int bits = 1;
  while ((1 << bits) < 2 * nnz_per_block) ++bits;
  return bits;
}

template <class Value, class Index>
class HolaSpmvT final : public CudaAlgorithm<Value, Index> {
 public:
  HolaSpmvT(const CsrView<Value, Index>& a, const Options& options, bool buffered)
      : buffered_(buffered),
        config_(hola_config(a, options, Operation::Transpose, buffered ? "HolaBuffered" : "Hola")),
        hash_bits_(buffered ? hash_bits_for(config_.nnz_per_block) : 0),
        kernel_(buffered ? spmvt_kernel_for<true, Value, Index>(config_.variant)
                         : spmvt_kernel_for<false, Value, Index>(config_.variant)),
        smem_bytes_(smem_layout(config_.block, sizeof(Value), sizeof(Index), capacity(), capacity()).bytes),
        block_row_starts_(static_cast<std::size_t>(config_.num_blocks) + 1) {
    reserve_shared_memory(kernel_, smem_bytes_, buffered ? "HolaBuffered" : "Hola");
    params_ = {a, block_row_starts_.data(), config_.nnz_per_block, config_.num_blocks, config_.vector_loads,
               config_.sort_columns};
    first_kernel_ms_ = time_first_kernel(params_, Operation::Transpose, nullptr);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    launch_first_kernel(params_, beta, y, Operation::Transpose, stream);  // blockRowStarts, y = beta*y
    kernel_<<<config_.num_blocks, config_.block, smem_bytes_, stream>>>(params_, hash_bits_, alpha, x, y);
    SPMV_CHECK_LAUNCH("hola_spmvt_kernel");
  }

  bool writes_workspace() const override { return false; }  // see HolaSpmv (hola.cu)
  std::string policy() const override {
    return "block=" + std::to_string(config_.block) + " nnz/thread=" + std::to_string(config_.nnz_per_thread) +
           " nnz/block=" + std::to_string(config_.nnz_per_block) + " sort=" + (config_.sort_columns ? "on" : "off") +
           (buffered_ ? " hash_slots=" + std::to_string(capacity()) : std::string(" atomics=direct")) + " vector=" +
           (config_.vector_loads ? std::to_string(kVectorWidth<Value, Index>) : std::string("1(unaligned)")) +
           " launches=hola_first_kernel+hola_spmvt_kernel" + first_kernel_note(first_kernel_ms_);
  }
  std::size_t extra_bytes() const override { return block_row_starts_.bytes(); }

 private:
  int capacity() const { return buffered_ ? 1 << hash_bits_ : 0; }

  bool buffered_;
  HolaConfig config_;
  int hash_bits_;
  SpmvtKernel<Value, Index> kernel_;
  int smem_bytes_;
  DeviceBuffer<Index> block_row_starts_;
  HolaParams<Value, Index> params_{};
  double first_kernel_ms_ = 0;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_hola_transpose(const CsrView<Value, Index>& matrix, const Options& options,
                                               bool buffered) {
  return std::make_unique<HolaSpmvT<Value, Index>>(matrix, options, buffered);
}

template AlgorithmPtr<float, std::int32_t> make_hola_transpose(const CsrView<float, std::int32_t>&, const Options&, bool);
template AlgorithmPtr<float, std::int64_t> make_hola_transpose(const CsrView<float, std::int64_t>&, const Options&, bool);
template AlgorithmPtr<double, std::int32_t> make_hola_transpose(const CsrView<double, std::int32_t>&, const Options&,
                                                                bool);
template AlgorithmPtr<double, std::int64_t> make_hola_transpose(const CsrView<double, std::int64_t>&, const Options&,
                                                                bool);

}  // namespace spmv::cuda::hola
