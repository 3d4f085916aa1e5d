#pragma once
// Pieces every subcommand shares: how a matrix is loaded, how key=value parameters and names are
// parsed, how the backend is resolved. Strings become enums here, at the edge (STYLE.md §3).
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/reorder.hpp"
#include "spmv/solvers.hpp"

namespace CLI {
class App;
}

namespace spmv::cli {

// A mistake in the command line that CLI11 cannot see (bad key=value, unknown names, mismatched
// vector lengths). main() prints it like any other error and exits with kExitError.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;         // bad input, I/O failure, library error
inline constexpr int kExitVerifyFailed = 2;  // `spmv bench`: a product disagreed with the reference
inline constexpr int kExitNotConverged = 3;  // `spmv solve`: max iterations or breakdown before the tolerance

// A parsed subcommand: its CLI11 node and what to run when it was chosen.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_info_command(CLI::App& parent);
Command add_gen_command(CLI::App& parent);
Command add_convert_command(CLI::App& parent);
Command add_multiply_command(CLI::App& parent);
Command add_bench_command(CLI::App& parent, const std::string& command_line);
Command add_solve_command(CLI::App& parent);

// The matrix every subcommand works on: double values, 64-bit indices, duplicates summed, columns
// sorted. Narrower types are derived from it with spmv::convert.
using HostMatrix = CsrMatrix<double, std::int64_t>;

// Reads a Matrix Market file (plain or gzip, "-" for standard input); `header`, when given, receives
// the header as stored (e.g. "symmetric" before expansion). `options` carries --max-memory.
HostMatrix load_matrix(const std::string& path, MatrixMarketHeader* header = nullptr, const ReadOptions& options = {});

// Adds --max-memory SIZE to a subcommand that reads a matrix; it fills options.max_memory.
void add_max_memory_option(CLI::App& sub, ReadOptions& options);
// Adds --reorder none|rcm|degree (Options::reorder, include/spmv/reorder.hpp) to a subcommand.
void add_reorder_option(CLI::App& sub, Reorder& reorder);
// Adds --deterministic (Options::deterministic: bitwise-reproducible products) to a subcommand.
void add_deterministic_option(CLI::App& sub, bool& deterministic);
// Adds --shuffle SEED (see shuffled()) to a subcommand.
void add_shuffle_option(CLI::App& sub, std::uint64_t& seed);

// --shuffle SEED (bench, solve): P A P^T for a random permutation P of this seed, the same on every
// platform (Fisher-Yates on splitmix64): a mesh or graph whose numbering carries no locality. UsageError
// for a non-square A.
HostMatrix shuffled(const HostMatrix& a, std::uint64_t seed);

// "2G", "512MB", "1.5GiB", "1000000": bytes (k/M/G/T count powers of 1000, KiB/MiB/GiB/TiB of 1024).
std::uint64_t parse_memory_size(std::string_view text);

// "dir/bcsstk13.mtx.gz" -> "bcsstk13".
std::string matrix_name(const std::string& path);

// Parses "key=value" words into numbers; `what` names the context in error messages.
std::map<std::string, double> parse_key_values(const std::vector<std::string>& words, std::string_view what);

// Parses "KIND[:k=v,k=v]" (the --gen syntax of `spmv bench`) into a kind and its parameters.
std::pair<std::string, std::map<std::string, double>> parse_generator_spec(std::string_view spec);

// A generator call written back as text, e.g. "poisson2d:n=1000".
std::string generator_label(const std::string& kind, const std::map<std::string, double>& params);

// Algorithm from its printed name; UsageError listing every valid name otherwise.
Algorithm parse_algorithm_name(std::string_view name);
// Every algorithm name, comma-separated, for help texts and error messages.
std::string algorithm_names();

// "cpu", "cuda" or "auto". `auto` picks CUDA when spmv::cuda_available(); `note` receives the line
// to show the user about that choice (empty when the backend was named explicitly). Naming "cuda"
// without a usable device is a UsageError.
Backend resolve_backend(std::string_view name, std::string* note);

// The SolverOptions of `spmv solve` (one process or --distributed) from its command-line values (names
// already checked by CLI11). With `print_progress`, every `progress_every` iterations print a line.
SolverOptions solver_options(const std::string& method, const std::string& precond, double tol, int maxit,
                             int restart, int progress_every, bool unfused, bool print_progress);

// Number formatting for humans: 12345678 -> "12.3 M".
std::string human_count(double n);
std::string human_bytes(double bytes);

}  // namespace spmv::cli
