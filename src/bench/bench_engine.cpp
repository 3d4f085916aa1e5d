#include "bench_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "byte_model.hpp"
#include "core/phase_log.hpp"
#include "solvers/cpu_vector_ops.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"

namespace spmv::bench {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::F32: return "f32";
    case Precision::F64: return "f64";
    case Precision::F16: return "f16";
    case Precision::Bf16: return "bf16";
  }
  return "unknown";
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (Precision p : {Precision::F32, Precision::F64, Precision::F16, Precision::Bf16})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

ValueStorage value_storage(Precision p) {
  return p == Precision::F16 ? ValueStorage::F16 : p == Precision::Bf16 ? ValueStorage::Bf16 : ValueStorage::Native;
}

BenchSettings settings_for(BenchSettings s, Precision p) {
  s.options.values = value_storage(p);
  return s;
}

std::vector<Algorithm> select_algorithms(const std::vector<std::string>& names, Backend backend, Operation op) {
  const auto offered = backend_algorithms(backend, op);
  std::vector<Algorithm> chosen;
  auto add = [&](Algorithm a) {
    if (std::find(chosen.begin(), chosen.end(), a) == chosen.end()) chosen.push_back(a);
  };
  if (names.empty()) {
    add(Algorithm::Auto);
    for (Algorithm a : offered)
      if (is_vendor(a)) add(a);
  }
  for (const std::string& name : names) {
    if (name == "all") {
      for (Algorithm a : offered) add(a);
      continue;
    }
    const auto a = parse_algorithm(name);
    if (!a) {
      std::string valid = "all, auto, tune";
      for (Algorithm b : all_algorithms()) valid += ", " + std::string(to_string(b));
      throw InvalidArgument("unknown algorithm '" + name + "'; valid names: " + valid);
    }
    add(*a);
  }
  std::stable_partition(chosen.begin(), chosen.end(), [](Algorithm a) { return is_vendor(a); });
  return chosen;
}

namespace {

// Allocates without value-initialising: resize() leaves the entries unwritten, so that the parallel
// loop that writes them touches the pages first (the page faults spread over the threads) instead of
// a serial memset (issue 18: the verification's vectors hold 343 M entries at poisson3d n = 700).
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using HostVector = std::vector<T, DefaultInitAllocator<T>>;

// Deterministic values in [-1, 1) rounded to Value (pseudo_random_vector for double), with no double
// vector in between. splitmix64 (Steele, Lea & Flood 2014): cheap, full-period, identical on every
// platform. Its state after i + 1 steps is seed + (i + 1) * gamma, so entry i is computed on its own
// and OpenMP threads fill the vector with the sequential generator's values.
template <class Vector>
Vector pseudo_random_values(std::size_t n, std::uint64_t seed) {
  using Value = typename Vector::value_type;
  Vector v(n);
  const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t z = seed + (static_cast<std::uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v[i] = static_cast<Value>(static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0);  // 53 random bits -> [0, 2) -> [-1, 1)
  }
  return v;
}

// y before a verified product (refilled for every algorithm, in parallel: 343 M entries at poisson3d
// n = 700): NaN when beta == 0, which must overwrite y without reading it (STYLE.md §9), else y0.
template <class Value>
void start_y(HostVector<Value>& y, const HostVector<Value>& y0, double beta) {
  y.resize(y0.size());
  if (beta == 0.0)
    solvers::cpu::fill(std::span<Value>(y), std::numeric_limits<Value>::quiet_NaN());
  else
    solvers::cpu::copy(std::span<const Value>(y0), std::span<Value>(y));
}

}  // namespace

std::vector<double> pseudo_random_vector(std::size_t n, std::uint64_t seed) {
  return pseudo_random_values<std::vector<double>>(n, seed);
}

bool has_block_size(Backend backend, Algorithm algorithm) {
  return backend == Backend::Cuda && !is_vendor(algorithm);
}

