// Half-precision value storage on the CPU backend (Options::values, issue 11; docs/algorithms/
// half_values_cpu.md): the half row loop, merge-parallel and SELL-C-sigma against the double reference
// of the rounded matrix on the whole zoo, against the unrounded matrix within the storage's rounding,
// the widening of every 16-bit pattern, thread counts and reproducibility, Auto's choice, and the
// refusals. CTest runs the sweep and these tests once more with SPMV_CPU_SIMD=0 (the scalar widening).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "common/error_bound.hpp"
#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/fem.hpp"
#include "spmv/semiring.hpp"
#include "spmv/spmm.hpp"
#include "spmv/operator.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::test {
namespace {

constexpr ValueStorage kStorages[] = {ValueStorage::F16, ValueStorage::Bf16};
// The CPU algorithms that offer half storage (besides Auto).
constexpr Algorithm kHalfAlgorithms[] = {Algorithm::RowLoop, Algorithm::MergeParallel, Algorithm::Sell};

std::string storage_name(ValueStorage s) { return std::string(to_string(s)); }

// SELL's padding limit in these tests: high enough that SELL takes every zoo matrix (huge_row_slice pads
// 10x, the 1 x 65536 row 16x at C = 16), so the half slices run on the whole zoo; the refusal itself
// is the format's, tested with f32.
constexpr double kSellTestPadding = 64;

Options half_options(ValueStorage s, int threads = 0, Algorithm algorithm = Algorithm::Auto) {
  Options options;
  options.values = s;
  options.threads = threads;
  if (algorithm == Algorithm::Sell) options.max_padding = kSellTestPadding;
  return options;
}

template <class Index>
bool all_finite(const CsrMatrix<float, Index>& a) {
  for (float v : a.values)
    if (!std::isfinite(v)) return false;
  return true;
}

// ---- Against the rounded matrix: the whole zoo ----------------------------------------------------
//
// Widening a stored value is exact, so the operator computes with exactly round_values(a, s) and its
// only error is the f32 summation's: check_operator compares it with cpu::reference run in double on
// the rounded matrix, per row within c(n)·eps_f32·(|β|·|y0_i| + |α|·Σ_j|a16_ij·x_j|) (Higham §3.1, the
// bound of tests/common/error_bound.hpp), for every (α, β) in {0, 1, -1, 0.5}², y poisoned with NaN
// when β = 0, and α = 0 with NaN and ±Inf in x.

struct HalfCase {
  ValueStorage storage;
  Algorithm algorithm;
  std::size_t matrix;  // index into zoo()
  Operation op;
  bool index64;
  int threads;  // Options::threads (0: the default)
};

// Auto and the row loop with the default threads; merge-parallel and SELL (whose splits depend on the
// count) with 1, 2 and 3 threads (3: more than the 2-core test machine has). 64-bit indices on the
// zoo's subset, once per algorithm.
std::vector<HalfCase> half_cases() {
  std::vector<HalfCase> cases;
  for (ValueStorage s : kStorages)
    for (Algorithm algorithm : {Algorithm::Auto, Algorithm::RowLoop, Algorithm::MergeParallel, Algorithm::Sell})
      for (std::size_t m = 0; m < zoo().size(); ++m)
        for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
          const bool split = algorithm == Algorithm::MergeParallel || algorithm == Algorithm::Sell;
          for (int threads : split ? std::vector<int>{1, 2, 3} : std::vector<int>{0}) {
            cases.push_back({s, algorithm, m, op, false, threads});
            if (zoo()[m].index64 && algorithm != Algorithm::Auto && threads != 1)
              cases.push_back({s, algorithm, m, op, true, threads});
          }
        }
  return cases;
}

struct HalfCaseName {
  std::string operator()(const ::testing::TestParamInfo<HalfCase>& info) const {
    const auto& c = info.param;
    return storage_name(c.storage) + "_" + identifier(to_string(c.algorithm)) +
           (c.threads > 0 ? "_t" + std::to_string(c.threads) : "") + "_" + zoo()[c.matrix].name + "_" +
           std::string(to_string(c.op)) + (c.index64 ? "_int64" : "_int32");
  }
};

