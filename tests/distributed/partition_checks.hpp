#pragma once
// Checks shared by the tests of the partitions computed from distributed rows
// (parallel_graph_partition_test.cpp, streaming_partition_test.cpp): the input sliced by any row
// partition, the partition's invariants checked on the root against the whole matrix, and the products
// in the original numbering against the one-process product (the differential body and its bound).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "distributed/cuda_ranks.hpp"
#include "distributed/original_order.hpp"
#include "spmv/distributed.hpp"
#include "spmv/generators.hpp"
#include "spmv/reorder.hpp"

namespace spmv::test {

// Every rank's rows of `whole` (which every rank holds here) under `rows`, the input of
// partition_graph_parallel / partition_streaming as a generator's row ranges would give it.
template <class Value>
dist::LocalRows<Value> slice(const dist::Communicator& comm, const CsrMatrix<Value, std::int64_t>& whole,
                             const dist::RowPartition& rows) {
  dist::LocalRows<Value> out;
  out.global_rows = whole.rows;
  out.global_cols = whole.cols;
  out.rows = rows;
  out.cols = dist::default_column_partition(whole.rows, whole.cols, rows);
  auto& m = out.matrix;
  const std::int64_t begin = rows.begin(comm.rank()), end = rows.end(comm.rank());
  m.rows = end - begin;
  m.cols = whole.cols;
  m.row_ptr.assign(1, 0);
  for (std::int64_t r = begin; r < end; ++r) {
    for (auto k = whole.row_ptr[r]; k < whole.row_ptr[r + 1]; ++k) {
      m.col_idx.push_back(whole.col_idx[k]);
      m.values.push_back(whole.values[k]);
    }
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col_idx.size()));
  }
  return out;
}

// The products of the partitioned rows in the original numbering against the one-process product of
// `whole` (the differential body and its error bound).
template <class Value>
void check_products(const dist::LocalRows<Value>& rows, const CsrMatrix<Value, std::int64_t>& whole,
                    const std::string& name, Operation op, Backend backend = Backend::Cpu) {
  const dist::Communicator comm;
  const auto a = convert<Value, std::int32_t>(whole);
  dist::DistributedMatrix<Value, std::int32_t> m(comm, rows, op, {backend, Algorithm::Auto, {}});
  OriginalOrderOperator<Value, std::int32_t> original(comm, dist::gather_permutation(comm, rows), m);
  const auto check = check_operator<Value, std::int32_t>(original, a, hash_name(name));
  EXPECT_EQ(check.pairs, 20);
  for (const auto& f : check.failures)
    ADD_FAILURE() << "rank " << comm.rank() << "/" << comm.size() << " " << name << ", op " << spmv::to_string(op)
                  << ", " << spmv::to_string(backend) << ", " << type_name<Value>() << ": " << f;
}

// How balanced a partition's parts must be: each part weighs at most (1 + slack) * total / parts plus
// `rows` of the heaviest row's weight (what a part may overshoot by), each row weighing 1 + its length.
struct Balance {
  double slack = 0.03;
  int rows = 1;
};

