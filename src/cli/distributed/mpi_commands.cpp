// `spmv multiply --distributed` and `spmv bench --distributed` over MPI (docs/DISTRIBUTED.md, docs/CLI.md).
// Every rank reads its part of the matrix file (--read-mode) or generates its rows; rank 0 reads the
// vectors, gathers and writes or reports.
// Failures on one rank are errors on every rank (dist::agree), so mpirun never waits on a dead peer.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>
#include <tuple>

#include "cli_common.hpp"
#include "distributed/distributed_cli.hpp"
#include "spmv/cpu.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

#if SPMV_HAS_NCCL
#include <cuda_runtime_api.h>

#include "spmv/cuda/device_buffer.hpp"
#endif

namespace spmv::cli {
namespace {

using dist::Communicator;

dist::PartitionKind partition_kind(const DistributedFlags& f) {
  if (f.partition == "graph") return dist::PartitionKind::Graph;
  if (f.partition == "parallel-graph") return dist::PartitionKind::ParallelGraph;
  if (f.partition == "streaming") return dist::PartitionKind::Streaming;
  return f.partition == "rows" ? dist::PartitionKind::Rows : dist::PartitionKind::Nonzeros;
}

dist::ReadMode read_mode(const DistributedFlags& f) {
  if (f.read_mode == "ranges") return dist::ReadMode::ByteRanges;
  return f.read_mode == "root" ? dist::ReadMode::Root : dist::ReadMode::Auto;
}

#if SPMV_HAS_NCCL
constexpr bool kHasNccl = true;
#else
constexpr bool kHasNccl = false;
#endif

// --backend for a distributed run: cuda needs a GPU on every rank and a build with NCCL; auto takes
// it when both hold, else the CPU. The same answer on every rank.
Backend distributed_backend(const Communicator& comm, const std::string& name) {
  if (name != "cpu" && name != "cuda" && name != "auto") resolve_backend(name, nullptr);  // the usual error
  int usable = kHasNccl && cuda_available();
  MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, comm.get());
  if (name == "cuda" && !usable)
    throw UsageError(kHasNccl ? "--backend cuda --distributed: a rank has no usable CUDA device"
                              : "--backend cuda --distributed: this spmv was built without NCCL (-DSPMV_WITH_NCCL=ON, "
                                "docs/DISTRIBUTED.md)");
  return name != "cpu" && usable ? Backend::Cuda : Backend::Cpu;
}

// The graph partition's cost and quality, from the root (stderr: the reports on stdout keep their form).
template <class Value>
void report_graph_partition(const Communicator& comm, const dist::LocalRows<Value>& rows, const DistributedFlags& f,
                            bool quiet) {
  if (quiet || comm.rank() != 0 || rows.edge_cut < 0) return;
  switch (partition_kind(f)) {
    case dist::PartitionKind::Graph:
      fmt::print(stderr, "graph partition (METIS, {} parts): edge cut {}, {:.1f} ms on rank 0\n", comm.size(),
                 rows.edge_cut, rows.partition_ms);
      break;
    case dist::PartitionKind::Streaming:
      fmt::print(stderr, "streaming partition (LDG, {} parts): edge cut {}, {:.1f} ms (slowest rank)\n", comm.size(),
                 rows.edge_cut, rows.partition_ms);
      break;
    default:
      fmt::print(stderr, "parallel graph partition (PT-Scotch, {} parts): edge cut {}, {:.1f} ms (slowest rank)\n",
                 comm.size(), rows.edge_cut, rows.partition_ms);
  }
}

// Runs f on the root alone; its failure is an error on every rank.
template <class F>
void on_root(const Communicator& comm, F&& f) {
  std::string error;
  if (comm.rank() == 0) {
    try {
      f();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  dist::agree(comm, error);
}

// What both blocks of every rank get from the command line.
template <class Args>
Options block_options(const Args& a) {
  Options o;
  o.threads = a.threads;
  o.expected_applies = a.expected_applies;
  return o;
}

// The matrix's options from the command line.
template <class Args>
dist::DistributedOptions matrix_options(const Args& a, Backend backend, Algorithm algorithm) {
  dist::DistributedOptions o{backend, algorithm, block_options(a)};
  o.progress_chunks = a.flags.progress_chunks;
  return o;
}

// 32-bit block indices when every rank's rows, columns and nonzeros fit them.
template <class Value>
bool fits32_everywhere(const Communicator& comm, const dist::LocalRows<Value>& r) {
  int ok = fits_index<std::int32_t>(r.matrix.rows, r.global_cols, r.matrix.nnz());
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm.get());
  return ok != 0;
}

// ---- multiply ------------------------------------------------------------------------------------

template <class Value, class Index>
std::vector<double> multiply_on(const Communicator& comm, const dist::LocalRows<Value>& rows,
                                const DistributedMultiply& a, Backend backend, const std::vector<double>& x,
                                const std::vector<double>& y0) {
  const Operation op = a.transpose ? Operation::Transpose : Operation::NonTranspose;
  dist::DistributedMatrix<Value, Index> m(comm, rows, op, matrix_options(a, backend, parse_algorithm_name(a.algo)));
  const std::vector<Value> xw(x.begin(), x.end()), yw(y0.begin(), y0.end());
  const auto xp = dist::scatter<Value>(comm, m.x_partition(), xw);
  auto yp = dist::scatter<Value>(comm, m.y_partition(), yw);
  m.apply(static_cast<Value>(a.alpha), xp, static_cast<Value>(a.beta), yp);
  const auto y = dist::gather<Value>(comm, m.y_partition(), yp);
  if (!a.quiet && comm.rank() == 0) {
    const auto info = m.info();
    fmt::print(stderr,
               "multiply: distributed over {} ranks ({} partition), {} backend, rank 0 blocks: local {}, remote {}, "
               "{}-bit indices, op {}\n",
               comm.size(), a.flags.partition, to_string(backend), info.local_algorithm, info.remote_algorithm, 8 * sizeof(Index),
               to_string(op));
  }
  return {y.begin(), y.end()};
}

template <class Value>
void multiply_in(const Communicator& comm, const DistributedMultiply& a, Backend backend) {
  const auto rows =
      dist::read_matrix_market<Value>(comm, a.file, partition_kind(a.flags), a.read, read_mode(a.flags));
  // --partition graph|parallel-graph|streaming: the order, on the root (gathered from the ranks but for graph).
  const auto permutation = dist::gather_permutation(comm, rows);
  const std::int64_t x_len = a.transpose ? rows.global_rows : rows.global_cols;
  const std::int64_t y_len = a.transpose ? rows.global_cols : rows.global_rows;
  std::vector<double> x, y0;
  on_root(comm, [&] {
    const auto load = [&](const std::string& path, std::int64_t n, double fill, const char* option) {
      if (path.empty()) return std::vector<double>(static_cast<std::size_t>(n), fill);
      if (path != "-" && !std::filesystem::exists(path))
        throw UsageError(fmt::format("{} '{}': no such file", option, path));
      auto v = read_vector(path);
      if (static_cast<std::int64_t>(v.size()) != n)
        throw UsageError(fmt::format("{} '{}' has {} entries, but op(A) needs {}", option, path, v.size(), n));
      return v;
    };
    x = load(a.x_file, x_len, 1.0, "--x");  // default: all ones (y = row sums)
    y0 = load(a.y0_file, y_len, 0.0, "--y0");
    // --partition graph|parallel-graph|streaming: the distributed rows are P A P^T; the vectors follow, the
    // output goes back.
    x = dist::to_distributed_order<double>(permutation, x);
    y0 = dist::to_distributed_order<double>(permutation, y0);
  });
  report_graph_partition(comm, rows, a.flags, a.quiet);
  const auto y = fits32_everywhere(comm, rows) ? multiply_on<Value, std::int32_t>(comm, rows, a, backend, x, y0)
                                               : multiply_on<Value, std::int64_t>(comm, rows, a, backend, x, y0);
  on_root(comm, [&] { write_vector(a.output, dist::to_original_order<double>(permutation, y)); });
}

// ---- bench ---------------------------------------------------------------------------------------

// x_i and y0_i from the global index alone (splitmix64), so that every rank draws its own part.
double draw(std::uint64_t seed, std::int64_t i) {
  std::uint64_t z = seed * 0xD1B54A32D192ED03ull + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
}

template <class Value>
std::vector<Value> draw_part(const dist::RowPartition& p, int rank, std::uint64_t seed) {
  std::vector<Value> v(static_cast<std::size_t>(p.count(rank)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<Value>(draw(seed, p.begin(rank) + static_cast<std::int64_t>(i)));
  return v;
}

// Waits at a barrier without spinning, so that the root's single-rank timing gets the cores.
void idle_barrier(const Communicator& comm) {
  MPI_Request r;
  MPI_Ibarrier(comm.get(), &r);
  for (int done = 0;;) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

double max_over_ranks(const Communicator& comm, double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, comm.get());
  return v;
}

// Median over samples of the slowest rank's time per call of f; the iterations per sample grow until
// a sample lasts min_sample_ms (decided on reduced times, so the same count on every rank). `finish`
// ends a sample (the CUDA backend: wait for the stream the products were enqueued on).
template <class F, class Finish>
double median_ms(const Communicator& comm, const TimingOptions& t, F&& f, Finish&& finish) {
  for (int i = 0; i < t.warmup; ++i) f();
  finish();
  const auto sample = [&](int iterations) {
    MPI_Barrier(comm.get());
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) f();
    finish();
    return max_over_ranks(comm, (MPI_Wtime() - start) * 1e3);
  };
  int iterations = 1;
  for (double ms = sample(1); ms < t.min_sample_ms && iterations < (1 << 20); ms = sample(iterations))
    iterations *= ms > 0 ? std::clamp(static_cast<int>(t.min_sample_ms / ms * 1.2) + 1, 2, 16) : 16;
  std::vector<double> samples;
  for (int s = 0; s < std::max(1, t.repetitions); ++s) samples.push_back(sample(iterations) / iterations);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

template <class F>
double median_ms(const Communicator& comm, const TimingOptions& t, F&& f) {
  return median_ms(comm, t, std::forward<F>(f), [] {});
}

#if SPMV_HAS_NCCL
// The CUDA backend's products timed on device copies of x and y, enqueued on a stream of their own.
template <class Value, class Index>
double device_median_ms(const Communicator& comm, const TimingOptions& t, dist::DistributedMatrix<Value, Index>& m,
                        Value alpha, std::span<const Value> x, Value beta, std::span<const Value> y) {
  SPMV_CUDA_CHECK(cudaSetDevice(m.device()));
  cuda::DeviceBuffer<Value> dx(x), dy(y);
  cudaStream_t stream = nullptr;
  SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double ms = median_ms(
      comm, t, [&] { m.apply(alpha, dx.data(), beta, dy.data(), stream); },
      [&] { SPMV_CUDA_CHECK(cudaStreamSynchronize(stream)); });
  cudaStreamDestroy(stream);
  return ms;
}
#endif

// max_i |y_i - ref_i| / bound_i with the tests' bound (tests/common/error_bound.hpp):
// c = 2 (n_i + 2), bound_i = c eps (|beta| |y0_i| + |alpha| sum_j |a_ij x_j|) + c tiny.
template <class Value>
double error_ratio(const CsrMatrix<Value, std::int64_t>& a, Operation op, double alpha, const std::vector<Value>& x,
                   double beta, const std::vector<Value>& y0, const std::vector<Value>& y) {
  const auto ad = convert<double, std::int64_t>(a);
  const std::vector<double> xd(x.begin(), x.end());
  std::vector<double> ref(y0.begin(), y0.end());
  cpu::reference<double, std::int64_t>(ad, op, alpha, xd, beta, ref);
  const auto magnitude = cpu::reference_magnitude<double, std::int64_t>(ad, op, xd);
  std::vector<std::int64_t> n(ref.size(), 0);
  if (op == Operation::NonTranspose)
    for (std::int64_t r = 0; r < a.rows; ++r) n[r] = a.row_length(r);
  else
    for (auto c : a.col_idx) ++n[c];
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double c = 2.0 * (static_cast<double>(n[i]) + 2.0);
    const double scale = (beta == 0 ? 0 : std::abs(beta * static_cast<double>(y0[i]))) + std::abs(alpha) * magnitude[i];
    const double bound = c * std::numeric_limits<Value>::epsilon() * scale + c * std::numeric_limits<Value>::min();
    const double e = std::abs(static_cast<double>(y[i]) - ref[i]);
    worst = std::max(worst, std::isnan(e) ? std::numeric_limits<double>::infinity() : e / bound);
  }
  return worst;
}

// One rank's line of the report, gathered on the root as doubles.
enum Field {
  kRows, kNnz, kLocalNnz, kRemoteNnz, kHalo, kSent, kNeighbors, kBytes, kLocalMs, kRemoteMs, kWaitMs, kPackMs,
  kExchangeMs, kFields
};
constexpr int kLabel = 96;  // characters of each block's algorithm label in the gathered report

template <class Value, class Index>
void print_report(const std::string& label, const CsrMatrix<Value, std::int64_t>& whole, const DistributedBench& a,
                  Backend backend, Operation op, int ranks, const std::vector<double>& all,
                  const std::vector<char>& names) {
  fmt::print("{}: {} x {}, nnz {}, {}, {}-bit block indices, op {}, {} ranks ({} partition), {}\n", label,
             whole.rows, whole.cols, whole.nnz(), sizeof(Value) == 4 ? "f32" : "f64", 8 * sizeof(Index), to_string(op),
             ranks, a.flags.partition,
             backend == Backend::Cuda ? std::string("CUDA backend, one GPU per rank, halo over NCCL")
                                      : "CPU backend, OpenMP threads per rank: " +
                                            (a.threads > 0 ? std::to_string(a.threads) : std::string("default")));
  fmt::print("{:>4} {:>10} {:>11} {:>11} {:>10} {:>9} {:>9} {:>4} {:>10} {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", "rank",
             "rows", "nnz", "local nnz", "remote nnz", "halo in", "sent", "nbrs", "bytes/prod", "local ms",
             "remote ms", "wait ms", "pack ms", "xchg ms", "local | remote block");
  for (int r = 0; r < ranks; ++r) {
    const double* f = all.data() + static_cast<std::ptrdiff_t>(r) * kFields;
    const char* n = names.data() + static_cast<std::ptrdiff_t>(r) * 2 * kLabel;
    fmt::print("{:>4} {:>10} {:>11} {:>11} {:>10} {:>9} {:>9} {:>4} {:>10} {:>9.4f} {:>9.4f} {:>8.4f} {:>8.4f} "
               "{:>8.4f}  {} | {}\n",
               r, f[kRows], f[kNnz], f[kLocalNnz], f[kRemoteNnz], f[kHalo], f[kSent], f[kNeighbors], f[kBytes],
               f[kLocalMs], f[kRemoteMs], f[kWaitMs], f[kPackMs], f[kExchangeMs], std::string(n),
               std::string(n + kLabel));
  }
}

template <class Value, class Index>
bool bench_on(const Communicator& comm, const dist::LocalRows<Value>& rows, const std::string& label,
              const DistributedBench& a, Backend backend, nlohmann::json& records) {
  const int rank = comm.rank(), ranks = comm.size();
  const Operation op = a.transpose ? Operation::Transpose : Operation::NonTranspose;
  const Algorithm algorithm = parse_algorithm_name(a.algo.empty() ? "auto" : a.algo);
  MPI_Barrier(comm.get());
  const double start = MPI_Wtime();
  dist::DistributedMatrix<Value, Index> m(comm, rows, op, matrix_options(a, backend, algorithm));
  const double setup_ms = max_over_ranks(comm, (MPI_Wtime() - start) * 1e3);
  const auto alpha = static_cast<Value>(a.alpha), beta = static_cast<Value>(a.beta);
  const auto x = draw_part<Value>(m.x_partition(), rank, 1);
  auto y0 = draw_part<Value>(m.y_partition(), rank, 2);
  if (a.beta == 0) std::fill(y0.begin(), y0.end(), std::numeric_limits<Value>::quiet_NaN());  // must be overwritten

  // One product verified against the single-process reference on the root, and one rank timed there
  // on the whole matrix (the same algorithm and threads, or the same GPU) while the others sleep.
  auto y = y0;
  m.apply(alpha, x, beta, y);
  const auto whole = dist::gather_rows(comm, rows);
  const auto xw = dist::gather<Value>(comm, m.x_partition(), x);
  const auto y0w = dist::gather<Value>(comm, m.y_partition(), y0);
  const auto yw = dist::gather<Value>(comm, m.y_partition(), y);
  double ratio = 0, single_ms = 0;
  std::string single_algorithm;
  on_root(comm, [&] {
    ratio = error_ratio(whole, op, a.alpha, xw, a.beta, y0w, yw);
    Options single = block_options(a);
    single.device = std::max(m.device(), 0);
    const auto time_whole = [&]<class I>(const CsrMatrix<Value, I>& w) {
      auto plan = make_operator(backend, w, algorithm, op, single);
      single_algorithm = std::string(to_string(plan->algorithm()));
      auto scratch = y0w;
      single_ms = plan->time(alpha, xw, beta, scratch, a.timing).median_ms;
    };
    // The whole matrix may need 64-bit indices where every rank's blocks fit 32 bits.
    if (fits_index<Index>(whole.rows, whole.cols, whole.nnz())) time_whole(convert<Value, Index>(whole));
    else time_whole(whole);
  });
  idle_barrier(comm);
  MPI_Bcast(&ratio, 1, MPI_DOUBLE, 0, comm.get());

  m.reset_profile();
  double dist_ms = 0;
  if (backend == Backend::Cuda) {
#if SPMV_HAS_NCCL
    dist_ms = device_median_ms<Value, Index>(comm, a.timing, m, alpha, x, beta, y);
#endif
    // The step times come from host-vector products, which the CUDA backend profiles with events.
    m.reset_profile();
    for (int i = 0; i < std::max(3, a.timing.repetitions); ++i) m.apply(alpha, x, beta, y);
  } else {
    dist_ms = median_ms(comm, a.timing, [&] { m.apply(alpha, x, beta, y); });
  }
  const auto profile = m.profile();
  const double exchange_ms = median_ms(comm, a.timing, [&] { m.exchange_only(x); });
  const auto info = m.info();
  const double per = profile.applies > 0 ? 1.0 / static_cast<double>(profile.applies) : 0.0;
  const double mine[kFields] = {double(info.rows), double(info.nonzeros), double(info.local_nonzeros),
                                double(info.remote_nonzeros), double(info.halo_entries), double(info.send_entries),
                                double(info.neighbors), double(info.bytes_sent), profile.local_ms * per,
                                profile.remote_ms * per, profile.wait_ms * per,
                                (profile.pack_ms + profile.unpack_ms) * per, exchange_ms};
  char names[2 * kLabel] = {};
  std::strncpy(names, info.local_algorithm.c_str(), kLabel - 1);
  std::strncpy(names + kLabel, info.remote_algorithm.c_str(), kLabel - 1);
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(kFields * ranks) : 0);
  std::vector<char> all_names(rank == 0 ? static_cast<std::size_t>(2 * kLabel * ranks) : 0);
  MPI_Gather(mine, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, comm.get());
  MPI_Gather(names, 2 * kLabel, MPI_CHAR, all_names.data(), 2 * kLabel, MPI_CHAR, 0, comm.get());
  if (rank != 0) return ratio <= 1.0;

  print_report<Value, Index>(label, whole, a, backend, op, ranks, all, all_names);
  const double speedup = single_ms / dist_ms;
  fmt::print("distributed: {:.4f} ms per product (slowest rank, median), {:.2f} GFLOP/s, setup {:.1f} ms\n", dist_ms,
             2.0 * static_cast<double>(whole.nnz()) / dist_ms * 1e-6, setup_ms);
  fmt::print("one rank:    {:.4f} ms per product ({} on the whole matrix, rank 0)\n", single_ms, single_algorithm);
  fmt::print("speed-up {:.2f}x, efficiency {:.0f}%; verified against the single-process reference: error/bound "
             "{:.3g}{}\n\n",
             speedup, 100 * speedup / ranks, ratio, ratio <= 1.0 ? "" : "  FAILED");
  std::fflush(stdout);
  nlohmann::json per_rank = nlohmann::json::array();
  const char* keys[kFields] = {"rows",      "nonzeros",  "local_nonzeros", "remote_nonzeros", "halo_entries",
                               "sent_entries", "neighbors", "bytes_sent",  "local_ms",        "remote_ms",
                               "wait_ms",   "pack_ms",   "exchange_ms"};
  for (int r = 0; r < ranks; ++r) {
    nlohmann::json line = {{"rank", r}};
    for (int f = 0; f < kFields; ++f) line[keys[f]] = all[static_cast<std::size_t>(r * kFields + f)];
    const char* n = all_names.data() + static_cast<std::ptrdiff_t>(r) * 2 * kLabel;
    line["local_algorithm"] = std::string(n);
    line["remote_algorithm"] = std::string(n + kLabel);
    per_rank.push_back(line);
  }
  records.push_back({{"matrix", label},
                     {"rows", whole.rows},
                     {"cols", whole.cols},
                     {"nnz", whole.nnz()},
                     {"precision", sizeof(Value) == 4 ? "f32" : "f64"},
                     {"index_bits", 8 * sizeof(Index)},
                     {"op", to_string(op)},
                     {"ranks", ranks},
                     {"backend", to_string(backend)},
                     {"partition", a.flags.partition},
                     {"threads_per_rank", a.threads},
                     {"per_rank", per_rank},
                     {"ms_per_product", dist_ms},
                     {"setup_ms", setup_ms},
                     {"single_rank_ms", single_ms},
                     {"single_rank_algorithm", single_algorithm},
                     {"speedup", speedup},
                     {"efficiency", speedup / ranks},
                     {"error_over_bound", ratio},
                     {"verified", ratio <= 1.0}});
  return ratio <= 1.0;
}

template <class Value>
bool bench_source(const Communicator& comm, const std::string& file, const std::string& kind,
                  const std::map<std::string, double>& params, const DistributedBench& a, Backend backend,
                  nlohmann::json& records) {
  const auto rows = file.empty() ? dist::generate<Value>(comm, kind, params, partition_kind(a.flags))
                                 : dist::read_matrix_market<Value>(comm, file, partition_kind(a.flags), a.read,
                                                                   read_mode(a.flags));
  const std::string label = file.empty() ? generator_label(kind, params) : matrix_name(file);
  report_graph_partition(comm, rows, a.flags, a.quiet);
  return fits32_everywhere(comm, rows) ? bench_on<Value, std::int32_t>(comm, rows, label, a, backend, records)
                                       : bench_on<Value, std::int64_t>(comm, rows, label, a, backend, records);
}


// ---- solve ---------------------------------------------------------------------------------------

template <class Value, class Index>
int solve_on(const Communicator& comm, const dist::LocalRows<Value>& rows, const std::string& label,
             const DistributedSolve& a, Backend backend) {
  if (rows.global_rows != rows.global_cols)
    throw UsageError(fmt::format("{} is {} x {}: spmv solve needs a square matrix", label, rows.global_rows,
                                 rows.global_cols));
  dist::DistributedMatrix<Value, Index> m(comm, rows, Operation::NonTranspose,
                                          matrix_options(a, backend, parse_algorithm_name(a.algo)));
  const dist::RowPartition& part = m.y_partition();
  const int rank = comm.rank();
  // The order on the root, where whole vectors are read or written (gathered only then: ParallelGraph's and
  // Streaming's permutation is otherwise never whole).
  std::vector<std::int64_t> permutation;
  if (!a.rhs_file.empty() || !a.output.empty()) permutation = dist::gather_permutation(comm, rows);
  // b: this rank's part of --rhs (read on the root), or of A * 1 (row sums of the local rows, in double).
  std::vector<Value> b;
  const bool known_solution = a.rhs_file.empty();
  if (known_solution) {
    const auto& lm = rows.matrix;
    b.resize(static_cast<std::size_t>(lm.rows));
    for (std::int64_t i = 0; i < lm.rows; ++i) {
      double sum = 0;
      for (auto k = lm.row_ptr[i]; k < lm.row_ptr[i + 1]; ++k) sum += lm.values[k];
      b[static_cast<std::size_t>(i)] = static_cast<Value>(sum);
    }
  } else {
    std::vector<double> whole;
    on_root(comm, [&] {
      if (a.rhs_file != "-" && !std::filesystem::exists(a.rhs_file))
        throw UsageError(fmt::format("--rhs '{}': no such file", a.rhs_file));
      whole = read_vector(a.rhs_file);
      if (static_cast<std::int64_t>(whole.size()) != rows.global_rows)
        throw UsageError(fmt::format("--rhs '{}' has {} entries, the matrix has {} rows", a.rhs_file, whole.size(),
                                     rows.global_rows));
    });
    const std::vector<Value> w(whole.begin(), whole.end());
    b = dist::scatter<Value>(comm, part, dist::to_distributed_order<Value>(permutation, w));
  }
  SolverOptions so = solver_options(a.method, a.precond, a.tol, a.maxit, a.restart, a.progress, a.unfused, rank == 0);
  so.pipelined = a.pipelined;
  so.graph = a.graph;
  so.gmres_basis = *parse_gmres_basis(a.gmres_basis);
  so.gmres_s_step = a.gmres_s_step;
  const auto diagonal = so.preconditioner == Preconditioner::Jacobi ? dist::local_diagonal(comm, rows)
                                                                      : std::vector<Value>{};
  std::vector<Value> x(b.size(), Value(0));
  const SolverResult r = dist::solve<Value>(comm, m, b, x, so, diagonal);

  // The summary: rank 0 prints what every rank agrees on, plus the largest per-rank halo and time.
  double err = 0;
  if (known_solution)
    for (Value v : x) err = std::max(err, std::abs(static_cast<double>(v) - 1.0));
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm.get());
  const auto info = m.info();
  std::int64_t halo_max = info.halo_entries, halo_total = info.halo_entries;
  MPI_Allreduce(MPI_IN_PLACE, &halo_max, 1, MPI_INT64_T, MPI_MAX, comm.get());
  MPI_Allreduce(MPI_IN_PLACE, &halo_total, 1, MPI_INT64_T, MPI_SUM, comm.get());
  double ms_max = r.ms_per_iteration;
  MPI_Allreduce(MPI_IN_PLACE, &ms_max, 1, MPI_DOUBLE, MPI_MAX, comm.get());
  if (rank == 0) {
    fmt::print("{}: {} after {} iterations{}\n", to_string(so.method),
               r.converged ? "converged" : (r.breakdown.empty() ? "NOT converged (max iterations)" : "BREAKDOWN"),
               r.iterations, r.breakdown.empty() ? "" : ": " + r.breakdown);
    fmt::print("  true residual |b - Ax|/|b|  {:.3e}   (recurrence {:.3e})\n", r.residual, r.recurrence_residual);
    if (known_solution) fmt::print("  max error |x - 1|_inf       {:.3e}   (b = A*1)\n", err);
    fmt::print("  time {:.4f} ms/iteration (slowest rank; {}), {} applies; halo {} entries per product (largest "
               "rank {}); rank 0 blocks: local {}, remote {}\n",
               ms_max, r.variant, r.applies, halo_total, halo_max, info.local_algorithm, info.remote_algorithm);
  }
  if (!a.output.empty()) {  // the same on every rank: the gather is collective
    const auto gathered = dist::gather<Value>(comm, m.x_partition(), x);
    const auto whole_x = dist::to_original_order<Value>(permutation, gathered);
    const std::vector<double> out(whole_x.begin(), whole_x.end());
    on_root(comm, [&] { write_vector(a.output, out); });
  }
  return r.converged ? kExitOk : kExitNotConverged;
}

template <class Value>
int solve_in(const Communicator& comm, const DistributedSolve& a) {
  dist::LocalRows<Value> rows;
  std::string label;
  if (!a.gen.empty()) {
    auto [kind, params] = parse_generator_spec(a.gen);
    rows = dist::generate<Value>(comm, kind, params, partition_kind(a.flags));
    label = generator_label(kind, params);
  } else {
    rows = dist::read_matrix_market<Value>(comm, a.file, partition_kind(a.flags), a.read, read_mode(a.flags));
    label = matrix_name(a.file);
  }
  const Backend backend = distributed_backend(comm, a.backend);  // auto: the GPUs when every rank has one
  if (comm.rank() == 0)
    fmt::print("solve: {} ({} rows, distributed over {} ranks, {} partition), {}, {} backend{}, {}, tol {:g}, maxit "
               "{}{}\n",
               label, rows.global_rows, comm.size(), a.flags.partition, a.method, to_string(backend),
               backend == Backend::Cuda ? " (one GPU per rank, reductions over NCCL)" : "", a.precision, a.tol, a.maxit,
               a.precond == "jacobi" ? ", Jacobi" : "");
  report_graph_partition(comm, rows, a.flags, false);
  return fits32_everywhere(comm, rows) ? solve_on<Value, std::int32_t>(comm, rows, label, a, backend)
                                       : solve_on<Value, std::int64_t>(comm, rows, label, a, backend);
}

// The CSV of `bench --distributed --csv`: a line per matrix, precision and rank, the record's columns then
// the rank's (prefixed rank_).
constexpr const char* kCsvMatrix[] = {"matrix", "rows", "cols", "nnz", "precision", "index_bits", "op", "ranks",
                                      "backend", "partition", "threads_per_rank", "ms_per_product", "setup_ms",
                                      "single_rank_ms", "single_rank_algorithm", "speedup", "efficiency",
                                      "error_over_bound", "verified"};
constexpr const char* kCsvRank[] = {"rank", "rows", "nonzeros", "local_nonzeros", "remote_nonzeros", "halo_entries",
                                    "sent_entries", "neighbors", "bytes_sent", "local_ms", "remote_ms", "wait_ms",
                                    "pack_ms", "exchange_ms", "local_algorithm", "remote_algorithm"};

std::string csv_header() {
  std::string header;
  for (const char* k : kCsvMatrix) header += std::string(k) + ",";
  for (const char* k : kCsvRank) header += std::string("rank_") + (std::strcmp(k, "rank") ? k : "index") + ",";
  header.pop_back();
  return header;
}

// Before any matrix is run, as the single-process --csv: an existing file must hold this header, and the
// file must open for appending. Returns whether the header is still to be written.
bool check_csv_target(const std::string& path) {
  if (std::filesystem::exists(path) && std::filesystem::file_size(path) > 0) {
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    if (first != csv_header())
      throw UsageError(fmt::format("--csv '{}' exists with a different header (not written by spmv bench "
                                   "--distributed); choose another file or remove it",
                                   path));
    return false;
  }
  if (!std::ofstream(path, std::ios::app)) throw UsageError(fmt::format("--csv '{}': cannot open for writing", path));
  return true;
}

void append_csv(const std::string& path, bool header, const nlohmann::json& records) {
  std::ofstream out(path, std::ios::app);
  const auto cell = [](const nlohmann::json& v) {
    if (v.is_number_float() && std::nearbyint(v.get<double>()) == v.get<double>() && std::abs(v.get<double>()) < 1e15)
      return fmt::format("{}", static_cast<long long>(v.get<double>()));  // counts, stored as doubles
    if (!v.is_string()) return v.dump();
    const std::string s = v.get<std::string>();  // quoted when it holds a separator or a quote
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  if (header) out << csv_header() << '\n';
  for (const auto& r : records)
    for (const auto& p : r["per_rank"]) {
      std::string line;
      for (const char* k : kCsvMatrix) line += cell(r[k]) + ",";
      for (const char* k : kCsvRank) line += cell(p[k]) + ",";
      line.back() = '\n';
      out << line;
    }
  out.flush();
  if (!out) throw UsageError(fmt::format("--csv '{}': writing failed", path));
}

}  // namespace

int run_distributed_multiply(const DistributedMultiply& a) {
  if (a.beta != 0.0 && a.y0_file.empty())
    throw UsageError(fmt::format("--beta {} needs the initial y: pass --y0 FILE", a.beta));
  dist::Environment mpi(nullptr, nullptr);
  const Communicator comm;
  const Backend backend = distributed_backend(comm, a.backend);
  if (a.precision == "f32") multiply_in<float>(comm, a, backend);
  else multiply_in<double>(comm, a, backend);
  return kExitOk;
}

int run_distributed_solve(const DistributedSolve& a) {
  if (a.file.empty() == a.gen.empty()) throw UsageError("give a matrix: FILE or --gen KIND:k=v,... (not both)");
  if (a.graph && a.algo == "tune")  // (as one process: a tuned block changes its plan during the first applies)
    throw UsageError("--graph needs a fixed plan; --algo tune changes its plan during the first applies");
  dist::Environment mpi(nullptr, nullptr);
  const Communicator comm;
  return a.precision == "f32" ? solve_in<float>(comm, a) : solve_in<double>(comm, a);
}

int run_distributed_bench(const DistributedBench& a) {
  dist::Environment mpi(nullptr, nullptr);
  const Communicator comm;
  const Backend backend = distributed_backend(comm, a.backend);
  std::vector<std::tuple<std::string, std::string, std::map<std::string, double>>> sources;
  for (const auto& f : a.files) sources.emplace_back(f, "", std::map<std::string, double>{});
  for (const auto& spec : a.gens) {
    auto [kind, params] = parse_generator_spec(spec);
    sources.emplace_back("", kind, params);
  }
  if (sources.empty()) sources.emplace_back("", "poisson2d", std::map<std::string, double>{{"n", 1000}});
  bool ok = true;
  nlohmann::json records = nlohmann::json::array();  // filled on rank 0
  bool csv_header_due = false;
  if (!a.csv.empty()) on_root(comm, [&] { csv_header_due = check_csv_target(a.csv); });
  for (const auto& [file, kind, params] : sources) {
    if (a.precision != "f32") ok &= bench_source<double>(comm, file, kind, params, a, backend, records);
    if (a.precision != "f64") ok &= bench_source<float>(comm, file, kind, params, a, backend, records);
  }
  if (!a.json.empty())
    on_root(comm, [&] {
      std::ofstream out(a.json);
      if (!out) throw UsageError(fmt::format("--json '{}': cannot open for writing", a.json));
      out << nlohmann::json{{"command", "spmv bench --distributed"}, {"ranks", comm.size()}, {"records", records}}.dump(2)
          << '\n';
    });
  if (!a.csv.empty()) on_root(comm, [&] { append_csv(a.csv, csv_header_due, records); });
  return ok ? kExitOk : kExitVerifyFailed;
}

}  // namespace spmv::cli
