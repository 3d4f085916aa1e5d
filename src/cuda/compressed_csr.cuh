#pragma once
// Private: compressed CSR (layout in spmv/formats.hpp, docs/algorithms/formats.md): its launch policy, its layout
// converted on the device, and its row walk, generic over the semiring (Ops: zero, add and mul of
// core/semiring_ops.hpp) and over what a finished row writes (Output, common/row_output.cuh), so that the SpMV
// (format_compressed_csr.cu: plus-times, alpha / beta) and the semiring product (semiring_compressed_csr.cu: y = the
// row's ⊕-sum) are one walk over one layout made by one conversion.
//
// The layout: slices of 32 consecutive rows, column-major inside a slice, uint16 row lengths, per-slice base column
// with 16-bit offsets (32-bit for slices whose columns span 2^16 or more), and values as nothing (pattern), a table
// plus 8/16-bit codes, or raw. One thread per row and one warp per slice (block sizes are whole warps, so a warp
// never straddles two slices and the per-slice offset width is warp-uniform); a thread walks its row's slots,
// `lanes` apart, up to the row's own length, so padding is never read and x at padded positions cannot leak (nor
// enter a semiring's row as 0 ⊗ x_j). The point is bytes: a stencil in f64 reads 2 (column) + 1 (code) bytes per
// nonzero instead of 12.
//
// Conversion, on the device (inside the factory, hence in Plan::setup_ms()), giving exactly the layout of the host
// conversion spmv::to_compressed_csr that CI checks:
//  - a warp per slice: row lengths (refusing rows above 2^16 - 1), the slice width, the smallest and largest column
//    (refusing spans of 2^32 or more), the offset width; exclusive scans (cub::DeviceScan) of the slots give
//    slice_ptr and the starts in col16 / col32; the padding rule is checked on the total before anything of the
//    matrix's size is allocated;
//  - values: the value bits radix-sorted (cub::DeviceRadixSort) and made unique (cub::DeviceSelect) give the
//    distinct values in ascending bit order, the table; pattern / 8-bit / 16-bit codes / raw as on the host; a code
//    is the table position of the value's bits (binary search);
//  - a thread per row scatters its offsets and codes (or values) into the column-major slots; padding stays 0 (the
//    arrays are cleared first).
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/value_table.cuh"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"

