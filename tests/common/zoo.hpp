#pragma once
// The test-matrix zoo: named matrices with fixed seeds covering the inputs that break SpMV kernels
// (STYLE.md §10): degenerate shapes, empty rows, one huge row, power-law rows, rectangular shapes,
// unsorted columns, duplicates, explicit zeros, awkward sizes, and every SuiteSparse file in the
// shared matrices folder. Matrices are built on first use and cached, so listing the zoo (test
// discovery) reads no file and generates nothing.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/paths.hpp"
#include "spmv/csr.hpp"
#include "spmv/generators.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv::test {

using ZooMatrix = CsrMatrix<double, std::int64_t>;

struct ZooEntry {
  std::string name;  // letters, digits and '_' only (it becomes part of gtest names)
  std::function<ZooMatrix()> make;
  bool index64 = false;   // also swept with 64-bit indices (a subset, to keep the sweep short)
  bool generated = true;  // false for the SuiteSparse files
};

// SplitMix64 (Steele, Lea & Flood 2014): tiny, seedable and identical on every platform.
struct SplitMix64 {
  std::uint64_t state;
  explicit SplitMix64(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double symmetric() { return 2.0 * uniform() - 1.0; }                       // [-1, 1)
  std::uint64_t below(std::uint64_t n) { return next() % n; }                // bias < n / 2^64
};

// FNV-1a, to derive per-case seeds from names.
inline std::uint64_t hash_name(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

namespace zoo_detail {

// Builds a CSR matrix from rows of (column, value) pairs, keeping their order and duplicates.
inline ZooMatrix from_rows(std::int64_t cols, const std::vector<std::vector<std::pair<std::int64_t, double>>>& rows) {
  ZooMatrix a;
  a.rows = static_cast<std::int64_t>(rows.size());
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (auto& row : rows) {
    for (auto& [c, v] : row) {
      a.col_idx.push_back(c);
      a.values.push_back(v);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

// `rows` rows of `length` entries at random columns of `cols` (unsorted; duplicates likely when length is near
// cols), values in [-1, 1), every third row empty when `with_empty`.
inline ZooMatrix random_rows(std::int64_t rows, std::int64_t cols, std::int64_t length, bool with_empty,
                             std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::vector<std::pair<std::int64_t, double>>> out(static_cast<std::size_t>(rows));
  for (std::size_t r = 0; r < out.size(); ++r) {
    if (with_empty && r % 3 == 1) continue;
    for (std::int64_t k = 0; k < length; ++k)
      out[r].emplace_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(cols))), rng.symmetric());
  }
  return from_rows(cols, out);
}

inline ZooMatrix empty(std::int64_t rows, std::int64_t cols) {
  ZooMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  return a;
}

// Fisher-Yates within each row: the same multiset of entries in a fixed pseudo-random order.
inline ZooMatrix shuffle_rows(ZooMatrix a, std::uint64_t seed) {
  SplitMix64 rng(seed);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r + 1] - 1; k > a.row_ptr[r]; --k) {
      const auto j = a.row_ptr[r] + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(k - a.row_ptr[r] + 1)));
      std::swap(a.col_idx[k], a.col_idx[j]);
      std::swap(a.values[k], a.values[j]);
    }
  return a;
}

// Every row gets copies of about a third of its entries (new values) inserted after the originals:
// duplicates that must be kept as separate entries, some adjacent, some not.
inline ZooMatrix with_duplicates(const ZooMatrix& a, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(static_cast<std::size_t>(a.rows));
  for (std::int64_t r = 0; r < a.rows; ++r) {
    auto& row = rows[r];
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) row.emplace_back(a.col_idx[k], a.values[k]);
    const std::size_t n = row.size();
    for (std::size_t i = 0; i < n; ++i)
      if (rng.below(3) == 0) {
        const auto at = static_cast<std::ptrdiff_t>(i + 1 + rng.below(row.size() - i));
        row.insert(row.begin() + at, {row[i].first, rng.symmetric()});
      }
  }
  return from_rows(a.cols, rows);
}

