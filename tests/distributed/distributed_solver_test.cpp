// Distributed Krylov solves (spmv::dist::solve) against the textbook sequential solvers of
// common/solver_problems.hpp, over the solver test grid (CG, BiCGStab, GMRES; Jacobi or none; f64 and
// f32), under mpirun -np 2 and -np 3: convergence, the same iteration count as the reference within
// the usual slack, every rank agreeing on the result, and the gathered x's true residual (recomputed
// here in double) within the bound of the one-process tests. Then a rank that owns no rows, and bad
// input on one rank only (an error on every rank, never a hang). Each runs again on the CUDA backend
// (one GPU per rank, reductions over NCCL), skipped together where a rank has no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/solver_problems.hpp"
#include "distributed/cuda_ranks.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

namespace spmv::dist {
namespace {

using test::SolverCase;
using test::SolverMatrix;

// Every rank's value of an int equals rank 0's.
bool same_on_every_rank(const Communicator& comm, int value) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&value, &lo, 1, MPI_INT, MPI_MIN, comm.get());
  MPI_Allreduce(&value, &hi, 1, MPI_INT, MPI_MAX, comm.get());
  return lo == hi;
}

template <class Value>
std::vector<Value> part_of(const std::vector<double>& whole, const RowPartition& p, int rank) {
  return std::vector<Value>(whole.begin() + p.begin(rank), whole.begin() + p.end(rank));
}

struct DistributedSolve {
  SolverResult result;
  std::vector<double> x;  // gathered: the whole solution on rank 0, empty elsewhere
};

template <class Value>
DistributedSolve solve_distributed(const Communicator& comm, const SolverMatrix& a, const std::vector<double>& b,
                                   const SolverOptions& options, const RowPartition* rows = nullptr,
                                   Backend backend = Backend::Cpu) {
  const auto whole = convert<Value, std::int64_t>(a);
  const LocalRows<Value> local = rows ? scatter_rows(comm, whole, *rows, *rows) : scatter_rows(comm, whole);
  DistributedMatrix<Value, std::int32_t> m(comm, local, Operation::NonTranspose, {backend});
  const auto bp = part_of<Value>(b, m.y_partition(), comm.rank());
  std::vector<Value> x(bp.size(), Value(0));
  const auto diagonal = local_diagonal(comm, local);
  DistributedSolve out;
  out.result = solve<Value>(comm, m, bp, x, options, diagonal);
  const auto gathered = gather<Value>(comm, m.x_partition(), x);
  out.x.assign(gathered.begin(), gathered.end());
  return out;
}

void check_convergence(const SolverCase& c, Backend backend) {
  const Communicator comm;
  const SolverMatrix a = test::solver_problem_matrix(c.matrix);
  const auto b = test::random_rhs(a.rows, 42);
  SolverOptions o;
  o.method = c.method;
  o.preconditioner = c.jacobi ? Preconditioner::Jacobi : Preconditioner::None;
  o.tolerance = c.single ? 1e-5 : 1e-10;  // as the one-process tests (tests/cpu/solvers_test.cpp)
  o.max_iterations = 2000;
  o.restart = 20;
  const DistributedSolve s = c.single ? solve_distributed<float>(comm, a, b, o, nullptr, backend)
                                      : solve_distributed<double>(comm, a, b, o, nullptr, backend);
  const SolverResult& r = s.result;

  ASSERT_TRUE(r.converged) << r.breakdown << " after " << r.iterations;
  EXPECT_LE(r.recurrence_residual, o.tolerance);
  // The scalars are global: every rank stops at the same iteration with the same residuals.
  EXPECT_TRUE(same_on_every_rank(comm, r.iterations));
  EXPECT_TRUE(same_on_every_rank(comm, static_cast<int>(r.applies)));
  const auto ref = test::reference_solve(c.method, a, b, c.jacobi, o.tolerance, o.max_iterations, o.restart);
  ASSERT_TRUE(ref.converged);
  EXPECT_NEAR(r.iterations, ref.iterations, test::iteration_slack(ref.iterations));
  if (comm.rank() != 0) return;
  // The gathered x's true residual, recomputed in double, within the one-process bound.
  const auto ax = test::reference_product(a, s.x);
  double rr = 0, xx = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) rr += (b[i] - ax[i]) * (b[i] - ax[i]), xx += s.x[i] * s.x[i];
  const double b_norm = std::sqrt(test::reference_dot(b, b));
  const double eps = c.single ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double bound =
      test::true_residual_bound(o.tolerance, eps, r.iterations, test::norm_inf_matrix(a), std::sqrt(xx), b_norm);
  EXPECT_LE(std::sqrt(rr) / b_norm, bound);
  EXPECT_NEAR(r.residual, std::sqrt(rr) / b_norm, 10 * eps * test::norm_inf_matrix(a) * std::sqrt(xx) / b_norm);
}

