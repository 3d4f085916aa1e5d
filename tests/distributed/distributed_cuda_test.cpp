// The distributed CUDA backend's device-pointer apply: products enqueued on a caller's stream, chained
// without synchronising, give bit for bit what the host-vector apply gives (which the differential
// sweep in distributed_test.cpp checks against the reference); alpha == 0 with a null x; a product on
// a second stream ordered by an event. Skipped together on every rank where a rank has no GPU or the
// build has no NCCL.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "common/zoo.hpp"
#include "distributed/cuda_ranks.hpp"
#include "spmv/distributed.hpp"

#if SPMV_HAS_NCCL
#include <cuda_runtime_api.h>

#include "spmv/cuda/device_buffer.hpp"

namespace spmv::dist {
namespace {

template <class Value>
std::vector<Value> pattern(std::size_t n, std::int64_t first, double scale) {
  std::vector<Value> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<Value>(scale * (static_cast<double>((first + i) % 13) - 6.0));
  return v;
}

template <class Value>
std::vector<Value> download(const cuda::DeviceBuffer<Value>& d) {
  std::vector<Value> h(d.size());
  if (!h.empty()) SPMV_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

template <class Value, class Index>
void check_device_products(const char* name, Operation op) {
  const Communicator comm;
  const int rank = comm.rank();
  const auto rows = scatter_rows(comm, convert<Value, std::int64_t>(test::zoo_matrix(name)), PartitionKind::Nonzeros);
  DistributedOptions options{Backend::Cuda, Algorithm::Auto, {}};
  options.options.deterministic = true;  // bitwise comparisons below
  DistributedMatrix<Value, Index> m(comm, rows, op, options);
  ASSERT_GE(m.device(), 0);
  const auto nx = static_cast<std::size_t>(m.x_partition().count(rank));
  const auto ny = static_cast<std::size_t>(m.y_partition().count(rank));
  const auto x = pattern<Value>(nx, m.x_partition().begin(rank), 0.25);
  const auto y0 = pattern<Value>(ny, m.y_partition().begin(rank), -0.5);

  // Host vectors: three chained products with different (alpha, beta), the middle one with alpha = 0.
  const Value steps[3][2] = {{Value(1.5), Value(0)}, {Value(0), Value(-1)}, {Value(-0.75), Value(2)}};
  std::vector<Value> expected(ny, std::numeric_limits<Value>::quiet_NaN());  // beta = 0 first: NaN overwritten
  for (const auto& s : steps) m.apply(s[0], x, s[1], expected);

  SPMV_CUDA_CHECK(cudaSetDevice(m.device()));
  cudaStream_t stream = nullptr, other = nullptr;
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  cuda::DeviceBuffer<Value> dx{std::span<const Value>(x)};
  cuda::DeviceBuffer<Value> dy{std::vector<Value>(ny, std::numeric_limits<Value>::quiet_NaN())};
  m.apply(steps[0][0], dx.data(), steps[0][1], dy.data(), stream);
  m.apply(steps[1][0], nullptr, steps[1][1], dy.data(), stream);  // alpha = 0: x is not read
  // The third on another stream, ordered after the second by an event (the caller's duty).
  cudaEvent_t done = nullptr;
  SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  SPMV_CUDA_CHECK(cudaEventRecord(done, stream));
  SPMV_CUDA_CHECK(cudaStreamWaitEvent(other, done, 0));
  m.apply(steps[2][0], dx.data(), steps[2][1], dy.data(), other);
  SPMV_CUDA_CHECK(cudaStreamSynchronize(other));
  const auto got = download(dy);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < ny; ++i)
    ASSERT_EQ(got[i], expected[i]) << "rank " << rank << " " << name << " op " << to_string(op) << " entry " << i;

  // The exchange alone moves the device copy of the last host x, and leaves the products right.
  EXPECT_NO_THROW(m.exchange_only(x));
  std::vector<Value> again(ny, Value(0));
  m.apply(Value(1), x, Value(0), again);
  std::vector<Value> direct(ny, Value(0));
  m.apply(Value(1), x, Value(0), direct);
  EXPECT_EQ(again, direct);
  cudaEventDestroy(done);
  cudaStreamDestroy(stream);
  cudaStreamDestroy(other);
}

class DistributedCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::cuda_on_every_rank(Communicator())) GTEST_SKIP() << "a rank has no GPU or no NCCL";
  }
};

