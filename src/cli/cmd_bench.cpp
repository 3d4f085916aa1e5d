// spmv bench: statistics, verification and timing of every selected algorithm on every matrix, as a
// table, CSV and JSON (docs/CLI.md, bench/README.md).
#include <cstdint>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>

#include "bench_engine.hpp"
#include "ncu_profile.hpp"
#include "bench_report.hpp"
#include "bench_tune.hpp"
#include "byte_model.hpp"
#include "core/phase_log.hpp"
#include "cli_common.hpp"
#include "distributed/distributed_cli.hpp"
#include "host_bandwidth.hpp"
#include "spmm_bench.hpp"
#include "spmv/error.hpp"
#include "spmv/fem.hpp"
#include "spmv/generators.hpp"
#include "spmv/stats.hpp"
#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
#include "spmv/device.hpp"
#endif

namespace spmv::cli {
namespace {

using bench::BenchSettings;
using bench::Precision;
using bench::Progress;

// The built-in matrix when neither FILE nor --gen is given: a 2D 5-point Laplacian, nnz = 5n^2 - 4n,
// large enough to leave the caches: ~5 M nonzeros (n = 1000) on the CPU, ~25 M (n = 2236) on a GPU
// whose L2 holds tens of MB.
constexpr std::int64_t kDefaultPoissonCpu = 1000;
constexpr std::int64_t kDefaultPoissonCuda = 2236;

struct BenchOptions {
  std::vector<std::string> files;
  std::vector<std::string> gens;
  std::string algo;
  std::string precision = "f64";
  bool transpose = false;
  std::string backend = "auto";
  double alpha = 1.0, beta = 0.0;
  std::string csv, json;
  bool sweep = false;
  std::vector<int> block_sizes{32, 64, 128, 256, 512, 1024};
  int reps = 9, warmup = 3;
  double min_sample_ms = 2.0;
  int threads = 0, block_size = 0, device = 0, subwarp = 0;
  int sell_c = 0, sell_sigma = 0, column_span = 0;
  int hola_sort_columns = -1;
  std::string cpu_rows;  // empty: the rule (Options::cpu_rows = -1)
  std::int64_t expected_applies = 0;
  double bandwidth = 0;
  bool quiet = false;
  bool inject_fault = false;
  bool profile = false;
  bool lma = false;
  ReadOptions read;  // --max-memory, for files and generators alike
  bool tune = false;
  Reorder reorder = Reorder::None;
  bool deterministic = false;
  std::uint64_t shuffle = 0;  // --shuffle SEED: relabel square inputs at random first (0: off)
  DistributedFlags distributed;
  std::int64_t k = 0;          // --k: SpMM with k columns (0: SpMV)
  std::string layout = "row";  // --layout: X and Y row- or column-major (SpMM)
};

// A matrix to run on: a file or a generator call, loaded only when its turn comes.
struct Source {
  std::string label;  // shown in tables and records
  std::string path;   // empty for generators
  std::string kind;
  std::map<std::string, double> params;
};

// --algo: comma-separated names (empty words ignored) for the engine's selection rule; a name it
// does not know is a UsageError with the CLI's wording.
std::vector<Algorithm> select_algorithms(const std::string& list, Backend backend, Operation op) {
  std::vector<std::string> names;
  std::string_view rest = list;
  while (!list.empty()) {
    const auto comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    if (!word.empty()) {
      if (word != "all") parse_algorithm_name(word);
      names.emplace_back(word);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!list.empty() && names.empty()) throw UsageError(fmt::format("--algo '{}' names no algorithm", list));
  return bench::select_algorithms(names, backend, op);
}

Source generator_source(const std::string& kind, const std::map<std::string, double>& params) {
  const auto& all = gen::generators();
  const auto info = std::find_if(all.begin(), all.end(), [&](const gen::GeneratorInfo& g) { return g.name == kind; });
  if (info == all.end()) {
    std::string names;
    for (const auto& g : all) names += fmt::format("{}{}", names.empty() ? "" : ", ", g.name);
    throw UsageError(fmt::format("unknown generator '{}'; valid kinds: {}", kind, names));
  }
  for (auto& [key, value] : params)
    if (!info->defaults.count(key)) {
      std::string keys;
      for (auto& [k, v] : info->defaults) keys += fmt::format("{}{}", keys.empty() ? "" : ", ", k);
      throw UsageError(fmt::format("generator '{}' has no parameter '{}'; its parameters: {}", kind, key, keys));
    }
  return {generator_label(kind, params), "", kind, params};
}

// --profile: each verified row once more in a child `spmv bench` under Nsight Compute (src/bench/ncu_profile.hpp).
void profile_rows(const BenchOptions& o, const Source& source, Precision p, const std::string& ncu,
                  std::vector<BenchRow>& rows) {
  std::vector<std::string> input;
  if (source.path.empty()) {
    std::string spec = source.kind;
    char sep = ':';
    for (const auto& [key, value] : source.params) {
      spec += fmt::format("{}{}={}", sep, key, value);
      sep = ',';
    }
    input = {"--gen", spec};
  } else {
    input = {source.path};
  }
  for (BenchRow& row : rows) {
    if (row.status != RowStatus::Ok) continue;
    std::vector<std::string> args = input;
    args.insert(args.end(), {"--backend", "cuda", "--precision", std::string(to_string(p)), "--algo", row.algorithm,
                             "--reps", "7", "--warmup", "0", "--min-sample-ms", "0.001", "--quiet",
                             "--device", std::to_string(o.device), "--alpha", fmt::format("{}", o.alpha), "--beta",
                             fmt::format("{}", o.beta)});
    if (o.transpose) args.push_back("--transpose");
    if (o.expected_applies) args.insert(args.end(), {"--expected-applies", std::to_string(o.expected_applies)});
    if (row.block_size) args.insert(args.end(), {"--block-size", std::to_string(row.block_size)});
    else if (o.block_size) args.insert(args.end(), {"--block-size", std::to_string(o.block_size)});
    const bench::ProfileOutcome outcome =
        bench::run_profile(ncu, std::filesystem::read_symlink("/proc/self/exe").string(), args);
    if (!outcome.metrics) {
      fmt::print("  profile {}: {}\n", row.display_name(), outcome.message);
      continue;
    }
    bench::apply_profile(*outcome.metrics, row);
    fmt::print("  profile {:<28} occupancy {:5.1f}%  warp eff {:5.1f}%  gld eff {:5.1f}%  L2 hit {:5.1f}%  "
               "DRAM {:5.1f}%  L2 sectors {:5.1f}%  L2 requests {:5.1f}%  ({} kernels)\n",
               row.display_name(), row.achieved_occupancy, row.warp_efficiency, row.global_load_efficiency,
               row.l2_hit_rate, row.dram_throughput, row.l2_throughput, row.l2_requests,
               outcome.metrics->kernels);
  }
}

std::string iso_date_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Device name and the bandwidth that "% of bandwidth" refers to, printed once at the start.
void describe_device(const BenchOptions& o, Backend backend, int device, RunInfo& run) {
  if (backend == Backend::Cuda) {
#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
    const DeviceInfo info = cuda_device_info(device);
    run.device = info.name;
    if (o.bandwidth > 0) {
      run.bandwidth_gbs = o.bandwidth;
      run.bandwidth_method = "given with --bandwidth";
    } else {
      run.bandwidth_gbs = cuda_copy_bandwidth_gbs(device);
      run.bandwidth_method = "device-to-device copy, bytes read + written";
    }
    fmt::print("device: {} (sm_{}, {} SMs, {} L2, {}); copy bandwidth {:.1f} GB/s ({})\n", info.name,
               info.compute_capability, info.multiprocessors, human_bytes(static_cast<double>(info.l2_bytes)),
               human_bytes(static_cast<double>(info.memory_bytes)), run.bandwidth_gbs, run.bandwidth_method);
    return;
#else
    (void)device;
    throw UsageError("the CUDA backend is not built into this spmv (configure with -DSPMV_ENABLE_CUDA=ON)");
#endif
  }
  run.device = bench::host_cpu_description(o.threads);
  if (o.bandwidth > 0) {
    run.bandwidth_gbs = o.bandwidth;
    run.bandwidth_method = "given with --bandwidth";
  } else {
    const detail::PhaseLog phase("copy bandwidth");
    const bench::HostBandwidth bw = bench::measure_host_copy_bandwidth(o.threads);
    run.bandwidth_gbs = bw.gbs;
    run.bandwidth_method = fmt::format("STREAM-like copy, 2 x {} arrays ({} {} last-level cache), {} OpenMP threads, "
                                       "bytes read + written",
                                       human_bytes(static_cast<double>(bw.array_bytes)),
                                       bw.capped ? "an eighth of the memory available; less than 4 x the" : "4 x",
                                       human_bytes(static_cast<double>(bw.llc_bytes)), bw.threads);
  }
  fmt::print("device: {}; copy bandwidth {:.1f} GB/s ({})\n", run.device, run.bandwidth_gbs, run.bandwidth_method);
}

void print_matrix_header(const MatrixInfo& m, bool fits32) {
  const MatrixStats& s = m.stats;
  fmt::print("\nmatrix {}: {} x {}, {} nonzeros; row length mean {:.3g}, std {:.3g}, max {}; {} empty rows\n", m.name,
             s.rows, s.cols, s.nnz, s.row_mean, s.row_std, s.row_max, s.empty_rows);
  if (!fits32) fmt::print("the matrix does not fit 32-bit indices: using 64-bit indices\n");
}

// --precision: "both" (f64, then f32) or a comma-separated list of f32, f64, f16, bf16, run in the
// order given (repeats once).
std::vector<Precision> requested_precisions(const std::string& list) {
  if (list == "both") return {Precision::F64, Precision::F32};
  std::vector<Precision> precisions;
  std::string_view rest = list;
  for (;;) {
    const auto comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    const auto p = bench::parse_precision(word);
    if (!p)
      throw UsageError(fmt::format("--precision '{}': unknown precision '{}'; expected f32, f64, f16, bf16, a "
                                   "comma-separated list of them (e.g. f32,f16,bf16), or both (f64,f32)",
                                   list, word));
    if (std::find(precisions.begin(), precisions.end(), *p) == precisions.end()) precisions.push_back(*p);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return precisions;
}

// --cpu-rows as Options::cpu_rows (CLI11 has checked the name).
int cpu_rows_option(const std::string& name) {
  if (name.empty()) return -1;
  const auto names = cpu_row_kernel_names();
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

bool has_half(const std::vector<Precision>& precisions) {
  return std::any_of(precisions.begin(), precisions.end(),
                     [](Precision p) { return bench::value_storage(p) != ValueStorage::Native; });
}

// "[label, precision]" and the table header of one matrix in one precision (half precisions get the
// "vs f32" column).
void print_precision_header(const std::string& label, Precision p, const std::string& suffix = "") {
  fmt::print("\n[{}, {}{}]\n", label, to_string(p), suffix);
  bench::print_table_header(bench::value_storage(p) != ValueStorage::Native);
}

// A generated matrix is built in each precision's value type, with 32-bit indices when the
// generator's size bound fits them, and benchmarked as built: one copy of the matrix at a time, in the
// type it runs in (issue 18). The statistics header is printed from the first precision's copy.
template <class Value, class Index>
std::vector<BenchRow> bench_generated(const Source& source, Precision p, const BenchSettings& settings,
                                      const gen::GenerateOptions& options, MatrixInfo& info, bool& header_printed,
                                      Progress& progress) {
  std::optional<detail::PhaseLog> phase(std::in_place, "generate");
  const CsrMatrix<Value, Index> a = gen::generate<Value, Index>(source.kind, source.params, options);
  phase.reset();
  if (!header_printed) {
    const detail::PhaseLog stats_phase("statistics");
    info.stats = compute_stats(a);
    print_matrix_header(info, sizeof(Index) == 4);
    header_printed = true;
  }
  print_precision_header(source.label, p);
  return bench::bench_matrix(a, settings, source.label, progress);
}

template <class Value>
std::vector<BenchRow> bench_generated(const Source& source, Precision p, const gen::SizeBound& bound,
                                      const BenchSettings& settings, const gen::GenerateOptions& options,
                                      MatrixInfo& info, bool& header_printed, Progress& progress) {
  if (fits_index<std::int32_t>(bound.rows, bound.cols, bound.nnz))
    return bench_generated<Value, std::int32_t>(source, p, settings, options, info, header_printed, progress);
  return bench_generated<Value, std::int64_t>(source, p, settings, options, info, header_printed, progress);
}

// --lma: the FEM problem (assembled matrix and element data) in the precision's value type, with 32-bit
// indices when its sizes fit them; the CSR algorithms run on the assembled matrix, then the LMA operator.
template <class Value>
std::vector<BenchRow> bench_fem_source(const Source& source, Precision p, const BenchSettings& settings,
                                       const gen::GenerateOptions& options, MatrixInfo& info, bool& header_printed,
                                       Progress& progress) {
  const fem::MeshParams mesh = fem::mesh_params(source.kind, source.params);
  const fem::Sizes sizes = fem::sizes(mesh);
  const fem::BuildOptions build{.element_data = true, .threads = options.threads, .max_memory = options.max_memory};
  const auto run = [&](const auto& problem) {
    if (!header_printed) {
      info.stats = compute_stats(problem.matrix);
      print_matrix_header(info, sizeof(problem.matrix.row_ptr[0]) == 4);
      fmt::print("LMA data: {} elements of {} nodes ({} unknowns)\n", problem.elements, problem.nodes_per_element,
                 problem.unknowns);
      header_printed = true;
    }
    print_precision_header(source.label, p);
    return bench::bench_fem(problem, settings, source.label, progress);
  };
  if (fits_index<std::int32_t>(sizes.unknowns, sizes.unknowns, sizes.nnz))
    return run(fem::build<Value, std::int32_t>(mesh, build));
  return run(fem::build<Value, std::int64_t>(mesh, build));
}

// --k K: SpMM rows (src/bench/spmm_bench.hpp) for every matrix and precision, in the SpMV table's
// format; the matrix is read or generated once in double / int64 and converted per precision.
template <class Value>
std::vector<BenchRow> spmm_rows(const HostMatrix& host, const bench::SpmmBenchSettings& settings) {
  if (fits_index<std::int32_t>(host.rows, host.cols, host.nnz()))
    return bench::bench_spmm(convert<Value, std::int32_t>(host), settings);
  return bench::bench_spmm(convert<Value, std::int64_t>(host), settings);
}

// The files and generators of the command line, each checked before the (possibly long) run starts.
std::vector<Source> requested_sources(const BenchOptions& o) {
  std::vector<Source> sources;
  for (const std::string& f : o.files) {
    if (f != "-" && !std::filesystem::exists(f)) throw UsageError(fmt::format("cannot open '{}': no such file", f));
    sources.push_back({matrix_name(f), f, "", {}});
  }
  for (const std::string& spec : o.gens) {
    auto [kind, params] = parse_generator_spec(spec);
    sources.push_back(generator_source(kind, params));
  }
  return sources;
}

// What runs when no matrix is given: the built-in 2D Poisson matrix, sized for the backend.
Source default_source(Backend backend) {
  const std::int64_t n = backend == Backend::Cuda ? kDefaultPoissonCuda : kDefaultPoissonCpu;
  Source source = generator_source("poisson2d", {{"n", static_cast<double>(n)}});
  source.label += " (default)";
  return source;
}

RunInfo run_info(Backend backend, const std::string& command_line) {
  RunInfo run;
  run.backend = std::string(to_string(backend));
  run.date = iso_date_utc();
  run.git_commit = SPMV_GIT_COMMIT;
  run.command_line = command_line;
  return run;
}

// What the rows of a run came to, and the exit code: verification failures first (listed by name),
// then errors.
struct RowTally {
  int ok = 0, skipped = 0, errors = 0;
  std::vector<std::string> failed;

  void add(const BenchRow& row, const std::string& label) {
    switch (row.status) {
      case RowStatus::Ok: ++ok; break;
      case RowStatus::Skipped: ++skipped; break;
      case RowStatus::Error: ++errors; break;
      case RowStatus::Failed: failed.push_back(fmt::format("{} ({}, {})", row.display_name(), label, row.precision)); break;
    }
  }

  int finish() const {
    fmt::print("\n{} verified and timed, {} skipped, {} failed verification, {} errors\n", ok, skipped, failed.size(),
               errors);
    if (!failed.empty()) {
      fmt::print(stderr, "\n*** VERIFICATION FAILED ({}): ", failed.size());
      for (std::size_t i = 0; i < failed.size(); ++i) fmt::print(stderr, "{}{}", i ? ", " : "", failed[i]);
      fmt::print(stderr, " ***\n");
      return kExitVerifyFailed;
    }
    return errors ? kExitError : kExitOk;
  }
};

int run_spmm_bench(const BenchOptions& o, const std::string& command_line) {
  if (o.distributed.enabled) throw UsageError("--k (SpMM) does not run with --distributed");
  const std::vector<Precision> precisions = requested_precisions(o.precision);
  if (has_half(precisions)) throw UsageError("--k (SpMM) runs f32 and f64 only: SpMM plans have no f16 / bf16 values");
  if (o.sweep || o.tune || o.profile || o.lma || !o.algo.empty() || o.reorder != Reorder::None || o.shuffle)
    throw UsageError("--k runs spmv's SpMM and its baselines only: --algo, --sweep, --tune, --profile, --lma, "
                     "--reorder and --shuffle do not apply");
  std::string note;
  const Backend backend = resolve_backend(o.backend, &note);
  bench::SpmmBenchSettings settings;
  settings.backend = backend;
  settings.op = o.transpose ? Operation::Transpose : Operation::NonTranspose;
  settings.alpha = o.alpha;
  settings.beta = o.beta;
  settings.k = o.k;
  settings.layout = o.layout == "col" ? Layout::ColMajor : Layout::RowMajor;
  settings.timing = TimingOptions{o.warmup, o.reps, o.min_sample_ms};
  settings.options.threads = o.threads;
  settings.options.block_size = o.block_size;
  settings.options.subwarp = o.subwarp;
  settings.options.device = o.device;
  std::vector<Source> sources = requested_sources(o);
  if (sources.empty()) sources.push_back(default_source(backend));
  RunInfo run = run_info(backend, command_line);
  std::optional<CsvReport> csv;
  std::optional<JsonReport> json;
  if (!o.csv.empty()) csv.emplace(o.csv);
  if (!note.empty()) fmt::print("{}\n", note);
  describe_device(o, backend, o.device, run);
  settings.bandwidth_gbs = run.bandwidth_gbs;
  if (!o.json.empty()) json.emplace(o.json, run, std::string(bench::kSpmmByteModelDescription));
  fmt::print("op: Y = {}*{}*X + {}*Y, X and Y {} with k = {} columns; timing: median of {} samples after {} warm-up "
             "products; byte model: {}; baseline: {}\n",
             o.alpha, o.transpose ? "A^T" : "A", o.beta, to_string(settings.layout), o.k, o.reps, o.warmup,
             bench::kSpmmByteModelDescription,
             backend == Backend::Cuda ? "the fastest cusparseSpMM algorithm" : "k SpMV products (CPU Auto)");
  RowTally tally;
  for (const Source& source : sources) {
    MatrixInfo info{source.label, source.path.empty() ? source.label : source.path, {}};
    HostMatrix host;
    try {
      host = !source.path.empty() ? load_matrix(source.path, nullptr, o.read)
                                  : gen::generate(source.kind, source.params);
    } catch (const Error& e) {
      fmt::print(stderr, "spmv: error: {}: {}\n", source.label, e.what());
      ++tally.errors;
      continue;
    }
    info.stats = compute_stats(host);
    print_matrix_header(info, fits_index<std::int32_t>(host.rows, host.cols, host.nnz()));
    std::vector<BenchRow> all_rows;
    for (Precision p : precisions) {
      print_precision_header(source.label, p, fmt::format(", spmm k={}", o.k));
      std::vector<BenchRow> rows;
      try {
        rows = p == Precision::F64 ? spmm_rows<double>(host, settings) : spmm_rows<float>(host, settings);
      } catch (const Error& e) {
        fmt::print(stderr, "spmv: error: {} ({}): {}\n", source.label, to_string(p), e.what());
        ++tally.errors;
        continue;
      }
      for (BenchRow& row : rows) {
        tally.add(row, source.label);
        if (csv) csv->add(run, info, row);
        all_rows.push_back(std::move(row));
      }
    }
    if (json) json->add_matrix(info, all_rows);
  }
  return tally.finish();
}

int run_bench(const BenchOptions& o, const std::string& command_line) {
  if (o.k > 0) return run_spmm_bench(o, command_line);
  const std::vector<Precision> precisions = requested_precisions(o.precision);
  if (o.distributed.enabled) {
    if (o.precision != "f32" && o.precision != "f64" && o.precision != "both")
      throw UsageError(fmt::format("--distributed runs --precision f32, f64 or both, not '{}'", o.precision));
    refuse_with_distributed({{o.sweep, "--sweep"}, {o.tune, "--tune"}, {o.profile, "--profile"}, {o.lma, "--lma"}});
    return run_distributed_bench({o.files, o.gens, o.json, o.csv, o.algo, o.precision, o.backend, o.transpose, o.alpha,
                                  o.beta,
                                  TimingOptions{o.warmup, o.reps, o.min_sample_ms},
                                  o.threads, o.expected_applies, o.quiet,
                                  o.read, o.distributed});
  }
  std::string note;
  const Backend backend = resolve_backend(o.backend, &note);
  const Operation op = o.transpose ? Operation::Transpose : Operation::NonTranspose;

  BenchSettings settings;
  settings.backend = backend;
  settings.op = op;
  settings.alpha = o.alpha;
  settings.beta = o.beta;
  settings.timing = TimingOptions{o.warmup, o.reps, o.min_sample_ms};
  settings.options.threads = o.threads;
  settings.options.block_size = o.block_size;
  settings.options.hola_sort_columns = o.hola_sort_columns;
  settings.options.subwarp = o.subwarp;
  settings.options.sell_c = o.sell_c;
  settings.options.sell_sigma = o.sell_sigma;
  settings.options.column_span = o.column_span;
  settings.options.cpu_rows = cpu_rows_option(o.cpu_rows);
  settings.options.expected_applies = o.expected_applies;
  settings.options.reorder = o.reorder;
  settings.options.deterministic = o.deterministic;
  settings.options.device = o.device;
  settings.algorithms = select_algorithms(o.algo, backend, op);
  settings.sweep = o.sweep;
  settings.block_sizes = o.block_sizes;
  settings.quiet = o.quiet;
  settings.inject_fault = o.inject_fault;
  settings.lma = o.lma;

  // Check every input before the (possibly long) run starts.
  std::vector<Source> sources = requested_sources(o);
  if (o.lma)
    for (const Source& source : sources)
      if (!fem::is_fem_kind(source.kind))
        throw UsageError(fmt::format("--lma runs on FEM problems: '{}' is not --gen fem2d or fem3d", source.label));
  if (sources.empty()) sources.push_back(default_source(backend));

  RunInfo run = run_info(backend, command_line);
  std::optional<CsvReport> csv;
  std::optional<JsonReport> json;
  if (!o.csv.empty()) csv.emplace(o.csv);

  if (!note.empty()) fmt::print("{}\n", note);
  describe_device(o, backend, o.device, run);
  if (!o.json.empty()) json.emplace(o.json, run, std::string(bench::kByteModelDescription));
  if (o.sweep && backend == Backend::Cpu)
    fmt::print("--sweep: the CPU algorithms have no block size; each runs once\n");
  fmt::print("op: y = {}*{}*x + {}*y; timing: median of {} samples after {} warm-up products; byte model: {}\n",
             o.alpha, o.transpose ? "A^T" : "A", o.beta, o.reps, o.warmup, bench::kByteModelDescription);
  if (o.lma) fmt::print("{}\n", bench::kLmaByteModelDescription);

  Progress progress;
  progress.total = static_cast<int>(sources.size() * precisions.size()) * planned_rows(settings);
  settings.bandwidth_gbs = run.bandwidth_gbs;

  std::string ncu;
  if (o.profile) {
    if (backend != Backend::Cuda) throw UsageError("--profile reads GPU counters: it needs --backend cuda");
    const char* path = std::getenv("PATH");
    ncu = bench::find_ncu(path ? path : "");
    if (ncu.empty()) fmt::print("--profile: {}; the profile columns stay empty\n", bench::run_profile("", "", {}).message);
  }

  RowTally tally;
  const gen::GenerateOptions generate_options{o.read.max_memory, o.threads};
  for (const Source& source : sources) {
    MatrixInfo info{source.label, source.path.empty() ? source.label : source.path, {}};
    // Files (and generators registered without a typed path) arrive in double / int64 and are
    // converted per precision; typed generators build each precision's matrix directly.
    std::optional<HostMatrix> host;
    std::optional<gen::SizeBound> bound;
    bool header_printed = false;
    const int rows_per_precision = planned_rows(settings);
    try {
      if (!source.path.empty())
        host = load_matrix(source.path, nullptr, o.read);
      else if (o.lma)
        fem::sizes(fem::mesh_params(source.kind, source.params));  // checks the parameters; built per precision
      else if (o.tune || o.shuffle || !(bound = gen::size_bound(source.kind, source.params)))  // host matrix
        host = gen::generate(source.kind, source.params);
      if (host && o.shuffle) *host = shuffled(*host, o.shuffle);
    } catch (const Error& e) {
      // One unreadable file should not cost the rest of a suite; the exit code still reports it.
      fmt::print(stderr, "spmv: error: {}: {}\n", source.label, e.what());
      ++tally.errors;
      progress.done += static_cast<int>(precisions.size()) * rows_per_precision;
      continue;
    }
    if (host) {
      info.stats = compute_stats(*host);
      print_matrix_header(info, fits_index<std::int32_t>(host->rows, host->cols, host->nnz()));
      header_printed = true;
    }

    std::vector<BenchRow> all_rows;
    for (Precision p : precisions) {
      // f16 / bf16: the float matrix, with Options::values asking the plans for half storage.
      const BenchSettings ps = bench::settings_for(settings, p);
      std::vector<BenchRow> rows;
      try {
        if (o.lma) {
          rows = p == Precision::F64
                     ? bench_fem_source<double>(source, p, ps, generate_options, info, header_printed, progress)
                     : bench_fem_source<float>(source, p, ps, generate_options, info, header_printed, progress);
        } else if (host) {
          print_precision_header(source.label, p);
          if (o.tune) {
            fmt::print("tuning study (Algorithm::Tune against an exhaustive sweep of its candidate space):\n");
            try {
              bench_tune(*host, p, ps, source.label, !o.quiet);
            } catch (const Unsupported& e) {  // e.g. no tuned plan with half values: as a skipped row
              fmt::print("  skipped: {}\n", e.what());
            } catch (const Error& e) {
              fmt::print(stderr, "spmv: error: --tune on {}: {}\n", source.label, e.what());
              ++tally.errors;
            }
          }
          rows = bench_matrix(*host, p, ps, source.label, progress);
        } else {
          rows = p == Precision::F64 ? bench_generated<double>(source, p, *bound, ps, generate_options, info,
                                                               header_printed, progress)
                                     : bench_generated<float>(source, p, *bound, ps, generate_options, info,
                                                              header_printed, progress);
        }
      } catch (const Error& e) {  // the matrix could not be built in this precision (memory, index size)
        fmt::print(stderr, "spmv: error: {} ({}): {}\n", source.label, to_string(p), e.what());
        ++tally.errors;
        progress.done += rows_per_precision;
        continue;
      }
      add_break_even(rows);
      if (!ncu.empty()) profile_rows(o, source, p, ncu, rows);
      for (BenchRow& row : rows) {
        tally.add(row, source.label);
        if (csv) csv->add(run, info, row);
        all_rows.push_back(std::move(row));
      }
    }
    if (json) json->add_matrix(info, all_rows);
  }

  return tally.finish();
}

}  // namespace

Command add_bench_command(CLI::App& parent, const std::string& command_line) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = parent.add_subcommand("bench", "Verify and time SpMV algorithms on matrices (table, CSV, JSON)");
  sub->add_option("files", o->files, "Matrix Market files (.mtx / .mtx.gz)");
  sub->add_option("--gen", o->gens,
                  "Generated matrix KIND[:key=value,...], repeatable, e.g. --gen rmat:scale=18,edge_factor=16 "
                  "(spmv gen --list shows kinds and parameters)")
      ->allow_extra_args(false);  // one spec per --gen, so that a FILE after it stays a FILE
  sub->add_option("--algo", o->algo,
                  "Comma-separated algorithm names, or 'all' (every algorithm the backend offers for the operation, "
                  "vendor baselines included); default: auto plus the vendor baselines. Names: " +
                      algorithm_names());
  sub->add_option("--precision", o->precision,
                  "f32, f64, f16 or bf16 (fp16 / bfloat16 values with fp32 x, y and sums: the float plans with "
                  "half storage, against cuSPARSE's mixed mode on CUDA), a comma-separated list of them "
                  "(e.g. f32,f16,bf16), or both (= f64,f32)")
      ->capture_default_str();
  sub->add_flag("--transpose", o->transpose, "Time y = alpha*A^T*x + beta*y");
  sub->add_option("--k", o->k,
                  "SpMM: time Y = alpha*op(A)*X + beta*Y with K columns (spmv's SpMM against cusparseSpMM on CUDA, "
                  "against K SpMV products on the CPU; docs/CLI.md); 0: SpMV")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--layout", o->layout, "SpMM (--k): X and Y row-major (row) or column-major (col)")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu, cuda, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sub->add_option("--alpha", o->alpha, "Scalar alpha")->capture_default_str();
  sub->add_option("--beta", o->beta, "Scalar beta (non-zero adds a read of y to the byte model)")->capture_default_str();
  sub->add_option("--csv", o->csv,
                  "Append one line per row to this CSV file (header written when new); with --distributed a line "
                  "per matrix, precision and rank");
  sub->add_option("--json", o->json, "Append this run to this JSON report ({\"runs\": [...]})");
  sub->add_flag("--sweep", o->sweep, "Rerun each CUDA algorithm with every block size of --block-sizes");
  sub->add_option("--block-sizes", o->block_sizes, "Block sizes for --sweep")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  sub->add_option("--reps", o->reps, "Timed samples per algorithm (the median is reported), at least 7")
      ->check(CLI::Range(7, 100000))
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup, "Untimed products before timing")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--min-sample-ms", o->min_sample_ms,
                  "Each sample repeats the product until it lasts this long (timer resolution)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--threads", o->threads, "CPU threads (0: OpenMP default)")->check(CLI::NonNegativeNumber);
  sub->add_option("--expected-applies", o->expected_applies,
                  "Products the caller will run: lets Auto convert (e.g. the explicit transpose for A^T x) when it is repaid (0: unknown, no conversion)")
      ->check(CLI::NonNegativeNumber);
  add_reorder_option(*sub, o->reorder);
  add_deterministic_option(*sub, o->deterministic);
  add_shuffle_option(*sub, o->shuffle);
  sub->add_option("--hola-sort-columns", o->hola_sort_columns,
                  "Hola: per-thread column sort for x locality (-1: the policy's default, 0: off, 1: on)")
      ->check(CLI::Range(-1, 1));
  sub->add_option("--cpu-rows", o->cpu_rows,
                  "CPU row kernel of row-loop, merge-parallel and Auto for A x: plain, unrolled, lanes (rows in vector "
                  "lanes) or vector (a vector per row); default: the rule, measured on the matrix by Auto")
      ->check(CLI::IsMember(std::vector<std::string>(cpu_row_kernel_names().begin(), cpu_row_kernel_names().end())));
  sub->add_option("--subwarp", o->subwarp,
                  "CUDA lanes per row for csr-vector, lightspmv, ellr-vector, sell (1, 2 or 4) and the SpMM vector "
                  "tiles (0: from the row lengths)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--sell-c", o->sell_c, "SELL-C-sigma slice height C, a power of two (0: the default, 32 on CUDA)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--sell-sigma", o->sell_sigma,
                  "SELL-C-sigma sorting window in rows, a multiple of C (0: the default, 256); as many as the rows "
                  "sorts them all")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--column-span", o->column_span,
                  "column-chunked: columns per chunk (0: CPU, x's chunk in L2; CUDA, the cost model of Auto's rule)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--block-size", o->block_size, "CUDA threads per block when not sweeping (0: each algorithm's policy)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--bandwidth", o->bandwidth,
                  "Use this copy bandwidth in GB/s for '% bw' instead of measuring it")
      ->check(CLI::PositiveNumber);
  add_max_memory_option(*sub, o->read);
  sub->add_flag("--profile", o->profile,
                "CUDA: run each verified algorithm once more under Nsight Compute (ncu) and add achieved occupancy, "
                "warp execution efficiency, global load efficiency, L2 hit rate and DRAM throughput to the rows");
  sub->add_flag("--tune", o->tune,
                "Also run the tuned operator (algorithm 'tune') and compare its settled choice with an exhaustive "
                "sweep of its candidate space: trajectory, products to settle, % of the sweep's best, tuning cost");
  sub->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr (with --tune: no line per sweep point)");
  add_distributed_options(*sub, o->distributed);
  sub->add_flag("--lma", o->lma,
                "FEM problems (--gen fem2d|fem3d): after the CSR algorithms on the assembled matrix, one row 'lma' for "
                "the local-matrix-assembly operator on the same problem, with its own byte model and FLOPs "
                "(docs/algorithms/lma.md)");
  sub->add_flag("--inject-fault", o->inject_fault,
                "Testing aid: corrupt the first entry of every verified product, so every row must fail "
                "verification (proves the check and the exit code work)")
      ->group("Testing");
  sub->footer(fmt::format(
      "Without FILE and --gen, the matrix is poisson2d n={} (~5 M nonzeros) on the CPU and n={} (~25 M) on CUDA.\n"
      "Each row: the plan is built (setup ms), one product is verified against the double-accumulating\n"
      "reference (error / bound, bound per entry = c*eps*(|beta||y0_i| + |alpha| sum_j |a_ij x_j|),\n"
      "c = 2*(longest row + 2)), then timed (median ms). GFLOP/s = 2*nnz/time. GB/s uses the minimal byte model:\n"
      "  {}.\n"
      "% bw is against the copy bandwidth measured at start (CPU: STREAM-like copy over 4x the last-level cache,\n"
      "at most an eighth of the memory available per array, with the OpenMP threads; CUDA: device-to-device\n"
      "copy), both counting bytes read + written.\n"
      "vs vendor = best vendor baseline time (Eigen on CPU, cuSPARSE on CUDA) / this time. B/nnz = plan memory\n"
      "beyond CSR per nonzero. --precision f16|bf16: A's values stored as fp16 / bfloat16, x, y and sums fp32;\n"
      "verified against the matrix rounded to that storage (f32 bound); 'vs f32 (bound)' = max_i |y_i - f32 ref_i| /\n"
      "(|beta||y0_i| + |alpha| sum_j |a_ij x_j|) against u + c*eps_f32*(1 + u), u = 2^-11 (f16) or 2^-8 (bf16).\n"
      "Exit code 2 when a product fails verification, 1 on other errors.",
      kDefaultPoissonCpu, kDefaultPoissonCuda, bench::kByteModelDescription));
  return {sub, [o, command_line] { return run_bench(*o, command_line); }};
}

}  // namespace spmv::cli
