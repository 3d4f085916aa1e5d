// PartitionKind::ParallelGraph (include/spmv/distributed.hpp, docs/DISTRIBUTED.md "Graph partition"):
// the graph partition computed from the distributed rows by PT-Scotch (Chevalier & Pellegrini,
// "PT-Scotch: A tool for efficient parallel graph ordering", Parallel Computing 34(6-8), 2008: parallel
// multilevel coarsening, a partition of the coarsest graph, banded diffusion refinement), so that no
// rank ever holds the whole matrix or graph. The steps, each collective:
//   1. the pattern of A + A^T without self loops: each rank has its rows' columns; the transposed
//      entries go to the owners of their rows (MPI_Alltoallv), then every row is sorted and deduplicated;
//   2. SCOTCH_dgraphBuild + SCOTCH_dgraphPart into one part per rank;
//   3. the rows renumbered and moved to their parts' ranks, and the edge cut (move_to_parts.hpp, shared
//      with the streaming partition).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/phase_log.hpp"
#include "distributed/collective.hpp"
#include "distributed/move_to_parts.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

#ifdef SPMV_WITH_PTSCOTCH
#include <stdint.h>  // scotch.h uses int64_t without including it
#include <stdio.h>   // scotch.h uses FILE without including it

#include <scotch.h>
#include <ptscotch.h>
#endif

namespace spmv::dist {
namespace {

using detail::check_mpi;
using detail::collectively;

#ifdef SPMV_WITH_PTSCOTCH

// Seeded, with Scotch's deterministic option, so that the parts (and so every rank's rows) are the same
// on every run with the same ranks.
constexpr SCOTCH_Num kScotchSeed = 1;
// Scotch's load imbalance tolerance: METIS's default (3%), so that both graph kinds balance alike.
constexpr double kImbalance = 0.03;

// This rank's vertices of the graph of A + A^T without self loops: start[i]..start[i + 1] of adj are
// the global ids of row i's neighbours, sorted, each once.
struct LocalGraph {
  std::vector<SCOTCH_Num> start{0};
  std::vector<SCOTCH_Num> adj;
};

// Step 1. An entry (i, j), i != j, adds j to row i here and i to row j at j's owner; rows of the same
// rank get both at once.
template <class Value>
LocalGraph symmetric_graph(const Communicator& comm, const LocalRows<Value>& in) {
  struct Edge {
    std::int64_t row, neighbor;
  };
  const int rank = comm.rank(), ranks = comm.size();
  const auto& m = in.matrix;
  const std::int64_t begin = in.rows.begin(rank), n = m.rows;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks), 0);
  std::vector<std::int64_t> length(static_cast<std::size_t>(n), 0);  // before deduplication
  for (std::int64_t i = 0; i < n; ++i)
    for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
      const std::int64_t j = m.col_idx[k];
      if (j == begin + i) continue;
      ++length[i];
      const int owner = in.rows.owner(j);
      if (owner == rank) ++length[j - begin];
      else ++counts[static_cast<std::size_t>(owner)];
    }
  std::vector<std::int64_t> at(static_cast<std::size_t>(ranks) + 1, 0);
  for (int q = 0; q < ranks; ++q) at[q + 1] = at[q] + counts[q];
  std::vector<Edge> send(static_cast<std::size_t>(at.back()));
  for (std::int64_t i = 0; i < n; ++i)
    for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
      const std::int64_t j = m.col_idx[k];
      const int owner = j == begin + i ? rank : in.rows.owner(j);
      if (owner != rank) send[static_cast<std::size_t>(at[owner]++)] = {j, begin + i};
    }
  const auto received = detail::alltoallv_in_rounds<Edge>(comm.get(), send, counts);
  send = {};
  for (const Edge& e : received) ++length[e.row - begin];
  // Counting sort by row, then each row sorted and its duplicates (an entry and its transpose) dropped.
  LocalGraph g;
  g.start.assign(static_cast<std::size_t>(n) + 1, 0);
  std::vector<std::int64_t> fill(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) fill[i + 1] = fill[i] + length[i];
  g.adj.resize(static_cast<std::size_t>(fill[n]));
  for (std::int64_t i = 0; i < n; ++i)
    for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
      const std::int64_t j = m.col_idx[k];
      if (j == begin + i) continue;
      g.adj[static_cast<std::size_t>(fill[i]++)] = static_cast<SCOTCH_Num>(j);
      if (in.rows.owner(j) == rank)
        g.adj[static_cast<std::size_t>(fill[j - begin]++)] = static_cast<SCOTCH_Num>(begin + i);
    }
  for (const Edge& e : received)
    g.adj[static_cast<std::size_t>(fill[e.row - begin]++)] = static_cast<SCOTCH_Num>(e.neighbor);
  std::int64_t out = 0, row_start = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto first = g.adj.begin() + row_start, last = g.adj.begin() + row_start + length[i];
    std::sort(first, last);
    const auto kept = std::unique(first, last);
    row_start += length[i];
    out = std::copy(first, kept, g.adj.begin() + out) - g.adj.begin();
    g.start[i + 1] = static_cast<SCOTCH_Num>(out);
  }
  g.adj.resize(static_cast<std::size_t>(out));
  return g;
}

