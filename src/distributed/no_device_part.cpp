// The CUDA backend of the distributed matrix in a build without NCCL: refused on every rank.
#include "cpu/instantiate.hpp"
#include "distributed/collective.hpp"
#include "distributed/device_part.hpp"

namespace spmv::dist::detail {

template <class Value, class Index>
std::unique_ptr<DevicePart<Value, Index>> make_device_part(MPI_Comm, MPI_Comm comm, Blocks<Value, Index>&,
                                                           const HaloPlan&, Operation, const DistributedOptions&) {
  collectively(Communicator(comm), [] {
    throw Unsupported("DistributedMatrix: this build has no CUDA backend for distributed matrices (it needs "
                      "the CUDA toolkit and NCCL; configure with -DSPMV_WITH_NCCL=ON); use Backend::Cpu");
  });
  return nullptr;
}

SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE_MAKE_DEVICE_PART)

// Unreachable: no matrix is on the CUDA backend in this build.
template <class Value, class Index>
SolverResult solve_on_device(DistributedMatrix<Value, Index>&, int, std::span<const Value>, std::span<Value>,
                             const SolverOptions&, std::span<const Value>) {
  throw Unsupported("dist::solve: this build has no CUDA backend for distributed matrices");
}

SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE_SOLVE_ON_DEVICE)

}  // namespace spmv::dist::detail