// The partition itself, on the root: the gathered permutation is one, the parts are contiguous blocks
// grouped in their input order, balanced by 1 + row length within `balance`, the gathered rows are
// exactly permute_symmetric's, and edge_cut is the one counted from the whole matrix. Returns the
// permutation (on the root; empty elsewhere). `in_order`: the input rows were in the original order, so
// each part's rows keep it.
inline std::vector<std::int64_t> check_partition(const dist::LocalRows<double>& rows,
                                                 const CsrMatrix<double, std::int64_t>& whole, Balance balance,
                                                 bool in_order = true) {
  const dist::Communicator comm;
  EXPECT_EQ(rows.cols.offsets, rows.rows.offsets);
  EXPECT_EQ(static_cast<std::int64_t>(rows.original_rows.size()), rows.matrix.rows);
  EXPECT_TRUE(rows.permutation.empty());
  EXPECT_GE(rows.edge_cut, 0);
  const auto permutation = dist::gather_permutation(comm, rows);
  const auto gathered = dist::gather_rows(comm, rows);
  if (comm.rank() != 0) {
    EXPECT_TRUE(permutation.empty());
    return permutation;
  }
  std::vector<char> seen(static_cast<std::size_t>(whole.rows), 0);
  EXPECT_EQ(static_cast<std::int64_t>(permutation.size()), whole.rows);
  for (const std::int64_t old : permutation) {
    EXPECT_TRUE(old >= 0 && old < whole.rows && !seen[static_cast<std::size_t>(old)]) << old;
    if (old >= 0 && old < whole.rows) seen[static_cast<std::size_t>(old)] = 1;
  }
  if (::testing::Test::HasFailure()) return permutation;
  std::int64_t total = 0, heaviest_row = 0;
  for (std::int64_t r = 0; r < whole.rows; ++r) {
    total += 1 + whole.row_length(r);
    heaviest_row = std::max<std::int64_t>(heaviest_row, 1 + whole.row_length(r));
  }
  for (int p = 0; p < rows.rows.ranks(); ++p) {
    std::int64_t weight = 0;
    for (std::int64_t i = rows.rows.begin(p); i < rows.rows.end(p); ++i) {
      weight += 1 + whole.row_length(permutation[i]);
      if (in_order && i > rows.rows.begin(p)) EXPECT_LT(permutation[i - 1], permutation[i]);  // input order
    }
    EXPECT_LE(static_cast<double>(weight), (1 + balance.slack) * static_cast<double>(total) / rows.rows.ranks() +
                                               static_cast<double>(balance.rows * heaviest_row))
        << "part " << p;
  }
  const auto expected = permute_symmetric(whole, permutation);
  EXPECT_EQ(gathered.row_ptr, expected.row_ptr);
  EXPECT_EQ(gathered.col_idx, expected.col_idx);
  EXPECT_EQ(gathered.values, expected.values);
  // The edge cut of the graph of A + A^T without self loops, counted here from the whole matrix.
  std::vector<int> part_of(static_cast<std::size_t>(whole.rows));
  for (int p = 0; p < rows.rows.ranks(); ++p)
    for (std::int64_t i = rows.rows.begin(p); i < rows.rows.end(p); ++i) part_of[permutation[i]] = p;
  const auto t = transpose(whole);
  std::int64_t cut = 0;
  for (std::int64_t r = 0; r < whole.rows; ++r) {
    std::vector<std::int64_t> nbrs(whole.col_idx.begin() + whole.row_ptr[r],
                                   whole.col_idx.begin() + whole.row_ptr[r + 1]);
    nbrs.insert(nbrs.end(), t.col_idx.begin() + t.row_ptr[r], t.col_idx.begin() + t.row_ptr[r + 1]);
    std::sort(nbrs.begin(), nbrs.end());
    nbrs.erase(std::unique(nbrs.begin(), nbrs.end()), nbrs.end());
    for (const std::int64_t j : nbrs) cut += j != r && part_of[j] != part_of[r];
  }
  EXPECT_EQ(rows.edge_cut, cut / 2);
  return permutation;
}

// The products test of every partition computed from distributed rows: generated rows (rmat: scattered
// from the root; poisson2d: each rank's own row range) and a randomly numbered mesh passed in by equal
// rows, partitioned by `kind` (generate) and by `partition` (the rows passed in: a callable taking
// LocalRows<double> and LocalRows<float>); the partition's invariants within `balance`, then A x and
// A^T x in f64 and A x in f32 against one process, on the CUDA backend too where every rank has a GPU
// (the partition is backend-neutral: the blocks of P A P^T are built as any others).
template <class Partition>
void check_partition_products(dist::PartitionKind kind, Partition partition, Balance balance) {
  using Matrix = CsrMatrix<double, std::int64_t>;
  const dist::Communicator comm;
  struct Case {
    std::string name;
    Matrix whole;
    dist::LocalRows<double> rows;
  };
  std::vector<Case> cases;
  cases.push_back({"rmat 11", gen::generate<double, std::int64_t>("rmat", {{"scale", 11}}),
                   dist::generate<double>(comm, "rmat", {{"scale", 11}}, kind)});
  cases.push_back({"poisson2d 30", gen::generate<double, std::int64_t>("poisson2d", {{"n", 30}}),
                   dist::generate<double>(comm, "poisson2d", {{"n", 30}}, kind)});
  const Matrix shuffled = scrambled(gen::poisson2d(40), 5);
  cases.push_back({"scrambled poisson2d 40", shuffled,
                   partition(slice(comm, shuffled, dist::partition_rows(shuffled.rows, comm.size())))});
  const bool cuda = cuda_on_every_rank(comm);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_GE(c.rows.partition_ms, 0);
    check_partition(c.rows, c.whole, balance);
    for (Backend b : {Backend::Cpu, Backend::Cuda}) {
      if (b == Backend::Cuda && !cuda) continue;
      check_products<double>(c.rows, c.whole, c.name, Operation::NonTranspose, b);
      check_products<double>(c.rows, c.whole, c.name, Operation::Transpose, b);
    }
  }
  // f32: the same steps on float rows.
  const auto f = convert<float, std::int64_t>(shuffled);
  const auto rows32 = partition(slice(comm, f, dist::partition_rows(f.rows, comm.size())));
  for (Backend b : {Backend::Cpu, Backend::Cuda})
    if (b == Backend::Cpu || cuda) check_products<float>(rows32, f, "scrambled poisson2d 40, f32", Operation::NonTranspose, b);
}