int planned_rows(const BenchSettings& s) {
  int rows = 0;
  for (Algorithm a : s.algorithms)
    rows += s.sweep && has_block_size(s.backend, a) ? static_cast<int>(s.block_sizes.size()) : 1;
  return rows + (s.lma ? 1 : 0);
}

namespace {

// The double-precision reference over the stored values, widened entry by entry: y_i = beta*y0_i +
// alpha*sum_j a_ij*x_j and m_i = sum_j |a_ij*x_j| in double, with no widened copy of the matrix (a
// float matrix of 2^31 nonzeros would need another 25 GB). The products are those of
// convert<double, I>(a) (every float is a double), so this equals cpu::reference on the widened
// matrix. A x: rows in parallel (each row summed in order, so the result does not depend on the
// threads); A^T x: one sequential scatter, as in cpu::reference. With half storage each value is first
// rounded by round_to_storage, the map round_values applies: the reference of round_values(a, s),
// again without a copy.
template <class Value, class Index>
void widened_reference(const CsrMatrix<Value, Index>& a, Operation op, double alpha, std::span<const Value> x,
                       double beta, std::span<const Value> y0, ValueStorage storage, HostVector<double>& expected,
                       HostVector<double>& magnitude) {
  // A predictable branch per nonzero; the loop is bound by reading the matrix.
  const auto value_of = [storage](Value v) {
    if constexpr (std::is_same_v<Value, float>)
      if (storage != ValueStorage::Native) return static_cast<double>(round_to_storage(v, storage));
    return static_cast<double>(v);
  };
  {
    const detail::PhaseLog phase("reference/validate");
    validate(a);
  }
  const std::size_t y_len = y0.size();
  expected.resize(y_len);  // written below, first by the threads that compute them
  magnitude.resize(y_len);
  const auto combine = [&](std::size_t i, double s) {
    return beta == 0 ? alpha * s : alpha * s + beta * static_cast<double>(y0[i]);
  };
  if (op == Operation::NonTranspose) {
    const auto rows = static_cast<std::int64_t>(a.rows);
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::int64_t r = 0; r < rows; ++r) {
      double s = 0, m = 0;
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const double p = value_of(a.values[k]) * static_cast<double>(x[a.col_idx[k]]);
        s += p;
        m += std::abs(p);
      }
      expected[r] = combine(r, s);
      magnitude[r] = m;
    }
    return;
  }
  HostVector<double>& s = expected;  // column sums, combined in place below
  std::fill(s.begin(), s.end(), 0.0);
  std::fill(magnitude.begin(), magnitude.end(), 0.0);
  for (Index r = 0; r < a.rows; ++r)
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const double p = value_of(a.values[k]) * static_cast<double>(x[r]);
      s[a.col_idx[k]] += p;
      magnitude[a.col_idx[k]] += std::abs(p);
    }
  for (std::size_t i = 0; i < y_len; ++i) s[i] = combine(i, s[i]);
}

}  // namespace

void record_timing(BenchRow& row, const Timing& t, double multiply_adds, double bytes, double bandwidth_gbs) {
  row.median_ms = t.median_ms;
  row.min_ms = t.min_ms;
  row.max_ms = t.max_ms;
  row.repetitions = t.repetitions;
  row.iterations = t.iterations;
  const double seconds = t.median_ms * 1e-3;
  if (seconds > 0) {
    row.gflops = 2.0 * multiply_adds / seconds / 1e9;
    row.gbs = bytes / seconds / 1e9;
    if (bandwidth_gbs > 0) row.pct_bandwidth = 100.0 * row.gbs / bandwidth_gbs;
  }
}