// Scotch's objects, freed on every path out.
struct Scotch {
  SCOTCH_Context context;
  SCOTCH_Dgraph graph, bound;  // `bound`: `graph` seen through the context
  SCOTCH_Strat strategy;
  bool context_ok = false, graph_ok = false, bound_ok = false, strategy_ok = false;
  ~Scotch() {
    if (strategy_ok) SCOTCH_stratExit(&strategy);
    if (bound_ok) SCOTCH_dgraphExit(&bound);
    if (graph_ok) SCOTCH_dgraphExit(&graph);
    if (context_ok) SCOTCH_contextExit(&context);
  }
};

// A Scotch call's status (0: success) agreed on by every rank. Scotch has printed its own message.
void agree_scotch(const Communicator& comm, int status, const char* call) {
  collectively(comm, [&] {
    if (status != 0) throw Error(std::string("parallel graph partition: ") + call + " failed (status " +
                                 std::to_string(status) + "; Scotch's message is on stderr)");
  });
}

// Step 2: this rank's vertices' parts, in [0, ranks).
template <class Value>
std::vector<SCOTCH_Num> scotch_parts(const Communicator& comm, const LocalRows<Value>& in, LocalGraph& g) {
  const int ranks = comm.size();
  const std::int64_t n = in.matrix.rows;
  std::vector<SCOTCH_Num> part(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)), 0);
  // Scotch indexes vertices, adjacency entries and summed weights in SCOTCH_Num (its width is the
  // header's: Debian's scotch-int64 variant, found first by CMake, is 64-bit).
  std::int64_t totals[2] = {static_cast<std::int64_t>(g.adj.size()), n + in.matrix.nnz()};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, comm.get()), "MPI_Allreduce");
  collectively(comm, [&] {
    if (SCOTCH_numSizeof() != static_cast<int>(sizeof(SCOTCH_Num)))
      throw Error("parallel graph partition: the loaded libptscotch has a " + std::to_string(8 * SCOTCH_numSizeof()) +
                  "-bit SCOTCH_Num, spmv was compiled with a " + std::to_string(8 * sizeof(SCOTCH_Num)) +
                  "-bit ptscotch.h (Debian's variants share one soname: check LD_LIBRARY_PATH)");
    constexpr auto limit = static_cast<std::int64_t>(std::numeric_limits<SCOTCH_Num>::max());
    if (in.global_rows > limit || totals[0] > limit || totals[1] > limit)
      throw Unsupported("parallel graph partition: " + std::to_string(in.global_rows) + " rows, " +
                        std::to_string(totals[0]) + " adjacency entries of A + A^T and a total weight of " +
                        std::to_string(totals[1]) + " exceed this PT-Scotch's " +
                        std::to_string(8 * sizeof(SCOTCH_Num)) + "-bit SCOTCH_Num (Debian's scotch-int64 is 64-bit)");
  });
  // One part: nothing to cut (and no call to make). An empty graph has no vertex to place.
  if (ranks == 1 || in.global_rows == 0) return part;
  std::vector<SCOTCH_Num> weight(part.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) weight[i] = static_cast<SCOTCH_Num>(1 + in.matrix.row_length(i));
  if (g.adj.empty()) g.adj.push_back(0);  // Scotch reads through the pointer; never indexed (start is all 0)
  const auto edges = static_cast<SCOTCH_Num>(g.start.back());
  // Scotch's messages on a communicator of their own, apart from any of the caller's.
  MPI_Comm own = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm.get(), &own), "MPI_Comm_dup");
  const std::unique_ptr<MPI_Comm, void (*)(MPI_Comm*)> own_guard(&own, [](MPI_Comm* c) { MPI_Comm_free(c); });
  const int on_node = detail::node_rank(comm.get());  // collective: before anything that may fail on one rank
  SCOTCH_randomSeed(kScotchSeed);
  SCOTCH_randomReset();
  Scotch s;
  int status = SCOTCH_contextInit(&s.context);
  s.context_ok = status == 0;
  if (status == 0) status = SCOTCH_contextOptionSetNum(&s.context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  if (status == 0) SCOTCH_contextRandomSeed(&s.context, kScotchSeed);
  // Scotch's default pool is a thread per core of the rank's affinity mask (or SCOTCH_PTHREAD_NUMBER),
  // pinned to those cores from the first, so ranks that share a mask (mpirun --bind-to none) stack their
  // pools on the same cores. A rank takes its OpenMP share (OMP_NUM_THREADS) on cores of its own: its
  // place on the node times the share, onwards (Scotch takes them modulo the mask's cores). One thread
  // starts no pool and pins nothing.
  const int threads = std::max(1, omp_get_max_threads());
  std::vector<int> cores(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) cores[static_cast<std::size_t>(t)] = on_node * threads + t;
  if (status == 0) status = SCOTCH_contextThreadSpawn(&s.context, threads, cores.data());
  agree_scotch(comm, status, "SCOTCH_contextInit");
  status = SCOTCH_dgraphInit(&s.graph, own);
  s.graph_ok = status == 0;
  agree_scotch(comm, status, "SCOTCH_dgraphInit");
  status = SCOTCH_dgraphBuild(&s.graph, 0, static_cast<SCOTCH_Num>(n), static_cast<SCOTCH_Num>(n), g.start.data(),
                              g.start.data() + 1, weight.data(), nullptr, edges, edges, g.adj.data(), nullptr, nullptr);
  agree_scotch(comm, status, "SCOTCH_dgraphBuild");
  status = SCOTCH_dgraphInit(&s.bound, own);
  s.bound_ok = status == 0;
  if (status == 0) status = SCOTCH_contextBindDgraph(&s.context, &s.graph, &s.bound);
  agree_scotch(comm, status, "SCOTCH_contextBindDgraph");
  status = SCOTCH_stratInit(&s.strategy);
  s.strategy_ok = status == 0;
  if (status == 0)
    status = SCOTCH_stratDgraphMapBuild(&s.strategy, SCOTCH_STRATDEFAULT, static_cast<SCOTCH_Num>(ranks),
                                        static_cast<SCOTCH_Num>(ranks), kImbalance);
  agree_scotch(comm, status, "SCOTCH_stratDgraphMapBuild");
  status = SCOTCH_dgraphPart(&s.bound, static_cast<SCOTCH_Num>(ranks), &s.strategy, part.data());
  agree_scotch(comm, status, "SCOTCH_dgraphPart");
  collectively(comm, [&] {
    for (std::int64_t i = 0; i < n; ++i)
      if (part[i] < 0 || part[i] >= ranks)
        throw Error("parallel graph partition: PT-Scotch returned part " + std::to_string(part[i]));
  });
  return part;
}

