// The CPU dispatch layer: Auto, the offered list, refusals, argument checks, Options.threads and
// Options.column_span, and ColumnChunked's sorted copy of unsorted input.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "common/symmetric_check.hpp"
#include "common/zoo.hpp"
#include "cpu/cpu_operator.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {
namespace {

using Matrix = CsrMatrix<double, std::int32_t>;

std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> v(n);
  for (auto& e : v) e = rng.symmetric();
  return v;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CpuDispatch, OffersTheCpuAlgorithmsForBothOperations) {
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const auto list = backend_algorithms(Backend::Cpu, op);
    for (Algorithm a : {Algorithm::Reference, Algorithm::RowLoop, Algorithm::ColumnChunked, Algorithm::MergeParallel,
                        Algorithm::Coo, Algorithm::Ell, Algorithm::EllR, Algorithm::EllRVector, Algorithm::Dia,
                        Algorithm::Hyb, Algorithm::Sell})
      EXPECT_NE(std::find(list.begin(), list.end(), a), list.end()) << to_string(a);
    for (Algorithm a : list) {
      EXPECT_NE(a, Algorithm::Auto);
      EXPECT_TRUE(a != Algorithm::CsrScalar && a != Algorithm::CusparseCsrAlg1) << to_string(a);
    }
  }
}

// Aᵀx with the expected-applies hint: Auto takes the explicit transpose (Aᵀ built once, then Auto's
// non-transposed plan on it, which may convert in turn); below kTransposeMinApplies (128) it keeps the
// copy-free scatter. The explicit algorithm is offered for Aᵀx only, holds the copy in extra_bytes, and
// matches the reference (the differential sweep runs it on the whole zoo too).
// Aᵀx on a matrix equal to its transpose runs A x's plan (tests/common/symmetric_check.hpp).
TEST(CpuDispatch, SymmetricRunsTransposeAsAx) { check_symmetric_route(Backend::Cpu); }

TEST(CpuDispatch, AutoTransposesExplicitlyWhenTheHintRepaysTheCopy) {
  const auto a = convert<double, std::int32_t>(gen::random_uniform(3000, 2000, 9, 4));
  Options hint;
  hint.expected_applies = 128;
  const auto explicit_t = make_cpu_operator(a, Algorithm::Auto, Operation::Transpose, hint);
  EXPECT_EQ(explicit_t->algorithm(), Algorithm::ExplicitTranspose) << explicit_t->policy();
  const std::string policy = explicit_t->policy();
  EXPECT_TRUE(contains(policy, "A^T copy repaid") && contains(policy, "A^T copy, then auto(")) << policy;
  EXPECT_GE(explicit_t->extra_bytes(), a.col_idx.size() * (sizeof(double) + sizeof(std::int32_t)));
  const OperatorCheck check = check_operator(*explicit_t, a, 47);
  for (const auto& f : check.failures) ADD_FAILURE() << explicit_t->policy() << ": " << f;
  hint.expected_applies = 127;
  EXPECT_NE(make_cpu_operator(a, Algorithm::Auto, Operation::Transpose, hint)->algorithm(),
            Algorithm::ExplicitTranspose);
  EXPECT_THROW(make_cpu_operator(a, Algorithm::ExplicitTranspose, Operation::NonTranspose), Unsupported);
  const auto named = make_cpu_operator(a, Algorithm::ExplicitTranspose, Operation::Transpose);
  EXPECT_EQ(named->operation(), Operation::Transpose);
  EXPECT_EQ(named->rows(), a.cols);
  EXPECT_EQ(named->cols(), a.rows);
}

TEST(CpuDispatch, AutoTakesThreadsFromTheMatrixSizeWithinTheAllowedTeam) {
  const auto tiny = convert<double, std::int32_t>(gen::poisson2d(8));     // 288 nonzeros
  const auto small = convert<double, std::int32_t>(gen::poisson2d(100));  // 49,600: issue 12's 10^4 rows
  const auto large = convert<double, std::int32_t>(gen::poisson2d(400));  // 798,400
  const int allowed = omp_get_max_threads();
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    auto tiny_op = make_cpu_operator(tiny, Algorithm::Auto, op);
    EXPECT_EQ(tiny_op->algorithm(), Algorithm::RowLoop);
    EXPECT_TRUE(contains(tiny_op->policy(), "threads=1 of ")) << tiny_op->policy();
    // 1,024 nonzeros per thread from 4,096 on: issue 12's 10^4-row product runs on up to 48 threads.
    auto small_op = make_cpu_operator(small, Algorithm::Auto, op);
    EXPECT_EQ(small_op->algorithm(), allowed > 1 ? Algorithm::MergeParallel : Algorithm::RowLoop);
    EXPECT_TRUE(contains(small_op->policy(), "threads=" + std::to_string(std::min(allowed, 48)) + " of "))
        << small_op->policy();
    // Just past the start of the parallel range, at least two threads where two are allowed.
    const auto start = convert<double, std::int32_t>(gen::poisson2d(30));  // 4,380 nonzeros
    EXPECT_TRUE(contains(make_cpu_operator(start, Algorithm::Auto, op)->policy(),
                         "threads=" + std::to_string(std::min(allowed, 4)) + " of "));
    auto large_op = make_cpu_operator(large, Algorithm::Auto, op);
    EXPECT_EQ(large_op->algorithm(), allowed > 1 ? Algorithm::MergeParallel : Algorithm::RowLoop);
    const int want = std::min(allowed, 798400 / 1024);
    EXPECT_TRUE(contains(large_op->policy(), "auto(nnz=798400 threads=" + std::to_string(want) + " of ")) << large_op->policy();
    EXPECT_EQ(large_op->operation(), op);
    EXPECT_EQ(large_op->backend(), Backend::Cpu);
    // The team size OpenMP allows caps Auto ...
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    EXPECT_EQ(make_cpu_operator(large, Algorithm::Auto, op)->algorithm(), Algorithm::RowLoop);
    omp_set_num_threads(saved);
    // ... and a thread count the user sets is used as given, whatever the size.
    Options options;
    options.threads = 3;
    auto set_op = make_cpu_operator(tiny, Algorithm::Auto, op, options);
    EXPECT_EQ(set_op->algorithm(), Algorithm::MergeParallel);
    EXPECT_TRUE(contains(set_op->policy(), "threads=3 as set")) << set_op->policy();
    EXPECT_TRUE(contains(set_op->policy(), "threads=3 segments=")) << set_op->policy();
  }
}

TEST(CpuDispatch, UnofferedAlgorithmIsUnsupportedAndNamesTheOfferedOnes) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(4));
  for (Algorithm alg : {Algorithm::CsrScalar, Algorithm::MergePath, Algorithm::TransposeAtomic,
                        Algorithm::CusparseCsrAlg2}) {
    try {
      make_cpu_operator(a, alg, Operation::NonTranspose);
      ADD_FAILURE() << to_string(alg) << " was accepted";
    } catch (const Unsupported& e) {
      const std::string what = e.what();
      EXPECT_TRUE(contains(what, std::string(to_string(alg)))) << what;
      EXPECT_TRUE(contains(what, "merge-parallel") && contains(what, "row-loop")) << what;
    }
  }
}

