#pragma once
// Private helpers of the MPI layer: datatypes of the value and index types, error checks, and messages
// longer than MPI's int counts allow (sent in pieces).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "spmv/error.hpp"

namespace spmv::dist::detail {

template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else static_assert(sizeof(T) == 0, "no MPI datatype for this type");
}

// MPI's default error handler aborts the job; the communicators we create return codes instead
// (MPI_ERRORS_RETURN), turned into an spmv::Error naming the call.
inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

// This rank's place among the ranks of its node (shared memory): picks a rank's GPU and its cores.
// Collective over comm.
inline int node_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

// Elements per piece of a long message: MPI 3 counts are int.
inline constexpr std::int64_t kMaxMessage = std::int64_t{1} << 30;

// Blocking send / receive of a span of any length, in pieces of kMaxMessage. The receiver knows the
// length (sent before).
template <class T>
void send_all(std::span<const T> data, int dest, int tag, MPI_Comm comm) {
  for (std::size_t at = 0; at < data.size(); at += kMaxMessage) {
    const auto n = static_cast<int>(std::min<std::size_t>(kMaxMessage, data.size() - at));
    check_mpi(MPI_Send(data.data() + at, n, mpi_type<T>(), dest, tag, comm), "MPI_Send");
  }
}

template <class T>
void recv_all(std::span<T> data, int source, int tag, MPI_Comm comm) {
  for (std::size_t at = 0; at < data.size(); at += kMaxMessage) {
    const auto n = static_cast<int>(std::min<std::size_t>(kMaxMessage, data.size() - at));
    check_mpi(MPI_Recv(data.data() + at, n, mpi_type<T>(), source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  }
}

// Counts of one exchange message: a halo of more than 2^31 - 1 entries from one neighbour is refused.
inline int message_count(std::int64_t n, const char* what) {
  if (n > INT_MAX)
    throw Unsupported(std::string(what) + " of " + std::to_string(n) +
                      " entries to one neighbour exceeds MPI's int count; use more ranks");
  return static_cast<int>(n);
}

// Bytes one rank sends per round of alltoallv_in_rounds by default: a large round costs nothing more
// than its staging copies; 2^28 keeps them at 256 MB each and every count and displacement (in bytes)
// below MPI's INT_MAX.
inline constexpr std::int64_t kAlltoallRoundBytes = std::int64_t{1} << 28;

// MPI_Alltoallv of any lengths: `send` holds, in rank order, counts[q] elements for each rank q. Returns
// what every rank sent this one, in rank order of the senders, each sender's elements in its order.
// Collective. MPI counts and displacements are int, so the elements move in rounds through staging
// buffers: each round at most round_bytes / ranks bytes (at least one element) between a pair, so no
// count or displacement passes INT_MAX for round_bytes <= 2^30; every rank runs the same number of
// rounds (the largest any pair needs, agreed on by one MPI_Allreduce); one round goes straight from
// `send` into the result where the displacements fit. What a rank sends itself is copied straight
// into the result, outside the rounds. `from`, when given, receives ranks + 1 offsets:
// sender q's elements are [from[q], from[q + 1]) of the result.
template <class T>
std::vector<T> alltoallv_in_rounds(MPI_Comm comm, std::span<const T> send, std::span<const std::int64_t> counts,
                                   std::int64_t round_bytes = kAlltoallRoundBytes,
                                   std::vector<std::int64_t>* from = nullptr) {
  static_assert(std::is_trivially_copyable_v<T>);
  int ranks = 0, rank = 0;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const auto self = static_cast<std::size_t>(rank);
  const auto p = static_cast<std::size_t>(ranks);
  std::vector<std::int64_t> recv_counts(p, 0);
  check_mpi(MPI_Alltoall(counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm), "MPI_Alltoall");
  round_bytes = std::clamp<std::int64_t>(round_bytes, 1, std::int64_t{1} << 30);
  const std::int64_t per_pair = std::max<std::int64_t>(1, round_bytes / static_cast<std::int64_t>(sizeof(T)) / ranks);
  std::vector<std::int64_t> send_at(p + 1, 0), recv_at(p + 1, 0);
  std::int64_t rounds = 0;
  for (std::size_t q = 0; q < p; ++q) {
    send_at[q + 1] = send_at[q] + counts[q];
    recv_at[q + 1] = recv_at[q] + recv_counts[q];
    if (q != self) rounds = std::max(rounds, (std::max(counts[q], recv_counts[q]) + per_pair - 1) / per_pair);
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  if (from) *from = recv_at;
  std::vector<T> received(static_cast<std::size_t>(recv_at[p]));
  if (counts[self] > 0)
    std::memcpy(received.data() + recv_at[self], send.data() + send_at[self],
                static_cast<std::size_t>(counts[self]) * sizeof(T));
  std::vector<T> send_stage, recv_stage;
  std::vector<int> send_bytes(p), send_displ(p), recv_bytes(p), recv_displ(p);
  // Elements of a round between this rank and q: the next per_pair of `total`.
  const auto piece = [per_pair](std::int64_t total, std::int64_t round) {
    return std::clamp<std::int64_t>(total - round * per_pair, 0, per_pair);
  };
  // One round whose buffers this rank can address in int byte displacements: no staging (a rank's own
  // choice: the MPI call is the same).
  constexpr auto kSize = static_cast<std::int64_t>(sizeof(T));
  if (rounds == 1 && send_at[p] * kSize <= INT_MAX && recv_at[p] * kSize <= INT_MAX) {
    for (std::size_t q = 0; q < p; ++q) {
      send_displ[q] = static_cast<int>(send_at[q] * kSize);
      send_bytes[q] = q == self ? 0 : static_cast<int>(counts[q] * kSize);
      recv_displ[q] = static_cast<int>(recv_at[q] * kSize);
      recv_bytes[q] = q == self ? 0 : static_cast<int>(recv_counts[q] * kSize);
    }
    check_mpi(MPI_Alltoallv(send.data(), send_bytes.data(), send_displ.data(), MPI_BYTE, received.data(),
                            recv_bytes.data(), recv_displ.data(), MPI_BYTE, comm),
              "MPI_Alltoallv");
    return received;
  }
  for (std::int64_t round = 0; round < rounds; ++round) {
    std::int64_t sent = 0, got = 0;
    for (std::size_t q = 0; q < p; ++q) {
      const std::int64_t s = q == self ? 0 : piece(counts[q], round);
      const std::int64_t r = q == self ? 0 : piece(recv_counts[q], round);
      send_displ[q] = static_cast<int>(sent * kSize);
      send_bytes[q] = static_cast<int>(s * kSize);
      recv_displ[q] = static_cast<int>(got * kSize);
      recv_bytes[q] = static_cast<int>(r * kSize);
      sent += s;
      got += r;
    }
    send_stage.resize(static_cast<std::size_t>(sent));
    recv_stage.resize(static_cast<std::size_t>(got));
    for (std::size_t q = 0; q < p; ++q)
      if (send_bytes[q] > 0)
        std::memcpy(send_stage.data() + send_displ[q] / sizeof(T), send.data() + send_at[q] + round * per_pair,
                    static_cast<std::size_t>(send_bytes[q]));
    check_mpi(MPI_Alltoallv(send_stage.data(), send_bytes.data(), send_displ.data(), MPI_BYTE, recv_stage.data(),
                            recv_bytes.data(), recv_displ.data(), MPI_BYTE, comm),
              "MPI_Alltoallv");
    for (std::size_t q = 0; q < p; ++q)
      if (recv_bytes[q] > 0)
        std::memcpy(received.data() + recv_at[q] + round * per_pair, recv_stage.data() + recv_displ[q] / sizeof(T),
                    static_cast<std::size_t>(recv_bytes[q]));
  }
  return received;
}

}  // namespace spmv::dist::detail
