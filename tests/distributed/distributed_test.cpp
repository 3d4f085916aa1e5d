// The distributed matrix against the single-process reference: the differential body
// (common/differential.hpp: 16 (alpha, beta) pairs, NaN-poisoned y for beta = 0, alpha = 0 with NaN and
// Inf in x, the per-row error bound) over the zoo, with the product run across the ranks and gathered,
// under three partitions, on the CPU backend and (where every rank has a GPU and NCCL is built in) on
// the CUDA one; then the pieces (partitions, generated and read slices, the halo of special shapes,
// vector reductions) and collective errors. Run by ctest under mpirun -np 2 and -np 3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "common/differential.hpp"
#include "distributed/cuda_ranks.hpp"
#include "distributed/mpi_util.hpp"
#include "distributed/whole_vector_operator.hpp"
#include "spmv/distributed.hpp"
#include "spmv/generators.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv::dist {
namespace {

using test::zoo;
using test::zoo_matrix;

// Every rank cuts its part out of the whole x and y, applies, and gets the whole y back.
template <class Value, class Index>
class GatheredOperator : public test::WholeVectorOperator<Value, Index> {
 public:
  using test::WholeVectorOperator<Value, Index>::WholeVectorOperator;

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    const int r = this->comm_.rank();
    const auto& xp = this->m_.x_partition();
    const auto& yp = this->m_.y_partition();
    std::vector<Value> xs(x.begin() + xp.begin(r), x.begin() + xp.end(r));
    std::vector<Value> ys(y.begin() + yp.begin(r), y.begin() + yp.end(r));
    this->m_.apply(alpha, xs, beta, ys);
    std::vector<Value> whole = gather<Value>(this->comm_, yp, ys);
    whole.resize(static_cast<std::size_t>(yp.size()));
    MPI_Bcast(whole.data(), static_cast<int>(whole.size()), detail::mpi_type<Value>(), 0, this->comm_.get());
    std::copy(whole.begin(), whole.end(), y.begin());
  }
};

enum class Scheme { Nonzeros, Rows, Skewed };

const char* to_string(Scheme s) { return s == Scheme::Nonzeros ? "nonzeros" : s == Scheme::Rows ? "rows" : "skewed"; }

// Uneven blocks (rank r weighs r + 1) with one rank holding nothing: `empty` (mod ranks).
RowPartition skewed(std::int64_t n, int ranks, int empty) {
  std::vector<std::int64_t> weight(static_cast<std::size_t>(ranks));
  std::int64_t total = 0;
  for (int r = 0; r < ranks; ++r) total += weight[r] = ranks > 1 && r == empty % ranks ? 0 : r + 1;
  RowPartition p;
  std::int64_t acc = 0;
  for (int r = 0; r < ranks; ++r) {
    acc += weight[r];
    p.offsets.push_back(r + 1 == ranks ? n : n * acc / total);
  }
  return p;
}

// Every rank holds `whole` (the zoo is deterministic); only the root's copy is scattered.
template <class Value>
LocalRows<Value> distribute(const Communicator& comm, const CsrMatrix<Value, std::int64_t>& whole, Scheme scheme) {
  const auto& sent = comm.rank() == 0 ? whole : CsrMatrix<Value, std::int64_t>{};
  if (scheme == Scheme::Skewed)  // rank 1 owns no rows, rank 0 no columns: x and y split differently
    return scatter_rows(comm, sent, skewed(whole.rows, comm.size(), 1), skewed(whole.cols, comm.size(), 0));
  return scatter_rows(comm, sent, scheme == Scheme::Nonzeros ? PartitionKind::Nonzeros : PartitionKind::Rows);
}

