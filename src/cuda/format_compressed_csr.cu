// Compressed CSR (layout in spmv/formats.hpp, docs/algorithms/formats.md): slices of 32 consecutive rows,
// column-major inside a slice, uint16 row lengths, per-slice base column with 16-bit offsets (32-bit for
// slices whose columns span 2^16 or more), and values as nothing (pattern), a table plus 8/16-bit codes, or
// raw. One thread per row and one warp per slice (block sizes are whole warps, so a warp never straddles
// two slices and the per-slice offset width is warp-uniform); a thread walks its row's slots, `lanes`
// apart, up to the row's own length, so padding is never read and x at padded positions cannot leak.
// The point is bytes: a stencil in f64 reads 2 (column) + 1 (code) bytes per nonzero instead of 12.
//
// Conversion, on the device (inside the factory, hence in Plan::setup_ms()), giving exactly the layout
// of the host conversion spmv::to_compressed_csr that CI checks:
//  - a warp per slice: row lengths (refusing rows above 2^16 - 1), the slice width, the smallest and
//    largest column (refusing spans of 2^32 or more), the offset width; exclusive scans (cub::DeviceScan)
//    of the slots give slice_ptr and the starts in col16 / col32; the padding rule is checked on the total
//    before anything of the matrix's size is allocated;
//  - values: the value bits radix-sorted (cub::DeviceRadixSort) and made unique (cub::DeviceSelect) give
//    the distinct values in ascending bit order, the table; pattern / 8-bit / 16-bit codes / raw as on the
//    host; a code is the table position of the value's bits (binary search);
//  - a thread per row scatters its offsets and codes (or values) into the column-major slots; padding
//    stays 0 (the arrays are cleared first).
#include <cub/device/device_scan.cuh>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/value_table.cuh"

namespace spmv::cuda {
namespace {

// Launch policy (tuning as data): one thread per row, 256 threads per block, a first value to be tuned on
// the H100/H200 (the benchmark sweeps Options.block_size; any multiple of 32 keeps warps inside slices).
struct CompressedCsrPolicy {
  int block_size;
};
constexpr CompressedCsrPolicy compressed_csr_policy(int /*value_bytes*/) { return {256}; }

using format::table_code;
using format::value_bits;
using format::ValueBits;

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

// ---- Conversion (plan time) -------------------------------------------------------------------------

// What the shape kernel reports back: the first row too long for a 16-bit length and the first slice whose
// columns span 2^32 or more (kNone: none; for the refusal messages), and the number of wide slices.
enum ShapeFact { kLongRow, kTooWideSlice, kWideSlices, kShapeFacts };
constexpr unsigned long long kNone = ULLONG_MAX;

// A warp per slice: row lengths, the slice's slots (lanes x longest row), its smallest column (the base)
// and whether its offsets need 32 bits. `narrow_slots` / `wide_slots` hold the slice's slots in the array
// its offsets go to (0 in the other), for the scans that place them.
template <class Index>
__global__ void compressed_shape_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                                        long long rows, long long slices, std::uint16_t* __restrict__ row_length,
                                        long long* __restrict__ slots, long long* __restrict__ narrow_slots,
                                        long long* __restrict__ wide_slots, Index* __restrict__ col_base,
                                        std::uint8_t* __restrict__ wide, unsigned long long* facts) {
  constexpr long long kMaxLength = kCompressedMaxRowLength;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const long long warps = format::grid_threads() / 32;
  for (long long s = format::global_thread() / 32; s < slices; s += warps) {  // warp-uniform
    const long long lanes = compressed_slice_lanes(rows, s);
    const long long first_row = s * kCompressedSliceRows;
    long long length = 0;
    if (lane < lanes) {
      const long long r = first_row + lane;
      length = static_cast<long long>(row_ptr[r + 1]) - static_cast<long long>(row_ptr[r]);
      if (length > kCompressedMaxRowLength) atomicMin(facts + kLongRow, static_cast<unsigned long long>(r));
      row_length[r] = static_cast<std::uint16_t>(min(length, kMaxLength));
    }
    long long width = min(length, kMaxLength);

    const long long begin = row_ptr[first_row];
    const long long end = row_ptr[first_row + lanes];
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    for (long long j = begin + lane; j < end; j += 32) {
      const long long c = col_idx[j];
      lo = min(lo, c);
      hi = max(hi, c);
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      width = max(width, __shfl_xor_sync(0xffffffffu, width, d));
      lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, d));
      hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, d));
    }
    if (end == begin) lo = hi = 0;
    if (lane == 0) {
      const long long count = lanes * width;
      const bool is_wide = hi - lo >= kCompressedNarrowSpan;
      if (hi - lo >= kCompressedWideSpan) atomicMin(facts + kTooWideSlice, static_cast<unsigned long long>(s));
      if (is_wide) atomicAdd(facts + kWideSlices, 1ull);
      slots[s] = count;
      narrow_slots[s] = is_wide ? 0 : count;
      wide_slots[s] = is_wide ? count : 0;
      col_base[s] = static_cast<Index>(lo);
      wide[s] = is_wide ? 1 : 0;
    }
  }
}

