// The CPU semiring product on ELL, ELL-R, HYB, COO, DIA and compressed CSR (spmv/semiring.hpp;
// src/cpu/semiring_ell.cpp, semiring_hyb.cpp, semiring_coo.cpp, semiring_dia.cpp, semiring_compressed_csr.cpp):
// hand-computed matrices whose padding (ELL's column -1 slots, DIA's empty and out-of-matrix slots) would change
// min-plus, max-times and max-min if it entered a row, with DIA's stored zeros kept apart from its padding; the
// differential body of common/semiring_check.hpp over the whole zoo through semiring_multiply (3 threads with
// f64/i32, 1 with f32/i64), or Unsupported exactly where the conversion refuses; the kernels on conversions with the
// padding bound lifted and other HYB splits; the row loop's values (and its bits for plus-times where the format
// keeps the row's order); the refusals; compressed CSR's wide and narrow slices and value modes (pattern, 8- and
// 16-bit codes, raw) and its refusal of a row too long.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "cpu/semiring_kernels.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/semiring.hpp"

namespace spmv::test {
namespace {

// padding_bait() (common/semiring_check.hpp, SELL's hand matrix): ELL of width 3 pads row 0 with two slots, row 2
// with three and row 3 with one, and x0 = -5 would show in min-plus, max-times and max-min if one entered a row.
// HYB split at ELL widths 0 (all COO), 1 (the rest of rows 1 and 3 in COO) and 3 (all ELL); every format through
// semiring_multiply too.
TEST(SemiringFormats, PaddingNeverEntersARow) {
  const PaddingBait bait = padding_bait();
  const auto& a = bait.a;
  const auto ell = to_ell(a);
  ASSERT_EQ(ell.width, 3);
  Options all_coo, one_ell, all_ell;
  all_coo.hyb_ell_width = 0;
  one_ell.hyb_ell_width = 1;
  all_ell.hyb_ell_width = 3;
  ASSERT_EQ(to_hyb(a, one_ell).coo.values.size(), 3u);  // row 1's last two entries and row 3's last one
  for (const auto& [s, want] : bait.want)
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(to_string(s)) + ", " + std::to_string(threads) + " threads");
      std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
      cpu::detail::semiring_ell(s, ell, static_cast<const std::int32_t*>(nullptr), bait.x.data(), y.data(), threads);
      EXPECT_EQ(y, want) << "ell";
      for (const Options* split : {&all_coo, &one_ell, &all_ell}) {
        std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
        cpu::detail::semiring_hyb(s, to_hyb(a, *split), bait.x.data(), y.data(), threads);
        EXPECT_EQ(y, want) << "hyb, ELL width " << split->hyb_ell_width;
      }
      for (Algorithm algorithm : kSemiringFormats) {
        std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
        semiring_multiply(s, a, std::span<const double>(bait.x), std::span(y), threads, algorithm);
        EXPECT_EQ(y, want) << to_string(algorithm);
      }
    }
}

// DIA keeps stored zeros apart from padding: dia_stored_zeros() (common/semiring_check.hpp), whose DIA has 12 slots,
// 4 stored (two of them zeros), 3 padding inside the matrix and 5 outside it; hand-computed values.
TEST(SemiringFormats, DiaStoredZerosAreNotPadding) {
  const PaddingBait bait = dia_stored_zeros();
  const auto& a = bait.a;
  const auto& x = bait.x;
  const auto dia = to_dia(a);
  ASSERT_EQ(dia.offsets, (std::vector<std::int32_t>{-1, 0, 2}));
  int stored = 0, stored_zeros = 0;
  for (std::int64_t slot = 0; slot < dia.slots(); ++slot)
    if (dia.is_stored(slot)) {
      ++stored;
      stored_zeros += dia.values[slot] == 0.0;
    }
  ASSERT_EQ(stored, 4);
  ASSERT_EQ(stored_zeros, 2);
  for (const auto& [s, want] : bait.want)
    for (int threads : {1, 3}) {
      std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
      cpu::detail::semiring_dia(s, dia, x.data(), y.data(), threads);
      EXPECT_EQ(y, want) << to_string(s) << ", " << threads << " threads";
      std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
      semiring_multiply(s, a, std::span<const double>(x), std::span(y), threads, Algorithm::Dia);
      EXPECT_EQ(y, want) << to_string(s) << ", " << threads << " threads, semiring_multiply";
    }
}

