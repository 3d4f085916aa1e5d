#pragma once
// Device DIA storage and its conversion from CSR on the device (Bell & Garland, SC'09, DIA format: one column of
// `rows` slots per occupied diagonal, diagonal-major), shared by the DIA SpMV (format_dia.cu) and the semiring
// product's DIA (semiring_dia.cu), so both hold the same diagonals and refuse the same matrices.
//
// Conversion at plan time: flag every occupied diagonal in an array of rows + cols - 1 entries, exclusive-scan
// it (cub::DeviceScan) to number the diagonals, refuse if ndiag * rows breaks the padding rule (before the values
// are allocated), then list the offsets and scatter the entries. Duplicate entries of a row land on the same slot
// and are summed there (by the row's own thread: no race, and the same order every time).
//
// On request, a bit mask of the slots that hold a stored entry (the host DiaMatrix::stored's role): a slot
// holding 0 is either padding or a stored zero, which a product over a semiring must tell apart (min-plus:
// 0 + x_j enters a row only for a stored zero). The scatter sets the bits with atomicOr, and an entry whose bit
// was already set is a duplicate: counted, so that a caller can refuse what the summed slot would change.
#include <cub/device/device_scan.cuh>

#include <cstddef>
#include <type_traits>

#include "cuda/common/format_common.cuh"
#include "cuda/common/launch.cuh"

namespace spmv::cuda::format {

// Diagonal numbers: rows + cols - 1 < 2^32 when Index is 32-bit, so 32-bit unsigned counts suffice there.
template <class Index>
using DiagCount = std::conditional_t<sizeof(Index) == 4, unsigned, unsigned long long>;

// flag[(col - row) + rows - 1] = 1 for every entry (benign races: every writer stores 1).
template <class Value, class Index>
__global__ void mark_diagonals_kernel(CsrView<Value, Index> a, DiagCount<Index>* __restrict__ flag) {
  for (long long i = global_thread(); i < a.rows; i += grid_threads()) {
    const Index end = a.row_ptr[i + 1];
    for (Index k = a.row_ptr[i]; k < end; ++k)
      flag[static_cast<long long>(a.col_idx[k]) - i + (a.rows - 1)] = 1;
  }
}

// After the exclusive scan, position p holds an occupied diagonal iff number[p + 1] != number[p], and
// number[p] is its index among the occupied ones.
template <class Index>
__global__ void list_offsets_kernel(const DiagCount<Index>* __restrict__ number, long long positions, Index rows,
                                    Index* __restrict__ offsets) {
  for (long long p = global_thread(); p < positions; p += grid_threads())
    if (number[p + 1] != number[p]) offsets[number[p]] = static_cast<Index>(p - (rows - 1));
}

// Thread per row: values[d * rows + row] += entry (values zeroed beforehand); the row owns its slots. With a
// mask (`stored` non-null, zeroed beforehand): bit (row % 32) of stored[d * words + row / 32] is set for the
// slot, and an entry that finds its bit set (a duplicate of the row's earlier entry) adds one to *duplicates.
template <class Value, class Index>
__global__ void scatter_diagonals_kernel(CsrView<Value, Index> a, const DiagCount<Index>* __restrict__ number,
                                         Value* __restrict__ values, unsigned* __restrict__ stored, long long words,
                                         unsigned long long* __restrict__ duplicates) {
  for (long long i = global_thread(); i < a.rows; i += grid_threads()) {
    const auto row = static_cast<Index>(i);
    const Index end = a.row_ptr[row + 1];
    for (Index k = a.row_ptr[row]; k < end; ++k) {
      const auto d = static_cast<Index>(number[static_cast<long long>(a.col_idx[k]) - row + (a.rows - 1)]);
      values[d * a.rows + row] += a.values[k];
      if (stored) {
        const unsigned bit = 1u << (row & 31);
        if (atomicOr(stored + d * words + row / 32, bit) & bit) atomicAdd(duplicates, 1ull);
      }
    }
  }
}

// The converted matrix: slot (d, row) at d * rows + row, its column row + offsets[d] (outside [0, cols) for
// slots that lie outside the matrix; those hold 0).
template <class Value, class Index>
struct DiaStorage {
  Index rows = 0;
  Index cols = 0;
  Index ndiag = 0;
  DeviceBuffer<Index> offsets;    // ndiag, ascending (col - row)
  DeviceBuffer<Value> values;     // ndiag * rows, diagonal-major; slots without an entry hold 0
  long long stored_words = 0;     // words of `stored` a diagonal: (rows + 31) / 32
  DeviceBuffer<unsigned> stored;  // with the mask: ndiag * stored_words, bit set where a slot holds an entry
  long long duplicates = 0;       // with the mask: entries summed into a slot that already held one

