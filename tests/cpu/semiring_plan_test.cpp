// The CPU semiring plan (spmv::SemiringPlan, spmv/semiring.hpp; src/cpu/semiring_plan.cpp): one plan a matrix,
// semiring and kernel, applied to several x. The differential body of common/semiring_check.hpp over the whole
// zoo with every kernel (both x passes through one plan a semiring, f64/i32 and f32/i64), or Unsupported at
// construction exactly where the conversion refuses, with its message; repeated applies and the one-shot
// semiring_multiply give the same bits; the Options the plan reads (max_padding, sell_c, sell_sigma,
// hyb_ell_width, threads, values) take effect, through the Backend overload too; wrong lengths, moved-from plans,
// degenerate matrices; one plan applied from several std::threads at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/semiring_check.hpp"
#include "common/zoo.hpp"
#include "cpu/cpu_operator.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/generators.hpp"
#include "spmv/semiring.hpp"

namespace spmv::test {
namespace {

using PlanD = SemiringPlan<double, std::int32_t>;  // names without a comma, for gtest's macros
using PlanF = SemiringPlan<float, std::int32_t>;

constexpr Algorithm kKernels[] = {Algorithm::RowLoop, Algorithm::MergeParallel, Algorithm::ColumnChunked,
                                  Algorithm::Sell,    Algorithm::Ell,           Algorithm::EllR,
                                  Algorithm::Hyb,     Algorithm::Coo,           Algorithm::Dia,
                                  Algorithm::CompressedCsr};
constexpr Algorithm kConverting[] = {Algorithm::Sell, Algorithm::Ell, Algorithm::EllR,         Algorithm::Hyb,
                                     Algorithm::Coo,  Algorithm::Dia, Algorithm::CompressedCsr};

// What the plan's construction must throw for `a`, `s` and `algorithm` with `options`: the conversion's own
// Unsupported message (computed here by calling the conversion), DIA's duplicate refusal (its message names the
// duplicates), or nothing.
template <class Value, class Index>
std::optional<std::string> expected_refusal(const CsrMatrix<Value, Index>& a, Semiring s, Algorithm algorithm,
                                            const Options& options = {}) {
  try {
    switch (algorithm) {
      case Algorithm::Sell: {
        Options sell = options;
        sell.sell_c = spmv::detail::cpu_sell_c<Value, Index>(options);
        (void)to_sell(a, sell);
        break;
      }
      case Algorithm::Ell: (void)to_ell(a, options); break;
      case Algorithm::EllR: (void)to_ellr(a, options); break;
      case Algorithm::Hyb: (void)to_hyb(a, options); break;
      case Algorithm::CompressedCsr: (void)to_compressed_csr(a, options); break;
      case Algorithm::Dia: {
        CsrMatrix<Value, Index> c = a;
        canonicalize(c);
        (void)to_dia(a, options);
        if (s != Semiring::PlusTimes && c.nnz() != a.nnz()) return std::string("duplicate");
        break;
      }
      default: break;  // the CSR kernels and COO refuse nothing
    }
  } catch (const Unsupported& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

// Builds the plan, or checks that its construction throws the expected refusal (returns nullopt then).
template <class Value, class Index>
std::optional<SemiringPlan<Value, Index>> plan_or_refusal(const CsrMatrix<Value, Index>& a, Semiring s,
                                                          Algorithm algorithm, const Options& options) {
  const auto refusal = expected_refusal(a, s, algorithm, options);
  try {
    SemiringPlan<Value, Index> plan(a, s, algorithm, options);
    EXPECT_FALSE(refusal.has_value()) << to_string(algorithm) << " ran; expected refusal: " << *refusal;
    return plan;
  } catch (const Unsupported& e) {
    EXPECT_TRUE(refusal.has_value()) << to_string(algorithm) << " refused: " << e.what();
    if (refusal && *refusal == "duplicate")
      EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos) << e.what();
    else if (refusal)
      EXPECT_EQ(std::string(e.what()), *refusal);  // the conversion's message, passed through
  }
  return std::nullopt;
}

std::vector<double> ramp_x(std::int64_t n, double shift) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = static_cast<double>((j * 37) % 23) - 7.0 + shift;
  return x;
}

template <class Value>
bool same_bits(const std::vector<Value>& p, const std::vector<Value>& q) {
  return p.size() == q.size() && (p.empty() || std::memcmp(p.data(), q.data(), p.size() * sizeof(Value)) == 0);
}

class SemiringPlanZoo : public testing::TestWithParam<std::size_t> {};

// Every kernel on every zoo matrix: one plan per semiring, made when the body first asks for that semiring and
// applied to both of its x vectors (the finite one, then the one with NaN and +-Inf), against the definition. A
// plan the conversion refuses must be refused at construction with the conversion's message; the body then gets
// the reference, so that it goes on to the other semirings.
TEST_P(SemiringPlanZoo, MatchesTheDefinition) {
  const ZooMatrix& a = zoo_matrix(GetParam());
  const std::uint64_t seed = hash_name(zoo()[GetParam()].name) + 51;
  const auto check = [&](const auto& m, const char* types, int threads) {
    using Value = typename std::decay_t<decltype(m)>::value_type;
    using Index = typename std::decay_t<decltype(m)>::index_type;
    Options options;
    options.threads = threads;
    for (Algorithm algorithm : kKernels) {
      SCOPED_TRACE(std::string(types) + ", " + std::string(to_string(algorithm)) + ", threads " +
                   std::to_string(threads));
      std::map<Semiring, std::optional<SemiringPlan<Value, Index>>> plans;
      std::map<Semiring, int> applies;
      const auto run = [&](Semiring s, const auto& mm, const auto& x, auto& y) {
        auto found = plans.find(s);
        if (found == plans.end()) found = plans.emplace(s, plan_or_refusal(mm, s, algorithm, options)).first;
        if (!found->second) {
          y = semiring_reference(s, mm, x);
          return;
        }
        EXPECT_EQ(found->second->algorithm(), algorithm);
        found->second->apply(std::span(x), std::span(y));
        ++applies[s];
      };
      for (const auto& f : check_semirings(m, seed, run)) ADD_FAILURE() << f;
      for (const auto& [s, n] : applies)  // plus-times runs the finite x only
        EXPECT_EQ(n, s == Semiring::PlusTimes ? 1 : 2) << to_string(s);
    }
  };
  check(convert<double, std::int32_t>(a), "f64/i32", 2);
  check(convert<float, std::int64_t>(a), "f32/i64", 3);
}

INSTANTIATE_TEST_SUITE_P(Zoo, SemiringPlanZoo, zoo_indices(), zoo_case_name);

// A plan applied again and again gives the one-shot call's bits (plus-times included: the same kernel, split and
// thread count), whichever x it saw before: x1, x2, x1 on one plan against a call for each.
TEST(SemiringPlan, RepeatedAppliesGiveTheCallsBits) {
  const auto rmat = convert<double, std::int32_t>(gen::rmat(10, 8, 71));  // duplicates: DIA refuses, but plus-times
  const auto grid = convert<double, std::int32_t>(gen::poisson2d(40));
  for (const auto* a : {&rmat, &grid})
    for (Algorithm algorithm : kKernels)
      for (Semiring s : kSemirings) {
        SCOPED_TRACE(std::to_string(a->rows) + " rows, " + std::string(to_string(algorithm)) + ", " +
                     std::string(to_string(s)));
        Options options;
        options.threads = 2;
        if (expected_refusal(*a, s, algorithm, options)) continue;  // MatchesTheDefinition checks refusals
        const auto x1 = bits_probe_x<double>(a->cols, 72);
        auto x2 = ramp_x(a->cols, 0.5);
        if (s == Semiring::OrAnd)  // mostly false, so that some rows differ from x1's
          for (std::size_t j = 0; j < x2.size(); ++j) x2[j] = j % 7 ? 0.0 : x2[j];
        std::vector<double> call1(static_cast<std::size_t>(a->rows)), call2(call1.size());
        semiring_multiply(s, *a, std::span<const double>(x1), std::span(call1), 2, algorithm);
        semiring_multiply(s, *a, std::span<const double>(x2), std::span(call2), 2, algorithm);
        ASSERT_FALSE(same_bits(call1, call2));  // the two x must tell the applies apart
        const PlanD plan(*a, s, algorithm, options);
        for (int round = 0; round < 3; ++round) {
          std::vector<double> y(call1.size(), std::numeric_limits<double>::quiet_NaN());
          plan.apply(x1, y);
          EXPECT_TRUE(same_bits(y, call1)) << "round " << round << ", x1";
          std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
          plan.apply(x2, y);
          EXPECT_TRUE(same_bits(y, call2)) << "round " << round << ", x2";
        }
      }
}

// Auto resolves as semiring_cpu_algorithm does, for the plan's thread count, and never converts; the accessors.
TEST(SemiringPlan, AutoAndAccessors) {
  const auto rmat = convert<double, std::int32_t>(gen::rmat(14, 16, 73));
  const auto small = convert<float, std::int64_t>(gen::poisson2d(20));
  for (int threads : {1, 2, 4}) {
    Options options;
    options.threads = threads;
    const PlanD p(rmat, Semiring::MinPlus, Algorithm::Auto, options);
    EXPECT_EQ(p.algorithm(), semiring_cpu_algorithm(rmat, threads));
    EXPECT_EQ(p.semiring(), Semiring::MinPlus);
    EXPECT_NE(p.policy().find("threads=" + std::to_string(threads)), std::string::npos) << p.policy();
    const SemiringPlan<float, std::int64_t> q(small, Semiring::OrAnd, Algorithm::Auto, options);
    EXPECT_EQ(q.algorithm(), semiring_cpu_algorithm(small, threads));
  }
  Options two;
  two.threads = 2;
  EXPECT_EQ(PlanD(rmat, Semiring::MinPlus, Algorithm::RowLoop, two).extra_bytes(), 0u);
  EXPECT_GT(PlanD(rmat, Semiring::MinPlus, Algorithm::MergeParallel, two).extra_bytes(), 0u);
  EXPECT_EQ(PlanD(rmat, Semiring::MinPlus, Algorithm::Coo, two).extra_bytes(),
            storage_bytes(to_coo(rmat)));
  EXPECT_EQ(PlanD(rmat, Semiring::MinPlus, Algorithm::Hyb, two).extra_bytes(),
            storage_bytes(to_hyb(rmat)));
  const auto grid = convert<double, std::int32_t>(gen::poisson2d(30));  // R-MAT's slices pad beyond the rule
  EXPECT_EQ(PlanD(grid, Semiring::MinPlus, Algorithm::CompressedCsr, two).extra_bytes(),
            storage_bytes(to_compressed_csr(grid)));
}

// The knobs the plan reads change what it builds: max_padding (ELL, ELL-R, DIA, SELL refuse a matrix the default
// accepts, and run one the default refuses), sell_c and sell_sigma (the slices), hyb_ell_width (the split), threads;
// half-precision values are refused; a malformed sell_c is InvalidArgument. The Backend overload passes them on.
TEST(SemiringPlan, OptionsTakeEffect) {
  // 2000 rows of 1 or 3 entries: ELL stores 6000 slots for 4000 nonzeros (1.5 per nonzero).
  CsrMatrix<double, std::int32_t> uneven;
  uneven.rows = uneven.cols = 2000;
  uneven.row_ptr.assign(1, 0);
  for (std::int32_t i = 0; i < uneven.rows; ++i) {
    const int len = i % 2 ? 3 : 1;
    for (int k = 0; k < len; ++k) {
      uneven.col_idx.push_back((i + 17 * k) % uneven.cols);
      uneven.values.push_back(0.25 * (k + 1) + (i % 5));
    }
    uneven.row_ptr.push_back(static_cast<std::int32_t>(uneven.col_idx.size()));
  }
  Options tight;
  tight.max_padding = 1.1;  // 1.1 x 4000 + 1024 slots < 6000
  const auto x = ramp_x(uneven.cols, 0.0);
  std::vector<double> y(static_cast<std::size_t>(uneven.rows));
  for (Algorithm algorithm : {Algorithm::Ell, Algorithm::EllR}) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    EXPECT_NO_THROW(PlanD(uneven, Semiring::MinPlus, algorithm));
    const auto refusal = expected_refusal(uneven, Semiring::MinPlus, algorithm, tight);
    ASSERT_TRUE(refusal.has_value());
    try {
      PlanD(uneven, Semiring::MinPlus, algorithm, tight);
      ADD_FAILURE() << "max_padding 1.1 was not read";
    } catch (const Unsupported& e) {
      EXPECT_EQ(std::string(e.what()), *refusal);
    }
    EXPECT_THROW(semiring_multiply(Backend::Cpu, Semiring::MinPlus, uneven, std::span<const double>(x), std::span(y),
                                   tight, algorithm),
                 Unsupported);
    semiring_multiply(Backend::Cpu, Semiring::MinPlus, uneven, std::span<const double>(x), std::span(y), Options{},
                      algorithm);
    EXPECT_EQ(y, semiring_reference(Semiring::MinPlus, uneven, x));
  }

