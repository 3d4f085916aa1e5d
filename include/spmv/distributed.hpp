#pragma once
// Distributed SpMV over MPI: one matrix split by rows across the ranks of a communicator, after PETSc's
// MatMPIAIJ (a diagonal block A and an off-diagonal block B per rank, VecScatter for the halo) and
// Ginkgo's distributed::Matrix (local and non-local LinOps). docs/DISTRIBUTED.md gives the design.
//
// Each rank holds a contiguous block of rows, split into
//   - the local block: the entries whose column this rank owns (x entries it holds), and
//   - the remote block: the other entries, their columns renumbered into a compact ghost vector,
// each served by the single-device Operator (make_operator with the caller's Algorithm and Options, so
// Auto, formats and tuning apply per block), plus a communication plan built once: which of its x
// entries each rank sends to which neighbour. y = alpha*A*x + beta*y posts the halo exchange, computes
// the local block meanwhile, waits, then adds the remote block; y = alpha*A^T*x + beta*y computes the
// remote block's partial sums first, sends them back to their owners, computes the local block
// meanwhile, and the owners add what they receive.
//
// Conventions:
// - Every function taking a Communicator is collective over it: every rank calls it, in the same order,
//   with the same scalar arguments (alpha, beta, partitions).
// - Errors are collective too: bad input on one rank (sizes the ranks disagree on, a missing file on
//   the root, vectors of the wrong length) throws on every rank, never leaves the others waiting.
//   The failing rank's message is what every rank throws (prefixed with its rank).
// - Global indices are 64-bit; each block's Index (int32_t or int64_t) only has to hold this rank's
//   rows, nonzeros and columns, so a matrix of 2^31+ rows runs in 32-bit indices across enough ranks.
// - Instantiated for float/double values x int32_t/int64_t block indices.
// - Two backends (DistributedOptions::backend): the CPU (OpenMP within a rank, MPI between ranks), and
//   CUDA (a device cuda::Plan per block, one GPU per rank, the halo over NCCL on a stream of the matrix
//   while the local block runs on the caller's stream), built when CMake finds NCCL (SPMV_WITH_NCCL).
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/generators.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/operator.hpp"
#include "spmv/solvers.hpp"

struct CUstream_st;  // CUDA's stream (cudaStream_t is CUstream_st*), named without CUDA's headers

namespace spmv::dist {

// A view of an MPI communicator (not owning it: the caller keeps it alive and frees it).
class Communicator {
 public:
  Communicator();  // MPI_COMM_WORLD
  explicit Communicator(MPI_Comm comm);
  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

// Owns MPI's lifetime for a program: MPI_Init_thread (funneled: OpenMP threads never call MPI) unless
// MPI is already initialized, and MPI_Finalize on destruction when it did initialize it.
class Environment {
 public:
  Environment(int* argc, char*** argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_ = false;
};

// Collective error agreement: every rank passes its own error ("" when it succeeded). When any rank
// failed, every rank throws InvalidArgument with "rank R: MESSAGE" of the lowest failing rank.
void agree(const Communicator& comm, const std::string& error);

// Contiguous ownership of a global index range (rows, or the entries of a vector): rank r owns
// [offsets[r], offsets[r + 1]). The same on every rank.
struct RowPartition {
  std::vector<std::int64_t> offsets{0};  // ranks + 1 entries, offsets[0] = 0, non-decreasing

