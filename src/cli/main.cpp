// spmv: statistics, generation, conversion, single products and benchmarks of sparse matrix-vector
// products from the command line. Each subcommand lives in its own cmd_*.cpp; this file parses, then
// runs the chosen one and turns every failure into a message on stderr and a non-zero exit code.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "spmv/error.hpp"

namespace {

// The command line as a shell would accept it back, for benchmark records.
std::string quoted_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                           "-_./=:,+@%") == std::string::npos;
    if (i) line += ' ';
    if (plain) {
      line += arg;
    } else {
      line += '\'';
      for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = spmv::cli;
  CLI::App app{"spmv: sparse matrix-vector products y = alpha*op(A)*x + beta*y on CPU and CUDA", "spmv"};
  app.set_version_flag("--version", std::string("spmv ") + SPMV_VERSION +
                                        (std::string(SPMV_GIT_COMMIT).empty() ? "" : " (" SPMV_GIT_COMMIT ")"));
  app.require_subcommand(1);
  app.footer(
      "Matrices are Matrix Market files (.mtx, or gzip-compressed .mtx.gz; '-' reads standard input).\n"
      "Run 'spmv COMMAND --help' for the options of each command; docs/CLI.md has examples.\n"
      "Exit codes: 0 success, 1 error (message on stderr), 2 a benchmarked product failed verification,\n"
      "3 `spmv solve` did not converge.");

  std::vector<cli::Command> commands{cli::add_info_command(app), cli::add_gen_command(app),
                                     cli::add_convert_command(app), cli::add_multiply_command(app),
                                     cli::add_bench_command(app, quoted_command_line(argc, argv)),
                                     cli::add_solve_command(app)};
  // CLI11 would only say "A subcommand is required" for a misspelt command: name it instead.
  if (argc >= 2 && argv[1][0] != '-') {
    const bool known = std::any_of(commands.begin(), commands.end(),
                                   [&](const cli::Command& c) { return c.app->get_name() == argv[1]; });
    if (!known) {
      std::string names;
      for (const cli::Command& c : commands) names += (names.empty() ? "" : ", ") + c.app->get_name();
      fmt::print(stderr, "spmv: error: unknown command '{}'; commands: {} (spmv --help)\n", argv[1], names);
      return cli::kExitError;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    for (cli::Command& command : commands)
      if (command.app->parsed()) return command.run();
    return cli::kExitError;  // unreachable: require_subcommand(1)
  } catch (const cli::UsageError& e) {
    fmt::print(stderr, "spmv: error: {}\n", e.what());
  } catch (const spmv::Error& e) {
    fmt::print(stderr, "spmv: error: {}\n", e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "spmv: error: out of memory (try a smaller matrix, --precision f32, or fewer algorithms)\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "spmv: error: {}\n", e.what());
  }
  return cli::kExitError;
}
