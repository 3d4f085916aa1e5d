// gtest main for the MPI tests: MPI is initialized around the whole run, rank 0 prints the usual
// report, the other ranks print only their failures (prefixed with the rank), and every rank's exit
// code counts (mpirun fails when one rank does).
#include <gtest/gtest.h>

#include <cstdio>

#include "spmv/distributed.hpp"

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  spmv::dist::Environment mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const spmv::dist::Communicator world;
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(world.rank()));
  }
  return RUN_ALL_TESTS();
}
