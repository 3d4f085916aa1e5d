// spmv_bench_semiring_cpu_kernels: the two CPU semiring kernels (spmv/semiring.hpp) against each other,
// the row loop (Algorithm::RowLoop) and the merge-path kernel (Algorithm::MergeParallel), with the
// statistic the Auto rule reads, to fit and check that rule (docs/SEMIRINGS.md, "The CPU kernels on
// power-law rows"), and, when asked for, the format kernels planned once against their one-shot calls.
//
//   spmv_bench_semiring_cpu_kernels [--rounds N] [--threads T,...] [--semirings NAME,...] [--sample-ms MS]
//                                   [--sell] [--formats NAME,...] MATRIX...
//
// MATRIX: a Matrix Market file or a generator spec kind:key=value,... (as `spmv bench --gen`), f64 values and
// 32-bit indices. For each matrix it prints the row statistics; for each thread count and semiring it
// checks that both kernels agree (min, max, or-and: the same values; plus-times: within the per-row
// bound 2 (len + 2) eps sum |a_ij x_j|), then times them in interleaved rounds (row loop, merge-path, row
// loop, ...), each sample the mean of enough products to last --sample-ms, and prints the min / median /
// max of the samples. Lines starting with RESULT are for bench/semiring_cpu_rule.py. With --formats (sell, ell,
// ellr, hyb, coo, dia; --sell is --formats sell), each format is checked and timed in the same rounds, twice:
// SemiringPlan::apply on the plan made once (<name>_ms: the kernel alone) and semiring_multiply's one-shot call,
// which converts every time (<name>_call_ms); <name>=refused when the conversion refuses the matrix.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "matrix_spec.hpp"
#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"
#include "spmv/semiring.hpp"

