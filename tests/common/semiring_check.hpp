#pragma once
// The differential body of the semiring products (spmv/semiring.hpp), shared by the CPU test and its
// CUDA twin: the result of `multiply(s, A, x, y)` against a sequential reference of the semiring's
// definition. min, max and or-and are exact in any order, so their result must equal the reference
// bit for bit (the reference applies the same ⊗ in Value); plus-times is held to the differential
// tests' per-row error bound. x mixes signs, zeros, large and small magnitudes, and NaN / +-Inf in a
// second pass.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error_bound.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/semiring.hpp"

namespace spmv::test {

// Whether the SELL-C-sigma conversion (to_sell) refuses `a` with `options` (its padding rule): what the
// semiring products' SELL kernels refuse too, on either backend.
template <class Value, class Index>
bool to_sell_refuses(const CsrMatrix<Value, Index>& a, const Options& options) {
  try {
    (void)to_sell(a, options);
  } catch (const Unsupported&) {
    return true;
  }
  return false;
}

inline constexpr Semiring kSemirings[] = {Semiring::PlusTimes, Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd,
                                          Semiring::MaxMin};

// y_i = ⊕_j (a_ij ⊗ x_j) by the semiring's definition, sequentially, in Value.
template <class Value, class Index>
std::vector<Value> semiring_reference(Semiring s, const CsrMatrix<Value, Index>& a, const std::vector<Value>& x) {
  const auto min_ = [](Value p, Value q) { return std::isnan(p) ? q : std::isnan(q) ? p : std::min(p, q); };
  const auto max_ = [](Value p, Value q) { return std::isnan(p) ? q : std::isnan(q) ? p : std::max(p, q); };
  std::vector<Value> y(static_cast<std::size_t>(a.rows));
  for (Index i = 0; i < a.rows; ++i) {
    Value acc = semiring_zero<Value>(s);
    for (Index k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const Value v = a.values[k], xj = x[a.col_idx[k]];
      switch (s) {
        case Semiring::PlusTimes: acc += v * xj; break;
        case Semiring::MinPlus: acc = min_(acc, v + xj); break;
        case Semiring::MaxTimes: acc = max_(acc, v * xj); break;
        case Semiring::OrAnd: acc = (acc != 0 || (v != 0 && xj != 0)) ? Value(1) : Value(0); break;
        case Semiring::MaxMin: acc = max_(acc, min_(v, xj)); break;
      }
    }
    y[static_cast<std::size_t>(i)] = acc;
  }
  return y;
}

// x for the bit-for-bit comparisons between kernels: random values with signed zeros, NaN and +-Inf sprinkled in.
template <class Value>
std::vector<Value> bits_probe_x(std::int64_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Value> x(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < x.size(); ++j) {
    x[j] = static_cast<Value>(rng.symmetric());
    if (j % 7 == 3) x[j] = j % 2 ? Value(0) : -Value(0);
    if (j % 11 == 4) x[j] = std::numeric_limits<Value>::quiet_NaN();
    if (j % 13 == 6) x[j] = (j % 2 ? 1 : -1) * std::numeric_limits<Value>::infinity();
  }
  return x;
}

// The first row where `got` differs from `want` in its bits, or -1. Accepted: a zero of the other sign for the
// order-free semirings (max(+0, -0) keeps its first operand), and a NaN of another sign or payload (x86's add of
// two NaN returns one operand, and the compiler may put either first).
template <class Value>
std::int64_t first_bits_difference(Semiring s, const std::vector<Value>& want, const std::vector<Value>& got) {
  using Bits = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const bool zeros = s != Semiring::PlusTimes && want[i] == Value(0) && got[i] == Value(0);
    const bool nans = std::isnan(want[i]) && std::isnan(got[i]);
    if (std::bit_cast<Bits>(want[i]) != std::bit_cast<Bits>(got[i]) && !zeros && !nans)
      return static_cast<std::int64_t>(i);
  }
  return -1;
}

