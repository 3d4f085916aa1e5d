// DistributedMatrix: validation and setup (collective), then the product with the halo exchange
// overlapping the local block (docs/DISTRIBUTED.md).
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <limits>

#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "distributed/block_split.hpp"
#include "distributed/collective.hpp"
#include "distributed/device_part.hpp"
#include "distributed/halo_exchange.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/distributed.hpp"
#include "spmv/host_memory.hpp"

namespace spmv::dist {
namespace {

// FNV-1a over the offsets: ranks compare partitions through one fixed-size reduction.
std::int64_t fingerprint(const RowPartition& p) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (auto v : p.offsets) h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ull;
  return static_cast<std::int64_t>(h >> 1);
}

// Sizes and partitions must be the same on every rank: compared through MIN and MAX reductions of a
// fixed-size summary, so that ranks holding partitions of different lengths cannot mismatch a call.
void check_agreement(const Communicator& comm, const LocalRows<auto>& a, Backend backend) {
  constexpr std::size_t n = 7;
  const std::array<std::int64_t, n> mine{a.global_rows, a.global_cols, a.rows.ranks(), a.cols.ranks(),
                                         fingerprint(a.rows), fingerprint(a.cols), static_cast<std::int64_t>(backend)};
  std::array<std::int64_t, n> lo{}, hi{};
  detail::check_mpi(MPI_Allreduce(mine.data(), lo.data(), n, MPI_INT64_T, MPI_MIN, comm.get()), "MPI_Allreduce");
  detail::check_mpi(MPI_Allreduce(mine.data(), hi.data(), n, MPI_INT64_T, MPI_MAX, comm.get()), "MPI_Allreduce");
  static constexpr const char* what[n] = {"global rows",      "global columns",   "row partition ranks",
                                          "column partition ranks", "row partition", "column partition",
                                          "backend"};
  std::string error;
  for (std::size_t i = 0; i < n && error.empty(); ++i)
    if (lo[i] != hi[i])
      error = "the ranks disagree on the " + std::string(what[i]) +
              (i < 4 ? " (from " + std::to_string(lo[i]) + " to " + std::to_string(hi[i]) + ")" : "");
  if (!error.empty()) throw InvalidArgument("DistributedMatrix: " + error);
}

void check_partition(const RowPartition& p, std::int64_t size, int ranks, const char* what) {
  bool ok = p.ranks() == ranks && p.offsets.front() == 0 && p.size() == size;
  for (std::size_t i = 1; ok && i < p.offsets.size(); ++i) ok = p.offsets[i] >= p.offsets[i - 1];
  if (!ok)
    throw InvalidArgument(std::string("DistributedMatrix: the ") + what + " partition is not " +
                          std::to_string(ranks) + " non-decreasing blocks from 0 to " + std::to_string(size));
}

[[noreturn]] void refuse_lengths(bool mine, std::size_t x, std::size_t y, std::int64_t nx, std::int64_t ny) {
  if (!mine) throw InvalidArgument("DistributedMatrix::apply: another rank's vectors have the wrong length");
  throw InvalidArgument("DistributedMatrix::apply: x has " + std::to_string(x) + " entries and y " + std::to_string(y) +
                        ", this rank's parts are " + std::to_string(nx) + " and " + std::to_string(ny));
}

double now_ms() { return MPI_Wtime() * 1e3; }

// MPI progress during the local block (docs/DISTRIBUTED.md "Threads, progress and overlap"). OpenMPI's
// shared-memory transport sends a message of up to btl_vader_eager_limit bytes, its header included, at
// once (4096 in OpenMPI 4.1.4: `ompi_info --param btl vader --level 9`); a larger one is a rendezvous
// whose data moves only inside MPI calls, so without a progress thread it waits for the MPI_Waitall after
// the local block. The rule splits the local block when this rank's largest message (sent or received)
// carries at least this many bytes:
constexpr std::int64_t kProgressMinMessageBytes = 4096;
// ... into one chunk per this many nonzeros per thread, at most kProgressMaxChunks: a chunk then takes
// about 0.1 ms or more (one thread streams 1-2 nonzeros per ns from memory), against an OpenMP fork and
// join of a few microseconds, and an MPI_Testall of well under one ...
constexpr std::int64_t kProgressNonzerosPerThread = std::int64_t{1} << 17;
constexpr int kProgressMaxChunks = 8;
// ... and never so small that a chunk's column indices or values fall below kHugePageMinBytes, where its
// plan's copy leaves huge pages: 8 chunks of poisson3d n=100's 3.46 M-nonzero block (1.7 MB of indices
// each) ran the local block in 4.6-5.3 ms against 3.6-4.2 whole, as slow as the whole block with
// SPMV_HUGE_PAGES=0 (one thread per rank, the 2-core VM, 2026-11-29); 2 chunks ran as fast as whole.
template <class Value, class Index>
constexpr std::int64_t kProgressMinChunkNonzeros =
    static_cast<std::int64_t>(kHugePageMinBytes / std::min(sizeof(Value), sizeof(Index)));

// The local block's chunks (1: not split) for the options and this rank's largest message.
template <class Value, class Index>
int progress_chunks(const DistributedOptions& o, Operation op, std::int64_t largest_bytes, std::int64_t nnz,
                    std::int64_t rows) {
  if (op != Operation::NonTranspose || o.progress_chunks == 1 || largest_bytes == 0 || rows < 2) return 1;
  if (o.progress_chunks >= 2) return static_cast<int>(std::min<std::int64_t>(o.progress_chunks, rows));
  if (largest_bytes < kProgressMinMessageBytes) return 1;
  const std::int64_t threads = o.options.threads > 0 ? o.options.threads : std::max(1, omp_get_max_threads());
  const std::int64_t per_chunk = std::max(kProgressNonzerosPerThread * threads, kProgressMinChunkNonzeros<Value, Index>);
  return static_cast<int>(std::clamp<std::int64_t>(nnz / per_chunk, 1, kProgressMaxChunks));
}

// Whether a row chunk's plan sums each row as the whole block's plan does, given the row kernel pinned
// by chunk_options: the row loop's and the reference's rows are summed alone, in their stored order.
// Merge-parallel sums a row cut by a segment boundary in two pieces, and the cuts move with the chunks.
// The one exception of the row loop: the rule's unrolled loop takes every row, also those of
// simd_row_threshold nonzeros or more, which a named kernel leaves to the vector dot product.
template <class Value, class Index>
bool chunks_keep_row_sums(const CsrMatrix<Value, Index>& block, Algorithm resolved, const Options& chunk) {
  if (resolved == Algorithm::Reference) return true;
  if (resolved != Algorithm::RowLoop) return false;
  if (chunk.cpu_rows != static_cast<int>(cpu::detail::ShortRows::Unrolled)) return true;
  for (Index r = 0; r < block.rows; ++r)
    if (block.row_length(r) >= cpu::detail::simd_row_threshold<Value, Index>()) return false;
  return true;
}

// The chunks' plans get the whole block's resolved algorithm and the caller's options, with the row
// kernel that the whole block's rule chooses pinned (Options::cpu_rows): a chunk's own statistics may
// choose another (the unrolled loop's locality test reads a row's distance from the diagonal of the
// matrix it is given, which a chunk shifts), which would change both the speed and the sums.
template <class Value, class Index>
Options chunk_options(const CsrMatrix<Value, Index>& block, Algorithm resolved, Options o) {
  if ((resolved == Algorithm::RowLoop || resolved == Algorithm::MergeParallel) &&
      cpu::detail::simd_enabled(o.cpu_simd) && cpu::detail::simd_fits<Value, Index>(block.cols))
    o.cpu_rows = static_cast<int>(cpu::detail::row_kernels<Value, Index>(o.cpu_rows, block.row_ptr.data(),
                                                                          block.col_idx.data(), block.rows,
                                                                          block.cols)
                                      .short_rows);
  return o;
}

}  // namespace