  std::size_t bytes() const { return offsets.bytes() + values.bytes() + stored.bytes(); }
};

// Converts `a` (rows, nnz > 0); refuses (Unsupported) by the padding rule before the values are allocated.
// stored_mask: also build `stored` and count the duplicates. Synchronises `stream`.
template <class Value, class Index>
DiaStorage<Value, Index> build_dia(const CsrView<Value, Index>& a, const Options& options, bool stored_mask,
                                   cudaStream_t stream) {
  using Count = DiagCount<Index>;
  DiaStorage<Value, Index> m;
  m.rows = a.rows;
  m.cols = a.cols;
  // positions = rows + cols - 1 diagonals, plus one entry so that the exclusive scan also yields the total.
  const long long positions = static_cast<long long>(a.rows) + a.cols - 1;
  DeviceBuffer<Count> number(static_cast<std::size_t>(positions) + 1);
  SPMV_CUDA_CHECK(cudaMemsetAsync(number.data(), 0, number.bytes(), stream));
  mark_diagonals_kernel<<<grid_for(a.rows, kPlanBlock), kPlanBlock, 0, stream>>>(a, number.data());
  SPMV_CHECK_LAUNCH("mark_diagonals_kernel");
  run_cub_at_plan_time(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, number.data(), positions + 1, stream);
      },
      stream);
  const auto ndiag = static_cast<long long>(read_device_value(number.data() + positions, stream));

  // Refuse before the values are allocated.
  check_padded_size<Index>("DIA", static_cast<long double>(ndiag) * static_cast<long double>(a.rows), a.nnz, options,
                           "ell, hyb, sell or a CSR algorithm (the nonzeros lie on too many diagonals)",
                           sizeof(Value));
  m.ndiag = static_cast<Index>(ndiag);

  m.offsets = DeviceBuffer<Index>(static_cast<std::size_t>(ndiag));
  list_offsets_kernel<Index><<<grid_for(positions, kPlanBlock), kPlanBlock, 0, stream>>>(number.data(), positions,
                                                                                         a.rows, m.offsets.data());
  SPMV_CHECK_LAUNCH("list_offsets_kernel");

  m.values = DeviceBuffer<Value>(static_cast<std::size_t>(ndiag) * static_cast<std::size_t>(a.rows));
  SPMV_CUDA_CHECK(cudaMemsetAsync(m.values.data(), 0, m.values.bytes(), stream));  // all-zero bits are 0.0
  DeviceBuffer<unsigned long long> duplicates;
  if (stored_mask) {
    m.stored_words = (static_cast<long long>(a.rows) + 31) / 32;
    m.stored = DeviceBuffer<unsigned>(static_cast<std::size_t>(ndiag * m.stored_words));
    duplicates = DeviceBuffer<unsigned long long>(1);
    SPMV_CUDA_CHECK(cudaMemsetAsync(m.stored.data(), 0, m.stored.bytes(), stream));
    SPMV_CUDA_CHECK(cudaMemsetAsync(duplicates.data(), 0, duplicates.bytes(), stream));
  }
  scatter_diagonals_kernel<<<grid_for(a.rows, kPlanBlock), kPlanBlock, 0, stream>>>(
      a, number.data(), m.values.data(), m.stored.data(), m.stored_words, duplicates.data());
  SPMV_CHECK_LAUNCH("scatter_diagonals_kernel");
  if (stored_mask) m.duplicates = static_cast<long long>(read_device_value(duplicates.data(), stream));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // `number` is freed on return
  return m;
}

}  // namespace spmv::cuda::format
