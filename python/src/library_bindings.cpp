#include "library_bindings.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "bench_engine.hpp"
#include "cuda_support.hpp"
#include "host_bandwidth.hpp"
#include "matrix_core.hpp"
#include "spmv/error.hpp"
#include "spmv/generators.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/stats.hpp"
#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
#include "spmv/device.hpp"
#endif

namespace spmv::python {
namespace {

constexpr bool kCudaBuilt =
#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
    true;
#else
    false;
#endif

Backend backend_from(const std::string& device) {
  if (device == "cpu") return Backend::Cpu;
  if (device == "cuda") return Backend::Cuda;
  throw InvalidArgument("unknown device '" + device + "'; expected 'cpu' or 'cuda'");
}

std::vector<std::string> algorithm_names(const std::string& device, bool transpose) {
  std::vector<std::string> names;
  for (Algorithm a : backend_algorithms(backend_from(device), transpose ? Operation::Transpose : Operation::NonTranspose))
    names.emplace_back(to_string(a));
  return names;
}

nb::dict stats_dict(const MatrixCore& core) {
  const MatrixStats s = core.stats();
  nb::dict d;  // the keys of `spmv info --json`, in its order
  d["rows"] = s.rows;
  d["cols"] = s.cols;
  d["nnz"] = s.nnz;
  d["row_mean"] = s.row_mean;
  d["row_std"] = s.row_std;
  d["row_min"] = s.row_min;
  d["row_max"] = s.row_max;
  d["empty_rows"] = s.empty_rows;
  d["diagonals"] = s.diagonals;
  d["ell_padding"] = s.ell_padding;
  d["bandwidth"] = s.bandwidth;
  d["symmetric"] = s.numerically_symmetric;
  d["structurally_symmetric"] = s.structurally_symmetric;
  d["numerically_symmetric"] = s.numerically_symmetric;
  d["fits_int32"] = fits_index<std::int32_t>(s.rows, s.cols, s.nnz);
  return d;
}

// A generated matrix is built in the type the Matrix holds (issue 18): no double / int64 master copy.
template <class Value, class Index>
std::unique_ptr<MatrixCore> generate_typed(const std::string& kind, const std::map<std::string, double>& params,
                                           const Options& o) {
  CsrMatrix<Value, Index> a;
  {
    nb::gil_scoped_release release;
    a = gen::generate<Value, Index>(kind, params);
  }
  return make_matrix_core(std::move(a), o);
}

template <class Value>
std::unique_ptr<MatrixCore> generate_typed(const std::string& kind, const std::map<std::string, double>& params,
                                           const gen::SizeBound& bound, const Options& o) {
  if (fits_index<std::int32_t>(bound.rows, bound.cols, bound.nnz))
    return generate_typed<Value, std::int32_t>(kind, params, o);
  return generate_typed<Value, std::int64_t>(kind, params, o);
}

std::unique_ptr<MatrixCore> generate(const std::string& kind, const std::map<std::string, double>& params,
                                     bool double_values, const nb::dict& options) {
  const Options o = parse_options(options);
  if (const auto bound = gen::size_bound(kind, params))
    return double_values ? generate_typed<double>(kind, params, *bound, o) : generate_typed<float>(kind, params, *bound, o);
  gen::Matrix a;  // a kind without a typed path: built in double / int64, then narrowed
  {
    nb::gil_scoped_release release;
    a = gen::generate(kind, params);
  }
  return make_matrix_core_narrowed(a, double_values, o);
}

template <class Value, class Index>
std::unique_ptr<MatrixCore> coo_to_core(const CooMatrix<double, std::int64_t>& coo, const Options& options) {
  // Duplicates are summed, as Matrix Market readers conventionally do (and `spmv info` does).
  return make_matrix_core(to_csr<Value, Index>(coo, Duplicates::Sum), options);
}

std::pair<std::unique_ptr<MatrixCore>, nb::dict> read_matrix_market_file(const std::string& path, bool double_values,
                                                                          const nb::dict& options,
                                                                          std::uint64_t max_memory) {
  const Options o = parse_options(options);
  MatrixMarketFile file;
  {
    nb::gil_scoped_release release;
    // The CSR built below (at most 16 bytes an entry, 8 a row) counts in the same budget.
    file = read_matrix_market(path, ReadOptions{max_memory, 8, 0, 16});
  }
  const auto& coo = file.matrix;
  // The entry count before summing duplicates bounds nnz, so 32-bit indices are chosen only when safe.
  const bool fits32 = fits_index<std::int32_t>(coo.rows, coo.cols, coo.nnz());
  std::unique_ptr<MatrixCore> core =
      double_values ? (fits32 ? coo_to_core<double, std::int32_t>(coo, o) : coo_to_core<double, std::int64_t>(coo, o))
                    : (fits32 ? coo_to_core<float, std::int32_t>(coo, o) : coo_to_core<float, std::int64_t>(coo, o));
  nb::dict header;
  header["format"] = file.header.format;
  header["field"] = file.header.field;
  header["stored_symmetry"] = file.header.symmetry;
  return {std::move(core), header};
}


// A result row as a dict: the engine's field list (the keys of a `spmv bench --json` result, numbers
// not measured as NaN), plus the run's backend, device and bandwidth.
nb::dict row_dict(const bench::BenchRow& r, const std::string& backend, const std::string& device, double bandwidth) {
  nb::dict d;
  for (const auto& [key, value] : bench::row_fields(r))
    std::visit([&d, key = key](const auto& v) { d[nb::str(key.data(), key.size())] = nb::cast(v); }, value);
  d["backend"] = backend;
  d["device"] = device;
  d["bandwidth_gbs"] = bandwidth > 0 ? bandwidth : bench::kNaN;
  return d;
}

struct BenchRequest {
  std::vector<std::string> algorithms;
  std::string device;
  int ordinal = 0;
  std::vector<std::string> precisions;  // "f32", "f64", "f16", "bf16" (bench::parse_precision)
  bool transpose = false;
  double alpha = 1, beta = 0;
  int repetitions = 9, warmup = 3;
  double min_sample_ms = 2.0;
  int threads = 0, block_size = 0;
  double bandwidth = 0;  // > 0 given, 0 none, < 0 measure
  bool verbose = false;
};

nb::list bench(const MatrixCore& core, const BenchRequest& q) {
  if (q.repetitions < 1) throw InvalidArgument("repetitions must be >= 1, got " + std::to_string(q.repetitions));
  if (q.warmup < 0) throw InvalidArgument("warmup must be >= 0, got " + std::to_string(q.warmup));
  if (!(q.min_sample_ms >= 0)) throw InvalidArgument("min_sample_ms must be >= 0");
  if (q.threads < 0 || q.block_size < 0) throw InvalidArgument("threads and block_size must be >= 0");
  if (!std::isfinite(q.alpha) || !std::isfinite(q.beta)) throw InvalidArgument("alpha and beta must be finite");

  bench::BenchSettings s;
  s.backend = backend_from(q.device);
  s.op = q.transpose ? Operation::Transpose : Operation::NonTranspose;
  s.alpha = q.alpha;
  s.beta = q.beta;
  s.timing = TimingOptions{q.warmup, q.repetitions, q.min_sample_ms};
  s.options.threads = q.threads;
  s.options.block_size = q.block_size;
  s.options.device = q.ordinal;
  s.algorithms = bench::select_algorithms(q.algorithms, s.backend, s.op);
  s.quiet = !q.verbose;
  s.print_rows = q.verbose;  // the returned rows carry every message

  std::vector<bench::Precision> precisions;
  for (const std::string& p : q.precisions) {
    if (const auto precision = bench::parse_precision(p)) precisions.push_back(*precision);
    else throw InvalidArgument("unknown precision '" + p + "'; expected f32, f64, f16 or bf16");
  }

  std::string device_name;
  double bandwidth = q.bandwidth;
  if (s.backend == Backend::Cuda) {
    require_cuda_device(q.ordinal);
#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
    DeviceGuard guard(q.ordinal);
    device_name = cuda_device_info(q.ordinal).name;
    if (bandwidth < 0) bandwidth = cuda_copy_bandwidth_gbs(q.ordinal);
#endif
  } else {
    device_name = bench::host_cpu_description();
    if (bandwidth < 0) bandwidth = bench::measure_host_copy_bandwidth().gbs;
  }
  s.bandwidth_gbs = bandwidth > 0 ? bandwidth : 0;

  const CsrMatrix<double, std::int64_t> a = core.widened();
  bench::Progress progress;
  progress.total = static_cast<int>(precisions.size()) * bench::planned_rows(s);
  std::vector<bench::BenchRow> rows;
  {
    std::optional<DeviceGuard> guard;
    if (s.backend == Backend::Cuda) guard.emplace(q.ordinal);
    for (bench::Precision p : precisions) {
      if (q.verbose) bench::print_table_header(bench::value_storage(p) != ValueStorage::Native);
      std::vector<bench::BenchRow> precision_rows = bench::bench_matrix(a, p, s, "matrix", progress);
      bench::add_break_even(precision_rows, q.verbose);
      for (bench::BenchRow& row : precision_rows) rows.push_back(std::move(row));
    }
  }
  nb::list out;
  const std::string backend(to_string(s.backend));
  for (const bench::BenchRow& r : rows) out.append(row_dict(r, backend, device_name, bandwidth));
  return out;
}

}  // namespace

void bind_library(nb::module_& m) {
  m.def("cuda_built", [] { return kCudaBuilt; }, "True when the extension was built with the CUDA backend.");
  m.def("cuda_available", &cuda_available, "True when spmv was built with CUDA and a CUDA device is usable.");
  m.def("algorithm_names", &algorithm_names, nb::arg("device"), nb::arg("transpose") = false,
        "Names of the algorithms a backend ('cpu' or 'cuda') offers for A*x (or A^T*x), Auto excluded.");
  m.def("all_algorithm_names", [] {
    std::vector<std::string> names{"auto", "tune"};
    for (Algorithm a : all_algorithms()) names.emplace_back(to_string(a));
    return names;
  });
  m.def("generators", [] {
    std::vector<std::tuple<std::string, std::string, std::map<std::string, double>>> out;
    for (const gen::GeneratorInfo& g : gen::generators()) out.emplace_back(g.name, g.description, g.defaults);
    return out;
  });
  m.def("generate", &generate, nb::arg("kind"), nb::arg("params"), nb::arg("double_values"), nb::arg("options"));
  m.def("read_matrix_market", &read_matrix_market_file, nb::arg("path"), nb::arg("double_values"),
        nb::arg("options"), nb::arg("max_memory") = 0);
  m.def("stats", &stats_dict, nb::arg("core"));
  m.def("require_cuda_device", &require_cuda_device, nb::arg("ordinal"));
  m.def("current_device", &current_device);
  m.def("pointer_device", &pointer_device, nb::arg("address"));
  m.def("allocation_ranges_checked", &allocation_ranges_checked,
        "True when device vectors are checked against the bounds of their allocation.");
  m.def(
      "bench",
      [](const MatrixCore& core, std::vector<std::string> algorithms, std::string device, int ordinal,
         std::vector<std::string> precisions, bool transpose, double alpha, double beta, int repetitions, int warmup,
         double min_sample_ms, int threads, int block_size, double bandwidth, bool verbose) {
        BenchRequest q{std::move(algorithms), std::move(device), ordinal,      std::move(precisions), transpose,
                       alpha,                 beta,              repetitions,  warmup,                min_sample_ms,
                       threads,               block_size,        bandwidth,    verbose};
        return bench(core, q);
      },
      nb::arg("core"), nb::arg("algorithms"), nb::arg("device"), nb::arg("ordinal"), nb::arg("precisions"),
      nb::arg("transpose"), nb::arg("alpha"), nb::arg("beta"), nb::arg("repetitions"), nb::arg("warmup"),
      nb::arg("min_sample_ms"), nb::arg("threads"), nb::arg("block_size"), nb::arg("bandwidth"), nb::arg("verbose"));
}

}  // namespace spmv::python
