#include "bench_report.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "cli_common.hpp"

namespace spmv::cli {
namespace {

using bench::format_number;
using bench::row_json;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// One CSV line = matrix statistics + the row + provenance, as (column, value) pairs; the header is
// the names of a record built from empty inputs, so the two cannot drift apart.
using CsvRecord = std::vector<std::pair<const char*, std::string>>;

CsvRecord csv_record(const RunInfo& run, const MatrixInfo& m, const BenchRow& r) {
  return {
      {"matrix", m.name},
      {"source", m.source},
      {"rows", std::to_string(m.stats.rows)},
      {"cols", std::to_string(m.stats.cols)},
      {"nnz", std::to_string(m.stats.nnz)},
      {"row_mean", format_number(m.stats.row_mean, "{:.6g}")},
      {"row_std", format_number(m.stats.row_std, "{:.6g}")},
      {"row_min", std::to_string(m.stats.row_min)},
      {"row_max", std::to_string(m.stats.row_max)},
      {"empty_rows", std::to_string(m.stats.empty_rows)},
      {"diagonals", std::to_string(m.stats.diagonals)},
      {"ell_padding", format_number(m.stats.ell_padding, "{:.6g}")},
      {"backend", run.backend},
      {"precision", r.precision},
      {"index_type", r.index_type},
      {"op", r.op},
      {"alpha", format_number(r.alpha, "{}")},
      {"beta", format_number(r.beta, "{}")},
      {"algorithm", r.algorithm},
      {"resolved", r.resolved},
      {"policy", r.policy},
      {"block_size", r.block_size ? std::to_string(r.block_size) : std::string()},
      {"vendor", r.vendor ? "1" : "0"},
      {"verified", std::string(to_string(r.status))},
      {"message", r.message},
      {"error_ratio", format_number(r.error_ratio, "{:.6g}")},
      {"max_abs_error", format_number(r.max_abs_error, "{:.6g}")},
      {"storage_error", format_number(r.storage_error, "{:.6g}")},
      {"storage_bound", format_number(r.storage_bound, "{:.6g}")},
      {"median_ms", format_number(r.median_ms, "{:.6g}")},
      {"min_ms", format_number(r.min_ms, "{:.6g}")},
      {"max_ms", format_number(r.max_ms, "{:.6g}")},
      {"repetitions", r.repetitions ? std::to_string(r.repetitions) : std::string()},
      {"iterations", r.iterations ? std::to_string(r.iterations) : std::string()},
      {"gflops", format_number(r.gflops, "{:.6g}")},
      {"gbs", format_number(r.gbs, "{:.6g}")},
      {"pct_bandwidth", format_number(r.pct_bandwidth, "{:.4g}")},
      {"speedup_vs_vendor", format_number(r.speedup_vs_vendor, "{:.4g}")},
      {"vendor_baseline", r.vendor_baseline},
      {"setup_ms", format_number(r.setup_ms, "{:.6g}")},
      {"extra_bytes_per_nnz", format_number(r.extra_bytes_per_nnz, "{:.4g}")},
      {"model_bytes", std::to_string(r.model_bytes)},
      {"break_even_products", format_number(r.break_even_products, "{:.4g}")},
      {"achieved_occupancy", format_number(r.achieved_occupancy, "{:.4g}")},
      {"warp_efficiency", format_number(r.warp_efficiency, "{:.4g}")},
      {"global_load_efficiency", format_number(r.global_load_efficiency, "{:.4g}")},
      {"l2_hit_rate", format_number(r.l2_hit_rate, "{:.4g}")},
      {"dram_throughput", format_number(r.dram_throughput, "{:.4g}")},
      {"l2_throughput", format_number(r.l2_throughput, "{:.4g}")},
      {"l2_requests", format_number(r.l2_requests, "{:.4g}")},
      {"device", run.device},
      {"bandwidth_gbs", format_number(run.bandwidth_gbs, "{:.6g}")},
      {"date", run.date},
      {"git_commit", run.git_commit},
      {"command_line", run.command_line},
  };
}

std::string csv_header() {
  std::string line;
  for (auto& [name, value] : csv_record({}, {}, {})) {
    if (!line.empty()) line += ',';
    line += name;
  }
  return line;
}

}  // namespace

CsvReport::CsvReport(const std::string& path) : path_(path) {
  bool write_header = true;
  if (std::filesystem::exists(path) && std::filesystem::file_size(path) > 0) {
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    if (first != csv_header())
      throw UsageError(fmt::format(
          "--csv '{}' exists with a different header (not written by this version of spmv bench); "
          "choose another file or remove it",
          path));
    write_header = false;
  }
  out_.open(path, std::ios::app);
  if (!out_) throw UsageError(fmt::format("--csv '{}': cannot open for writing", path));
  if (write_header) out_ << csv_header() << '\n';
  out_.flush();
}

void CsvReport::add(const RunInfo& run, const MatrixInfo& matrix, const BenchRow& row) {
  std::string line;
  for (auto& [name, value] : csv_record(run, matrix, row)) {
    if (!line.empty()) line += ',';
    line += csv_field(value);
  }
  out_ << line << '\n';
  out_.flush();
  if (!out_) throw UsageError(fmt::format("--csv '{}': write failed", path_));
}

JsonReport::JsonReport(const std::string& path, const RunInfo& run, const std::string& byte_model) : path_(path) {
  if (std::filesystem::exists(path) && std::filesystem::file_size(path) > 0) {
    std::ifstream in(path);
    document_ = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (document_.is_discarded() || !document_.is_object() || !document_.contains("runs") ||
        !document_["runs"].is_array())
      throw UsageError(fmt::format(
          "--json '{}' exists but is not a spmv bench report ({{\"runs\": [...]}}); choose another file or remove it",
          path));
  } else {
    document_["format"] = "spmv-bench/1";
    document_["runs"] = nlohmann::ordered_json::array();
  }
  nlohmann::ordered_json r;
  r["date"] = run.date;
  r["git_commit"] = run.git_commit;
  r["command_line"] = run.command_line;
  r["backend"] = run.backend;
  r["device"] = run.device;
  r["bandwidth_gbs"] = run.bandwidth_gbs;
  r["bandwidth_method"] = run.bandwidth_method;
  r["byte_model"] = byte_model;
  r["matrices"] = nlohmann::ordered_json::array();
  document_["runs"].push_back(std::move(r));
  run_index_ = document_["runs"].size() - 1;
  flush();
}

void JsonReport::add_matrix(const MatrixInfo& matrix, const std::vector<BenchRow>& rows) {
  nlohmann::ordered_json m;
  m["name"] = matrix.name;
  m["source"] = matrix.source;
  m["stats"] = stats_json(matrix.stats);
  m["results"] = nlohmann::ordered_json::array();
  for (const BenchRow& r : rows) m["results"].push_back(row_json(r));
  document_["runs"][run_index_]["matrices"].push_back(std::move(m));
  flush();
}

void JsonReport::flush() const {
  // Write beside the target and rename, so an interrupted write never leaves half a document.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw UsageError(fmt::format("--json '{}': cannot open '{}' for writing", path_, tmp));
    out << document_.dump(2) << '\n';
    if (!out) throw UsageError(fmt::format("--json '{}': write failed", path_));
  }
  std::filesystem::rename(tmp, path_);
}

}  // namespace spmv::cli
