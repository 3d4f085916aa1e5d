// spmv gen KIND [key=value ...] -o FILE: any generator of spmv::gen, written as Matrix Market.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "spmv/generators.hpp"

namespace spmv::cli {
namespace {

struct GenOptions {
  bool list = false;
  std::string kind;
  std::vector<std::string> params;
  std::string output;
};

void print_generator_list() {
  for (const gen::GeneratorInfo& g : gen::generators()) {
    fmt::print("{:<16} {}\n", g.name, g.description);
    std::string defaults;
    for (auto& [key, value] : g.defaults) defaults += fmt::format(" {}={}", key, value);
    fmt::print("{:<16}  defaults:{}\n", "", defaults.empty() ? " (none)" : defaults);
  }
}

int run_gen(const GenOptions& o) {
  if (o.list) {
    print_generator_list();
    return kExitOk;
  }
  if (o.kind.empty()) throw UsageError("spmv gen: missing KIND (run 'spmv gen --list' to see the generators)");
  if (o.output.empty()) throw UsageError("spmv gen: missing -o FILE (use '-o -' for standard output)");
  const auto params = parse_key_values(o.params, fmt::format("spmv gen {}", o.kind));
  const HostMatrix a = gen::generate(o.kind, params);
  write_matrix_market(o.output, a);
  // Keep standard output clean for the matrix when it goes there.
  std::FILE* summary = o.output == "-" ? stderr : stdout;
  fmt::print(summary, "wrote {}: {} ({} x {}, {} nonzeros)\n", o.output, generator_label(o.kind, params), a.rows,
             a.cols, a.nnz());
  return kExitOk;
}

}  // namespace

Command add_gen_command(CLI::App& parent) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* sub = parent.add_subcommand("gen", "Generate a matrix (spmv gen --list shows the kinds)");
  sub->add_flag("--list", o->list, "List the generator kinds with their parameters and defaults");
  sub->add_option("kind", o->kind, "Generator kind, e.g. poisson2d, rmat, random_uniform");
  sub->add_option("params", o->params, "Parameters as key=value (unset ones take their defaults), e.g. n=1000");
  sub->add_option("-o,--output", o->output, "Output Matrix Market file; gzip-compressed when it ends in .gz; '-' for stdout");
  sub->footer("Example: spmv gen rmat scale=16 edge_factor=8 seed=1 -o rmat16.mtx.gz");
  return {sub, [o] { return run_gen(*o); }};
}

}  // namespace spmv::cli