template <class Value, class Index>
struct DistributedMatrix<Value, Index>::Impl {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the caller's: its messages never mix with theirs
  Operation op = Operation::NonTranspose;
  RowPartition rows, cols;
  // The CPU backend: the blocks' operators and the MPI exchange; the CUDA backend: the device part.
  std::unique_ptr<Operator<Value, Index>> local, remote;  // remote: null without ghosts
  std::vector<Index> remote_rows;                        // the remote block's rows in this rank's rows
  std::vector<Value> remote_part;                        // its x (A^T) or product (A), one per remote row
  std::unique_ptr<detail::HaloExchange<Value>> halo;
  // A x with progress chunks: the local block's rows [chunk_rows[k], chunk_rows[k + 1]) and their plans,
  // which then replace `local`; MPI_Testall runs between them.
  std::vector<Index> chunk_rows;
  std::vector<std::unique_ptr<Operator<Value, Index>>> chunks;
  std::unique_ptr<detail::DevicePart<Value, Index>> device;
  DistributedInfo info;
  ApplyProfile profile;
  std::int64_t nx = 0, ny = 0;

  ~Impl() {
    device.reset();  // its NCCL communicator before the MPI one it was made from
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }
};

namespace {

// Replaces the local block's plan by plans of its row chunks (progress_chunks), or says in
// info.local_algorithm why it is kept whole. Local to this rank: the messages are the same either way.
template <class Value, class Index, class Impl>
void split_local_block(Impl& m, const CsrMatrix<Value, Index>& block, int chunks, const DistributedOptions& options) {
  const Algorithm resolved = m.local->algorithm();
  const Options o = chunk_options(block, resolved, options.options);
  std::string kept;
  if (options.options.reorder != Reorder::None) kept = "a reordered plan";
  else if (options.algorithm == Algorithm::Tune) kept = "the tuner's knobs are not carried to chunks";
  else if (o.deterministic && !chunks_keep_row_sums(block, resolved, o))
    kept = "deterministic, and chunks of " + std::string(to_string(resolved)) + " could sum a row otherwise";
  if (kept.empty()) {
    try {
      const auto bounds = detail::chunk_boundaries(block, chunks);
      std::vector<std::unique_ptr<Operator<Value, Index>>> plans;
      for (std::size_t k = 0; k + 1 < bounds.size(); ++k)
        plans.push_back(make_operator(options.backend, detail::row_range(block, bounds[k], bounds[k + 1]), resolved,
                                      Operation::NonTranspose, o));
      m.chunk_rows = bounds;
      m.chunks = std::move(plans);
    } catch (const Error& e) {  // e.g. a padded format refusing a chunk: the whole block's plan stays (this
                                // rank only: its messages are the same either way, so no rank waits)
      kept = e.what();
    }
  }
  m.info.local_chunks = m.chunks.empty() ? 1 : static_cast<int>(m.chunks.size());
  m.info.local_algorithm += m.chunks.empty() ? "; kept whole (" + kept + ")"
                                             : "; " + std::to_string(m.chunks.size()) + " row chunks, MPI_Testall between";
  if (!m.chunks.empty()) m.local.reset();  // the chunks hold the block now
}

}  // namespace

