// Host formats: hand-checked layouts, exact CSR -> X -> CSR round trips over adversarial matrices (the
// refusals predicted independently from row lengths), padding limits, and the CPU format kernels
// against a double-precision product computed here, with a tolerance from the summation error bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/zoo.hpp"
#include "cpu/cpu_operator.hpp"  // make_cpu_format_kernel (private to the library)
#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::Algorithm;
using spmv::Operation;
using spmv::Options;
using D = spmv::CsrMatrix<double, std::int64_t>;

template <class V, class I>
bool bit_equal(const spmv::CsrMatrix<V, I>& a, const spmv::CsrMatrix<V, I>& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values.size() == b.values.size() &&
         (a.values.empty() || std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(V)) == 0);
}

D make(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> ptr, std::vector<std::int64_t> col,
       std::vector<double> val) {
  return spmv::make_csr<double, std::int64_t>(rows, cols, std::move(ptr), std::move(col), std::move(val));
}

// 3 x 4: row 0: (0, 1) (2, 2); row 1: empty; row 2: (0, 3) (1, 4) (2, 5) (3, 6)
D small() { return make(3, 4, {0, 2, 2, 6}, {0, 2, 0, 1, 2, 3}, {1, 2, 3, 4, 5, 6}); }

// Stored zeros of both signs, a subnormal, an all-zero row and an empty row.
D explicit_zeros() {
  return make(5, 4, {0, 2, 4, 4, 6, 7}, {0, 2, 1, 3, 0, 3, 2},
              {0.0, -0.0, 1.5, 0.0, std::numeric_limits<double>::denorm_min(), 0.0, -2.5});
}

// Unsorted columns and a duplicate (3, 0.25 twice in row 0).
D unsorted_duplicates() {
  return make(3, 4, {0, 4, 5, 7}, {3, 0, 3, 1, 2, 1, 0}, {0.25, 1, 0.25, -2, 3, 4, -5});
}

struct Named {
  std::string name;
  D a;
};

// The shared set: everything a format must survive. Values are finite (the kernels use them too).
std::vector<Named> matrices() {
  return {
      {"poisson2d", spmv::gen::poisson2d(9)},
      {"random", spmv::gen::random_uniform(300, 200, 7, 1)},
      {"rmat", spmv::gen::rmat(8, 8, 3)},
      {"empty_rows", spmv::gen::mostly_empty(200, 50, 0.3, 3, 4)},
      {"0x0", make(0, 0, {0}, {}, {})},
      {"0x5", make(0, 5, {0}, {}, {})},
      {"5x0", make(5, 0, {0, 0, 0, 0, 0, 0}, {}, {})},
      {"one_column", spmv::gen::random_uniform(40, 1, 1, 5)},
      {"one_column_gaps", spmv::gen::mostly_empty(40, 1, 0.5, 1, 6)},
      {"explicit_zeros", explicit_zeros()},
      {"one_huge_row", spmv::gen::long_rows(500, 3000, 1, 2500, 2, 7)},
      {"banded", spmv::gen::banded(100, 3, 2)},
      {"hyb_split", spmv::gen::long_rows(6000, 6000, 20, 500, 4, 8)},  // rule: ELL width 4 + COO tail
      {"unsorted_duplicates", unsorted_duplicates()},
      {"small", small()},
  };
}

// --- padding predicted independently of the conversions ---

template <class V, class I>
std::vector<std::int64_t> lengths(const spmv::CsrMatrix<V, I>& a) {
  std::vector<std::int64_t> l(a.rows);
  for (I r = 0; r < a.rows; ++r) l[r] = a.row_ptr[r + 1] - a.row_ptr[r];
  return l;
}

bool over_limit(long double slots, std::int64_t nnz, double max_padding = 3.0) {
  return slots > static_cast<long double>(max_padding) * nnz + spmv::kPaddingSlack;
}

template <class V, class I>
long double ell_slots(const spmv::CsrMatrix<V, I>& a) {
  const auto l = lengths(a);
  const std::int64_t w = l.empty() ? 0 : *std::max_element(l.begin(), l.end());
  return static_cast<long double>(a.rows) * w;
}

template <class V, class I>
long double dia_slots(const spmv::CsrMatrix<V, I>& a) {
  std::set<std::int64_t> d;
  for (I r = 0; r < a.rows; ++r)
    for (I k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) d.insert(static_cast<std::int64_t>(a.col_idx[k]) - r);
  return static_cast<long double>(a.rows) * d.size();
}

template <class V, class I>
long double sell_slots(const spmv::CsrMatrix<V, I>& a, int c, int sigma) {
  auto l = lengths(a);
  for (std::size_t w = 0; w < l.size(); w += sigma)
    std::sort(l.begin() + w, l.begin() + std::min(l.size(), w + sigma), std::greater<>());
  long double slots = 0;
  for (std::size_t s = 0; s < l.size(); s += c) slots += static_cast<long double>(c) * l[s];
  return slots;
}

// Compressed CSR: slices of 32 consecutive rows (the last one shorter), each padded to its longest row.
template <class V, class I>
long double ccsr_slots(const spmv::CsrMatrix<V, I>& a) {
  const auto l = lengths(a);
  long double slots = 0;
  for (std::size_t s = 0; s < l.size(); s += 32) {
    const std::size_t end = std::min(l.size(), s + 32);
    slots += static_cast<long double>(end - s) * *std::max_element(l.begin() + s, l.begin() + end);
  }
  return slots;
}

template <class V, class I>
bool ccsr_refused(const spmv::CsrMatrix<V, I>& a) {
  const auto l = lengths(a);
  return over_limit(ccsr_slots(a), a.nnz()) ||
         std::any_of(l.begin(), l.end(), [](std::int64_t n) { return n > spmv::kCompressedMaxRowLength; });
}

// An explicit HYB width above the longest row is lowered to it.
template <class V, class I>
long double hyb_slots(const spmv::CsrMatrix<V, I>& a, std::int64_t width) {
  const auto l = lengths(a);
  const std::int64_t longest = l.empty() ? 0 : *std::max_element(l.begin(), l.end());
  return static_cast<long double>(a.rows) * std::min(width, longest);
}

