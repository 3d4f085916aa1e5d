#include "bench_row.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "spmv/algorithm.hpp"

namespace spmv::bench {
namespace {

// Table column widths; the policy string goes last because its length varies.
constexpr int kNameWidth = 30;
constexpr int kStorageWidth = 18;  // "vs f32 (bound)": "1.2e-05 (0.00049)"

}  // namespace

std::string format_number(double v, const char* spec) {
  return std::isnan(v) ? std::string() : fmt::format(fmt::runtime(spec), v);
}

std::vector<std::pair<std::string_view, FieldValue>> row_fields(const BenchRow& r) {
  const auto i = [](auto v) { return FieldValue(static_cast<std::int64_t>(v)); };
  return {
      {"algorithm", r.algorithm},
      {"resolved", r.resolved},
      {"policy", r.policy},
      {"block_size", i(r.block_size)},
      {"vendor", r.vendor},
      {"precision", r.precision},
      {"index_type", r.index_type},
      {"op", r.op},
      {"alpha", r.alpha},
      {"beta", r.beta},
      {"verified", std::string(to_string(r.status))},
      {"message", r.message},
      {"error_ratio", r.error_ratio},
      {"max_abs_error", r.max_abs_error},
      {"storage_error", r.storage_error},
      {"storage_bound", r.storage_bound},
      {"median_ms", r.median_ms},
      {"min_ms", r.min_ms},
      {"max_ms", r.max_ms},
      {"repetitions", i(r.repetitions)},
      {"iterations", i(r.iterations)},
      {"gflops", r.gflops},
      {"gbs", r.gbs},
      {"pct_bandwidth", r.pct_bandwidth},
      {"speedup_vs_vendor", r.speedup_vs_vendor},
      {"vendor_baseline", r.vendor_baseline},
      {"setup_ms", r.setup_ms},
      {"extra_bytes_per_nnz", r.extra_bytes_per_nnz},
      {"model_bytes", r.model_bytes},
      {"break_even_products", r.break_even_products},
      {"achieved_occupancy", r.achieved_occupancy},
      {"warp_efficiency", r.warp_efficiency},
      {"global_load_efficiency", r.global_load_efficiency},
      {"l2_hit_rate", r.l2_hit_rate},
      {"dram_throughput", r.dram_throughput},
      {"l2_throughput", r.l2_throughput},
      {"l2_requests", r.l2_requests},
  };
}

nlohmann::ordered_json row_json(const BenchRow& r) {
  nlohmann::ordered_json j;
  for (const auto& [key, value] : row_fields(r))
    std::visit(
        [&, key = key](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
            j[std::string(key)] = std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v);
          else
            j[std::string(key)] = v;
        },
        value);
  return j;
}

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

void print_table_header(bool storage_column) {
  fmt::print("{:<{}} {:<14} {:>10} {:>9} {:>8} {:>6} {:>9} {:>9} {:>7}  {}{}\n", "algorithm", kNameWidth, "verified",
             "median ms", "GFLOP/s", "GB/s", "% bw", "vs vendor", "setup ms", "B/nnz",
             storage_column ? fmt::format("{:<{}} ", "vs f32 (bound)", kStorageWidth) : std::string(), "policy");
}

void print_table_row(const BenchRow& r) {
  const std::string name = r.display_name();
  if (r.status == RowStatus::Skipped || r.status == RowStatus::Error) {
    fmt::print("{:<{}} {}: {}\n", name, kNameWidth, r.status == RowStatus::Skipped ? "skipped" : "ERROR", r.message);
    return;
  }
  const std::string verified =
      fmt::format("{} {}", r.status == RowStatus::Ok ? "ok" : "FAIL", format_number(r.error_ratio, "{:.2g}"));
  const std::string speedup = std::isnan(r.speedup_vs_vendor) ? "" : fmt::format("{:.2f}x", r.speedup_vs_vendor);
  // Half-storage rows (storage_bound set) fill the header's "vs f32 (bound)" column.
  const std::string storage =
      std::isnan(r.storage_bound)
          ? std::string()
          : fmt::format("{:<{}} ", fmt::format("{:.2g} ({:.2g})", r.storage_error, r.storage_bound), kStorageWidth);
  fmt::print("{:<{}} {:<14} {:>10} {:>9} {:>8} {:>6} {:>9} {:>9} {:>7}  {}{}\n", name, kNameWidth, verified,
             format_number(r.median_ms, "{:.4f}"), format_number(r.gflops, "{:.2f}"), format_number(r.gbs, "{:.1f}"),
             format_number(r.pct_bandwidth, "{:.1f}"), speedup, format_number(r.setup_ms, "{:.3g}"),
             format_number(r.extra_bytes_per_nnz, "{:.3g}"), storage, r.policy);
  std::fflush(stdout);
}

bool converts_matrix(const std::string& algorithm) {
  const auto a = parse_algorithm(algorithm);
  if (!a) return false;
  switch (*a) {
    case Algorithm::Coo: case Algorithm::Ell: case Algorithm::EllR: case Algorithm::EllRVector:
    case Algorithm::Dia: case Algorithm::Hyb: case Algorithm::Sell: case Algorithm::CompressedCsr:
    case Algorithm::ExplicitTranspose:
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
                 format_number(fastest->median_ms, "{:.4g}"));
    header = true;
    if (gain_ms > 0)
      fmt::print("  {:<28} after {:.0f} products (setup {} ms, {} ms saved per product)\n", r.display_name(),
                 std::ceil(r.break_even_products), format_number(r.setup_ms, "{:.3g}"),
                 format_number(gain_ms, "{:.3g}"));
    else
      fmt::print("  {:<28} never: not faster per product\n", r.display_name());
  }
}

}  // namespace spmv::bench