// Padding-heavy ELL: 3000 rows of 0-2 entries and one of 700 (ELL width 700, 2.1 M slots for about 3,700
// nonzeros: the default bound refuses it, so the kernel runs on a conversion with the bound lifted). Nearly every
// slot is padding, and x0 = -1e3 would win min-plus's rows and max-min's empty rows if one entered; 1, 2 and 4
// threads.
TEST(SemiringFormats, PaddingHeavyEll) {
  SplitMix64 rng(41);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(3001);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::int64_t len = r == 1500 ? 700 : static_cast<std::int64_t>(rng.below(3));
    for (std::int64_t k = 0; k < len; ++k)
      rows[r].emplace_back(1 + k * 3 + static_cast<std::int64_t>(rng.below(3)), rng.symmetric());
  }
  const auto a = convert<double, std::int32_t>(zoo_detail::from_rows(2200, rows));
  EXPECT_TRUE(conversion_refuses(a, Algorithm::Ell));
  std::vector<double> x(static_cast<std::size_t>(a.cols), 1.0), y(static_cast<std::size_t>(a.rows));
  EXPECT_THROW(semiring_multiply(Semiring::MinPlus, a, std::span<const double>(x), std::span(y), 2, Algorithm::Ell),
               Unsupported);
  Options lifted;
  lifted.max_padding = 1e9;
  const auto ell = to_ell(a, lifted);
  const auto ellr = to_ellr(a, lifted);
  ASSERT_EQ(ell.width, 700);
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const auto run_ell = [&](Semiring s, const auto&, const auto& xx, auto& yy) {
      cpu::detail::semiring_ell(s, ell, static_cast<const std::int32_t*>(nullptr), xx.data(), yy.data(), threads);
    };
    const auto run_ellr = [&](Semiring s, const auto&, const auto& xx, auto& yy) {
      cpu::detail::semiring_ell(s, ellr.ell, ellr.row_length.data(), xx.data(), yy.data(), threads);
    };
    for (const auto& f : check_semirings(a, 42, run_ell)) ADD_FAILURE() << "ell " << f;
    for (const auto& f : check_semirings(a, 43, run_ellr)) ADD_FAILURE() << "ellr " << f;
    // x0 far below every other x: a padding slot (column 0) would set min-plus's rows to about -1e3.
    std::vector<double> low(x.size(), 0.5);
    low[0] = -1e3;
    std::vector<double> want(y.size()), got(y.size());
    semiring_multiply(Semiring::MinPlus, a, std::span<const double>(low), std::span(want), threads, Algorithm::RowLoop);
    cpu::detail::semiring_ell(Semiring::MinPlus, ell, static_cast<const std::int32_t*>(nullptr), low.data(), got.data(),
                              threads);
    EXPECT_EQ(got, want);
  }
}

class SemiringFormatsZoo : public testing::TestWithParam<std::size_t> {};

// semiring_multiply with each format on every zoo matrix: the definition's values, or Unsupported exactly where the
// format's conversion refuses (never a fallback). DIA on a matrix with duplicate entries is refused for the
// semirings other than plus-times (the refusal is checked there, and the reference stands in for y so that the
// shared body goes on to the other semirings); plus-times sums them as the SpMV's DIA does, within the bound.
TEST_P(SemiringFormatsZoo, MatchesTheDefinition) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 21;
  // One thread count per type pair (3 with f64/i32, 1 with f32/i64): each format meets both, in half the time.
  const auto check = [&](const auto& m, const char* types, int threads) {
    using Value = typename std::decay_t<decltype(m)>::value_type;
    const bool duplicates = has_duplicates(m);
    for (Algorithm algorithm : kSemiringFormats) {
      SCOPED_TRACE(std::string(types) + ", " + std::string(to_string(algorithm)) + ", threads " +
                   std::to_string(threads));
      if (conversion_refuses(m, algorithm)) {
        std::vector<Value> x(static_cast<std::size_t>(m.cols), Value(1)), y(static_cast<std::size_t>(m.rows));
        EXPECT_THROW(semiring_multiply(Semiring::MinPlus, m, std::span<const Value>(x), std::span(y), threads,
                                       algorithm),
                     Unsupported);
        continue;
      }
      const bool refuses_duplicates = algorithm == Algorithm::Dia && duplicates;
      const auto run = [&](Semiring s, const auto& mm, const auto& x, auto& y) {
        if (refuses_duplicates && s != Semiring::PlusTimes) {
          EXPECT_THROW(semiring_multiply(s, mm, std::span(x), std::span(y), threads, algorithm), Unsupported);
          y = semiring_reference(s, mm, x);
          return;
        }
        semiring_multiply(s, mm, std::span(x), std::span(y), threads, algorithm);
      };
      for (const auto& f : check_semirings(m, seed, run)) ADD_FAILURE() << f;
    }
  };
  check(convert<double, std::int32_t>(a), "f64/i32", 3);
  check(convert<float, std::int64_t>(a), "f32/i64", 1);
}