// A 4 x 3 matrix whose padding would change every semiring but plus-times if it entered a row: rows of 1, 3, 0 and
// 2 entries (row 3 unsorted), x = (-5, 2, 4). Padded to 3 slots (ELL; SELL at C = 4, sigma = 4, which sorts the
// rows 1, 3, 0, 2 into one slice), rows 0, 2 and 3 end in padding. A padding slot read as value 0 at column 0
// would bring 0 ⊗ x0 into them: -5 into min-plus's row 0 (not 1) and empty row (not inf), -0 into max-times's
// row 0 (above its -2), and min(0, -5) = -5 into max-min's empty row (not -inf); plus-times and or-and would not
// see it with a finite x0. `want` is hand-computed.
struct PaddingBait {
  CsrMatrix<double, std::int32_t> a;
  std::vector<double> x;
  std::vector<std::pair<Semiring, std::vector<double>>> want;
};
// A hand-written CSR matrix.
inline CsrMatrix<double, std::int32_t> hand_csr(std::int32_t rows, std::int32_t cols, std::vector<std::int32_t> row_ptr,
                                               std::vector<std::int32_t> col_idx, std::vector<double> values) {
  CsrMatrix<double, std::int32_t> a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr = std::move(row_ptr);
  a.col_idx = std::move(col_idx);
  a.values = std::move(values);
  return a;
}
inline PaddingBait padding_bait() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  PaddingBait p;
  p.a = hand_csr(4, 3, {0, 1, 4, 4, 6}, {1, 0, 1, 2, 2, 1}, {-1.0, 1.0, 3.0, -2.0, 0.5, -0.5});
  p.x = {-5.0, 2.0, 4.0};
  p.want = {
      {Semiring::PlusTimes, {-2.0, -5.0 + 6.0 - 8.0, 0.0, 2.0 - 1.0}},
      {Semiring::MinPlus, {1.0, -4.0, inf, 1.5}},
      {Semiring::MaxTimes, {-2.0, 6.0, -inf, 2.0}},
      {Semiring::OrAnd, {1.0, 1.0, 0.0, 1.0}},
      {Semiring::MaxMin, {-1.0, 2.0, -inf, 0.5}},
  };
  return p;
}

// The formats of the semiring products (Algorithm::Ell, EllR, Hyb, Coo, Dia, CompressedCsr) on both backends, and
// whether the host conversion to one with the default Options refuses `a` (its padding rule; the CUDA conversions
// apply the same rule: cuda/common/format_common.cuh's check_padded_size; compressed CSR also refuses a row above
// 65535 entries and a 32-row slice spanning 2^32 columns, on both backends). COO stores no padding and refuses
// nothing.
inline constexpr Algorithm kSemiringFormats[] = {Algorithm::Ell, Algorithm::EllR, Algorithm::Hyb, Algorithm::Coo,
                                                 Algorithm::Dia, Algorithm::CompressedCsr};
template <class Value, class Index>
bool conversion_refuses(const CsrMatrix<Value, Index>& a, Algorithm algorithm) {
  try {
    switch (algorithm) {
      case Algorithm::Ell: (void)to_ell(a); break;
      case Algorithm::EllR: (void)to_ellr(a); break;
      case Algorithm::Hyb: (void)to_hyb(a); break;
      case Algorithm::Dia: (void)to_dia(a); break;
      case Algorithm::CompressedCsr: (void)to_compressed_csr(a); break;
      default: break;
    }
  } catch (const Unsupported&) {
    return true;
  }
  return false;
}

// Whether the matrix holds a column twice in a row (DIA sums such entries: its refusal for the semirings other
// than plus-times, on both backends).
template <class Value, class Index>
bool has_duplicates(const CsrMatrix<Value, Index>& a) {
  CsrMatrix<Value, Index> c = a;
  canonicalize(c);
  return c.nnz() != a.nnz();
}

// DIA's stored zeros against its padding: 4 x 4, row 0 = {(0, 0.0), (2, 3.0)}, row 1 empty, row 2 = {(1, 0.0)},
// row 3 = {(3, 2.0)}; diagonals -1, 0 and 2, of whose 12 slots 4 are stored (two of them zeros), 3 are padding
// inside the matrix and 5 lie outside it. x = (-5, 4, -7, 1). Padding read as 0 would give min-plus's empty row
// min(0 + 4, 0 + 1) = 1 (not inf), its row 2 0 + -7 = -7 and row 3 0 + -7 = -7; the stored zeros must count:
// min-plus's row 2 is 0 + 4 = 4 (not inf), and or-and's row 2 is 0 (0 and 4 is false). `want` is hand-computed.
inline PaddingBait dia_stored_zeros() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  PaddingBait p;
  p.a = hand_csr(4, 4, {0, 2, 2, 3, 4}, {0, 2, 1, 3}, {0.0, 3.0, 0.0, 2.0});
  p.x = {-5.0, 4.0, -7.0, 1.0};
  p.want = {
      {Semiring::PlusTimes, {-21.0, 0.0, 0.0, 2.0}},
      {Semiring::MinPlus, {-5.0, inf, 4.0, 3.0}},
      {Semiring::MaxTimes, {0.0, -inf, 0.0, 2.0}},  // row 0: max(0 * -5, 3 * -7) = -0
      {Semiring::OrAnd, {1.0, 0.0, 0.0, 1.0}},
      {Semiring::MaxMin, {-5.0, -inf, 0.0, 1.0}},
  };
  return p;
}

// A duplicate entry: row 0 holds (1, 2.0) twice, row 1 (0, 1.0). x = (1, 3): min-plus's row 0 is 2 + 3 = 5, where
// DIA's summed slot would give 4 + 3; plus-times's is 12 either way.
inline CsrMatrix<double, std::int32_t> duplicate_entry() { return hand_csr(2, 2, {0, 2, 3}, {1, 1, 0}, {2.0, 2.0, 1.0}); }

