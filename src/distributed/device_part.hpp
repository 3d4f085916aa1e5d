#pragma once
// Private: this rank's part of a distributed matrix on a GPU (the CUDA backend): both blocks as device
// plans and the halo over NCCL. Declared without CUDA headers so that distributed_matrix.cpp stays
// plain C++; implemented in cuda/device_part.cu when NCCL is built in (SPMV_WITH_NCCL), refused by
// no_device_part.cpp otherwise.
#include <mpi.h>

#include <memory>
#include <span>
#include <string>

#include "distributed/block_split.hpp"
#include "distributed/halo_exchange.hpp"
#include "spmv/distributed.hpp"

namespace spmv::dist::detail {

template <class Value, class Index>
class DevicePart {
 public:
  virtual ~DevicePart() = default;
  virtual int device() const = 0;
  virtual std::string local_algorithm() const = 0;   // "csr-vector <policy>"
  virtual std::string remote_algorithm() const = 0;  // "-" without a remote block
  // Device arrays, asynchronous on `stream` (DistributedMatrix::apply's device overload).
  virtual void apply(Value alpha, const Value* x, Value beta, Value* y, CUstream_st* stream) = 0;
  // Host vectors of the right lengths: copied in and out, finished on return, steps timed into `profile`.
  virtual void apply_host(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
                          ApplyProfile& profile) = 0;
  // Sums `count` doubles of device memory across the ranks in place, enqueued on `stream`.
  virtual void all_reduce_sum(double* values, int count, CUstream_st* stream) = 0;
  // The exchange of one product alone (the device copy of the last host x), finished on return.
  virtual void exchange_only() = 0;
};

// "csr-vector <policy>" for a block's operator or plan (anything with algorithm() and policy()); "-"
// where the block has none.
template <class Block>
std::string describe(const Block* block) {
  if (!block) return "-";
  const std::string policy = block->policy();
  return std::string(to_string(block->algorithm())) + (policy.empty() ? "" : " " + policy);
}

// Collective over `comm` (the matrix's duplicate of `caller`, the communicator it was built on; every
// rank calls it, failures are agreed on, so never a hang): picks the device, uploads the blocks,
// builds their plans and the matrix's NCCL communicator (split off a parent cached on `caller`).
template <class Value, class Index>
std::unique_ptr<DevicePart<Value, Index>> make_device_part(MPI_Comm caller, MPI_Comm comm,
                                                           Blocks<Value, Index>& blocks, const HaloPlan& plan,
                                                           Operation op, const DistributedOptions& options);

// Its explicit instantiations, in whichever file defines it (cuda/device_part.cu or no_device_part.cpp).
#define SPMV_INSTANTIATE_MAKE_DEVICE_PART(V, I)                                                  \
  template std::unique_ptr<DevicePart<V, I>> make_device_part(MPI_Comm, MPI_Comm, Blocks<V, I>&, \
                                                              const HaloPlan&, Operation, const DistributedOptions&);

// dist::solve for a matrix on the CUDA backend (after its collective checks): b, x and the diagonal
// are this rank's parts on the host, uploaded once; x is downloaded at the end (cuda/device_solve.cu).
template <class Value, class Index>
SolverResult solve_on_device(DistributedMatrix<Value, Index>& a, int rank, std::span<const Value> b,
                             std::span<Value> x, const SolverOptions& options, std::span<const Value> diagonal);

#define SPMV_INSTANTIATE_SOLVE_ON_DEVICE(V, I)                                                               \
  template SolverResult solve_on_device(DistributedMatrix<V, I>&, int, std::span<const V>, std::span<V>, \
                                        const SolverOptions&, std::span<const V>);

}  // namespace spmv::dist::detail
