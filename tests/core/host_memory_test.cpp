// Huge-page advice (spmv/host_memory.hpp): the large arrays spmv allocates for products carry Linux's
// MADV_HUGEPAGE mark ("hg" among a mapping's VmFlags in /proc/self/smaps); small ones do not. Whether the
// kernel then backs them by huge pages depends on its settings and free memory, so the mark is what
// is tested; the speed it buys is measured in docs/PERFORMANCE.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "spmv/csr.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/host_memory.hpp"

namespace {

// Whether the mapping that holds `p` is marked for huge pages; nullopt where this cannot be seen (no
// /proc/self/smaps, a kernel without transparent huge pages) or the advice is turned off.
std::optional<bool> advised(const void* p) {
  if (const char* v = std::getenv("SPMV_HUGE_PAGES"); v != nullptr && std::string(v) == "0") return std::nullopt;
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) return std::nullopt;
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return std::nullopt;
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {  // a mapping's first line: "begin-end perms ..."
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return (line + " ").find(" hg ") != std::string::npos;
    }
  }
  return std::nullopt;
}

#define SKIP_UNLESS_VISIBLE(p)                                                                       \
  if (!advised(p).has_value()) GTEST_SKIP() << "no /proc/self/smaps or transparent huge pages here, " \
                                               "or SPMV_HUGE_PAGES=0"

TEST(HostMemory, ReserveMarksLargeStorage) {
  std::vector<float> v;
  spmv::reserve_huge_pages(v, (std::size_t{16} << 20) / sizeof(float));
  SKIP_UNLESS_VISIBLE(v.data());
  EXPECT_TRUE(*advised(v.data() + v.capacity() / 2));
  const auto w = spmv::vector_on_huge_pages<double>((std::size_t{16} << 20) / sizeof(double));
  EXPECT_EQ(w.size(), (std::size_t{16} << 20) / sizeof(double));
  EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](double d) { return d == 0.0; }));
  EXPECT_TRUE(*advised(w.data() + w.size() / 2));
}

// A fresh mapping of its own: memory from malloc may sit in a range an earlier allocation advised (glibc
// reuses freed memory, and the mark stays with the range), so the negative case needs memory no one
// else has used.
struct FreshMapping {
  explicit FreshMapping(std::size_t n) : bytes(n) {
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~FreshMapping() {
    if (p != MAP_FAILED) munmap(p, bytes);
  }
  std::size_t bytes;
  void* p;
};

TEST(HostMemory, AdviceCoversTheRangeFromTheThresholdUp) {
  FreshMapping small(std::size_t{16} << 20), large(std::size_t{16} << 20);
  ASSERT_NE(small.p, MAP_FAILED);
  ASSERT_NE(large.p, MAP_FAILED);
  SKIP_UNLESS_VISIBLE(small.p);
  spmv::advise_huge_pages(small.p, spmv::kHugePageMinBytes - 1);
  EXPECT_FALSE(*advised(small.p));
  spmv::advise_huge_pages(large.p, large.bytes);
  EXPECT_TRUE(*advised(large.p));
  EXPECT_TRUE(*advised(static_cast<char*>(large.p) + large.bytes - 1));
}

// The library's own allocations of matrices: the generators, to_csr, convert, transpose.
TEST(HostMemory, LibraryMatricesAreMarked) {
  // 2D Poisson of 10^6 rows: 5 M nonzeros, 20 MB of values and of column indices in float / int32 (its
  // row pointers, 4.0 MB, stay just below kHugePageMinBytes)
  const auto a = spmv::gen::generate<float, std::int32_t>("poisson2d", {{"n", 1000}});
  SKIP_UNLESS_VISIBLE(a.values.data());
  const auto middle = [](const auto& array) { return array.data() + array.size() / 2; };
  EXPECT_TRUE(*advised(middle(a.values)));
  EXPECT_TRUE(*advised(middle(a.col_idx)));
  const auto copy = spmv::convert<float, std::int32_t>(a);
  EXPECT_TRUE(*advised(middle(copy.values)));
  EXPECT_TRUE(*advised(middle(copy.col_idx)));
  const auto t = spmv::transpose(a);
  EXPECT_TRUE(*advised(middle(t.values)));
  EXPECT_TRUE(*advised(middle(t.col_idx)));
  const auto coo = spmv::to_coo(a);
  EXPECT_TRUE(*advised(middle(coo.row_idx)));
  EXPECT_TRUE(*advised(middle(coo.col_idx)));
  EXPECT_TRUE(*advised(middle(coo.values)));
  const auto b = spmv::to_csr<double, std::int64_t>(coo);
  EXPECT_TRUE(*advised(middle(b.values)));
  EXPECT_TRUE(*advised(middle(b.col_idx)));
  EXPECT_EQ(b.row_ptr.back(), a.row_ptr.back());
}

// The other formats' conversions: ELL (5 slots a row), ELL-R, HYB, compressed-csr (16-bit column offsets,
// 8-bit value codes: 10 MB and 5 MB).
TEST(HostMemory, FormatConversionsAreMarked) {
  const auto a = spmv::gen::generate<float, std::int32_t>("poisson2d", {{"n", 1000}});
  SKIP_UNLESS_VISIBLE(a.values.data());
  const auto middle = [](const auto& array) { return array.data() + array.size() / 2; };
  const auto ell = spmv::to_ell(a);
  EXPECT_TRUE(*advised(middle(ell.values)));
  EXPECT_TRUE(*advised(middle(ell.col_idx)));
  const auto ellr = spmv::to_ellr(a);
  EXPECT_TRUE(*advised(middle(ellr.ell.values)));
  const auto hyb = spmv::to_hyb(a);
  EXPECT_TRUE(*advised(middle(hyb.ell.col_idx)));
  const auto compressed = spmv::to_compressed_csr(a);
  ASSERT_FALSE(compressed.col16.empty());
  ASSERT_FALSE(compressed.code8.empty());
  EXPECT_TRUE(*advised(middle(compressed.col16)));
  EXPECT_TRUE(*advised(middle(compressed.code8)));
}

}  // namespace