template <class Value, class Index>
void check_distributed(const test::ZooMatrix& matrix, const std::string& name, Operation op, Scheme scheme,
                       Algorithm algorithm = Algorithm::Auto, Backend backend = Backend::Cpu, int progress_chunks = 0) {
  const Communicator comm;
  if (backend == Backend::Cuda && !test::cuda_on_every_rank(comm)) GTEST_SKIP() << "a rank has no GPU or no NCCL";
  CsrMatrix<Value, Index> a;
  try {
    a = convert<Value, Index>(matrix);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << "does not fit the index type: " << e.what();  // the same on every rank
  }
  const auto rows = distribute<Value>(comm, convert<Value, std::int64_t>(a), scheme);
  DistributedOptions options{backend, algorithm, {}};
  options.progress_chunks = progress_chunks;
  DistributedMatrix<Value, Index> m(comm, rows, op, options);
  // Forced chunks split the local block of every rank that exchanges anything and holds 2+ rows (A x).
  if (progress_chunks > 1 && op == Operation::NonTranspose && m.info().local_algorithm.find("kept whole") == std::string::npos)
    EXPECT_EQ(m.info().local_chunks > 1,
              m.info().rows >= 2 && m.info().halo_entries + m.info().send_entries > 0) << m.info().local_algorithm;
  GatheredOperator<Value, Index> gathered(comm, m);
  const auto check = test::check_operator<Value, Index>(gathered, a, test::hash_name(name));
  EXPECT_EQ(check.pairs, 20);
  for (const auto& f : check.failures)
    ADD_FAILURE() << "rank " << comm.rank() << "/" << comm.size() << " " << name << " (" << a.rows << " x " << a.cols
                  << "), op " << spmv::to_string(op) << ", partition " << to_string(scheme) << ", "
                  << spmv::to_string(algorithm) << ", " << spmv::to_string(backend) << ", " << test::type_name<Value>()
                  << "/" << test::type_name<Index>() << ": " << f;
}

struct Case {
  std::size_t matrix;
  Operation op;
  Scheme scheme;
  test::TypeCombo types;
  Backend backend;
};

// The CUDA backend gets the same sweep less the row partition (its blocks are the CPU's; only the
// device plans and the NCCL halo differ).
std::vector<Case> cases() {
  std::vector<Case> out;
  for (Backend b : {Backend::Cpu, Backend::Cuda})
    for (std::size_t m = 0; m < zoo().size(); ++m)
      for (Operation op : {Operation::NonTranspose, Operation::Transpose})
        for (Scheme s : {Scheme::Nonzeros, Scheme::Rows, Scheme::Skewed}) {
          if (b == Backend::Cuda && s == Scheme::Rows) continue;
          out.push_back({m, op, s, test::TypeCombo::DoubleInt32, b});
          if (s == Scheme::Nonzeros) out.push_back({m, op, s, test::TypeCombo::FloatInt32, b});
          if (s == Scheme::Nonzeros && zoo()[m].index64) out.push_back({m, op, s, test::TypeCombo::DoubleInt64, b});
        }
  return out;
}

struct CaseName {
  std::string operator()(const ::testing::TestParamInfo<Case>& info) const {
    const auto& c = info.param;
    return zoo()[c.matrix].name + "_" + std::string(spmv::to_string(c.op)) + "_" + to_string(c.scheme) + "_" +
           test::to_string(c.types) + (c.backend == Backend::Cuda ? "_cuda" : "");
  }
};

class DistributedZoo : public ::testing::TestWithParam<Case> {};

