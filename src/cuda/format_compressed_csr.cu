// Compressed CSR (layout in spmv/formats.hpp, docs/algorithms/formats.md): slices of 32 consecutive rows,
// column-major inside a slice, uint16 row lengths, per-slice base column with 16-bit offsets (32-bit for
// slices whose columns span 2^16 or more), and values as nothing (pattern), a table plus 8/16-bit codes, or
// raw. One thread per row and one warp per slice (block sizes are whole warps, so a warp never straddles
// two slices and the per-slice offset width is warp-uniform); a thread walks its row's slots, `lanes`
// apart, up to the row's own length, so padding is never read and x at padded positions cannot leak.
// The point is bytes: a stencil in f64 reads 2 (column) + 1 (code) bytes per nonzero instead of 12.
//
// Conversion: the CSR arrays are copied to the host, converted by spmv::to_compressed_csr (the tested host
// conversion, so the GPU runs exactly the layout CI checks) and uploaded; the whole round trip is inside
// the factory, hence in Plan::setup_ms(). A device conversion (distinct values by radix sort + unique,
// slice spans by segmented min/max) would be faster and is left for when its cost matters.
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data): one thread per row, 256 threads per block, a first value to be tuned on
// the H100/H200 (the benchmark sweeps Options.block_size; any multiple of 32 keeps warps inside slices).
struct CompressedCsrPolicy {
  int block_size;
};
constexpr CompressedCsrPolicy compressed_csr_policy(int /*value_bytes*/) { return {256}; }

static_assert(kCompressedSliceRows == 32, "one warp per slice: the kernel relies on warp-aligned slices");

// Device pointers of the format's arrays (empty arrays are null and never dereferenced: a slice reads
// col16 or col32 as its flag says, and only the value mode's arrays are read).
template <class Value, class Index>
struct CompressedView {
  long long rows = 0;
  const std::uint16_t* row_length = nullptr;
  const long long* slice_ptr = nullptr;
  const long long* col_start = nullptr;
  const Index* col_base = nullptr;
  const std::uint8_t* wide = nullptr;
  const std::uint16_t* col16 = nullptr;
  const std::uint32_t* col32 = nullptr;
  const Value* table = nullptr;
  const std::uint8_t* code8 = nullptr;
  const std::uint16_t* code16 = nullptr;
  const Value* values = nullptr;
};

// The value of slot `at` (a position in the code / value arrays). The table is small and reused: __ldg.
template <CompressedValues kMode, class Value, class Index>
__device__ __forceinline__ Value load_value(const CompressedView<Value, Index>& m, long long at) {
  if constexpr (kMode == CompressedValues::Pattern) {
    return Value(1);
  } else if constexpr (kMode == CompressedValues::Code8) {
    return __ldg(m.table + format::load_stream(m.code8 + at));
  } else if constexpr (kMode == CompressedValues::Code16) {
    return __ldg(m.table + format::load_stream(m.code16 + at));
  } else {
    return format::load_stream(m.values + at);
  }
}

// sum_{k < length} value(k) * x[base + offset(k)] in the row's order (as CSR sums it). As in
// format::strided_row_dot, the loads of kSlotUnroll slots are issued before their x gathers and those
// before the FMAs, for several independent loads in flight per thread.
template <CompressedValues kMode, class Offset, class Value, class Index>
__device__ __forceinline__ Value compressed_row_sum(const CompressedView<Value, Index>& m,
                                                    const Offset* __restrict__ offsets, long long value_first,
                                                    long long base, long long lanes, long long lane, int length,
                                                    const Value* __restrict__ x) {
  constexpr int kUnroll = format::kSlotUnroll;
  Value sum = 0;
  int k = 0;
  for (; k + kUnroll <= length; k += kUnroll) {
    long long c[kUnroll];
    Value v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long slot = compressed_slot(k + u, lanes, lane);
      c[u] = base + static_cast<long long>(format::load_stream(offsets + slot));
      v[u] = load_value<kMode>(m, value_first + slot);
    }
    Value xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) xv[u] = __ldg(x + c[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += v[u] * xv[u];
  }
  for (; k < length; ++k) {
    const long long slot = compressed_slot(k, lanes, lane);
    const long long c = base + static_cast<long long>(format::load_stream(offsets + slot));
    sum += load_value<kMode>(m, value_first + slot) * __ldg(x + c);
  }
  return sum;
}

// Thread per row r: slice s = r / 32, lane r % 32. The slice's metadata is one broadcast load per warp.
template <CompressedValues kMode, class Value, class Index>
__global__ void __launch_bounds__(format::kMaxBlockSize)
    compressed_csr_kernel(CompressedView<Value, Index> m, Value alpha, const Value* __restrict__ x, Value beta,
                          Value* __restrict__ y) {
  for (long long r = format::global_thread(); r < m.rows; r += format::grid_threads()) {
    const long long s = r / kCompressedSliceRows;
    const long long lane = r % kCompressedSliceRows;
    const long long lanes = compressed_slice_lanes(m.rows, s);
    const long long value_first = __ldg(m.slice_ptr + s);
    const long long col_first = __ldg(m.col_start + s);
    const long long base = static_cast<long long>(__ldg(m.col_base + s));
    const int length = format::load_stream(m.row_length + r);
    const Value sum =
        __ldg(m.wide + s)
            ? compressed_row_sum<kMode>(m, m.col32 + col_first, value_first, base, lanes, lane, length, x)
            : compressed_row_sum<kMode>(m, m.col16 + col_first, value_first, base, lanes, lane, length, x);
    y[r] = axpby(alpha, sum, beta, y, r);
  }
}

