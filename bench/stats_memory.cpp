// Peak host memory and time of compute_stats on a generated matrix (issue 18: its symmetry test
// once held a transposed copy, doubling the peak of `spmv bench --gen` on the host).
//
//   spmv_bench_stats_memory KIND:key=value,... [f32|f64]     e.g. poisson3d:n=250 f32
//
// Prints the matrix bytes, the process's peak resident set after generating and computing the
// statistics (getrusage ru_maxrss), their ratio, and the seconds compute_stats took.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "spmv/generators.hpp"
#include "spmv/stats.hpp"

namespace {

template <class Value>
int run(const std::string& kind, const std::map<std::string, double>& params) {
  const auto a = spmv::gen::generate<Value, std::int64_t>(kind, params);
  const auto start = std::chrono::steady_clock::now();
  const spmv::MatrixStats s = spmv::compute_stats(a);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double matrix = double(a.row_ptr.size() + a.col_idx.size()) * sizeof(std::int64_t) + double(a.values.size()) * sizeof(Value);
  const double peak = double(usage.ru_maxrss) * 1024.0;  // Linux: kilobytes
  std::printf("%s %s/i64: %lld nonzeros, matrix %.3f GB, peak %.3f GB (%.2fx), compute_stats %.2f s (symmetric: %s)\n",
              kind.c_str(), sizeof(Value) == 4 ? "f32" : "f64", static_cast<long long>(s.nnz), matrix / 1e9, peak / 1e9,
              peak / matrix, seconds, s.numerically_symmetric ? "yes" : "no");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s KIND:key=value,... [f32|f64]\n", argv[0]);
    return 1;
  }
  const std::string spec = argv[1];
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  std::map<std::string, double> params;
  for (std::size_t at = colon; at != std::string::npos && at + 1 < spec.size();) {
    const std::size_t next = spec.find(',', at + 1);
    const std::string item = spec.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "spmv_bench_stats_memory: '%s' is not key=value\n", item.c_str());
      return 1;
    }
    params[item.substr(0, eq)] = std::atof(item.c_str() + eq + 1);
    at = next;
  }
  const bool f64 = argc > 2 && std::string(argv[2]) == "f64";
  return f64 ? run<double>(kind, params) : run<float>(kind, params);
}