TEST_P(DistributedZoo, MatchesReference) {
  const Case& c = GetParam();
  const auto& m = zoo_matrix(c.matrix);
  const auto& name = zoo()[c.matrix].name;
  const Algorithm a = Algorithm::Auto;
  switch (c.types) {
    case test::TypeCombo::FloatInt32: return check_distributed<float, std::int32_t>(m, name, c.op, c.scheme, a, c.backend);
    case test::TypeCombo::DoubleInt64: return check_distributed<double, std::int64_t>(m, name, c.op, c.scheme, a, c.backend);
    default: return check_distributed<double, std::int32_t>(m, name, c.op, c.scheme, a, c.backend);
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, DistributedZoo, ::testing::ValuesIn(cases()), CaseName{});

// Every CPU algorithm serves the blocks (formats convert per block, Auto resolves per block).
TEST(Distributed, EveryCpuAlgorithmPerBlock) {
  for (const char* name : {"unsorted_columns", "empty_rows", "tall_5000x37"})
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (Algorithm algorithm : backend_algorithms(Backend::Cpu, op)) {
        SCOPED_TRACE(std::string(name) + " " + std::string(spmv::to_string(algorithm)));
        try {
          check_distributed<double, std::int32_t>(zoo_matrix(name), name, op, Scheme::Nonzeros, algorithm);
        } catch (const Unsupported&) {  // e.g. a padded format refusing a block: refused on every rank
        }
      }
}

// Rows i touch columns i and i - 1 only: every rank but the last receives nothing from higher ranks,
// and rank 0 receives nothing at all (it still sends); a block-diagonal matrix has no halo anywhere.
TEST(Distributed, RanksWithoutHalo) {
  const Communicator comm;
  const std::int64_t n = 1000;
  CsrMatrix<double, std::int64_t> bidiagonal, block_diagonal;
  bidiagonal.rows = bidiagonal.cols = block_diagonal.rows = block_diagonal.cols = n;
  bidiagonal.row_ptr = block_diagonal.row_ptr = {0};
  const RowPartition p = partition_rows(n, comm.size());
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) bidiagonal.col_idx.push_back(i - 1), bidiagonal.values.push_back(-1.0 - i % 7);
    bidiagonal.col_idx.push_back(i), bidiagonal.values.push_back(2.5);
    bidiagonal.row_ptr.push_back(static_cast<std::int64_t>(bidiagonal.col_idx.size()));
    const int q = p.owner(i);
    for (std::int64_t j = p.begin(q); j < p.end(q); j += 3) block_diagonal.col_idx.push_back(j), block_diagonal.values.push_back(0.5 + (i + j) % 5);
    block_diagonal.row_ptr.push_back(static_cast<std::int64_t>(block_diagonal.col_idx.size()));
  }
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    const auto rows = scatter_rows(comm, bidiagonal, p, p);
    DistributedMatrix<double, std::int32_t> m(comm, rows, op);
    if (comm.rank() == 0) EXPECT_EQ(m.info().halo_entries, 0);
    if (comm.rank() == comm.size() - 1) EXPECT_EQ(m.info().send_entries, 0);
    // Only a rank's first row reaches into the previous rank: the remote block keeps that row alone.
    EXPECT_EQ(m.info().remote_rows, comm.rank() > 0 && p.count(comm.rank()) > 0 ? 1 : 0);
    EXPECT_EQ(m.info().remote_nonzeros, m.info().remote_rows);
    const auto blocks = scatter_rows(comm, block_diagonal, p, p);
    DistributedMatrix<double, std::int32_t> b(comm, blocks, op);
    EXPECT_EQ(b.info().halo_entries, 0);
    EXPECT_EQ(b.info().neighbors, 0);
    EXPECT_EQ(b.info().remote_algorithm, "-");
  }
  // With forced progress chunks: rank 0 receives nothing but sends (polled), the last rank only
  // receives; the block-diagonal matrix exchanges nothing, so no rank splits.
  for (int chunks : {1, 3}) {
    check_distributed<double, std::int32_t>(bidiagonal, "bidiagonal", Operation::NonTranspose, Scheme::Rows,
                                            Algorithm::Auto, Backend::Cpu, chunks);
    DistributedOptions o;
    o.progress_chunks = chunks;
    const DistributedMatrix<double, std::int32_t> b(comm, scatter_rows(comm, block_diagonal, p, p),
                                                    Operation::NonTranspose, o);
    EXPECT_EQ(b.info().local_chunks, 1);
  }
  check_distributed<double, std::int32_t>(bidiagonal, "bidiagonal", Operation::NonTranspose, Scheme::Rows);
  check_distributed<double, std::int32_t>(bidiagonal, "bidiagonal", Operation::Transpose, Scheme::Rows);
  check_distributed<double, std::int32_t>(block_diagonal, "block_diagonal", Operation::NonTranspose, Scheme::Rows);
  check_distributed<double, std::int32_t>(block_diagonal, "block_diagonal", Operation::Transpose, Scheme::Rows);
}