template <class Index>
void check_half_case(const HalfCase& c) {
  const auto& entry = zoo()[c.matrix];
  const auto a = convert<float, Index>(zoo_matrix(c.matrix));
  const auto rounded = round_values(a, c.storage);
  if (!all_finite(rounded))
    GTEST_SKIP() << entry.name << " has values beyond " << storage_name(c.storage)
                 << "'s range (they become inf: HalfStorage.F16OverflowBecomesInf)";
  const auto oper = make_operator(Backend::Cpu, a, c.algorithm, c.op, half_options(c.storage, c.threads, c.algorithm));
  // Auto picks what it picks for f32 (row-loop or merge-parallel, by the thread count).
  const Algorithm expected = c.algorithm != Algorithm::Auto
                                 ? c.algorithm
                                 : make_operator(Backend::Cpu, a, Algorithm::Auto, c.op, Options{})->algorithm();
  EXPECT_EQ(to_string(oper->algorithm()), to_string(expected)) << oper->policy();
  EXPECT_NE(oper->policy().find("values=" + storage_name(c.storage)), std::string::npos) << oper->policy();
  ::testing::Test::RecordProperty("policy", oper->policy());
  const OperatorCheck check = check_operator(*oper, rounded, hash_name(HalfCaseName{}({c, 0})));
  EXPECT_EQ(check.pairs, 20);
  for (const auto& f : check.failures)
    ADD_FAILURE() << storage_name(c.storage) << " " << to_string(c.algorithm) << " [" << oper->policy() << "] on "
                  << entry.name << ", op " << to_string(c.op) << ": " << f;
}

class HalfStorageSweep : public ::testing::TestWithParam<HalfCase> {};

TEST_P(HalfStorageSweep, MatchesRoundedReference) {
  if (GetParam().index64) check_half_case<std::int64_t>(GetParam());
  else check_half_case<std::int32_t>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cpu, HalfStorageSweep, ::testing::ValuesIn(half_cases()), HalfCaseName{});

// ---- Against the unrounded matrix ----------------------------------------------------------------
//
// For values in the storage's normal range |a16 - a| <= u16·|a| (u16 = storage_unit_roundoff), so
//   |y - y_exact(A)| <= |y - y_exact(A16)| + |α|·Σ_j|a16_ij - a_ij|·|x_j|
//                    <= c·eps·(|β|·|y0_i| + |α|·(1 + u16)·Σ_j|a_ij·x_j|) + u16·|α|·Σ_j|a_ij·x_j|.
// check_error_bound allows c·eps·(|β|·|y0_i| + |α|·m_i); we pass m_i = (1 + u16/(c·eps))·Σ_j|a_ij·x_j|,
// which adds exactly u16·|α|·Σ|a x|; the (1 + u16) factor of the summation term is covered by c(n) being
// twice the Higham estimate (error_bound.hpp).

constexpr float kF16MinNormal = 0x1p-14f;
constexpr float kF16Max = 65504.0f;

TEST(HalfStorage, UnroundedMatrixWithinStorageRounding) {
  for (std::size_t m = 0; m < zoo().size(); ++m) {
    if (!zoo()[m].generated) continue;
    auto a = convert<float, std::int32_t>(zoo_matrix(m));
    for (float& v : a.values)  // into the normal range, where the relative bound holds
      if (v != 0 && std::abs(v) < kF16MinNormal) v = std::copysign(kF16MinNormal, v);
    const auto a_ref = convert<double, std::int64_t>(a);
    for (ValueStorage s : kStorages) {
      bool in_range = true;
      for (float v : a.values) in_range = in_range && (s != ValueStorage::F16 || std::abs(v) <= kF16Max);
      if (!in_range) continue;  // wide_range_values in f16: tested by F16OverflowBecomesInf
      const double u16 = storage_unit_roundoff(s);
      for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
        const auto oper = make_operator(Backend::Cpu, a, Algorithm::Auto, op, half_options(s));
        const auto lengths = output_row_lengths(a, op);
        const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
        const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
        SplitMix64 rng(hash_name(zoo()[m].name + storage_name(s) + std::string(to_string(op))));
        for (double alpha : kScalars)
          for (double beta : kScalars) {
            std::vector<float> x(nx), y0(ny);
            for (auto& v : x) v = static_cast<float>(rng.symmetric());
            for (auto& v : y0) v = beta == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(rng.symmetric());
            const std::vector<double> x_ref(x.begin(), x.end());
            std::vector<double> y_ref(y0.begin(), y0.end());
            cpu::reference<double, std::int64_t>(a_ref, op, alpha, x_ref, beta, y_ref);
            auto magnitude = cpu::reference_magnitude<double, std::int64_t>(a_ref, op, x_ref);
            for (std::size_t i = 0; i < ny; ++i)
              magnitude[i] *= 1.0 + u16 / (bound_factor(lengths[i]) * std::numeric_limits<float>::epsilon());
            std::vector<float> y = y0;
            oper->apply(static_cast<float>(alpha), x, static_cast<float>(beta), y);
            const auto report = check_error_bound<float>(y, y_ref, y0, magnitude, lengths, alpha, beta);
            EXPECT_TRUE(report.passed()) << storage_name(s) << " on " << zoo()[m].name << ", op " << to_string(op)
                                         << ", alpha=" << alpha << " beta=" << beta << ": " << report.describe();
          }
      }
    }
  }
}