// The start of each slice's offsets in col16 (narrow) or col32 (wide), from the two exclusive scans.
__global__ void compressed_col_start_kernel(long long slices, const std::uint8_t* __restrict__ wide,
                                            const long long* __restrict__ narrow_start,
                                            const long long* __restrict__ wide_start, long long* __restrict__ col_start) {
  for (long long s = format::global_thread(); s < slices; s += format::grid_threads())
    col_start[s] = wide[s] ? wide_start[s] : narrow_start[s];
}

// A thread per row writes its entries into the slice's column-major slots.
template <CompressedValues kMode, class Value, class Index>
__global__ void compressed_fill_kernel(CsrView<Value, Index> a, const long long* __restrict__ slice_ptr,
                                       const long long* __restrict__ col_start, const Index* __restrict__ col_base,
                                       const std::uint8_t* __restrict__ wide, std::uint16_t* __restrict__ col16,
                                       std::uint32_t* __restrict__ col32, const ValueBits<Value>* __restrict__ table,
                                       int table_size, std::uint8_t* __restrict__ code8,
                                       std::uint16_t* __restrict__ code16, Value* __restrict__ values) {
  const long long rows = a.rows;
  for (long long r = format::global_thread(); r < rows; r += format::grid_threads()) {
    const long long s = r / kCompressedSliceRows;
    const long long lane = r % kCompressedSliceRows;
    const long long lanes = compressed_slice_lanes(rows, s);
    const long long base = col_base[s];
    const long long cols_first = col_start[s];
    const long long values_first = slice_ptr[s];
    const bool is_wide = wide[s];
    const long long begin = a.row_ptr[r];
    const long long length = static_cast<long long>(a.row_ptr[r + 1]) - begin;
    for (long long k = 0; k < length; ++k) {
      const long long slot = compressed_slot(k, lanes, lane);
      const long long offset = static_cast<long long>(a.col_idx[begin + k]) - base;
      if (is_wide)
        col32[cols_first + slot] = static_cast<std::uint32_t>(offset);
      else
        col16[cols_first + slot] = static_cast<std::uint16_t>(offset);
      const Value v = a.values[begin + k];
      if constexpr (kMode == CompressedValues::Code8 || kMode == CompressedValues::Code16) {
        const unsigned code = table_code(table, table_size, value_bits(v));
        if constexpr (kMode == CompressedValues::Code8)
          code8[values_first + slot] = static_cast<std::uint8_t>(code);
        else
          code16[values_first + slot] = static_cast<std::uint16_t>(code);
      } else if constexpr (kMode == CompressedValues::Raw) {
        values[values_first + slot] = v;
      }
    }
  }
}

// cudaMemsetAsync(0) of a plan-time array (padding slots must hold 0).
template <class T>
void clear(DeviceBuffer<T>& buffer, cudaStream_t stream) {
  if (buffer.size() > 0) SPMV_CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0, buffer.bytes(), stream));
}

