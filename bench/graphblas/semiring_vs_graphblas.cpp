// spmv_bench_semiring_vs_graphblas: spmv's CPU semiring products (spmv/semiring.hpp) against
// SuiteSparse:GraphBLAS's GrB_mxv with the same semiring, on the same matrix and x, f64 (issue 11's
// vendor comparison for semirings; docs/SEMIRINGS.md). Built when CMake finds GraphBLAS (Debian:
// libgraphblas-dev). Both run with the same thread count; each (matrix, semiring) pair is timed in
// interleaved rounds, keeping the minimum over rounds of the mean time per product; every GraphBLAS
// result is compared with spmv's (equal bit for bit for min and max; plus-times within the SpMV tests'
// per-row error bound; GraphBLAS leaves an empty row's entry absent, read as the semiring's zero).
//
//   spmv_bench_semiring_vs_graphblas [--rounds N] [--threads T] MATRIX...
//
// MATRIX: a Matrix Market file (.mtx or .mtx.gz) or a generator spec kind:key=value,... (as `spmv bench --gen`).
extern "C" {
#include <GraphBLAS.h>
}

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "../matrix_spec.hpp"
#include "spmv/csr.hpp"
#include "spmv/semiring.hpp"

namespace {

using Matrix = spmv::CsrMatrix<double, std::int32_t>;

void check(GrB_Info info, const char* call) {
  if (info != GrB_SUCCESS && info != GrB_NO_VALUE) {
    std::fprintf(stderr, "%s failed: GrB_Info %d\n", call, static_cast<int>(info));
    std::exit(2);
  }
}

struct Pair {
  spmv::Semiring ours;
  GrB_Semiring theirs;
};

template <class Work>
double ms_per_product(int iterations, Work&& work) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, threads = omp_get_max_threads();
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (arg == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else specs.push_back(arg);
  }
  if (specs.empty()) {
    std::fprintf(stderr, "usage: %s [--rounds N] [--threads T] MATRIX...\n", argv[0]);
    return 1;
  }
  check(GrB_init(GrB_BLOCKING), "GrB_init");
  check(GxB_Global_Option_set_INT32(GxB_GLOBAL_NTHREADS, threads), "GxB_Global_Option_set_INT32(GxB_GLOBAL_NTHREADS)");
  const Pair pairs[] = {{spmv::Semiring::PlusTimes, GrB_PLUS_TIMES_SEMIRING_FP64},
                        {spmv::Semiring::MinPlus, GrB_MIN_PLUS_SEMIRING_FP64},
                        {spmv::Semiring::MaxTimes, GrB_MAX_TIMES_SEMIRING_FP64},
                        {spmv::Semiring::MaxMin, GrB_MAX_MIN_SEMIRING_FP64}};
  int version[3] = {0, 0, 0};
  GxB_Global_Option_get_INT32(GxB_LIBRARY_VERSION, version);
  std::printf("SuiteSparse:GraphBLAS %d.%d.%d, %d threads for both, f64, min over %d interleaved rounds\n",
              version[0], version[1], version[2], threads, rounds);
  std::printf("%-44s %-11s %12s %12s %8s  %s\n", "matrix", "semiring", "spmv ms", "GraphBLAS ms", "speed-up", "check");
  int bad = 0;
  for (const auto& spec : specs) {
    const Matrix a = spmv::bench_tools::load_matrix_spec(spec);
    const auto n_rows = static_cast<GrB_Index>(a.rows), n_cols = static_cast<GrB_Index>(a.cols);
    std::vector<GrB_Index> ap(a.row_ptr.begin(), a.row_ptr.end()), ai(a.col_idx.begin(), a.col_idx.end());
    GrB_Matrix ga = nullptr;
    check(GrB_Matrix_import_FP64(&ga, GrB_FP64, n_rows, n_cols, ap.data(), ai.data(), a.values.data(), ap.size(),
                                 ai.size(), a.values.size(), GrB_CSR_FORMAT),
          "GrB_Matrix_import_FP64");
    std::vector<double> x(a.cols), y(a.rows), theirs(a.rows);
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = 0.5 + static_cast<double>((j * 2654435761u) % 1000) / 997.0;
    std::vector<GrB_Index> xi(x.size());
    for (std::size_t j = 0; j < xi.size(); ++j) xi[j] = j;
    GrB_Vector gu = nullptr, gw = nullptr;
    check(GrB_Vector_new(&gu, GrB_FP64, n_cols), "GrB_Vector_new");
    check(GrB_Vector_new(&gw, GrB_FP64, n_rows), "GrB_Vector_new");
    check(GrB_Vector_build_FP64(gu, xi.data(), x.data(), n_cols, GrB_PLUS_FP64), "GrB_Vector_build_FP64");
    const int iterations = std::max(1, static_cast<int>(2e7 / (static_cast<double>(a.nnz()) + 1)));
    for (const Pair& p : pairs) {
      const auto ours = [&] { spmv::semiring_multiply(p.ours, a, std::span<const double>(x), std::span(y), threads); };
      const auto vendor = [&] {
        check(GrB_mxv(gw, nullptr, nullptr, p.theirs, ga, gu, nullptr), "GrB_mxv");
        check(GrB_Vector_wait(gw, GrB_MATERIALIZE), "GrB_Vector_wait");
      };
      double best_ours = std::numeric_limits<double>::infinity(), best_theirs = best_ours;
      ours();
      vendor();
      for (int r = 0; r < rounds; ++r) {
        best_ours = std::min(best_ours, ms_per_product(iterations, ours));
        best_theirs = std::min(best_theirs, ms_per_product(iterations, vendor));
      }
      // The results: GraphBLAS's absent entries (empty rows) are the semiring's zero.
      std::fill(theirs.begin(), theirs.end(), spmv::semiring_zero<double>(p.ours));
      GrB_Index count = 0;
      check(GrB_Vector_nvals(&count, gw), "GrB_Vector_nvals");
      std::vector<GrB_Index> wi(count);
      std::vector<double> wx(count);
      check(GrB_Vector_extractTuples_FP64(wi.data(), wx.data(), &count, gw), "GrB_Vector_extractTuples_FP64");
      for (GrB_Index k = 0; k < count; ++k) theirs[wi[k]] = wx[k];
      // min and max: equal; plus-times: within the SpMV tests' per-row bound 2 (len + 2) eps sum |a_ij x_j|.
      const bool exact = p.ours != spmv::Semiring::PlusTimes;
      bool ok = true;
      for (std::int32_t i = 0; i < a.rows; ++i) {
        if (y[i] == theirs[i]) continue;
        double magnitude = 0;
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) magnitude += std::abs(a.values[k] * x[a.col_idx[k]]);
        const double bound = 2.0 * (a.row_ptr[i + 1] - a.row_ptr[i] + 2) * 0x1p-52 * magnitude;
        ok = ok && !exact && std::abs(y[i] - theirs[i]) <= bound;
      }
      bad += !ok;
      std::printf("%-44.44s %-11s %12.4f %12.4f %7.2fx  %s\n", spec.c_str(), std::string(spmv::to_string(p.ours)).c_str(),
                  best_ours, best_theirs, best_theirs / best_ours, ok ? (exact ? "equal" : "agree") : "DIFFER");
    }
    GrB_Vector_free(&gu);  // (GrB_free is a C11 _Generic macro, not C++)
    GrB_Vector_free(&gw);
    GrB_Matrix_free(&ga);
  }
  GrB_finalize();
  return bad ? 2 : 0;
}
