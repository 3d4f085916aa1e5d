#pragma once
// The measuring loop of `spmv bench` for one matrix in one precision: build each plan, verify one
// product against the double-accumulating reference, then time it through Operator::time. The same
// loop drives every backend; only the Backend value differs.
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "cli_common.hpp"
#include "spmv/operator.hpp"

namespace spmv::cli {

struct BenchSettings {
  Backend backend = Backend::Cpu;
  Operation op = Operation::NonTranspose;
  double alpha = 1, beta = 0;
  TimingOptions timing;
  Options options;                    // --threads / --block-size
  std::vector<Algorithm> algorithms;  // vendor baselines first; may hold Auto
  bool sweep = false;
  std::vector<int> block_sizes;       // --sweep
  double bandwidth_gbs = 0;
  bool quiet = false;       // no progress lines on stderr
  bool print_rows = true;   // table rows on stdout, failures on stderr (false for library callers)
  bool inject_fault = false;  // testing aid: corrupt each verified product, which must then fail
};

// True when an algorithm takes Options::block_size: the CUDA backend's own kernels (cuSPARSE picks
// its own launch configuration, CPU algorithms have no blocks).
bool has_block_size(Backend backend, Algorithm algorithm);

// How many rows one matrix in one precision produces (the progress counter's unit).
int planned_rows(const BenchSettings& settings);

struct Progress {
  int done = 0;
  int total = 0;
};

// Prints the rows as they complete (vendor rows once all vendors ran, so that the speed-up column is
// final) and returns them. Never throws for a failing algorithm: such rows carry their status.
std::vector<BenchRow> bench_matrix(const HostMatrix& a, Precision precision, const BenchSettings& settings,
                                   const std::string& label, Progress& progress);

}  // namespace spmv::cli
