#pragma once
// The backend-neutral face of a plan: an Operator is bound to one matrix, one algorithm and one
// operation, owns whatever preprocessing the algorithm needs, and applies y = alpha*op(A)*x + beta*y
// on host vectors (the CUDA operator copies them). It is what the differential tests, `spmv bench`
// and the Python package drive; backend-native APIs (device pointers, streams) sit below it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/linear_operator.hpp"
#include "spmv/reorder.hpp"
#include "spmv/tuning.hpp"
#include "spmv/value_storage.hpp"

namespace spmv {

// Tuning knobs. Zero / negative means "let the policy or heuristic decide" (STYLE.md §7); knobs
// never change results beyond rounding.
struct Options {
  int block_size = 0;         // CUDA threads per block (sweepable), 0: the algorithm's policy
  int threads = 0;            // CPU threads, 0: OpenMP default
  int column_span = 0;        // ColumnChunked: columns per chunk, 0: fit x chunk in L2
  int coop = 0;               // CsrCoop: threads per row, 0: fixed rule
  int repeat = 0;             // CsrCoop: rows per thread group, 0: fixed rule
  int subwarp = 0;            // CsrVector / LightSpmv / EllRVector / CUDA SpMM / CUDA Sell (1, 2, 4) lanes per row,
                              // 0: from the rows
  int hola_sort_columns = -1; // Hola: per-thread column sort (-1 policy, 0 off, 1 on)
  int sell_c = 0;             // SELL-C-sigma slice height, 0: 32
  int sell_sigma = 0;         // SELL-C-sigma sorting window, 0: 256 rows
  int hyb_ell_width = -1;     // HYB ELL width, -1: Bell & Garland rule
  double max_padding = 3.0;   // padded formats refuse stored/nnz above this factor (plus a small slack)
  int device = 0;             // CUDA device ordinal
  // Products the caller expects to run with this plan; 0: unknown. Auto converts the matrix (e.g. the
  // explicit transpose's second copy for A^T x) only when a measured rule says the conversion is
  // repaid within this many products; without the hint it never holds a second copy of the matrix.
  // With it Auto may also read the values once at plan time (A^T x of a matrix equal to its transpose
  // runs A x's plan, Algorithm::Symmetric): a plan built with the hint assumes they do not change.
  std::int64_t expected_applies = 0;
  int cpu_simd = -1;          // CPU CSR kernels: 1 SIMD (Highway, run-time dispatch), 0 scalar loops,
                              // -1: environment SPMV_CPU_SIMD ("0" = scalar), else SIMD
  // CPU CSR row kernel for A x on the SIMD path (row-loop, merge-parallel, Auto): 0 plain loop, 1 unrolled
  // loop, 2 rows in vector lanes, 3 a vector per row (docs/algorithms/cpu_simd.md); -1: environment
  // SPMV_CPU_ROWS (plain, unrolled, lanes, vector), else the rule, and with expected_applies >= 100 a
  // race of the candidates on this matrix (Auto, not deterministic).
  int cpu_rows = -1;
  // Algorithm::Tune: a JSON file of settled choices to start from and to add to (docs/algorithms/
  // tuning.md); empty: the environment's SPMV_TUNING_WISDOM, else none.
  std::string tuning_wisdom;
  // Renumber rows and columns once (square matrices; include/spmv/reorder.hpp) and permute x and y in
  // every product: the plan holds the reordered copy and two vectors of scratch. Not with Tune.
  Reorder reorder = Reorder::None;
  // Bitwise-reproducible products, run to run on one device (and one CPU thread count): algorithms
  // whose summation order depends on timing (atomics, dynamic carries) refuse with Unsupported, Auto
  // picks among the reproducible ones, CSR-vector adds a split row's chunks in order (docs/ALGORITHMS.md
  // "Determinism").
  bool deterministic = false;
  // Keep A's values as fp16 or bfloat16, with fp32 x, y and sums (float plans and operators only;
  // include/spmv/value_storage.hpp): half the value bytes per product, results of the rounded matrix.
  // Algorithms that do not offer it refuse with Unsupported; Auto picks among those that do.
  ValueStorage values = ValueStorage::Native;
};

struct Timing {
  double median_ms = 0;  // per product
  double min_ms = 0;
  double max_ms = 0;
  int repetitions = 0;   // timed samples
  int iterations = 0;    // products per sample
};

struct TimingOptions {
  int warmup = 3;              // untimed products first
  int repetitions = 9;         // samples; the median is reported
  double min_sample_ms = 2.0;  // iterations per sample grow until a sample lasts this long
};

template <class Value, class Index>
class Operator : public LinearOperator<Value> {
 public:
  virtual Backend backend() const = 0;
  virtual Algorithm algorithm() const = 0;  // resolved: never Auto
  virtual Operation operation() const = 0;
  virtual std::string policy() const = 0;   // launch policy / parameters, for logs and bench rows
  virtual double setup_ms() const = 0;      // preprocessing + conversion measured at construction
  virtual std::size_t extra_bytes() const = 0;  // memory beyond CSR + vectors held by the plan

  // x has op(A).cols entries, y has op(A).rows entries (both host memory). The BLAS conventions hold
  // on every backend and algorithm: beta == 0 never reads y (it may hold NaN), alpha == 0 reads
  // neither A nor x (NaN or Inf in x does not reach y): y = beta * y. Safe to call from several
  // threads at once; calls on one operator are serialized (the operator owns its scratch and, on
  // CUDA, its device copies of x and y).
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) override = 0;

  // Times repeated products on backend-resident copies of x and y; y's contents afterwards are
  // unspecified. Warm-up first, then the median of repetitions.
  virtual Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
                      const TimingOptions& options) = 0;

  // Operators made with Algorithm::Tune report their search; the others report nothing.
  virtual std::optional<TuningReport> tuning() const { return std::nullopt; }
};

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_cpu_operator(const CsrMatrix<Value, Index>& a,
                                                          Algorithm algorithm, Operation op,
                                                          const Options& options = {});

// Defined by the CUDA backend; when the library is built without it, throws Unsupported.
template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_cuda_operator(const CsrMatrix<Value, Index>& a,
                                                           Algorithm algorithm, Operation op,
                                                           const Options& options = {});

template <class Value, class Index>
std::unique_ptr<Operator<Value, Index>> make_operator(Backend backend,
                                                      const CsrMatrix<Value, Index>& a,
                                                      Algorithm algorithm, Operation op,
                                                      const Options& options = {});

// True when the library was built with CUDA and a device is present.
bool cuda_available();
// The algorithms a backend offers for an operation (Auto excluded).
std::span<const Algorithm> backend_algorithms(Backend backend, Operation op);

// The names of Options::cpu_rows's kernels, index = value: "plain", "unrolled", "lanes", "vector" (the
// SPMV_CPU_ROWS environment variable, the CLI's --cpu-rows, policy strings).
std::span<const std::string_view> cpu_row_kernel_names();

}  // namespace spmv
