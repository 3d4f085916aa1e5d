// PartitionKind::Streaming (include/spmv/distributed.hpp, docs/DISTRIBUTED.md "The streaming path"):
// the linear deterministic greedy (LDG) heuristic of Stanton & Kliot, "Streaming graph partitioning for
// large distributed graphs", KDD 2012 (section 4): one pass over the vertices, each placed for good in
// the part holding most of its already placed neighbours, discounted by how full that part is. It needs
// neither the graph of A + A^T nor a multilevel hierarchy, so it runs where METIS (32-bit idx_t) and
// PT-Scotch (~140 B a nonzero a rank) cannot: 4 B a global row on every rank, O(nnz + rows) work.
// The steps, each collective:
//   1. the stream (ldg_parts): the ranks stream their own rows in rounds of batch_rows, each scoring with
//      the assignments and loads known at the round's start plus its own decisions in the round (their
//      loads counted once per rank, see there), then exchange the round's decisions (MPI_Allgatherv) and
//      load changes (MPI_Allreduce);
//   2. the rows renumbered and moved to their parts' ranks, and the edge cut (move_to_parts.hpp, shared
//      with the parallel graph partition; the new ids computed from the global assignment).
// Stanton & Kliot's stream is one sequence on one machine; the rounds are this file's parallel variant:
// on one rank it is their LDG exactly (any batch_rows), and more ranks score against the other ranks'
// decisions one round old (docs/DISTRIBUTED.md measures what that costs in edge cut).
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/phase_log.hpp"
#include "distributed/collective.hpp"
#include "distributed/move_to_parts.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