template <class V, class I>
spmv::CsrMatrix<V, I> canonical(spmv::CsrMatrix<V, I> a) {
  spmv::canonicalize(a);
  return a;
}

// --- hand-checked layouts ---

TEST(Formats, EllLayout) {
  const auto e = spmv::to_ell(small());
  EXPECT_EQ(e.width, 4);
  EXPECT_EQ(e.col_idx, (std::vector<std::int64_t>{0, -1, 0, 2, -1, 1, -1, -1, 2, -1, -1, 3}));
  EXPECT_EQ(e.values, (std::vector<double>{1, 0, 3, 2, 0, 4, 0, 0, 5, 0, 0, 6}));
  EXPECT_EQ(spmv::storage_bytes(e), 12 * (8 + 8));
  const auto r = spmv::to_ellr(small());
  EXPECT_EQ(r.row_length, (std::vector<std::int64_t>{2, 0, 4}));
  EXPECT_EQ(r.ell.col_idx, e.col_idx);
  EXPECT_EQ(spmv::storage_bytes(r), 12 * 16 + 3 * 8);
}

TEST(Formats, DiaLayoutKeepsStoredZerosApartFromPadding) {
  auto a = small();
  a.values[0] = 0.0;  // A(0, 0) is a stored zero; A(1, 1) on the same diagonal is padding
  const auto d = spmv::to_dia(a);
  EXPECT_EQ(d.offsets, (std::vector<std::int64_t>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(d.values, (std::vector<double>{0, 0, 3, 0, 0, 4, 0, 0, 5, 0, 0, 6, 2, 0, 0}));
  const std::set<std::int64_t> stored{2, 5, 6, 8, 11, 12};
  for (std::int64_t s = 0; s < d.slots(); ++s) EXPECT_EQ(d.is_stored(s), stored.count(s) == 1) << "slot " << s;
  EXPECT_TRUE(bit_equal(spmv::to_csr(d), a));
}

TEST(Formats, HybLayout) {
  Options o;
  o.hyb_ell_width = 1;
  const auto h = spmv::to_hyb(small(), o);
  EXPECT_EQ(h.ell.width, 1);
  EXPECT_EQ(h.ell.col_idx, (std::vector<std::int64_t>{0, -1, 0}));
  EXPECT_EQ(h.ell.values, (std::vector<double>{1, 0, 3}));
  EXPECT_EQ(h.coo.row_idx, (std::vector<std::int64_t>{0, 2, 2, 2}));
  EXPECT_EQ(h.coo.col_idx, (std::vector<std::int64_t>{2, 1, 2, 3}));
  EXPECT_EQ(h.coo.values, (std::vector<double>{2, 4, 5, 6}));
  // below 4096 rows the Bell & Garland rule puts everything in COO
  EXPECT_EQ(spmv::hyb_ell_width(small()), 0);
  const auto rule = spmv::to_hyb(small());
  EXPECT_EQ(rule.ell.width, 0);
  EXPECT_EQ(rule.coo.values.size(), 6u);
  // an explicit width above the longest row is lowered to it
  o.hyb_ell_width = 100;
  EXPECT_EQ(spmv::to_hyb(small(), o).ell.width, 4);
}

// rows with `many` rows of length `long_len` first, the rest of length `short_len`.
D two_lengths(std::int64_t rows, std::int64_t many, std::int64_t long_len, std::int64_t short_len) {
  D a;
  a.rows = rows;
  a.cols = long_len;
  a.row_ptr.assign(rows + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = r < many ? long_len : short_len;
    for (std::int64_t j = 0; j < n; ++j) {
      a.col_idx.push_back(j);
      a.values.push_back(1.0 + j);
    }
    a.row_ptr[r + 1] = static_cast<std::int64_t>(a.col_idx.size());
  }
  return a;
}

TEST(Formats, HybRuleBoundaries) {
  // K: the largest width that at least max(4096, rows / 3) rows reach
  EXPECT_EQ(spmv::hyb_ell_width(spmv::gen::poisson2d(100)), 5);
  EXPECT_EQ(spmv::hyb_ell_width(two_lengths(15000, 5000, 10, 2)), 10);  // 3 * 5000 == rows
  EXPECT_EQ(spmv::hyb_ell_width(two_lengths(15000, 4999, 10, 2)), 2);   // 3 * 4999 < rows
  EXPECT_EQ(spmv::hyb_ell_width(two_lengths(12000, 4096, 7, 1)), 7);    // exactly 4096 rows
  EXPECT_EQ(spmv::hyb_ell_width(two_lengths(12000, 4095, 7, 1)), 1);    // one short of 4096
  EXPECT_EQ(spmv::hyb_ell_width(two_lengths(4095, 4095, 7, 1)), 0);     // fewer than 4096 rows
  const auto h = spmv::to_hyb(spmv::gen::long_rows(6000, 6000, 20, 500, 4, 8));
  EXPECT_EQ(h.ell.width, 4);
  EXPECT_EQ(h.coo.values.size(), 20u * 496u);
}

TEST(Formats, SellLayout) {
  // lengths [1, 3, 0, 2, 4]; C = 2, sigma = 4 -> windows {0..3} {4}
  const auto a = make(5, 5, {0, 1, 4, 4, 6, 10}, {0, 1, 2, 4, 0, 3, 0, 1, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  Options o;
  o.sell_c = 2;
  o.sell_sigma = 4;
  const auto s = spmv::to_sell(a, o);
  EXPECT_EQ(s.perm, (std::vector<std::int64_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(s.slice_width, (std::vector<std::int64_t>{3, 1, 4}));
  EXPECT_EQ(s.slice_ptr, (std::vector<std::int64_t>{0, 6, 8, 16}));
  EXPECT_EQ(s.col_idx, (std::vector<std::int64_t>{1, 0, 2, 3, 4, -1, 0, -1, 0, -1, 1, -1, 2, -1, 3, -1}));
  EXPECT_EQ(s.values, (std::vector<double>{2, 5, 3, 6, 4, 0, 1, 0, 7, 0, 8, 0, 9, 0, 10, 0}));
  EXPECT_TRUE(bit_equal(spmv::to_csr(s), a));
  // sigma == C sorts within each slice only
  o.sell_sigma = 2;
  EXPECT_EQ(spmv::to_sell(a, o).perm, (std::vector<std::int64_t>{1, 0, 3, 2, 4}));
  // C = 1 stores no padding at all
  o.sell_c = 1;
  o.sell_sigma = 1;
  EXPECT_EQ(spmv::to_sell(a, o).slice_ptr.back(), a.nnz());
}

TEST(Formats, SellOptions) {
  const auto a = small();
  Options o;
  o.sell_c = 3;
  EXPECT_THROW(spmv::to_sell(a, o), spmv::InvalidArgument);
  o.sell_c = -4;
  EXPECT_THROW(spmv::to_sell(a, o), spmv::InvalidArgument);
  o.sell_c = 32;
  o.sell_sigma = 48;
  EXPECT_THROW(spmv::to_sell(a, o), spmv::InvalidArgument);
  o.sell_sigma = -32;
  EXPECT_THROW(spmv::to_sell(a, o), spmv::InvalidArgument);
  o.sell_c = 0;
  o.sell_sigma = 0;
  auto s = spmv::to_sell(a, o);
  EXPECT_EQ(s.c, 32);
  EXPECT_EQ(s.sigma, 256);
  o.sell_c = 512;  // the default window grows to one slice
  o.max_padding = 1e6;  // 512 x 4 slots for 6 nonzeros
  s = spmv::to_sell(a, o);
  EXPECT_EQ(s.sigma, 512);
}

// --- round trips ---

template <class T>
class FormatsTyped : public ::testing::Test {};
using Types = ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                               std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(FormatsTyped, Types);

// Converts and compares, or checks the refusal was predicted (and names the format).
template <class Convert>
void round_trip(const char* format, bool refuse, Convert convert) {
  SCOPED_TRACE(format);
  if (refuse) {
    try {
      convert();
      ADD_FAILURE() << format << " accepted a matrix over the padding limit";
    } catch (const spmv::Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find(format), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("use "), std::string::npos) << e.what();
    }
  } else {
    EXPECT_NO_THROW(convert());
  }
}

template <class V, class I>
void check_sell_invariants(const spmv::CsrMatrix<V, I>& a, const spmv::SellMatrix<V, I>& s) {
  const auto l = lengths(a);
  std::vector<char> seen(a.rows, 0);
  for (I p = 0; p < a.rows; ++p) {
    ASSERT_FALSE(seen[s.perm[p]]);
    seen[s.perm[p]] = 1;
    if (p % s.sigma != 0) {  // sorted descending within a window, ties in row order
      const auto prev = s.perm[p - 1], cur = s.perm[p];
      EXPECT_TRUE(l[prev] > l[cur] || (l[prev] == l[cur] && prev < cur)) << "position " << p;
    }
  }
  for (std::int64_t sl = 0; sl < s.num_slices(); ++sl) {
    std::int64_t longest = 0;
    for (std::int64_t p = sl * s.c; p < std::min<std::int64_t>((sl + 1) * s.c, a.rows); ++p)
      longest = std::max(longest, l[s.perm[p]]);
    EXPECT_EQ(s.slice_width[sl], longest);
  }
}

TYPED_TEST(FormatsTyped, RoundTripsAreExact) {
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  auto set = matrices();
  auto special = explicit_zeros();  // NaN and infinities survive too (no arithmetic on the values)
  special.values[1] = std::numeric_limits<double>::quiet_NaN();
  special.values[3] = -std::numeric_limits<double>::infinity();
  set.push_back({"special_values", special});
  for (const auto& [name, dm] : set) {
    SCOPED_TRACE(name);
    const auto a = spmv::convert<V, I>(dm);
    const auto nnz = a.nnz();
    const Options o;

    EXPECT_TRUE(bit_equal(spmv::to_csr<V, I>(spmv::to_coo(a)), a));
    const bool ell_refused = over_limit(ell_slots(a), nnz);
    round_trip("ELL", ell_refused, [&] {
      const auto e = spmv::to_ell(a, o);
      EXPECT_EQ(e.slots(), static_cast<std::int64_t>(ell_slots(a)));
      EXPECT_TRUE(bit_equal(spmv::to_csr(e), a));
    });
    round_trip("ELL-R", ell_refused, [&] { EXPECT_TRUE(bit_equal(spmv::to_csr(spmv::to_ellr(a, o)), a)); });
    const auto canon = canonical(a);
    round_trip("DIA", over_limit(dia_slots(canon), canon.nnz()), [&] {
      const auto d = spmv::to_dia(a, o);
      EXPECT_EQ(d.slots(), static_cast<std::int64_t>(dia_slots(canon)));
      EXPECT_TRUE(bit_equal(spmv::to_csr(d), canon));  // DIA returns the canonical form
    });
    round_trip("HYB", false, [&] {
      const auto h = spmv::to_hyb(a, o);
      EXPECT_EQ(h.ell.width, spmv::hyb_ell_width(a));
      EXPECT_TRUE(bit_equal(spmv::to_csr(h), a));
    });
    for (const auto& cs : {std::pair{32, 256}, std::pair{4, 16}, std::pair{1, 1}, std::pair{8, 8}}) {
      const int c = cs.first, sigma = cs.second;
      Options so;
      so.sell_c = c;
      so.sell_sigma = sigma;
      round_trip("SELL", over_limit(sell_slots(a, c, sigma), nnz), [&] {
        const auto s = spmv::to_sell(a, so);
        EXPECT_EQ(s.slice_ptr.back(), static_cast<std::int64_t>(sell_slots(a, c, sigma)));
        check_sell_invariants(a, s);
        EXPECT_TRUE(bit_equal(spmv::to_csr(s), a));
      });
    }
    round_trip("compressed-csr", ccsr_refused(a), [&] {
      const auto m = spmv::to_compressed_csr(a, o);
      EXPECT_EQ(m.slots(), static_cast<std::int64_t>(ccsr_slots(a)));
      EXPECT_TRUE(bit_equal(spmv::to_csr(m), a));
    });
    for (int width : {0, 1, 3}) {
      Options ho;
      ho.hyb_ell_width = width;
      round_trip("HYB's ELL part", over_limit(hyb_slots(a, width), nnz),
                 [&] { EXPECT_TRUE(bit_equal(spmv::to_csr(spmv::to_hyb(a, ho)), a)); });
    }
  }
}

TEST(Formats, TheAdversarialSetIsRefusedWhereExpected) {
  // guards against a predicate that never refuses: these cases must exercise both branches
  const auto huge = spmv::gen::long_rows(500, 3000, 1, 2500, 2, 7);
  EXPECT_THROW(spmv::to_ell(huge), spmv::Unsupported);
  EXPECT_THROW(spmv::to_ellr(huge), spmv::Unsupported);
  EXPECT_THROW(spmv::to_dia(huge), spmv::Unsupported);
  EXPECT_THROW(spmv::to_sell(huge), spmv::Unsupported);
  EXPECT_NO_THROW(spmv::to_hyb(huge));
  EXPECT_THROW(spmv::to_dia(spmv::gen::random_uniform(300, 200, 7, 1)), spmv::Unsupported);
  EXPECT_NO_THROW(spmv::to_dia(spmv::gen::banded(100, 3, 2)));
}

// --- padding limits ---

// rows x 1 with a single entry (0, 0): ELL and DIA store `rows` slots for 1 nonzero.
D single_entry(std::int64_t rows) {
  D a;
  a.rows = rows;
  a.cols = 1;
  a.row_ptr.assign(rows + 1, 1);
  a.row_ptr[0] = 0;
  a.col_idx = {0};
  a.values = {1.0};
  return a;
}

TEST(Formats, PaddingLimitBoundary) {
  // allowed: slots <= 3 * nnz + 1024
  EXPECT_NO_THROW(spmv::to_ell(single_entry(1027)));
  EXPECT_NO_THROW(spmv::to_dia(single_entry(1027)));
  EXPECT_THROW(spmv::to_ell(single_entry(1028)), spmv::Unsupported);
  EXPECT_THROW(spmv::to_ellr(single_entry(1028)), spmv::Unsupported);
  EXPECT_THROW(spmv::to_dia(single_entry(1028)), spmv::Unsupported);
  try {
    spmv::to_ell(single_entry(1028));
  } catch (const spmv::Unsupported& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ELL would store 1028 slots for 1 nonzeros"), std::string::npos) << m;
    EXPECT_NE(m.find("allowed 3"), std::string::npos) << m;
    EXPECT_NE(m.find("use csr-vector or hyb"), std::string::npos) << m;
  }
  Options o;
  o.max_padding = 0;  // zero means the default factor
  EXPECT_THROW(spmv::to_ell(single_entry(1028), o), spmv::Unsupported);
  o.max_padding = 1e9;
  EXPECT_NO_THROW(spmv::to_ell(single_entry(1028), o));
  EXPECT_NO_THROW(spmv::to_dia(single_entry(1028), o));
  o.max_padding = std::nan("");
  EXPECT_THROW(spmv::to_ell(single_entry(10), o), spmv::InvalidArgument);
  // tiny matrices are never refused, whatever their shape
  EXPECT_NO_THROW(spmv::to_ell(spmv::gen::long_rows(10, 30, 1, 30, 0, 1)));
}

TEST(Formats, RefusalComesBeforeAllocation) {
  // 10^6 rows, one of 10^6 entries: ELL would need 10^12 slots (16 TB); refusing must not try
  const auto a = spmv::gen::long_rows(1000000, 1000000, 1, 1000000, 0, 1);
  EXPECT_THROW(spmv::to_ell(a), spmv::Unsupported);
  EXPECT_THROW(spmv::to_ellr(a), spmv::Unsupported);
  EXPECT_THROW(spmv::to_dia(a), spmv::Unsupported);
  EXPECT_THROW(spmv::to_sell(a), spmv::Unsupported);
  Options o;
  o.hyb_ell_width = 1000000;
  EXPECT_THROW(spmv::to_hyb(a, o), spmv::Unsupported);
  EXPECT_NO_THROW(spmv::to_hyb(a));
}

TEST(Formats, MalformedInputsAreRejected) {
  auto bad = small();
  bad.col_idx[1] = 9;
  EXPECT_THROW(spmv::to_ell(bad), spmv::InvalidArgument);
  EXPECT_THROW(spmv::to_dia(bad), spmv::InvalidArgument);
  EXPECT_THROW(spmv::to_sell(bad), spmv::InvalidArgument);

  auto e = spmv::to_ell(small());
  std::swap(e.col_idx[0], e.col_idx[3]);  // row 0's columns swapped: unsorted is still valid
  EXPECT_NO_THROW(spmv::to_csr(e));
  e.col_idx[0] = -1;  // row 0 now has padding before its second entry
  EXPECT_THROW(spmv::to_csr(e), spmv::InvalidArgument);
  e.values.pop_back();
  EXPECT_THROW(spmv::to_csr(e), spmv::InvalidArgument);

  auto r = spmv::to_ellr(small());
  r.row_length[0] = 1;
  EXPECT_THROW(spmv::to_csr(r), spmv::InvalidArgument);

  auto d = spmv::to_dia(small());
  d.stored[0] |= 1u;  // slot 0: row 0 on diagonal -2, outside the matrix
  EXPECT_THROW(spmv::to_csr(d), spmv::InvalidArgument);

  auto s = spmv::to_sell(small());
  s.perm[0] = s.perm[1];
  EXPECT_THROW(spmv::to_csr(s), spmv::InvalidArgument);

  Options o;
  o.hyb_ell_width = 1;
  auto h = spmv::to_hyb(small(), o);
  std::swap(h.coo.row_idx[0], h.coo.row_idx[3]);
  EXPECT_THROW(spmv::to_csr(h), spmv::InvalidArgument);
}

// --- CPU format kernels ---

constexpr Algorithm kFormatAlgorithms[] = {Algorithm::Coo, Algorithm::Ell, Algorithm::EllR, Algorithm::EllRVector,
                                           Algorithm::Dia, Algorithm::Hyb, Algorithm::Sell,
                                           Algorithm::CompressedCsr};

template <class V, class I>
bool predicted_refusal(const spmv::CsrMatrix<V, I>& a, Algorithm alg, const Options& o) {
  switch (alg) {
    case Algorithm::Ell:
    case Algorithm::EllR:
    case Algorithm::EllRVector: return over_limit(ell_slots(a), a.nnz());
    case Algorithm::Dia: {
      const auto c = canonical(a);
      return over_limit(dia_slots(c), c.nnz());
    }
    case Algorithm::Sell: {  // the CPU's slice height is the SIMD width unless set
      const int c = spmv::detail::cpu_sell_c<V, I>(o);
      return over_limit(sell_slots(a, c, o.sell_sigma ? o.sell_sigma : std::max(256, c)), a.nnz());
    }
    case Algorithm::Hyb: return o.hyb_ell_width >= 0 && over_limit(hyb_slots(a, o.hyb_ell_width), a.nnz());
    case Algorithm::CompressedCsr: return ccsr_refused(a);
    default: return false;
  }
}

std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  // values in [-1, 1) from a generator row (the generators own the only RNG in the library)
  const auto g = spmv::gen::random_uniform(1, static_cast<std::int64_t>(n), static_cast<std::int64_t>(n), seed);
  return g.values;
}

// y = alpha op(A) x + beta y0 in double with the per-entry bound (count + 3) eps_V (|beta y0| + |alpha| sum |a x|),
// count = terms accumulated into that entry: recursive summation error gamma_n plus the roundings of the
// products, alpha, beta and the final add, each at most u = eps / 2; the factor 2 left over covers the
// reference's own (double) rounding.
template <class V, class I>
void check_product(const spmv::detail::CpuKernel<V, I>& k, const spmv::CsrMatrix<V, I>& a, Operation op,
                   const std::vector<V>& x, const std::vector<V>& y0) {
  const bool n = op == Operation::NonTranspose;
  const std::size_t ny = n ? a.rows : a.cols;
  const double eps = std::numeric_limits<V>::epsilon();
  std::vector<double> dot(ny, 0), mag(ny, 0);
  std::vector<std::int64_t> count(ny, 0);
  for (I r = 0; r < a.rows; ++r)
    for (I p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const std::size_t out = n ? r : a.col_idx[p];
      const double t = static_cast<double>(a.values[p]) * static_cast<double>(x[n ? a.col_idx[p] : r]);
      dot[out] += t;
      mag[out] += std::abs(t);
      ++count[out];
    }
  for (double alpha : {0.0, 1.0, -1.0, 0.5})
    for (double beta : {0.0, 1.0, -1.0, 0.5}) {
      std::vector<V> y = y0;
      if (beta == 0) std::fill(y.begin(), y.end(), std::numeric_limits<V>::quiet_NaN());
      k.run(static_cast<V>(alpha), x.data(), static_cast<V>(beta), y.data());
      for (std::size_t i = 0; i < ny; ++i) {
        const double by = beta == 0 ? 0.0 : beta * static_cast<double>(y0[i]);
        const double ref = alpha * dot[i] + by;
        const double bound = (count[i] + 3) * eps * (std::abs(by) + std::abs(alpha) * mag[i]);
        ASSERT_TRUE(std::isfinite(static_cast<double>(y[i]))) << "alpha " << alpha << " beta " << beta << " i " << i;
        ASSERT_LE(std::abs(static_cast<double>(y[i]) - ref), bound)
            << "alpha " << alpha << " beta " << beta << " i " << i << " got " << y[i] << " want " << ref;
      }
    }
}

template <class V, class I>
void check_kernels(const spmv::CsrMatrix<V, I>& a, const Options& o) {
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const bool n = op == Operation::NonTranspose;
    const auto xd = random_vector(n ? a.cols : a.rows, 11);
    const auto yd = random_vector(n ? a.rows : a.cols, 12);
    const std::vector<V> x(xd.begin(), xd.end()), y0(yd.begin(), yd.end());
    for (Algorithm alg : kFormatAlgorithms) {
      SCOPED_TRACE(std::string(spmv::to_string(alg)) + " " + std::string(spmv::to_string(op)));
      if (predicted_refusal(a, alg, o)) {
        EXPECT_THROW(spmv::detail::make_cpu_format_kernel(a, alg, op, o), spmv::Unsupported);
        continue;
      }
      const auto k = spmv::detail::make_cpu_format_kernel(a, alg, op, o);
      EXPECT_FALSE(k.policy.empty());
      check_product(k, a, op, x, y0);
    }
  }
}

TYPED_TEST(FormatsTyped, CpuKernelsMatchTheReference) {
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const auto& [name, dm] : matrices()) {
    SCOPED_TRACE(name);
    check_kernels(spmv::convert<V, I>(dm), Options{});
  }
}

TYPED_TEST(FormatsTyped, CpuKernelsWithOptions) {
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  Options o;
  o.sell_c = 4;
  o.sell_sigma = 16;
  o.hyb_ell_width = 2;
  for (const char* name : {"random", "rmat", "empty_rows", "unsorted_duplicates", "hyb_split"})
    for (const auto& m : matrices())
      if (m.name == name) {
        SCOPED_TRACE(name);
        check_kernels(spmv::convert<V, I>(m.a), o);
      }
}

TEST(FormatKernels, PolicyAndExtraBytes) {
  const auto a = spmv::gen::poisson2d(20);
  const Options o;
  auto k = spmv::detail::make_cpu_format_kernel(a, Algorithm::Ell, Operation::NonTranspose, o);
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(spmv::to_ell(a)));
  EXPECT_NE(k.policy.find("width=5"), std::string::npos) << k.policy;
  k = spmv::detail::make_cpu_format_kernel(a, Algorithm::EllRVector, Operation::NonTranspose, o);
  EXPECT_NE(k.policy.find("same sequential row loop as ellr"), std::string::npos) << k.policy;
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(spmv::to_ellr(a)));
  k = spmv::detail::make_cpu_format_kernel(a, Algorithm::Dia, Operation::Transpose, o);
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(spmv::to_dia(a)));
  EXPECT_NE(k.policy.find("diagonals=5"), std::string::npos) << k.policy;
  k = spmv::detail::make_cpu_format_kernel(a, Algorithm::Hyb, Operation::NonTranspose, o);
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(spmv::to_hyb(a)));
  k = spmv::detail::make_cpu_format_kernel(a, Algorithm::Sell, Operation::NonTranspose, o);
  Options sell = o;  // the CPU converts at C = the SIMD width, keeps 16-bit column offsets in narrow slices
  using I = std::decay_t<decltype(a.col_idx[0])>;  // and per slice: full, base, col_at, in_place, narrow, a record
  sell.sell_c = spmv::detail::cpu_sell_c<double, I>(o);
  const auto converted = spmv::to_sell(a, sell);
  const auto narrow_at = k.policy.find(" narrow=");
  ASSERT_NE(narrow_at, std::string::npos) << k.policy;
  const std::size_t narrow = std::stoull(k.policy.substr(narrow_at + 8));
  EXPECT_EQ(narrow, static_cast<std::size_t>(converted.slice_ptr.back()));  // 400 columns: every slice narrow
  struct SliceRecord {  // the layout of the sweep's record per slice (SliceDesc, src/cpu/sell_simd.cpp)
    std::int64_t col_at, base, full, width;
    std::uint8_t narrow, in_place;
  };
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(converted) - narrow * (sizeof(I) - sizeof(std::uint16_t)) +
                               static_cast<std::size_t>(converted.num_slices()) *
                                   (2 * sizeof(I) + sizeof(std::int64_t) + 2 * sizeof(std::uint8_t) +
                                    sizeof(SliceRecord)));
  EXPECT_NE(k.policy.find("sell C=" + std::to_string(sell.sell_c) + " "), std::string::npos) << k.policy;
  k = spmv::detail::make_cpu_format_kernel(a, Algorithm::CompressedCsr, Operation::NonTranspose, o);
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(spmv::to_compressed_csr(a)));
  EXPECT_NE(k.policy.find("cols=16bit(100% slices) values=u8 table(2)"), std::string::npos) << k.policy;
  k = spmv::detail::make_cpu_format_kernel(a, Algorithm::Coo, Operation::NonTranspose, o);
  EXPECT_EQ(k.extra_bytes, spmv::storage_bytes(spmv::to_coo(a)));
}

