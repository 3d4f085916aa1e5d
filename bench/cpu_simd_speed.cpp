// spmv_bench_cpu_simd_speed: the CPU CSR kernels with the SIMD row kernels on and off (Options::cpu_simd),
// timed in CPU time as well as wall time, for machines shared with other work: CPU time per product
// (CLOCK_PROCESS_CPUTIME_ID, all threads) is not inflated by being descheduled, where wall time is.
// Run with OMP_WAIT_POLICY=passive so that threads waiting at a barrier do not spin CPU time away.
//
//   spmv_bench_cpu_simd_speed [rounds=5] [algorithms=row-loop,merge-parallel,dia]
//
// Prints, per matrix, precision, algorithm and SIMD setting, the best (minimum) over rounds of the
// per-product wall and CPU milliseconds; rounds alternate the settings so that both see the same load.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Best {
  double wall_ms = std::numeric_limits<double>::infinity();
  double cpu_ms = std::numeric_limits<double>::infinity();
};

template <class Value>
void run(const std::string& name, const spmv::CsrMatrix<double, std::int32_t>& m, const std::vector<spmv::Algorithm>& algos,
         int rounds) {
  const auto a = spmv::convert<Value, std::int32_t>(m);
  std::vector<Value> x(static_cast<std::size_t>(a.cols), Value(1)), y(static_cast<std::size_t>(a.rows));
  for (spmv::Algorithm algo : algos) {
    Best best[2];
    std::unique_ptr<spmv::Operator<Value, std::int32_t>> oper[2];
    try {
      for (int simd : {0, 1}) {
        spmv::Options options;
        options.cpu_simd = simd;
        oper[simd] = spmv::make_cpu_operator(a, algo, spmv::Operation::NonTranspose, options);
      }
    } catch (const spmv::Unsupported& e) {  // e.g. DIA on a matrix of scattered diagonals
      std::printf("%-28s %-4s %-15s refused: %s\n", name.c_str(), sizeof(Value) == 4 ? "f32" : "f64",
                  std::string(spmv::to_string(algo)).c_str(), e.what());
      continue;
    }
    // ~20 ms of products per sample.
    const int iterations = std::max<int>(1, static_cast<int>(2e7 / (static_cast<double>(a.nnz()) + 1)));
    for (int r = 0; r < rounds; ++r)
      for (int simd : {0, 1}) {
        oper[simd]->apply(Value(1), x, Value(0), y);  // warm
        const double c0 = cpu_seconds();
        const auto w0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) oper[simd]->apply(Value(1), x, Value(0), y);
        const double wall =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count() / iterations;
        const double cpu = (cpu_seconds() - c0) * 1e3 / iterations;
        best[simd].wall_ms = std::min(best[simd].wall_ms, wall);
        best[simd].cpu_ms = std::min(best[simd].cpu_ms, cpu);
      }
    std::printf("%-28s %-4s %-15s scalar wall %8.3f cpu %8.3f | simd wall %8.3f cpu %8.3f | speedup wall %.2fx cpu %.2fx  [%s]\n",
                name.c_str(), sizeof(Value) == 4 ? "f32" : "f64", std::string(spmv::to_string(algo)).c_str(),
                best[0].wall_ms, best[0].cpu_ms, best[1].wall_ms, best[1].cpu_ms, best[0].wall_ms / best[1].wall_ms,
                best[0].cpu_ms / best[1].cpu_ms, oper[1]->policy().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<spmv::Algorithm> algos{spmv::Algorithm::RowLoop, spmv::Algorithm::MergeParallel, spmv::Algorithm::Dia};
  if (argc > 2) {
    algos.clear();
    std::string list = argv[2];
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      if (auto a = spmv::parse_algorithm(list.substr(start, end - start))) algos.push_back(*a);
      start = end + 1;
    }
  }
  const std::pair<std::string, spmv::CsrMatrix<double, std::int32_t>> matrices[] = {
      {"poisson2d:n=1000", spmv::convert<double, std::int32_t>(spmv::gen::poisson2d(1000))},
      {"stencil27:n=60", spmv::convert<double, std::int32_t>(spmv::gen::stencil27(60))},
      {"rmat:scale=18,edge_factor=16", spmv::convert<double, std::int32_t>(spmv::gen::rmat(18, 16, 1))},
  };
  for (const auto& [name, m] : matrices) {
    run<float>(name, m, algos, rounds);
    run<double>(name, m, algos, rounds);
  }
}
