#pragma once
// Private helpers of the MPI layer: datatypes of the value and index types, error checks, and messages
// longer than MPI's int counts allow (sent in pieces).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

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

}  // namespace spmv::dist::detail