namespace {

// One product's inputs and the per-entry acceptance bound, built once per matrix and precision.
// The reference runs on the Value-rounded data widened to double, so the only error measured is the
// algorithm's own summation error, bounded per entry i of op(A) (Higham §3.1, with slack for
// reordered and split sums): |y_i - ref_i| <= c*eps*(|beta|*|y0_i| + |alpha|*sum_j |a_ij*x_j|),
// c = 2*(longest row of op(A) + 2), eps = machine epsilon of Value. Host memory beyond the matrix:
// x and y0 in Value, expected and bound in double (the magnitudes become the bound in place).
// Half storage: "Value-rounded" means rounded to the storage (the reference of round_values(a, s),
// still under float's eps), and the unrounded matrix's reference is kept too, with the scale
// |beta||y0_i| + |alpha| sum_j |a_ij x_j| that the storage error divides by. Its bound: |a - fl(a)| <=
// u|a| adds at most u*scale_i, and the summation bound over the rounded values is at most
// c*eps*(1 + u)*scale_i, so storage_bound = u + c*eps*(1 + u) (for values in the storage's normal range).
template <class Value, class Index>
struct Problem {
  Value alpha, beta;
  HostVector<Value> x, y0;
  HostVector<double> expected, bound;
  HostVector<double> unrounded_expected, unrounded_scale;  // half storage only
  HostVector<double> unrounded_bound;  // half storage: the f32 bound of the unrounded product (vendor rows)
  double storage_bound = kNaN;                             // half storage only

  Problem(const CsrMatrix<Value, Index>& a, Operation op, double alpha_in, double beta_in,
          ValueStorage storage = ValueStorage::Native)
      : alpha(static_cast<Value>(alpha_in)), beta(static_cast<Value>(beta_in)) {
    const bool transpose = op == Operation::Transpose;
    const auto x_len = static_cast<std::size_t>(transpose ? a.rows : a.cols);
    const auto y_len = static_cast<std::size_t>(transpose ? a.cols : a.rows);
    detail::PhaseLog phase("reference/vectors");
    x = pseudo_random_values<HostVector<Value>>(x_len, 0x5eed0001);
    y0 = pseudo_random_values<HostVector<Value>>(y_len, 0x5eed0002);

    const double ad = static_cast<double>(alpha), bd = static_cast<double>(beta);
    phase.next("reference/products");
    widened_reference(a, op, ad, std::span<const Value>(x), bd, std::span<const Value>(y0), storage, expected, bound);
    const bool half = storage != ValueStorage::Native;
    if (half) {
      phase.next("reference/unrounded products");
      widened_reference(a, op, ad, std::span<const Value>(x), bd, std::span<const Value>(y0), ValueStorage::Native,
                        unrounded_expected, unrounded_scale);
    }

    phase.next("reference/bound");
    std::int64_t longest = 0;
    if (!transpose) {
      const std::int64_t rows = a.rows;
#pragma omp parallel for schedule(static) reduction(max : longest)
      for (std::int64_t r = 0; r < rows; ++r)
        longest = std::max<std::int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
    } else {
      std::vector<std::int64_t> column_length(static_cast<std::size_t>(a.cols), 0);
      for (Index c : a.col_idx) longest = std::max(longest, ++column_length[static_cast<std::size_t>(c)]);
    }
    const double c = 2.0 * static_cast<double>(longest + 2);
    const double eps = std::numeric_limits<Value>::epsilon();
    const auto n = static_cast<std::int64_t>(y_len);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const double y_term = bd == 0 ? 0.0 : std::abs(bd) * std::abs(static_cast<double>(y0[i]));
      bound[i] = c * eps * (y_term + std::abs(ad) * bound[i]);
      if (half) unrounded_scale[i] = y_term + std::abs(ad) * unrounded_scale[i];
    }
    if (half) {
      const double u = storage_unit_roundoff(storage);
      storage_bound = u + c * eps * (1 + u);
      unrounded_bound.resize(y_len);
      for (std::size_t i = 0; i < y_len; ++i) unrounded_bound[i] = c * eps * unrounded_scale[i];
    }
  }
};

struct Check {
  double ratio = 0;  // max over entries of error / bound
  double max_abs_error = 0;
  std::size_t worst = 0;
  bool ok = true;
};

