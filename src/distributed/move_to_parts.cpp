// The steps after a partition computed from the distributed rows (move_to_parts.hpp): new ids, the rows
// renumbered and moved to their parts' ranks, the edge cut; and gather_permutation, which collects the
// resulting order on the root.
#include "distributed/move_to_parts.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "distributed/collective.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

namespace spmv::dist {
namespace detail {
namespace {

constexpr int kTagPermutation = 12;

// new_of_remote[k] is the new id of remote[k] (sorted global ids outside this rank's rows), asked of
// their owners, which look them up in their new_id.
std::vector<std::int64_t> ask_owners(const Communicator& comm, const RowPartition& rows,
                                     const std::vector<std::int64_t>& remote, const std::vector<std::int64_t>& new_id) {
  const int rank = comm.rank(), ranks = comm.size();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks), 0);
  for (const std::int64_t j : remote) ++counts[static_cast<std::size_t>(rows.owner(j))];  // sorted: grouped by owner
  std::vector<std::int64_t> from;
  auto asked = alltoallv_in_rounds<std::int64_t>(comm.get(), remote, counts, kAlltoallRoundBytes, &from);
  for (auto& j : asked) j = new_id[static_cast<std::size_t>(j - rows.begin(rank))];
  std::vector<std::int64_t> answer_counts(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) answer_counts[q] = from[q + 1] - from[q];
  return alltoallv_in_rounds<std::int64_t>(comm.get(), asked, answer_counts);
}

// The edge cut of the graph of A + A^T without self loops, from the moved rows (new ids, each row's
// columns sorted, one part per rank's block): every distinct entry (i, j) whose column another rank owns
// is a cut edge seen from i; an edge stored both ways, (i, j) and (j, i), is seen twice, so one is taken
// off for each such pair. Those pairs are found by sending each cut entry with i < j to j's owner, which
// looks for i in row j (a binary search): one MPI_Alltoallv of 16 B per such entry, the graph itself
// never built. What METIS reports as its objective, and partition_graph's test counts.
template <class Value>
std::int64_t edge_cut(const Communicator& comm, const LocalRows<Value>& out) {
  struct Entry {
    std::int64_t row, col;  // asks whether row `row` (owned by the receiver) has column `col`
  };
  const int rank = comm.rank(), ranks = comm.size();
  const auto& m = out.matrix;
  const std::int64_t begin = out.rows.begin(rank), end = out.rows.end(rank);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks), 0);
  std::int64_t seen = 0;
  // Calls f(global row, column) once per distinct column of a row that another rank owns.
  const auto for_each_cut = [&](auto&& f) {
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
        const std::int64_t j = m.col_idx[k];
        if ((j >= begin && j < end) || (k > m.row_ptr[i] && m.col_idx[k - 1] == j)) continue;
        f(begin + i, j);
      }
  };
  for_each_cut([&](std::int64_t i, std::int64_t j) {
    ++seen;
    if (i < j) ++counts[static_cast<std::size_t>(out.rows.owner(j))];
  });
  std::vector<std::int64_t> at(static_cast<std::size_t>(ranks) + 1, 0);
  for (int q = 0; q < ranks; ++q) at[q + 1] = at[q] + counts[q];
  std::vector<Entry> send(static_cast<std::size_t>(at.back()));
  for_each_cut([&](std::int64_t i, std::int64_t j) {
    if (i < j) send[static_cast<std::size_t>(at[out.rows.owner(j)]++)] = {j, i};
  });
  const auto asked = alltoallv_in_rounds<Entry>(comm.get(), send, counts);
  send = {};
  std::int64_t both_ways = 0;
  for (const Entry& e : asked) {
    const std::int64_t r = e.row - begin;
    both_ways += std::binary_search(m.col_idx.begin() + m.row_ptr[r], m.col_idx.begin() + m.row_ptr[r + 1], e.col);
  }
  std::int64_t cut = seen - both_ways;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &cut, 1, MPI_INT64_T, MPI_SUM, comm.get()), "MPI_Allreduce");
  return cut;
}

}  // namespace

template <class Value>
void check_partition_input(const Communicator& comm, const LocalRows<Value>& in, const std::string& who) {
  const int rank = comm.rank();
  if (in.global_rows != in.global_cols)
    throw InvalidArgument(who + ": needs a square matrix (this one is " + std::to_string(in.global_rows) + " x " +
                          std::to_string(in.global_cols) + "); use the nonzero or row partition");
  if (in.rows.ranks() != comm.size() || in.rows.size() != in.global_rows || in.matrix.rows != in.rows.count(rank) ||
      in.matrix.cols != in.global_cols)
    throw InvalidArgument(who + ": this rank's rows do not match their partition");
  if (!in.permutation.empty())
    throw InvalidArgument(who + ": these rows are already renumbered by the root's graph partition");
  if (!in.original_rows.empty() && static_cast<std::int64_t>(in.original_rows.size()) != in.matrix.rows)
    throw InvalidArgument(who + ": original_rows has " + std::to_string(in.original_rows.size()) + " entries for " +
                          std::to_string(in.matrix.rows) + " rows");
  validate(in.matrix);
}

