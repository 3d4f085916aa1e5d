// CPU SpMM (include/spmv/spmm.hpp): the shared differential body (tests/common/spmm_check.hpp) on
// the zoo, an exact hand example, argument errors, thread-count independence and concurrent calls.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "common/spmm_check.hpp"
#include "spmv/spmm.hpp"

namespace spmv::test {

struct CpuSpmmRunner {
  template <class Value, class Index>
  static Product<Value> make(const CsrMatrix<Value, Index>& a, Operation op) {
    auto plan = std::make_shared<cpu::SpmmPlan<Value, Index>>(a, op);
    return [plan](Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) {
      plan->apply(alpha, x, beta, y);
    };
  }
};

// The backend-neutral operator of `spmv bench --k` (include/spmv/spmm.hpp), `kKernel` on the CPU.
template <SpmmKernel kKernel>
struct CpuSpmmOperatorRunner {
  template <class Value, class Index>
  static Product<Value> make(const CsrMatrix<Value, Index>& a, Operation op) {
    std::shared_ptr<SpmmOperator<Value, Index>> oper = make_spmm_operator(Backend::Cpu, a, op, kKernel);
    return [oper](Value alpha, DenseView<const Value> x, Value beta, DenseView<Value> y) {
      oper->apply(alpha, x, beta, y);
    };
  }
};

}  // namespace spmv::test

SPMV_SPMM_TESTS(Cpu, CpuSpmmRunner, false)

namespace spmv::test {
namespace {

// The operators `spmv bench --k` times: spmv's SpMM and the k-SpMV baseline, on the sweep's matrices.
TEST(CpuSpmmOperator, SpmmAndKSpmvMatchReference) {
  for (const char* name : {"power_law_rmat12", "empty_rows", "tiny_unsorted_duplicates", "empty_7x0"})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      SCOPED_TRACE(std::string(name) + (op == Operation::NonTranspose ? " N" : " T"));
      run_spmm_zoo_param<CpuSpmmOperatorRunner<SpmmKernel::Spmm>>({zoo_index(name), op, 1}, zoo_spmm_cases());
      run_spmm_zoo_param<CpuSpmmOperatorRunner<SpmmKernel::ColumnSpmv>>({zoo_index(name), op, 0}, zoo_spmm_cases());
    }
  const auto a = convert<double, std::int32_t>(zoo_matrix("tiny_3x4"));
  EXPECT_THROW(make_spmm_operator(Backend::Cpu, a, Operation::NonTranspose, SpmmKernel::Vendor), Unsupported);
}

// [1 0 2 0; 0 0 0 0; -3 4 0 0.5] times X = [[1 2]; [3 4]; [5 6]; [7 8]] (row-major): exact in binary.
TEST(CpuSpmm, HandExampleBothLayoutsAndTranspose) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("tiny_3x4"));
  const std::vector<double> x_row{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> y(6, std::numeric_limits<double>::quiet_NaN());
  cpu::spmm<double, std::int32_t>(a, Operation::NonTranspose, 1.0, row_major(x_row.data(), 4, 2), 0.0,
                                  row_major(y.data(), 3, 2));
  EXPECT_EQ(y, (std::vector<double>{11, 14, 0, 0, 12.5, 14}));
  const std::vector<double> x_col{1, 3, 5, 7, 2, 4, 6, 8};
  std::vector<double> y_col{1, 1, 1, 1, 1, 1};
  cpu::spmm<double, std::int32_t>(a, Operation::NonTranspose, 2.0, col_major(x_col.data(), 4, 2), -1.0,
                                  col_major(y_col.data(), 3, 2));
  EXPECT_EQ(y_col, (std::vector<double>{21, -1, 24, 27, -1, 27}));
  // A^T (4 x 3) times [[1 2]; [3 4]; [5 6]] = [[-14 -16]; [20 24]; [2 4]; [2.5 3]].
  const std::vector<double> xt{1, 2, 3, 4, 5, 6};
  std::vector<double> yt(8);
  cpu::spmm<double, std::int32_t>(a, Operation::Transpose, 1.0, row_major(xt.data(), 3, 2), 0.0,
                                  row_major(yt.data(), 4, 2));
  EXPECT_EQ(yt, (std::vector<double>{-14, -16, 20, 24, 2, 4, 2.5, 3}));
}