// The largest error / bound and its first entry, by OpenMP threads over static ranges; the merge keeps
// the larger ratio and, on a tie, the smaller entry, so the answer is the sequential scan's for any
// thread count.
template <class Value>
Check check_result(std::span<const Value> y, std::span<const double> expected, std::span<const double> bound) {
  Check c;
  const auto n = static_cast<std::int64_t>(y.size());
#pragma omp parallel
  {
    Check local;
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) {
      const double err = std::abs(static_cast<double>(y[i]) - expected[i]);
      // NaN compares false everywhere: treat it as an infinite error.
      const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity()
                           : err == 0      ? 0.0
                           : bound[i] > 0  ? err / bound[i]
                                           : std::numeric_limits<double>::infinity();
      if (std::isnan(err) || std::isnan(local.max_abs_error))
        local.max_abs_error = kNaN;  // once NaN, stays NaN
      else
        local.max_abs_error = std::max(local.max_abs_error, err);
      if (ratio > local.ratio) {
        local.ratio = ratio;
        local.worst = static_cast<std::size_t>(i);
      }
    }
#pragma omp critical(spmv_check_result)
    {
      if (std::isnan(local.max_abs_error) || std::isnan(c.max_abs_error))
        c.max_abs_error = kNaN;
      else
        c.max_abs_error = std::max(c.max_abs_error, local.max_abs_error);
      if (local.ratio > c.ratio || (local.ratio == c.ratio && local.ratio > 0 && local.worst < c.worst)) {
        c.ratio = local.ratio;
        c.worst = local.worst;
      }
    }
  }
  c.ok = c.ratio <= 1.0;
  return c;
}

struct Step {
  Algorithm algorithm;
  int block_size;  // 0: the algorithm's own
};

}  // namespace