  // One row of 40,000 among 63 of 3: ELL, ELL-R and SELL (C >= 4: AVX2 and wider) refuse it by default; max_padding
  // 100 lets them run (2.56 M ELL slots).
  const auto huge = convert<double, std::int32_t>(gen::long_rows(64, 50000, 1, 40000, 3, 74));
  Options loose;
  loose.max_padding = 100;
  loose.threads = 2;
  for (Algorithm algorithm : {Algorithm::Ell, Algorithm::EllR, Algorithm::Sell}) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    ASSERT_TRUE(expected_refusal(huge, Semiring::MinPlus, algorithm).has_value());
    EXPECT_THROW(PlanD(huge, Semiring::MinPlus, algorithm), Unsupported);
    const auto run = [&](Semiring s, const auto& m, const auto& xx, auto& yy) {
      PlanD(m, s, algorithm, loose).apply(std::span(xx), std::span(yy));
    };
    for (const auto& f : check_semirings(huge, 75, run)) ADD_FAILURE() << f;
  }

  // SELL's C and sigma, and a C that is not a power of two.
  const auto grid = convert<double, std::int32_t>(gen::poisson2d(30));
  Options sell;
  sell.sell_c = 4;
  sell.sell_sigma = 8;
  const PlanD custom(grid, Semiring::MaxMin, Algorithm::Sell, sell);
  EXPECT_NE(custom.policy().find("C=4 sigma=8"), std::string::npos) << custom.policy();
  const PlanD plain(grid, Semiring::MaxMin, Algorithm::Sell);
  EXPECT_EQ(plain.policy().find("C=4 sigma=8"), std::string::npos) << plain.policy();
  EXPECT_NE(plain.policy().find("C=" + std::to_string(spmv::detail::cpu_sell_c<double, std::int32_t>(Options{}))),
            std::string::npos)
      << plain.policy();
  const auto gx = bits_probe_x<double>(grid.cols, 76);
  std::vector<double> by_custom(static_cast<std::size_t>(grid.rows)), by_plain(by_custom.size());
  custom.apply(gx, by_custom);
  plain.apply(gx, by_plain);
  EXPECT_EQ(first_bits_difference(Semiring::MaxMin, by_plain, by_custom), -1);
  sell.sell_c = 3;
  EXPECT_THROW(PlanD(grid, Semiring::MaxMin, Algorithm::Sell, sell), InvalidArgument);