// ---- The widening of every 16-bit pattern --------------------------------------------------------

// The widening of pattern b as each half kernel uses it (row loop, merge-parallel, SELL; SIMD and, under
// SPMV_CPU_SIMD=0, scalar), in both operations and both transpose paths:
// A x with A = the 65536 x 1 column of every pattern, and A^T x with A = the 1 x 65536 row, x = {1}.
// Each y_b = 0 + w(b)·1 is exact, so it must equal the header's widening (==, not a tolerance: every
// operation is exact; -0 sums to +0, which == accepts); NaN patterns must stay NaN.
TEST(HalfStorage, EveryPatternWidensExactly) {
  constexpr std::int32_t kPatterns = 65536;
  for (ValueStorage s : kStorages)
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (int threads : {1, 2}) {
        CsrMatrix<float, std::int32_t> a;
        a.rows = op == Operation::NonTranspose ? kPatterns : 1;
        a.cols = op == Operation::NonTranspose ? 1 : kPatterns;
        a.row_ptr.resize(static_cast<std::size_t>(a.rows) + 1);
        for (std::int32_t r = 0; r <= a.rows; ++r) a.row_ptr[r] = op == Operation::NonTranspose ? r : r * kPatterns;
        a.col_idx.resize(kPatterns);
        a.values.resize(kPatterns);
        for (std::int32_t b = 0; b < kPatterns; ++b) {
          a.col_idx[b] = op == Operation::NonTranspose ? 0 : b;
          const auto bits = static_cast<std::uint16_t>(b);
          a.values[b] = s == ValueStorage::F16 ? f16_bits_to_float(bits) : bf16_bits_to_float(bits);
        }
        for (Algorithm algorithm : kHalfAlgorithms) {
          const auto oper = make_operator(Backend::Cpu, a, algorithm, op, half_options(s, threads, algorithm));
          const std::vector<float> x = {1.0f};
          std::vector<float> y(kPatterns, std::numeric_limits<float>::quiet_NaN());
          oper->apply(1.0f, x, 0.0f, y);
          int wrong = 0;
          for (std::int32_t b = 0; b < kPatterns; ++b) {
            const float want = a.values[b];
            const bool ok = std::isnan(want) ? std::isnan(y[b]) : y[b] == want;
            if (!ok && ++wrong <= 5)
              ADD_FAILURE() << storage_name(s) << " " << to_string(algorithm) << " op " << to_string(op)
                            << " threads=" << threads << " pattern 0x" << std::hex << b << std::dec << ": got " << y[b]
                            << ", expected " << want;
          }
          EXPECT_EQ(wrong, 0) << storage_name(s) << " " << to_string(algorithm) << " op " << to_string(op)
                              << " threads=" << threads;
        }
      }
}

