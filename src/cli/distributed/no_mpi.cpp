// This spmv was built without MPI: --distributed is refused with the way to get it.
#include "cli_common.hpp"
#include "distributed/distributed_cli.hpp"

namespace spmv::cli {
namespace {

[[noreturn]] void refuse() {
  throw UsageError(
      "--distributed needs MPI, and this spmv was built without it: install OpenMPI (apt-get install "
      "libopenmpi-dev openmpi-bin) and reconfigure with -DSPMV_WITH_MPI=ON");
}

}  // namespace

int run_distributed_multiply(const DistributedMultiply&) { refuse(); }
int run_distributed_bench(const DistributedBench&) { refuse(); }
int run_distributed_solve(const DistributedSolve&) { refuse(); }

}  // namespace spmv::cli
