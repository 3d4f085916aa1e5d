#pragma once
// What `spmv bench` records and how it is shown: a table on stdout (one row per algorithm, printed as
// soon as it is measured), and CSV / JSON files holding every column plus the matrix statistics and
// the run's provenance (device, bandwidth, date, commit, command line).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spmv/stats.hpp"

namespace spmv::cli {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Facts of one `spmv bench` invocation.
struct RunInfo {
  std::string backend;           // "cpu" / "cuda"
  std::string device;            // CPU model or GPU name
  double bandwidth_gbs = 0;      // the 100 % of "% of bandwidth"
  std::string bandwidth_method;  // how it was obtained
  std::string date;              // ISO 8601, UTC
  std::string git_commit;        // empty when unknown
  std::string command_line;
};

struct MatrixInfo {
  std::string name;    // file stem or generator label
  std::string source;  // path or generator label
  MatrixStats stats;
};

enum class RowStatus { Ok, Failed, Skipped, Error };
std::string_view to_string(RowStatus s);

struct BenchRow {
  std::string precision;     // f32 / f64
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

  std::string display_name() const;  // "auto=merge-parallel", "csr-vector/bs=128"
};

// The statistics as JSON (the keys of `spmv info --json` and of the bench reports).
nlohmann::ordered_json stats_json(const MatrixStats& s);

// True for algorithms whose plan converts the matrix to another layout (a second copy).
bool converts_matrix(const std::string& algorithm);
// Fills break_even_products of the converting rows of one (matrix, precision) and, when `print`,
// prints one line per such row: setup_ms / (fastest direct CSR time - this time).
void add_break_even(std::vector<BenchRow>& rows, bool print = true);

// Human-readable table: header once per matrix, then rows as they arrive.
void print_table_header();
void print_table_row(const BenchRow& row);

// CSV with one line per row; the file is appended to, and its header must match ours.
class CsvReport {
 public:
  // Opens (creating or appending); throws UsageError when the file exists with another header.
  explicit CsvReport(const std::string& path);
  void add(const RunInfo& run, const MatrixInfo& matrix, const BenchRow& row);

 private:
  std::string path_;
  std::ofstream out_;
};

// JSON document {"format": "spmv-bench/1", "runs": [...]}: an existing file's runs are kept and this
// run is appended; the file is rewritten after every matrix so an interrupted suite keeps its results.
class JsonReport {
 public:
  JsonReport(const std::string& path, const RunInfo& run, const std::string& byte_model);
  void add_matrix(const MatrixInfo& matrix, const std::vector<BenchRow>& rows);

 private:
  void flush() const;
  std::string path_;
  nlohmann::ordered_json document_;
  std::size_t run_index_ = 0;
};

}  // namespace spmv::cli