  int ranks() const { return static_cast<int>(offsets.size()) - 1; }
  std::int64_t size() const { return offsets.back(); }  // the global length
  std::int64_t begin(int rank) const { return offsets[static_cast<std::size_t>(rank)]; }
  std::int64_t end(int rank) const { return offsets[static_cast<std::size_t>(rank) + 1]; }
  std::int64_t count(int rank) const { return end(rank) - begin(rank); }
  int owner(std::int64_t index) const;  // the rank owning a global index in [0, size())
};

enum class PartitionKind {
  Nonzeros,  // about equal rows + nonzeros per rank (each row weighs 1 + its length), the default
  Rows,      // about equal rows per rank
  Graph,     // square matrices: a METIS k-way partition of the pattern of A + A^T that cuts the halo, its
             // rows renumbered part by part into contiguous blocks (P A P^T; LocalRows::permutation keeps
             // the order). Needs a build with METIS (graph_partition_available()).
  ParallelGraph,  // Graph's kind of partition computed by PT-Scotch from the distributed rows, so that no
                  // rank holds the whole matrix (partition_graph_parallel; LocalRows::original_rows keeps
                  // the order on every rank). Needs a build with PT-Scotch
                  // (parallel_graph_partition_available()).
  Streaming,  // square matrices: a one-pass linear deterministic greedy (LDG) partition streamed over the
              // distributed rows (partition_streaming), for graphs beyond METIS and PT-Scotch: O(nnz) time,
              // 4 B a global row on every rank; cuts less than they do. Needs no library; LocalRows's
              // original_rows, edge_cut and partition_ms as for ParallelGraph.
};

// Blocks of rows / ranks rows (the first rows % ranks ranks get one more).
RowPartition partition_rows(std::int64_t rows, int ranks);
// Balanced by weight 1 + length per row, from the whole matrix's row pointers (rows + 1 entries): rank
// k's first row is the smallest r with r + row_ptr[r] >= floor(k * (rows + nnz) / ranks).
RowPartition partition_nonzeros(std::span<const std::int64_t> row_ptr, int ranks);
// The same partition computed collectively from distributed row lengths: this rank passes the lengths
// of its rows under `current` (any partition of the same rows). No rank holds every row pointer.
RowPartition partition_nonzeros(const Communicator& comm, const RowPartition& current,
                                std::span<const std::int64_t> row_lengths);

// ---- Graph partition (PartitionKind::Graph; docs/DISTRIBUTED.md "Graph partition") ------------------

// A k-way partition of the rows of a square matrix, renumbered so that each part is a contiguous block.
struct GraphPartition {
  std::vector<std::int64_t> permutation;  // new to old: entry i is the original index of row (and column) i
                                          // of P A P^T; the parts' rows in order, stable within a part
  RowPartition parts;                     // part p = rows [begin(p), end(p)) of P A P^T
  std::int64_t edge_cut = 0;              // edges of the graph of A + A^T that join two parts (METIS's)
  double ms = 0;                          // wall time: the graph built, partitioned and the order derived
};

// Whether this build has METIS (CMake SPMV_WITH_METIS, Debian libmetis-dev).
bool graph_partition_available();

// Whether this build has PT-Scotch (CMake SPMV_WITH_PTSCOTCH, Debian libptscotch-dev): ParallelGraph.
bool parallel_graph_partition_available();

// Not collective (the root's step of PartitionKind::Graph, exposed for callers that hold the whole
// matrix). METIS_PartGraphKway into `parts` parts (parts >= 1; some may be empty when parts > rows) on
// the pattern of A + A^T without self loops, each row weighing 1 + its length (the nonzero partition's
// weight), METIS's default imbalance tolerance (3%) and a fixed seed: the same partition on every run.
// Throws InvalidArgument for a non-square matrix, Unsupported for a graph larger than METIS's idx_t or
// a build without METIS.
template <class Value>
GraphPartition partition_graph(const CsrMatrix<Value, std::int64_t>& a, int parts);

// This rank's rows of a global matrix, with global column indices.
template <class Value>
struct LocalRows {
  std::int64_t global_rows = 0;
  std::int64_t global_cols = 0;
  RowPartition rows;  // of the global rows (y of A x, x of A^T x)
  RowPartition cols;  // of the global columns (x of A x, y of A^T x); square: the row partition
  CsrMatrix<Value, std::int64_t> matrix;  // rows.count(rank) rows, global_cols columns
  // PartitionKind::Graph, on the root only (a global-length array; the other ranks never hold one): the
  // rows and columns are those of P A P^T, and entry i is the original index of global row i. Empty: the
  // original numbering (every other partition kind, and the ranks other than the root).
  std::vector<std::int64_t> permutation;
  // PartitionKind::ParallelGraph and Streaming, on every rank (the permutation stays distributed): entry
  // i is the original index of this rank's row i, global row rows.begin(rank) + i of P A P^T. Empty
  // otherwise.
  std::vector<std::int64_t> original_rows;
  // Graph, on the root: GraphPartition::edge_cut; ParallelGraph and Streaming, on every rank: the same
  // count for their parts; -1 otherwise.
  std::int64_t edge_cut = -1;
  // Graph, on the root: GraphPartition::ms; ParallelGraph and Streaming, on every rank: the slowest rank's
  // wall time of partition_graph_parallel / partition_streaming (the parts computed, the rows moved and
  // renumbered, the edge cut counted).
  double partition_ms = 0;
};

// Collective: PartitionKind::ParallelGraph applied to rows already distributed, under any contiguous
// partition (a generator's row ranges, the nonzero partition of a parallel read). The graph of A + A^T
// without self loops is assembled across the ranks (the transposed entries of other ranks' rows
// exchanged), each row weighing 1 + its length as in partition_graph, and partitioned by PT-Scotch's
// SCOTCH_dgraphPart into one part per rank (Chevalier & Pellegrini, "PT-Scotch: A tool for efficient
// parallel graph ordering", Parallel Computing 34(6-8), 2008) with a fixed strategy, a fixed seed and
// Scotch's deterministic option: the same parts on every run with the same ranks and input partition.
// Rank p then receives part p's rows: the rows of P A P^T whose parts are contiguous blocks in rank
// order, each part in its input order, columns renumbered alike and sorted (permute_symmetric's
// rows). The result has original_rows (composed with the input's, when it had some), edge_cut and
// partition_ms on every rank. Throws, on every rank: InvalidArgument for a non-square matrix, rows that
// do not match their partition, or rows that carry the root's permutation (PartitionKind::Graph);
// Unsupported for a build without PT-Scotch or a graph beyond SCOTCH_Num.
template <class Value>
LocalRows<Value> partition_graph_parallel(const Communicator& comm, const LocalRows<Value>& rows);

// PartitionKind::Streaming's parameters (docs/DISTRIBUTED.md "The streaming path"). Both change the
// parts, so both are part of what "the same parts on every run" is for.
struct StreamingPartitionOptions {
  // Each part's capacity is (total weight / parts) * (1 + slack), the weight of a row 1 + its length:
  // METIS's and PT-Scotch's 3% by default, so that every graph kind balances alike.
  double slack = 0.03;
  // Rows each rank streams per round before the ranks exchange their decisions (> 0). Within a round a
  // rank sees the others' decisions of earlier rounds only. Larger: fewer rounds (two collectives each),
  // staler scores. 256: a randomly numbered 100 x 100 Poisson matrix's halo at 2 ranks is 0.67x the
  // nonzero partition's, against 0.62x with 1 row and 0.70x with 1 024 (the 2-core VM, 2026-11-30).
  std::int64_t batch_rows = 256;
};

// Collective: PartitionKind::Streaming applied to rows already distributed, under any contiguous
// partition (a generator's row ranges, the nonzero partition of a parallel read). The linear
// deterministic greedy partition of Stanton & Kliot ("Streaming graph partitioning for large distributed
// graphs", KDD 2012, section 4's LDG heuristic): each row v, in stream order, goes to the part p that
// maximises |N(v) ∩ P_p| * (1 - w(P_p) / C), N(v) the columns of row v (the pattern of A, which for a
// symmetric pattern is A + A^T's; a column's transposed entries are not seen), w the summed weight
// 1 + row length of the rows already in P_p, C the capacity of `options`; ties go to the least loaded
// part, then to the rank's own part and the ones after it. Every rank streams its own rows in input
// order, options.batch_rows a round, scoring with every rank's decisions of the earlier rounds and its
// own of this one (a global array of one int32 part a global row, on every rank: 4 B a row; its own
// decisions' loads scaled by the round's weight over its share, since the other ranks fill parts
// meanwhile: no part exceeds C by more than one row a rank), then the ranks exchange the round's
// decisions (MPI_Allgatherv) and load changes (MPI_Allreduce). O(nnz + rows) work and communication a
// rank, plus P for each row no part scores above 0 for (the least loaded part is searched); no
// randomness: the same parts on every run with the same ranks, input partition and options. The rows
// then move with the new ids computed from the global assignment (8 B a global row). Cuts less than
// METIS and PT-Scotch (docs/DISTRIBUTED.md "The streaming path"). Rank p then receives part p's rows as
// partition_graph_parallel's (P A P^T, each part in its input order), with original_rows (composed),
// edge_cut (of the graph of A + A^T without self loops, as the other kinds count it) and partition_ms on
// every rank. Throws, on every rank: InvalidArgument for a non-square matrix, rows that do not match
// their partition, rows carrying the root's permutation, slack < 0 or batch_rows < 1.
template <class Value>
LocalRows<Value> partition_streaming(const Communicator& comm, const LocalRows<Value>& rows,
                                     const StreamingPartitionOptions& options = {});

// Collective: the permutation on the root as LocalRows::permutation holds it for PartitionKind::Graph
// (entry i: the original index of distributed row i), for callers that move whole vectors on the root
// (to_distributed_order, to_original_order): ParallelGraph's or Streaming's original_rows gathered from
// every rank, or Graph's permutation as it is; empty for the original numbering and on the other ranks.
template <class Value>
std::vector<std::int64_t> gather_permutation(const Communicator& comm, const LocalRows<Value>& rows, int root = 0);

// Whole vectors between the original numbering and the distributed one, on the root before dist::scatter
// and after dist::gather (not collective): out[i] = whole[permutation[i]] and its inverse. An empty
// permutation (other partitions, other ranks) returns `whole` unchanged; a length that differs from a
// non-empty permutation's throws InvalidArgument.
template <class T>
std::vector<T> to_distributed_order(std::span<const std::int64_t> permutation, std::span<const T> whole);
template <class T>
std::vector<T> to_original_order(std::span<const std::int64_t> permutation, std::span<const T> whole);

// The column partition a matrix gets by default: the row partition for a square matrix (x and y
// distributed alike), equal blocks of columns otherwise.
RowPartition default_column_partition(std::int64_t global_rows, std::int64_t global_cols,
                                      const RowPartition& rows);

// The root holds the whole matrix (the other ranks pass an empty one, ignored) and sends each rank its
// rows. Sizes and the partition are broadcast from the root. PartitionKind::Graph partitions on the root
// (partition_graph: rank r gets part r), which then holds both A and P A P^T while scattering; its
// refusals (a non-square matrix, METIS's size limit, no METIS) are thrown on every rank.
// ParallelGraph (Streaming) scatters by the nonzero partition, then runs partition_graph_parallel
// (partition_streaming with its default options).
template <class Value>
LocalRows<Value> scatter_rows(const Communicator& comm, const CsrMatrix<Value, std::int64_t>& whole,
                              PartitionKind kind = PartitionKind::Nonzeros, int root = 0);
template <class Value>
LocalRows<Value> scatter_rows(const Communicator& comm, const CsrMatrix<Value, std::int64_t>& whole,
                              const RowPartition& rows, const RowPartition& cols, int root = 0);

// The inverse, for verification and output: the whole matrix on the root (empty elsewhere).
template <class Value>
CsrMatrix<Value, std::int64_t> gather_rows(const Communicator& comm, const LocalRows<Value>& rows, int root = 0);

// How read_matrix_market gets each rank its rows (docs/DISTRIBUTED.md "Reading a file in parallel").
enum class ReadMode {
  Auto,        // ByteRanges where it can run, else Root (SPMV_DEBUG_LOG=1 says which and why)
  ByteRanges,  // every rank parses its own byte range of the file (a gzip file: the entry section's lines
               // split by the declared entry count, each rank inflating the text up to its share's end);
               // Unsupported on every rank where that cannot run: an array file, standard input ("-"), a
               // rank that cannot open the file or sees another file (size, header or compression
               // differ), PartitionKind::Graph (ParallelGraph and Streaming read by ranges, then
               // partition)
  Root,        // rank 0 reads the whole file (read_csr) and scatters
};

// This rank's rows of a Matrix Market file, exactly read_csr's matrix (symmetric storage expanded,
// duplicates summed, columns sorted) split by `kind` as scatter_rows splits it, read in one of two ways:
// - Root: rank 0 reads the file and scatters the rows; it holds the whole matrix while scattering.
// - ByteRanges: every rank parses the lines that start in its share of the entry section's bytes with
//   read_csr's parser and sends each entry to the rank that owns its row (MPI_Alltoallv in rounds); the
//   nonzero partition is computed from distributed row lengths. No rank holds the whole matrix.
// Errors are read_csr's (ParseError "FILE:LINE: ...", the first in the file), thrown on every rank.
template <class Value>
LocalRows<Value> read_matrix_market(const Communicator& comm, const std::string& path,
                                    PartitionKind kind = PartitionKind::Nonzeros, const ReadOptions& options = {},
                                    ReadMode mode = ReadMode::Auto);

// Every rank generates its own rows (gen::generate_rows) when the generator has a row-wise path
// (gen::supports_row_ranges); otherwise rank 0 generates the whole matrix and scatters it (rmat, the
// FEM kinds, and every kind under PartitionKind::Graph, which needs the whole graph), which
// SPMV_DEBUG_LOG=1 reports. The matrix equals gen::generate's for any rank count (Graph: P A P^T).
// ParallelGraph (Streaming) generates (or scatters) by the nonzero partition, then runs
// partition_graph_parallel (partition_streaming with its default options).
template <class Value>
LocalRows<Value> generate(const Communicator& comm, std::string_view kind,
                          const std::map<std::string, double>& params = {},
                          PartitionKind partition = PartitionKind::Nonzeros, const gen::GenerateOptions& options = {});

struct DistributedOptions {
  Backend backend = Backend::Cpu;         // Backend::Cuda: Unsupported in a build without NCCL
  Algorithm algorithm = Algorithm::Auto;  // for both blocks (Auto resolves per block)
  Options options;                        // for both blocks (Backend::Cuda: options.device is ignored)
  // Backend::Cuda: this rank's CUDA device; -1: the rank's index among the ranks of its node modulo the
  // node's devices (one GPU per rank when a node runs as many ranks as it has GPUs).
  int device = -1;
  // Backend::Cpu, A x: the local block runs in this many row chunks, with MPI_Testall on the halo's
  // requests between them, so that messages too large for MPI's eager protocol move while it runs
  // (docs/DISTRIBUTED.md "Threads, progress and overlap"). 0: the rule (chunks when this rank's largest
  // halo message exceeds the shared-memory eager limit and the block is large enough); 1: never;
  // n >= 2: n chunks (fewer when the block has fewer rows) whenever this rank exchanges anything.
  int progress_chunks = 0;
};

// What one rank holds and sends, for reports.
struct DistributedInfo {
  std::int64_t rows = 0;            // this rank's rows
  std::int64_t nonzeros = 0;        // local + remote block
  std::int64_t local_nonzeros = 0;
  std::int64_t remote_nonzeros = 0;
  std::int64_t remote_rows = 0;     // rows with remote entries (the remote block holds only those)
  std::int64_t halo_entries = 0;    // ghost entries this rank receives per product (N)
  std::int64_t send_entries = 0;    // x entries this rank sends per product (N)
  int neighbors = 0;                // ranks it receives from or sends to
  std::int64_t bytes_sent = 0;      // per product: send_entries (N) / halo_entries (T) values
  std::string local_algorithm;      // "merge-parallel <policy>"; empty block: "-"; "...; 4 row chunks" when split
  int local_chunks = 1;             // row chunks the local block runs in (DistributedOptions::progress_chunks)
  std::string remote_algorithm;
};

// Accumulated time of the steps of apply on this rank, in milliseconds: wall time on the CPU backend;
// on the CUDA backend, CUDA events of the host-vector applies (the device-pointer apply is not profiled,
// so that it never synchronises).
struct ApplyProfile {
  std::int64_t applies = 0;
  double pack_ms = 0;    // packing x (N) / posting the partial sums (T)
  double local_ms = 0;   // the local block's product (overlaps the exchange)
  double wait_ms = 0;    // waiting for the exchange after the local product: communication not hidden
  double remote_ms = 0;  // the remote block's product
  double unpack_ms = 0;  // T: adding the received partial sums into y
};

template <class Value, class Index>
class DistributedMatrix {
 public:
  // Collective. Splits `rows` into its local and remote blocks, builds their operators for `op` and the
  // communication plan. Sizes or partitions that the ranks disagree on, rows that do not match the
  // partition, or an index type too small for a block throw InvalidArgument / Unsupported on every rank.
  DistributedMatrix(const Communicator& comm, const LocalRows<Value>& rows, Operation op,
                    const DistributedOptions& options = {});
  ~DistributedMatrix();
  DistributedMatrix(const DistributedMatrix&) = delete;
  DistributedMatrix& operator=(const DistributedMatrix&) = delete;

