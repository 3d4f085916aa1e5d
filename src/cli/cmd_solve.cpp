// spmv solve [FILE | --gen KIND:k=v,...] [--rhs B] [--method cg|bicgstab|gmres] [--restart M] [--gmres-basis f32|f16]
// [--precond jacobi|none] [--tol T] [--maxit N] [--algo NAME|auto] [--backend cpu|cuda|auto]
// [--precision f32|f64] [--expected-applies N] [--progress N] [--unfused] [--pipelined] [--graph] [--check-every K]
// [--bandwidth GBS] [--json FILE] [-o X]: solves A x = b with a Krylov method (spmv/solvers.hpp) and
// prints progress lines and a summary, with the time per iteration as a multiple of the iteration's
// memory floor (docs/SOLVERS.md, "The floor"). Without --rhs, b = A * 1, so the exact solution is known
// and max |x_i - 1| is printed. Exit codes: 0 converged, 3 not converged
// (max iterations or breakdown; x is still written), 1 errors.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include <fstream>

#include "cli_common.hpp"
#include "distributed/distributed_cli.hpp"
#include "host_bandwidth.hpp"
#include "spmv/device.hpp"
#include "spmv/fem.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"
#include "spmv/solvers.hpp"

namespace spmv::cli {
namespace {

struct SolveOptions {
  std::string file;
  std::string gen;
  std::string rhs_file;
  std::string output;
  std::string method = "cg";
  std::string precond = "none";
  double tol = 1e-8;
  int maxit = 1000;
  int restart = 30;
  std::string gmres_basis = "working";
  int gmres_s_step = 1;
  std::string algo = "auto";
  std::string backend = "auto";
  std::string precision = "f64";
  std::int64_t expected_applies = 0;
  Reorder reorder = Reorder::None;
  bool deterministic = false;
  std::uint64_t shuffle = 0;
  int progress = 0;
  int threads = 0;
  int device = 0;
  bool history = false;
  bool lma = false;
  bool unfused = false;
  bool pipelined = false;
  bool graph = false;
  int check_every = 1;
  double bandwidth = 0;
  std::string json;
  ReadOptions read;
  DistributedFlags distributed;
};

// What `spmv solve` hands to the solver: the assembled matrix today. Matrix-free operators of the same
// problem (the FEM local-matrix-assembly operator of issue 9) plug in at solve_problem(): build their
// LinearOperator (host) or cuda::LinearOperator (device) there and call spmv::solve / spmv::cuda::solve
// with their own diagonal, instead of solve_csr.
struct Problem {
  HostMatrix a;
  std::optional<fem::MeshParams> mesh;  // --lma: solve matrix-free on this FEM mesh
  std::string label;
  std::vector<double> b;
  bool known_solution = false;  // b = A * 1
};

template <class Value, class Index>
SolverResult solve_problem(const Problem& p, Backend backend, Algorithm algorithm, const Options& options,
                           const SolverOptions& so, std::vector<double>& x_out) {
  std::vector<Value> b(p.b.begin(), p.b.end()), x(b.size(), Value(0));
  SolverResult r;
  if (p.mesh) {
    r = solve_lma<Value, Index>(backend, fem::build<Value, Index>(*p.mesh), options, b, x, so);
  } else {
    const auto a = convert<Value, Index>(p.a);
    r = solve_csr<Value, Index>(backend, a, algorithm, options, b, x, so);
  }
  x_out.assign(x.begin(), x.end());
  return r;
}

// The copy bandwidth the floor divides by, as `spmv bench` measures it (or --bandwidth), and how.
std::pair<double, std::string> copy_bandwidth(const SolveOptions& o, Backend backend) {
  if (o.bandwidth > 0) return {o.bandwidth, "given with --bandwidth"};
  if (backend == Backend::Cuda) {
#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
    return {cuda_copy_bandwidth_gbs(o.device), "device-to-device copy"};
#endif
  }
  return {bench::measure_host_copy_bandwidth(o.threads).gbs, "STREAM-like host copy"};
}

void write_json(const std::string& path, const std::string& label, const std::string& precision,
                const SolverOptions& so, const SolverResult& r, const std::string& bandwidth_method) {
  nlohmann::json j = {{"matrix", label},
                      {"method", to_string(so.method)},
                      {"preconditioner", to_string(so.preconditioner)},
                      {"gmres_basis", to_string(so.gmres_basis)},
                      {"gmres_s_step", so.gmres_s_step},
                      {"precision", precision},
                      {"tolerance", so.tolerance},
                      {"converged", r.converged},
                      {"iterations", r.iterations},
                      {"applies", r.applies},
                      {"residual", r.residual},
                      {"recurrence_residual", r.recurrence_residual},
                      {"breakdown", r.breakdown},
                      {"algorithm", r.algorithm},
                      {"variant", r.variant},
                      {"total_ms", r.total_ms},
                      {"ms_per_iteration", r.ms_per_iteration},
                      {"apply_share", r.apply_share},
                      {"apply_bytes", r.apply_bytes},
                      {"applies_per_iteration", r.applies_per_iteration},
                      {"vector_bytes", r.vector_bytes},
                      {"floor_bytes", r.floor_bytes},
                      {"bandwidth_gbs", r.bandwidth_gbs},
                      {"bandwidth_method", bandwidth_method},
                      {"floor_ms", r.floor_ms},
                      {"floor_multiple", r.floor_multiple}};
  if (path == "-") {
    fmt::print("{}\n", j.dump(2));
    return;
  }
  std::ofstream out(path);
  if (!out) throw UsageError(fmt::format("--json '{}': cannot open for writing", path));
  out << j.dump(2) << '\n';
}

int run_solve(const SolveOptions& o) {
  if (o.distributed.enabled) {
    refuse_with_distributed({{o.lma, "--lma"}, {o.history, "--history"}, {!o.json.empty(), "--json"}});
    return run_distributed_solve({o.file, o.gen, o.rhs_file, o.output, o.method, o.precond, o.algo, o.precision,
                                  o.backend, o.tol,
                                  o.maxit, o.restart, o.progress, o.unfused, o.pipelined, o.graph, o.gmres_basis, o.threads,
                                  o.expected_applies, o.read, o.distributed, o.gmres_s_step});
  }
  std::string note;
  const Backend backend = resolve_backend(o.backend, &note);
  if (!note.empty()) fmt::print(stderr, "{}\n", note);
  const Algorithm algorithm = parse_algorithm_name(o.algo);
  SolverOptions so = solver_options(o.method, o.precond, o.tol, o.maxit, o.restart, o.progress, o.unfused, true);
  so.record_history = o.history;
  so.graph = o.graph;
  so.pipelined = o.pipelined;
  so.check_every = o.check_every;
  so.gmres_basis = *parse_gmres_basis(o.gmres_basis);
  so.gmres_s_step = o.gmres_s_step;

  if (o.file.empty() == o.gen.empty()) throw UsageError("give a matrix: FILE or --gen KIND:k=v,... (not both)");
  if (o.lma && (o.gen.rfind("fem2d", 0) != 0 && o.gen.rfind("fem3d", 0) != 0))
    throw UsageError("--lma solves a FEM problem matrix-free: give --gen fem2d:... or --gen fem3d:...");
  Problem p;
  if (!o.gen.empty()) {
    auto [kind, params] = parse_generator_spec(o.gen);
    p.a = gen::generate(kind, params);
    p.label = generator_label(kind, params);
    if (o.lma) p.mesh = fem::mesh_params(kind, params);
  } else {
    ReadOptions read = o.read;
    read.extra_bytes_per_row = 4 * sizeof(double);  // b, x and their copies in the value type
    p.a = load_matrix(o.file, nullptr, read);
    p.label = matrix_name(o.file);
  }
  if (p.a.rows != p.a.cols)
    throw UsageError(fmt::format("{} is {} x {}: spmv solve needs a square matrix", p.label, p.a.rows, p.a.cols));
  if (o.shuffle) {
    if (o.lma) throw UsageError("--shuffle relabels an assembled matrix; --lma solves without one");
    p.a = shuffled(p.a, o.shuffle);
    p.label += fmt::format(" shuffled({})", o.shuffle);
  }
  if (!o.rhs_file.empty()) {
    if (o.rhs_file != "-" && !std::filesystem::exists(o.rhs_file))
      throw UsageError(fmt::format("--rhs '{}': no such file", o.rhs_file));
    p.b = read_vector(o.rhs_file);
    if (static_cast<std::int64_t>(p.b.size()) != p.a.rows)
      throw UsageError(fmt::format("--rhs '{}' has {} entries, the matrix has {} rows", o.rhs_file, p.b.size(), p.a.rows));
  } else {  // b = A * 1, summed in double
    p.b.assign(p.a.rows, 0.0);
    for (std::int64_t i = 0; i < p.a.rows; ++i)
      for (auto k = p.a.row_ptr[i]; k < p.a.row_ptr[i + 1]; ++k) p.b[i] += p.a.values[k];
    p.known_solution = true;
  }

  Options options;
  options.expected_applies = o.expected_applies;
  options.reorder = o.reorder;
  options.deterministic = o.deterministic;
  options.threads = o.threads;
  options.device = o.device;
  fmt::print("solve: {} ({} rows, {} nonzeros), {}{}, {} backend, {}, tol {:g}, maxit {}{}\n", p.label,
             p.a.rows, p.a.nnz(), to_string(so.method),
             so.method == SolverMethod::Gmres
                 ? fmt::format("({}){}{}", so.restart,
                               so.gmres_basis == GmresBasis::Working
                                   ? ""
                                   : fmt::format(", {} basis", to_string(so.gmres_basis)),
                               so.gmres_s_step == 1 ? "" : fmt::format(", s-step {}", so.gmres_s_step))
                 : "",
             to_string(backend), o.precision, so.tolerance, so.max_iterations,
             so.preconditioner == Preconditioner::Jacobi ? ", Jacobi" : "");
  const bool fits32 = fits_index<std::int32_t>(p.a.rows, p.a.cols, p.a.nnz());
  std::vector<double> x;
  SolverResult r;
  if (o.precision == "f64")
    r = fits32 ? solve_problem<double, std::int32_t>(p, backend, algorithm, options, so, x)
               : solve_problem<double, std::int64_t>(p, backend, algorithm, options, so, x);
  else
    r = fits32 ? solve_problem<float, std::int32_t>(p, backend, algorithm, options, so, x)
               : solve_problem<float, std::int64_t>(p, backend, algorithm, options, so, x);

  fmt::print("{}: {} after {} iterations{}\n", to_string(so.method),
             r.converged ? "converged" : (r.breakdown.empty() ? "NOT converged (max iterations)" : "BREAKDOWN"),
             r.iterations, r.breakdown.empty() ? "" : ": " + r.breakdown);
  fmt::print("  true residual |b - Ax|/|b|  {:.3e}   (recurrence {:.3e})\n", r.residual, r.recurrence_residual);
  if (p.known_solution) {
    double err = 0;
    for (double v : x) err = std::max(err, std::abs(v - 1.0));
    fmt::print("  max error |x - 1|_inf       {:.3e}   (b = A*1)\n", err);
  }
  fmt::print("  time {:.3f} ms total, {:.4f} ms/iteration, SpMV share {}, {} applies{}\n", r.total_ms,
             r.ms_per_iteration, r.apply_share < 0 ? std::string("n/a (graph)") : fmt::format("{:.0f}%", 100.0 * r.apply_share),
             r.applies, r.variant.empty() ? "" : ", " + r.variant);
  const auto [gbs, bandwidth_method] = copy_bandwidth(o, backend);
  set_iteration_floor(r, gbs);
  fmt::print("  floor {:.4f} ms/iteration = ({} x {:.1f} MB apply + {:.1f} MB vectors) / {:.1f} GB/s ({}); "
             "time/floor {:.2f}x\n",
             r.floor_ms, r.applies_per_iteration, static_cast<double>(r.apply_bytes) / 1e6,
             static_cast<double>(r.vector_bytes) / 1e6, gbs, bandwidth_method, r.floor_multiple);
  fmt::print("  algorithm {}\n", r.algorithm);
  if (o.history) {
    fmt::print("  history:");
    for (double h : r.history) fmt::print(" {:.3e}", h);
    fmt::print("\n");
  }
  if (!o.output.empty()) write_vector(o.output, x);
  if (!o.json.empty()) write_json(o.json, p.label, o.precision, so, r, bandwidth_method);
  return r.converged ? kExitOk : kExitNotConverged;
}

}  // namespace

Command add_solve_command(CLI::App& parent) {
  auto o = std::make_shared<SolveOptions>();
  CLI::App* sub = parent.add_subcommand("solve", "Solve A x = b with CG, BiCGStab or GMRES (Jacobi optional)");
  sub->add_option("file", o->file, "Matrix Market file (square)");
  sub->add_option("--gen", o->gen, "Generated matrix KIND[:key=value,...], e.g. poisson3d:n=50 (spmv gen --list)");
  add_max_memory_option(*sub, o->read);
  sub->add_option("--rhs", o->rhs_file, "b as a Matrix Market array file or one number per line; default b = A*1");
  sub->add_option("-o,--output", o->output, "Write x (Matrix Market array; '-' for stdout)");
  sub->add_option("--method", o->method, "Krylov method")
      ->check(CLI::IsMember({"cg", "bicgstab", "gmres"}, CLI::ignore_case))
      ->capture_default_str();
  sub->add_option("--restart", o->restart, "GMRES: Krylov vectors per cycle (m of GMRES(m))")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--gmres-basis", o->gmres_basis,
                  "GMRES: store the Krylov basis in the working precision, in f32 (a compressed basis for f64 "
                  "solves: half the orthogonalisation's bytes) or in f16 (f32 solves; docs/SOLVERS.md)")
      ->check(CLI::IsMember({"working", "f32", "f16"}, CLI::ignore_case))
      ->capture_default_str();
  sub->add_option("--gmres-s-step", o->gmres_s_step,
                  "GMRES: Krylov vectors per s-step block, 1-8 (1: one Arnoldi step at a time; S > 1: Newton "
                  "basis blocks after a first Arnoldi cycle, one Gram-Schmidt pass over V per block; "
                  "working-precision basis only; docs/SOLVERS.md, \"s-step GMRES\")")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  sub->add_option("--precond", o->precond, "Preconditioner")
      ->check(CLI::IsMember({"none", "jacobi"}, CLI::ignore_case))
      ->capture_default_str();
  sub->add_option("--tol", o->tol, "Relative tolerance: stop when |r| <= tol*|b|")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--maxit", o->maxit, "Maximum iterations")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--algo", o->algo, "SpMV algorithm: auto or one of " + algorithm_names())->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu, cuda, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sub->add_option("--precision", o->precision, "Value type of the solve: f32 or f64")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  add_shuffle_option(*sub, o->shuffle);
  add_reorder_option(*sub, o->reorder);
  add_deterministic_option(*sub, o->deterministic);
  sub->add_option("--expected-applies", o->expected_applies,
                  "Products the solve will run (e.g. maxit): lets Auto convert formats when repaid (0: unknown)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--progress", o->progress, "Print the residual every N iterations (0: never)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--history", o->history, "Print the recurrence residual of every iteration");
  sub->add_flag("--lma", o->lma,
                "With --gen fem2d|fem3d: apply the matrix as the local-matrix-assembly operator (element matrices, "
                "no assembled CSR) instead of an SpMV algorithm; b = A*1 from the assembled matrix as usual");
  sub->add_flag("--pipelined", o->pipelined,
                "CG: the pipelined recurrence, one global reduction per iteration instead of two, hidden behind the next "
                "product with --distributed (docs/SOLVERS.md)");
  sub->add_flag("--unfused", o->unfused,
                "CG: run issue 9's unfused kernels instead of the fused iteration (to compare; same iterates up to "
                "rounding)");
  sub->add_flag("--graph", o->graph,
                "CUDA, CG and BiCGStab: capture one iteration in a CUDA graph and launch it per iteration (not with --algo tune)");
  sub->add_option("--check-every", o->check_every,
                  "CUDA: read the device's stopping state every K iterations (asynchronously, one read behind)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--bandwidth", o->bandwidth,
                  "Copy bandwidth in GB/s for the floor per iteration (default: measured as spmv bench does)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--json", o->json, "Write the result (iterations, times, floor) as JSON ('-' for stdout)");
  sub->add_option("--threads", o->threads, "CPU threads (0: OpenMP default)")->check(CLI::NonNegativeNumber);
  sub->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber)->capture_default_str();
  add_distributed_options(*sub, o->distributed);
  sub->footer(
      "Exit codes: 0 converged, 3 not converged (max iterations or breakdown; x is still written), 1 error.\n"
      "Example: spmv solve --gen poisson2d:n=500 --method cg --precond jacobi --tol 1e-8 --progress 100");
  return {sub, [o] { return run_solve(*o); }};
}

}  // namespace spmv::cli
