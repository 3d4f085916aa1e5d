// spmv multiply FILE [--x X] [-o Y] [--y0 Y0 --alpha A --beta B] [--transpose] [--algo NAME]
// [--precision f32|f64|f16|bf16] [--backend cpu|cuda|auto] [--semiring NAME]: one product y = alpha*op(A)*x + beta*y0,
// or y = op(A) ⊕.⊗ x over a semiring (spmv/semiring.hpp).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <span>

#include "cli_common.hpp"
#include "distributed/distributed_cli.hpp"
#include "spmv/operator.hpp"
#include "spmv/semiring.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::cli {
namespace {

struct MultiplyOptions {
  std::string file;
  std::string x_file;
  std::string y0_file;
  std::string output = "-";
  double alpha = 1.0;
  double beta = 0.0;
  bool transpose = false;
  std::string algo = "auto";
  std::string precision = "f64";
  std::string backend = "auto";
  int block_size = 0;
  int hola_sort_columns = -1;
  std::int64_t expected_applies = 0;
  Reorder reorder = Reorder::None;
  bool deterministic = false;
  int threads = 0;
  int device = 0;
  bool quiet = false;
  std::string semiring = "plus-times";
  ReadOptions read;
  DistributedFlags distributed;
};

std::vector<double> load_vector(const std::string& path, std::string_view option) {
  if (path != "-" && !std::filesystem::exists(path))
    throw UsageError(fmt::format("{} '{}': no such file", option, path));
  return read_vector(path);
}

void check_length(const std::vector<double>& v, std::int64_t expected, std::string_view option,
                  std::string_view path, std::string_view role) {
  if (static_cast<std::int64_t>(v.size()) != expected)
    throw UsageError(fmt::format("{} '{}' has {} entries, but {} needs {}", option, path, v.size(), role, expected));
}

template <class Value, class Index>
std::vector<double> multiply(const HostMatrix& master, Backend backend, Algorithm algorithm, Operation op,
                             const Options& options, double alpha, const std::vector<double>& x, double beta,
                             const std::vector<double>& y0, bool quiet) {
  const auto a = convert<Value, Index>(master);
  auto plan = make_operator(backend, a, algorithm, op, options);
  if (!quiet)
    fmt::print(stderr, "multiply: {} backend, {}{}{}, {}, {}-bit indices, op {}\n", to_string(backend),
               to_string(plan->algorithm()), plan->policy().empty() ? "" : " ", plan->policy(),
               options.values != ValueStorage::Native ? fmt::format("{} values, f32 vectors", to_string(options.values))
                                                      : std::string(sizeof(Value) == 4 ? "f32" : "f64"),
               8 * sizeof(Index), to_string(op));
  std::vector<Value> xv(x.begin(), x.end());
  std::vector<Value> yv(y0.begin(), y0.end());
  plan->apply(static_cast<Value>(alpha), xv, static_cast<Value>(beta), yv);
  return {yv.begin(), yv.end()};
}

// y = op(A) ⊕.⊗ x for the semirings other than plus-times (op = T multiplies the transposed copy). `algorithm` is
// one of the backend's semiring kernels or formats (checked by the caller); on the CPU the line on stderr names the
// kernel that ran (Auto's choice included), on CUDA the one asked for (Auto: the plan's choice).
template <class Value, class Index>
std::vector<double> semiring_product(const HostMatrix& master, Backend backend, Semiring semiring, Algorithm algorithm,
                                     bool transposed, const std::vector<double>& x, const Options& options, bool quiet) {
  const auto a = convert<Value, Index>(transposed ? transpose(master) : master);
  const bool cpu = backend == Backend::Cpu;
  if (cpu && algorithm == Algorithm::Auto) algorithm = semiring_cpu_algorithm(a, options.threads);
  if (!quiet)
    fmt::print(stderr, "multiply: {} backend, semiring {}{}, {}, {}-bit indices, op {}\n", to_string(backend),
               to_string(semiring), cpu || algorithm != Algorithm::Auto ? ", " + std::string(to_string(algorithm)) : "",
               sizeof(Value) == 4 ? "f32" : "f64", 8 * sizeof(Index), transposed ? "T" : "N");
  const std::vector<Value> xv(x.begin(), x.end());
  std::vector<Value> yv(static_cast<std::size_t>(a.rows));
  semiring_multiply<Value, Index>(backend, semiring, a, xv, yv, options, algorithm);
  return {yv.begin(), yv.end()};
}

int run_multiply(const MultiplyOptions& o) {
  const auto semiring = parse_semiring(o.semiring);
  if (!semiring) throw UsageError(fmt::format("--semiring '{}': expected one of {}", o.semiring, semiring_names()));
  const bool other_semiring = *semiring != Semiring::PlusTimes;
  if (other_semiring) {
    // The semirings other than plus-times have no alpha and beta, and their own kernels: each backend's plan picks
    // one, or --algo forces one of semiring_algorithms(backend). Checked against the backend below, once it is
    // resolved.
    if (o.alpha != 1.0 || o.beta != 0.0 || !o.y0_file.empty())
      throw UsageError(fmt::format("--semiring {}: y = op(A) (+).(x) x has no --alpha, --beta or --y0 (plus-times only)",
                                   o.semiring));
    if (o.distributed.enabled)
      throw UsageError(fmt::format("--semiring {} runs its own kernel on one process: drop --distributed", o.semiring));
  }
  // f16 / bf16: the float product with A's values stored in half precision (Options::values).
  const auto storage = parse_value_storage(o.precision);
  const bool half = storage && *storage != ValueStorage::Native;
  if (half && (other_semiring || o.distributed.enabled))
    throw UsageError(fmt::format("--precision {} (half-precision values) runs the plus-times product on one process: "
                                 "drop {}", o.precision, other_semiring ? "--semiring" : "--distributed"));
  if (o.distributed.enabled)
    return run_distributed_multiply({o.file, o.x_file, o.y0_file, o.output, o.alpha, o.beta, o.transpose, o.algo,
                                     o.precision, o.backend,
                                     o.threads, o.expected_applies,
                                     o.quiet, o.read, o.distributed});
  std::string note;
  const Backend backend = resolve_backend(o.backend, &note);
  if (!note.empty() && !o.quiet) fmt::print(stderr, "{}\n", note);
  const Algorithm algorithm = parse_algorithm_name(o.algo);
  if (other_semiring) {
    // Each backend's semiring kernels (spmv/semiring.hpp, spmv/cuda/semiring.hpp): the formats on both.
    const auto kernels = semiring_algorithms(backend);
    if (std::find(kernels.begin(), kernels.end(), algorithm) == kernels.end())
      throw UsageError(fmt::format("--semiring {} --algo {}: the semiring kernels on {} are {} (the others: "
                                   "--backend {})",
                                   o.semiring, o.algo, to_string(backend), semiring_algorithm_names(backend),
                                   backend == Backend::Cpu ? "cuda" : "cpu"));
  }
  const Operation op = o.transpose ? Operation::Transpose : Operation::NonTranspose;
  if (o.precision != "f32" && o.precision != "f64" && !half)
    throw UsageError(fmt::format("--precision '{}': expected f32, f64, f16 or bf16", o.precision));

  ReadOptions read = o.read;
  // x and y in double, counted with the matrix in the memory check (before either is allocated).
  read.extra_bytes_per_row = read.extra_bytes_per_column = sizeof(double);
  const HostMatrix a = load_matrix(o.file, nullptr, read);
  const std::int64_t x_len = o.transpose ? a.rows : a.cols;
  const std::int64_t y_len = o.transpose ? a.cols : a.rows;
  const std::string role = fmt::format("op(A) = {} ({} x {})", o.transpose ? "A^T" : "A", y_len, x_len);

  // Without --x, x is all ones (y = row sums of op(A)): a quick check needing no vector file.
  std::vector<double> x(static_cast<std::size_t>(x_len), 1.0);
  if (!o.x_file.empty()) {
    x = load_vector(o.x_file, "--x");
    check_length(x, x_len, "--x", o.x_file, role);
  }
  std::vector<double> y(static_cast<std::size_t>(y_len), 0.0);
  if (!o.y0_file.empty()) {
    y = load_vector(o.y0_file, "--y0");
    check_length(y, y_len, "--y0", o.y0_file, role);
    if (o.beta == 0.0 && !o.quiet) fmt::print(stderr, "note: --beta is 0, so the values of --y0 do not enter y\n");
  } else if (o.beta != 0.0) {
    throw UsageError(fmt::format("--beta {} needs the initial y: pass --y0 FILE with {} entries", o.beta, y_len));
  }

  Options options;
  options.block_size = o.block_size;
  options.hola_sort_columns = o.hola_sort_columns;
  options.expected_applies = o.expected_applies;
  options.reorder = o.reorder;
  options.deterministic = o.deterministic;
  options.threads = o.threads;
  options.device = o.device;
  if (half) options.values = *storage;
  const bool fits32 = fits_index<std::int32_t>(a.rows, a.cols, a.nnz());
  if (!fits32 && !o.quiet) fmt::print(stderr, "the matrix does not fit 32-bit indices: using 64-bit indices\n");
  std::vector<double> result;
  if (other_semiring) {
    const auto product = [&](auto typed) {
      return typed(a, backend, *semiring, algorithm, o.transpose, x, options, o.quiet);
    };
    result = o.precision == "f64"
                 ? (fits32 ? product(semiring_product<double, std::int32_t>)
                           : product(semiring_product<double, std::int64_t>))
                 : (fits32 ? product(semiring_product<float, std::int32_t>)
                           : product(semiring_product<float, std::int64_t>));
    write_vector(o.output, result);
    return kExitOk;
  }
  if (o.precision == "f64")
    result = fits32 ? multiply<double, std::int32_t>(a, backend, algorithm, op, options, o.alpha, x, o.beta, y, o.quiet)
                    : multiply<double, std::int64_t>(a, backend, algorithm, op, options, o.alpha, x, o.beta, y, o.quiet);
  else
    result = fits32 ? multiply<float, std::int32_t>(a, backend, algorithm, op, options, o.alpha, x, o.beta, y, o.quiet)
                    : multiply<float, std::int64_t>(a, backend, algorithm, op, options, o.alpha, x, o.beta, y, o.quiet);
  write_vector(o.output, result);
  return kExitOk;
}

}  // namespace

