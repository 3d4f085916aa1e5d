#pragma once
// The benchmark engine behind `spmv bench` and spmv.bench() in Python: for one matrix in one
// precision, build each algorithm's plan, verify one product against the double-accumulating
// reference, then time it through Operator::time (STYLE.md §12). The same loop drives every backend;
// only the Backend value differs. The front-ends choose matrices, parse names and write reports.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_row.hpp"
#include "spmv/csr.hpp"
#include "spmv/fem.hpp"
#include "spmv/operator.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::bench {

// A matrix held in double values and 64-bit indices (Python, Matrix Market files); the engine converts
// it to each precision it runs. Callers that can build the matrix in the type it runs in (the CLI's
// generators) pass that directly to the typed bench_matrix, which holds no other copy.
using HostMatrix = CsrMatrix<double, std::int64_t>;

// The precision of a run. F16 and Bf16 are the mixed-precision mode (issue 11): a float matrix and
// float x, y and sums, with the plan storing A's values as fp16 / bfloat16 (Options::values).
enum class Precision { F32, F64, F16, Bf16 };
std::string_view to_string(Precision p);  // "f32", "f64", "f16", "bf16"
std::optional<Precision> parse_precision(std::string_view name);  // the names of to_string
// The value storage a precision asks of its plans (Native for f32 and f64).
ValueStorage value_storage(Precision p);

struct BenchSettings {
  Backend backend = Backend::Cpu;
  Operation op = Operation::NonTranspose;
  double alpha = 1, beta = 0;
  TimingOptions timing;
  Options options;                    // --threads / --block-size
  std::vector<Algorithm> algorithms;  // vendor baselines first; may hold Auto
  bool sweep = false;
  std::vector<int> block_sizes;       // --sweep
  double bandwidth_gbs = 0;
  bool quiet = false;       // no progress lines on stderr
  bool print_rows = true;   // table rows on stdout, failures on stderr (false for library callers)
  bool inject_fault = false;  // testing aid: corrupt each verified product, which must then fail
  bool lma = false;  // FEM problems: one more row per matrix and precision, the LMA operator (bench_fem)
};

// `s` with options.values set for `p` (Native for f32 / f64): the settings the typed bench_matrix and
// bench_fem run a float matrix with in precision `p`.
BenchSettings settings_for(BenchSettings s, Precision p);

// The algorithm list of a run: no names -> auto plus the backend's vendor baselines; "all" -> every
// algorithm the backend offers for the operation; other names as parse_algorithm reads them
// (InvalidArgument naming every valid name otherwise). Vendor baselines come first, so that every
// later row gets its speed-up over the best of them.
std::vector<Algorithm> select_algorithms(const std::vector<std::string>& names, Backend backend, Operation op);

// True when an algorithm takes Options::block_size: the CUDA backend's own kernels (cuSPARSE picks
// its own launch configuration, CPU algorithms have no blocks).
bool has_block_size(Backend backend, Algorithm algorithm);

// How many rows one matrix in one precision produces (the progress counter's unit).
int planned_rows(const BenchSettings& settings);

struct Progress {
  int done = 0;
  int total = 0;
};

// Deterministic values in [-1, 1) (splitmix64), so runs are reproducible.
std::vector<double> pseudo_random_vector(std::size_t n, std::uint64_t seed);

// A timed row's figures: the timing, and GFLOP/s, GB/s and % of bandwidth from the median (2 flops per
// multiply-add, `bytes` per product).
void record_timing(BenchRow& row, const Timing& t, double multiply_adds, double bytes, double bandwidth_gbs);

// Prints the rows as they complete (vendor rows once all vendors ran, so that the speed-up column is
// final) and returns them. Never throws for a failing algorithm: such rows carry their status.
// The matrix is used as given (precision from Value, f32 or f64): verification widens its values on
// the fly (no double copy) and every backend reads it in place. Instantiated for float/double x
// int32_t/int64_t.
// Half storage (float matrix, settings.options.values = F16 / Bf16; precision "f16" / "bf16"): every
// algorithm is tried, those without it give skipped rows (Unsupported). The product is verified against
// the reference of round_values(a, s), the matrix the plan computes with, under the f32 bound; the row
// also states the storage rounding: storage_error = max_i |y_i - ref_i| / (|beta||y0_i| + |alpha| sum_j
// |a_ij x_j|) with ref the unrounded float matrix's product, against storage_bound = u + c*eps*(1 + u)
// (u = storage_unit_roundoff). The byte model counts 2 bytes per value, 4 per x and y entry. A double
// matrix with half storage is an InvalidArgument.
template <class Value, class Index>
std::vector<BenchRow> bench_matrix(const CsrMatrix<Value, Index>& a, const BenchSettings& settings,
                                   const std::string& label, Progress& progress);
// A FEM problem: the rows of bench_matrix on its assembled matrix, then one row "lma" for the local
// matrix assembly operator on the same backend, verified against the same reference (the assembled
// matrix's product; bound over the LMA's own terms, fem::lma_reference) and timed the same way, with its
// own byte model and FLOPs (byte_model.hpp: lma_minimal_bytes) and its speed-up over the best vendor row.
// With half storage (settings_for f16 / bf16) the lma row is skipped: the LMA operator has no half mode.
template <class Value, class Index>
std::vector<BenchRow> bench_fem(const fem::FemProblem<Value, Index>& p, const BenchSettings& settings,
                                const std::string& label, Progress& progress);

// The same from a double / 64-bit matrix: converted to `precision` with 32-bit indices where the sizes
// fit them (one converted copy; none for f64 with 64-bit indices); f16 / bf16 run the float matrix
// with settings_for(settings, precision).
std::vector<BenchRow> bench_matrix(const HostMatrix& a, Precision precision, const BenchSettings& settings,
                                   const std::string& label, Progress& progress);

}  // namespace spmv::bench