// Values scaled by 2^k, k uniform in [-30, 30]: rows mix magnitudes, so a tolerance that is not
// relative to sum |a_ij x_j| would fail (and one that is still passes, in float too).
inline ZooMatrix wide_range(ZooMatrix a, std::uint64_t seed) {
  SplitMix64 rng(seed);
  for (auto& v : a.values) v = std::ldexp(v, static_cast<int>(rng.below(61)) - 30);
  return a;
}

// Every value replaced by one of `distinct` exact values (multiples of 2^-6 in [-2, 2), exact in float
// too), cycling, so the matrix holds exactly `distinct` different values when it has that many entries.
inline ZooMatrix with_distinct_values(ZooMatrix a, std::int64_t distinct) {
  for (std::size_t k = 0; k < a.values.size(); ++k)
    a.values[k] = static_cast<double>(static_cast<std::int64_t>(k) % distinct) * 0.015625 - 2.0;
  return a;
}

// 96 x 140000 for the compressed format's per-slice column offsets (slices of 32 rows): rows 0-31 hold
// columns r and 70000 + r (the slice straddles 2^16: 32-bit offsets), rows 32-63 span exactly 65535
// columns from 1000 (the widest 16-bit slice), rows 64-95 span exactly 65536 from 5000 (the narrowest
// 32-bit one); random extra columns inside each span.
inline ZooMatrix straddle_2p16() {
  SplitMix64 rng(117);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(96);
  const std::int64_t lo[3] = {0, 1000, 5000}, span[3] = {70032, 65536, 65537};
  for (std::int64_t r = 0; r < 96; ++r) {
    const std::int64_t s = r / 32;
    if (s == 0) {
      rows[r].emplace_back(r, rng.symmetric());
      rows[r].emplace_back(70000 + r, rng.symmetric());
    }
    for (std::int64_t k = static_cast<std::int64_t>(rng.below(4)); k > 0; --k)
      rows[r].emplace_back(lo[s] + static_cast<std::int64_t>(rng.below(span[s])), rng.symmetric());
  }
  rows[40].emplace_back(1000, rng.symmetric());          // the span's ends, in different rows
  rows[41].emplace_back(1000 + 65535, rng.symmetric());
  rows[70].emplace_back(5000 + 65536, rng.symmetric());
  rows[70].emplace_back(5000, rng.symmetric());
  return from_rows(140000, rows);
}

// 3 x 100000: row 1 holds 65535 entries (the compressed format's 16-bit row-length limit) in one slice
// with two rows of 20000; columns scattered (k * 7919 mod 100000, distinct, unsorted).
inline ZooMatrix huge_row_slice() {
  SplitMix64 rng(118);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(3);
  for (std::int64_t r = 0; r < 3; ++r) {
    const std::int64_t n = r == 1 ? 65535 : 20000;
    for (std::int64_t k = 0; k < n; ++k) rows[r].emplace_back((k * 7919 + r) % 100000, rng.symmetric());
  }
  return from_rows(100000, rows);
}