// The kernels on conversions the one-shot call does not make: ELL, ELL-R and DIA with the padding bound lifted
// (where the slots stay under 4 M: the zoo's huge rows in ELL would take 10^8), HYB split at ELL widths 0 (all
// COO), 1 and 4; two threads.
TEST_P(SemiringFormatsZoo, OtherConversions) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 22;
  constexpr std::int64_t kMaxSlots = std::int64_t(1) << 22;
  const auto check = [&](const auto& m, const char* types) {
    using Value = typename std::decay_t<decltype(m)>::value_type;
    using Index = typename std::decay_t<decltype(m)>::index_type;
    Options lifted;
    lifted.max_padding = 1e9;
    std::int64_t longest = 0;
    for (Index r = 0; r < m.rows; ++r) longest = std::max<std::int64_t>(longest, m.row_length(r));
    if (static_cast<std::int64_t>(m.rows) * longest <= kMaxSlots) {
      const auto ell = to_ellr(m, lifted);
      const auto run_ell = [&](Semiring s, const auto&, const auto& x, auto& y) {
        cpu::detail::semiring_ell(s, ell.ell, static_cast<const Index*>(nullptr), x.data(), y.data(), 2);
      };
      const auto run_ellr = [&](Semiring s, const auto&, const auto& x, auto& y) {
        cpu::detail::semiring_ell(s, ell.ell, ell.row_length.data(), x.data(), y.data(), 2);
      };
      for (const auto& f : check_semirings(m, seed, run_ell)) ADD_FAILURE() << types << " ell, lifted: " << f;
      for (const auto& f : check_semirings(m, seed, run_ellr)) ADD_FAILURE() << types << " ellr, lifted: " << f;
    }
    for (int width : {0, 1, 4}) {
      Options split;
      split.hyb_ell_width = width;
      split.max_padding = 1e9;
      const auto hyb = to_hyb(m, split);
      const auto run = [&](Semiring s, const auto&, const auto& x, auto& y) {
        cpu::detail::semiring_hyb(s, hyb, x.data(), y.data(), 2);
      };
      for (const auto& f : check_semirings(m, seed, run)) ADD_FAILURE() << types << " hyb width " << width << ": " << f;
    }
    if (has_duplicates(m)) return;  // MatchesTheDefinition checks DIA's refusal
    DiaMatrix<Value, Index> dia;
    Options bounded = lifted;  // at most kMaxSlots: to_dia refuses beyond max_padding * nnz + slack
    bounded.max_padding = m.nnz() > 0 ? static_cast<double>(kMaxSlots) / static_cast<double>(m.nnz()) : 1.0;
    try {
      dia = to_dia(m, bounded);
    } catch (const Unsupported&) {
      return;  // too many diagonals for a test
    }
    const auto run = [&](Semiring s, const auto&, const auto& x, auto& y) {
      cpu::detail::semiring_dia(s, dia, x.data(), y.data(), 2);
    };
    for (const auto& f : check_semirings(m, seed, run)) ADD_FAILURE() << types << " dia, lifted: " << f;
  };
  check(convert<double, std::int32_t>(a), "f64/i32");
  check(convert<float, std::int64_t>(a), "f32/i64");
}