  // HYB's split: all COO at width 0, the policy says so, the values stay.
  Options all_coo;
  all_coo.hyb_ell_width = 0;
  const PlanD hyb(grid, Semiring::MinPlus, Algorithm::Hyb, all_coo);
  EXPECT_NE(hyb.policy().find("ell_width=0 coo_nnz=" + std::to_string(grid.nnz())), std::string::npos) << hyb.policy();
  std::vector<double> by_hyb(by_plain.size());
  hyb.apply(gx, by_hyb);
  EXPECT_EQ(first_bits_difference(Semiring::MinPlus, semiring_reference(Semiring::MinPlus, grid, gx), by_hyb), -1);

  Options three;
  three.threads = 3;
  EXPECT_NE(PlanD(grid, Semiring::MinPlus, Algorithm::Coo, three).policy().find("threads=3"),
            std::string::npos);
  Options half;
  half.values = ValueStorage::F16;
  const auto gridf = convert<float, std::int32_t>(grid);
  EXPECT_THROW(PlanF(gridf, Semiring::MinPlus, Algorithm::RowLoop, half), Unsupported);
}

// Refusals come at construction, with the conversion's message, and the one-shot call throws the same.
TEST(SemiringPlan, RefusalsAtConstruction) {
  const auto huge = convert<double, std::int32_t>(gen::long_rows(1000, 100003, 1, 100000, 3, 77));
  std::vector<double> x(static_cast<std::size_t>(huge.cols), 1.0), y(static_cast<std::size_t>(huge.rows));
  for (Algorithm algorithm : {Algorithm::Sell, Algorithm::Ell, Algorithm::EllR, Algorithm::Dia}) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    const auto refusal = expected_refusal(huge, Semiring::MinPlus, algorithm);
    ASSERT_TRUE(refusal.has_value());
    EXPECT_NE(refusal->find("padding factor"), std::string::npos) << *refusal;
    for (int route = 0; route < 2; ++route) {
      try {
        if (route == 0) PlanD(huge, Semiring::MinPlus, algorithm);
        else semiring_multiply(Semiring::MinPlus, huge, std::span<const double>(x), std::span(y), 2, algorithm);
        ADD_FAILURE() << "ran the huge row, route " << route;
      } catch (const Unsupported& e) {
        EXPECT_EQ(std::string(e.what()), *refusal) << "route " << route;
      }
    }
  }
  CsrMatrix<double, std::int32_t> dup;  // row 0 holds (1, 2.0) twice
  dup.rows = dup.cols = 2;
  dup.row_ptr = {0, 2, 3};
  dup.col_idx = {1, 1, 0};
  dup.values = {2.0, 2.0, 1.0};
  try {
    PlanD(dup, Semiring::MinPlus, Algorithm::Dia);
    ADD_FAILURE() << "DIA planned duplicates for min-plus";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("1 duplicates"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(PlanD(dup, Semiring::PlusTimes, Algorithm::Dia));
  for (Algorithm bad : {Algorithm::CsrVector, Algorithm::MergePath, Algorithm::Reference, Algorithm::Tune})
    EXPECT_THROW(PlanD(dup, Semiring::MinPlus, bad), Unsupported) << to_string(bad);
}

// Column-chunked over a semiring: spans of 7 columns on a 300-column matrix with unsorted columns and duplicates
// (the plan sorts its copy, keeping both entries of a pair as two terms), so every row crosses many spans with its
// cursor; each semiring against the definition on 1 and 3 threads, the caller's matrix left as it was, plus-times
// with the bits of the SpMV's ColumnChunkedPlan (the same walk, alpha 1, beta 0); a plan for A^T x refuses.
TEST(SemiringPlan, ColumnChunkedSpansUnsortedAndDuplicates) {
  auto a = convert<double, std::int32_t>(gen::random_uniform(500, 300, 24, 91));
  for (std::int32_t r = 0; r < a.rows; ++r) {  // reverse each row, then repeat its first entry at its end
    std::reverse(a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1]);
    std::reverse(a.values.begin() + a.row_ptr[r], a.values.begin() + a.row_ptr[r + 1]);
  }
  CsrMatrix<double, std::int32_t> dup;
  dup.rows = a.rows;
  dup.cols = a.cols;
  dup.row_ptr.assign(1, 0);
  for (std::int32_t r = 0; r < a.rows; ++r) {
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      dup.col_idx.push_back(a.col_idx[k]);
      dup.values.push_back(a.values[k]);
    }
    if (a.row_ptr[r + 1] > a.row_ptr[r] && r % 3 == 0) {
      dup.col_idx.push_back(a.col_idx[a.row_ptr[r]]);
      dup.values.push_back(-0.5 * a.values[a.row_ptr[r]]);
    }
    dup.row_ptr.push_back(static_cast<std::int32_t>(dup.col_idx.size()));
  }
  const auto before = dup.col_idx;
  for (int threads : {1, 3}) {
    Options options;
    options.threads = threads;
    options.column_span = 7;
    for (Semiring s : kSemirings) {
      SCOPED_TRACE(std::string(to_string(s)) + ", threads " + std::to_string(threads));
      const PlanD plan(dup, s, Algorithm::ColumnChunked, options);
      EXPECT_NE(plan.policy().find("span=7"), std::string::npos) << plan.policy();
      EXPECT_NE(plan.policy().find("sorted-copy"), std::string::npos) << plan.policy();
      EXPECT_GE(plan.extra_bytes(), dup.values.size() * (sizeof(double) + sizeof(std::int32_t)));
      for (double shift : {0.0, 2.5}) {
        const auto x = ramp_x(dup.cols, shift);
        std::vector<double> y(static_cast<std::size_t>(dup.rows), std::numeric_limits<double>::quiet_NaN());
        plan.apply(x, y);
        const auto want = semiring_reference(s, dup, x);
        if (s == Semiring::PlusTimes) {
          // Two orders of one sum of n terms: |y - want| <= 2 n eps sum_j |a_ij x_j| (each within n eps of it).
          for (std::int32_t r = 0; r < dup.rows; ++r) {
            double magnitude = 0;
            for (std::int32_t k = dup.row_ptr[r]; k < dup.row_ptr[r + 1]; ++k)
              magnitude += std::abs(dup.values[k] * x[dup.col_idx[k]]);
            const double n = dup.row_ptr[r + 1] - dup.row_ptr[r];
            EXPECT_LE(std::abs(y[r] - want[r]), 2 * n * std::numeric_limits<double>::epsilon() * magnitude) << r;
          }
          cpu::ColumnChunkedPlan<double, std::int32_t> spmv(dup, Operation::NonTranspose, 7, threads);
          std::vector<double> z(y.size(), 0.0);
          spmv.apply(1.0, x, 0.0, z);
          EXPECT_TRUE(same_bits(y, z));
        } else {
          EXPECT_EQ(y, want);
        }
      }
    }
  }
  EXPECT_EQ(dup.col_idx, before);
  const cpu::ColumnChunkedPlan<double, std::int32_t> transposed(dup, Operation::Transpose, 7, 1);
  std::vector<double> x(static_cast<std::size_t>(dup.cols), 1.0), y(static_cast<std::size_t>(dup.rows));
  EXPECT_THROW(transposed.apply(Semiring::MinPlus, x, y), InvalidArgument);
}