inline std::string sanitize(std::string s) {
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

inline std::vector<ZooEntry> build() {
  using namespace spmv::gen;
  std::vector<ZooEntry> z;
  auto add = [&](std::string name, std::function<ZooMatrix()> make, bool index64 = false) {
    z.push_back({std::move(name), std::move(make), index64, true});
  };
  // Hand examples (the exact tests in reference_test.cpp use them too).
  add("tiny_3x4", [] {
    return from_rows(4, {{{0, 1.0}, {2, 2.0}}, {}, {{0, -3.0}, {1, 4.0}, {3, 0.5}}});
  }, true);
  add("tiny_unsorted_duplicates", [] {  // unsorted, a duplicate (0,3), an empty row, an explicit zero
    return from_rows(4, {{{3, 1.5}, {0, 2.0}, {3, -1.0}}, {}, {{1, 4.0}}, {{2, 0.0}, {0, -2.0}}});
  }, true);
  add("empty_0x0", [] { return empty(0, 0); }, true);
  add("empty_0x7", [] { return empty(0, 7); }, true);
  add("empty_7x0", [] { return empty(7, 0); }, true);
  add("no_nonzeros_5x6", [] { return empty(5, 6); }, true);
  add("one_column", [] {
    SplitMix64 rng(101);
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(60);
    for (auto& row : rows)
      if (rng.below(3) != 0) row.emplace_back(0, rng.symmetric());
    return from_rows(1, rows);
  }, true);
  add("one_row", [] { return random_uniform(1, 300, 120, 102); }, true);
  add("empty_rows", [] {  // first, last and a run of rows empty
    SplitMix64 rng(103);
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(64);
    for (std::size_t r = 1; r + 1 < rows.size(); ++r) {
      if ((r >= 20 && r < 35) || r % 5 == 0) continue;
      for (std::int64_t c = static_cast<std::int64_t>(rng.below(4)); c < 40; c += 1 + static_cast<std::int64_t>(rng.below(6)))
        rows[r].emplace_back(c, rng.symmetric());
    }
    return from_rows(40, rows);
  }, true);
  // One row of 100,000 entries among rows of 3: the load-balancing and padding stress case.
  add("huge_row", [] { return long_rows(1000, 100003, 1, 100000, 3, 104); }, true);
  add("wide_37x5000", [] { return random_uniform(37, 5000, 40, 105); });
  add("tall_5000x37", [] { return random_uniform(5000, 37, 3, 106); });
  add("power_law_rmat12", [] { return rmat(12, 8, 107); }, true);
  add("unsorted_columns", [] { return shuffle_rows(random_uniform(1500, 1200, 9, 108), 1108); }, true);
  add("duplicates", [] { return with_duplicates(random_uniform(800, 800, 6, 109), 1109); }, true);
  add("explicit_zeros", [] {
    auto a = poisson2d(16);
    for (std::size_t k = 0; k < a.values.size(); k += 3) a.values[k] = 0.0;
    return a;
  });
  add("size_4193", [] { return random_uniform(4096 + 97, 4096 + 97, 5, 110); }, true);
  add("size_65633x1121", [] { return random_uniform(65536 + 97, 1024 + 97, 2, 111); });
  add("wide_range_values", [] { return wide_range(random_uniform(500, 500, 20, 112), 1112); });
  add("poisson2d_64", [] { return poisson2d(64); });
  add("poisson3d_16", [] { return poisson3d(16); });
  add("stencil27_10", [] { return stencil27(10); });
  add("banded_2000", [] { return banded(2000, 4, 113); });
  // A == A^T with distinct random values and empty rows: the symmetric route runs A x for A^T x on it.
  add("symmetric_values", [] {
    SplitMix64 rng(125);
    std::vector<std::map<std::int64_t, double>> rows(900);
    for (std::int64_t r = 0; r < 900; r += 1 + static_cast<std::int64_t>(rng.below(2)))
      for (int e = 0; e < 6; ++e) {
        const auto c = static_cast<std::int64_t>(rng.below(900));
        const double v = rng.symmetric();
        rows[r][c] = v;
        rows[c][r] = v;
      }
    std::vector<std::vector<std::pair<std::int64_t, double>>> sorted(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) sorted[r].assign(rows[r].begin(), rows[r].end());
    return from_rows(900, sorted);
  }, true);
  add("mostly_empty", [] { return mostly_empty(5000, 5000, 0.02, 10, 114); });
  // Three rows in four empty, the others 12 long, two of 3,000: CUDA csr-vector splits the long rows into
  // chunks and walks the rest 32 rows a warp in the same launch.
  add("empty_rows_long_rows", [] {
    SplitMix64 rng(126);
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(4000);
    for (std::size_t r = 1; r < rows.size(); r += 4) {
      const std::int64_t len = r == 1001 || r == 3001 ? 3000 : 12;  // sorted, distinct columns
      const std::int64_t step = 6000 / len;
      for (std::int64_t k = 0; k < len; ++k)
        rows[r].emplace_back(k * step + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(step))),
                             rng.symmetric());
    }
    return from_rows(6000, rows);
  }, true);
  add("dense_rows", [] { return dense_rows(3000, 3, 0.6, 4, 115); });
  add("long_rows", [] { return long_rows(3000, 6000, 10, 3000, 5, 116); });
  // The compressed CSR format's boundaries (columns per 32-row slice, row length, value encodings).
  add("straddle_2p16", [] { return straddle_2p16(); }, true);
  add("huge_row_slice", [] { return huge_row_slice(); });
  add("all_equal_values", [] { return with_distinct_values(random_uniform(500, 500, 8, 119), 1); });
  add("distinct_255", [] { return with_distinct_values(random_uniform(600, 600, 6, 120), 255); }, true);
  add("distinct_256", [] { return with_distinct_values(random_uniform(600, 600, 6, 121), 256); });
  add("distinct_257", [] { return with_distinct_values(random_uniform(600, 600, 6, 122), 257); }, true);
  add("pattern_ones", [] {  // every value exactly 1: the compressed format stores no values
    auto a = random_uniform(700, 700, 7, 123);
    std::fill(a.values.begin(), a.values.end(), 1.0);
    return a;
  });
  // Every row length 0..140 twice, in a mixed order: lengths around each SIMD width (2 to 16 lanes),
  // rows shorter than one vector, the 4-accumulator step and the CPU SIMD kernel's direct-row
  // threshold (4 vectors), so both of its row shapes meet every remainder.
  add("simd_lengths", [] {
    SplitMix64 rng(117);
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(282);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::size_t len = (r * 97) % 141;  // gcd(97, 141) = 1: each length twice
      for (std::size_t k = 0; k < len; ++k)
        rows[r].emplace_back(static_cast<std::int64_t>(rng.below(700)), rng.symmetric());
    }
    return from_rows(700, rows);
  }, true);
  // Row lengths 0..40 (mean 20, columns near the diagonal): regular and local enough for the CPU's
  // unrolled short-row loop (src/cpu/csr_simd.hpp, choose_row_kernels), so its 4-step, pair and single
  // remainders, empty rows and rows shorter than one vector all run through it.
  add("unroll_lengths", [] {
    SplitMix64 rng(124);
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(410);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::size_t len = (r * 17) % 41;  // gcd(17, 41) = 1: each length ten times
      for (std::size_t k = 0; k < len; ++k)
        rows[r].emplace_back(static_cast<std::int64_t>((r + rng.below(60)) % 410), rng.symmetric());
    }
    return from_rows(410, rows);
  }, true);
  // Every shared SuiteSparse file (duplicates summed, symmetric storage expanded by read_csr).
  for (const auto& path : shared_matrix_files()) {
    std::string stem = path.filename().string();
    stem = stem.substr(0, stem.size() - std::string(".mtx.gz").size());
    z.push_back({"mtx_" + sanitize(stem), [p = path.string()] { return read_csr<double, std::int64_t>(p); }, false,
                 false});
  }
  return z;
}

}  // namespace zoo_detail

inline const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> entries = zoo_detail::build();
  return entries;
}

// The entry's matrix, built on first use and kept for the rest of the process.
inline const ZooMatrix& zoo_matrix(std::size_t index) {
  static std::map<std::size_t, ZooMatrix> cache;
  auto it = cache.find(index);
  if (it == cache.end()) it = cache.emplace(index, zoo().at(index).make()).first;
  return it->second;
}

inline std::size_t zoo_index(std::string_view name) {
  const auto& z = zoo();
  for (std::size_t i = 0; i < z.size(); ++i)
    if (z[i].name == name) return i;
  throw std::out_of_range("no zoo matrix named " + std::string(name));
}

inline const ZooMatrix& zoo_matrix(std::string_view name) { return zoo_matrix(zoo_index(name)); }

// The zoo as a test parameter, each case named by its matrix:
// INSTANTIATE_TEST_SUITE_P(Zoo, Suite, zoo_indices(), zoo_case_name).
inline auto zoo_indices() { return testing::Range<std::size_t>(0, zoo().size()); }
inline std::string zoo_case_name(const testing::TestParamInfo<std::size_t>& info) { return zoo()[info.param].name; }

}  // namespace spmv::test