  // y = alpha*op(A)*x + beta*y on this rank's parts: x holds x_partition().count(rank) entries, y
  // y_partition().count(rank). Collective, alpha and beta equal on every rank. BLAS conventions as in
  // Operator::apply (beta == 0 never reads y; alpha == 0 reads neither A nor x, and the halo exchange
  // still runs, so that ranks that disagree on alpha get each their own product, never a hang).
  // Vectors of the wrong length on any rank throw InvalidArgument on every rank (y is then
  // unspecified). Calls on one matrix are serialized by the caller.
  // On the CUDA backend x and y are host memory here too: copied to the device and back, and the
  // product is finished on return.
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y);

  // Backend::Cuda: the same product on device arrays of this rank's parts (x_partition().count(rank)
  // and y_partition().count(rank) entries on device()), enqueued on `stream` and asynchronous: the
  // halo moves over NCCL on a stream of the matrix, joined back into `stream` by events, so the
  // product (and every read of x) is finished when `stream` is. Collective in the NCCL sense: every
  // rank enqueues its products in the same order. Same BLAS conventions (alpha == 0: x may be null).
  // Lengths are not checked (device pointers); calls on one matrix are serialized by the caller, on
  // one stream or ordered by events. Unsupported on the CPU backend.
  void apply(Value alpha, const Value* x, Value beta, Value* y, CUstream_st* stream);