namespace {

// The result's shape and partitions: part q has total[q] rows.
template <class Value>
LocalRows<Value> shaped(const LocalRows<Value>& in, const std::vector<std::int64_t>& total) {
  LocalRows<Value> out;
  out.global_rows = in.global_rows;
  out.global_cols = in.global_cols;
  out.rows.offsets.assign(total.size() + 1, 0);
  for (std::size_t q = 0; q < total.size(); ++q) out.rows.offsets[q + 1] = out.rows.offsets[q] + total[q];
  out.cols = default_column_partition(out.global_rows, out.global_cols, out.rows);
  return out;
}

// The rows grouped by destination part (stable) and sent, each row's columns renumbered by `renumber`
// (global id to new id) and sorted stably as permute_symmetric's; `out` comes with its shape and
// partitions set.
template <class Value, class Renumber>
LocalRows<Value> move_rows(const Communicator& comm, const LocalRows<Value>& in, std::span<const std::int32_t> part,
                           LocalRows<Value> out, Renumber&& renumber) {
  const int rank = comm.rank();
  const MPI_Comm c = comm.get();
  const auto& m = in.matrix;
  const std::int64_t n = m.rows, begin = in.rows.begin(rank);
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::int64_t> rows_to(p, 0), entries_to(p, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    ++rows_to[static_cast<std::size_t>(part[i])];
    entries_to[static_cast<std::size_t>(part[i])] += m.row_length(i);
  }
  std::vector<std::int64_t> row_at(p + 1, 0), entry_at(p + 1, 0);
  for (std::size_t q = 0; q < p; ++q) {
    row_at[q + 1] = row_at[q] + rows_to[q];
    entry_at[q + 1] = entry_at[q] + entries_to[q];
  }
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(n)), ids(static_cast<std::size_t>(n));
  std::vector<std::int64_t> cols(static_cast<std::size_t>(m.nnz()));
  std::vector<Value> values(cols.size());
  std::vector<std::pair<std::int64_t, Value>> row;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto q = static_cast<std::size_t>(part[i]);
    const std::int64_t r = row_at[q]++;
    lengths[r] = m.row_length(i);
    ids[r] = in.original_rows.empty() ? begin + i : in.original_rows[static_cast<std::size_t>(i)];
    row.clear();
    for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) row.emplace_back(renumber(m.col_idx[k]), m.values[k]);
    std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [col, value] : row) {
      cols[static_cast<std::size_t>(entry_at[q])] = col;
      values[static_cast<std::size_t>(entry_at[q]++)] = value;
    }
  }
  const auto got_lengths = alltoallv_in_rounds<std::int64_t>(c, lengths, rows_to);
  out.original_rows = alltoallv_in_rounds<std::int64_t>(c, ids, rows_to);
  auto& b = out.matrix;
  b.rows = out.rows.count(rank);
  b.cols = out.global_cols;
  b.row_ptr.assign(static_cast<std::size_t>(b.rows) + 1, 0);
  for (std::size_t r = 0; r < got_lengths.size(); ++r) b.row_ptr[r + 1] = b.row_ptr[r] + got_lengths[r];
  b.col_idx = alltoallv_in_rounds<std::int64_t>(c, cols, entries_to);
  cols = {};
  b.values = alltoallv_in_rounds<Value>(c, values, entries_to);
  out.edge_cut = edge_cut(comm, out);
  return out;
}

}  // namespace

template <class Value>
LocalRows<Value> move_to_parts(const Communicator& comm, const LocalRows<Value>& in,
                               std::span<const std::int32_t> part) {
  const int rank = comm.rank(), ranks = comm.size();
  const MPI_Comm c = comm.get();
  const auto& m = in.matrix;
  const std::int64_t n = m.rows, begin = in.rows.begin(rank);
  const auto p = static_cast<std::size_t>(ranks);
  // New ids: part q's rows on ranks before this one come first in its block, then this rank's in order.
  std::vector<std::int64_t> mine(p, 0), before(p, 0), total(p, 0);
  for (std::int64_t i = 0; i < n; ++i) ++mine[static_cast<std::size_t>(part[i])];
  check_mpi(MPI_Exscan(mine.data(), before.data(), ranks, MPI_INT64_T, MPI_SUM, c), "MPI_Exscan");
  if (rank == 0) std::fill(before.begin(), before.end(), 0);  // MPI_Exscan leaves rank 0's result undefined
  check_mpi(MPI_Allreduce(mine.data(), total.data(), ranks, MPI_INT64_T, MPI_SUM, c), "MPI_Allreduce");
  LocalRows<Value> out = shaped(in, total);
  std::vector<std::int64_t> new_id(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto q = static_cast<std::size_t>(part[i]);
    new_id[i] = out.rows.offsets[q] + before[q]++;
  }
  // The columns other ranks own, sorted, each once: their new ids are asked of their owners.
  std::vector<std::int64_t> remote;
  for (const std::int64_t j : m.col_idx)
    if (j < begin || j >= begin + n) remote.push_back(j);
  std::sort(remote.begin(), remote.end());
  remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
  const auto new_of_remote = ask_owners(comm, in.rows, remote, new_id);
  return move_rows(comm, in, part, std::move(out), [&](std::int64_t j) {
    if (j >= begin && j < begin + n) return new_id[static_cast<std::size_t>(j - begin)];
    return new_of_remote[static_cast<std::size_t>(std::lower_bound(remote.begin(), remote.end(), j) - remote.begin())];
  });
}

