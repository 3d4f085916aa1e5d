// Distributed vectors: reductions over every rank's part (MPI_Allreduce of a double), and moving whole
// vectors between the root and the ranks' parts (point-to-point, in pieces for any length).
#include <cmath>

#include "distributed/collective.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"

namespace spmv::dist {
namespace {

constexpr int kTagVector = 21;

void check_part(const Communicator& comm, const RowPartition& p, std::size_t part, const char* what) {
  if (p.ranks() != comm.size() || static_cast<std::int64_t>(part) != p.count(comm.rank()))
    throw InvalidArgument(std::string(what) + ": this rank's part has " + std::to_string(part) +
                          " entries, the partition gives it " +
                          (p.ranks() == comm.size() ? std::to_string(p.count(comm.rank())) : std::string("none")));
}

}  // namespace

template <class Value>
double dot(const Communicator& comm, std::span<const Value> x, std::span<const Value> y) {
  detail::collectively(comm, [&] {
    if (x.size() != y.size()) throw InvalidArgument("dot: parts of " + std::to_string(x.size()) + " and " + std::to_string(y.size()) + " entries");
  });
  double local = 0;
  const auto n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for reduction(+ : local) schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i) local += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  double global = 0;
  detail::check_mpi(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm.get()), "MPI_Allreduce");
  return global;
}

template <class Value>
double norm2(const Communicator& comm, std::span<const Value> x) {
  return std::sqrt(dot<Value>(comm, x, x));
}

template <class Value>
void axpy(Value alpha, std::span<const Value> x, std::span<Value> y) {
  if (x.size() != y.size()) throw InvalidArgument("axpy: parts of different lengths");
  const auto n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <class Value>
std::vector<Value> gather(const Communicator& comm, const RowPartition& partition, std::span<const Value> part,
                          int root) {
  detail::collectively(comm, [&] { check_part(comm, partition, part.size(), "gather"); });
  std::vector<Value> whole;
  if (comm.rank() != root) {
    detail::send_all<Value>(part, root, kTagVector, comm.get());
    return whole;
  }
  whole.resize(static_cast<std::size_t>(partition.size()));
  for (int r = 0; r < comm.size(); ++r) {
    std::span<Value> to(whole.data() + partition.begin(r), static_cast<std::size_t>(partition.count(r)));
    if (r == root) std::copy(part.begin(), part.end(), to.begin());
    else detail::recv_all<Value>(to, r, kTagVector, comm.get());
  }
  return whole;
}

template <class Value>
std::vector<Value> scatter(const Communicator& comm, const RowPartition& partition, std::span<const Value> whole,
                           int root) {
  detail::collectively(comm, [&] {
    if (partition.ranks() != comm.size()) throw InvalidArgument("scatter: the partition is not of this communicator's size");
    if (comm.rank() == root && static_cast<std::int64_t>(whole.size()) != partition.size())
      throw InvalidArgument("scatter: the vector has " + std::to_string(whole.size()) + " entries, the partition " +
                            std::to_string(partition.size()));
  });
  std::vector<Value> part(static_cast<std::size_t>(partition.count(comm.rank())));
  if (comm.rank() != root) {
    detail::recv_all<Value>(part, root, kTagVector, comm.get());
    return part;
  }
  for (int r = 0; r < comm.size(); ++r) {
    std::span<const Value> from(whole.data() + partition.begin(r), static_cast<std::size_t>(partition.count(r)));
    if (r == root) std::copy(from.begin(), from.end(), part.begin());
    else detail::send_all<Value>(from, r, kTagVector, comm.get());
  }
  return part;
}

#define SPMV_INSTANTIATE(V)                                                                                  \
  template double dot<V>(const Communicator&, std::span<const V>, std::span<const V>);                      \
  template double norm2<V>(const Communicator&, std::span<const V>);                                        \
  template void axpy<V>(V, std::span<const V>, std::span<V>);                                               \
  template std::vector<V> gather<V>(const Communicator&, const RowPartition&, std::span<const V>, int);     \
  template std::vector<V> scatter<V>(const Communicator&, const RowPartition&, std::span<const V>, int);
SPMV_INSTANTIATE(float)
SPMV_INSTANTIATE(double)
#undef SPMV_INSTANTIATE

}  // namespace spmv::dist