  // Backend::Cuda: sums `count` doubles of device memory (on device()) across the ranks in place,
  // enqueued on `stream` (ncclAllReduce on the matrix's NCCL communicator). Collective in the NCCL
  // sense, like the device apply; every rank gets the same bits. The device solvers' reduction
  // (SolverOptions::device_global_sum). Unsupported on the CPU backend.
  void all_reduce_sum(double* values, int count, CUstream_st* stream);

  // The halo exchange of one product alone, without arithmetic (benchmarks: communication time).
  // Collective. x of the wrong length sends zeros and throws on that rank only. On the CUDA backend the
  // exchange moves the device copy of the last host-vector x (timing: the same bytes as a product).
  void exchange_only(std::span<const Value> x);

  Operation operation() const;
  Backend backend() const;
  int device() const;                       // Backend::Cuda: this rank's CUDA device; -1 on the CPU
  const RowPartition& x_partition() const;  // N: columns, T: rows
  const RowPartition& y_partition() const;  // N: rows, T: columns
  DistributedInfo info() const;
  const ApplyProfile& profile() const;
  void reset_profile();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- Distributed vectors: each rank holds its part; reductions accumulate in double -----------------

template <class Value>
double dot(const Communicator& comm, std::span<const Value> x, std::span<const Value> y);
template <class Value>
double norm2(const Communicator& comm, std::span<const Value> x);
// y = alpha*x + y on this rank's part (no communication; here so that solvers find one vector API).
template <class Value>
void axpy(Value alpha, std::span<const Value> x, std::span<Value> y);

// The whole vector on the root (empty elsewhere) from every rank's part under `partition`.
template <class Value>
std::vector<Value> gather(const Communicator& comm, const RowPartition& partition, std::span<const Value> part,
                          int root = 0);
// Each rank's part of a vector the root holds whole (the others pass an empty span).
template <class Value>
std::vector<Value> scatter(const Communicator& comm, const RowPartition& partition, std::span<const Value> whole,
                           int root = 0);

// ---- Distributed Krylov solves (docs/DISTRIBUTED.md "Solvers") --------------------------------------

// The entries of this rank's rows that lie on the global diagonal (0 where a row stores none): the
// `diagonal` of solve() for the Jacobi preconditioner. `rows` as returned by scatter_rows / generate /
// read_matrix_market on this rank.
template <class Value>
std::vector<Value> local_diagonal(const Communicator& comm, const LocalRows<Value>& rows);

// CG, BiCGStab or GMRES (options.method) on a square distributed matrix whose x and y are split alike
// (the default column partition): b and x are this rank's parts (y_partition().count(rank) entries),
// x holds x0 on entry and the solution on return. The same solvers as spmv::solve on one process, with
// every dot product and norm summed over the ranks (MPI_Allreduce): each iteration costs one halo
// exchange per product and, for CG, two all-reduces. Every rank gets the same SolverResult counts and
// residuals; bad input on any rank (sizes, NaN in b or x0, a zero diagonal with Jacobi) is an
// InvalidArgument on every rank; options.graph is refused on the CPU backend (a CUDA option).
// A matrix on the CUDA backend solves on its GPUs: b, x0 (and the diagonal) are uploaded once, the
// CUDA solvers of spmv/cuda/solvers.hpp run with the scalars on the device, each reduction summed over
// the ranks by ncclAllReduce on the solver's stream (SolverOptions::device_global_sum, set here), and x
// is downloaded at the end. CG runs its unfused kernels there (the fused ones finish their sums inside
// the sweep); pipelined CG (options.pipelined) sums its one reduction per iteration on a second stream
// while the next product runs (src/cuda/solvers/cg_pipelined.cu); options.graph captures a CG or
// BiCGStab iteration, its NCCL calls included, in a CUDA graph on every rank.
template <class Value, class Index>
SolverResult solve(const Communicator& comm, DistributedMatrix<Value, Index>& a, std::span<const Value> b,
                   std::span<Value> x, const SolverOptions& options = {}, std::span<const Value> diagonal = {});

}  // namespace spmv::dist