class DistributedSolvers : public testing::TestWithParam<SolverCase> {};

TEST_P(DistributedSolvers, ConvergeAsTheSequentialReference) { check_convergence(GetParam(), Backend::Cpu); }

INSTANTIATE_TEST_SUITE_P(Mpi, DistributedSolvers, testing::ValuesIn(test::solver_cases()), test::solver_case_name);

// The same grid on the CUDA backend: the device solvers with every reduction summed by ncclAllReduce
// (CG unfused). Skipped on every rank together where a rank has no GPU or the build has no NCCL.
class DistributedCudaSolvers : public testing::TestWithParam<SolverCase> {
 protected:
  void SetUp() override {
    if (!test::cuda_on_every_rank(Communicator())) GTEST_SKIP() << "no GPU on some rank, or no NCCL in this build";
  }
};

TEST_P(DistributedCudaSolvers, ConvergeAsTheSequentialReference) { check_convergence(GetParam(), Backend::Cuda); }

INSTANTIATE_TEST_SUITE_P(Mpi, DistributedCudaSolvers, testing::ValuesIn(test::solver_cases()),
                         test::solver_case_name);

// Pipelined CG across processes: one all-reduce per iteration (on GPUs overlapping the next product on
// a second stream), the same iteration count on every rank, within the reference's slack, with and
// without Jacobi, and a true residual within the one-process bound.
void check_pipelined(Backend backend) {
  const Communicator comm;
  const SolverMatrix a = test::solver_problem_matrix("poisson3d");
  const auto b = test::random_rhs(a.rows, 7);
  for (bool jacobi : {false, true}) {
    SCOPED_TRACE(jacobi ? "jacobi" : "none");
    SolverOptions o;
    o.tolerance = 1e-10;
    o.max_iterations = 2000;
    o.pipelined = true;
    o.preconditioner = jacobi ? Preconditioner::Jacobi : Preconditioner::None;
    const DistributedSolve s = solve_distributed<double>(comm, a, b, o, nullptr, backend);
    ASSERT_TRUE(s.result.converged) << s.result.breakdown;
    EXPECT_EQ(s.result.variant, "pipelined");
    EXPECT_TRUE(same_on_every_rank(comm, s.result.iterations));
    EXPECT_TRUE(same_on_every_rank(comm, static_cast<int>(s.result.applies)));
    const auto ref = test::reference_solve(SolverMethod::Cg, a, b, jacobi, o.tolerance, o.max_iterations, 20);
    EXPECT_NEAR(s.result.iterations, ref.iterations, test::iteration_slack(ref.iterations));
    if (comm.rank() == 0) EXPECT_LE(s.result.residual, 1e-8);  // true residual; the bound's tolerance x 100
  }
}

TEST(DistributedSolvers, PipelinedCg) { check_pipelined(Backend::Cpu); }

// CG (plain and pipelined) and BiCGStab with the iteration captured in a CUDA graph across processes: the
// halo exchange (NCCL send/recv on the matrix's stream, forked from the capturing one) and the all-reduces
// (ncclAllReduce; pipelined CG's on its second stream) are captured with the kernels, and the graph is
// launched once per iteration. It
// runs the same kernels on the same data as the solve without the graph, so it must stop at the same
// iteration (one either way allowed: the solve's own slack for a reduction summed in another order)
// with a true residual within the same bound, on every rank alike.
TEST_F(DistributedCudaSolvers, GraphCapturedIteration) {
  const Communicator comm;
  const SolverMatrix a = test::solver_problem_matrix("poisson3d");
  const auto b = test::random_rhs(a.rows, 11);
  for (const std::string variant : {"cg", "pipelined", "bicgstab"})
    for (bool jacobi : {false, true}) {
      SCOPED_TRACE(variant + (jacobi ? ", jacobi" : ""));
      SolverOptions o;
      o.tolerance = 1e-10;
      o.max_iterations = 2000;
      o.method = variant == "bicgstab" ? SolverMethod::BiCgStab : SolverMethod::Cg;
      o.pipelined = variant == "pipelined";
      o.preconditioner = jacobi ? Preconditioner::Jacobi : Preconditioner::None;
      const DistributedSolve plain = solve_distributed<double>(comm, a, b, o, nullptr, Backend::Cuda);
      o.graph = true;
      const DistributedSolve captured = solve_distributed<double>(comm, a, b, o, nullptr, Backend::Cuda);
      ASSERT_TRUE(plain.result.converged) << plain.result.breakdown;
      ASSERT_TRUE(captured.result.converged) << captured.result.breakdown;
      EXPECT_NE(captured.result.variant.find("graph"), std::string::npos) << captured.result.variant;
      EXPECT_TRUE(same_on_every_rank(comm, captured.result.iterations));
      EXPECT_TRUE(same_on_every_rank(comm, static_cast<int>(captured.result.applies)));
      EXPECT_NEAR(captured.result.iterations, plain.result.iterations, 1);
      EXPECT_EQ(captured.result.apply_share, -1.0);  // the applies are not timed inside a graph
      if (comm.rank() == 0) {
        EXPECT_LE(captured.result.residual, 1e-8);  // true residual; the bound's tolerance x 100, as above
        double diff = 0, size = 0;
        for (std::size_t i = 0; i < plain.x.size(); ++i)
          diff = std::max(diff, std::abs(captured.x[i] - plain.x[i])), size = std::max(size, std::abs(plain.x[i]));
        // each x lies within cond(A) x its true residual of the solution: the 9^3 grid's cond(A) is about
        // 40 (eigenvalues 6 -+ 6 cos(pi/10) over 6), so 1e-6 holds with room
        EXPECT_LE(diff, 1e-6 * size);
      }
    }
}