template <class Value, class Index>
class CompressedCsr final : public CudaAlgorithm<Value, Index> {
 public:
  CompressedCsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : rows_(a.rows),
        block_(format::resolve_block_size(options.block_size, compressed_csr_policy(sizeof(Value)).block_size,
                                          "compressed-csr")) {
    const long long rows = a.rows;
    const long long slices = (rows + kCompressedSliceRows - 1) / kCompressedSliceRows;
    const auto count = static_cast<std::size_t>(slices);

    // Shape: lengths, slot counts, bases and widths; then the scans that place the slices.
    row_length_ = DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(rows));
    col_base_ = DeviceBuffer<Index>(count);
    wide_ = DeviceBuffer<std::uint8_t>(count);
    slice_ptr_ = DeviceBuffer<long long>(count + 1);
    col_start_ = DeviceBuffer<long long>(count);
    DeviceBuffer<long long> narrow(count + 1), wide_slots(count + 1), narrow_start(count + 1), wide_start(count + 1);
    DeviceBuffer<unsigned long long> facts(kShapeFacts);
    SPMV_CUDA_CHECK(cudaMemsetAsync(facts.data(), 0xff, 2 * sizeof(unsigned long long), stream));  // kNone
    SPMV_CUDA_CHECK(cudaMemsetAsync(facts.data() + kWideSlices, 0, sizeof(unsigned long long), stream));
    // The scans' last inputs are 0, so their last outputs are the totals.
    SPMV_CUDA_CHECK(cudaMemsetAsync(slice_ptr_.data() + slices, 0, sizeof(long long), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(narrow.data() + slices, 0, sizeof(long long), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(wide_slots.data() + slices, 0, sizeof(long long), stream));
    compressed_shape_kernel<<<grid_for(slices * 32, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        a.row_ptr, a.col_idx, rows, slices, row_length_.data(), slice_ptr_.data(), narrow.data(), wide_slots.data(),
        col_base_.data(), wide_.data(), facts.data());
    SPMV_CHECK_LAUNCH("compressed_shape_kernel");
    for (auto [in, out] : {std::pair{slice_ptr_.data(), slice_ptr_.data()}, std::pair{narrow.data(), narrow_start.data()},
                           std::pair{wide_slots.data(), wide_start.data()}})
      format::run_cub_at_plan_time(
          [&](void* temp, std::size_t& bytes) { return cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, slices + 1, stream); },
          stream);
    compressed_col_start_kernel<<<grid_for(slices, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        slices, wide_.data(), narrow_start.data(), wide_start.data(), col_start_.data());
    SPMV_CHECK_LAUNCH("compressed_col_start_kernel");

    const unsigned long long long_row = format::read_device_value(facts.data() + kLongRow, stream);
    if (long_row != kNone)
      throw Unsupported("compressed-csr: row " + std::to_string(long_row) + " holds more than the " +
                        std::to_string(kCompressedMaxRowLength) +
                        " entries a 16-bit row length holds; use csr-vector, merge-path or hola");
    const unsigned long long wide_slice = format::read_device_value(facts.data() + kTooWideSlice, stream);
    if (wide_slice != kNone)
      throw Unsupported("compressed-csr: rows " + std::to_string(wide_slice * kCompressedSliceRows) + ".." +
                        std::to_string(std::min<long long>(rows, (wide_slice + 1) * kCompressedSliceRows) - 1) +
                        " span 2^32 or more columns, more than 32-bit offsets reach; use sell, csr-vector or hola");
    const long long slots = format::read_device_value(slice_ptr_.data() + slices, stream);
    format::check_padded_size<long long>("compressed-csr", static_cast<long double>(slots), a.nnz, options,
                                         "sell, csr-vector or hola", 4 + sizeof(Value));
    col16_ = DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(format::read_device_value(narrow_start.data() + slices, stream)));
    col32_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(format::read_device_value(wide_start.data() + slices, stream)));
    clear(col16_, stream);
    clear(col32_, stream);

    // Values: the distinct bit patterns, ascending (the table), unless there are too many for codes.
    const long long distinct = format::distinct_values(a.values, static_cast<std::size_t>(a.nnz),
                                                       static_cast<long long>(kCompressedMaxCode16), table_,
                                                       "compressed-csr", stream);
    int table_size = 0;
    if (distinct == 1 && format::read_device_value(table_.data(), stream) == Value{1}) {
      mode_ = CompressedValues::Pattern;
      table_ = DeviceBuffer<Value>();
    } else if (distinct <= static_cast<long long>(kCompressedMaxCode16)) {
      mode_ = distinct <= static_cast<long long>(kCompressedMaxCode8) ? CompressedValues::Code8
                                                                       : CompressedValues::Code16;
      table_size = static_cast<int>(distinct);
    } else {
      mode_ = CompressedValues::Raw;
    }
    const auto total = static_cast<std::size_t>(slots);
    if (mode_ == CompressedValues::Code8) code8_ = DeviceBuffer<std::uint8_t>(total);
    if (mode_ == CompressedValues::Code16) code16_ = DeviceBuffer<std::uint16_t>(total);
    if (mode_ == CompressedValues::Raw) values_ = DeviceBuffer<Value>(total);
    clear(code8_, stream);
    clear(code16_, stream);
    clear(values_, stream);

    auto fill = [&](auto mode) {
      compressed_fill_kernel<decltype(mode)::value><<<grid_for(rows, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
          a, slice_ptr_.data(), col_start_.data(), col_base_.data(), wide_.data(), col16_.data(), col32_.data(),
          reinterpret_cast<const ValueBits<Value>*>(table_.data()), table_size, code8_.data(), code16_.data(),
          values_.data());
      SPMV_CHECK_LAUNCH("compressed_fill_kernel");
    };
    switch (mode_) {
      case CompressedValues::Pattern: fill(std::integral_constant<CompressedValues, CompressedValues::Pattern>{}); break;
      case CompressedValues::Code8: fill(std::integral_constant<CompressedValues, CompressedValues::Code8>{}); break;
      case CompressedValues::Code16: fill(std::integral_constant<CompressedValues, CompressedValues::Code16>{}); break;
      case CompressedValues::Raw: fill(std::integral_constant<CompressedValues, CompressedValues::Raw>{}); break;
    }
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporaries are freed on return
    const auto wide_slices = static_cast<std::int64_t>(format::read_device_value(facts.data() + kWideSlices, stream));
    summary_ = compressed_csr_summary(slices, slices - wide_slices, mode_, static_cast<std::size_t>(table_size), slots);
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
  bool reproducible() const override { return true; }
  std::string policy() const override {
    return "block=" + std::to_string(block_) + " " + summary_ + " unroll=" + std::to_string(format::kSlotUnroll) +
           " conversion=device";
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
