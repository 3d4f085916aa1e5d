#pragma once
// `spmv multiply --distributed`, `spmv bench --distributed` and `spmv solve --distributed`: the commands' arguments as the MPI
// front-end needs them. mpi_commands.cpp runs them (SPMV_WITH_MPI); without MPI, no_mpi.cpp refuses
// with a message saying how to build it.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/operator.hpp"

namespace CLI {
class App;
}

namespace spmv::cli {

struct DistributedFlags {
  bool enabled = false;
  std::string partition = "nonzeros";  // nonzeros | rows | graph | parallel-graph | streaming
  std::string read_mode = "auto";      // auto | ranges | root: dist::ReadMode of a Matrix Market file
  int progress_chunks = 0;             // dist::DistributedOptions::progress_chunks
};

// Adds --distributed, --partition and --read-mode to a subcommand.
void add_distributed_options(CLI::App& sub, DistributedFlags& flags);

// With --distributed: a UsageError naming the first of `options` that is set (options without a
// distributed meaning are refused, never ignored).
void refuse_with_distributed(std::initializer_list<std::pair<bool, const char*>> options);

struct DistributedMultiply {
  std::string file, x_file, y0_file, output;
  double alpha = 1, beta = 0;
  bool transpose = false;
  std::string algo, precision, backend;
  int threads = 0;                   // per rank, 0: OpenMP default
  std::int64_t expected_applies = 0;  // Options::expected_applies of both blocks
  bool quiet = false;
  ReadOptions read;
  DistributedFlags flags;
};

struct DistributedBench {
  std::vector<std::string> files, gens;
  std::string json;  // rank 0 writes every matrix's report here (JSON), when given
  std::string csv;   // rank 0 appends a line per matrix, precision and rank here, when given
  std::string algo, precision, backend;
  bool transpose = false;
  double alpha = 1, beta = 0;
  TimingOptions timing;
  int threads = 0;                   // per rank, 0: OpenMP default
  std::int64_t expected_applies = 0;  // Options::expected_applies of both blocks
  bool quiet = false;
  ReadOptions read;
  DistributedFlags flags;
};

struct DistributedSolve {
  std::string file, gen, rhs_file, output;
  std::string method, precond, algo, precision;
  std::string backend;  // cpu, cuda or auto (auto: CUDA when every rank has a GPU)
  double tol = 1e-8;
  int maxit = 1000, restart = 30, progress = 0;
  bool unfused = false;
  bool pipelined = false;            // CG: one global reduction per iteration
  bool graph = false;                // CUDA, CG and BiCGStab: one iteration captured in a CUDA graph
  std::string gmres_basis = "working";  // GMRES: working, f32 or f16
  int threads = 0;                   // per rank, 0: OpenMP default
  std::int64_t expected_applies = 0;  // Options::expected_applies of both blocks
  ReadOptions read;
  DistributedFlags flags;
  int gmres_s_step = 1;              // GMRES: Krylov vectors per s-step block (1: Arnoldi steps)
};

int run_distributed_multiply(const DistributedMultiply& args);
int run_distributed_solve(const DistributedSolve& args);
int run_distributed_bench(const DistributedBench& args);

}  // namespace spmv::cli