TEST_F(DistributedCudaSolvers, PipelinedCg) { check_pipelined(Backend::Cuda); }

// GMRES with a float basis (GmresBasis::Float32) across processes: the loss finish and the estimate's
// confirmation by the restart's true residual decide the same on every rank (global sums), and the
// count is within one restart of the one-process double basis's (tests/cpu/gmres_arnoldi_test.cpp).
void check_gmres_float_basis(Backend backend) {
  const Communicator comm;
  for (const char* name : {"poisson3d", "convdiff"}) {
    const SolverMatrix a = test::solver_problem_matrix(name);
    const auto b = test::random_rhs(a.rows, 13);
    SolverOptions o;
    o.method = SolverMethod::Gmres;
    o.preconditioner = Preconditioner::Jacobi;
    o.tolerance = 1e-10;
    o.max_iterations = 2000;
    o.restart = 20;
    o.gmres_basis = GmresBasis::Float32;
    const DistributedSolve s = solve_distributed<double>(comm, a, b, o, nullptr, backend);
    ASSERT_TRUE(s.result.converged) << name << " " << s.result.breakdown;
    EXPECT_TRUE(same_on_every_rank(comm, s.result.iterations)) << name;
    const auto ref = test::reference_solve(SolverMethod::Gmres, a, b, true, o.tolerance, o.max_iterations, o.restart);
    EXPECT_LE(s.result.iterations, ref.iterations + o.restart) << name;
    if (comm.rank() == 0) EXPECT_LE(s.result.residual, o.tolerance * (1 + 1e-6)) << name;  // confirmed
  }
}

TEST(DistributedSolvers, GmresFloatBasis) { check_gmres_float_basis(Backend::Cpu); }

TEST_F(DistributedCudaSolvers, GmresFloatBasis) { check_gmres_float_basis(Backend::Cuda); }

// s-step GMRES (SolverOptions::gmres_s_step = 5) across processes: every block's sums (Q^T W, the update's
// D and G, the scaling's Gram matrix) are summed over the ranks before the block's decisions, so every rank
// accepts the same columns and stops at the same step; the count is the one-process s = 1 solver's within
// (s - 1) + 5% (tests/cpu/gmres_sstep_test.cpp), and the converged residual is confirmed by the restart's.
void check_gmres_sstep(Backend backend) {
  const Communicator comm;
  for (const char* name : {"poisson3d", "convdiff"}) {
    const SolverMatrix a = test::solver_problem_matrix(name);
    const auto b = test::random_rhs(a.rows, 14);
    SolverOptions o;
    o.method = SolverMethod::Gmres;
    o.preconditioner = Preconditioner::Jacobi;
    o.tolerance = 1e-10;
    o.max_iterations = 2000;
    o.restart = 20;
    std::vector<double> x_one;
    const SolverResult one = test::solve_cpu<double>(a, b, x_one, o);
    o.gmres_s_step = 5;
    const DistributedSolve s = solve_distributed<double>(comm, a, b, o, nullptr, backend);
    ASSERT_TRUE(s.result.converged) << name << " " << s.result.breakdown << " " << s.result.variant;
    EXPECT_TRUE(same_on_every_rank(comm, s.result.iterations)) << name;
    EXPECT_LE(std::abs(s.result.iterations - one.iterations), 4 + (one.iterations + 19) / 20) << name;
    EXPECT_NE(s.result.variant.find("blocks"), std::string::npos) << s.result.variant;
    if (comm.rank() == 0) EXPECT_LE(s.result.residual, o.tolerance * (1 + 1e-6)) << name;  // confirmed
  }
}

TEST(DistributedSolvers, GmresSStep) { check_gmres_sstep(Backend::Cpu); }

TEST_F(DistributedCudaSolvers, GmresSStep) { check_gmres_sstep(Backend::Cuda); }