// Values beyond fp16's range become ±inf when the operator is built (round to nearest even: 65504 is
// the largest finite, 65520 and above round to inf), as the conversion defines; bfloat16 keeps them.
TEST(HalfStorage, F16OverflowBecomesInf) {
  CsrMatrix<float, std::int32_t> a;
  a.rows = 3;
  a.cols = 2;
  a.row_ptr = {0, 2, 4, 5};
  a.col_idx = {0, 1, 0, 1, 0};
  a.values = {1e5f, 1.0f, 65504.0f, 0.5f, -65520.0f};
  const std::vector<float> x = {1.0f, 1.0f};
  std::vector<float> y(3);
  make_operator(Backend::Cpu, a, Algorithm::Auto, Operation::NonTranspose, half_options(ValueStorage::F16))
      ->apply(1.0f, x, 0.0f, y);
  EXPECT_EQ(y[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(y[1], 65504.5f);  // exact in f32
  EXPECT_EQ(y[2], -std::numeric_limits<float>::infinity());
  make_operator(Backend::Cpu, a, Algorithm::Auto, Operation::NonTranspose, half_options(ValueStorage::Bf16))
      ->apply(1.0f, x, 0.0f, y);
  EXPECT_TRUE(std::isfinite(y[0]) && std::isfinite(y[2]));
}

// ---- Thread counts --------------------------------------------------------------------------------

// Options::threads 1 and 2 (and 3, more threads than the test machine's cores), for every algorithm
// that offers half storage: every product within the bound, the policy names the count, and a product
// is bitwise reproducible for a given count (applied twice, and by a second operator: merge-parallel
// adds its carries and every transpose its private vectors in thread order). The row loop's and SELL's
// A x are also bitwise the same for every count (each row is summed in order by one thread);
// merge-parallel's split moves with the count, so only the bound holds between counts.
TEST(HalfStorage, ThreadCounts) {
  for (const char* name : {"huge_row", "power_law_rmat12", "empty_rows", "tall_5000x37", "one_row"}) {
    const auto a = convert<float, std::int32_t>(zoo_matrix(name));
    for (ValueStorage s : kStorages) {
      const auto rounded = round_values(a, s);
      for (Algorithm algorithm : kHalfAlgorithms)
        for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
          const std::string what = storage_name(s) + " " + std::string(to_string(algorithm)) + " on " + name +
                                   ", op " + std::string(to_string(op));
          const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
          SplitMix64 rng(hash_name(name));
          std::vector<float> x(nx);
          for (auto& v : x) v = static_cast<float>(rng.symmetric());
          std::vector<float> first;
          for (int threads : {1, 2, 3}) {
            const auto oper = make_operator(Backend::Cpu, a, algorithm, op, half_options(s, threads, algorithm));
            // SELL's transpose is a sequential scatter (threads=1 whatever is asked, as for f32).
            const int runs = algorithm == Algorithm::Sell && op == Operation::Transpose ? 1 : threads;
            EXPECT_NE(oper->policy().find("threads=" + std::to_string(runs)), std::string::npos) << oper->policy();
            const OperatorCheck check = check_operator(*oper, rounded, hash_name(name) + threads);
            for (const auto& f : check.failures) ADD_FAILURE() << what << " threads=" << threads << ": " << f;
            const auto product = [&](Operator<float, std::int32_t>& o) {
              std::vector<float> y(static_cast<std::size_t>(o.rows()), 0.25f);
              o.apply(1.0f, x, 0.5f, y);
              return y;
            };
            const std::vector<float> y = product(*oper);
            const auto bitwise = [](const std::vector<float>& u, const std::vector<float>& v) {
              return u.size() == v.size() && std::memcmp(u.data(), v.data(), u.size() * sizeof(float)) == 0;
            };
            EXPECT_TRUE(bitwise(y, product(*oper))) << what << " threads=" << threads << ": not reproducible";
            const auto again = make_operator(Backend::Cpu, a, algorithm, op, half_options(s, threads, algorithm));
            EXPECT_TRUE(bitwise(y, product(*again))) << what << " threads=" << threads << ": a second operator differs";
            if (op == Operation::Transpose || algorithm == Algorithm::MergeParallel) continue;
            if (first.empty()) first = y;
            else EXPECT_TRUE(bitwise(first, y)) << what << ": A x differs between 1 and " << threads << " threads";
          }
        }
    }
  }
}

// Widening is exact and the half kernels sum in their f32 twins' order, so they return the very bits
// of the f32 kernel on the rounded matrix: SELL (SIMD or not, both operations) and merge-parallel with
// its scalar f32 loop (Options::cpu_simd = 0; its SIMD row kernels sum in another order).
TEST(HalfStorage, SameBitsAsF32KernelOnRoundedMatrix) {
  for (const char* name : {"poisson2d_64", "power_law_rmat12", "empty_rows", "huge_row"}) {
    const auto a = convert<float, std::int32_t>(zoo_matrix(name));
    for (ValueStorage s : kStorages) {
      const auto rounded = round_values(a, s);
      for (Algorithm algorithm : {Algorithm::MergeParallel, Algorithm::Sell})
        for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
          Options half = half_options(s, 2, algorithm), f32 = half;
          f32.values = ValueStorage::Native;
          if (algorithm == Algorithm::MergeParallel) half.cpu_simd = f32.cpu_simd = 0;
          const auto h = make_operator(Backend::Cpu, a, algorithm, op, half);
          const auto f = make_operator(Backend::Cpu, rounded, algorithm, op, f32);
          SplitMix64 rng(hash_name(name) + 7);
          std::vector<float> x(static_cast<std::size_t>(h->cols()));
          for (auto& v : x) v = static_cast<float>(rng.symmetric());
          std::vector<float> y0(static_cast<std::size_t>(h->rows()));
          for (auto& v : y0) v = static_cast<float>(rng.symmetric());
          std::vector<float> yh = y0, yf = y0;
          h->apply(0.75f, x, -0.5f, yh);
          f->apply(0.75f, x, -0.5f, yf);
          EXPECT_EQ(std::memcmp(yh.data(), yf.data(), yh.size() * sizeof(float)), 0)
              << storage_name(s) << " " << to_string(algorithm) << " on " << name << ", op " << to_string(op) << " ["
              << h->policy() << "] vs [" << f->policy() << "]";
        }
    }
  }
}

