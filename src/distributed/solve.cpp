// Distributed Krylov solves: spmv::solve (src/solvers) over this rank's rows, with the distributed
// matrix as its operator and SolverOptions::global_sum summing every reduction over the ranks. The
// solvers take their decisions (stop, breakdown, restart) from those global scalars, so every rank
// runs the same number of iterations and products, which keeps the halo exchanges matched. A matrix on
// the CUDA backend solves on its GPUs (detail::solve_on_device, cuda/device_solve.cu).
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "cpu/instantiate.hpp"
#include "distributed/collective.hpp"
#include "distributed/device_part.hpp"
#include "distributed/mpi_util.hpp"
#include "solvers/cpu_vector_ops.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

namespace spmv::dist {
namespace {

// This rank's part of op(A) as a LinearOperator: x and y are the rank's parts.
template <class Value, class Index>
class LocalPart final : public LinearOperator<Value> {
 public:
  LocalPart(DistributedMatrix<Value, Index>& a, int rank) : a_(a), rank_(rank) {}
  std::int64_t rows() const override { return a_.y_partition().count(rank_); }
  std::int64_t cols() const override { return a_.x_partition().count(rank_); }
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override {
    a_.apply(alpha, x, beta, y);
  }

 private:
  DistributedMatrix<Value, Index>& a_;
  int rank_;
};

}  // namespace

template <class Value>
std::vector<Value> local_diagonal(const Communicator& comm, const LocalRows<Value>& rows) {
  const auto& m = rows.matrix;
  const std::int64_t first = rows.rows.begin(comm.rank());
  std::vector<Value> d(static_cast<std::size_t>(m.rows), Value(0));
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k)
      if (m.col_idx[k] == first + i) d[static_cast<std::size_t>(i)] += m.values[k];  // duplicates add, as in a product
  return d;
}

template <class Value, class Index>
SolverResult solve(const Communicator& comm, DistributedMatrix<Value, Index>& a, std::span<const Value> b,
                   std::span<Value> x, const SolverOptions& options, std::span<const Value> diagonal) {
  const int rank = comm.rank();
  const std::string method(to_string(options.method));
  // Every check that could fail on some ranks only runs collectively, so that a bad part is an error on
  // every rank instead of a rank waiting in an all-reduce that the failed one never joins.
  detail::collectively(comm, [&] {
    const RowPartition& xp = a.x_partition();
    const RowPartition& yp = a.y_partition();
    if (xp.offsets != yp.offsets)
      throw InvalidArgument(method + ": a distributed solve needs a square matrix whose x and y are split alike "
                                     "(the default column partition); this one's differ");
    const auto here = [&](std::int64_t i) { return "global row " + std::to_string(yp.begin(rank) + i); };
    if (static_cast<std::int64_t>(b.size()) != yp.count(rank) || static_cast<std::int64_t>(x.size()) != yp.count(rank))
      throw InvalidArgument(method + ": this rank owns " + std::to_string(yp.count(rank)) + " rows; b has " +
                            std::to_string(b.size()) + " entries and x " + std::to_string(x.size()));
    if (const auto i = solvers::cpu::first_non_finite(b); i >= 0) throw InvalidArgument(method + ": b holds NaN or Inf at " + here(i));
    if (const auto i = solvers::cpu::first_non_finite<Value>(x); i >= 0)
      throw InvalidArgument(method + ": the initial guess x0 holds NaN or Inf at " + here(i));
    if (options.preconditioner == Preconditioner::Jacobi) {
      if (diagonal.size() != b.size())
        throw InvalidArgument(method + ": the Jacobi preconditioner needs this rank's diagonal (local_diagonal), " +
                              std::to_string(b.size()) + " entries; got " + std::to_string(diagonal.size()));
      for (std::size_t i = 0; i < diagonal.size(); ++i)
        if (diagonal[i] == Value(0) || !std::isfinite(diagonal[i]))
          throw InvalidArgument(method + ": the Jacobi preconditioner needs a nonzero finite diagonal; " +
                                here(static_cast<std::int64_t>(i)) + " has " +
                                (diagonal[i] == Value(0) ? std::string("0") : std::string("NaN or Inf")));
    }
  });
  SolverOptions distributed = options;
  distributed.global_sum = [&comm](std::span<double> partial) {
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, partial.data(), static_cast<int>(partial.size()), MPI_DOUBLE,
                                    MPI_SUM, comm.get()),
                      "MPI_Allreduce");
  };
  // The same sum started without waiting; the caller keeps `partial` alive until it calls the wait.
  distributed.global_sum_start = [&comm](std::span<double> partial) -> std::function<void()> {
    auto request = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
    detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, partial.data(), static_cast<int>(partial.size()), MPI_DOUBLE,
                                     MPI_SUM, comm.get(), request.get()),
                      "MPI_Iallreduce");
    return [request] { detail::check_mpi(MPI_Wait(request.get(), MPI_STATUS_IGNORE), "MPI_Wait"); };
  };
  if (a.backend() == Backend::Cuda) return detail::solve_on_device(a, rank, b, x, options, diagonal);
  LocalPart<Value, Index> part(a, rank);
  return spmv::solve<Value>(part, b, x, distributed, diagonal);
}

template std::vector<float> local_diagonal(const Communicator&, const LocalRows<float>&);
template std::vector<double> local_diagonal(const Communicator&, const LocalRows<double>&);

#define SPMV_INSTANTIATE(V, I)                                                                                  \
  template SolverResult solve(const Communicator&, DistributedMatrix<V, I>&, std::span<const V>, std::span<V>, \
                              const SolverOptions&, std::span<const V>);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::dist