// x and y of the wrong lengths (InvalidArgument, y untouched), and a moved-from plan.
TEST(SemiringPlan, WrongLengthsAndMovedFrom) {
  CsrMatrix<double, std::int32_t> a;  // 30 x 20, two entries a row on four diagonals (DIA takes it)
  a.rows = 30;
  a.cols = 20;
  a.row_ptr.assign(1, 0);
  for (std::int32_t i = 0; i < a.rows; ++i) {
    const std::int32_t p = i % 20, q = (i + 3) % 20;
    a.col_idx.insert(a.col_idx.end(), {std::min(p, q), std::max(p, q)});
    a.values.insert(a.values.end(), {0.5 * i - 3.0, 1.0 + (i % 4)});
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  for (Algorithm algorithm : kKernels) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    PlanD plan(a, Semiring::MinPlus, algorithm);
    std::vector<double> x(20, 1.0), y(30, -7.0);
    std::vector<double> short_x(19, 1.0), long_y(31, -7.0), short_y(29, -7.0);
    EXPECT_THROW(plan.apply(short_x, y), InvalidArgument);
    EXPECT_THROW(plan.apply(x, long_y), InvalidArgument);
    EXPECT_THROW(plan.apply(x, short_y), InvalidArgument);
    EXPECT_THROW(plan.apply(y, x), InvalidArgument);  // swapped
    EXPECT_EQ(y, std::vector<double>(30, -7.0));
    PlanD moved(std::move(plan));
    EXPECT_THROW(plan.apply(x, y), InvalidArgument);
    moved.apply(x, y);
    EXPECT_EQ(y, semiring_reference(Semiring::MinPlus, a, x));
    plan = std::move(moved);
    std::fill(y.begin(), y.end(), -7.0);
    plan.apply(x, y);
    EXPECT_EQ(y, semiring_reference(Semiring::MinPlus, a, x));
  }
}

