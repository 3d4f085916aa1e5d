// spmv_bench_cpu_vs_vendor: the CPU backend's Auto, with and without the expected-applies hint, and
// chosen algorithms against the vendor baselines (MKL when built with SPMV_WITH_MKL, Eigen), for
// machines shared with other work (issue 17, docs/PERFORMANCE.md): every operator of a matrix is timed
// in interleaved rounds so that all see the same load, and both the wall time and the CPU time per
// product (CLOCK_PROCESS_CPUTIME_ID, all threads; not inflated by being descheduled) are kept as the
// minimum over rounds. Run with OMP_WAIT_POLICY=passive when using several threads.
//
//   spmv_bench_cpu_vs_vendor [--rounds N] [--applies N] [--algos a,b,...] [--csv FILE] MATRIX...
//
// MATRIX: a Matrix Market file (.mtx or .mtx.gz) or a generator spec kind:key=value,... (as `spmv bench
// --gen`). Algorithms: any name `spmv bench --algo` takes, plus auto-hint (Auto with
// Options::expected_applies = --applies, default 1000: the count MKL's mv hint is given) and auto-scalar
// (Auto with Options::cpu_simd = 0: the plain scalar loops, the forced fallback), auto-lanes and
// auto-vector (Auto without the hint, its CSR plan with the row kernel Options::cpu_rows forced to rows
// in lanes or a vector per row), mkl (MKL given the same --applies hint: mkl_sparse_set_mv_hint and
// mkl_sparse_optimize) and mkl-plain (MKL without a hint, as Auto without one); NAME@C sets Options::sell_c (sell@16: SELL with slices of 16 rows). Each sample
// runs ~20 ms of products y = A x (f32 and f64 values, int32 indices). Matrix statistics are printed first.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "matrix_spec.hpp"
#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/host_memory.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/operator.hpp"
#include "spmv/stats.hpp"

namespace {

using Matrix = spmv::CsrMatrix<double, std::int32_t>;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

using spmv::bench_tools::split;

template <class Value>
struct Entry {
  std::string name;  // as given on the command line
  std::unique_ptr<spmv::Operator<Value, std::int32_t>> oper;
  double wall_ms = std::numeric_limits<double>::infinity();
  double cpu_ms = std::numeric_limits<double>::infinity();
  double setup_ms = 0;
  std::string policy, refused;
};

template <class Value>
void run(const std::string& label, const Matrix& m, const std::vector<std::string>& algos, std::int64_t applies,
         int rounds, std::FILE* csv) {
  const auto a = spmv::convert<Value, std::int32_t>(m);
  // on huge pages from 4 MiB, as numpy's arrays (spmv/host_memory.hpp)
  auto x = spmv::vector_on_huge_pages<Value>(static_cast<std::size_t>(a.cols));
  auto y = spmv::vector_on_huge_pages<Value>(static_cast<std::size_t>(a.rows));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = Value(1) + Value(i % 7) / Value(8);
  std::vector<Entry<Value>> entries(algos.size());
  for (std::size_t e = 0; e < algos.size(); ++e) {
    Entry<Value>& entry = entries[e];
    entry.name = algos[e];
    spmv::Options options;
    const bool hint = algos[e] == "auto-hint", scalar = algos[e] == "auto-scalar";
    const bool lanes = algos[e] == "auto-lanes", vector = algos[e] == "auto-vector";
    const bool mkl_plain = algos[e] == "mkl-plain";
    if (hint || algos[e] == "mkl") options.expected_applies = applies;
    if (scalar) options.cpu_simd = 0;
    if (lanes || vector) options.cpu_rows = lanes ? 2 : 3;
    std::string name = algos[e];
    if (const auto at = name.find('@'); at != std::string::npos) {  // sell@16: SELL with C = 16
      options.sell_c = std::atoi(name.c_str() + at + 1);
      name.resize(at);
    }
    const auto algo = hint || scalar || lanes || vector ? std::optional(spmv::Algorithm::Auto)
                      : mkl_plain                        ? std::optional(spmv::Algorithm::Mkl)
                                                         : spmv::parse_algorithm(name);
    if (!algo) {
      entry.refused = "unknown algorithm";
      continue;
    }
    try {
      entry.oper = spmv::make_cpu_operator(a, *algo, spmv::Operation::NonTranspose, options);
      entry.setup_ms = entry.oper->setup_ms();
      entry.policy = entry.oper->policy();
    } catch (const spmv::Error& ex) {
      entry.refused = ex.what();
    }
  }
  const int iterations = std::max<int>(1, static_cast<int>(2e7 / (static_cast<double>(a.nnz()) + 1)));
  for (int r = 0; r < rounds; ++r)
    for (auto& entry : entries) {
      if (!entry.oper) continue;
      auto& oper = entry.oper;
      oper->apply(Value(1), x, Value(0), y);  // warm
      const double c0 = cpu_seconds();
      const auto w0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i) oper->apply(Value(1), x, Value(0), y);
      const double wall =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count() / iterations;
      entry.wall_ms = std::min(entry.wall_ms, wall);
      entry.cpu_ms = std::min(entry.cpu_ms, (cpu_seconds() - c0) * 1e3 / iterations);
    }
  const char* prec = sizeof(Value) == 4 ? "f32" : "f64";
  for (const auto& entry : entries) {
    if (entry.oper) {
      std::printf("%-34s %s %-14s wall %9.4f ms cpu %9.4f ms setup %8.3f ms  [%s]\n", label.c_str(), prec,
                  entry.name.c_str(), entry.wall_ms, entry.cpu_ms, entry.setup_ms, entry.policy.c_str());
      if (csv)
        std::fprintf(csv, "\"%s\",%s,%lld,%lld,%s,%.6f,%.6f,%.6f,\"%s\"\n", label.c_str(), prec,
                     static_cast<long long>(a.rows), static_cast<long long>(a.nnz()), entry.name.c_str(),
                     entry.wall_ms, entry.cpu_ms, entry.setup_ms, entry.policy.c_str());
    } else {
      std::printf("%-34s %s %-14s refused: %s\n", label.c_str(), prec, entry.name.c_str(), entry.refused.c_str());
    }
  }
  std::fflush(stdout);
}

}  // namespace

