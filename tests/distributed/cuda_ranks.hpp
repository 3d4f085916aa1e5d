#pragma once
// Whether every rank can run the distributed CUDA backend (NCCL built in and a GPU visible): the
// CUDA tests skip together, since a test skipped on one rank only would leave the others waiting.
#include <mpi.h>

#if SPMV_HAS_NCCL
#include <cuda_runtime_api.h>
#endif

#include "spmv/distributed.hpp"

namespace spmv::test {

inline bool cuda_on_every_rank(const dist::Communicator& comm) {
  int ok = 0;
#if SPMV_HAS_NCCL
  int devices = 0;
  ok = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  cudaGetLastError();
#endif
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm.get());
  return ok != 0;
}

}  // namespace spmv::test
