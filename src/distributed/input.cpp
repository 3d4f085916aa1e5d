// Getting each rank its rows: scattered from the root (a matrix the root holds), or generated on every
// rank directly where the generator builds row ranges. Files: read_matrix_market.cpp.
#include <cstdio>
#include <utility>

#include "core/debug_log.hpp"
#include "distributed/collective.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"
#include "spmv/reorder.hpp"

namespace spmv::dist {
namespace {

constexpr int kTagRows = 11;

// Rows [begin, end) of `whole`, row pointers rebased to 0.
template <class Value>
CsrMatrix<Value, std::int64_t> row_slice(const CsrMatrix<Value, std::int64_t>& whole, std::int64_t begin,
                                         std::int64_t end) {
  CsrMatrix<Value, std::int64_t> s;
  s.rows = end - begin;
  s.cols = whole.cols;
  const std::int64_t first = whole.row_ptr[begin], last = whole.row_ptr[end];
  s.row_ptr.resize(static_cast<std::size_t>(end - begin) + 1);
  for (std::int64_t r = begin; r <= end; ++r) s.row_ptr[r - begin] = whole.row_ptr[r] - first;
  s.col_idx.assign(whole.col_idx.begin() + first, whole.col_idx.begin() + last);
  s.values.assign(whole.values.begin() + first, whole.values.begin() + last);
  return s;
}

}  // namespace

template <class Value>
LocalRows<Value> scatter_rows(const Communicator& comm, const CsrMatrix<Value, std::int64_t>& whole,
                              const RowPartition& rows, const RowPartition& cols, int root) {
  const MPI_Comm c = comm.get();
  const int rank = comm.rank(), size = comm.size();
  LocalRows<Value> out;
  detail::collectively(comm, [&] {
    if (rank == root) validate(whole);
    if (rows.ranks() != size || cols.ranks() != size)
      throw InvalidArgument("scatter_rows: partitions of " + std::to_string(rows.ranks()) + " / " +
                            std::to_string(cols.ranks()) + " ranks on a communicator of " + std::to_string(size));
    if (rank == root && (rows.size() != whole.rows || cols.size() != whole.cols))
      throw InvalidArgument("scatter_rows: the partitions cover " + std::to_string(rows.size()) + " x " +
                            std::to_string(cols.size()) + ", the matrix is " + std::to_string(whole.rows) + " x " +
                            std::to_string(whole.cols));
  });
  std::int64_t sizes[2] = {whole.rows, whole.cols};
  detail::check_mpi(MPI_Bcast(sizes, 2, MPI_INT64_T, root, c), "MPI_Bcast");
  out.global_rows = sizes[0];
  out.global_cols = sizes[1];
  out.rows = rows;
  out.cols = cols;
  // Each rank gets a header (its rows, nonzeros) first and sizes its buffers from it, so that a rank
  // whose partition differs from the root's fails the check below instead of truncating a message.
  if (rank == root) {
    for (int r = 0; r < size; ++r) {
      const std::int64_t begin = rows.begin(r), end = rows.end(r);
      if (r == root) {
        out.matrix = row_slice(whole, begin, end);
        continue;
      }
      const std::int64_t first = whole.row_ptr[begin], nnz = whole.row_ptr[end] - first;
      const std::int64_t header[2] = {end - begin, nnz};
      detail::send_all<std::int64_t>(header, r, kTagRows, c);
      std::vector<std::int64_t> ptr(static_cast<std::size_t>(end - begin) + 1);
      for (std::int64_t i = begin; i <= end; ++i) ptr[i - begin] = whole.row_ptr[i] - first;
      detail::send_all<std::int64_t>(ptr, r, kTagRows, c);
      detail::send_all<std::int64_t>({whole.col_idx.data() + first, static_cast<std::size_t>(nnz)}, r, kTagRows, c);
      detail::send_all<Value>({whole.values.data() + first, static_cast<std::size_t>(nnz)}, r, kTagRows, c);
    }
  } else {
    std::int64_t header[2] = {0, 0};
    detail::recv_all<std::int64_t>(header, root, kTagRows, c);
    auto& m = out.matrix;
    m.rows = header[0];
    m.cols = out.global_cols;
    m.row_ptr.resize(static_cast<std::size_t>(header[0]) + 1);
    m.col_idx.resize(static_cast<std::size_t>(header[1]));
    m.values.resize(static_cast<std::size_t>(header[1]));
    detail::recv_all<std::int64_t>(m.row_ptr, root, kTagRows, c);
    detail::recv_all<std::int64_t>(m.col_idx, root, kTagRows, c);
    detail::recv_all<Value>(m.values, root, kTagRows, c);
  }
  detail::collectively(comm, [&] {
    if (out.matrix.rows != rows.count(rank))
      throw InvalidArgument("scatter_rows: the root sent " + std::to_string(out.matrix.rows) +
                            " rows, this rank's partition gives it " + std::to_string(rows.count(rank)));
  });
  return out;
}

template <class Value>
LocalRows<Value> scatter_rows(const Communicator& comm, const CsrMatrix<Value, std::int64_t>& whole,
                              PartitionKind kind, int root) {
  // The root partitions and broadcasts; the matrix's shape travels with the partition. The graph
  // partition scatters P A P^T instead of A, its parts as the contiguous blocks; the parallel and the
  // streaming ones partition the nonzero partition's rows across the ranks.
  if (kind == PartitionKind::ParallelGraph)
    return partition_graph_parallel(comm, scatter_rows(comm, whole, PartitionKind::Nonzeros, root));
  if (kind == PartitionKind::Streaming)
    return partition_streaming(comm, scatter_rows(comm, whole, PartitionKind::Nonzeros, root));
  RowPartition rows;
  GraphPartition graph;
  CsrMatrix<Value, std::int64_t> permuted;
  std::int64_t sizes[2] = {whole.rows, whole.cols};
  detail::collectively(comm, [&] {
    if (root < 0 || root >= comm.size()) throw InvalidArgument("scatter_rows: no rank " + std::to_string(root));
    if (comm.rank() != root) return;
    validate(whole);
    if (kind == PartitionKind::Graph) {
      graph = partition_graph(whole, comm.size());
      permuted = permute_symmetric(whole, graph.permutation);
      rows = graph.parts;
    } else {
      rows = kind == PartitionKind::Nonzeros ? partition_nonzeros(whole.row_ptr, comm.size())
                                             : partition_rows(whole.rows, comm.size());
    }
  });
  detail::check_mpi(MPI_Bcast(sizes, 2, MPI_INT64_T, root, comm.get()), "MPI_Bcast");
  rows.offsets.resize(static_cast<std::size_t>(comm.size()) + 1);
  detail::check_mpi(MPI_Bcast(rows.offsets.data(), comm.size() + 1, MPI_INT64_T, root, comm.get()), "MPI_Bcast");
  auto out = scatter_rows(comm, kind == PartitionKind::Graph ? permuted : whole, rows,
                          default_column_partition(sizes[0], sizes[1], rows), root);
  out.permutation = std::move(graph.permutation);
  if (kind == PartitionKind::Graph && comm.rank() == root) {
    out.edge_cut = graph.edge_cut;
    out.partition_ms = graph.ms;
  }
  return out;
}

template <class Value>
CsrMatrix<Value, std::int64_t> gather_rows(const Communicator& comm, const LocalRows<Value>& rows, int root) {
  const MPI_Comm c = comm.get();
  CsrMatrix<Value, std::int64_t> whole;
  detail::collectively(comm, [&] {
    if (rows.rows.ranks() != comm.size() || rows.matrix.rows != rows.rows.count(comm.rank()))
      throw InvalidArgument("gather_rows: this rank's rows do not match the partition");
  });
  const auto& m = rows.matrix;
  if (comm.rank() != root) {
    const std::int64_t nnz = m.nnz();
    detail::send_all<std::int64_t>({&nnz, 1}, root, kTagRows, c);
    detail::send_all<std::int64_t>(m.row_ptr, root, kTagRows, c);
    detail::send_all<std::int64_t>(m.col_idx, root, kTagRows, c);
    detail::send_all<Value>(m.values, root, kTagRows, c);
    return whole;
  }
  whole.rows = rows.global_rows;
  whole.cols = rows.global_cols;
  whole.row_ptr.assign(1, 0);
  for (int r = 0; r < comm.size(); ++r) {
    CsrMatrix<Value, std::int64_t> part;
    if (r != root) {
      std::int64_t nnz = 0;
      detail::recv_all<std::int64_t>({&nnz, 1}, r, kTagRows, c);
      part.row_ptr.resize(static_cast<std::size_t>(rows.rows.count(r)) + 1);
      part.col_idx.resize(static_cast<std::size_t>(nnz));
      part.values.resize(static_cast<std::size_t>(nnz));
      detail::recv_all<std::int64_t>(part.row_ptr, r, kTagRows, c);
      detail::recv_all<std::int64_t>(part.col_idx, r, kTagRows, c);
      detail::recv_all<Value>(part.values, r, kTagRows, c);
    }
    const auto& p = r == root ? m : part;
    const std::int64_t base = whole.row_ptr.back();
    for (std::size_t i = 1; i < p.row_ptr.size(); ++i) whole.row_ptr.push_back(base + p.row_ptr[i]);
    whole.col_idx.insert(whole.col_idx.end(), p.col_idx.begin(), p.col_idx.end());
    whole.values.insert(whole.values.end(), p.values.begin(), p.values.end());
  }
  return whole;
}

template <class Value>
LocalRows<Value> generate(const Communicator& comm, std::string_view kind, const std::map<std::string, double>& params,
                          PartitionKind partition, const gen::GenerateOptions& options) {
  // The parallel graph and streaming partitions start from the nonzero partition's rows, generated where
  // they are.
  if (partition == PartitionKind::ParallelGraph)
    return partition_graph_parallel(comm, generate<Value>(comm, kind, params, PartitionKind::Nonzeros, options));
  if (partition == PartitionKind::Streaming)
    return partition_streaming(comm, generate<Value>(comm, kind, params, PartitionKind::Nonzeros, options));
  if (!gen::supports_row_ranges(kind) || partition == PartitionKind::Graph) {
    if (spmv::detail::debug_log_enabled() && comm.rank() == 0)
      std::fprintf(stderr, "[spmv] generator %.*s: rank 0 generates it whole and scatters (%s)\n",
                   static_cast<int>(kind.size()), kind.data(),
                   partition == PartitionKind::Graph ? "the graph partition needs the whole graph" : "no row-range path");
    CsrMatrix<Value, std::int64_t> whole;
    detail::collectively(comm, [&] {
      if (comm.rank() == 0) whole = gen::generate<Value, std::int64_t>(kind, params, options);
    });
    return scatter_rows(comm, whole, partition, 0);
  }
  LocalRows<Value> out;
  const int rank = comm.rank();
  detail::collectively(comm, [&] {
    const auto bound = gen::size_bound(kind, params).value();
    out.global_rows = bound.rows;
    out.global_cols = bound.cols;
  });
  out.rows = partition_rows(out.global_rows, comm.size());
  if (partition == PartitionKind::Nonzeros) {
    std::vector<std::int64_t> lengths;
    detail::collectively(comm, [&] { lengths = gen::row_lengths(kind, params, out.rows.begin(rank), out.rows.end(rank)); });
    out.rows = partition_nonzeros(comm, out.rows, lengths);
  }
  out.cols = default_column_partition(out.global_rows, out.global_cols, out.rows);
  detail::collectively(comm, [&] {
    out.matrix = gen::generate_rows<Value, std::int64_t>(kind, params, out.rows.begin(rank), out.rows.end(rank), options);
  });
  return out;
}

#define SPMV_INSTANTIATE(V)                                                                                        \
  template LocalRows<V> scatter_rows<V>(const Communicator&, const CsrMatrix<V, std::int64_t>&, const RowPartition&, \
                                        const RowPartition&, int);                                                 \
  template LocalRows<V> scatter_rows<V>(const Communicator&, const CsrMatrix<V, std::int64_t>&, PartitionKind, int); \
  template CsrMatrix<V, std::int64_t> gather_rows<V>(const Communicator&, const LocalRows<V>&, int);            \
  template LocalRows<V> generate<V>(const Communicator&, std::string_view, const std::map<std::string, double>&,    \
                                    PartitionKind, const gen::GenerateOptions&);
SPMV_INSTANTIATE(float)
SPMV_INSTANTIATE(double)
#undef SPMV_INSTANTIATE

}  // namespace spmv::dist
