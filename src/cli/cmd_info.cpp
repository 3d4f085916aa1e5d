// spmv info FILE [--json]: the statistics an algorithm selector looks at (spmv::compute_stats).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <nlohmann/json.hpp>

#include "bench_report.hpp"
#include "cli_common.hpp"
#include "spmv/stats.hpp"

namespace spmv::cli {
namespace {

struct InfoOptions {
  std::string file;
  bool json = false;
  ReadOptions read;
};

int run_info(const InfoOptions& o) {
  MatrixMarketHeader header;
  const HostMatrix a = load_matrix(o.file, &header, o.read);
  const MatrixStats s = compute_stats(a);
  const bool fits32 = fits_index<std::int32_t>(s.rows, s.cols, s.nnz);
  // Stricter than "numerically symmetric" (sorted rows, every stored entry facing a stored, equal one):
  // what Algorithm::Symmetric needs to run A^T x as A x.
  const std::optional<std::string> violation = symmetry_violation(a);

  if (o.json) {
    nlohmann::ordered_json j;
    j["file"] = o.file;
    j["format"] = header.format;
    j["field"] = header.field;
    j["stored_symmetry"] = header.symmetry;
    j.update(stats_json(s));
    j["symmetric"] = s.numerically_symmetric;
    j["equals_transpose"] = !violation;
    j["symmetry_violation"] = violation ? nlohmann::ordered_json(*violation) : nlohmann::ordered_json(nullptr);
    j["fits_int32"] = fits32;
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }

  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  fmt::print("file          {} ({} {} {}{})\n", o.file, header.format, header.field, header.symmetry,
             header.symmetry == "general" ? "" : ", expanded to general");
  fmt::print("rows          {}\n", s.rows);
  fmt::print("cols          {}\n", s.cols);
  fmt::print("nnz           {}{}\n", s.nnz,
             s.nnz >= 10000 ? fmt::format(" ({})", human_count(static_cast<double>(s.nnz))) : "");
  fmt::print("row length    mean {:.4g}  std {:.4g}  min {}  max {}\n", s.row_mean, s.row_std, s.row_min, s.row_max);
  fmt::print("empty rows    {}\n", s.empty_rows);
  fmt::print("diagonals     {} occupied\n", s.diagonals);
  fmt::print("ELL padding   {:.4g} stored slots per nonzero\n", s.ell_padding);
  fmt::print("bandwidth     {} (max |i - j|)\n", s.bandwidth);
  fmt::print("symmetric     structurally {}, numerically {}\n", yes_no(s.structurally_symmetric),
             yes_no(s.numerically_symmetric));
  fmt::print("transpose     {}\n", violation ? "A != A^T exactly (" + *violation + ")"
                                               : std::string("A == A^T exactly: A^T x can run A x's plan (symmetric)"));
  fmt::print("indices       {}\n", fits32 ? "fit 32-bit" : "need 64-bit");
  return kExitOk;
}

}  // namespace

Command add_info_command(CLI::App& parent) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* sub = parent.add_subcommand("info", "Print matrix statistics (rows, nnz, row lengths, symmetry, ...)");
  sub->add_option("file", o->file, "Matrix Market file (.mtx or .mtx.gz, '-' for stdin)")->required();
  add_max_memory_option(*sub, o->read);
  sub->add_flag("--json", o->json,
                "Machine-readable output; keys: rows, cols, nnz, row_mean, row_std, row_min, row_max, empty_rows, "
                "diagonals, ell_padding, bandwidth, symmetric (numerically), structurally_symmetric, "
                "numerically_symmetric, equals_transpose, symmetry_violation (null or the first entry that breaks "
                "A == A^T), fits_int32, file, format, field, stored_symmetry");
  return {sub, [o] { return run_info(*o); }};
}

}  // namespace spmv::cli