template <class Value, class Index>
std::vector<BenchRow> bench_matrix(const CsrMatrix<Value, Index>& a, const BenchSettings& s, const std::string& label,
                                   Progress& progress) {
  const ValueStorage storage = s.options.values;
  const bool half = storage != ValueStorage::Native;
  if (half && !std::is_same_v<Value, float>)
    throw InvalidArgument("bench_matrix: " + std::string(to_string(storage)) +
                          " value storage runs a float matrix (fp32 x, y and sums), not a double one");
  const std::string precision(half ? to_string(storage) : sizeof(Value) == 4 ? "f32" : "f64");
  const Problem<Value, Index> problem(a, s.op, s.alpha, s.beta, storage);
  const std::int64_t nnz = a.nnz();
  const std::size_t stored_value_size = half ? 2 : sizeof(Value);  // fp16 and bfloat16: 2 bytes
  const std::uint64_t bytes =
      minimal_bytes(a.rows, a.cols, nnz, stored_value_size, sizeof(Value), sizeof(Index), s.op, s.beta != 0.0);
  // cuSPARSE's mixed mode rounds x as well (its A and x share one type), so with half storage the vendor
  // rows run cuSPARSE's f32 product of the same matrix and vectors: the product a user would otherwise
  // run. They are verified against the unrounded reference and count 4-byte values.
  const std::uint64_t vendor_bytes =
      half ? minimal_bytes(a.rows, a.cols, nnz, sizeof(Value), sizeof(Value), sizeof(Index), s.op, s.beta != 0.0)
           : bytes;

  std::vector<Step> steps;
  for (Algorithm alg : s.algorithms) {
    if (s.sweep && has_block_size(s.backend, alg))
      for (int bs : s.block_sizes) steps.push_back({alg, bs});
    else
      steps.push_back({alg, 0});
  }
  const auto vendor_steps = static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const Step& st) { return is_vendor(st.algorithm); }));

  std::vector<BenchRow> rows;
  HostVector<Value> y;  // the product's output, one vector for every step (filled in parallel)
  std::size_t printed = 0;
  double best_vendor_ms = kNaN;
  std::string best_vendor;

  for (std::size_t k = 0; k < steps.size(); ++k) {
    const Step& step = steps[k];
    ++progress.done;
    const std::string requested(to_string(step.algorithm));
    if (!s.quiet)
      fmt::print(stderr, "[{}/{}] {}{} ({}, {}) ...\n", progress.done, progress.total, requested,
                 step.block_size ? fmt::format(" bs={}", step.block_size) : std::string(), label, precision);

    BenchRow row;
    row.precision = precision;
    row.index_type = sizeof(Index) == 4 ? "int32" : "int64";
    row.op = std::string(to_string(s.op));
    row.alpha = s.alpha;
    row.beta = s.beta;
    row.algorithm = requested;
    row.block_size = step.block_size;
    row.vendor = is_vendor(step.algorithm);
    row.model_bytes = row.vendor ? vendor_bytes : bytes;
    row.storage_bound = problem.storage_bound;
    try {
      Options options = s.options;
      if (step.block_size) options.block_size = step.block_size;
      // Vendor baselines run on the matrix as given: a speed-up over them includes what --reorder buys.
      if (row.vendor) options.reorder = Reorder::None;
      if (row.vendor) options.values = ValueStorage::Native;
      detail::PhaseLog phase("plan " + requested);
      auto plan = make_operator(s.backend, a, step.algorithm, s.op, options);
      row.resolved = std::string(to_string(plan->algorithm()));
      row.policy = plan->policy() + (row.vendor && half ? " (f32: the vendor baseline of half-value rows)" : "");
      row.setup_ms = plan->setup_ms();
      row.extra_bytes_per_nnz = nnz ? static_cast<double>(plan->extra_bytes()) / static_cast<double>(nnz) : kNaN;

      phase.next("verify " + requested);
      start_y(y, problem.y0, s.beta);
      plan->apply(problem.alpha, problem.x, problem.beta, y);
      if (s.inject_fault && !y.empty()) y[0] += Value(1) + std::abs(y[0]);
      const bool f32_vendor = half && row.vendor;
      const Check check = f32_vendor ? check_result<Value>(y, problem.unrounded_expected, problem.unrounded_bound)
                                     : check_result<Value>(y, problem.expected, problem.bound);
      row.error_ratio = check.ratio;
      row.max_abs_error = check.max_abs_error;
      if (half) {
        row.storage_error = check_result<Value>(y, problem.unrounded_expected, problem.unrounded_scale).ratio;
        if (s.print_rows && check.ok && !f32_vendor && !(row.storage_error <= row.storage_bound))
          fmt::print(stderr, "note: {} on {} ({}): {:.3g} from the f32 product, beyond u + c*eps = {:.3g} (the "
                     "bound holds for values in the storage's normal range)\n",
                     row.display_name(), label, precision, row.storage_error, row.storage_bound);
      }
      if (!check.ok) {
        row.status = RowStatus::Failed;
        const auto& expected = f32_vendor ? problem.unrounded_expected : problem.expected;
        const auto& bound = f32_vendor ? problem.unrounded_bound : problem.bound;
        row.message = fmt::format("entry {}: got {:.17g}, expected {:.17g}, error {:.3g} > bound {:.3g}", check.worst,
                                  static_cast<double>(y[check.worst]), expected[check.worst],
                                  std::abs(static_cast<double>(y[check.worst]) - expected[check.worst]),
                                  bound[check.worst]);
        if (s.print_rows)
          fmt::print(stderr, "\n*** VERIFICATION FAILED: {} on {} ({}, {}-bit indices, op {}): {} ***\n\n",
                   row.display_name(), label, row.precision, 8 * sizeof(Index), row.op, row.message);
      } else {
        phase.next("time " + requested);
        // the verified y is done with: no second vector
        solvers::cpu::copy(std::span<const Value>(problem.y0), std::span<Value>(y));
        record_timing(row, plan->time(problem.alpha, problem.x, problem.beta, y, s.timing),
                      static_cast<double>(nnz), static_cast<double>(row.model_bytes), s.bandwidth_gbs);
      }
    } catch (const Unsupported& e) {
      row.status = RowStatus::Skipped;
      row.message = e.what();
    } catch (const Error& e) {
      row.status = RowStatus::Error;
      row.message = e.what();
      if (s.print_rows) fmt::print(stderr, "error: {} on {}: {}\n", row.display_name(), label, e.what());
    } catch (const std::bad_alloc&) {
      row.status = RowStatus::Error;
      row.message = "out of memory";
      if (s.print_rows) fmt::print(stderr, "error: {} on {}: out of memory\n", row.display_name(), label);
    }
    if (row.vendor && row.status == RowStatus::Ok && !(row.median_ms >= best_vendor_ms)) {
      best_vendor_ms = row.median_ms;
      best_vendor = row.display_name();
    }
    rows.push_back(std::move(row));

    // Speed-ups are final once every vendor row ran (they come first); print what is final.
    if (k + 1 >= vendor_steps) {
      for (; printed < rows.size(); ++printed) {
        BenchRow& r = rows[printed];
        if (r.status == RowStatus::Ok && !std::isnan(best_vendor_ms) && r.median_ms > 0) {
          r.speedup_vs_vendor = best_vendor_ms / r.median_ms;
          r.vendor_baseline = best_vendor;
        }
        if (s.print_rows) print_table_row(r);
      }
    }
  }
  return rows;
}

