// The --distributed flags, shared by multiply, bench and solve whether or not MPI is built in.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_common.hpp"
#include "distributed/distributed_cli.hpp"

namespace spmv::cli {

void add_distributed_options(CLI::App& sub, DistributedFlags& flags) {
  sub.add_flag("--distributed", flags.enabled,
               "Run across the MPI ranks (mpirun -np N spmv ...): rows split over ranks, halo exchanged; every "
               "rank reads its part of the matrix file (--read-mode), rank 0 the vectors and writes "
               "(docs/DISTRIBUTED.md)")
      ->group("Distributed");
  sub.add_option("--partition", flags.partition,
                 "--distributed: contiguous rows per rank balanced by nonzeros or by rows, or graph: a METIS "
                 "partition of a square matrix that cuts the halo (rows renumbered on rank 0, vectors moved back), "
                 "or parallel-graph: the same kind of partition computed by PT-Scotch across the ranks from their "
                 "rows (no rank holds the whole matrix), or streaming: a one-pass greedy (LDG) partition streamed "
                 "over the ranks' rows, for graphs too large for the others (4 B a row on every rank; cuts less)")
      ->check(CLI::IsMember({"nonzeros", "rows", "graph", "parallel-graph", "streaming"}))
      ->capture_default_str()
      ->group("Distributed");
  sub.add_option("--read-mode", flags.read_mode,
                 "--distributed, a Matrix Market file: ranges: every rank parses its byte range of the file (of a "
                 "gzip file: its share of the inflated lines); root: rank 0 reads it whole and scatters; auto: "
                 "ranges where they can run (a coordinate file that every rank opens, not --partition graph; "
                 "parallel-graph and streaming read by ranges, then partition), "
                 "else root")
      ->check(CLI::IsMember({"auto", "ranges", "root"}))
      ->capture_default_str()
      ->group("Distributed");
  sub.add_option("--progress-chunks", flags.progress_chunks,
                 "--distributed, CPU backend, A x: run the local block in this many row chunks with MPI_Testall "
                 "between them, so that halo messages above MPI's eager limit move meanwhile; 0: the rule (when "
                 "a rank's largest message reaches 4 KiB), 1: never")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Distributed");
}

void refuse_with_distributed(std::initializer_list<std::pair<bool, const char*>> options) {
  for (const auto& [set, flag] : options)
    if (set) throw UsageError(fmt::format("{} is not available with --distributed (docs/DISTRIBUTED.md)", flag));
}

}  // namespace spmv::cli