namespace spmv::cuda::compressed_csr {

// Launch policy (tuning as data): one thread per row, 256 threads per block, a first value to be tuned on the
// H100/H200 (the benchmark sweeps Options.block_size; any multiple of 32 keeps warps inside slices).
struct Policy {
  int block_size;
};
constexpr Policy policy_for(int /*value_bytes*/) { return {256}; }

static_assert(kCompressedSliceRows == 32, "one warp per slice: the kernel relies on warp-aligned slices");

// Device pointers of the format's arrays (empty arrays are null and never dereferenced: a slice reads col16 or
// col32 as its flag says, and only the value mode's arrays are read).
template <class Value, class Index>
struct View {
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

// The value of slot `at` (a position in the code / value arrays). The table is small and reused: __ldg. A pattern
// matrix's entries are 1 (every stored value was exactly 1).
template <CompressedValues kMode, class Value, class Index>
__device__ __forceinline__ Value load_value(const View<Value, Index>& m, long long at) {
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

// ⊕_{k < length} value(k) ⊗ x[base + offset(k)] from Ops::zero(), in the row's order (as CSR folds it; plus-times:
// sum += v * x from 0, the SpMV's sum). As in format::strided_row_fold, the loads of kSlotUnroll slots are issued
// before their x gathers and those before the folds, for several independent loads in flight per thread.
template <class Ops, CompressedValues kMode, class Offset, class Value, class Index>
__device__ __forceinline__ Value row_fold(const View<Value, Index>& m, const Offset* __restrict__ offsets,
                                          long long value_first, long long base, long long lanes, long long lane,
                                          int length, const Value* __restrict__ x) {
  constexpr int kUnroll = format::kSlotUnroll;
  Value sum = Ops::zero();
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
    for (int u = 0; u < kUnroll; ++u) sum = Ops::add(sum, Ops::mul(v[u], xv[u]));
  }
  for (; k < length; ++k) {
    const long long slot = compressed_slot(k, lanes, lane);
    const long long c = base + static_cast<long long>(format::load_stream(offsets + slot));
    sum = Ops::add(sum, Ops::mul(load_value<kMode>(m, value_first + slot), __ldg(x + c)));
  }
  return sum;
}

// Thread per row r: slice s = r / 32, lane r % 32. The slice's metadata is one broadcast load per warp. An empty
// row gives Ops::zero(); output(y, r, sum) writes the row.
template <class Ops, CompressedValues kMode, class Value, class Index, class Output>
__device__ __forceinline__ void rows(const View<Value, Index>& m, const Value* __restrict__ x, Value* __restrict__ y,
                                     const Output& output) {
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
            ? row_fold<Ops, kMode>(m, m.col32 + col_first, value_first, base, lanes, lane, length, x)
            : row_fold<Ops, kMode>(m, m.col16 + col_first, value_first, base, lanes, lane, length, x);
    output(y, r, sum);
  }
}

// Calls f(std::integral_constant<CompressedValues, mode>): the value modes a kernel is compiled for.
template <class F>
void with_mode(CompressedValues mode, F&& f) {
  switch (mode) {
    case CompressedValues::Pattern: f(std::integral_constant<CompressedValues, CompressedValues::Pattern>{}); break;
    case CompressedValues::Code8: f(std::integral_constant<CompressedValues, CompressedValues::Code8>{}); break;
    case CompressedValues::Code16: f(std::integral_constant<CompressedValues, CompressedValues::Code16>{}); break;
    case CompressedValues::Raw: f(std::integral_constant<CompressedValues, CompressedValues::Raw>{}); break;
  }
}

// ---- Conversion (plan time) -------------------------------------------------------------------------

using format::table_code;
using format::value_bits;
using format::ValueBits;

// What the shape kernel reports back: the first row too long for a 16-bit length and the first slice whose
// columns span 2^32 or more (kNone: none; for the refusal messages), and the number of wide slices.
enum ShapeFact { kLongRow, kTooWideSlice, kWideSlices, kShapeFacts };
inline constexpr unsigned long long kNone = ULLONG_MAX;

// A warp per slice: row lengths, the slice's slots (lanes x longest row), its smallest column (the base) and
// whether its offsets need 32 bits. `narrow_slots` / `wide_slots` hold the slice's slots in the array its offsets
// go to (0 in the other), for the scans that place them.
template <class Index>
__global__ void shape_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx, long long rows,
                             long long slices, std::uint16_t* __restrict__ row_length, long long* __restrict__ slots,
                             long long* __restrict__ narrow_slots, long long* __restrict__ wide_slots,
                             Index* __restrict__ col_base, std::uint8_t* __restrict__ wide,
                             unsigned long long* facts) {
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

// The start of each slice's offsets in col16 (narrow) or col32 (wide), from the two exclusive scans. A template
// (Position = long long) only so that the two files including this header share one definition.
template <class Position>
__global__ void col_start_kernel(long long slices, const std::uint8_t* __restrict__ wide,
                                 const Position* __restrict__ narrow_start, const Position* __restrict__ wide_start,
                                 Position* __restrict__ col_start) {
  for (long long s = format::global_thread(); s < slices; s += format::grid_threads())
    col_start[s] = wide[s] ? wide_start[s] : narrow_start[s];
}

// A thread per row writes its entries into the slice's column-major slots.
template <CompressedValues kMode, class Value, class Index>
__global__ void fill_kernel(CsrView<Value, Index> a, const long long* __restrict__ slice_ptr,
                            const long long* __restrict__ col_start, const Index* __restrict__ col_base,
                            const std::uint8_t* __restrict__ wide, std::uint16_t* __restrict__ col16,
                            std::uint32_t* __restrict__ col32, const ValueBits<Value>* __restrict__ table,
                            int table_size, std::uint8_t* __restrict__ code8, std::uint16_t* __restrict__ code16,
                            Value* __restrict__ values) {
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

// The arrays of CompressedCsrMatrix (spmv/formats.hpp), same meaning and layout, converted on `stream` from A (rows
// and entries) and synchronised; Options.block_size (the launch) and max_padding (the padding rule) read. Refused
// before the matrix-sized arrays are allocated: Unsupported for a row above 65535 entries, a slice spanning 2^32
// columns or more, or the padding rule; InvalidArgument for a block size that is not whole warps.
template <class Value, class Index>
struct Layout {
  int block = 0;
  CompressedValues mode = CompressedValues::Raw;
  std::string summary;
  long long rows = 0;
  DeviceBuffer<std::uint16_t> row_length;
  DeviceBuffer<long long> slice_ptr;
  DeviceBuffer<long long> col_start;
  DeviceBuffer<Index> col_base;
  DeviceBuffer<std::uint8_t> wide;
  DeviceBuffer<std::uint16_t> col16;
  DeviceBuffer<std::uint32_t> col32;
  DeviceBuffer<Value> table;
  DeviceBuffer<std::uint8_t> code8;
  DeviceBuffer<std::uint16_t> code16;
  DeviceBuffer<Value> values;

  Layout(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : block(format::resolve_block_size(options.block_size, policy_for(sizeof(Value)).block_size, "compressed-csr")),
        rows(a.rows) {
    const long long slices = (rows + kCompressedSliceRows - 1) / kCompressedSliceRows;
    const auto count = static_cast<std::size_t>(slices);

    // Shape: lengths, slot counts, bases and widths; then the scans that place the slices.
    row_length = DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(rows));
    col_base = DeviceBuffer<Index>(count);
    wide = DeviceBuffer<std::uint8_t>(count);
    slice_ptr = DeviceBuffer<long long>(count + 1);
    col_start = DeviceBuffer<long long>(count);
    DeviceBuffer<long long> narrow(count + 1), wide_slots(count + 1), narrow_start(count + 1), wide_start(count + 1);
    DeviceBuffer<unsigned long long> facts(kShapeFacts);
    SPMV_CUDA_CHECK(cudaMemsetAsync(facts.data(), 0xff, 2 * sizeof(unsigned long long), stream));  // kNone
    SPMV_CUDA_CHECK(cudaMemsetAsync(facts.data() + kWideSlices, 0, sizeof(unsigned long long), stream));
    // The scans' last inputs are 0, so their last outputs are the totals.
    SPMV_CUDA_CHECK(cudaMemsetAsync(slice_ptr.data() + slices, 0, sizeof(long long), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(narrow.data() + slices, 0, sizeof(long long), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(wide_slots.data() + slices, 0, sizeof(long long), stream));
    shape_kernel<<<grid_for(slices * 32, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        a.row_ptr, a.col_idx, rows, slices, row_length.data(), slice_ptr.data(), narrow.data(), wide_slots.data(),
        col_base.data(), wide.data(), facts.data());
    SPMV_CHECK_LAUNCH("compressed_csr::shape_kernel");
    for (auto [in, out] : {std::pair{slice_ptr.data(), slice_ptr.data()}, std::pair{narrow.data(), narrow_start.data()},
                           std::pair{wide_slots.data(), wide_start.data()}})
      format::run_cub_at_plan_time(
          [&](void* temp, std::size_t& bytes) {
            return cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, slices + 1, stream);
          },
          stream);
    col_start_kernel<<<grid_for(slices, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
        slices, wide.data(), narrow_start.data(), wide_start.data(), col_start.data());
    SPMV_CHECK_LAUNCH("compressed_csr::col_start_kernel");

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
    const long long slots = format::read_device_value(slice_ptr.data() + slices, stream);
    format::check_padded_size<long long>("compressed-csr", static_cast<long double>(slots), a.nnz, options,
                                         "sell, csr-vector or hola", 4 + sizeof(Value));
    col16 = DeviceBuffer<std::uint16_t>(
        static_cast<std::size_t>(format::read_device_value(narrow_start.data() + slices, stream)));
    col32 = DeviceBuffer<std::uint32_t>(
        static_cast<std::size_t>(format::read_device_value(wide_start.data() + slices, stream)));
    clear(col16, stream);
    clear(col32, stream);

    // Values: the distinct bit patterns, ascending (the table), unless there are too many for codes.
    const long long distinct = format::distinct_values(a.values, static_cast<std::size_t>(a.nnz),
                                                       static_cast<long long>(kCompressedMaxCode16), table,
                                                       "compressed-csr", stream);
    int table_size = 0;
    if (distinct == 1 && format::read_device_value(table.data(), stream) == Value{1}) {
      mode = CompressedValues::Pattern;
      table = DeviceBuffer<Value>();
    } else if (distinct <= static_cast<long long>(kCompressedMaxCode16)) {
      mode = distinct <= static_cast<long long>(kCompressedMaxCode8) ? CompressedValues::Code8
                                                                      : CompressedValues::Code16;
      table_size = static_cast<int>(distinct);
    } else {
      mode = CompressedValues::Raw;
    }
    const auto total = static_cast<std::size_t>(slots);
    if (mode == CompressedValues::Code8) code8 = DeviceBuffer<std::uint8_t>(total);
    if (mode == CompressedValues::Code16) code16 = DeviceBuffer<std::uint16_t>(total);
    if (mode == CompressedValues::Raw) values = DeviceBuffer<Value>(total);
    clear(code8, stream);
    clear(code16, stream);
    clear(values, stream);

    with_mode(mode, [&](auto m) {
      fill_kernel<decltype(m)::value><<<grid_for(rows, format::kPlanBlock), format::kPlanBlock, 0, stream>>>(
          a, slice_ptr.data(), col_start.data(), col_base.data(), wide.data(), col16.data(), col32.data(),
          reinterpret_cast<const ValueBits<Value>*>(table.data()), table_size, code8.data(), code16.data(),
          values.data());
      SPMV_CHECK_LAUNCH("compressed_csr::fill_kernel");
    });
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporaries are freed on return
    const auto wide_slices = static_cast<std::int64_t>(format::read_device_value(facts.data() + kWideSlices, stream));
    summary = compressed_csr_summary(slices, slices - wide_slices, mode, static_cast<std::size_t>(table_size), slots);
  }

  View<Value, Index> view() const {
    return {rows,         row_length.data(), slice_ptr.data(), col_start.data(), col_base.data(), wide.data(),
            col16.data(), col32.data(),      table.data(),     code8.data(),     code16.data(),   values.data()};
  }
  // "block=256 slices=... unroll=4": the launch and what the conversion chose.
  std::string policy() const {
    return "block=" + std::to_string(block) + " " + summary + " unroll=" + std::to_string(format::kSlotUnroll);
  }
  std::size_t bytes() const {
    return row_length.bytes() + slice_ptr.bytes() + col_start.bytes() + col_base.bytes() + wide.bytes() +
           col16.bytes() + col32.bytes() + table.bytes() + code8.bytes() + code16.bytes() + values.bytes();
  }
  unsigned grid() const { return grid_for(rows, block); }
};

}  // namespace spmv::cuda::compressed_csr