TEST_F(DistributedCuda, DeviceApplyMatchesHostApply) {
  for (const char* name : {"poisson2d_64", "power_law_rmat12", "empty_rows", "tall_5000x37"})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
      SCOPED_TRACE(name);
      check_device_products<double, std::int32_t>(name, op);
      check_device_products<float, std::int32_t>(name, op);
      check_device_products<double, std::int64_t>(name, op);
    }
}

// Two matrices used in turn (each its own NCCL communicator), and one built and freed in a loop.
TEST_F(DistributedCuda, SeveralMatrices) {
  const Communicator comm;
  const auto rows = scatter_rows(comm, test::zoo_matrix("poisson2d_64"), PartitionKind::Nonzeros);
  DistributedMatrix<double, std::int32_t> a(comm, rows, Operation::NonTranspose, {Backend::Cuda});
  DistributedMatrix<double, std::int32_t> at(comm, rows, Operation::Transpose, {Backend::Cuda});
  const auto n = static_cast<std::size_t>(a.x_partition().count(comm.rank()));
  std::vector<double> x(n, 1.0), y(n), z(n);
  for (int i = 0; i < 3; ++i) {
    a.apply(1.0, x, 0.0, y);
    at.apply(1.0, x, 0.0, z);
    for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(y[k], z[k]);  // symmetric: A 1 == A^T 1 (exact: small integers)
    DistributedMatrix<double, std::int32_t> scratch(comm, rows, Operation::NonTranspose, {Backend::Cuda});
  }
}

// A freed matrix gives its NCCL communicator back and the next matrix borrows it. Here the ranks free
// different matrices (rank 0 the first, the others the second): no communicator is idle on every rank,
// so the new matrix must split a fresh one, not pair rank 0's with another rank's; then, with both freed
// everywhere, two more matrices borrow them while the third is alive. Every product is checked.
TEST_F(DistributedCuda, FreedCommunicatorsAreBorrowedOnlyWhereEveryRankFreedThem) {
  const Communicator comm;
  const auto rows = scatter_rows(comm, test::zoo_matrix("poisson2d_64"), PartitionKind::Nonzeros);
  using Matrix = DistributedMatrix<double, std::int32_t>;
  const auto make = [&](Operation op) { return std::make_unique<Matrix>(comm, rows, op, DistributedOptions{Backend::Cuda}); };
  std::unique_ptr<Matrix> m[5] = {make(Operation::NonTranspose), make(Operation::Transpose),
                                  make(Operation::NonTranspose)};
  const auto n = static_cast<std::size_t>(m[0]->x_partition().count(comm.rank()));
  std::vector<double> x(n, 1.0), expected(n);
  m[0]->apply(1.0, x, 0.0, expected);  // A 1 == A^T 1 (symmetric, small integers: exact)
  const auto check = [&](std::initializer_list<int> alive, const char* when) {  // products are collective
    for (const int i : alive) {
      std::vector<double> y(n, std::numeric_limits<double>::quiet_NaN());
      m[i]->apply(1.0, x, 0.0, y);
      EXPECT_EQ(y, expected) << "rank " << comm.rank() << " matrix " << i << " " << when;
    }
  };
  m[comm.rank() == 0 ? 0 : 1].reset();  // a free waits for no other rank: the order may differ
  m[3] = make(Operation::Transpose);
  check({2, 3}, "after freeing different matrices per rank");
  m[0].reset();
  m[1].reset();
  m[0] = make(Operation::NonTranspose);
  m[4] = make(Operation::Transpose);
  check({0, 2, 3, 4}, "after borrowing the freed communicators");
}

// all_reduce_sum: every rank adds rank + 1 and 0.5 into two device doubles; every rank gets the sums.
TEST_F(DistributedCuda, AllReduceSumOnTheDevice) {
  const Communicator comm;
  const auto rows = scatter_rows(comm, test::zoo_matrix("poisson2d_64"), PartitionKind::Nonzeros);
  DistributedMatrix<double, std::int32_t> a(comm, rows, Operation::NonTranspose, {Backend::Cuda});
  SPMV_CUDA_CHECK(cudaSetDevice(a.device()));
  const std::vector<double> mine = {static_cast<double>(comm.rank() + 1), 0.5};
  cuda::DeviceBuffer<double> values{std::span<const double>(mine)};
  a.all_reduce_sum(values.data(), 2, nullptr);
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  const auto sums = download(values);
  const int p = comm.size();
  EXPECT_EQ(sums[0], p * (p + 1) / 2.0);
  EXPECT_EQ(sums[1], 0.5 * p);
}

}  // namespace
}  // namespace spmv::dist

#endif  // SPMV_HAS_NCCL