TEST(CpuDispatch, InvalidMatrixIsRejectedBeforeAnything) {
  Matrix a = convert<double, std::int32_t>(gen::poisson2d(4));
  a.col_idx[3] = a.cols;
  EXPECT_THROW(make_cpu_operator(a, Algorithm::MergeParallel, Operation::NonTranspose), InvalidArgument);
  EXPECT_THROW(make_cpu_operator(a, Algorithm::CsrScalar, Operation::NonTranspose), InvalidArgument);
  a = convert<double, std::int32_t>(gen::poisson2d(4));
  a.row_ptr.pop_back();
  EXPECT_THROW(make_cpu_operator(a, Algorithm::Auto, Operation::Transpose), InvalidArgument);
}

TEST(CpuDispatch, SizeMismatchIsInvalidArgumentForEveryAlgorithm) {
  const auto a = convert<double, std::int32_t>(gen::random_uniform(30, 20, 3, 1));  // 30 x 20
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (Algorithm alg : backend_algorithms(Backend::Cpu, op)) {
      if (alg == Algorithm::Symmetric) {  // offered for matrices equal to their transpose only
        EXPECT_THROW(make_cpu_operator(a, alg, op), Unsupported);
        continue;
      }
      auto oper = make_cpu_operator(a, alg, op);
      const std::size_t nx = op == Operation::NonTranspose ? 20 : 30, ny = op == Operation::NonTranspose ? 30 : 20;
      std::vector<double> x(nx, 1.0), y(ny, 0.0), x_long(nx + 1, 1.0), y_short(ny - 1, 0.0);
      EXPECT_NO_THROW(oper->apply(1.0, x, 0.0, y)) << to_string(alg);
      EXPECT_THROW(oper->apply(1.0, x_long, 0.0, y), InvalidArgument) << to_string(alg);
      EXPECT_THROW(oper->apply(1.0, x, 0.0, y_short), InvalidArgument) << to_string(alg);
      // x and y swapped (the sizes of the other operation)
      EXPECT_THROW(oper->apply(1.0, y, 0.0, x), InvalidArgument) << to_string(alg);
      Timing t;
      EXPECT_THROW(t = oper->time(1.0, x_long, 0.0, y, {}), InvalidArgument) << to_string(alg);
    }
}

TEST(CpuDispatch, ThreadsOptionSetsTheTeamAndIsRestored) {
  const auto a = convert<double, std::int32_t>(gen::rmat(10, 8, 3));
  const auto x = random_vector(static_cast<std::size_t>(a.cols), 4);
  const int before = omp_get_max_threads();
  for (Operation op : {Operation::NonTranspose, Operation::Transpose})
    for (int threads : {1, 3}) {
      Options options;
      options.threads = threads;
      for (Algorithm alg : {Algorithm::MergeParallel, Algorithm::ColumnChunked}) {
        auto oper = make_cpu_operator(a, alg, op, options);
        EXPECT_TRUE(contains(oper->policy(), "threads=" + std::to_string(threads))) << oper->policy();
        std::vector<double> y(x.size()), want(x.size());
        oper->apply(1.0, x, 0.0, y);
        cpu::reference<double, std::int32_t>(a, op, 1.0, x, 0.0, want);
        for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-12) << to_string(alg) << " row " << i;
      }
      // Every kernel, including the format kernels and Eigen, runs inside the pinned team size.
      for (Algorithm alg : backend_algorithms(Backend::Cpu, op)) {
        std::unique_ptr<Operator<double, std::int32_t>> oper;
        try {
          oper = make_cpu_operator(a, alg, op, options);
        } catch (const Unsupported&) {
          continue;  // padded formats refuse this power-law matrix
        }
        std::vector<double> y(x.size());
        oper->apply(1.0, x, 0.0, y);
        EXPECT_EQ(omp_get_max_threads(), before) << to_string(alg) << " did not restore the thread count";
      }
    }
  // The default (0) follows OpenMP.
  auto oper = make_cpu_operator(a, Algorithm::MergeParallel, Operation::NonTranspose);
  EXPECT_TRUE(contains(oper->policy(), "threads=" + std::to_string(before))) << oper->policy();
}

TEST(CpuDispatch, MergeParallelTransposeWorkspaceIsReported) {
  const auto a = convert<double, std::int32_t>(gen::random_uniform(50, 70, 4, 5));
  Options options;
  options.threads = 4;
  auto t = make_cpu_operator(a, Algorithm::MergeParallel, Operation::Transpose, options);
  EXPECT_GE(t->extra_bytes(), 4u * 70u * sizeof(double));  // a private y per thread
  EXPECT_TRUE(contains(t->policy(), "private-y-per-thread")) << t->policy();
  auto n = make_cpu_operator(a, Algorithm::MergeParallel, Operation::NonTranspose, options);
  EXPECT_LT(n->extra_bytes(), 4u * 70u * sizeof(double));
  EXPECT_GE(n->setup_ms(), 0.0);
}

TEST(CpuDispatch, ColumnChunkedSortsACopyOfUnsortedInput) {
  const auto& unsorted = zoo_matrix("unsorted_columns");
  const auto a = convert<double, std::int32_t>(unsorted);
  ASSERT_FALSE(is_canonical(a));
  const auto before = a;
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    Options options;
    options.column_span = 100;  // 12 chunks over 1200 columns
    auto oper = make_cpu_operator(a, Algorithm::ColumnChunked, op, options);
    EXPECT_TRUE(contains(oper->policy(), "sorted-copy")) << oper->policy();
    EXPECT_TRUE(contains(oper->policy(), "span=100 chunks=12")) << oper->policy();
    const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
    const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
    const auto x = random_vector(nx, 6);
    auto y = random_vector(ny, 7), want = y;
    oper->apply(-0.5, x, 2.0, y);
    cpu::reference<double, std::int32_t>(a, op, -0.5, x, 2.0, want);
    for (std::size_t i = 0; i < ny; ++i) ASSERT_NEAR(y[i], want[i], 1e-12) << "row " << i;
  }
  // The caller's matrix is untouched.
  EXPECT_EQ(a.col_idx, before.col_idx);
  EXPECT_EQ(a.values, before.values);
  // Sorted input is used as it is.
  auto sorted = make_cpu_operator(convert<double, std::int32_t>(gen::poisson2d(10)), Algorithm::ColumnChunked,
                                  Operation::NonTranspose);
  EXPECT_FALSE(contains(sorted->policy(), "sorted-copy")) << sorted->policy();
  EXPECT_TRUE(contains(sorted->policy(), "span=100 chunks=1")) << sorted->policy();  // span clamped to cols
}

TEST(CpuDispatch, ColumnChunkedDefaultSpanFillsTheChunkBytes) {
  const auto a = convert<float, std::int32_t>(gen::random_uniform(10, 1 << 20, 2, 8));
  auto oper = make_cpu_operator(a, Algorithm::ColumnChunked, Operation::NonTranspose);
  EXPECT_TRUE(contains(oper->policy(), "span=" + std::to_string(cpu::kColumnChunkBytes / sizeof(float)) + " chunks=4"))
      << oper->policy();
}

// ---- SIMD row kernels (Options::cpu_simd, environment SPMV_CPU_SIMD) ------------------------------