// Degenerate inputs of every partition computed from distributed rows (`partition`: a callable taking
// LocalRows<double>): a rank with no rows in the input partition; 1 and 2 rows (more ranks than rows at
// -np 3: ranks with no part); a matrix with no off-diagonal entry (no edge: any balanced split cuts
// nothing); an empty matrix; rows already carrying original ids (partitioned twice: the ids compose).
template <class Partition>
void check_degenerate_partitions(Partition partition, Balance balance) {
  using Matrix = CsrMatrix<double, std::int64_t>;
  const dist::Communicator comm;
  const int ranks = comm.size();
  if (ranks >= 2) {
    SCOPED_TRACE("rank 0 holds no rows of the input");
    const Matrix a = scrambled(gen::poisson2d(20), 9);
    dist::RowPartition skewed;
    skewed.offsets.assign(static_cast<std::size_t>(ranks) + 1, 0);
    for (int r = 1; r <= ranks; ++r) skewed.offsets[r] = a.rows * (r - 1) / (ranks - 1);
    const auto rows = partition(slice(comm, a, skewed));
    check_partition(rows, a, balance);
    check_products<double>(rows, a, "skewed input", Operation::NonTranspose);
    check_products<double>(rows, a, "skewed input", Operation::Transpose);
  }
  for (const std::int64_t n : {1, 2}) {
    SCOPED_TRACE(std::to_string(n) + " rows, more ranks than rows at -np 3");
    Matrix small;  // 1 x 1: [4]; 2 x 2: [2 -1; -1 2]
    small.rows = small.cols = n;
    small.row_ptr = n == 1 ? std::vector<std::int64_t>{0, 1} : std::vector<std::int64_t>{0, 2, 4};
    small.col_idx = n == 1 ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, 1, 0, 1};
    small.values = n == 1 ? std::vector<double>{4} : std::vector<double>{2, -1, -1, 2};
    const auto rows = partition(slice(comm, small, dist::partition_rows(small.rows, ranks)));
    check_partition(rows, small, balance);
    if (n == 1) EXPECT_EQ(rows.edge_cut, 0);
    check_products<double>(rows, small, std::to_string(n) + " rows", Operation::NonTranspose);
  }
  {
    SCOPED_TRACE("diagonal");
    Matrix d;
    d.rows = d.cols = 50;
    d.row_ptr.clear();
    for (std::int64_t i = 0; i <= d.rows; ++i) d.row_ptr.push_back(i);
    for (std::int64_t i = 0; i < d.rows; ++i) {
      d.col_idx.push_back(i);
      d.values.push_back(static_cast<double>(i + 1));
    }
    const auto rows = partition(slice(comm, d, dist::partition_rows(d.rows, ranks)));
    check_partition(rows, d, balance);
    EXPECT_EQ(rows.edge_cut, 0);
    check_products<double>(rows, d, "diagonal", Operation::NonTranspose);
    check_products<double>(rows, d, "diagonal", Operation::Transpose);
  }
  {
    SCOPED_TRACE("0 x 0");
    Matrix empty;
    empty.row_ptr = {0};
    const auto rows = partition(slice(comm, empty, dist::partition_rows(0, ranks)));
    EXPECT_EQ(rows.global_rows, 0);
    EXPECT_EQ(rows.matrix.rows, 0);
    EXPECT_EQ(rows.edge_cut, 0);
  }
  {
    SCOPED_TRACE("partitioned twice: original ids compose");
    const Matrix a = scrambled(gen::poisson2d(15), 4);
    const auto once = partition(slice(comm, a, dist::partition_rows(a.rows, ranks)));
    const auto twice = partition(once);
    check_partition(twice, a, balance, false);
    check_products<double>(twice, a, "twice", Operation::NonTranspose);
  }
}

}  // namespace spmv::test