template <class Value, class Index>
DistributedMatrix<Value, Index>::DistributedMatrix(const Communicator& comm, const LocalRows<Value>& a,
                                                   Operation op, const DistributedOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.op = op;
  detail::check_mpi(MPI_Comm_dup(comm.get(), &m.comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(m.comm, MPI_ERRORS_RETURN);
  const Communicator own(m.comm);
  const int rank = own.rank();
  detail::collectively(own, [&] { check_agreement(own, a, options.backend); });
  detail::collectively(own, [&] {
    check_partition(a.rows, a.global_rows, own.size(), "row");
    check_partition(a.cols, a.global_cols, own.size(), "column");
    if (options.progress_chunks < 0)
      throw InvalidArgument("DistributedMatrix: progress_chunks is " + std::to_string(options.progress_chunks) +
                            ", not 0 (the rule), 1 (never split) or a chunk count");
    if (a.matrix.rows != a.rows.count(rank) || a.matrix.cols != a.global_cols)
      throw InvalidArgument("DistributedMatrix: this rank's rows are " + std::to_string(a.matrix.rows) + " x " +
                            std::to_string(a.matrix.cols) + ", the partition gives it " +
                            std::to_string(a.rows.count(rank)) + " x " + std::to_string(a.global_cols));
    validate(a.matrix);
  });
  m.rows = a.rows;
  m.cols = a.cols;
  detail::Blocks<Value, Index> blocks;
  detail::collectively(own, [&] { blocks = detail::split_blocks<Value, Index>(a.matrix, a.cols.begin(rank), a.cols.end(rank)); });
  auto plan = detail::build_halo_plan(m.comm, a.cols, blocks.ghost_cols);
  DistributedInfo& i = m.info;
  i.rows = a.matrix.rows;
  i.local_nonzeros = blocks.local.nnz();
  i.remote_nonzeros = blocks.remote.nnz();
  i.remote_rows = blocks.remote.rows;
  i.nonzeros = i.local_nonzeros + i.remote_nonzeros;
  i.halo_entries = plan.ghosts();
  i.send_entries = plan.sends();
  i.neighbors = plan.neighbors();
  i.bytes_sent = static_cast<std::int64_t>(sizeof(Value)) * (op == Operation::NonTranspose ? plan.sends() : plan.ghosts());
  if (options.backend == Backend::Cuda) {
    m.device = detail::make_device_part(comm.get(), m.comm, blocks, plan, op, options);
    i.local_algorithm = m.device->local_algorithm();
    i.remote_algorithm = m.device->remote_algorithm();
  } else {
    detail::collectively(own, [&] {
      m.local = make_operator(options.backend, blocks.local, options.algorithm, op, options.options);
      if (blocks.remote.nnz() > 0)
        m.remote = make_operator(options.backend, blocks.remote, options.algorithm, op, options.options);
    });
    i.local_algorithm = detail::describe(m.local.get());
    i.remote_algorithm = detail::describe(m.remote.get());
    m.remote_rows = std::move(blocks.remote_rows);
    m.remote_part.resize(m.remote_rows.size());
    const std::int64_t largest = static_cast<std::int64_t>(sizeof(Value)) * plan.largest_message();
    m.halo = std::make_unique<detail::HaloExchange<Value>>(m.comm, std::move(plan));
    const int chunks = progress_chunks<Value, Index>(options, op, largest, blocks.local.nnz(), blocks.local.rows);
    if (chunks > 1) split_local_block(m, blocks.local, chunks, options);
  }
  m.nx = op == Operation::NonTranspose ? a.cols.count(rank) : a.rows.count(rank);
  m.ny = op == Operation::NonTranspose ? a.rows.count(rank) : a.cols.count(rank);
}

template <class Value, class Index>
DistributedMatrix<Value, Index>::~DistributedMatrix() = default;

template <class Value, class Index>
void DistributedMatrix<Value, Index>::apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) {
  Impl& m = *impl_;
  ApplyProfile& p = m.profile;
  // The length check rides on a non-blocking reduction beside the exchange: a rank with wrong
  // lengths still takes part (sending zeros), and every rank learns of it after the wait.
  const int bad = static_cast<std::int64_t>(x.size()) != m.nx || static_cast<std::int64_t>(y.size()) != m.ny;
  int any_bad = 0;
  if (m.device) {  // host vectors on the CUDA backend: agree on the lengths first, then copy and run
    detail::check_mpi(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, m.comm), "MPI_Allreduce");
    if (any_bad) refuse_lengths(bad, x.size(), y.size(), m.nx, m.ny);
    m.device->apply_host(alpha, x, beta, y, p);
    ++p.applies;
    return;
  }
  MPI_Request check;
  detail::check_mpi(MPI_Iallreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, m.comm, &check), "MPI_Iallreduce");
  // The halo moves for every alpha, 0 included: a rank whose alpha differs from the others' (a caller's
  // error) must not leave them waiting on an exchange it skipped. With alpha == 0 the blocks read
  // neither A nor the exchanged x (y = beta*y; the transpose sends zeros).
  auto& halo = *m.halo;
  // The local block runs while the exchange is in flight; then the wait for the halo and the check.
  const auto local_then_wait = [&] {
    const double t0 = now_ms();
    if (m.chunks.empty()) {
      if (!bad) m.local->apply(alpha, x, beta, y);
    } else {  // between the chunks, on this (MPI's) thread outside any parallel region: MPI_Testall
      bool arrived = false;
      for (std::size_t k = 0; k < m.chunks.size(); ++k) {
        const Index begin = m.chunk_rows[k];
        if (!bad) m.chunks[k]->apply(alpha, x, beta, y.subspan(begin, m.chunk_rows[k + 1] - begin));
        if (!arrived && k + 1 < m.chunks.size()) arrived = halo.test();
      }
    }
    const double t1 = now_ms();
    halo.finish();
    detail::check_mpi(MPI_Wait(&check, MPI_STATUS_IGNORE), "MPI_Wait");
    p.local_ms += t1 - t0, p.wait_ms += now_ms() - t1;
    if (any_bad) refuse_lengths(bad, x.size(), y.size(), m.nx, m.ny);
  };
  double t = now_ms();
  if (m.op == Operation::NonTranspose) {
    halo.start_forward(bad ? std::span<const Value>{} : x);
    p.pack_ms += now_ms() - t;
    local_then_wait();
    t = now_ms();
    if (m.remote) {  // y[remote_rows] += alpha * B * ghost
      m.remote->apply(alpha, halo.ghost(), Value(0), m.remote_part);
      const auto n = static_cast<std::int64_t>(m.remote_rows.size());
#pragma omp parallel for schedule(static) if (n > 65536)
      for (std::int64_t k = 0; k < n; ++k) y[m.remote_rows[k]] += m.remote_part[k];
    }
    p.remote_ms += now_ms() - t;
  } else {
    // The remote block's partial sums first, so that they travel during the local block.
    auto ghost = halo.ghost();
    if (m.remote && !bad) {  // ghost = alpha * B^T * x[remote_rows] (x is not read when alpha == 0)
      const auto n = static_cast<std::int64_t>(m.remote_rows.size());
      if (alpha != Value(0)) {
#pragma omp parallel for schedule(static) if (n > 65536)
        for (std::int64_t k = 0; k < n; ++k) m.remote_part[k] = x[m.remote_rows[k]];
      }
      m.remote->apply(alpha, m.remote_part, Value(0), ghost);
    } else {
      std::fill(ghost.begin(), ghost.end(), Value(0));
    }
    const double t1 = now_ms();
    halo.start_reverse();
    p.remote_ms += t1 - t, p.pack_ms += now_ms() - t1;
    local_then_wait();
    t = now_ms();
    halo.add_received(y);
    p.unpack_ms += now_ms() - t;
  }
  ++p.applies;
}