TEST(CpuSimd, OptionChoosesTheKernelAndPolicySaysWhich) {
  // Rows of 200: past the vector path's threshold (64 f32 on AVX-512) and past kUnrollMaxRow, below which
  // such regular, local rows would take the unrolled scalar loop instead (UnrolledShortRowsForRegularLocalRows).
  const auto a = convert<float, std::int32_t>(gen::random_uniform(300, 300, 200, 3));
  const auto short_rows = convert<float, std::int32_t>(gen::poisson2d(30));
  for (Algorithm algorithm : {Algorithm::RowLoop, Algorithm::MergeParallel}) {
    Options options;
    options.cpu_simd = 0;
    EXPECT_TRUE(contains(make_cpu_operator(a, algorithm, Operation::NonTranspose, options)->policy(), "simd=off"))
        << to_string(algorithm);
    options.cpu_simd = 1;
    const auto policy = make_cpu_operator(a, algorithm, Operation::NonTranspose, options)->policy();
    EXPECT_TRUE(contains(policy, "simd=") && !contains(policy, "simd=off") && !contains(policy, "unused"))
        << to_string(algorithm) << ": " << policy;
    // Every row shorter than the vector path's threshold: the scalar loop, and the policy says so.
    const auto short_policy = make_cpu_operator(short_rows, algorithm, Operation::NonTranspose, options)->policy();
    EXPECT_TRUE(contains(short_policy, "unused (rows < ")) << to_string(algorithm) << ": " << short_policy;
    // T scatters into y: always the scalar loop.
    EXPECT_TRUE(contains(make_cpu_operator(a, algorithm, Operation::Transpose, options)->policy(), "simd=off"));
  }
}

// The short-row loop the dispatched path picks from row statistics (src/cpu/csr_simd.hpp,
// choose_row_kernels): unrolled for regular rows of 12+ whose columns stay near the diagonal, the plain
// loop for short rows, irregular rows or columns spread over an x larger than the locality window; the
// unrolled plan matches the reference (check_operator: alpha/beta grid, NaN in y when beta = 0) for both
// index types (the zoo's unroll_lengths sweeps its remainders in the differential tests).
template <class Value, class Index>
void check_unrolled_choice() {
  const auto banded = convert<Value, Index>(gen::banded(3000, 8, 1));                   // 17 per row, local
  const auto spread = convert<Value, Index>(gen::random_uniform(3000, 1 << 20, 14, 5));  // x far beyond 512 KiB
  const auto power = convert<Value, Index>(gen::rmat(12, 16, 3));                        // irregular rows
  const auto short_rows = convert<Value, Index>(gen::poisson2d(40));                     // 5 per row
  const auto zoo_lengths = convert<Value, Index>(zoo_matrix("unroll_lengths"));  // the sweep's remainders
  for (Algorithm algorithm : {Algorithm::RowLoop, Algorithm::MergeParallel}) {
    Options options;
    options.cpu_simd = 1;
    EXPECT_TRUE(contains(make_cpu_operator(zoo_lengths, algorithm, Operation::NonTranspose, options)->policy(),
                         "rows unrolled"));
    const auto oper = make_cpu_operator(banded, algorithm, Operation::NonTranspose, options);
    EXPECT_TRUE(contains(oper->policy(), "rows unrolled")) << to_string(algorithm) << ": " << oper->policy();
    const OperatorCheck check = check_operator(*oper, banded, 23);
    for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;
    for (const auto* m : {&spread, &power, &short_rows}) {
      const auto plain = make_cpu_operator(*m, algorithm, Operation::NonTranspose, options);
      EXPECT_FALSE(contains(plain->policy(), "unrolled")) << to_string(algorithm) << ": " << plain->policy();
    }
    options.cpu_simd = 0;  // the forced fallback never unrolls
    EXPECT_TRUE(contains(make_cpu_operator(banded, algorithm, Operation::NonTranspose, options)->policy(), "simd=off"));
  }
}

TEST(CpuSimd, UnrolledShortRowsForRegularLocalRows) {
  check_unrolled_choice<float, std::int32_t>();
  check_unrolled_choice<double, std::int32_t>();
  check_unrolled_choice<float, std::int64_t>();
  check_unrolled_choice<double, std::int64_t>();
}

// Options::cpu_rows names the row kernel of the SIMD path (rows in lanes, a vector per row, and the two
// scalar loops): the policy says which, and each matches the reference (alpha/beta grid, NaN in y when
// beta = 0) on every row length 0-140 (the zoo's simd_lengths: lanes groups of every length mix, rows
// shorter than one vector, masked last vectors) for both index types and 1 or 3 threads. ctest runs the
// whole differential sweep of row-loop and merge-parallel with each kernel too (SPMV_CPU_ROWS).
template <class Value, class Index>
void check_named_row_kernels() {
  const auto a = convert<Value, Index>(zoo_matrix("simd_lengths"));
  const char* words[] = {"simd=", "rows unrolled", "rows in lanes", "a vector per row"};
  for (Algorithm algorithm : {Algorithm::RowLoop, Algorithm::MergeParallel})
    for (int rows = 0; rows < 4; ++rows)
      for (int threads : {1, 3}) {
        Options options;
        options.cpu_simd = 1;
        options.cpu_rows = rows;
        options.threads = threads;
        const auto oper = make_cpu_operator(a, algorithm, Operation::NonTranspose, options);
        // f32 with int64 indices has no rows-in-lanes kernel (it runs the plain loop) but says the name.
        EXPECT_TRUE(contains(oper->policy(), words[rows])) << oper->policy();
        const OperatorCheck check = check_operator(*oper, a, 31 + static_cast<std::uint64_t>(rows));
        EXPECT_EQ(check.pairs, 20);
        for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;
      }
  Options bad;
  bad.cpu_simd = 1;
  bad.cpu_rows = 4;
  EXPECT_THROW(make_cpu_operator(a, Algorithm::RowLoop, Operation::NonTranspose, bad), InvalidArgument);
}

TEST(CpuSimd, RowKernelOptionNamesTheKernel) {
  check_named_row_kernels<float, std::int32_t>();
  check_named_row_kernels<double, std::int32_t>();
  check_named_row_kernels<float, std::int64_t>();
  check_named_row_kernels<double, std::int64_t>();
}

