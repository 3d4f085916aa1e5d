#pragma once
// What `spmv bench` records besides the engine's table (src/bench): CSV / JSON files holding every
// column of the result rows plus the matrix statistics and the run's provenance (device, bandwidth,
// date, commit, command line).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_row.hpp"
#include "spmv/stats.hpp"

namespace spmv::cli {

// The engine's result row and its field list (src/bench/bench_row.hpp), under the CLI's names.
using bench::BenchRow;
using bench::RowStatus;
using bench::stats_json;

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
