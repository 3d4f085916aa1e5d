#pragma once
// One result of the benchmark engine (one algorithm, one matrix, one precision) and its one field
// list: the keys and values of a `spmv bench --json` result. Both front-ends read rows through it:
// the CLI's JSON report (row_json) and spmv.bench() in Python (one dict per row), so a column added
// here appears in both. Also the text table both print, and the break-even of converting formats.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "spmv/stats.hpp"

namespace spmv::bench {

// A number that was not measured (skipped row, no bandwidth given, ...). JSON has no NaN: row_json
// writes it as null; Python keeps it as float('nan') (docs/CLI.md, python/README.md).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class RowStatus { Ok, Failed, Skipped, Error };
std::string_view to_string(RowStatus s);

struct BenchRow {
  std::string precision;     // f32 / f64 / f16 / bf16
  std::string index_type;    // int32 / int64
  std::string op;            // N / T
  double alpha = 1, beta = 0;
  std::string algorithm;     // as requested (may be "auto")
  std::string resolved;      // what ran (never "auto")
  std::string policy;
  int block_size = 0;        // --sweep: requested block size; 0: the algorithm's own
  bool vendor = false;
  RowStatus status = RowStatus::Ok;
  std::string message;       // reason for skipped / failed / error rows
  double error_ratio = kNaN;     // max_i |y_i - ref_i| / bound_i (verified when <= 1)
  double max_abs_error = kNaN;
  // f16 / bf16 rows: how far the half product is from the f32 one, max_i |y_i - ref_f32_i| / (|beta||y0_i|
  // + |alpha| sum_j |a_ij x_j|) over the unrounded matrix, and its bound u + c*eps_f32*(1 + u) (u the
  // storage's unit roundoff; exceeded only where values leave the storage's normal range). NaN otherwise.
  double storage_error = kNaN;
  double storage_bound = kNaN;
  double median_ms = kNaN, min_ms = kNaN, max_ms = kNaN;
  int repetitions = 0, iterations = 0;
  double gflops = kNaN, gbs = kNaN, pct_bandwidth = kNaN;
  double speedup_vs_vendor = kNaN;  // best vendor median / this median
  std::string vendor_baseline;      // which vendor row that was
  double setup_ms = kNaN;
  double extra_bytes_per_nnz = kNaN;
  std::uint64_t model_bytes = 0;
  // Algorithms that convert the matrix (formats, explicit transpose): products after which their
  // setup is repaid against the fastest algorithm that works on CSR directly; +inf when never, NaN
  // for algorithms that convert nothing (see add_break_even).
  double break_even_products = kNaN;
  // `spmv bench --profile` (Nsight Compute, one more product; src/cli/bench_profile.hpp), in percent,
  // averaged over the product's kernels weighted by their duration; NaN when not profiled.
  double achieved_occupancy = kNaN;      // sm__warps_active.avg.pct_of_peak_sustained_active
  double warp_efficiency = kNaN;         // active threads per executed instruction / 32
  double global_load_efficiency = kNaN;  // bytes used per 32-byte sector of global loads
  double l2_hit_rate = kNaN;             // lts__t_sector_hit_rate.pct
  double dram_throughput = kNaN;         // dram__throughput.avg.pct_of_peak_sustained_elapsed
  double l2_throughput = kNaN;           // lts__t_sectors.avg.pct_of_peak_sustained_elapsed
  double l2_requests = kNaN;             // lts__t_requests.avg.pct_of_peak_sustained_elapsed

  std::string display_name() const;  // "auto=merge-parallel", "csr-vector/bs=128"
};

// `spec` (a fmt format, e.g. "{:.4g}") applied to v; empty for NaN (a number not measured).
std::string format_number(double v, const char* spec);

// The row as (key, value) pairs in the order of a `spmv bench --json` result. Numbers not measured
// are NaN here; each front-end writes them once, in its own way (JSON null, Python NaN).
using FieldValue = std::variant<bool, std::int64_t, std::uint64_t, double, std::string>;
std::vector<std::pair<std::string_view, FieldValue>> row_fields(const BenchRow& r);

// The row as a JSON object (the "results" entries of a `spmv bench --json` report): row_fields with
// NaN written as null.
nlohmann::ordered_json row_json(const BenchRow& r);

// The statistics as JSON (the keys of `spmv info --json` and of the bench reports).
nlohmann::ordered_json stats_json(const MatrixStats& s);

// True for algorithms whose plan converts the matrix to another layout (a second copy).
bool converts_matrix(const std::string& algorithm);
// Fills break_even_products of the converting rows of one (matrix, precision) and, when `print`,
// prints one line per such row: setup_ms / (fastest direct CSR time - this time).
void add_break_even(std::vector<BenchRow>& rows, bool print = true);

// Human-readable table on stdout: header once per matrix and precision, then rows as they arrive.
// `storage_column`: f16 / bf16 tables, whose rows show storage_error against storage_bound ("vs f32").
void print_table_header(bool storage_column = false);
void print_table_row(const BenchRow& row);

}  // namespace spmv::bench