Command add_multiply_command(CLI::App& parent) {
  auto o = std::make_shared<MultiplyOptions>();
  CLI::App* sub = parent.add_subcommand("multiply", "Compute one product y = alpha*op(A)*x + beta*y0 and write y");
  sub->add_option("file", o->file, "Matrix Market file")->required();
  add_max_memory_option(*sub, o->read);
  sub->add_option("--x", o->x_file,
                  "x as a Matrix Market array file or one number per line; default: all ones (y = row sums)");
  sub->add_option("-o,--output", o->output, "Where to write y (Matrix Market array); '-' (default) for stdout")
      ->capture_default_str();
  sub->add_option("--y0", o->y0_file, "Initial y (same formats as --x); required when --beta is not 0");
  sub->add_option("--alpha", o->alpha, "Scalar alpha")->capture_default_str();
  sub->add_option("--beta", o->beta, "Scalar beta")->capture_default_str();
  sub->add_flag("--transpose", o->transpose, "Multiply by A^T instead of A");
  sub->add_option("--algo", o->algo, "Algorithm: auto (the selector chooses) or one of " + algorithm_names())
      ->capture_default_str();
  sub->add_option("--precision", o->precision,
                  "Value type of the computation: f32, f64, or f16 / bf16 (A's values stored as fp16 / bfloat16, "
                  "x, y and sums in f32)")
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16"}))
      ->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu, cuda, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sub->add_option("--expected-applies", o->expected_applies,
                  "Products the caller will run: lets Auto convert when it is repaid (0: unknown, no conversion)")
      ->check(CLI::NonNegativeNumber);
  add_reorder_option(*sub, o->reorder);
  add_deterministic_option(*sub, o->deterministic);
  sub->add_option("--hola-sort-columns", o->hola_sort_columns,
                  "Hola: per-thread column sort (-1: the policy's default, 0: off, 1: on)")
      ->check(CLI::Range(-1, 1));
  sub->add_option("--block-size", o->block_size, "CUDA threads per block (0: the algorithm's policy)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--threads", o->threads, "CPU threads (0: OpenMP default)")->check(CLI::NonNegativeNumber);
  sub->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_flag("-q,--quiet", o->quiet, "Do not print the chosen backend/algorithm on stderr");
  sub->add_option("--semiring", o->semiring,
                  "y = op(A) (+).(x) x over a semiring: " + semiring_names() +
                      " (not plus-times: no alpha/beta; CPU or CUDA; --algo forces a kernel, on the CPU " +
                      semiring_algorithm_names(Backend::Cpu) + ", on CUDA " + semiring_algorithm_names(Backend::Cuda) +
                      "; pattern entries count as 1; an empty row gives the semiring's zero, e.g. inf for min-plus)")
      ->capture_default_str();
  add_distributed_options(*sub, o->distributed);
  sub->footer(
      "Vectors are read and written in double; with --precision f32, f16 or bf16 they are rounded to float for\n"
      "the product and y is widened back (f16 / bf16 also round A's values to that storage). Example: spmv multiply A.mtx --x x.txt -o y.mtx --algo merge-parallel");
  return {sub, [o] { return run_multiply(*o); }};
}

}  // namespace spmv::cli