// ---- Auto's choice ---------------------------------------------------------------------------------

// Auto with half storage takes the f32 rule: row-loop or merge-parallel by the thread count (the sweep
// checks that), and with the expected-applies hint the conversion f32 would make when it is SELL (with
// 16-bit slices); where f32 converts to DIA, which offers no half storage, it keeps the CSR kernel and
// says so. Every choice is checked against the rounded matrix.
TEST(HalfStorage, AutoWithExpectedAppliesFollowsTheF32Rule) {
  int sell = 0;
  for (std::size_t m = 0; m < zoo().size(); ++m) {
    const auto a = convert<float, std::int32_t>(zoo_matrix(m));
    if (a.nnz() == 0) continue;
    Options f32;
    f32.expected_applies = 1000;
    f32.deterministic = true;  // the fitted costs, not this CPU's measured scales: the same SELL cases anywhere
    const auto f = make_operator(Backend::Cpu, a, Algorithm::Auto, Operation::NonTranspose, f32);
    for (ValueStorage s : kStorages) {
      Options half = half_options(s);
      half.expected_applies = 1000;
      half.deterministic = true;
      const auto h = make_operator(Backend::Cpu, a, Algorithm::Auto, Operation::NonTranspose, half);
      const Algorithm want = f->algorithm() == Algorithm::Dia
                                 ? make_operator(Backend::Cpu, a, Algorithm::Auto, Operation::NonTranspose, {})->algorithm()
                                 : f->algorithm();
      EXPECT_EQ(to_string(h->algorithm()), to_string(want)) << zoo()[m].name << ": [" << h->policy() << "] for f32 ["
                                                           << f->policy() << "]";
      if (f->algorithm() == Algorithm::Dia)
        EXPECT_NE(h->policy().find("no half storage"), std::string::npos) << h->policy();
      if (h->algorithm() != Algorithm::Sell) continue;
      ++sell;
      const auto rounded = round_values(a, s);
      if (!all_finite(rounded)) continue;
      EXPECT_NE(h->policy().find("values=" + storage_name(s)), std::string::npos) << h->policy();
      const OperatorCheck check = check_operator(*h, rounded, hash_name(zoo()[m].name) + 3);
      for (const auto& failure : check.failures) ADD_FAILURE() << zoo()[m].name << " auto->sell: " << failure;
    }
  }
  EXPECT_GT(sell, 0) << "no zoo matrix converts to SELL under the hint: the half SELL path went untested here";
}

// ---- Reordering carries the storage --------------------------------------------------------------