TEST(FormatKernels, NonFormatAlgorithmsAreRejected) {
  const auto a = spmv::gen::poisson2d(4);
  for (Algorithm alg : {Algorithm::Auto, Algorithm::RowLoop, Algorithm::MergePath, Algorithm::CusparseCooAlg1})
    EXPECT_THROW(spmv::detail::make_cpu_format_kernel(a, alg, Operation::NonTranspose, Options{}),
                 spmv::InvalidArgument);
}

TEST(FormatKernels, DiaPaddingNeverMultipliesInfinity) {
  // A(1, 1) is padding on the main diagonal; x_1 = Inf must not turn y_1 into NaN (y_1 = A(1, 0) x_0).
  const auto a = make(2, 2, {0, 1, 2}, {0, 0}, {2.0, 3.0});
  const std::vector<double> x{1.0, std::numeric_limits<double>::infinity()};
  std::vector<double> y(2, std::nan(""));
  const auto k = spmv::detail::make_cpu_format_kernel(a, Algorithm::Dia, Operation::NonTranspose, Options{});
  k.run(1.0, x.data(), 0.0, y.data());
  EXPECT_EQ(y[0], 2.0);
  EXPECT_EQ(y[1], 3.0);
}

// --- Compressed CSR ---

using spmv::CompressedValues;