template <class Value>
LocalRows<Value> move_to_parts_global(const Communicator& comm, const LocalRows<Value>& in,
                                      std::vector<std::int32_t> global_part) {
  const std::int64_t begin = in.rows.begin(comm.rank()), n = in.matrix.rows;
  if (static_cast<std::int64_t>(global_part.size()) != in.global_rows)  // the same on every rank
    throw Error("move_to_parts_global: " + std::to_string(global_part.size()) + " parts for " +
                std::to_string(in.global_rows) + " rows");
  std::vector<std::int64_t> total(static_cast<std::size_t>(comm.size()), 0);
  for (const std::int32_t q : global_part) ++total[static_cast<std::size_t>(q)];
  LocalRows<Value> out = shaped(in, total);
  // Every row's new id in one pass over the global assignment in input order (the ranks' blocks in rank
  // order are the global rows in order): nothing to ask the owners, and a column's new id is one load
  // instead of a binary search among the remote columns (~25 cache-missing steps an entry at R-MAT
  // scale 26).
  std::vector<std::int64_t> new_id(global_part.size());
  std::vector<std::int64_t> next(out.rows.offsets.begin(), out.rows.offsets.end() - 1);
  for (std::size_t j = 0; j < global_part.size(); ++j) new_id[j] = next[static_cast<std::size_t>(global_part[j])]++;
  const std::vector<std::int32_t> part(global_part.begin() + begin, global_part.begin() + begin + n);
  global_part = {};
  return move_rows(comm, in, part, std::move(out), [&](std::int64_t j) { return new_id[static_cast<std::size_t>(j)]; });
}

#define SPMV_INSTANTIATE(V)                                                                                      \
  template void check_partition_input<V>(const Communicator&, const LocalRows<V>&, const std::string&);         \
  template LocalRows<V> move_to_parts<V>(const Communicator&, const LocalRows<V>&, std::span<const std::int32_t>); \
  template LocalRows<V> move_to_parts_global<V>(const Communicator&, const LocalRows<V>&, std::vector<std::int32_t>);
SPMV_INSTANTIATE(float)
SPMV_INSTANTIATE(double)
#undef SPMV_INSTANTIATE

}  // namespace detail

template <class Value>
std::vector<std::int64_t> gather_permutation(const Communicator& comm, const LocalRows<Value>& rows, int root) {
  using detail::check_mpi;
  const int rank = comm.rank();
  int distributed = !rows.original_rows.empty();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &distributed, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  detail::collectively(comm, [&] {
    if (root < 0 || root >= comm.size()) throw InvalidArgument("gather_permutation: no rank " + std::to_string(root));
    if (distributed && (rows.rows.ranks() != comm.size() ||
                        static_cast<std::int64_t>(rows.original_rows.size()) != rows.rows.count(rank)))
      throw InvalidArgument("gather_permutation: this rank's original_rows do not match its rows");
  });
  if (!distributed) return rank == root ? rows.permutation : std::vector<std::int64_t>{};
  if (rank != root) {
    detail::send_all<std::int64_t>(rows.original_rows, root, detail::kTagPermutation, comm.get());
    return {};
  }
  std::vector<std::int64_t> whole(static_cast<std::size_t>(rows.rows.size()));
  for (int r = 0; r < comm.size(); ++r) {
    const std::span<std::int64_t> part(whole.data() + rows.rows.begin(r), static_cast<std::size_t>(rows.rows.count(r)));
    if (r == root) std::copy(rows.original_rows.begin(), rows.original_rows.end(), part.begin());
    else detail::recv_all<std::int64_t>(part, r, detail::kTagPermutation, comm.get());
  }
  return whole;
}

template std::vector<std::int64_t> gather_permutation<float>(const Communicator&, const LocalRows<float>&, int);
template std::vector<std::int64_t> gather_permutation<double>(const Communicator&, const LocalRows<double>&, int);

}  // namespace spmv::dist
