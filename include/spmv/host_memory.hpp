#pragma once
// Host arrays on transparent huge pages. A CPU product walks the matrix's arrays once a call and gathers
// x: on 4 KiB pages a walk over tens of megabytes takes a TLB entry every 64 cache lines, and on Linux in
// THP's "madvise" mode (the default of many distributions) memory gets 2 MiB pages only where asked.
// The arrays spmv allocates itself (to_csr, transpose, convert, the generators, the Python bindings'
// copies, the other formats' conversions, and the CPU plans' copies and storage) are advised; a caller
// who builds a CsrMatrix by hand can do the same before filling its vectors. One thread on the 2-core Zen 4 VM, 2D Poisson of 10^6 rows in f32: the
// plain row loop ran 4.54-4.66 ms on advised arrays against 4.92-5.28 ms (docs/PERFORMANCE.md).
#include <cstddef>
#include <vector>

namespace spmv {

// Arrays below this are left alone: their pages fit the TLB (numpy advises its own arrays from the same
// size up).
inline constexpr std::size_t kHugePageMinBytes = std::size_t{4} << 20;

// Asks the kernel (madvise MADV_HUGEPAGE) to back the whole pages of [p, p + bytes) by huge pages
// where they are first touched; pages already touched stay as they are. Does nothing below
// kHugePageMinBytes, off Linux, where the kernel has no transparent huge pages, or with the environment
// variable SPMV_HUGE_PAGES=0 (read once). Never fails.
void advise_huge_pages(const void* p, std::size_t bytes) noexcept;

// v.reserve(n), the new storage advised as above: call before the resize or assign that first writes it.
template <class T>
void reserve_huge_pages(std::vector<T>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
}

// std::vector<T>(n) (value-initialised) on storage advised as above.
template <class T>
std::vector<T> vector_on_huge_pages(std::size_t n) {
  std::vector<T> v;
  reserve_huge_pages(v, n);
  v.resize(n);
  return v;
}

// A copy of `source` on storage advised as above.
template <class T>
std::vector<T> copy_on_huge_pages(const std::vector<T>& source) {
  std::vector<T> v;
  reserve_huge_pages(v, source.size());
  v.assign(source.begin(), source.end());
  return v;
}

}  // namespace spmv