// The local block in row chunks with MPI_Testall between them (DistributedOptions::progress_chunks,
// forced here on matrices whose messages stay below the rule's 4 KiB): the differential body (16 alpha,
// beta pairs, NaN-poisoned y, NaN and Inf in x with alpha = 0) under the nonzero partition and the
// skewed one (a rank with no rows, one with no columns), the algorithms whose chunks sum rows alike and
// merge-parallel, whose chunks may cut rows elsewhere (within the bound).
TEST(Distributed, ProgressChunksMatchReference) {
  for (const char* name : {"poisson2d_64", "empty_rows", "huge_row", "unsorted_columns", "stencil27_10", "unroll_lengths"})
    for (Scheme scheme : {Scheme::Nonzeros, Scheme::Skewed})
      for (Algorithm algorithm : {Algorithm::Auto, Algorithm::MergeParallel, Algorithm::Sell}) {
        SCOPED_TRACE(std::string(name) + " " + to_string(scheme) + " " + std::string(spmv::to_string(algorithm)));
        try {
          check_distributed<double, std::int32_t>(zoo_matrix(name), name, Operation::NonTranspose, scheme, algorithm,
                                                  Backend::Cpu, 3);
          if (algorithm == Algorithm::Auto)
            check_distributed<float, std::int32_t>(zoo_matrix(name), name, Operation::NonTranspose, scheme, algorithm,
                                                   Backend::Cpu, 3);
        } catch (const Unsupported&) {  // SELL's padding refusing a whole block: refused on every rank
        }
      }
}

// Each rank's y part after one product with `chunks` progress chunks.
template <class Value, class Index = std::int32_t>
std::vector<Value> product_part(const Communicator& comm, const LocalRows<Value>& rows, DistributedOptions options,
                                int chunks, int* split = nullptr) {
  options.progress_chunks = chunks;
  DistributedMatrix<Value, Index> m(comm, rows, Operation::NonTranspose, options);
  if (split) *split = m.info().local_chunks;
  const int r = comm.rank();
  std::vector<Value> x(static_cast<std::size_t>(m.x_partition().count(r)));
  std::vector<Value> y(static_cast<std::size_t>(m.y_partition().count(r)));
  const auto x0 = static_cast<double>(m.x_partition().begin(r)), y0 = static_cast<double>(m.y_partition().begin(r));
  // Full mantissas, so that another summation order would show in the bits.
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<Value>(1.7 * std::sin(0.37 * (x0 + double(i))));
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<Value>(std::cos(0.11 * (y0 + double(i))));
  m.apply(Value(0.7), x, Value(-1.3), y);
  return y;
}

// Chunks of the row loop sum every row as the whole block's plan does: the same bits, also with
// Options::deterministic, where merge-parallel keeps its block whole. stencil27 n=50 takes the rule's
// unrolled loop, which a chunk's own rule would refuse (its rows lie off the chunk's diagonal): the pinned
// kernel keeps it. The rule splits when a rank's largest message reaches 4 KiB and its block holds two
// chunks of 4 MiB of column indices (64-bit: 0.5 M nonzeros; poisson2d n=1100: 8800 bytes, 2-3 M
// nonzeros a rank), not below 4 KiB (n=500: 4000 bytes).
TEST(Distributed, ProgressChunksKeepRowSums) {
  const Communicator comm;
  for (bool deterministic : {false, true})
    for (const char* kind : {"poisson2d", "stencil27"}) {
      SCOPED_TRACE(std::string(kind) + (deterministic ? " deterministic" : ""));
      const auto rows = generate<double>(comm, kind, {{"n", std::string(kind) == "poisson2d" ? 120 : 50}});
      DistributedOptions o{Backend::Cpu, Algorithm::RowLoop, {}};
      o.options.threads = 1;
      o.options.deterministic = deterministic;
      int split = 0;
      const auto whole = product_part(comm, rows, o, 1);
      const auto chunked = product_part(comm, rows, o, 4, &split);
      EXPECT_EQ(split, rows.matrix.rows >= 2 ? 4 : 1);
      ASSERT_EQ(whole.size(), chunked.size());
      for (std::size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], chunked[i]) << "row " << i;  // bitwise
      o.algorithm = Algorithm::MergeParallel;
      product_part(comm, rows, o, 4, &split);
      EXPECT_EQ(split, deterministic ? 1 : 4);
    }
  DistributedOptions o;
  o.options.threads = 1;
  o.options.deterministic = true;  // Auto's row kernel not measured: the same in the whole block and the chunks
  int split = 0;
  for (const auto& [n, expect_split] : {std::pair{1100, true}, std::pair{500, false}}) {
    const auto rows = generate<double>(comm, "poisson2d", {{"n", n}});
    const auto whole = product_part<double, std::int64_t>(comm, rows, o, 1);
    const auto ruled = product_part<double, std::int64_t>(comm, rows, o, 0, &split);
    EXPECT_EQ(split > 1, expect_split) << "n=" << n;
    EXPECT_EQ(whole, ruled) << "n=" << n;
  }
  // A x only: the transpose's local block stays whole.
  o.progress_chunks = 4;
  const DistributedMatrix<double, std::int32_t> t(comm, generate<double>(comm, "poisson2d", {{"n", 40}}),
                                                  Operation::Transpose, o);
  EXPECT_EQ(t.info().local_chunks, 1);
  o.progress_chunks = -1;
  EXPECT_THROW((DistributedMatrix<double, std::int32_t>(comm, generate<double>(comm, "poisson2d", {{"n", 40}}),
                                                        Operation::NonTranspose, o)),
               InvalidArgument);
}