int run_all(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    return run_all(argc, argv);
  } catch (const std::exception& e) {  // a bad spec or file: say which, do not abort
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}

int run_all(int argc, char** argv) {
  int rounds = 5;
  std::int64_t applies = 1000;
  std::vector<std::string> algos{"auto", "auto-hint", "mkl", "eigen"};
  std::vector<std::string> specs;
  std::FILE* csv = nullptr;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (arg == "--applies" && i + 1 < argc) applies = std::atoll(argv[++i]);
    else if (arg == "--algos" && i + 1 < argc) algos = split(argv[++i], ',');
    else if (arg == "-h" || arg == "--help") help = true;
    else if (arg == "--csv" && i + 1 < argc) {
      csv = std::fopen(argv[++i], "w");
      if (csv) std::fprintf(csv, "matrix,precision,rows,nnz,algorithm,wall_ms,cpu_ms,setup_ms,policy\n");
    } else specs.push_back(arg);
  }
  if (specs.empty() || help) {
    std::fprintf(help ? stdout : stderr, "usage: %s [--rounds N] [--applies N] [--algos a,b] [--csv FILE] MATRIX...\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  for (const auto& spec : specs) {
    const Matrix m = spmv::bench_tools::load_matrix_spec(spec);
    std::string label = spec.substr(spec.find_last_of('/') + 1);
    if (const auto dot = label.find(".mtx"); dot != std::string::npos) label = label.substr(0, dot);
    const spmv::MatrixStats st = spmv::compute_stats(m);
    std::printf("%s: rows %lld cols %lld nnz %lld row mean %.2f std %.2f max %lld empty %lld diagonals %lld\n",
                label.c_str(), static_cast<long long>(st.rows), static_cast<long long>(st.cols),
                static_cast<long long>(st.nnz), st.row_mean, st.row_std, static_cast<long long>(st.row_max),
                static_cast<long long>(st.empty_rows), static_cast<long long>(st.diagonals));
    run<float>(label, m, algos, applies, rounds, csv);
    run<double>(label, m, algos, applies, rounds, csv);
  }
  if (csv) std::fclose(csv);
  return 0;
}