// No rows, no columns (every row empty: the semiring's zero), no entries, one column: every kernel, every semiring.
TEST(SemiringPlan, DegenerateMatrices) {
  const std::vector<CsrMatrix<double, std::int32_t>> cases = {
      convert<double, std::int32_t>(zoo_detail::empty(0, 0)), convert<double, std::int32_t>(zoo_detail::empty(0, 5)),
      convert<double, std::int32_t>(zoo_detail::empty(5, 0)), convert<double, std::int32_t>(zoo_detail::empty(7, 3)),
      convert<double, std::int32_t>(zoo_detail::from_rows(1, {{{0, 2.0}}, {}, {{0, -1.0}}, {{0, 0.0}}}))};
  for (const auto& a : cases)
    for (Algorithm algorithm : kKernels)
      for (Semiring s : kSemirings) {
        SCOPED_TRACE(std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", " + std::string(to_string(algorithm)) +
                     ", " + std::string(to_string(s)));
        const PlanD plan(a, s, algorithm);
        for (double shift : {0.0, 3.0}) {
          const auto x = ramp_x(a.cols, shift);
          std::vector<double> y(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
          plan.apply(x, y);
          EXPECT_EQ(y, semiring_reference(s, a, x));
        }
      }
}

// One plan, four std::threads, each applying it to its own x into its own y many times, while the plan's own
// products run two OpenMP threads: every result must be the bits of a product run alone. A plan that kept scratch
// of its own (merge-path's carries, the formats' accumulators) would mix the threads' rows here.
TEST(SemiringPlan, ConcurrentAppliesFromSeveralThreads) {
  const auto rmat = convert<double, std::int32_t>(gen::rmat(12, 8, 79));
  const auto grid = convert<double, std::int32_t>(gen::poisson2d(60));
  constexpr int kThreads = 4, kRounds = 25;
  for (const auto* a : {&rmat, &grid})
    for (Algorithm algorithm : kKernels)
      for (Semiring s : {Semiring::PlusTimes, Semiring::MinPlus}) {
        if (expected_refusal(*a, s, algorithm)) continue;
        SCOPED_TRACE(std::to_string(a->rows) + " rows, " + std::string(to_string(algorithm)) + ", " +
                     std::string(to_string(s)));
        Options options;
        options.threads = 2;
        const PlanD plan(*a, s, algorithm, options);
        std::vector<std::vector<double>> xs, alone;
        for (int t = 0; t < kThreads; ++t) {
          xs.push_back(ramp_x(a->cols, 1.5 * t));
          alone.emplace_back(static_cast<std::size_t>(a->rows));
          plan.apply(xs.back(), alone.back());
        }
        std::atomic<int> wrong{0};
        std::vector<std::thread> workers;
        for (int t = 0; t < kThreads; ++t)
          workers.emplace_back([&, t] {
            std::vector<double> y(static_cast<std::size_t>(a->rows));
            for (int round = 0; round < kRounds; ++round) {
              std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
              plan.apply(xs[static_cast<std::size_t>(t)], y);
              if (!same_bits(y, alone[static_cast<std::size_t>(t)])) wrong.fetch_add(1);
            }
          });
        for (auto& w : workers) w.join();
        EXPECT_EQ(wrong.load(), 0) << "of " << kThreads * kRounds << " concurrent applies";
      }
}

}  // namespace
}  // namespace spmv::test