TEST(Distributed, NonzeroPartitionSameFromRowPointersAndDistributedLengths) {
  const Communicator comm;
  for (const char* name : {"huge_row", "empty_rows", "power_law_rmat12", "empty_0x7", "one_row"}) {
    const auto& a = zoo_matrix(name);
    const RowPartition whole = partition_nonzeros(a.row_ptr, comm.size());
    const RowPartition even = partition_rows(a.rows, comm.size());
    std::vector<std::int64_t> lengths;
    for (std::int64_t r = even.begin(comm.rank()); r < even.end(comm.rank()); ++r) lengths.push_back(a.row_length(r));
    EXPECT_EQ(partition_nonzeros(comm, even, lengths).offsets, whole.offsets) << name;
    EXPECT_EQ(whole.offsets.front(), 0);
    EXPECT_EQ(whole.offsets.back(), a.rows);
  }
  const RowPartition p{{0, 0, 5, 5, 9}};
  EXPECT_EQ(p.owner(0), 1);
  EXPECT_EQ(p.owner(4), 1);
  EXPECT_EQ(p.owner(5), 3);
  EXPECT_EQ(p.owner(8), 3);
}

// Generated slices equal the rows of the whole generated matrix; so do the rows read from a file.
TEST(Distributed, GeneratedAndReadSlicesMatchTheWholeMatrix) {
  const Communicator comm;
  const std::vector<std::pair<std::string, std::map<std::string, double>>> kinds{
      {"poisson2d", {{"n", 37}}}, {"stencil27", {{"n", 9}}}, {"random_uniform", {{"rows", 777}, {"cols", 500}, {"per_row", 6}}},
      {"long_rows", {{"rows", 900}, {"cols", 1200}, {"long_rows", 3}, {"long_length", 800}, {"short_length", 2}}},
      {"rmat", {{"scale", 9}, {"edge_factor", 4}}}};
  for (const auto& [kind, params] : kinds)
    for (PartitionKind pk : {PartitionKind::Nonzeros, PartitionKind::Rows}) {
      SCOPED_TRACE(kind);
      const auto whole = gen::generate<double, std::int64_t>(kind, params);
      const auto mine = generate<double>(comm, kind, params, pk);
      const auto scattered = scatter_rows(comm, whole, pk);
      EXPECT_EQ(mine.rows.offsets, scattered.rows.offsets);
      EXPECT_EQ(mine.cols.offsets, scattered.cols.offsets);
      EXPECT_EQ(mine.matrix.row_ptr, scattered.matrix.row_ptr);
      EXPECT_EQ(mine.matrix.col_idx, scattered.matrix.col_idx);
      EXPECT_EQ(mine.matrix.values, scattered.matrix.values);
    }
  // A file read on rank 0 and scattered.
  const auto& a = zoo_matrix("unsorted_columns");
  const std::string path = (std::filesystem::temp_directory_path() / "spmv_distributed_read_test.mtx").string();
  if (comm.rank() == 0) write_matrix_market(path, a);
  MPI_Barrier(comm.get());
  const auto read = read_matrix_market<double>(comm, path);
  CsrMatrix<double, std::int64_t> canonical = a;
  canonicalize(canonical);
  const auto expected = scatter_rows(comm, canonical, PartitionKind::Nonzeros);
  EXPECT_EQ(read.matrix.col_idx, expected.matrix.col_idx);
  EXPECT_EQ(read.matrix.values, expected.matrix.values);
  MPI_Barrier(comm.get());
  if (comm.rank() == 0) std::filesystem::remove(path);
}