namespace {

// The LMA row of bench_fem. The reference is the assembled matrix's (Problem), the bound that of the
// element sums: c*eps*(|beta||y0_i| + |alpha| M_i) with M_i = sum_{e,b} |K_e[a][b] x_b| and c =
// 2*(terms_i + 2), which also covers the difference between rounding the assembled sums and rounding
// each K_e (tests/common/lma_check.hpp gives the argument).
template <class Value, class Index>
BenchRow lma_row(const fem::FemProblem<Value, Index>& p, const BenchSettings& s, const std::string& label) {
  const Precision precision = sizeof(Value) == 4 ? Precision::F32 : Precision::F64;
  BenchRow row;
  row.precision = std::string(to_string(precision));
  row.index_type = sizeof(Index) == 4 ? "int32" : "int64";
  row.op = std::string(to_string(s.op));  // the matrix is symmetric: A^T x = A x
  row.alpha = s.alpha;
  row.beta = s.beta;
  row.algorithm = row.resolved = "lma";
  row.model_bytes = lma_minimal_bytes(p.elements, p.nodes_per_element, p.unknowns, sizeof(Value), sizeof(Index),
                                      s.beta != 0.0);
  if (s.options.values != ValueStorage::Native) {
    row.precision = std::string(to_string(s.options.values));
    row.status = RowStatus::Skipped;
    row.message = "the LMA operator keeps its element matrices in the native value type (no " + row.precision +
                  " storage)";
    return row;
  }
  try {
    const Problem<Value, Index> problem(p.matrix, s.op, s.alpha, s.beta);
    const fem::LmaReference lma = fem::lma_reference(p, static_cast<double>(problem.alpha), std::span<const Value>(problem.x),
                                                     static_cast<double>(problem.beta), std::span<const Value>(problem.y0));
    std::vector<double> bound(lma.magnitude.size());
    const double eps = std::numeric_limits<Value>::epsilon();
    for (std::size_t i = 0; i < bound.size(); ++i) {
      const double y_term = s.beta == 0 ? 0.0 : std::abs(s.beta) * std::abs(static_cast<double>(problem.y0[i]));
      bound[i] = 2.0 * static_cast<double>(lma.terms[i] + 2) * eps * (y_term + std::abs(s.alpha) * lma.magnitude[i]);
    }
    auto op = fem::make_lma_operator(s.backend, p, s.options);
    row.policy = op->policy();
    row.setup_ms = op->setup_ms();
    HostVector<Value> y;
    start_y(y, problem.y0, s.beta);
    op->apply(problem.alpha, problem.x, problem.beta, y);
    if (s.inject_fault && !y.empty()) y[0] += Value(1) + std::abs(y[0]);
    const Check check = check_result<Value>(y, problem.expected, bound);
    row.error_ratio = check.ratio;
    row.max_abs_error = check.max_abs_error;
    if (!check.ok) {
      row.status = RowStatus::Failed;
      row.message = fmt::format("entry {}: got {:.17g}, expected {:.17g}, bound {:.3g}", check.worst,
                                static_cast<double>(y[check.worst]), problem.expected[check.worst], bound[check.worst]);
      if (s.print_rows)
        fmt::print(stderr, "\n*** VERIFICATION FAILED: lma on {} ({}): {} ***\n\n", label, row.precision, row.message);
      return row;
    }
    solvers::cpu::copy(std::span<const Value>(problem.y0), std::span<Value>(y));
    record_timing(row, op->time(problem.alpha, problem.x, problem.beta, y, s.timing),
                  static_cast<double>(fem::lma_multiply_adds(p)), static_cast<double>(row.model_bytes), s.bandwidth_gbs);
  } catch (const Unsupported& e) {
    row.status = RowStatus::Skipped;
    row.message = e.what();
  } catch (const Error& e) {
    row.status = RowStatus::Error;
    row.message = e.what();
    if (s.print_rows) fmt::print(stderr, "error: lma on {}: {}\n", label, e.what());
  } catch (const std::bad_alloc&) {
    row.status = RowStatus::Error;
    row.message = "out of memory";
    if (s.print_rows) fmt::print(stderr, "error: lma on {}: out of memory\n", label);
  }
  return row;
}

}  // namespace

