#pragma once
// Helpers of the graph partition tests (graph_partition_test.cpp, parallel_graph_partition_test.cpp):
// matrices numbered at random, and the distributed product seen in the ORIGINAL numbering.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "common/differential.hpp"
#include "distributed/mpi_util.hpp"
#include "distributed/whole_vector_operator.hpp"
#include "spmv/distributed.hpp"
#include "spmv/reorder.hpp"

namespace spmv::test {

// The x entries every rank receives per product (DistributedMatrixInfo::halo_entries), summed over the
// ranks: what a partition is judged by.
inline std::int64_t summed_halo(const dist::Communicator& comm, const dist::LocalRows<double>& rows) {
  const dist::DistributedMatrix<double, std::int32_t> m(comm, rows, Operation::NonTranspose);
  std::int64_t halo = m.info().halo_entries;
  MPI_Allreduce(MPI_IN_PLACE, &halo, 1, MPI_INT64_T, MPI_SUM, comm.get());
  return halo;
}

// A random symmetric relabelling (Fisher-Yates on SplitMix64: the same on every rank and platform):
// a mesh whose vertex numbers say nothing about where the vertices are.
inline CsrMatrix<double, std::int64_t> scrambled(const CsrMatrix<double, std::int64_t>& a, std::uint64_t seed) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(a.rows));
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return permute_symmetric(a, order);
}

// The whole vectors in the ORIGINAL numbering: the root moves them to the distributed numbering through
// `permutation` (the root's; empty elsewhere) and scatters them, the ranks apply, the root gathers y and
// moves it back, and every rank gets the whole y, as the CLI does.
template <class Value, class Index>
class OriginalOrderOperator : public WholeVectorOperator<Value, Index> {
 public:
  OriginalOrderOperator(const dist::Communicator& comm, std::vector<std::int64_t> permutation,
                        dist::DistributedMatrix<Value, Index>& m)
      : WholeVectorOperator<Value, Index>(comm, m), permutation_(std::move(permutation)) {}

  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    const dist::Communicator& comm = this->comm_;
    auto& m = this->m_;
    const bool root = comm.rank() == 0;
    const auto xw = root ? dist::to_distributed_order<Value>(permutation_, x) : std::vector<Value>{};
    const auto yw = root ? dist::to_distributed_order<Value>(permutation_, y) : std::vector<Value>{};
    const auto xp = dist::scatter<Value>(comm, m.x_partition(), xw);
    auto yp = dist::scatter<Value>(comm, m.y_partition(), yw);
    m.apply(alpha, xp, beta, yp);
    auto whole = dist::gather<Value>(comm, m.y_partition(), yp);
    if (root) whole = dist::to_original_order<Value>(permutation_, whole);
    whole.resize(y.size());
    MPI_Bcast(whole.data(), static_cast<int>(whole.size()), dist::detail::mpi_type<Value>(), 0, comm.get());
    std::copy(whole.begin(), whole.end(), y.begin());
  }

 private:
  std::vector<std::int64_t> permutation_;
};

}  // namespace spmv::test