template <class Value, class Index>
void DistributedMatrix<Value, Index>::apply(Value alpha, const Value* x, Value beta, Value* y, CUstream_st* stream) {
  if (!impl_->device)
    throw Unsupported("DistributedMatrix::apply: device pointers need the CUDA backend; this matrix is on the CPU");
  impl_->device->apply(alpha, x, beta, y, stream);
}

template <class Value, class Index>
void DistributedMatrix<Value, Index>::all_reduce_sum(double* values, int count, CUstream_st* stream) {
  if (!impl_->device)
    throw Unsupported("DistributedMatrix::all_reduce_sum: device memory needs the CUDA backend; this matrix is on "
                      "the CPU");
  impl_->device->all_reduce_sum(values, count, stream);
}

template <class Value, class Index>
void DistributedMatrix<Value, Index>::exchange_only(std::span<const Value> x) {
  Impl& m = *impl_;
  const bool bad = static_cast<std::int64_t>(x.size()) != m.nx;  // still takes part, sending zeros
  if (m.device) {
    m.device->exchange_only();
    if (bad) refuse_lengths(true, x.size(), m.ny, m.nx, m.ny);
    return;
  }
  if (m.op == Operation::NonTranspose) m.halo->start_forward(bad ? std::span<const Value>{} : x);
  else m.halo->start_reverse();
  m.halo->finish();
  if (bad) refuse_lengths(true, x.size(), m.ny, m.nx, m.ny);
}

template <class Value, class Index>
Operation DistributedMatrix<Value, Index>::operation() const { return impl_->op; }
template <class Value, class Index>
Backend DistributedMatrix<Value, Index>::backend() const { return impl_->device ? Backend::Cuda : Backend::Cpu; }
template <class Value, class Index>
int DistributedMatrix<Value, Index>::device() const { return impl_->device ? impl_->device->device() : -1; }
template <class Value, class Index>
const RowPartition& DistributedMatrix<Value, Index>::x_partition() const {
  return impl_->op == Operation::NonTranspose ? impl_->cols : impl_->rows;
}
template <class Value, class Index>
const RowPartition& DistributedMatrix<Value, Index>::y_partition() const {
  return impl_->op == Operation::NonTranspose ? impl_->rows : impl_->cols;
}
template <class Value, class Index>
DistributedInfo DistributedMatrix<Value, Index>::info() const { return impl_->info; }
template <class Value, class Index>
const ApplyProfile& DistributedMatrix<Value, Index>::profile() const { return impl_->profile; }
template <class Value, class Index>
void DistributedMatrix<Value, Index>::reset_profile() { impl_->profile = {}; }

#define SPMV_INSTANTIATE(V, I) template class DistributedMatrix<V, I>;
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::dist
