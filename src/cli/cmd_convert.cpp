// spmv convert IN OUT: Matrix Market to Matrix Market. Reading expands symmetric storage and sums
// duplicates; writing is always "coordinate real general", gzip-compressed when OUT ends in .gz.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli_common.hpp"

namespace spmv::cli {
namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  ReadOptions read;
};

int run_convert(const ConvertOptions& o) {
  MatrixMarketHeader header;
  // Read completely before writing, so IN and OUT may be the same file.
  const HostMatrix a = load_matrix(o.input, &header, o.read);
  write_matrix_market(o.output, a);
  std::FILE* summary = o.output == "-" ? stderr : stdout;
  fmt::print(summary, "{} ({} {} {}) -> {} (coordinate real general{}): {} x {}, {} nonzeros\n", o.input,
             header.format, header.field, header.symmetry, o.output, o.output.ends_with(".gz") ? ", gzip" : "",
             a.rows, a.cols, a.nnz());
  return kExitOk;
}

}  // namespace

Command add_convert_command(CLI::App& parent) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* sub = parent.add_subcommand(
      "convert", "Rewrite a Matrix Market file as general coordinate (e.g. symmetric -> general, .mtx <-> .mtx.gz)");
  sub->add_option("input", o->input, "Input Matrix Market file (plain or gzip, detected from the content; '-' for stdin)")
      ->required();
  sub->add_option("output", o->output, "Output file; gzip-compressed when it ends in .gz; '-' for stdout")->required();
  add_max_memory_option(*sub, o->read);
  return {sub, [o] { return run_convert(*o); }};
}

}  // namespace spmv::cli