// The row loop's values from every format, bit for bit (a zero's sign and a NaN's aside, as in
// SemiringSellZoo.GivesTheRowLoopsBits), x with signed zeros, NaN and +-Inf. Plus-times too where the format keeps
// each row's entries in storage order in one chain: ELL, ELL-R, HYB and COO always, DIA on canonical matrices
// (to_dia sorts a row by column).
template <class Value, class Index>
void expect_formats_give_row_loop_bits(const CsrMatrix<Value, Index>& a, std::uint64_t seed) {
  const std::vector<Value> x = bits_probe_x<Value>(a.cols, seed);
  const bool canonical = is_canonical(a);
  for (Algorithm algorithm : kSemiringFormats) {
    if (conversion_refuses(a, algorithm)) continue;  // MatchesTheDefinition checks the refusal
    if (algorithm == Algorithm::Dia && !canonical) continue;  // another order (and duplicates summed or refused)
    for (Semiring s : kSemirings) {
      std::vector<Value> rows(static_cast<std::size_t>(a.rows), std::numeric_limits<Value>::quiet_NaN()), got(rows);
      semiring_multiply(s, a, std::span<const Value>(x), std::span(rows), 2, Algorithm::RowLoop);
      semiring_multiply(s, a, std::span<const Value>(x), std::span(got), 2, algorithm);
      if (const std::int64_t i = first_bits_difference(s, rows, got); i >= 0)
        ADD_FAILURE() << to_string(algorithm) << ", " << to_string(s) << ", row " << i << ": " << got[i]
                      << ", row loop " << rows[i];
    }
  }
}

TEST_P(SemiringFormatsZoo, GivesTheRowLoopsBits) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 23;
  expect_formats_give_row_loop_bits(convert<double, std::int32_t>(a), seed);
  expect_formats_give_row_loop_bits(convert<float, std::int64_t>(a), seed);
}

INSTANTIATE_TEST_SUITE_P(Zoo, SemiringFormatsZoo, zoo_indices(), zoo_case_name);

// The refusals pass the conversion's message through (ELL's padding on one huge row among short ones), DIA names
// the duplicates it would sum, plus-times on DIA sums them as the SpMV does, and Auto never picks a format.
TEST(SemiringFormats, RefusalsAndAuto) {
  const auto huge = convert<double, std::int32_t>(gen::long_rows(1000, 100003, 1, 100000, 3, 104));
  std::vector<double> x(static_cast<std::size_t>(huge.cols), 1.0), y(static_cast<std::size_t>(huge.rows));
  for (Algorithm algorithm : {Algorithm::Ell, Algorithm::EllR, Algorithm::Dia}) {
    try {
      semiring_multiply(Semiring::MinPlus, huge, std::span<const double>(x), std::span(y), 2, algorithm);
      ADD_FAILURE() << to_string(algorithm) << " ran the huge row";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("padding factor"), std::string::npos) << e.what();
    }
  }
  for (Algorithm algorithm : {Algorithm::Hyb, Algorithm::Coo}) {  // no padding bound to break
    const auto run = [algorithm](Semiring s, const auto& m, const auto& xx, auto& yy) {
      semiring_multiply(s, m, std::span(xx), std::span(yy), 2, algorithm);
    };
    for (const auto& f : check_semirings(huge, 61, run)) ADD_FAILURE() << to_string(algorithm) << " " << f;
  }

  // Row 0 holds (1, 2.0) twice: min-plus's row 0 is 2 + x1, DIA's summed slot would give 4 + x1.
  const auto dup = duplicate_entry();
  const std::vector<double> x2 = {1.0, 3.0};
  std::vector<double> y2(2);
  for (Semiring s : {Semiring::MinPlus, Semiring::MaxTimes, Semiring::OrAnd, Semiring::MaxMin}) {
    try {
      semiring_multiply(s, dup, std::span<const double>(x2), std::span(y2), 1, Algorithm::Dia);
      ADD_FAILURE() << to_string(s) << ": DIA ran duplicates";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos) << e.what();
    }
  }
  semiring_multiply(Semiring::PlusTimes, dup, std::span<const double>(x2), std::span(y2), 1, Algorithm::Dia);
  EXPECT_EQ(y2, (std::vector<double>{12.0, 1.0}));

  const auto rmat = convert<double, std::int32_t>(gen::rmat(14, 16, 32));
  for (int threads : {1, 2, 4})
    for (Algorithm algorithm : kSemiringFormats) EXPECT_NE(semiring_cpu_algorithm(rmat, threads), algorithm);
}