// Plan time only: a device array copied to a host vector.
template <class T>
std::vector<T> download(const T* d_data, std::size_t count, cudaStream_t stream) {
  std::vector<T> host(count);
  if (count == 0) return host;
  SPMV_CUDA_CHECK(cudaMemcpyAsync(host.data(), d_data, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

// Host vector -> device buffer, converting the element type (int64_t -> long long: the same bits, but the
// type the CUDA load intrinsics have overloads for).
template <class T, class U>
DeviceBuffer<T> upload_as(const std::vector<U>& host, cudaStream_t stream) {
  const std::vector<T> converted(host.begin(), host.end());
  DeviceBuffer<T> buffer(converted.size());
  buffer.upload(converted, stream);
  return buffer;
}

template <class Value, class Index>
class CompressedCsr final : public CudaAlgorithm<Value, Index> {
 public:
  CompressedCsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : rows_(a.rows),
        block_(format::resolve_block_size(options.block_size, compressed_csr_policy(sizeof(Value)).block_size,
                                          "compressed-csr")) {
    CsrMatrix<Value, Index> host;
    host.rows = a.rows;
    host.cols = a.cols;
    host.row_ptr = download(a.row_ptr, static_cast<std::size_t>(a.rows) + 1, stream);
    host.col_idx = download(a.col_idx, static_cast<std::size_t>(a.nnz), stream);
    host.values = download(a.values, static_cast<std::size_t>(a.nnz), stream);
    const CompressedCsrMatrix<Value, Index> m = to_compressed_csr(host, options);  // validates, may refuse
    mode_ = m.value_mode;
    summary_ = compressed_csr_summary(m);
    row_length_ = upload_as<std::uint16_t>(m.row_length, stream);
    slice_ptr_ = upload_as<long long>(m.slice_ptr, stream);
    col_start_ = upload_as<long long>(m.col_start, stream);
    col_base_ = upload_as<Index>(m.col_base, stream);
    wide_ = upload_as<std::uint8_t>(m.wide, stream);
    col16_ = upload_as<std::uint16_t>(m.col16, stream);
    col32_ = upload_as<std::uint32_t>(m.col32, stream);
    table_ = upload_as<Value>(m.table, stream);
    code8_ = upload_as<std::uint8_t>(m.code8, stream);
    code16_ = upload_as<std::uint16_t>(m.code16, stream);
    values_ = upload_as<Value>(m.values, stream);
  }

  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    const CompressedView<Value, Index> m{rows_,          row_length_.data(), slice_ptr_.data(), col_start_.data(),
                                         col_base_.data(), wide_.data(),     col16_.data(),     col32_.data(),
                                         table_.data(),  code8_.data(),      code16_.data(),    values_.data()};
    const unsigned grid = grid_for(rows_, block_);
    switch (mode_) {
      case CompressedValues::Pattern:
        compressed_csr_kernel<CompressedValues::Pattern><<<grid, block_, 0, stream>>>(m, alpha, x, beta, y);
        break;
      case CompressedValues::Code8:
        compressed_csr_kernel<CompressedValues::Code8><<<grid, block_, 0, stream>>>(m, alpha, x, beta, y);
        break;
      case CompressedValues::Code16:
        compressed_csr_kernel<CompressedValues::Code16><<<grid, block_, 0, stream>>>(m, alpha, x, beta, y);
        break;
      case CompressedValues::Raw:
        compressed_csr_kernel<CompressedValues::Raw><<<grid, block_, 0, stream>>>(m, alpha, x, beta, y);
        break;
    }
    SPMV_CHECK_LAUNCH("compressed_csr_kernel");
  }
  bool writes_workspace() const override { return false; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " " + summary_ + " unroll=" + std::to_string(format::kSlotUnroll) +
           " conversion=host";
  }
  std::size_t extra_bytes() const override {
    return row_length_.bytes() + slice_ptr_.bytes() + col_start_.bytes() + col_base_.bytes() + wide_.bytes() +
           col16_.bytes() + col32_.bytes() + table_.bytes() + code8_.bytes() + code16_.bytes() + values_.bytes();
  }

 private:
  Index rows_;
  int block_;
  CompressedValues mode_ = CompressedValues::Raw;
  std::string summary_;
  // The arrays of CompressedCsrMatrix (spmv/formats.hpp), same meaning and layout.
  DeviceBuffer<std::uint16_t> row_length_;
  DeviceBuffer<long long> slice_ptr_;
  DeviceBuffer<long long> col_start_;
  DeviceBuffer<Index> col_base_;
  DeviceBuffer<std::uint8_t> wide_;
  DeviceBuffer<std::uint16_t> col16_;
  DeviceBuffer<std::uint32_t> col32_;
  DeviceBuffer<Value> table_;
  DeviceBuffer<std::uint8_t> code8_;
  DeviceBuffer<std::uint16_t> code16_;
  DeviceBuffer<Value> values_;
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<Value, Index> make_compressed_csr(const CsrView<Value, Index>& matrix, Operation op,
                                               const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::CompressedCsr, op);
  return std::make_unique<CompressedCsr<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_compressed_csr)

}  // namespace spmv::cuda
