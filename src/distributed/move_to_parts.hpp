#pragma once
// Private: what the partitions computed from distributed rows share once every row knows its part
// (PartitionKind::ParallelGraph, parallel_graph_partition.cpp; PartitionKind::Streaming,
// streaming_partition.cpp): the checks of their input, and the rows renumbered and moved so that part p's
// rows are rank p's contiguous block of P A P^T. Depends on no partitioning library.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spmv/distributed.hpp"

namespace spmv::dist::detail {

// Not collective (call it inside collectively()): throws InvalidArgument, its message prefixed by
// `who`, unless `in` holds a square matrix's rows that match their partition on this communicator, not
// renumbered by the root's graph partition (LocalRows::permutation), with original_rows empty or one
// per row.
template <class Value>
void check_partition_input(const Communicator& comm, const LocalRows<Value>& in, const std::string& who);

// Collective. part[i], in [0, ranks), is the part of this rank's row i (in.matrix.rows entries). Rank p
// receives part p's rows:
//   - new ids: part p's rows get the block [offsets[p], offsets[p + 1]) in their input order (the parts'
//     rows on the ranks before this one first), so each rank's new ids follow from an exclusive scan of
//     the per-part counts; the new ids of the columns another rank owns are asked of it (one request and
//     one answer, MPI_Alltoallv);
//   - each rank renumbers its rows' columns, sorts them stably (permute_symmetric's rows) and sends every
//     row to its part's rank; what a rank receives comes in sender order, each sender's rows in order:
//     its part, in input order.
// The result has original_rows (composed with the input's, when it had some) and edge_cut: the edges of
// the graph of A + A^T without self loops that join two parts, counted from the moved rows (edge_cut's
// comment there). partition_ms is left 0 for the caller, who times its own step too.
template <class Value>
LocalRows<Value> move_to_parts(const Communicator& comm, const LocalRows<Value>& in,
                               std::span<const std::int32_t> part);

// move_to_parts where every rank holds every row's part (global_part[j] for global row j, global_rows
// entries, the same on every rank: the streaming partition's assignment): the same result, the new ids
// computed on each rank from it (8 B a global row while the rows move) instead of asked of the owners.
// Frees global_part before the rows move.
template <class Value>
LocalRows<Value> move_to_parts_global(const Communicator& comm, const LocalRows<Value>& in,
                                      std::vector<std::int32_t> global_part);

}  // namespace spmv::dist::detail