namespace {

using Matrix = spmv::CsrMatrix<double, std::int32_t>;

struct Spread {
  double min, median, max;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

// The statistic of the Auto rule (src/cpu/semiring_multiply.cpp), written out again so that the table
// shows it: rows + nonzeros of the heaviest 512-row chunk, over (rows + nnz) / threads.
double chunk_share(const Matrix& a, int threads) {
  std::int64_t heaviest = 0;
  for (std::int64_t b = 0; b < a.rows; b += 512) {
    const std::int64_t e = std::min<std::int64_t>(b + 512, a.rows);
    heaviest = std::max<std::int64_t>(heaviest, a.row_ptr[e] - a.row_ptr[b] + (e - b));
  }
  return a.rows == 0 ? 0.0 : static_cast<double>(heaviest) * threads / static_cast<double>(a.rows + a.nnz());
}

// Both kernels' y: equal (min, max, or-and; zeros of either sign equal, docs/SEMIRINGS.md), or within the
// per-row bound (plus-times).
bool agree(spmv::Semiring s, const Matrix& a, const std::vector<double>& x, const std::vector<double>& p,
           const std::vector<double>& q) {
  for (std::int32_t i = 0; i < a.rows; ++i) {
    if (p[i] == q[i] || (std::isnan(p[i]) && std::isnan(q[i]))) continue;
    if (s != spmv::Semiring::PlusTimes) return false;
    double magnitude = 0;
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) magnitude += std::abs(a.values[k] * x[a.col_idx[k]]);
    if (std::abs(p[i] - q[i]) > 2.0 * (a.row_ptr[i + 1] - a.row_ptr[i] + 2) * 0x1p-52 * magnitude) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  double sample_ms = 40;
  std::vector<int> thread_counts = {1, 2};
  std::vector<spmv::Semiring> semirings = {spmv::Semiring::MinPlus, spmv::Semiring::OrAnd, spmv::Semiring::PlusTimes};
  std::vector<std::string> specs;
  std::vector<spmv::Algorithm> formats;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--rounds" && has_value) {
      rounds = std::atoi(argv[++i]);
    } else if (arg == "--sample-ms" && has_value) {
      sample_ms = std::atof(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      thread_counts.clear();
      for (const auto& t : spmv::bench_tools::split(argv[++i], ',')) thread_counts.push_back(std::atoi(t.c_str()));
    } else if (arg == "--semirings" && has_value) {
      semirings.clear();
      for (const auto& name : spmv::bench_tools::split(argv[++i], ',')) {
        const auto s = spmv::parse_semiring(name);
        if (!s) {
          std::fprintf(stderr, "--semirings: '%s' is not one of %s\n", name.c_str(), spmv::semiring_names().c_str());
          return 1;
        }
        semirings.push_back(*s);
      }
    } else if (arg == "--sell") {
      formats.push_back(spmv::Algorithm::Sell);
    } else if (arg == "--formats" && has_value) {
      for (const auto& name : spmv::bench_tools::split(argv[++i], ',')) {
        const auto f = spmv::parse_algorithm(name);
        if (!f || f == spmv::Algorithm::Auto || f == spmv::Algorithm::RowLoop || f == spmv::Algorithm::MergeParallel) {
          std::fprintf(stderr, "--formats: '%s' is not one of sell, ell, ellr, hyb, coo, dia\n", name.c_str());
          return 1;
        }
        formats.push_back(*f);
      }
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      return 1;
    } else {
      specs.push_back(arg);
    }
  }
  if (specs.empty() || rounds < 1 || thread_counts.empty() ||
      std::any_of(thread_counts.begin(), thread_counts.end(), [](int t) { return t < 1; })) {
    std::fprintf(stderr,
                 "usage: %s [--rounds N>=1] [--threads T,...] [--semirings NAME,...] [--sample-ms MS] [--sell] "
                 "[--formats NAME,...] MATRIX...\n",
                 argv[0]);
    return 1;
  }
  int bad = 0;
  std::set<std::string> described;  // formats whose policy or refusal was printed for this matrix
  for (const auto& spec : specs) {
    described.clear();
    const Matrix a = spmv::bench_tools::load_matrix_spec(spec);
    double mean = a.rows ? static_cast<double>(a.nnz()) / a.rows : 0, var = 0;
    std::int64_t longest = 0, empty = 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
      const std::int64_t len = a.row_ptr[i + 1] - a.row_ptr[i];
      longest = std::max(longest, len);
      empty += len == 0;
      var += (len - mean) * (len - mean);
    }
    std::printf("# %s: %d rows, %d cols, %lld nnz; row length mean %.2f std %.2f max %lld (%.1f%% of nnz); %lld "
                "empty rows\n",
                spec.c_str(), a.rows, a.cols, static_cast<long long>(a.nnz()), mean,
                a.rows ? std::sqrt(var / a.rows) : 0.0, static_cast<long long>(longest),
                a.nnz() ? 100.0 * longest / a.nnz() : 0.0, static_cast<long long>(empty));
    std::vector<double> x(a.cols), y_rows(a.rows), y_merge(a.rows), y_format(a.rows);
    // Positive, 1 in 8 zero (or-and reads them as false).
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = j % 8 == 5 ? 0.0 : 0.5 + static_cast<double>((j * 2654435761u) % 1000) / 997.0;
    for (int threads : thread_counts) {
      const double share = chunk_share(a, threads);
      const auto chosen = spmv::semiring_cpu_algorithm(a, threads);
      for (spmv::Semiring s : semirings) {
        const auto run = [&](spmv::Algorithm algorithm, std::vector<double>& y) {
          spmv::semiring_multiply(s, a, std::span<const double>(x), std::span(y), threads, algorithm);
        };
        run(spmv::Algorithm::RowLoop, y_rows);
        run(spmv::Algorithm::MergeParallel, y_merge);
        bool ok = agree(s, a, x, y_rows, y_merge);
        // Each format planned once here (nullopt: the conversion refuses), checked through both routes.
        std::vector<std::optional<spmv::SemiringPlan<double, std::int32_t>>> plans;
        spmv::Options plan_options;
        plan_options.threads = threads;
        for (spmv::Algorithm f : formats) {
          try {
            plans.emplace_back(std::in_place, a, s, f, plan_options);
            plans.back()->apply(x, y_format);
            ok = ok && agree(s, a, x, y_rows, y_format);
            run(f, y_format);
            ok = ok && agree(s, a, x, y_rows, y_format);
            if (described.insert(std::string(spmv::to_string(f))).second)
              std::printf("# %s\n", plans.back()->policy().c_str());
          } catch (const spmv::Unsupported& e) {
            plans.emplace_back();
            if (described.insert(std::string(spmv::to_string(f))).second)
              std::printf("# %s refused: %s\n", std::string(spmv::to_string(f)).c_str(), e.what());
          }
        }
        bad += !ok;
        // Products per sample: from one timed product of the row loop.
        const auto t0 = std::chrono::steady_clock::now();
        run(spmv::Algorithm::RowLoop, y_rows);
        const double one = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const int iterations = std::max(1, static_cast<int>(sample_ms / std::max(one, 1e-4)));
        std::vector<double> rows_ms, merge_ms;
        std::vector<std::vector<double>> plan_ms(formats.size()), call_ms(formats.size());
        const auto timed = [&](const auto& product) {
          const auto start = std::chrono::steady_clock::now();
          for (int it = 0; it < iterations; ++it) product();
          return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                 iterations;
        };
        const auto sample = [&](spmv::Algorithm algorithm, std::vector<double>& y) {
          return timed([&] { run(algorithm, y); });
        };
        for (int r = 0; r < rounds; ++r) {
          rows_ms.push_back(sample(spmv::Algorithm::RowLoop, y_rows));
          merge_ms.push_back(sample(spmv::Algorithm::MergeParallel, y_merge));
          for (std::size_t f = 0; f < formats.size(); ++f) {
            if (!plans[f]) continue;
            plan_ms[f].push_back(timed([&] { plans[f]->apply(x, y_format); }));
            call_ms[f].push_back(sample(formats[f], y_format));
          }
        }
        const Spread p = spread(rows_ms), q = spread(merge_ms);
        std::string format_fields;
        for (std::size_t f = 0; f < formats.size(); ++f) {
          const std::string name(spmv::to_string(formats[f]));
          if (!plans[f]) {
            format_fields += " " + name + "=refused";
            continue;
          }
          const Spread k = spread(plan_ms[f]), c = spread(call_ms[f]);
          char buf[200];
          std::snprintf(buf, sizeof buf, " %s_ms=%.4f,%.4f,%.4f %s_call_ms=%.4f,%.4f,%.4f", name.c_str(), k.min,
                        k.median, k.max, name.c_str(), c.min, c.median, c.max);
          format_fields += buf;
        }
        std::printf("RESULT matrix=%s rows=%d nnz=%lld threads=%d semiring=%s share=%.4f auto=%s "
                    "rows_ms=%.4f,%.4f,%.4f merge_ms=%.4f,%.4f,%.4f speedup=%.3f%s check=%s\n",
                    spec.c_str(), a.rows, static_cast<long long>(a.nnz()), threads,
                    std::string(spmv::to_string(s)).c_str(), share,
                    chosen == spmv::Algorithm::MergeParallel ? "merge" : "rows", p.min, p.median, p.max, q.min,
                    q.median, q.max, p.median / q.median, format_fields.c_str(), ok ? "agree" : "DIFFER");
        std::fflush(stdout);
      }
    }
  }
  return bad ? 2 : 0;
}