#endif

}  // namespace

bool parallel_graph_partition_available() {
#ifdef SPMV_WITH_PTSCOTCH
  return true;
#else
  return false;
#endif
}

template <class Value>
LocalRows<Value> partition_graph_parallel(const Communicator& comm, const LocalRows<Value>& in) {
  collectively(comm, [&] {
    detail::check_partition_input(comm, in, "parallel graph partition");
#ifndef SPMV_WITH_PTSCOTCH
    throw Unsupported("parallel graph partition: this spmv was built without PT-Scotch (apt-get install "
                      "libptscotch-dev, then configure with -DSPMV_WITH_PTSCOTCH=ON)");
#endif
  });
#ifdef SPMV_WITH_PTSCOTCH
  const auto start = std::chrono::steady_clock::now();
  // SPMV_DEBUG_LOG=1: each rank's steps on stderr.
  const std::string phase = "parallel graph partition rank " + std::to_string(comm.rank()) + "/";
  spmv::detail::PhaseLog log(phase + "graph of A + A^T");
  std::vector<std::int32_t> part;
  {
    LocalGraph graph = symmetric_graph(comm, in);
    log.next(phase + "SCOTCH_dgraphPart");
    const auto scotch = scotch_parts(comm, in, graph);
    part.assign(scotch.begin(), scotch.begin() + in.matrix.rows);  // checked in [0, ranks)
  }
  log.next(phase + "rows moved");
  LocalRows<Value> out = detail::move_to_parts(comm, in, part);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  out.partition_ms = ms;
  return out;
#else
  return {};  // not reached: refused above on every rank
#endif
}

template LocalRows<float> partition_graph_parallel<float>(const Communicator&, const LocalRows<float>&);
template LocalRows<double> partition_graph_parallel<double>(const Communicator&, const LocalRows<double>&);

}  // namespace spmv::dist