namespace spmv::dist {
namespace {

using detail::check_mpi;

// Step 1: the part of every global row, in [0, ranks), the same on every rank.
template <class Value>
std::vector<std::int32_t> ldg_parts(const Communicator& comm, const LocalRows<Value>& in,
                                    const StreamingPartitionOptions& options) {
  const int rank = comm.rank(), ranks = comm.size();
  const MPI_Comm c = comm.get();
  const auto& m = in.matrix;
  const std::int64_t n = m.rows, begin = in.rows.begin(rank), batch = options.batch_rows;
  const auto parts = static_cast<std::size_t>(ranks);
  // This rank's rows of a round, and their weight (1 + length each).
  const auto first_row = [&](std::int64_t round) { return std::min(n, round * batch); };
  const auto last_row = [&](std::int64_t round) { return std::min(n, first_row(round) + batch); };
  const auto round_weight = [&](std::int64_t round) {
    const std::int64_t first = first_row(round), last = last_row(round);
    return last - first + m.row_ptr[last] - m.row_ptr[first];
  };
  std::int64_t totals[3] = {n + m.nnz(), round_weight(0), (n + batch - 1) / batch};  // weight, round 0's, rounds
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, c), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &totals[2], 1, MPI_INT64_T, MPI_MAX, c), "MPI_Allreduce");
  const double capacity = static_cast<double>(totals[0]) / ranks * (1 + options.slack);
  // The global assignment (-1: not yet streamed, 4 B a global row) and the parts' loads as every rank
  // knows them; `own`: this rank's additions in the round, then (one more entry) the next round's
  // weight, summed over the ranks in one MPI_Allreduce.
  std::vector<std::int32_t> assigned(static_cast<std::size_t>(in.global_rows), -1);
  std::vector<std::int64_t> load(parts, 0), own(parts + 1, 0);
  std::int64_t round_total = totals[1];  // every rank's rows of this round, weighed
  // Per row: how many of its columns lie in each part (a dense counter a part, reset through `touched`).
  std::vector<std::int64_t> neighbors(parts, 0);
  std::vector<std::int32_t> touched;
  touched.reserve(parts);
  std::vector<double> view(parts);
  std::vector<int> counts(parts), displs(parts);
  std::vector<std::int32_t> gathered;
  // This rank's order of preference among equally loaded parts: its own part first, then the next ones
  // ((p - rank) mod ranks), so that ranks starting from the same loads do not all pick the same part.
  const auto preferred = [&](std::size_t a, std::size_t b) {
    return (a + parts - static_cast<std::size_t>(rank)) % parts < (b + parts - static_cast<std::size_t>(rank)) % parts;
  };
  for (std::int64_t round = 0; round < totals[2]; ++round) {
    // The loads this rank scores with: the round's start plus its own decisions, projected onto the
    // whole round (scaled by the round's weight over this rank's share of it): the other ranks decide
    // at the same time from the same loads, and a rank that counted its own decisions once would fill a
    // part the others fill too (in a round that holds the whole matrix, every rank would fill the same
    // part up to C). Two consequences (docs/DISTRIBUTED.md "The streaming path"): a part's projected
    // load stays below C while each rank adds less than its share of the part's room, so no part
    // exceeds C by more than one row a rank; and the projected loads sum to less than the total weight,
    // so the least loaded part is always below C.
    const std::int64_t first = first_row(round), last = last_row(round);
    const double scale = last > first ? static_cast<double>(round_total) / static_cast<double>(round_weight(round)) : 1;
    for (std::size_t q = 0; q < parts; ++q) view[q] = static_cast<double>(load[q]);
    for (std::int64_t i = first; i < last; ++i) {
      for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
        const std::int32_t p = assigned[static_cast<std::size_t>(m.col_idx[k])];
        if (p >= 0 && neighbors[static_cast<std::size_t>(p)]++ == 0) touched.push_back(p);
      }
      // The best score among the parts holding a neighbour; ties to the less loaded, then the preferred.
      // A part with no neighbour scores 0, and so does a full one: when nothing scores above 0, the
      // least loaded part (below C) wins the tie.
      std::size_t best = parts;
      double best_score = 0;
      for (const std::int32_t p : touched) {
        const auto q = static_cast<std::size_t>(p);
        const double score = static_cast<double>(neighbors[q]) * (1 - view[q] / capacity);
        neighbors[q] = 0;
        if (score <= 0) continue;
        if (best == parts || score > best_score ||
            (score == best_score && (view[q] < view[best] || (view[q] == view[best] && preferred(q, best))))) {
          best = q;
          best_score = score;
        }
      }
      touched.clear();
      if (best == parts) {
        best = static_cast<std::size_t>(rank);
        for (std::size_t q = 0; q < parts; ++q)
          if (view[q] < view[best] || (view[q] == view[best] && preferred(q, best))) best = q;
      }
      const std::int64_t weight = 1 + m.row_length(i);
      own[best] += weight;
      view[best] = static_cast<double>(load[best]) + scale * static_cast<double>(own[best]);
      assigned[static_cast<std::size_t>(begin + i)] = static_cast<std::int32_t>(best);
    }
    // The round's decisions: rank q's rows [round * batch, ...) of its block, into everyone's array.
    int at = 0;
    for (int q = 0; q < ranks; ++q) {
      const std::int64_t rows = std::clamp<std::int64_t>(in.rows.count(q) - round * batch, 0, batch);
      counts[static_cast<std::size_t>(q)] = static_cast<int>(rows);  // batch_rows <= INT_MAX / ranks, checked
      displs[static_cast<std::size_t>(q)] = at;
      at += static_cast<int>(rows);
    }
    gathered.resize(static_cast<std::size_t>(at));
    check_mpi(MPI_Allgatherv(assigned.data() + begin + first, static_cast<int>(last - first), MPI_INT32_T,
                             gathered.data(), counts.data(), displs.data(), MPI_INT32_T, c),
              "MPI_Allgatherv");
    for (int q = 0; q < ranks; ++q)
      std::copy_n(gathered.begin() + displs[static_cast<std::size_t>(q)], counts[static_cast<std::size_t>(q)],
                  assigned.begin() + in.rows.begin(q) + round * batch);
    own[parts] = round_weight(round + 1);
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, own.data(), ranks + 1, MPI_INT64_T, MPI_SUM, c), "MPI_Allreduce");
    for (std::size_t q = 0; q < parts; ++q) load[q] += own[q];
    round_total = own[parts];
    std::fill(own.begin(), own.end(), 0);
  }
  return assigned;
}

}  // namespace

template <class Value>
LocalRows<Value> partition_streaming(const Communicator& comm, const LocalRows<Value>& in,
                                     const StreamingPartitionOptions& options) {
  detail::collectively(comm, [&] {
    detail::check_partition_input(comm, in, "streaming partition");
    if (!(options.slack >= 0))
      throw InvalidArgument("streaming partition: slack " + std::to_string(options.slack) + " (must be >= 0)");
    if (options.batch_rows < 1 || options.batch_rows > INT_MAX / comm.size())
      throw InvalidArgument("streaming partition: batch_rows " + std::to_string(options.batch_rows) +
                            " (must be in [1, INT_MAX / ranks]: one round's decisions are one MPI_Allgatherv)");
  });
  const auto start = std::chrono::steady_clock::now();
  // SPMV_DEBUG_LOG=1: each rank's steps on stderr.
  const std::string phase = "streaming partition rank " + std::to_string(comm.rank()) + "/";
  spmv::detail::PhaseLog log(phase + "LDG stream");
  auto assigned = ldg_parts(comm, in, options);
  log.next(phase + "rows moved");
  LocalRows<Value> out = detail::move_to_parts_global(comm, in, std::move(assigned));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  out.partition_ms = ms;
  return out;
}

template LocalRows<float> partition_streaming<float>(const Communicator&, const LocalRows<float>&,
                                                     const StreamingPartitionOptions&);
template LocalRows<double> partition_streaming<double>(const Communicator&, const LocalRows<double>&,
                                                       const StreamingPartitionOptions&);

}  // namespace spmv::dist