// Compressed CSR's slices for its semiring kernels on both backends: 100 x 140000, four slices of 32 rows (the last
// of 4). Slice 0 is wide (columns from 3 to about 100,000: 32-bit offsets), slice 1 narrow from base column 120,000,
// slice 2 all empty (width 0), slice 3 narrow from base 50,000; rows of 0 to 2,900 entries (every seventh empty),
// columns unsorted, duplicates in slice 1, about 80,000 entries. `distinct` picks the values and so the value mode:
// 0 every value exactly 1 (pattern: nothing stored), 2..256 that many values (8-bit codes), 257..65536 (16-bit
// codes), -1 random values (more than 65536 distinct: raw). The values are multiples of 2^-10, exact in float too.
// A slot past a row's length holds offset 0 and code 0: folded, it would bring x[base] into the row, and a kernel
// that ignored the base would read other columns.
inline CsrMatrix<double, std::int32_t> compressed_slices(std::int64_t distinct, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(100);
  std::int64_t entries = 0;
  for (std::int64_t r = 0; r < 100; ++r) {
    const std::int64_t s = r / 32;
    if (s == 2 || r % 7 == 3) continue;
    const std::int64_t length = 1 + (r * 389) % 2900;
    for (std::int64_t k = 0; k < length; ++k) {
      std::int64_t c = 0;
      if (s == 0) c = 3 + static_cast<std::int64_t>(rng.below(100000));
      if (s == 1) c = k > 0 && k % 9 == 0 ? rows[r].back().first : 120000 + static_cast<std::int64_t>(rng.below(5000));
      if (s == 3) c = 50000 + static_cast<std::int64_t>(rng.below(20000));
      const double v = distinct == 0  ? 1.0
                       : distinct < 0 ? rng.symmetric()
                                      : static_cast<double>(entries % distinct - distinct / 2) * 0.0009765625;
      rows[r].emplace_back(c, v);
      ++entries;
    }
  }
  return convert<double, std::int32_t>(zoo_detail::from_rows(140000, rows));
}

// Every semiring on `a` with two x vectors (finite; then with NaN and +-Inf sprinkled in). `multiply`
// fills y (poisoned with NaN first: every entry must be written). Returns the failures, empty when all
// pass.
template <class Value, class Index, class Multiply>
std::vector<std::string> check_semirings(const CsrMatrix<Value, Index>& a, std::uint64_t seed, Multiply&& multiply) {
  std::vector<std::string> failures;
  const auto lengths = output_row_lengths(a, Operation::NonTranspose);
  for (int pass = 0; pass < 2; ++pass) {
    SplitMix64 rng(seed + 977u * static_cast<std::uint64_t>(pass));
    std::vector<Value> x(static_cast<std::size_t>(a.cols));
    for (std::size_t j = 0; j < x.size(); ++j) {
      const double r = rng.symmetric();
      x[j] = j % 7 == 3 ? Value(0) : static_cast<Value>(r * (j % 5 == 1 ? 1e3 : 1.0));
      if (pass == 1 && j % 11 == 4) x[j] = std::numeric_limits<Value>::quiet_NaN();
      if (pass == 1 && j % 13 == 6) x[j] = (j % 2 ? 1 : -1) * std::numeric_limits<Value>::infinity();
    }
    for (Semiring s : kSemirings) {
      if (pass == 1 && s == Semiring::PlusTimes) continue;  // NaN / Inf in sums: the SpMV tests' business
      std::ostringstream where;
      where << to_string(s) << (pass ? " (NaN/Inf in x)" : "") << ": ";
      std::vector<Value> y(static_cast<std::size_t>(a.rows), std::numeric_limits<Value>::quiet_NaN());
      try {
        multiply(s, a, x, y);
      } catch (const std::exception& e) {
        failures.push_back(where.str() + "threw: " + e.what());
        continue;
      }
      if (s == Semiring::PlusTimes) {
        std::vector<double> y_ref(y.size()), x_ref(x.begin(), x.end());
        const auto a_ref = convert<double, std::int64_t>(a);
        cpu::reference<double, std::int64_t>(a_ref, Operation::NonTranspose, 1.0, x_ref, 0.0, y_ref);
        const auto magnitude = cpu::reference_magnitude<double, std::int64_t>(a_ref, Operation::NonTranspose, x_ref);
        const auto report = check_error_bound<Value>(y, y_ref, y, magnitude, lengths, 1.0, 0.0);
        if (!report.passed()) failures.push_back(where.str() + report.describe());
        continue;
      }
      const auto want = semiring_reference(s, a, x);
      for (std::size_t i = 0; i < y.size(); ++i) {
        const bool same = (std::isnan(y[i]) && std::isnan(want[i])) || y[i] == want[i];
        if (!same) {
          std::ostringstream o;
          o.precision(17);
          o << where.str() << "row " << i << ": got " << y[i] << ", reference " << want[i];
          failures.push_back(o.str());
          break;
        }
      }
    }
  }
  return failures;
}

}  // namespace spmv::test