// One row per entry of `values` (column = row), so the value encoding sees exactly these values.
D diagonal(const std::vector<double>& values) {
  const auto n = static_cast<std::int64_t>(values.size());
  std::vector<std::int64_t> ptr(n + 1), col(n);
  for (std::int64_t i = 0; i < n; ++i) {
    ptr[i + 1] = i + 1;
    col[i] = i;
  }
  return make(n, n, ptr, col, values);
}

std::vector<double> cycling(std::int64_t count, std::int64_t distinct) {
  std::vector<double> v(count);
  for (std::int64_t k = 0; k < count; ++k) v[k] = static_cast<double>(k % distinct) + 0.5;  // exact in float
  return v;
}

TEST(CompressedCsr, Layout) {
  // small(): one slice of 3 lanes, width 4: entry k of lane l at slot 3k + l.
  const auto m = spmv::to_compressed_csr(small());
  EXPECT_EQ(m.num_slices(), 1);
  EXPECT_EQ(m.slice_ptr, (std::vector<std::int64_t>{0, 12}));
  EXPECT_EQ(m.row_length, (std::vector<std::uint16_t>{2, 0, 4}));
  EXPECT_EQ(m.col_base, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(m.wide, (std::vector<std::uint8_t>{0}));
  EXPECT_EQ(m.col_start, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(m.col16, (std::vector<std::uint16_t>{0, 0, 0, 2, 0, 1, 0, 0, 2, 0, 0, 3}));
  EXPECT_TRUE(m.col32.empty());
  EXPECT_EQ(m.value_mode, CompressedValues::Code8);
  EXPECT_EQ(m.table, (std::vector<double>{1, 2, 3, 4, 5, 6}));  // ascending bits (positive: ascending values)
  EXPECT_EQ(m.code8, (std::vector<std::uint8_t>{0, 0, 2, 1, 0, 3, 0, 0, 4, 0, 0, 5}));
  EXPECT_EQ(spmv::compressed_csr_summary(m), "slices=1 cols=16bit(100% slices) values=u8 table(6) slots=12");
  EXPECT_EQ(spmv::storage_bytes(m), std::size_t{3 * 2 + 2 * 8 + 8 + 8 + 1 + 12 * 2 + 6 * 8 + 12});

  // 33 rows: a full slice and a last slice of one lane; the base is the slice's smallest column.
  std::vector<std::int64_t> ptr{0}, col;
  for (std::int64_t r = 0; r < 33; ++r) {
    col.push_back(r == 32 ? 40 : r + 5);
    ptr.push_back(r + 1);
  }
  const auto two = spmv::to_compressed_csr(make(33, 50, ptr, col, std::vector<double>(33, 1.0)));
  EXPECT_EQ(two.slice_ptr, (std::vector<std::int64_t>{0, 32, 33}));
  EXPECT_EQ(two.col_base, (std::vector<std::int64_t>{5, 40}));
  EXPECT_EQ(two.col_start, (std::vector<std::int64_t>{0, 32}));
  EXPECT_EQ(two.value_mode, CompressedValues::Pattern);
  EXPECT_TRUE(two.table.empty() && two.code8.empty() && two.code16.empty() && two.values.empty());
  EXPECT_EQ(spmv::compressed_csr_summary(two), "slices=2 cols=16bit(100% slices) values=none(pattern) slots=33");
}

TEST(CompressedCsr, TableIsInAscendingBitOrder) {
  // First appearance 3, -1, 2, -0.0, 0.0: by unsigned bits 0.0 < 2 < 3 < -0.0 < -1 (the sign bit is the
  // top bit), the order the CUDA conversion's sort + unique gives; codes index that order.
  const std::vector<std::int64_t> ptr{0, 5};
  const std::vector<std::int64_t> col{0, 1, 2, 3, 4};
  const auto m = spmv::to_compressed_csr(make(1, 5, ptr, col, std::vector<double>{3, -1, 2, -0.0, 0.0}));
  ASSERT_EQ(m.value_mode, CompressedValues::Code8);
  ASSERT_EQ(m.table.size(), 5u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(m.table[0]), std::bit_cast<std::uint64_t>(0.0));
  EXPECT_EQ(m.table[1], 2.0);
  EXPECT_EQ(m.table[2], 3.0);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(m.table[3]), std::bit_cast<std::uint64_t>(-0.0));
  EXPECT_EQ(m.table[4], -1.0);
  EXPECT_EQ(m.code8, (std::vector<std::uint8_t>{2, 4, 1, 3, 0}));
}

TEST(CompressedCsr, ColumnOffsetWidthPerSlice) {
  // Slice 0 straddles 2^16 (columns 0 and 70000), slice 1 spans exactly 65535 (16-bit), slice 2 exactly
  // 65536 (32-bit), slice 3 is empty.
  std::vector<std::int64_t> ptr(129, 0), col;
  auto put = [&](std::int64_t row, std::int64_t c) {
    col.push_back(c);
    for (std::int64_t r = row + 1; r < 129; ++r) ++ptr[r];
  };
  // rows in increasing order so that col stays in CSR order
  put(0, 0);
  put(31, 70000);
  put(32, 1000);
  put(63, 1000 + 65535);
  put(64, 5000);
  put(64, 5000 + 65536);
  const auto a = make(128, 80000, ptr, col, std::vector<double>(col.size(), 2.0));
  const auto m = spmv::to_compressed_csr(a);
  EXPECT_EQ(m.wide, (std::vector<std::uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(m.col_base, (std::vector<std::int64_t>{0, 1000, 5000, 0}));
  EXPECT_EQ(m.col32.size(), static_cast<std::size_t>(32 + 64));  // slices 0 (width 1) and 2 (width 2)
  EXPECT_EQ(m.col16.size(), static_cast<std::size_t>(32));
  EXPECT_EQ(m.col_start, (std::vector<std::int64_t>{0, 0, 32, 32}));
  EXPECT_EQ(m.col16[31], 65535);
  EXPECT_EQ(m.col32[31], 70000u);
  EXPECT_EQ(m.col32[32 + 32], 65536u);  // row 64's second entry: slot 1 * 32 + 0 of slice 2
  EXPECT_EQ(spmv::compressed_csr_summary(m), "slices=4 cols=16bit(50% slices) values=u8 table(1) slots=128");
  EXPECT_TRUE(bit_equal(spmv::to_csr(m), a));
}

TEST(CompressedCsr, ValueEncodingBoundaries) {
  struct Case {
    std::int64_t distinct;
    CompressedValues mode;
  };
  for (const Case c : {Case{1, CompressedValues::Code8}, Case{255, CompressedValues::Code8},
                       Case{256, CompressedValues::Code8}, Case{257, CompressedValues::Code16},
                       Case{65536, CompressedValues::Code16}, Case{65537, CompressedValues::Raw}}) {
    SCOPED_TRACE(c.distinct);
    const auto a = diagonal(cycling(std::max<std::int64_t>(2 * c.distinct, 600), c.distinct));
    const auto m = spmv::to_compressed_csr(a);
    EXPECT_EQ(m.value_mode, c.mode);
    EXPECT_EQ(m.table.size(), c.mode == CompressedValues::Raw ? 0u : static_cast<std::size_t>(c.distinct));
    EXPECT_TRUE(bit_equal(spmv::to_csr(m), a));
    const auto f = spmv::convert<float, std::int32_t>(a);  // the same values, exact in float
    const auto mf = spmv::to_compressed_csr(f);
    EXPECT_EQ(mf.value_mode, c.mode);
    EXPECT_TRUE(bit_equal(spmv::to_csr(mf), f));
  }
  // Bit-exact, not ==: +0 and -0 are two values; every NaN with the same bits is one.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto z = diagonal({0.0, -0.0, nan, nan, 1.0, -std::numeric_limits<double>::infinity()});
  const auto mz = spmv::to_compressed_csr(z);
  EXPECT_EQ(mz.value_mode, CompressedValues::Code8);
  EXPECT_EQ(mz.table.size(), 5u);
  EXPECT_TRUE(bit_equal(spmv::to_csr(mz), z));
  // Every value exactly 1: a pattern, nothing stored; one value that is not 1 makes it a table.
  auto ones = spmv::gen::random_uniform(300, 300, 8, 3);
  std::fill(ones.values.begin(), ones.values.end(), 1.0);
  EXPECT_EQ(spmv::to_compressed_csr(ones).value_mode, CompressedValues::Pattern);
  EXPECT_TRUE(bit_equal(spmv::to_csr(spmv::to_compressed_csr(ones)), ones));
  ones.values.back() = std::nextafter(1.0, 2.0);
  EXPECT_EQ(spmv::to_compressed_csr(ones).value_mode, CompressedValues::Code8);
  EXPECT_TRUE(bit_equal(spmv::to_csr(spmv::to_compressed_csr(ones)), ones));
}

TEST(CompressedCsr, Refusals) {
  // Row lengths are uint16: 65535 entries fit, 65536 are refused (naming the reason).
  const auto fits = spmv::gen::long_rows(1, 70000, 1, 65535, 0, 1);
  EXPECT_EQ(spmv::to_compressed_csr(fits).row_length[0], 65535);
  const auto too_long = spmv::gen::long_rows(1, 70000, 1, 65536, 0, 1);
  try {
    spmv::to_compressed_csr(too_long);
    ADD_FAILURE() << "a row of 65536 entries was accepted";
  } catch (const spmv::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("16-bit row length"), std::string::npos) << e.what();
  }
  // The padding rule of the padded formats: one row of 5000 among 31 empty rows of its slice means
  // 32 * 5000 slots for 5000 nonzeros: refused at the default factor 3, accepted when max_padding allows it.
  const auto lonely = spmv::gen::long_rows(32, 6000, 1, 5000, 0, 2);
  EXPECT_THROW(spmv::to_compressed_csr(lonely), spmv::Unsupported);
  Options o;
  o.max_padding = 40;
  EXPECT_NO_THROW(spmv::to_compressed_csr(lonely, o));
  o.max_padding = std::nan("");
  EXPECT_THROW(spmv::to_compressed_csr(lonely, o), spmv::InvalidArgument);
  // A slice spanning 2^32 columns or more (64-bit indices only) is refused; 2^32 - 1 is accepted.
  using L = spmv::CsrMatrix<double, std::int64_t>;
  const std::int64_t big = std::int64_t{1} << 33;
  const std::int64_t two32 = std::int64_t{1} << 32;
  const L wide_ok = spmv::make_csr<double, std::int64_t>(2, big, {0, 1, 2}, {7, 7 + two32 - 1}, {1, 2});
  EXPECT_EQ(spmv::to_compressed_csr(wide_ok).col32[1], 0xFFFFFFFFu);
  const L too_wide = spmv::make_csr<double, std::int64_t>(2, big, {0, 1, 2}, {7, 7 + two32}, {1, 2});
  EXPECT_THROW(spmv::to_compressed_csr(too_wide), spmv::Unsupported);
  // Malformed input and malformed formats.
  auto bad = small();
  bad.col_idx[1] = 9;
  EXPECT_THROW(spmv::to_compressed_csr(bad), spmv::InvalidArgument);
  auto m = spmv::to_compressed_csr(small());
  m.code8[0] = 6;  // outside the table of 6 values
  EXPECT_THROW(spmv::to_csr(m), spmv::InvalidArgument);
  m = spmv::to_compressed_csr(small());
  m.col16[2 * 3 + 2] = 7;  // row 2's third entry: column 7 >= cols
  EXPECT_THROW(spmv::to_csr(m), spmv::InvalidArgument);
  m = spmv::to_compressed_csr(small());
  m.row_length[1] = 5;  // longer than the slice
  EXPECT_THROW(spmv::to_csr(m), spmv::InvalidArgument);
}

TEST(CompressedCsr, ReadsFewerBytesThanCsrOnAStencil) {
  // poisson2d: 2 distinct values, columns within a 32-row slice span < 2^16: per nonzero 2 bytes of column
  // offset + 1 byte of code (+ the row lengths and boundary padding) against CSR's 8 + 4.
  const auto a = spmv::gen::poisson2d(200);
  const auto m = spmv::to_compressed_csr(a);
  const double csr_bytes = static_cast<double>(a.nnz()) * 12 + static_cast<double>(a.rows + 1) * 8;
  EXPECT_LT(static_cast<double>(spmv::storage_bytes(m)), csr_bytes / 3) << spmv::compressed_csr_summary(m);
}

TEST(CompressedCsr, PaddingIsNeverRead) {
  // Row 0 has one entry, row 1 three: row 0's padding slots (column offset 0, code 0) must not bring
  // x[base] = Inf in, and alpha = 0 must not read x at all.
  const auto a = make(2, 3, {0, 1, 4}, {1, 0, 1, 2}, {2.0, 3.0, 4.0, 5.0});
  const double inf = std::numeric_limits<double>::infinity();
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const auto k = spmv::detail::make_cpu_format_kernel(a, Algorithm::CompressedCsr, op, Options{});
    if (op == Operation::NonTranspose) {
      const std::vector<double> x{inf, 1.0, 1.0};
      std::vector<double> y(2, std::nan(""));
      k.run(1.0, x.data(), 0.0, y.data());
      EXPECT_EQ(y[0], 2.0);
      EXPECT_EQ(y[1], inf);
      y.assign(2, 4.0);
      k.run(0.0, x.data(), 0.5, y.data());
      EXPECT_EQ(y, (std::vector<double>{2.0, 2.0}));
    } else {
      const std::vector<double> x{1.0, 0.0};
      std::vector<double> y(3, std::nan(""));
      k.run(1.0, x.data(), 0.0, y.data());
      EXPECT_EQ(y, (std::vector<double>{0.0, 2.0, 0.0}));
    }
  }
}

TEST(CompressedCsr, ZooMatricesHitTheBoundariesTheyAreNamedFor) {
  // The differential sweep runs every backend's compressed-csr on these; check they exercise what they claim.
  auto summary = [](const char* name) {
    return spmv::compressed_csr_summary(spmv::to_compressed_csr(spmv::test::zoo_matrix(name)));
  };
  EXPECT_NE(summary("straddle_2p16").find("slices=3 cols=16bit(33% slices)"), std::string::npos)
      << summary("straddle_2p16");
  const auto straddle = spmv::to_compressed_csr(spmv::test::zoo_matrix("straddle_2p16"));
  EXPECT_EQ(straddle.wide, (std::vector<std::uint8_t>{1, 0, 1}));
  const auto huge = spmv::to_compressed_csr(spmv::test::zoo_matrix("huge_row_slice"));
  EXPECT_EQ(huge.row_length, (std::vector<std::uint16_t>{20000, 65535, 20000}));
  EXPECT_EQ(huge.wide, (std::vector<std::uint8_t>{1}));
  EXPECT_NE(summary("all_equal_values").find("values=u8 table(1)"), std::string::npos);
  EXPECT_NE(summary("distinct_255").find("values=u8 table(255)"), std::string::npos);
  EXPECT_NE(summary("distinct_256").find("values=u8 table(256)"), std::string::npos);
  EXPECT_NE(summary("distinct_257").find("values=u16 table(257)"), std::string::npos);
  EXPECT_NE(summary("pattern_ones").find("values=none(pattern)"), std::string::npos);
  EXPECT_THROW(spmv::to_compressed_csr(spmv::test::zoo_matrix("huge_row")), spmv::Unsupported);
}

}  // namespace
