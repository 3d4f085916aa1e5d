#pragma once
// Parallel first touch for std::vector storage (issue 18). CsrMatrix keeps its arrays in std::vector
// (a public type), whose resize() and assign() value-initialise on one thread: on freshly mapped
// memory that serial memset also takes every page fault, and the kernel's zeroing of 29 GB of pages
// (poisson3d n = 700 in float / int64) on one core is a large part of `spmv bench --gen`'s wall time.
// reserve_prefaulted() reserves the capacity and lets OpenMP threads fault its pages in first, so the
// value-initialisation that follows writes to resident memory at memory speed. The capacity is
// exactly n: no extra allocation, the peak is unchanged.
#include <cstddef>
#include <vector>

#include "spmv/host_memory.hpp"

namespace spmv::detail {

// Maps the pages of [p, p + bytes) writable, by `threads` OpenMP threads (0: the OpenMP default),
// through madvise(MADV_POPULATE_WRITE) (Linux 5.14 and later); does nothing below kPrefaultBytes,
// or where the kernel does not support it (the first write then faults, as without this call).
void prefault(void* p, std::size_t bytes, int threads);

// Below this the serial page faults cost under a few milliseconds: not worth a parallel region.
constexpr std::size_t kPrefaultBytes = std::size_t{64} << 20;

// v.reserve(n) with its new pages advised for huge pages (spmv/host_memory.hpp) and faulted in by OpenMP
// threads; call before v.resize(n) / v.assign(n, x).
template <class T>
void reserve_prefaulted(std::vector<T>& v, std::size_t n, int threads) {
  if (n <= v.capacity()) return;
  reserve_huge_pages(v, n);
  prefault(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T), threads);
}

}  // namespace spmv::detail