// Options::reorder builds the half operator of P A P^T; rounding commutes with the permutation, so the
// reference is still that of round_values(a).
TEST(HalfStorage, ReorderedOperatorMatchesRoundedReference) {
  const auto a = convert<float, std::int32_t>(zoo_matrix("poisson2d_64"));
  for (ValueStorage s : kStorages)
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      Options options = half_options(s);
      options.reorder = Reorder::Rcm;
      const auto oper = make_operator(Backend::Cpu, a, Algorithm::Auto, op, options);
      EXPECT_NE(oper->policy().find("values=" + storage_name(s)), std::string::npos) << oper->policy();
      const OperatorCheck check = check_operator(*oper, round_values(a, s), 41);
      for (const auto& f : check.failures) ADD_FAILURE() << storage_name(s) << " rcm, op " << to_string(op) << ": " << f;
    }
}

// ---- Refusals -------------------------------------------------------------------------------------

void expect_refusal(const auto& make, const std::string& must_mention, const std::string& what) {
  try {
    make();
    ADD_FAILURE() << what << " was accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find(must_mention), std::string::npos) << what << ": " << e.what();
  }
}

TEST(HalfStorage, RefusedWhereNotOffered) {
  const auto af = convert<float, std::int32_t>(zoo_matrix("poisson2d_64"));
  const auto ad = convert<double, std::int32_t>(zoo_matrix("poisson2d_64"));
  for (ValueStorage s : kStorages) {
    const Options options = half_options(s);
    const std::string storage = "values=" + storage_name(s);
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      std::vector<Algorithm> refused(backend_algorithms(Backend::Cpu, op).begin(),
                                     backend_algorithms(Backend::Cpu, op).end());
      refused.push_back(Algorithm::Tune);
      for (Algorithm algorithm : refused) {
        if (std::find(std::begin(kHalfAlgorithms), std::end(kHalfAlgorithms), algorithm) != std::end(kHalfAlgorithms))
          continue;
        expect_refusal([&] { make_operator(Backend::Cpu, af, algorithm, op, options); }, storage,
                       std::string(to_string(algorithm)) + " with " + storage);
        expect_refusal([&] { make_operator(Backend::Cpu, af, algorithm, op, options); }, "row-loop",
                       std::string(to_string(algorithm)) + " with " + storage + " (names the offering algorithms)");
      }
      for (Algorithm algorithm : {Algorithm::Auto, Algorithm::RowLoop, Algorithm::MergeParallel, Algorithm::Sell})
        expect_refusal([&] { make_operator(Backend::Cpu, ad, algorithm, op, options); }, "use a float operator",
                       "a double operator with " + storage);
    }
    // Deterministic mode keeps half storage and Auto's choice (the kernels' order is fixed for a thread count).
    Options deterministic = options;
    deterministic.deterministic = true;
    EXPECT_EQ(make_operator(Backend::Cpu, af, Algorithm::Auto, Operation::NonTranspose, deterministic)->algorithm(),
              make_operator(Backend::Cpu, af, Algorithm::Auto, Operation::NonTranspose, Options{})->algorithm());
  }
}

// SpMM, the semirings and the FEM LMA operator have no half-precision kernel: they refuse the option
// (naming it) instead of ignoring it.
TEST(HalfStorage, PathsWithoutAHalfKernelRefuse) {
  const auto af = convert<float, std::int32_t>(zoo_matrix("poisson2d_64"));
  const std::vector<float> x(static_cast<std::size_t>(af.cols), 1.0f);
  std::vector<float> y(static_cast<std::size_t>(af.rows));
  const auto problem = fem::build<float, std::int32_t>(fem::MeshParams{2, 3, 0.5, 0.05});
  for (ValueStorage s : kStorages) {
    const Options options = half_options(s);
    const std::string storage = "values=" + storage_name(s);
    expect_refusal([&] { make_spmm_operator(Backend::Cpu, af, Operation::NonTranspose, SpmmKernel::Spmm, options); },
                   storage, "SpMM with " + storage);
    expect_refusal([&] { semiring_multiply(Backend::Cpu, Semiring::MinPlus, af, std::span<const float>(x),
                                           std::span<float>(y), options); },
                   storage, "a semiring product with " + storage);
    expect_refusal([&] { fem::make_cpu_lma_operator(problem, options); }, storage, "the LMA operator with " + storage);
  }
}

}  // namespace
}  // namespace spmv::test
