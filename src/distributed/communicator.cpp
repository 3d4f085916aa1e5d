// The communicator view, MPI's lifetime, collective error agreement and row partitions.
#include <algorithm>
#include <climits>
#include <cstdlib>

#include "distributed/collective.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"

namespace spmv::dist {

Communicator::Communicator() : Communicator(MPI_COMM_WORLD) {}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw InvalidArgument("spmv::dist::Communicator: MPI is not initialized (dist::Environment)");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Environment::Environment(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  detail::check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  owns_ = true;
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

namespace detail {

void agree_or_throw(const Communicator& comm, ErrorKind kind, const std::string& message) {
  const int mine = kind == ErrorKind::None ? INT_MAX : comm.rank();
  int first = INT_MAX;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.get()), "MPI_Allreduce");
  if (first == INT_MAX) return;
  // The lowest failing rank's kind and message, to everyone.
  std::int64_t header[2] = {static_cast<std::int64_t>(kind), static_cast<std::int64_t>(message.size())};
  check_mpi(MPI_Bcast(header, 2, MPI_INT64_T, first, comm.get()), "MPI_Bcast");
  std::string text = comm.rank() == first ? message : std::string(static_cast<std::size_t>(header[1]), ' ');
  check_mpi(MPI_Bcast(text.data(), static_cast<int>(header[1]), MPI_CHAR, first, comm.get()), "MPI_Bcast");
  text = "rank " + std::to_string(first) + ": " + text;
  switch (static_cast<ErrorKind>(header[0])) {
    case ErrorKind::InvalidArgument: throw InvalidArgument(text);
    case ErrorKind::ParseError: throw ParseError(text);
    case ErrorKind::Unsupported: throw Unsupported(text);
    case ErrorKind::MemoryLimit: throw MemoryLimitExceeded(text);
    case ErrorKind::BadAlloc: if (comm.rank() == first) throw std::bad_alloc(); throw Error(text);
    default: throw Error(text);
  }
}

}  // namespace detail

void agree(const Communicator& comm, const std::string& error) {
  detail::agree_or_throw(comm, error.empty() ? detail::ErrorKind::None : detail::ErrorKind::InvalidArgument, error);
}

int RowPartition::owner(std::int64_t index) const {
  // the last rank whose range starts at or before index (ranks with no rows share a start: skip them)
  const auto it = std::upper_bound(offsets.begin(), offsets.end() - 1, index);
  return static_cast<int>(it - offsets.begin()) - 1;
}

RowPartition partition_rows(std::int64_t rows, int ranks) {
  if (rows < 0 || ranks < 1) throw InvalidArgument("partition_rows: rows must be >= 0 and ranks >= 1");
  RowPartition p;
  p.offsets.resize(static_cast<std::size_t>(ranks) + 1);
  const std::int64_t base = rows / ranks, extra = rows % ranks;
  for (int r = 0; r < ranks; ++r) p.offsets[r + 1] = p.offsets[r] + base + (r < extra ? 1 : 0);
  return p;
}

namespace {

// floor(k * total / ranks) without overflow.
std::int64_t target(int k, std::int64_t total, int ranks) {
  return static_cast<std::int64_t>(static_cast<__int128>(k) * total / ranks);
}

}  // namespace

RowPartition partition_nonzeros(std::span<const std::int64_t> row_ptr, int ranks) {
  if (row_ptr.empty() || ranks < 1) throw InvalidArgument("partition_nonzeros: row_ptr is empty or ranks < 1");
  const auto rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  const std::int64_t total = rows + row_ptr.back();
  RowPartition p;
  p.offsets.assign(static_cast<std::size_t>(ranks) + 1, rows);
  p.offsets[0] = 0;
  // weight before row r: r + row_ptr[r], non-decreasing in r
  for (int k = 1; k < ranks; ++k) {
    const std::int64_t t = target(k, total, ranks);
    std::int64_t lo = 0, hi = rows;  // smallest r in [0, rows] with r + row_ptr[r] >= t
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (mid + row_ptr[mid] >= t) hi = mid;
      else lo = mid + 1;
    }
    p.offsets[k] = lo;
  }
  return p;
}

RowPartition partition_nonzeros(const Communicator& comm, const RowPartition& current,
                                std::span<const std::int64_t> row_lengths) {
  const int ranks = comm.size();
  detail::collectively(comm, [&] {
    if (current.ranks() != ranks ||
        static_cast<std::int64_t>(row_lengths.size()) != current.count(comm.rank()))
      throw InvalidArgument("partition_nonzeros: " + std::to_string(row_lengths.size()) +
                            " row lengths for a partition of " + std::to_string(current.ranks()) + " ranks");
  });
  const MPI_Comm c = comm.get();
  std::int64_t weight = 0;
  for (auto n : row_lengths) weight += n + 1;
  std::int64_t before = 0, total = 0;
  detail::check_mpi(MPI_Exscan(&weight, &before, 1, MPI_INT64_T, MPI_SUM, c), "MPI_Exscan");
  if (comm.rank() == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  detail::check_mpi(MPI_Allreduce(&weight, &total, 1, MPI_INT64_T, MPI_SUM, c), "MPI_Allreduce");
  // Boundary k is the smallest row r whose weight before it reaches target k; it lies on the rank
  // whose weight range (before, before + weight] holds the target (0 when the target is 0).
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(ranks) + 1, 0);
  std::int64_t row = current.begin(comm.rank()), acc = before;
  std::size_t next = 0;
  for (int k = 1; k < ranks; ++k) {
    const std::int64_t t = target(k, total, ranks);
    if (t <= before || t > before + weight) continue;
    while (acc < t) acc += row_lengths[next++] + 1, ++row;
    boundary[k] = row;
  }
  boundary[static_cast<std::size_t>(ranks)] = current.size();
  RowPartition p;
  p.offsets.resize(boundary.size());
  detail::check_mpi(MPI_Allreduce(boundary.data(), p.offsets.data(), static_cast<int>(boundary.size()),
                                  MPI_INT64_T, MPI_MAX, c),
                    "MPI_Allreduce");
  return p;
}

RowPartition default_column_partition(std::int64_t global_rows, std::int64_t global_cols, const RowPartition& rows) {
  if (global_rows == global_cols) return rows;
  return partition_rows(global_cols, rows.ranks());
}

}  // namespace spmv::dist