template <class Value, class Index>
std::vector<BenchRow> bench_fem(const fem::FemProblem<Value, Index>& p, const BenchSettings& settings,
                                const std::string& label, Progress& progress) {
  BenchSettings csr = settings;
  csr.lma = false;
  std::vector<BenchRow> rows = bench_matrix(p.matrix, csr, label, progress);
  if (!settings.lma) return rows;
  ++progress.done;
  if (!settings.quiet)
    fmt::print(stderr, "[{}/{}] lma ({}, {}) ...\n", progress.done, progress.total, label,
               rows.empty() ? std::string(sizeof(Value) == 4 ? "f32" : "f64") : rows.front().precision);
  BenchRow row = lma_row(p, settings, label);
  const BenchRow* best_vendor = nullptr;
  for (const BenchRow& r : rows)
    if (r.vendor && r.status == RowStatus::Ok && (!best_vendor || r.median_ms < best_vendor->median_ms)) best_vendor = &r;
  if (best_vendor && row.status == RowStatus::Ok && row.median_ms > 0) {
    row.speedup_vs_vendor = best_vendor->median_ms / row.median_ms;
    row.vendor_baseline = best_vendor->display_name();
  }
  if (settings.print_rows) print_table_row(row);
  rows.push_back(std::move(row));
  return rows;
}

std::vector<BenchRow> bench_matrix(const HostMatrix& a, Precision precision, const BenchSettings& settings,
                                   const std::string& label, Progress& progress) {
  const bool fits32 = fits_index<std::int32_t>(a.rows, a.cols, a.nnz());
  const BenchSettings s = settings_for(settings, precision);
  if (precision == Precision::F64)
    return fits32 ? bench_matrix(convert<double, std::int32_t>(a), s, label, progress)
                  : bench_matrix(a, s, label, progress);  // already the type it runs in: no copy
  return fits32 ? bench_matrix(convert<float, std::int32_t>(a), s, label, progress)
                : bench_matrix(convert<float, std::int64_t>(a), s, label, progress);
}

#define SPMV_INSTANTIATE(V, I)                                                                           \
  template std::vector<BenchRow> bench_matrix(const CsrMatrix<V, I>&, const BenchSettings&, const std::string&, \
                                              Progress&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

#define SPMV_INSTANTIATE(V, I)                                                                            \
  template std::vector<BenchRow> bench_fem(const fem::FemProblem<V, I>&, const BenchSettings&, const std::string&, \
                                           Progress&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::bench