// Compressed CSR's own boundaries (compressed_slices(), common/semiring_check.hpp): a wide slice (32-bit offsets),
// narrow ones with a base column far from 0, an all-empty slice and a partial last one, with every value mode the
// conversion picks (pattern, 8-bit codes, 16-bit codes, raw): every semiring against the definition through
// semiring_multiply and the plan, 1 and 3 threads, f64/i32 and f32/i64, and the row loop's bits for min, max and
// or-and (x with NaN, +-Inf and signed zeros); a row of 65536 entries is refused at construction with the
// conversion's message.
TEST(SemiringFormats, CompressedCsrSlicesAndValueModes) {
  const std::pair<std::int64_t, CompressedValues> modes[] = {{0, CompressedValues::Pattern},
                                                             {5, CompressedValues::Code8},
                                                             {300, CompressedValues::Code16},
                                                             {-1, CompressedValues::Raw}};
  for (const auto& [distinct, mode] : modes) {
    SCOPED_TRACE("distinct values " + std::to_string(distinct));
    const auto a = compressed_slices(distinct, 131);
    const auto check = [&](const auto& m, const char* types) {
      const auto c = to_compressed_csr(m);
      ASSERT_EQ(c.value_mode, mode) << types;
      ASSERT_EQ(c.num_slices(), 4);
      EXPECT_EQ(c.wide, (std::vector<std::uint8_t>{1, 0, 0, 0})) << types;
      EXPECT_EQ(c.col_base[1], 120000) << types;
      EXPECT_EQ(c.slice_ptr[3], c.slice_ptr[2]) << types << ": slice 2 is empty";
      for (int threads : {1, 3}) {
        const auto run = [&](Semiring s, const auto& mm, const auto& x, auto& y) {
          semiring_multiply(s, mm, std::span(x), std::span(y), threads, Algorithm::CompressedCsr);
        };
        for (const auto& f : check_semirings(m, 132, run))
          ADD_FAILURE() << types << ", " << threads << " threads: " << f;
      }
      using Value = typename std::decay_t<decltype(m)>::value_type;
      using Index = typename std::decay_t<decltype(m)>::index_type;
      const auto x = bits_probe_x<Value>(m.cols, 133);
      for (Semiring s : kSemirings) {
        Options options;
        options.threads = 2;
        const SemiringPlan<Value, Index> plan(m, s, Algorithm::CompressedCsr, options);
        EXPECT_NE(plan.policy().find(compressed_csr_summary(c)), std::string::npos) << plan.policy();
        EXPECT_EQ(plan.extra_bytes(), storage_bytes(c));
        std::vector<Value> rows(static_cast<std::size_t>(m.rows));
        std::vector<Value> got(rows.size(), std::numeric_limits<Value>::quiet_NaN());
        semiring_multiply(s, m, std::span<const Value>(x), std::span(rows), 2, Algorithm::RowLoop);
        plan.apply(x, got);
        if (s == Semiring::PlusTimes) continue;  // NaN sums: check_semirings holds plus-times to its error bound
        if (const std::int64_t i = first_bits_difference(s, rows, got); i >= 0)
          ADD_FAILURE() << types << ", " << to_string(s) << ", row " << i << ": " << got[i] << ", row loop " << rows[i];
      }
    };
    check(a, "f64/i32");
    check(convert<float, std::int64_t>(a), "f32/i64");
  }

  // Row 1 of 65536 entries, one more than a 16-bit row length holds.
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(3);
  for (std::int64_t k = 0; k < 65536; ++k) rows[1].emplace_back((k * 7919) % 70000, 0.5);
  rows[0].emplace_back(3, 2.0);
  const auto long_row = convert<double, std::int32_t>(zoo_detail::from_rows(70000, rows));
  std::vector<double> x(70000, 1.0), y(3);
  for (int route = 0; route < 2; ++route) {
    try {
      if (route == 0)
        SemiringPlan<double, std::int32_t>(long_row, Semiring::MinPlus, Algorithm::CompressedCsr);
      else
        semiring_multiply(Semiring::MaxMin, long_row, std::span<const double>(x), std::span(y), 2,
                          Algorithm::CompressedCsr);
      ADD_FAILURE() << "compressed-csr ran a row of 65536 entries, route " << route;
    } catch (const Unsupported& e) {
      EXPECT_EQ(std::string(e.what()), "compressed-csr: row 1 holds 65536 entries, more than the 65535 a 16-bit row "
                                       "length holds; use csr-vector, merge-path or hola")
          << "route " << route;
    }
  }
}

}  // namespace
}  // namespace spmv::test