TEST(CpuSpmm, RejectsBadViews) {
  const auto a = convert<double, std::int32_t>(zoo_matrix("tiny_3x4"));
  cpu::SpmmPlan<double, std::int32_t> plan(a);
  std::vector<double> x(64), y(64);
  const DenseView<const double> good_x{x.data(), 4, 2, 2, Layout::RowMajor};
  const DenseView<double> good_y{y.data(), 3, 2, 2, Layout::RowMajor};
  EXPECT_NO_THROW(plan.apply(1.0, good_x, 0.0, good_y));
  EXPECT_THROW(plan.apply(1.0, {x.data(), 4, 2, 1, Layout::RowMajor}, 0.0, good_y), InvalidArgument);  // ld < cols
  EXPECT_THROW(plan.apply(1.0, {x.data(), 4, 2, 3, Layout::ColMajor}, 0.0, good_y), InvalidArgument);  // ld < rows
  EXPECT_THROW(plan.apply(1.0, {x.data(), 3, 2, 2, Layout::RowMajor}, 0.0, good_y), InvalidArgument);  // rows != cols(A)
  EXPECT_THROW(plan.apply(1.0, good_x, 0.0, {y.data(), 3, 3, 3, Layout::RowMajor}), InvalidArgument);  // k differs
  EXPECT_THROW(plan.apply(1.0, {nullptr, 4, 2, 2, Layout::RowMajor}, 0.0, good_y), InvalidArgument);
  EXPECT_THROW(plan.apply(1.0, {x.data(), 4, -1, 2, Layout::RowMajor}, 0.0, good_y), InvalidArgument);
  // An extent past int64 is refused before any access.
  EXPECT_THROW(plan.apply(1.0, {x.data(), 4, 2, std::numeric_limits<std::int64_t>::max() / 2, Layout::RowMajor}, 0.0,
                          good_y),
               InvalidArgument);
  // k = 0: null pointers are fine, nothing is touched.
  EXPECT_NO_THROW(plan.apply(1.0, {nullptr, 4, 0, 1, Layout::RowMajor}, 0.0, {nullptr, 3, 0, 1, Layout::RowMajor}));
}

// Every output entry is summed by one thread in row order: the bits do not depend on the thread count.
TEST(CpuSpmm, ThreadCountDoesNotChangeTheBits) {
  const auto a = convert<double, std::int64_t>(zoo_matrix("power_law_rmat12"));
  const std::int64_t k = 19;
  std::vector<double> x(static_cast<std::size_t>(a.cols * k));
  SplitMix64 rng(3);
  for (auto& v : x) v = rng.symmetric();
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    std::vector<std::vector<double>> results;
    for (int threads : {1, 2, 3}) {
      std::vector<double> y(static_cast<std::size_t>(a.rows * k));
      cpu::SpmmPlan<double, std::int64_t>(a, op, threads).apply(1.0, row_major(x.data(), a.cols, k), 0.0,
                                                                row_major(y.data(), a.rows, k));
      results.push_back(std::move(y));
    }
    for (std::size_t t = 1; t < results.size(); ++t)
      EXPECT_EQ(std::memcmp(results[0].data(), results[t].data(), results[0].size() * sizeof(double)), 0);
  }
}

// apply() is const and owns no scratch: several threads at once on one plan, each with its own Y.
TEST(CpuSpmm, ConcurrentCallsOnOnePlan) {
  const auto a = convert<float, std::int32_t>(zoo_matrix("size_4193"));
  const cpu::SpmmPlan<float, std::int32_t> plan(a, Operation::NonTranspose, 1);
  const std::int64_t k = 8;
  std::vector<float> x(static_cast<std::size_t>(a.cols * k));
  SplitMix64 rng(5);
  for (auto& v : x) v = static_cast<float>(rng.symmetric());
  std::vector<float> expected(static_cast<std::size_t>(a.rows * k));
  plan.apply(1.0f, col_major(x.data(), a.cols, k), 0.0f, col_major(expected.data(), a.rows, k));
  std::vector<std::vector<float>> ys(4, std::vector<float>(expected.size()));
  std::vector<std::thread> threads;
  for (auto& y : ys)
    threads.emplace_back([&] {
      for (int r = 0; r < 20; ++r) plan.apply(1.0f, col_major(x.data(), a.cols, k), 0.0f, col_major(y.data(), a.rows, k));
    });
  for (auto& t : threads) t.join();
  for (const auto& y : ys) EXPECT_EQ(std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace spmv::test
