#include "bench_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <filesystem>
#include <sstream>

#include "cli_common.hpp"

namespace spmv::cli {
namespace {

// Table column widths; the policy string goes last because its length varies.
constexpr int kNameWidth = 30;

std::string num(double v, const char* spec = "{:.4g}") {
  return std::isnan(v) ? std::string() : fmt::format(fmt::runtime(spec), v);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

nlohmann::ordered_json json_number(double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); }


nlohmann::ordered_json row_json(const BenchRow& r) {
  nlohmann::ordered_json j;
  j["algorithm"] = r.algorithm;
  j["resolved"] = r.resolved;
  j["policy"] = r.policy;
  j["block_size"] = r.block_size;
  j["vendor"] = r.vendor;
  j["precision"] = r.precision;
  j["index_type"] = r.index_type;
  j["op"] = r.op;
  j["alpha"] = r.alpha;
  j["beta"] = r.beta;
  j["verified"] = std::string(to_string(r.status));
  j["message"] = r.message;
  j["error_ratio"] = json_number(r.error_ratio);
  j["max_abs_error"] = json_number(r.max_abs_error);
  j["median_ms"] = json_number(r.median_ms);
  j["min_ms"] = json_number(r.min_ms);
  j["max_ms"] = json_number(r.max_ms);
  j["repetitions"] = r.repetitions;
  j["iterations"] = r.iterations;
  j["gflops"] = json_number(r.gflops);
  j["gbs"] = json_number(r.gbs);
  j["pct_bandwidth"] = json_number(r.pct_bandwidth);
  j["speedup_vs_vendor"] = json_number(r.speedup_vs_vendor);
  j["vendor_baseline"] = r.vendor_baseline;
  j["setup_ms"] = json_number(r.setup_ms);
  j["extra_bytes_per_nnz"] = json_number(r.extra_bytes_per_nnz);
  j["model_bytes"] = r.model_bytes;
  j["break_even_products"] = json_number(r.break_even_products);
  return j;
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
      {"row_mean", num(m.stats.row_mean, "{:.6g}")},
      {"row_std", num(m.stats.row_std, "{:.6g}")},
      {"row_min", std::to_string(m.stats.row_min)},
      {"row_max", std::to_string(m.stats.row_max)},
      {"empty_rows", std::to_string(m.stats.empty_rows)},
      {"diagonals", std::to_string(m.stats.diagonals)},
      {"ell_padding", num(m.stats.ell_padding, "{:.6g}")},
      {"backend", run.backend},
      {"precision", r.precision},
      {"index_type", r.index_type},
      {"op", r.op},
      {"alpha", num(r.alpha, "{}")},
      {"beta", num(r.beta, "{}")},
      {"algorithm", r.algorithm},
      {"resolved", r.resolved},
      {"policy", r.policy},
      {"block_size", r.block_size ? std::to_string(r.block_size) : std::string()},
      {"vendor", r.vendor ? "1" : "0"},
      {"verified", std::string(to_string(r.status))},
      {"message", r.message},
      {"error_ratio", num(r.error_ratio, "{:.6g}")},
      {"max_abs_error", num(r.max_abs_error, "{:.6g}")},
      {"median_ms", num(r.median_ms, "{:.6g}")},
      {"min_ms", num(r.min_ms, "{:.6g}")},
      {"max_ms", num(r.max_ms, "{:.6g}")},
      {"repetitions", r.repetitions ? std::to_string(r.repetitions) : std::string()},
      {"iterations", r.iterations ? std::to_string(r.iterations) : std::string()},
      {"gflops", num(r.gflops, "{:.6g}")},
      {"gbs", num(r.gbs, "{:.6g}")},
      {"pct_bandwidth", num(r.pct_bandwidth, "{:.4g}")},
      {"speedup_vs_vendor", num(r.speedup_vs_vendor, "{:.4g}")},
      {"vendor_baseline", r.vendor_baseline},
      {"setup_ms", num(r.setup_ms, "{:.6g}")},
      {"extra_bytes_per_nnz", num(r.extra_bytes_per_nnz, "{:.4g}")},
      {"model_bytes", std::to_string(r.model_bytes)},
      {"break_even_products", num(r.break_even_products, "{:.4g}")},
      {"device", run.device},
      {"bandwidth_gbs", num(run.bandwidth_gbs, "{:.6g}")},
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

nlohmann::ordered_json stats_json(const MatrixStats& s) {
  nlohmann::ordered_json j;
  j["rows"] = s.rows;
  j["cols"] = s.cols;
  j["nnz"] = s.nnz;
  j["row_mean"] = s.row_mean;
  j["row_std"] = s.row_std;
  j["row_min"] = s.row_min;
  j["row_max"] = s.row_max;
  j["empty_rows"] = s.empty_rows;
  j["diagonals"] = s.diagonals;
  j["ell_padding"] = s.ell_padding;
  j["bandwidth"] = s.bandwidth;
  j["structurally_symmetric"] = s.structurally_symmetric;
  j["numerically_symmetric"] = s.numerically_symmetric;
  return j;
}

std::string_view to_string(RowStatus s) {
  switch (s) {
    case RowStatus::Ok: return "ok";
    case RowStatus::Failed: return "FAILED";
    case RowStatus::Skipped: return "skipped";
    case RowStatus::Error: return "error";
  }
  return "unknown";
}

std::string BenchRow::display_name() const {
  std::string name = algorithm;
  if (!resolved.empty() && resolved != algorithm) name += "=" + resolved;
  if (block_size) name += fmt::format("/bs={}", block_size);
  return name;
}

void print_table_header() {
  fmt::print("{:<{}} {:<14} {:>10} {:>9} {:>8} {:>6} {:>9} {:>9} {:>7}  {}\n", "algorithm", kNameWidth,
             "verified", "median ms", "GFLOP/s", "GB/s", "% bw", "vs vendor", "setup ms", "B/nnz", "policy");
}

void print_table_row(const BenchRow& r) {
  const std::string name = r.display_name();
  if (r.status == RowStatus::Skipped || r.status == RowStatus::Error) {
    fmt::print("{:<{}} {}: {}\n", name, kNameWidth, r.status == RowStatus::Skipped ? "skipped" : "ERROR", r.message);
    return;
  }
  const std::string verified =
      fmt::format("{} {}", r.status == RowStatus::Ok ? "ok" : "FAIL", num(r.error_ratio, "{:.2g}"));
  const std::string speedup = std::isnan(r.speedup_vs_vendor) ? "" : fmt::format("{:.2f}x", r.speedup_vs_vendor);
  fmt::print("{:<{}} {:<14} {:>10} {:>9} {:>8} {:>6} {:>9} {:>9} {:>7}  {}\n", name, kNameWidth, verified,
             num(r.median_ms, "{:.4f}"), num(r.gflops, "{:.2f}"), num(r.gbs, "{:.1f}"), num(r.pct_bandwidth, "{:.1f}"),
             speedup, num(r.setup_ms, "{:.3g}"), num(r.extra_bytes_per_nnz, "{:.3g}"), r.policy);
  std::fflush(stdout);
}

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

bool converts_matrix(const std::string& algorithm) {
  const auto a = parse_algorithm(algorithm);
  if (!a) return false;
  switch (*a) {
    case Algorithm::Coo: case Algorithm::Ell: case Algorithm::EllR: case Algorithm::EllRVector:
    case Algorithm::Dia: case Algorithm::Hyb: case Algorithm::Sell: case Algorithm::ExplicitTranspose:
      return true;
    default:
      return false;
  }
}

void add_break_even(std::vector<BenchRow>& rows, bool print) {
  const BenchRow* fastest = nullptr;  // the fastest verified row that needs no conversion
  for (const BenchRow& r : rows)
    if (r.status == RowStatus::Ok && !converts_matrix(r.resolved) && (!fastest || r.median_ms < fastest->median_ms))
      fastest = &r;
  if (!fastest) return;
  bool header = false;
  for (BenchRow& r : rows) {
    if (r.status != RowStatus::Ok || !converts_matrix(r.resolved)) continue;
    const double gain_ms = fastest->median_ms - r.median_ms;
    r.break_even_products = gain_ms > 0 ? r.setup_ms / gain_ms : std::numeric_limits<double>::infinity();
    if (!print) continue;
    if (!header)
      fmt::print("conversion pays off against the fastest CSR algorithm ({}, {} ms):\n", fastest->display_name(),
                 num(fastest->median_ms, "{:.4g}"));
    header = true;
    if (gain_ms > 0)
      fmt::print("  {:<28} after {:.0f} products (setup {} ms, {} ms saved per product)\n", r.display_name(),
                 std::ceil(r.break_even_products), num(r.setup_ms, "{:.3g}"), num(gain_ms, "{:.3g}"));
    else
      fmt::print("  {:<28} never: not faster per product\n", r.display_name());
  }
}

}  // namespace spmv::cli