// Rank 0 owns no rows (its parts are empty; it still joins every exchange and all-reduce), plain and
// pipelined CG.
void check_rank_without_rows(Backend backend) {
  const Communicator comm;
  const SolverMatrix a = gen::poisson2d(24);
  const auto b = test::random_rhs(a.rows, 7);
  RowPartition p;
  p.offsets.assign(static_cast<std::size_t>(comm.size()) + 1, a.rows);
  p.offsets[0] = p.offsets[1] = 0;  // rank 0: none
  for (int r = 2; r < comm.size(); ++r) p.offsets[r] = (r - 1) * a.rows / (comm.size() - 1);
  for (bool jacobi : {false, true})
    for (bool pipelined : {false, true}) {
      SCOPED_TRACE(std::string(jacobi ? "jacobi" : "none") + (pipelined ? " pipelined" : ""));
      SolverOptions o;
      o.preconditioner = jacobi ? Preconditioner::Jacobi : Preconditioner::None;
      o.tolerance = 1e-10;
      o.max_iterations = 2000;
      o.pipelined = pipelined;
      const DistributedSolve s = solve_distributed<double>(comm, a, b, o, &p, backend);
      ASSERT_TRUE(s.result.converged) << s.result.breakdown;
      const auto ref = test::reference_cg(a, b, jacobi, o.tolerance, o.max_iterations);
      EXPECT_NEAR(s.result.iterations, ref.iterations, test::iteration_slack(ref.iterations));
      EXPECT_TRUE(same_on_every_rank(comm, s.result.iterations));
    }
}

TEST(DistributedSolvers, RankWithoutRows) { check_rank_without_rows(Backend::Cpu); }

TEST_F(DistributedCudaSolvers, RankWithoutRows) { check_rank_without_rows(Backend::Cuda); }

// Bad input on one rank only: InvalidArgument on every rank (ctest's TIMEOUT catches a hang).
void check_bad_input(Backend backend) {
  const Communicator comm;
  const auto whole = gen::poisson2d(16);
  const auto local = scatter_rows(comm, whole);
  DistributedMatrix<double, std::int32_t> m(comm, local, Operation::NonTranspose, {backend});
  const auto n = static_cast<std::size_t>(m.y_partition().count(comm.rank()));
  const int last = comm.size() - 1;
  std::vector<double> b(n, 1.0), x(n, 0.0);
  auto diagonal = local_diagonal(comm, local);
  SolverOptions o;
  o.max_iterations = 50;
  {
    auto bad = b;
    if (comm.rank() == last) bad[0] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW(solve<double>(comm, m, bad, x, o), InvalidArgument);
  }
  {
    std::vector<double> longer(n + (comm.rank() == 1 ? 1 : 0), 1.0);
    EXPECT_THROW(solve<double>(comm, m, longer, x, o), InvalidArgument);
  }
  {
    SolverOptions jacobi = o;
    jacobi.preconditioner = Preconditioner::Jacobi;
    auto zero = diagonal;
    if (comm.rank() == 0) zero[0] = 0;
    EXPECT_THROW(solve<double>(comm, m, b, x, jacobi, zero), InvalidArgument);
    EXPECT_THROW(solve<double>(comm, m, b, x, jacobi), InvalidArgument);  // no diagonal given
  }
  if (backend == Backend::Cpu) {  // graph capture is a CUDA option (GraphCapturedIteration below)
    SolverOptions graph = o;
    graph.graph = true;
    EXPECT_THROW(solve<double>(comm, m, b, x, graph), InvalidArgument);
  }
  {
    SolverOptions pipelined = o;
    pipelined.pipelined = true;
    auto bad = b;
    if (comm.rank() == last) bad[0] = std::numeric_limits<double>::infinity();
    EXPECT_THROW(solve<double>(comm, m, bad, x, pipelined), InvalidArgument);
  }
  if (backend == Backend::Cpu)  // the device all-reduce needs the CUDA backend
    EXPECT_THROW(m.all_reduce_sum(nullptr, 1, nullptr), Unsupported);
  // And a good solve still works afterwards (no exchange or reduction was left pending).
  o.tolerance = 1e-8;
  o.max_iterations = 500;
  const SolverResult r = solve<double>(comm, m, b, x, o, diagonal);
  EXPECT_TRUE(r.converged);
  EXPECT_TRUE(same_on_every_rank(comm, r.iterations));
}

TEST(DistributedSolvers, BadInputOnOneRankIsAnErrorOnEveryRank) { check_bad_input(Backend::Cpu); }

TEST_F(DistributedCudaSolvers, BadInputOnOneRankIsAnErrorOnEveryRank) { check_bad_input(Backend::Cuda); }

}  // namespace
}  // namespace spmv::dist
