// PartitionKind::Graph (src/distributed/graph_partition.cpp): the METIS partition's order and balance,
// products under it compared with the one-process product of the ORIGINAL matrix (vectors moved
// through to_distributed_order / to_original_order on the root, as the CLI does), the halo it saves on
// a randomly numbered mesh, and its refusals. Run by ctest under mpirun -np 2 and -np 3. Built
// without METIS, the tests that need it skip (graph_partition_available() is the same on every rank)
// and the refusal test checks the Unsupported instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/differential.hpp"
#include "distributed/cuda_ranks.hpp"
#include "distributed/mpi_util.hpp"
#include "distributed/original_order.hpp"
#include "spmv/distributed.hpp"
#include "spmv/generators.hpp"
#include "spmv/reorder.hpp"

namespace spmv::dist {
namespace {

using test::zoo;
using test::zoo_matrix;
using Matrix = CsrMatrix<double, std::int64_t>;

#define SKIP_WITHOUT_METIS()                                                                       \
  if (!graph_partition_available()) GTEST_SKIP() << "built without METIS (SPMV_WITH_METIS=OFF)"

using test::OriginalOrderOperator;
using test::scrambled;
using test::summed_halo;

template <class Value>
void check_graph_partitioned(const Matrix& whole, const std::string& name, Operation op,
                             Backend backend = Backend::Cpu) {
  const Communicator comm;
  const auto a = convert<Value, std::int32_t>(whole);
  const auto rows = scatter_rows(comm, comm.rank() == 0 ? convert<Value, std::int64_t>(a) : CsrMatrix<Value, std::int64_t>{},
                                 PartitionKind::Graph);
  DistributedMatrix<Value, std::int32_t> m(comm, rows, op, {backend, Algorithm::Auto, {}});
  OriginalOrderOperator<Value, std::int32_t> original(comm, rows.permutation, m);
  const auto check = test::check_operator<Value, std::int32_t>(original, a, test::hash_name(name));
  EXPECT_EQ(check.pairs, 20);
  for (const auto& f : check.failures)
    ADD_FAILURE() << "rank " << comm.rank() << "/" << comm.size() << " " << name << ", op " << spmv::to_string(op)
                  << ", " << spmv::to_string(backend) << ", " << test::type_name<Value>() << ": " << f;
}

// Every square zoo matrix, both operations; float on the non-transposed product; on the CUDA backend
// too where every rank has a GPU (the permutation lives on the host: the backend only sees P A P^T).
TEST(GraphPartition, ProductsEqualTheOneProcessProductOfTheOriginalMatrix) {
  SKIP_WITHOUT_METIS();
  const bool cuda = test::cuda_on_every_rank(Communicator());
  int square = 0;
  for (std::size_t i = 0; i < zoo().size(); ++i) {
    const auto& a = zoo_matrix(i);
    if (a.rows != a.cols || a.rows > (1 << 20)) continue;
    ++square;
    SCOPED_TRACE(zoo()[i].name);
    for (Backend b : {Backend::Cpu, Backend::Cuda}) {
      if (b == Backend::Cuda && !cuda) continue;
      check_graph_partitioned<double>(a, zoo()[i].name, Operation::NonTranspose, b);
      check_graph_partitioned<double>(a, zoo()[i].name, Operation::Transpose, b);
      check_graph_partitioned<float>(a, zoo()[i].name, Operation::NonTranspose, b);
    }
  }
  EXPECT_GE(square, 20);
}

// The root's partition: a permutation, the parts' rows grouped in order, balanced by 1 + row length
// within METIS's tolerance; scatter_rows and generate hand out P A P^T by those parts and keep the
// permutation on the root only.
TEST(GraphPartition, PermutationGroupsBalancedParts) {
  SKIP_WITHOUT_METIS();
  const Communicator comm;
  const std::vector<std::pair<std::string, Matrix>> graphs{
      {"scrambled poisson2d 60", scrambled(gen::poisson2d(60), 7)},
      {"rmat 12", zoo_matrix("power_law_rmat12")},
      {"scrambled stencil27 12", scrambled(gen::stencil27(12), 8)}};
  for (const auto& [name, a] : graphs)
    for (int parts : {1, 2, 3, 4, 7}) {
      SCOPED_TRACE(name + ", " + std::to_string(parts) + " parts");
      const GraphPartition g = partition_graph(a, parts);
      ASSERT_EQ(g.parts.ranks(), parts);
      ASSERT_EQ(g.parts.size(), a.rows);
      std::vector<char> seen(static_cast<std::size_t>(a.rows), 0);
      for (std::int64_t old : g.permutation) {
        ASSERT_TRUE(old >= 0 && old < a.rows && !seen[static_cast<std::size_t>(old)]) << old;
        seen[static_cast<std::size_t>(old)] = 1;
      }
      // METIS balances to within 3% of the mean part weight; one vertex may tip a part over.
      std::int64_t total = 0, heaviest_row = 0;
      for (std::int64_t r = 0; r < a.rows; ++r) {
        total += 1 + a.row_length(r);
        heaviest_row = std::max<std::int64_t>(heaviest_row, 1 + a.row_length(r));
      }
      for (int p = 0; p < parts; ++p) {
        std::int64_t weight = 0;
        for (std::int64_t i = g.parts.begin(p); i < g.parts.end(p); ++i) {
          weight += 1 + a.row_length(g.permutation[i]);
          if (i > g.parts.begin(p)) EXPECT_LT(g.permutation[i - 1], g.permutation[i]);  // stable within a part
        }
        EXPECT_LE(static_cast<double>(weight), 1.03 * static_cast<double>(total) / parts + heaviest_row) << "part " << p;
      }
      if (parts == 1) EXPECT_EQ(g.edge_cut, 0);
      else EXPECT_GT(g.edge_cut, 0);
    }
  // Through scatter_rows and generate: the gathered matrix is P A P^T with the root's permutation.
  const auto whole = gen::generate<double, std::int64_t>("poisson2d", {{"n", 23}});
  for (const bool generated : {false, true}) {
    SCOPED_TRACE(generated ? "generate" : "scatter_rows");
    const auto rows = generated ? generate<double>(comm, "poisson2d", {{"n", 23}}, PartitionKind::Graph)
                                : scatter_rows(comm, comm.rank() == 0 ? whole : Matrix{}, PartitionKind::Graph);
    const auto gathered = gather_rows(comm, rows);
    EXPECT_EQ(rows.cols.offsets, rows.rows.offsets);
    if (comm.rank() != 0) {
      EXPECT_TRUE(rows.permutation.empty());
      EXPECT_EQ(rows.edge_cut, -1);
      continue;
    }
    const GraphPartition g = partition_graph(whole, comm.size());
    EXPECT_EQ(rows.permutation, g.permutation);
    EXPECT_EQ(rows.rows.offsets, g.parts.offsets);
    EXPECT_EQ(rows.edge_cut, g.edge_cut);
    const auto expected = permute_symmetric(whole, g.permutation);
    EXPECT_EQ(gathered.row_ptr, expected.row_ptr);
    EXPECT_EQ(gathered.col_idx, expected.col_idx);
    EXPECT_EQ(gathered.values, expected.values);
  }
}

// A 2D Poisson matrix with its rows numbered at random: contiguous blocks need almost every neighbour
// of their rows from other ranks; the graph partition recovers the mesh's geometry, close to the halo
// of contiguous blocks in the natural numbering (about 2 * (ranks - 1) * n).
TEST(GraphPartition, CutsTheHaloOfARandomlyNumberedMesh) {
  SKIP_WITHOUT_METIS();
  const Communicator comm;
  const std::int64_t n = 100;
  const auto natural = gen::poisson2d(n);
  const auto shuffled = scrambled(natural, 11);
  const auto& sent = comm.rank() == 0 ? shuffled : Matrix{};
  const std::int64_t contiguous = summed_halo(comm, scatter_rows(comm, sent, PartitionKind::Nonzeros));
  const std::int64_t graph = summed_halo(comm, scatter_rows(comm, sent, PartitionKind::Graph));
  const std::int64_t ideal = summed_halo(comm, scatter_rows(comm, comm.rank() == 0 ? natural : Matrix{}));
  EXPECT_LT(10 * graph, contiguous) << "graph " << graph << ", contiguous " << contiguous;
  EXPECT_LE(graph, 2 * ideal) << "graph " << graph << ", natural numbering " << ideal;
}

// Refusals on every rank: a rectangular matrix; vectors of the wrong length; without METIS, any use.
TEST(GraphPartition, Refusals) {
  const Communicator comm;
  const auto rectangular = gen::generate<double, std::int64_t>("random_uniform", {{"rows", 50}, {"cols", 40}, {"per_row", 3}});
  const auto square = gen::poisson2d(10);
  if (!graph_partition_available()) {
    try {
      scatter_rows(comm, comm.rank() == 0 ? square : Matrix{}, PartitionKind::Graph);
      ADD_FAILURE() << "the graph partition ran without METIS";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("libmetis-dev"), std::string::npos) << e.what();
    }
    return;
  }
  try {
    scatter_rows(comm, comm.rank() == 0 ? rectangular : Matrix{}, PartitionKind::Graph);
    ADD_FAILURE() << "a 50 x 40 matrix was graph-partitioned";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("square"), std::string::npos) << e.what();
  }
  EXPECT_THROW(partition_graph(square, 0), InvalidArgument);
  const auto rows = scatter_rows(comm, comm.rank() == 0 ? square : Matrix{}, PartitionKind::Graph);
  const std::vector<double> short_vector(10, 1.0);
  if (comm.rank() == 0) {
    EXPECT_THROW(to_distributed_order<double>(rows.permutation, short_vector), InvalidArgument);
    EXPECT_THROW(to_original_order<double>(rows.permutation, short_vector), InvalidArgument);
  } else {  // no permutation off the root: vectors pass unchanged
    EXPECT_EQ(to_distributed_order<double>(rows.permutation, short_vector), short_vector);
  }
  // More parts than rows: some ranks own nothing, the product still matches.
  check_graph_partitioned<double>(gen::poisson2d(1), "1x1", Operation::NonTranspose);
}

}  // namespace
}  // namespace spmv::dist
