#include "spmm_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "bench_engine.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"
#include "spmv/spmm.hpp"

namespace spmv::bench {
namespace {

// Deterministic X and Y0 entries in [-1, 1) (splitmix64 of (seed, index)).
double unit_value(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
}

template <class Value>
struct Dense {
  std::vector<Value> data;
  DenseView<Value> view;
  Dense(std::int64_t rows, std::int64_t k, Layout layout) {
    data.resize(static_cast<std::size_t>(rows * k));
    view = layout == Layout::RowMajor ? row_major(data.data(), rows, k) : col_major(data.data(), rows, k);
  }
};

// The double reference of every entry of Y and its bound (see spmm_bench.hpp), entries in row-major
// order (i * k + j). A: rows in parallel, each row's k sums in order; A^T: one sequential scatter.
template <class Value, class Index>
void reference(const CsrMatrix<Value, Index>& a, Operation op, double alpha, const DenseView<const Value>& x,
               double beta, const DenseView<const Value>& y0, std::vector<double>& expected,
               std::vector<double>& bound) {
  const std::int64_t k = x.cols, y_rows = y0.rows;
  expected.assign(static_cast<std::size_t>(y_rows * k), 0.0);
  std::vector<double> magnitude(expected.size(), 0.0);
  if (op == Operation::NonTranspose) {
    const std::int64_t rows = a.rows;
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t r = 0; r < rows; ++r)
      for (Index p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
        for (std::int64_t j = 0; j < k; ++j) {
          const double t = static_cast<double>(a.values[p]) * static_cast<double>(x(a.col_idx[p], j));
          expected[r * k + j] += t;
          magnitude[r * k + j] += std::abs(t);
        }
  } else {
    for (Index r = 0; r < a.rows; ++r)
      for (Index p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
        for (std::int64_t j = 0; j < k; ++j) {
          const double t = static_cast<double>(a.values[p]) * static_cast<double>(x(r, j));
          expected[std::int64_t(a.col_idx[p]) * k + j] += t;
          magnitude[std::int64_t(a.col_idx[p]) * k + j] += std::abs(t);
        }
  }
  std::int64_t longest = 0;
  if (op == Operation::NonTranspose) {
    for (Index r = 0; r < a.rows; ++r) longest = std::max<std::int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  } else {
    std::vector<std::int64_t> length(static_cast<std::size_t>(a.cols), 0);
    for (Index c : a.col_idx) longest = std::max(longest, ++length[static_cast<std::size_t>(c)]);
  }
  const double c = 2.0 * static_cast<double>(longest + 2), eps = std::numeric_limits<Value>::epsilon();
  bound.resize(expected.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < y_rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const double y = beta == 0 ? 0.0 : static_cast<double>(y0(i, j));
      expected[i * k + j] = alpha * expected[i * k + j] + beta * y;
      bound[i * k + j] = c * eps * (std::abs(beta) * std::abs(y) + std::abs(alpha) * magnitude[i * k + j]);
    }
}

struct Step {
  SpmmKernel kernel;
  int variant;
};

}  // namespace

template <class Value, class Index>
std::vector<BenchRow> bench_spmm(const CsrMatrix<Value, Index>& a, const SpmmBenchSettings& s) {
  const std::int64_t k = s.k;
  const bool transpose = s.op == Operation::Transpose;
  const std::int64_t x_rows = transpose ? a.rows : a.cols, y_rows = transpose ? a.cols : a.rows;
  Dense<Value> x(x_rows, k, s.layout), y0(y_rows, k, s.layout);
  for (std::int64_t i = 0; i < x_rows; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      x.view(i, j) = static_cast<Value>(unit_value(0x5eed0001, static_cast<std::uint64_t>(i * k + j)));
  for (std::int64_t i = 0; i < y_rows; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      y0.view(i, j) = s.beta == 0 ? std::numeric_limits<Value>::quiet_NaN()
                                  : static_cast<Value>(unit_value(0x5eed0002, static_cast<std::uint64_t>(i * k + j)));
  const Value alpha = static_cast<Value>(s.alpha), beta = static_cast<Value>(s.beta);
  std::vector<double> expected, bound;
  reference(a, s.op, static_cast<double>(alpha), DenseView<const Value>(x.view), static_cast<double>(beta),
            DenseView<const Value>(y0.view), expected, bound);

  std::vector<Step> steps;
  if (s.backend == Backend::Cuda) {
    for (int v = 0; v < kVendorSpmmVariants; ++v) steps.push_back({SpmmKernel::Vendor, v});
  } else {
    steps.push_back({SpmmKernel::ColumnSpmv, 0});
  }
  steps.push_back({SpmmKernel::Spmm, 0});

  const std::uint64_t bytes = spmm_minimal_bytes(a.rows, a.cols, a.nnz(), k, sizeof(Value), sizeof(Index), s.op,
                                                 s.beta != 0);
  const std::string shape = fmt::format("k={} {}", k, to_string(s.layout));
  std::vector<BenchRow> rows;
  double best_baseline = std::numeric_limits<double>::infinity();
  std::string best_baseline_name;
  for (const Step& step : steps) {
    BenchRow row;
    row.precision = std::is_same_v<Value, float> ? "f32" : "f64";
    row.index_type = sizeof(Index) == 4 ? "int32" : "int64";
    row.op = transpose ? "T" : "N";
    row.alpha = s.alpha;
    row.beta = s.beta;
    row.model_bytes = bytes;
    const bool baseline = step.kernel != SpmmKernel::Spmm;
    row.vendor = step.kernel == SpmmKernel::Vendor;
    try {
      auto oper = make_spmm_operator(s.backend, a, s.op, step.kernel, s.options, step.variant);
      row.algorithm = row.resolved = oper->name();
      row.setup_ms = oper->setup_ms();
      Dense<Value> y = y0;
      y.view.data = y.data.data();
      // Our rows start from NaN when beta == 0 (they must not read Y). cuSPARSE's SpMM documentation
      // makes no such promise, so its rows start from zeros: a NaN it carried over would otherwise fail
      // the baseline rather than say anything about its speed.
      if (s.beta == 0 && step.kernel == SpmmKernel::Vendor) std::fill(y.data.begin(), y.data.end(), Value(0));
      oper->apply(alpha, DenseView<const Value>(x.view), beta, y.view);
      row.policy = shape + "; " + oper->policy(k, s.layout);
      double worst = 0, max_abs = 0, worst_error = 0;
      std::int64_t worst_at = -1;
      for (std::int64_t i = 0; i < y_rows; ++i)
        for (std::int64_t j = 0; j < k; ++j) {
          const std::size_t e = static_cast<std::size_t>(i * k + j);
          const double err = std::abs(static_cast<double>(y.view(i, j)) - expected[e]);
          const double ratio = std::isnan(err)                 ? std::numeric_limits<double>::infinity()
                               : err == 0                      ? 0.0
                               : bound[e] > 0                  ? err / bound[e]
                                                               : std::numeric_limits<double>::infinity();
          max_abs = std::isnan(err) ? err : std::max(max_abs, err);
          if (ratio > worst) {
            worst = ratio;
            worst_error = err;
            worst_at = static_cast<std::int64_t>(e);
          }
        }
      row.error_ratio = worst;
      row.max_abs_error = max_abs;
      if (worst > 1.0) {
        row.status = RowStatus::Failed;
        const std::size_t e = static_cast<std::size_t>(worst_at);
        row.message = fmt::format("Y({}, {}): error {:.3g} > bound {:.3g} (expected {:.17g})", worst_at / k,
                                  worst_at % k, worst_error, bound[e], expected[e]);
      } else {
        Dense<Value> y_time = y;  // the verified product's output: finite values to start from
        y_time.view.data = y_time.data.data();
        const Timing t = oper->time(alpha, DenseView<const Value>(x.view), beta, y_time.view, s.timing);
        record_timing(row, t, static_cast<double>(a.nnz()) * static_cast<double>(k), static_cast<double>(bytes),
                      s.bandwidth_gbs);
        if (baseline && t.median_ms < best_baseline) {
          best_baseline = t.median_ms;
          best_baseline_name = row.algorithm;
        }
      }
    } catch (const Unsupported& e) {
      row.status = RowStatus::Skipped;
      row.message = e.what();
    } catch (const Error& e) {  // e.g. a cuSPARSE algorithm that refuses this layout or operation
      row.status = RowStatus::Skipped;
      row.message = e.what();
    }
    if (row.algorithm.empty())
      row.algorithm = row.resolved = step.kernel == SpmmKernel::Vendor ? fmt::format("vendor-spmm-{}", step.variant)
                                     : step.kernel == SpmmKernel::ColumnSpmv ? "k-spmv" : "spmm";
    rows.push_back(std::move(row));
  }
  for (BenchRow& row : rows)
    if (row.status == RowStatus::Ok && std::isfinite(best_baseline) && row.median_ms > 0) {
      row.speedup_vs_vendor = best_baseline / row.median_ms;
      row.vendor_baseline = best_baseline_name;
    }
  if (s.print_rows)
    for (const BenchRow& row : rows) {
      print_table_row(row);
      if (row.status != RowStatus::Ok && !row.message.empty())
        fmt::print(stderr, "  {}: {}: {}\n", row.algorithm, to_string(row.status), row.message);
    }
  return rows;
}

#define SPMV_INSTANTIATE(V, I) \
  template std::vector<BenchRow> bench_spmm(const CsrMatrix<V, I>&, const SpmmBenchSettings&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::bench