TEST(Distributed, VectorReductionsAndMoves) {
  const Communicator comm;
  const std::int64_t n = 1001;
  const RowPartition p = skewed(n, comm.size(), 1);
  std::vector<double> whole(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) whole[i] = 0.25 * static_cast<double>(i % 17) - 1.0;
  const auto part = scatter<double>(comm, p, comm.rank() == 0 ? std::span<const double>(whole) : std::span<const double>{});
  ASSERT_EQ(static_cast<std::int64_t>(part.size()), p.count(comm.rank()));
  double expected = 0;
  for (double v : whole) expected += v * v;  // exact: quarters, small sums
  EXPECT_EQ(dot<double>(comm, part, part), expected);
  EXPECT_EQ(norm2<double>(comm, part), std::sqrt(expected));
  std::vector<double> y(part.size(), 1.0);
  axpy<double>(2.0, part, y);
  const auto back = gather<double>(comm, p, y);
  if (comm.rank() == 0)
    for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(back[i], 1.0 + 2.0 * whole[i]);
}

// Bad input on one rank is an error on every rank, never a hang (ctest's TIMEOUT would catch one).
TEST(Distributed, DisagreementsAreErrorsOnEveryRank) {
  const Communicator comm;
  const auto& a = zoo_matrix("poisson2d_64");
  auto rows = scatter_rows(comm, a, PartitionKind::Nonzeros);
  {
    auto bad = rows;
    if (comm.rank() == comm.size() - 1) bad.global_rows += 1;  // the ranks disagree on the size
    EXPECT_THROW((DistributedMatrix<double, std::int32_t>(comm, bad, Operation::NonTranspose)), InvalidArgument);
  }
  {
    auto bad = rows;
    if (comm.rank() == 1) bad.rows.offsets[1] += 1;  // ... or on the partition
    EXPECT_THROW((DistributedMatrix<double, std::int32_t>(comm, bad, Operation::NonTranspose)), InvalidArgument);
  }
  {
    auto bad = rows;
    if (comm.rank() == 0) bad.matrix.col_idx[0] = a.cols + 5;  // one rank's rows are invalid
    EXPECT_THROW((DistributedMatrix<double, std::int32_t>(comm, bad, Operation::NonTranspose)), InvalidArgument);
  }
  if (!test::cuda_on_every_rank(comm))  // no GPU or a build without NCCL: refused everywhere
    EXPECT_THROW((DistributedMatrix<double, std::int32_t>(comm, rows, Operation::NonTranspose, {Backend::Cuda})),
                 Unsupported);
  {
    DistributedMatrix<double, std::int32_t> m(comm, rows, Operation::NonTranspose);
    EXPECT_THROW(m.apply(1.0, nullptr, 0.0, nullptr, nullptr), Unsupported);  // device pointers need CUDA
    EXPECT_EQ(m.device(), -1);
  }
  for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
    DistributedMatrix<double, std::int32_t> m(comm, rows, op);
    std::vector<double> x(static_cast<std::size_t>(m.x_partition().count(comm.rank())) + (comm.rank() == 1), 1.0);
    std::vector<double> y(static_cast<std::size_t>(m.y_partition().count(comm.rank())));
    EXPECT_THROW(m.apply(1.0, x, 0.0, y), InvalidArgument);  // rank 1's x is one too long
    x.resize(static_cast<std::size_t>(m.x_partition().count(comm.rank())));
    EXPECT_NO_THROW(m.apply(1.0, x, 0.0, y));  // and the matrix still works afterwards
  }
  {
    // Ranks disagreeing on alpha (rank 0 passes 0): no hang, and rank 0's rows are exactly beta*y
    // although its x is NaN.
    DistributedMatrix<double, std::int32_t> m(comm, rows, Operation::NonTranspose);
    const double alpha = comm.rank() == 0 ? 0.0 : 1.0;
    std::vector<double> x(static_cast<std::size_t>(m.x_partition().count(comm.rank())),
                          comm.rank() == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0);
    std::vector<double> y(static_cast<std::size_t>(m.y_partition().count(comm.rank())), 2.0);
    EXPECT_NO_THROW(m.apply(alpha, x, 0.5, y));
    if (comm.rank() == 0)
      for (double v : y) EXPECT_EQ(v, 1.0);
  }
  EXPECT_THROW(read_matrix_market<double>(comm, "/nonexistent/spmv.mtx"), Error);
  EXPECT_THROW(generate<double>(comm, "no_such_generator"), InvalidArgument);
}

}  // namespace
}  // namespace spmv::dist
