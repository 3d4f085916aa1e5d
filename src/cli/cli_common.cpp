#include "cli_common.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <utility>
#include <vector>

#include "spmv/error.hpp"
#include "spmv/operator.hpp"
#include "spmv/reorder.hpp"

namespace spmv::cli {

HostMatrix load_matrix(const std::string& path, MatrixMarketHeader* header, const ReadOptions& options) {
  if (path != "-" && !std::filesystem::exists(path))
    throw UsageError(fmt::format("cannot open '{}': no such file", path));
  // Duplicates are summed, as Matrix Market readers conventionally do.
  return read_csr<double, std::int64_t>(path, options, header);
}

std::uint64_t parse_memory_size(std::string_view text) {
  double number = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, number);
  const std::string_view suffix(ptr, static_cast<std::size_t>(end - ptr));
  constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1},       {"B", 1},         {"k", 1e3},       {"K", 1e3},      {"kB", 1e3},       {"KB", 1e3},
      {"M", 1e6},    {"MB", 1e6},      {"G", 1e9},       {"GB", 1e9},     {"T", 1e12},       {"TB", 1e12},
      {"KiB", 1024}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 0x1p40}};
  if (ec == std::errc() && ptr != text.data() && std::isfinite(number) && number > 0)
    for (const auto& [unit, scale] : kUnits)
      if (suffix == unit && number * scale < 0x1p63) return static_cast<std::uint64_t>(number * scale);
  throw UsageError(fmt::format("--max-memory '{}': expected a positive size such as 2G, 512M or 1.5GiB", text));
}

void add_max_memory_option(CLI::App& sub, ReadOptions& options) {
  sub.add_option_function<std::string>(
      "--max-memory", [&options](const std::string& text) { options.max_memory = parse_memory_size(text); },
      "Refuse matrices whose reading needs more memory than SIZE (e.g. 2G, 512M, 1.5GiB); default: the memory "
      "available (MemAvailable, cgroup and ulimit -v limits)");
}

std::string matrix_name(const std::string& path) {
  if (path == "-") return "stdin";
  std::string name = std::filesystem::path(path).filename().string();
  for (std::string_view suffix : {".gz", ".mtx"})
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  return name;
}

namespace {

double parse_number(std::string_view text, std::string_view key, std::string_view what) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value))
    throw UsageError(fmt::format("{}: value of '{}' is '{}', expected a number", what, key, text));
  return value;
}

}  // namespace

std::map<std::string, double> parse_key_values(const std::vector<std::string>& words, std::string_view what) {
  std::map<std::string, double> params;
  for (const std::string& word : words) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("{}: '{}' is not of the form key=value (e.g. n=1000)", what, word));
    const std::string key = word.substr(0, eq);
    if (params.count(key)) throw UsageError(fmt::format("{}: parameter '{}' given twice", what, key));
    params[key] = parse_number(std::string_view(word).substr(eq + 1), key, what);
  }
  return params;
}

std::pair<std::string, std::map<std::string, double>> parse_generator_spec(std::string_view spec) {
  const auto colon = spec.find(':');
  std::string kind(spec.substr(0, colon));
  if (kind.empty()) throw UsageError(fmt::format("--gen '{}': missing the generator kind (see spmv gen --list)", spec));
  std::vector<std::string> words;
  if (colon != std::string_view::npos) {
    std::string_view rest = spec.substr(colon + 1);
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      words.emplace_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return {kind, parse_key_values(words, fmt::format("--gen {}", spec))};
}

std::string generator_label(const std::string& kind, const std::map<std::string, double>& params) {
  std::string label = kind;
  char sep = ':';
  for (auto& [key, value] : params) {
    label += fmt::format("{}{}={}", sep, key, value);
    sep = ',';
  }
  return label;
}

std::string algorithm_names() {
  std::string names;
  for (Algorithm a : all_algorithms()) names += fmt::format("{}{}", names.empty() ? "" : ", ", to_string(a));
  return names;
}

HostMatrix shuffled(const HostMatrix& a, std::uint64_t seed) {
  if (a.rows != a.cols)
    throw UsageError(fmt::format("--shuffle relabels square matrices; this one is {} x {}", a.rows, a.cols));
  std::vector<std::int64_t> order(static_cast<std::size_t>(a.rows));
  std::iota(order.begin(), order.end(), 0);
  std::uint64_t state = seed;
  for (std::size_t i = order.size(); i > 1; --i) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::swap(order[i - 1], order[z % i]);
  }
  return permute_symmetric(a, order);
}

void add_reorder_option(CLI::App& sub, Reorder& reorder) {
  sub.add_option_function<std::string>(
         "--reorder",
         [&reorder](const std::string& name) {
           const auto how = parse_reorder(name);
           if (!how) throw UsageError("--reorder '" + name + "': expected none, rcm or degree");
           reorder = *how;
         },
         "Renumber a square matrix once for x locality and permute x and y in every product: none (default), rcm "
         "(reverse Cuthill-McKee) or degree (longest rows first); vendor baselines run on the matrix as given")
      ->type_name("NAME");
}

void add_deterministic_option(CLI::App& sub, bool& deterministic) {
  sub.add_flag("--deterministic", deterministic,
               "Bitwise-reproducible products: refuse algorithms whose summation order depends on timing; Auto picks "
               "a reproducible one");
}

void add_shuffle_option(CLI::App& sub, std::uint64_t& seed) {
  sub.add_option("--shuffle", seed,
                 "Relabel every (square) matrix with a random symmetric permutation of this seed first: a mesh or "
                 "graph whose numbering carries no locality (0: off)")
      ->check(CLI::NonNegativeNumber);
}

Algorithm parse_algorithm_name(std::string_view name) {
  if (auto a = parse_algorithm(name)) return *a;
  throw UsageError(fmt::format("unknown algorithm '{}'; valid names: auto, tune, {}", name, algorithm_names()));
}

Backend resolve_backend(std::string_view name, std::string* note) {
  if (note) note->clear();
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") {
    if (!cuda_available())
      throw UsageError(
          "--backend cuda: no CUDA device is usable (or spmv was built without -DSPMV_ENABLE_CUDA=ON); "
          "use --backend cpu or auto");
    return Backend::Cuda;
  }
  if (name == "auto") {
    if (cuda_available()) return Backend::Cuda;
    if (note) *note = "no CUDA device found: running on the CPU backend";
    return Backend::Cpu;
  }
  throw UsageError(fmt::format("unknown backend '{}'; expected cpu, cuda or auto", name));
}

std::string human_count(double n) {
  if (n >= 1e9) return fmt::format("{:.3g} G", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.3g} M", n / 1e6);
  if (n >= 1e4) return fmt::format("{:.3g} k", n / 1e3);
  return fmt::format("{}", n);
}

std::string human_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

SolverOptions solver_options(const std::string& method, const std::string& precond, double tol, int maxit,
                             int restart, int progress_every, bool unfused, bool print_progress) {
  SolverOptions so;
  so.method = *parse_solver_method(method);
  so.preconditioner = *parse_preconditioner(precond);
  so.tolerance = tol;
  so.max_iterations = maxit;
  so.restart = restart;
  so.progress_every = progress_every;
  so.fused = !unfused;
  if (print_progress)
    so.progress = [](const SolverProgress& p) {
      fmt::print("  iteration {:>6}  residual {:.3e}\n", p.iteration, p.relative_residual);
      std::fflush(stdout);
    };
  return so;
}

}  // namespace spmv::cli