// Every Highway target compiled in and supported by this CPU (on x86: AVX-512, AVX2, SSE4), forced in turn
// with hwy::SetSupportedTargetsForTest: the kernels above, SELL and DIA as each target compiles them, so that
// a machine with AVX-512 also tests the AVX2 path a CI machine without it dispatches to (their gathers are
// written per target: src/cpu/simd_gather-inl.h).
TEST(CpuSimd, EveryCompiledTargetMatchesTheReference) {
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (std::int64_t target : targets) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    check_named_row_kernels<float, std::int32_t>();
    check_named_row_kernels<double, std::int32_t>();
    check_named_row_kernels<double, std::int64_t>();
    const auto a = convert<double, std::int32_t>(zoo_matrix("simd_lengths"));
    const auto af = convert<float, std::int32_t>(a);
    // DIA with value codes (the stencil's 3 values fit every target's table but SSE4's two f64 lanes).
    const auto stencil = convert<double, std::int32_t>(spmv::gen::stencil27(9));
    for (const bool f32 : {true, false}) {
      Options options;
      options.cpu_simd = 1;
      std::unique_ptr<spmv::Operator<float, std::int32_t>> of;
      std::unique_ptr<spmv::Operator<double, std::int32_t>> od;
      const auto sf = convert<float, std::int32_t>(stencil);
      if (f32) of = make_cpu_operator(sf, Algorithm::Dia, Operation::NonTranspose, options);
      else od = make_cpu_operator(stencil, Algorithm::Dia, Operation::NonTranspose, options);
      const std::string policy = f32 ? of->policy() : od->policy();
      const std::int64_t capacity = f32 ? spmv::detail::dia_code_capacity<float>(options)
                                        : spmv::detail::dia_code_capacity<double>(options);
      EXPECT_EQ(contains(policy, "values=codes8 table=3"), capacity >= 3) << policy;
      const OperatorCheck check = f32 ? check_operator(*of, sf, 59) : check_operator(*od, stencil, 59);
      for (const auto& f : check.failures) ADD_FAILURE() << policy << ": " << f;
    }
    // Row groups (src/cpu/row_groups.cpp): runs of 1 on simd_lengths, runs of a whole vector and groups
    // of 3 rows on a 3D stencil of 3 unknowns per point (each stencil entry a dense 3 x 3 block).
    const auto blocks = [&] {
      CsrMatrix<double, std::int32_t> b;
      b.rows = b.cols = 3 * stencil.rows;
      b.row_ptr.assign(1, 0);
      for (std::int32_t r = 0; r < b.rows; ++r) {
        for (auto k = stencil.row_ptr[r / 3]; k < stencil.row_ptr[r / 3 + 1]; ++k)
          for (std::int32_t c = 0; c < 3; ++c) {
            b.col_idx.push_back(3 * stencil.col_idx[k] + c);
            b.values.push_back(stencil.values[k] * (1.0 + 0.125 * c) - 0.25 * (r % 3));
          }
        b.row_ptr.push_back(static_cast<std::int32_t>(b.col_idx.size()));
      }
      return b;
    }();
    for (const auto* m : {&a, &blocks}) {
      Options options;
      options.cpu_simd = 1;
      options.threads = 2;
      const auto mf = convert<float, std::int32_t>(*m);
      auto of = detail::wrap_cpu_kernel(detail::make_row_groups_kernel(mf, options), Algorithm::RowLoop,
                                        Operation::NonTranspose, mf.rows, mf.cols, 0.0);
      auto od = detail::wrap_cpu_kernel(detail::make_row_groups_kernel(*m, options), Algorithm::RowLoop,
                                        Operation::NonTranspose, m->rows, m->cols, 0.0);
      EXPECT_TRUE(contains(of->policy(), "simd=" + std::string(hwy::TargetName(target)))) << of->policy();
      for (const auto& f : check_operator(*of, mf, 53).failures) ADD_FAILURE() << of->policy() << ": " << f;
      for (const auto& f : check_operator(*od, *m, 53).failures) ADD_FAILURE() << od->policy() << ": " << f;
    }
    for (Algorithm algorithm : {Algorithm::Sell, Algorithm::Dia}) {
      Options options;
      options.cpu_simd = 1;
      options.max_padding = 1000;  // DIA and SELL on rows of 0-140: the padding is not what is tested here
      for (const bool f32 : {true, false}) {
        std::unique_ptr<spmv::Operator<float, std::int32_t>> of;
        std::unique_ptr<spmv::Operator<double, std::int32_t>> od;
        if (f32) of = make_cpu_operator(af, algorithm, Operation::NonTranspose, options);
        else od = make_cpu_operator(a, algorithm, Operation::NonTranspose, options);
        const std::string policy = f32 ? of->policy() : od->policy();
        EXPECT_TRUE(contains(policy, "simd=" + std::string(hwy::TargetName(target)))) << policy;
        const OperatorCheck check = f32 ? check_operator(*of, af, 57) : check_operator(*od, a, 57);
        for (const auto& f : check.failures) ADD_FAILURE() << policy << ": " << f;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// DIA keeps its slots as one-byte codes when their distinct values (padding's 0 included) fit the
// table of the path it runs (src/cpu/dia_simd.cpp): a band of capacity - 1 distinct non-zero values
// plus its corner padding takes codes, one value more keeps raw values; both pass the operator check
// (alpha/beta grid, NaN-poisoned y, alpha = 0 with NaN/Inf in x), and the codes give the raw values'
// result bit for bit, with Inf in x (stored runs: padding never multiplied) and with finite x on a
// 3D stencil whose short runs make the sweep multiply the padding's 0.
template <class Value>
void check_dia_codes(int simd) {
  SCOPED_TRACE(std::string(sizeof(Value) == 4 ? "float" : "double") + (simd ? " simd" : " plain"));
  Options options;
  options.cpu_simd = simd;
  const std::int64_t capacity = spmv::detail::dia_code_capacity<Value>(options);
  ASSERT_GE(capacity, 1);
  auto with_values = [](spmv::CsrMatrix<double, std::int64_t> a, std::int64_t distinct) {  // (k % n + 1) / 64
    for (std::size_t k = 0; k < a.values.size(); ++k)
      a.values[k] = static_cast<double>(static_cast<std::int64_t>(k) % distinct + 1) / 64.0;
    return a;
  };
  const auto band = spmv::gen::banded(3000, 4, 7);
  struct Case {
    spmv::CsrMatrix<double, std::int64_t> a;
    bool codes;
    bool inf;  // an infinite x entry (the stored runs' path)
  };
  std::vector<Case> cases{{with_values(band, capacity - 1), capacity > 1, true},
                          {with_values(band, capacity), false, true},
                          {spmv::gen::stencil27(12), capacity >= 3, false}};
  for (const Case& c : cases) {
    const auto a = convert<Value, std::int32_t>(c.a);
    auto oper = make_cpu_operator(a, Algorithm::Dia, Operation::NonTranspose, options);
    EXPECT_EQ(contains(oper->policy(), "values=codes8"), c.codes) << oper->policy();
    const OperatorCheck check = check_operator(*oper, a, 61);
    for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;
    setenv("SPMV_DIA_CODES", "0", 1);
    auto raw = make_cpu_operator(a, Algorithm::Dia, Operation::NonTranspose, options);
    unsetenv("SPMV_DIA_CODES");
    EXPECT_TRUE(contains(raw->policy(), "values=raw")) << raw->policy();
    std::vector<Value> x(static_cast<std::size_t>(a.cols));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<Value>(static_cast<double>(i % 17) / 8.0 - 1.0);
    if (c.inf) x[1500] = std::numeric_limits<Value>::infinity();
    std::vector<Value> y(static_cast<std::size_t>(a.rows), Value(0.5)), y_raw = y;
    oper->apply(Value(-1.5), x, Value(2), y);
    raw->apply(Value(-1.5), x, Value(2), y_raw);
    EXPECT_EQ(std::memcmp(y.data(), y_raw.data(), y.size() * sizeof(Value)), 0) << oper->policy();
  }
}

TEST(CpuDia, CodesWhenTheValuesFitTheTable) {
  for (const int simd : {1, 0}) {
    check_dia_codes<float>(simd);
    check_dia_codes<double>(simd);
  }
}

// Rows in lanes and a vector per row read entries that are not the row's (finished lanes gather the
// matrix's first entry, a masked last vector the next row's indices and x[0]) and discard them by a
// select: an infinite x at column 0 and at the first entry's column must reach only the rows that hold
// those columns, for every thread count (NaN rows compared as bits too).
TEST(CpuSimd, LanesAndVectorDiscardWhatIsNotTheirs) {
  Matrix a;  // 301 rows of lengths 0..40 in a mixed order; column 0 only in row 7, column 5 in rows 0 and 9
  a.rows = a.cols = 301;
  a.row_ptr.assign(1, 0);
  for (std::int32_t r = 0; r < a.rows; ++r) {
    const std::int32_t len = r == 0 ? 1 : (r * 13) % 41;
    for (std::int32_t j = 0; j < len; ++j) {
      std::int32_t c = 6 + (r * 31 + j * 7) % (a.cols - 6);
      if ((r == 0 || r == 9) && j == 0) c = 5;
      if (r == 7 && j == 0) c = 0;
      a.col_idx.push_back(c);
      a.values.push_back(1.0 + 0.25 * j);
    }
    std::sort(a.col_idx.end() - len, a.col_idx.end());
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  std::vector<double> x = random_vector(static_cast<std::size_t>(a.cols), 13);
  x[0] = x[5] = std::numeric_limits<double>::infinity();
  for (Algorithm algorithm : {Algorithm::RowLoop, Algorithm::MergeParallel})
    for (int rows : {2, 3}) {
      std::vector<double> first;
      for (int threads : {1, 2, 3}) {
        Options options;
        options.cpu_simd = 1;
        options.cpu_rows = rows;
        options.threads = threads;
        const auto oper = make_cpu_operator(a, algorithm, Operation::NonTranspose, options);
        std::vector<double> y(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
        oper->apply(1.0, x, 0.0, y);
        for (std::int32_t r = 0; r < a.rows; ++r)
          EXPECT_EQ(std::isfinite(y[static_cast<std::size_t>(r)]), r != 0 && r != 7 && r != 9)
              << oper->policy() << " row " << r;
        if (threads == 1) first = y;
        else if (algorithm == Algorithm::RowLoop)
          EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(double)), 0) << oper->policy();
      }
    }
}

// Auto measures the row kernel on the matrix (src/cpu/row_kernel_race.cpp): whole products with the
// expected-applies hint, a sample of rows without it (from kSampleMinNonzeros); the policy shows the
// times, the result matches the reference, and neither race runs with Options::deterministic, a named
// kernel or SPMV_CPU_CALIBRATION=0.
TEST(CpuDispatch, AutoMeasuresTheRowKernelOnTheMatrix) {
  // Rows of 40-80 (a vector per row wastes few lanes): a challenger exists on every SIMD target.
  const auto a = convert<double, std::int32_t>(gen::random_uniform(12000, 12000, 60, 7));
  Options hint;
  hint.threads = 1;
  hint.cpu_simd = 1;
  hint.expected_applies = detail::kRaceMinApplies;
  std::string why;
  const auto raced = detail::race_row_kernels(a, Algorithm::RowLoop, hint, why);
  ASSERT_TRUE(raced.has_value()) << why;
  EXPECT_TRUE(contains(why, "rows raced: rule ") && contains(why, "vector ")) << why;
  // The scalar loop the rule did not pick races too (rows of 60, local: the rule unrolls them).
  EXPECT_TRUE(contains(why, " plain ")) << why;
  const auto oper = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose, hint);
  EXPECT_TRUE(contains(oper->policy(), "rows raced") || contains(oper->policy(), "converts to")) << oper->policy();
  const OperatorCheck check = check_operator(*oper, a, 41);
  for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;

  const auto big = convert<double, std::int32_t>(gen::random_uniform(12000, 12000, 48, 8));  // x of 96 KB
  ASSERT_GE(big.nnz(), detail::kSampleMinNonzeros);
  Options none = hint;
  none.expected_applies = 0;
  const auto sampled = make_cpu_operator(big, Algorithm::Auto, Operation::NonTranspose, none);
  EXPECT_TRUE(contains(sampled->policy(), "rows sampled")) << sampled->policy();
  const OperatorCheck sampled_check = check_operator(*sampled, big, 43);
  for (const auto& f : sampled_check.failures) ADD_FAILURE() << sampled->policy() << ": " << f;

  const auto measured = [](const std::string& policy) {
    return contains(policy, "rows raced") || contains(policy, "rows sampled");
  };
  for (const auto* m : {&a, &big}) {
    Options fixed = m == &a ? hint : none;
    fixed.deterministic = true;
    EXPECT_FALSE(measured(make_cpu_operator(*m, Algorithm::Auto, Operation::NonTranspose, fixed)->policy()));
    fixed.deterministic = false;
    fixed.cpu_rows = 0;
    EXPECT_FALSE(measured(make_cpu_operator(*m, Algorithm::Auto, Operation::NonTranspose, fixed)->policy()));
  }
  ::setenv("SPMV_CPU_CALIBRATION", "0", 1);
  const auto unmeasured = make_cpu_operator(big, Algorithm::Auto, Operation::NonTranspose, none)->policy();
  ::unsetenv("SPMV_CPU_CALIBRATION");
  EXPECT_FALSE(contains(unmeasured, "rows sampled")) << unmeasured;
}

// Run twice by ctest: with the environment unset (SIMD) and by cpu_differential_scalar_fallback
// with SPMV_CPU_SIMD=0, where every plan built with the default option must take the scalar loops.
TEST(CpuSimd, EnvironmentDecidesTheDefault) {
  const char* env = std::getenv("SPMV_CPU_SIMD");
  const bool scalar = env != nullptr && std::string(env) == "0";
  const auto a = convert<double, std::int64_t>(gen::poisson2d(30));
  const auto policy = make_cpu_operator(a, Algorithm::MergeParallel, Operation::NonTranspose)->policy();
  EXPECT_EQ(contains(policy, "simd=off"), scalar) << policy;
}

// Runs `algorithm`'s A·x (beta = 0, y poisoned with NaN) with both kernels and 1-3 threads: row r must
// come out finite exactly when finite(r), and the SIMD result must have the same bits for every thread
// count (NaN rows compared as bits too).
void check_padding_and_threads(const Matrix& a, Algorithm algorithm, const std::vector<double>& x,
                               const std::string& simd_marker, const std::function<bool(std::int32_t)>& finite) {
  std::vector<double> first;
  for (int simd : {0, 1})
    for (int threads : {1, 2, 3}) {
      Options options;
      options.cpu_simd = simd;
      options.threads = threads;
      auto oper = make_cpu_operator(a, algorithm, Operation::NonTranspose, options);
      EXPECT_TRUE(contains(oper->policy(), simd ? simd_marker : "simd=off")) << oper->policy();
      std::vector<double> y(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
      oper->apply(1.0, x, 0.0, y);
      for (std::int32_t r = 0; r < a.rows; ++r)
        EXPECT_EQ(std::isfinite(y[static_cast<std::size_t>(r)]), finite(r)) << "row " << r << " simd " << simd;
      if (simd == 1 && threads == 1) first = y;
      if (simd == 1 && threads > 1)
        EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(double)), 0) << "threads " << threads;
    }
}

// DIA's A·x skips padding slots instead of multiplying them: a row whose CSR entries never meet an
// infinite x_j stays finite, though its diagonal slot for column j is in range (poisson2d's -1
// diagonal has a gap at each grid-row start), for every thread count and both kernels.
TEST(CpuSimd, DiaSkipsPaddingAndIgnoresThreadCount) {
  const std::int64_t n = 6;
  const auto a = convert<double, std::int32_t>(gen::poisson2d(n));
  const std::int32_t inf_col = static_cast<std::int32_t>(n - 1);  // end of grid row 0; row n has a gap there
  std::vector<double> x = random_vector(static_cast<std::size_t>(a.cols), 11);
  x[static_cast<std::size_t>(inf_col)] = std::numeric_limits<double>::infinity();
  check_padding_and_threads(a, Algorithm::Dia, x, "runs=", [&](std::int32_t r) {
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (a.col_idx[k] == inf_col) return false;
    return true;
  });
}

// With short runs (a 3D stencil's grid-line gaps), DIA sweeps each diagonal's whole in-range span when x
// is finite, multiplying padding zeros; that must give the bits of the run-by-run sweep. poisson3d n=8
// gets one more column that no entry references but the +1 diagonal's padding reaches: an infinite
// value there sends the product back to the stored runs (the infinity reaches no row), a finite one
// lets it take the spans. The two products must be equal bit for bit, for 1-3 threads, both kernels.
TEST(CpuSimd, DiaSpansOfShortRunsGiveTheBitsOfTheRuns) {
  auto square = gen::poisson3d(8);
  square.cols += 1;  // column 512: referenced by no entry
  const auto a = convert<double, std::int32_t>(square);
  std::vector<double> finite_x = random_vector(static_cast<std::size_t>(a.cols), 12);
  finite_x.back() = 0.25;
  std::vector<double> inf_x = finite_x;
  inf_x.back() = std::numeric_limits<double>::infinity();
  for (int simd : {0, 1})
    for (int threads : {1, 2, 3}) {
      Options options;
      options.cpu_simd = simd;
      options.threads = threads;
      auto oper = make_cpu_operator(a, Algorithm::Dia, Operation::NonTranspose, options);
      EXPECT_TRUE(contains(oper->policy(), "(short: whole spans when x is finite)")) << oper->policy();
      std::vector<double> spans(static_cast<std::size_t>(a.rows), std::numeric_limits<double>::quiet_NaN());
      std::vector<double> runs = spans;
      oper->apply(1.5, finite_x, 0.0, spans);
      oper->apply(1.5, inf_x, 0.0, runs);
      for (double v : runs) ASSERT_TRUE(std::isfinite(v));
      EXPECT_EQ(std::memcmp(spans.data(), runs.data(), spans.size() * sizeof(double)), 0)
          << "simd " << simd << " threads " << threads;
    }
}

// SELL's A·x masks padding lanes instead of multiplying them: padding gathers x[0], so an infinite x[0]
// must reach only the rows that hold column 0.
TEST(CpuSimd, SellSkipsPaddingAndIgnoresThreadCount) {
  Matrix a;  // 203 rows of lengths 0..12 in a mixed order (padded slices, unsorted windows); column 0 in row 7
  a.rows = a.cols = 203;
  a.row_ptr.assign(1, 0);
  for (std::int32_t r = 0; r < a.rows; ++r) {
    const std::int32_t len = (r * 7) % 13;
    for (std::int32_t j = 0; j < len; ++j) {
      a.col_idx.push_back(r == 7 && j == 0 ? 0 : 1 + (r * 31 + j * 17) % (a.cols - 1));
      a.values.push_back(1.0 + 0.25 * j);
    }
    std::sort(a.col_idx.end() - len, a.col_idx.end());
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  std::vector<double> x = random_vector(static_cast<std::size_t>(a.cols), 12);
  x[0] = std::numeric_limits<double>::infinity();
  check_padding_and_threads(a, Algorithm::Sell, x, "simd=", [](std::int32_t r) { return r != 7; });
}

// SELL keeps a slice's columns as 16-bit offsets from its smallest when they span less than 0xFFFF (the
// offset 0xFFFF marks padding), and Index columns otherwise; with fewer than 15 of 16 slices narrow, all
// are wide (src/cpu/sell_simd.cpp). Rows of 3 or 4 entries over 70,000 columns, sorted within each slice
// (sigma = C: a slice keeps its rows, in another order, so y is written through the permutation): the
// narrow slices span `narrow_span` columns, `wide_slices` slices `wide_span`; the policy counts the narrow
// slots, and every form matches the reference for both index types, both value types and the scalar loop.
template <class Value, class Index>
void check_sell_narrow_columns() {
  const Options defaults;
  const std::int64_t c = detail::cpu_sell_c<Value, Index>(defaults);
  const std::int64_t slices = 32, cols = 70000;
  // (span of the narrow slices, span of the others, how many others): all narrow at the limit, one wide
  // slice among 32 (the rest stay narrow), half wide (all wide).
  struct Case {
    std::int64_t narrow_span, wide_span, wide_slices, narrow_slots;
  };
  const Case cases[] = {{0xFFFE, 0xFFFE, 0, slices * c * 4}, {0xFFFE, 0xFFFF, 1, (slices - 1) * c * 4},
                        {100, 0xFFFF, 16, 0}};
  for (const Case& k : cases) {
    CsrMatrix<double, Index> a;
    a.rows = static_cast<Index>(slices * c);
    a.cols = static_cast<Index>(cols);
    a.row_ptr.assign(1, 0);
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const std::int64_t s = r / c, base = (s * 997) % (cols - 0xFFFF);
      const std::int64_t span = s < k.wide_slices ? k.wide_span : k.narrow_span;
      // Every row: its slice's first and last column (so each slice spans `span`) and one between.
      for (std::int64_t col : {base, base + 1 + (r * 31) % (span - 3), base + span - 1, base + span}) {
        if (col == base + span - 1 && r % 3 != 0) continue;  // rows of 3 and 4: the sort permutes them
        a.col_idx.push_back(static_cast<Index>(col));
        a.values.push_back(1.0 + 0.5 * static_cast<double>(r % 5) - 0.25 * static_cast<double>(col % 3));
      }
      a.row_ptr.push_back(static_cast<Index>(a.col_idx.size()));
    }
    const auto m = convert<Value, Index>(a);
    for (int simd : {1, 0}) {
      Options options;
      options.cpu_simd = simd;
      options.sell_sigma = static_cast<int>(c);
      const auto oper = make_cpu_operator(m, Algorithm::Sell, Operation::NonTranspose, options);
      EXPECT_TRUE(contains(oper->policy(), " narrow=" + std::to_string(k.narrow_slots) + " ")) << oper->policy();
      for (const auto& f : check_operator(*oper, m, 29).failures) ADD_FAILURE() << oper->policy() << ": " << f;
    }
  }
}

TEST(CpuSimd, SellNarrowColumnsWhereTheSlicesSpanLessThan16Bits) {
  check_sell_narrow_columns<float, std::int32_t>();
  check_sell_narrow_columns<double, std::int32_t>();
  check_sell_narrow_columns<float, std::int64_t>();
  check_sell_narrow_columns<double, std::int64_t>();
}

// SELL's SIMD slots read x by gathers or by scalar loads (SPMV_CPU_SELL_X; with the hint the plan races the two):
// the policy names the form, each matches the reference (alpha/beta grid, NaN in y when beta = 0) on row lengths
// 0-140 around the vector width (simd_lengths), empty rows, one huge row, and narrow and wide slices (70,000
// columns), sorted within C rows (y written through the permutation), within the default window and over the
// whole matrix, on 1 and 3 threads, for both index types; and the two forms give the same bits.
template <class Value, class Index>
void check_sell_x_forms() {
  const std::int64_t c = detail::cpu_sell_c<Value, Index>(Options{});
  for (const char* name : {"simd_lengths", "empty_rows", "huge_row", "huge_row_slice", "mostly_empty",
                           "straddle_2p16", "size_65633x1121"}) {
    const auto a = convert<Value, Index>(zoo_matrix(name));
    const std::int64_t whole = (std::int64_t{a.rows} + c - 1) / c * c;
    for (std::int64_t sigma : {c, std::int64_t{0}, whole})
      for (int threads : {1, 3}) {
        std::vector<Value> bits[2];
        for (int form = 0; form < 2; ++form) {
          ::setenv("SPMV_CPU_SELL_X", form ? "loads" : "gathers", 1);
          Options options;
          options.cpu_simd = 1;
          options.threads = threads;
          options.sell_sigma = static_cast<int>(sigma);
          std::unique_ptr<Operator<Value, Index>> oper;
          try {
            oper = make_cpu_operator(a, Algorithm::Sell, Operation::NonTranspose, options);
          } catch (const Unsupported&) {  // padding above Options::max_padding (the huge row)
            continue;
          }
          EXPECT_TRUE(contains(oper->policy(), form ? " x=loads" : " x=gathers")) << oper->policy();
          for (const auto& f : check_operator(*oper, a, 37).failures)
            ADD_FAILURE() << name << " sigma " << sigma << ": " << oper->policy() << ": " << f;
          const auto x = random_vector(static_cast<std::size_t>(a.cols), 5);
          bits[form].assign(static_cast<std::size_t>(a.rows), Value(0.25));
          oper->apply(Value(1.5), std::vector<Value>(x.begin(), x.end()), Value(-1), bits[form]);
        }
        EXPECT_EQ(bits[0], bits[1]) << name << " sigma " << sigma << " threads " << threads;
      }
  }
  ::setenv("SPMV_CPU_SELL_X", "scatter", 1);
  Options simd;
  simd.cpu_simd = 1;  // the scalar loop reads no x form (ctest's SPMV_CPU_SIMD=0 run)
  EXPECT_THROW(make_cpu_operator(convert<Value, Index>(zoo_matrix("simd_lengths")), Algorithm::Sell,
                                 Operation::NonTranspose, simd),
               InvalidArgument);
  ::unsetenv("SPMV_CPU_SELL_X");
}

TEST(CpuSimd, SellReadsXByGathersOrLoads) {
  check_sell_x_forms<float, std::int32_t>();
  check_sell_x_forms<double, std::int32_t>();
  check_sell_x_forms<float, std::int64_t>();
  check_sell_x_forms<double, std::int64_t>();
}

// With the hint, SELL races the two forms on the matrix and says which won; without it, it reads x by gathers.
TEST(CpuSimd, SellRacesItsXFormsWithTheHint) {
  if (!detail::cpu_measuring_allowed() || std::getenv("SPMV_CPU_SELL_X")) GTEST_SKIP() << "no race here";
  const auto a = convert<float, std::int32_t>(zoo_matrix("poisson2d_64"));
  Options options;
  options.cpu_simd = 1;
  EXPECT_TRUE(contains(make_cpu_operator(a, Algorithm::Sell, Operation::NonTranspose, options)->policy(),
                       " x=gathers"));
  options.expected_applies = 1000;
  const std::string policy = make_cpu_operator(a, Algorithm::Sell, Operation::NonTranspose, options)->policy();
  EXPECT_TRUE(contains(policy, "(raced: gathers ")) << policy;
}

// Left unset, Auto's SELL window widens to the whole matrix where that sort stores more than 10% fewer slots
// (kSellWholeSortMinGain), or to each thread's share of the rows: rows of 32 in 5% of the rows pad each
// window of 256 rows; equal rows do not; a window the caller set is kept. Auto's SELL plan then says so and
// matches the reference.
TEST(CpuDispatch, AutoSortsSellOverTheWholeMatrixWhereThatSavesSlots) {
  const auto sparse_rows = convert<float, std::int32_t>(gen::mostly_empty(100000, 100000, 0.05, 32, 3));
  const auto equal_rows = convert<float, std::int32_t>(gen::random_uniform(50000, 50000, 10, 4));
  Options hint;
  hint.expected_applies = 1000;
  hint.threads = 1;
  const std::int64_t c = detail::cpu_sell_c<float, std::int32_t>(hint);
  int sigma = 0;
  const auto whole = detail::count_formats(sparse_rows, hint, 4, 1, &sigma).second.sell;
  EXPECT_EQ(sigma, (100000 + c - 1) / c * c);
  int unset = 0;
  const auto windows = detail::count_formats(sparse_rows, hint, 4, 1).second.sell;
  EXPECT_GT(double(windows), 1.1 * double(whole));
  detail::count_formats(equal_rows, hint, 4, 1, &unset);
  EXPECT_EQ(unset, 0);
  Options set = hint;
  set.sell_sigma = static_cast<int>(4 * c);
  detail::count_formats(sparse_rows, set, 4, 1, &unset);
  EXPECT_EQ(unset, 0);
  const auto oper = make_cpu_operator(sparse_rows, Algorithm::Auto, Operation::NonTranspose, hint);
  if (oper->algorithm() == Algorithm::Sell) {
    EXPECT_TRUE(contains(oper->policy(), "sell sorted by " + std::to_string(sigma) + " rows")) << oper->policy();
    EXPECT_TRUE(contains(oper->policy(), "sigma=" + std::to_string(sigma) + " ")) << oper->policy();
  }
  for (const auto& f : check_operator(*oper, sparse_rows, 19).failures) ADD_FAILURE() << oper->policy() << ": " << f;
  // On two threads each thread's half of the rows is sorted apart (its writes to y stay in its half) where
  // that stores at most 10% more slots than the whole sort, as here.
  int halves = 0;
  const auto by_halves = detail::count_formats(sparse_rows, hint, 4, 2, &halves).second.sell;
  EXPECT_EQ(halves, (50000 + c - 1) / c * c);
  EXPECT_LE(double(by_halves), 1.1 * double(whole));
  Options two = hint;
  two.threads = 2;
  const auto split = make_cpu_operator(sparse_rows, Algorithm::Auto, Operation::NonTranspose, two);
  for (const auto& f : check_operator(*split, sparse_rows, 23).failures) ADD_FAILURE() << split->policy() << ": " << f;
}

// The CPU's SELL slice height is the SIMD width of the (value, index) pair unless set.
TEST(CpuSimd, SellSliceHeightIsTheSimdWidth) {
  const auto a = convert<float, std::int32_t>(gen::poisson2d(20));
  const auto policy = make_cpu_operator(a, Algorithm::Sell, Operation::NonTranspose)->policy();
  EXPECT_FALSE(contains(policy, "sell C=32 ")) << policy;
  Options options;
  options.sell_c = 2;  // narrower than any vector: the plain loop, still correct (the zoo checks values)
  EXPECT_TRUE(contains(make_cpu_operator(a, Algorithm::Sell, Operation::NonTranspose, options)->policy(),
                       "sell C=2 "));
}

// Auto converts A·x only with the expected-applies hint, only when the CPU rule says it is repaid
// (src/core/auto_rule.hpp); the converted plan matches the reference.
template <class Value>
void check_auto_conversions() {
  const auto stencil = convert<Value, std::int32_t>(gen::poisson2d(300));  // 450 k nonzeros, 5 diagonals
  // Rows of 0 or 8 in random order: CSR's row ends mispredict, SELL packs them without padding.
  const auto irregular = convert<Value, std::int32_t>(gen::mostly_empty(200000, 200000, 0.5, 8, 1));
  Options hint;
  hint.expected_applies = 1000;
  hint.threads = 1;  // the rule's choice then does not depend on the machine's core count
  hint.deterministic = true;  // nor on this CPU's measured format scales: the fitted costs decide
  for (const auto* m : {&stencil, &irregular}) {
    Options none = hint;
    none.expected_applies = 0;
    const auto plain = make_cpu_operator(*m, Algorithm::Auto, Operation::NonTranspose, none);
    EXPECT_EQ(plain->algorithm(), Algorithm::RowLoop) << plain->policy();
    const auto once = make_cpu_operator(*m, Algorithm::Auto, Operation::NonTranspose, [&] {
      Options o = hint;
      o.expected_applies = 1;
      return o;
    }());
    EXPECT_EQ(once->algorithm(), Algorithm::RowLoop) << once->policy();
    EXPECT_TRUE(contains(once->policy(), "no conversion repaid")) << once->policy();
    // Aᵀ·x converts differently: A x's own plan where A == Aᵀ (the stencil), else an explicit transpose
    // (AutoTransposesExplicitlyWhenTheHintRepaysTheCopy, SymmetricRunsTransposeAsAx).
    EXPECT_EQ(make_cpu_operator(*m, Algorithm::Auto, Operation::Transpose, hint)->algorithm(),
              m == &stencil ? Algorithm::Symmetric : Algorithm::ExplicitTranspose);
  }
  const auto dia = make_cpu_operator(stencil, Algorithm::Auto, Operation::NonTranspose, hint);
  EXPECT_EQ(dia->algorithm(), Algorithm::Dia) << dia->policy();
  EXPECT_TRUE(contains(dia->policy(), "converts to dia")) << dia->policy();
  const auto sell = make_cpu_operator(irregular, Algorithm::Auto, Operation::NonTranspose, hint);
  EXPECT_EQ(sell->algorithm(), Algorithm::Sell) << sell->policy();
  for (auto* oper : {dia.get(), sell.get()}) {
    const auto& m = oper == dia.get() ? stencil : irregular;
    const OperatorCheck check = check_operator(*oper, m, 17);
    EXPECT_EQ(check.pairs, 20);
    for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;
  }
}

TEST(CpuDispatch, AutoConvertsWithTheExpectedAppliesHint) {
  check_auto_conversions<float>();
  check_auto_conversions<double>();
}

// On several threads the hint's conversion is timed against the unconverted plan (merge-parallel), which
// replaces it only when faster (detail::unconverted_is_faster); the policy names both times and the
// winner, and either plan matches the reference. Not with SPMV_CPU_CALIBRATION=0 (no measuring).
TEST(CpuDispatch, ConversionOnSeveralThreadsIsRacedAgainstTheUnconvertedPlan) {
  const auto stencil = convert<double, std::int32_t>(gen::poisson2d(300));
  Options hint;
  hint.expected_applies = 1000;
  hint.threads = 2;
  const auto oper = make_cpu_operator(stencil, Algorithm::Auto, Operation::NonTranspose, hint);
  const std::string policy = oper->policy();
  EXPECT_TRUE(contains(policy, "converts to dia")) << policy;
  if (detail::cpu_measuring_allowed()) {
    ASSERT_TRUE(contains(policy, "conversion raced: converted ")) << policy;
    const bool kept = contains(policy, "; converted");
    EXPECT_EQ(oper->algorithm(), kept ? Algorithm::Dia : Algorithm::MergeParallel) << policy;
  } else {
    EXPECT_FALSE(contains(policy, "conversion raced")) << policy;
  }
  const OperatorCheck check = check_operator(*oper, stencil, 29);
  EXPECT_EQ(check.pairs, 20);
  for (const auto& f : check.failures) ADD_FAILURE() << policy << ": " << f;
  // One thread keeps the rule's choice unraced away from its boundary (kCpuRuleBand: the stencil's DIA is
  // far from it).
  hint.threads = 1;
  EXPECT_FALSE(contains(make_cpu_operator(stencil, Algorithm::Auto, Operation::NonTranspose, hint)->policy(),
                        "conversion raced"));
}

// Near the boundary between DIA and SELL both are built and raced (detail::second_format_is_faster): the
// policy names both times; either plan answers. Not with SPMV_CPU_CALIBRATION=0 (no measuring).
TEST(CpuDispatch, FormatsNearTheirBoundaryAreRaced) {
  const auto stencil = convert<float, std::int32_t>(gen::poisson2d(200));
  Options options;
  options.threads = 2;
  const auto dia = detail::build_kernel(stencil, Algorithm::Dia, Operation::NonTranspose, options);
  const auto sell = detail::build_kernel(stencil, Algorithm::Sell, Operation::NonTranspose, options);
  std::string why;
  const bool sell_faster = detail::second_format_is_faster(stencil, dia, Algorithm::Dia, sell, Algorithm::Sell, why);
  if (!detail::cpu_measuring_allowed()) {
    EXPECT_FALSE(sell_faster);
    EXPECT_TRUE(why.empty()) << why;
    return;
  }
  EXPECT_TRUE(contains(why, " formats raced: dia ")) << why;
  EXPECT_TRUE(contains(why, " ms, sell ")) << why;
  // Whichever won computes A x: both kernels against the reference.
  const std::vector<float> x(static_cast<std::size_t>(stencil.cols), 1.0f);
  for (const auto* k : {&dia, &sell}) {
    std::vector<float> y(static_cast<std::size_t>(stencil.rows), std::numeric_limits<float>::quiet_NaN());
    k->run(1.0f, x.data(), 0.0f, y.data());
    for (std::int64_t r = 0; r < stencil.rows; ++r) {
      float sum = 0;
      for (auto k2 = stencil.row_ptr[r]; k2 < stencil.row_ptr[r + 1]; ++k2) sum += stencil.values[k2];
      ASSERT_NEAR(y[r], sum, 1e-5f * 8) << r;  // 5 terms of magnitude <= 4: a few ulps of 4
    }
  }
}

// Without the deterministic option the rule's costs are scaled by this CPU's measurement (src/cpu/
// cpu_calibration.cpp): measured once, within the clamp, named in the policy; whatever it then picks
// for the stencil and the irregular rows matches the reference.
template <class Value>
void check_calibrated_choice() {
  const detail::CpuFormatScales& scales = detail::cpu_format_scales<Value>();
  EXPECT_EQ(&scales, &detail::cpu_format_scales<Value>());
  for (double s : {scales.dia, scales.sell, scales.length_change}) {
    EXPECT_GE(s, 0.25);
    EXPECT_LE(s, 4.0);
    // Rounded to a third of an octave, so that processes on one CPU read the same scale.
    const double thirds = 3 * std::log2(s);
    EXPECT_NEAR(thirds, std::round(thirds), 1e-9) << s;
  }
  Options hint;
  hint.expected_applies = 1000;
  hint.threads = 1;
  for (const auto& m : {convert<Value, std::int32_t>(gen::poisson2d(300)),
                        convert<Value, std::int32_t>(gen::mostly_empty(200000, 200000, 0.5, 8, 1))}) {
    const auto oper = make_cpu_operator(m, Algorithm::Auto, Operation::NonTranspose, hint);
    EXPECT_TRUE(contains(oper->policy(), detail::cpu_scales_policy(scales))) << oper->policy();
    const OperatorCheck check = check_operator(*oper, m, 23);
    EXPECT_EQ(check.pairs, 20);
    for (const auto& f : check.failures) ADD_FAILURE() << oper->policy() << ": " << f;
  }
}

TEST(CpuDispatch, AutoScalesTheRuleForThisCpu) {
  check_calibrated_choice<float>();
  check_calibrated_choice<double>();
}

TEST(CpuDispatch, TimeRuns) {
  const auto a = convert<double, std::int32_t>(gen::poisson2d(30));
  auto oper = make_cpu_operator(a, Algorithm::MergeParallel, Operation::NonTranspose);
  const auto x = random_vector(static_cast<std::size_t>(a.cols), 1);
  std::vector<double> y(static_cast<std::size_t>(a.rows), 3.0);
  TimingOptions options;
  options.warmup = 1;
  options.repetitions = 3;
  options.min_sample_ms = 0.1;
  const Timing t = oper->time(1.0, x, 1.0, y, options);
  EXPECT_GT(t.median_ms, 0.0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_EQ(t.repetitions, 3);
}

}  // namespace
}  // namespace spmv::test
