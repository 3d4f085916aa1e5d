// Deterministic matrix generators, written straight into the caller's value and index types.
//
// Random streams: xoshiro256** (Blackman & Vigna 2018) seeded through splitmix64. Every row draws from
// its own stream, derived from (seed, row); R-MAT draws its edges from one stream per chunk of
// kRmatChunk edges, derived from (seed, chunk). Nothing depends on how the work is shared among
// threads, so a seed names the same matrix for any thread count and on every platform.
//
// Memory: rows are built in two passes (row lengths, a prefix sum, then every row's entries written in
// place by OpenMP threads over blocks of rows), so the output arrays are the only large allocation,
// sized exactly and checked against the memory budget before they exist; their pages are faulted in
// by the threads (reserve_prefaulted) before std::vector's serial value-initialisation. Values are
// computed in double and rounded once when stored: generate<float, I> equals convert<float, I> of
// generate<double, int64_t> entry for entry. Random column sets are drawn, sorted and deduplicated,
// then topped up (no per-entry maps).
#include "spmv/generators.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <numeric>
#include <string>
#include <type_traits>
#include <variant>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/compact_rows.hpp"
#include "core/memory_budget.hpp"
#include "core/phase_log.hpp"
#include "core/prefault.hpp"
#include "spmv/error.hpp"
#include "spmv/fem.hpp"

namespace spmv::gen {
namespace {

// Larger requests are refused as absurd (8 TiB of column indices), before any allocation.
constexpr long double kMaxEntries = 1099511627776.0L;  // 2^40

// Rows per block of the parallel passes: large enough that a block's scheduling costs nothing next to
// its rows, small enough that dynamic scheduling balances rows of very different lengths (long_rows,
// dense_rows).
constexpr std::int64_t kRowBlock = 4096;
// R-MAT edges per random stream: seeding (a few dozen operations) vanishes next to 2^14 edges of
// `scale` levels each, and 2^31 edges still make 2^17 chunks to share among threads.
constexpr std::int64_t kRmatChunk = std::int64_t{1} << 14;

std::uint64_t mix64(std::uint64_t z) {  // splitmix64's output function, a bijection
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t splitmix64(std::uint64_t& state) { return mix64(state += 0x9e3779b97f4a7c15ULL); }

class Rng {
 public:
  // Stream `stream` of `seed`: for one seed, distinct streams start from distinct splitmix64 states
  // (mix64 and the addition are bijections).
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t state = mix64(mix64(seed) + stream);
    for (auto& w : s_) w = splitmix64(state);
  }

  std::uint64_t next() {  // xoshiro256**
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1), 53 random bits
  double symmetric() { return 2.0 * uniform() - 1.0; }                         // [-1, 1), exact

  // Uniform in [0, n), n > 0: Lemire's multiply-shift with rejection (unbiased).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

void require(bool ok, const std::string& message) {
  if (!ok) throw InvalidArgument(message);
}

void require_size(const char* gen, const char* what, std::int64_t v) {
  require(v >= 0, std::string(gen) + ": " + what + " = " + std::to_string(v) + " is negative");
  require(v <= static_cast<std::int64_t>(kMaxEntries),
          std::string(gen) + ": " + what + " = " + std::to_string(v) + " is larger than 2^40");
}

void require_entries(const char* gen, long double nnz) {
  if (nnz > kMaxEntries) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: would generate %.3Le nonzeros, more than 2^40", gen, nnz);
    throw InvalidArgument(buf);
  }
}

void require_fraction(const char* gen, const char* what, double v) {
  require(std::isfinite(v) && v >= 0 && v <= 1,
          std::string(gen) + ": " + what + " = " + std::to_string(v) + " is not in [0, 1]");
}

template <class Value, class Index>
std::string type_words() {
  return std::string(sizeof(Value) == 4 ? "float" : "double") + " values, " + std::to_string(8 * sizeof(Index)) +
         "-bit indices";
}

// MemoryLimitExceeded naming both sizes when `bytes` exceed what the caller allows or the system has.
template <class Value, class Index>
void require_memory(const char* gen, std::int64_t rows, std::int64_t cols, std::int64_t nnz, long double bytes,
                    const char* what, const GenerateOptions& options) {
  const detail::MemoryBudget budget = detail::memory_budget(options.max_memory);
  if (bytes <= static_cast<long double>(budget.bytes)) return;
  throw MemoryLimitExceeded(std::string(gen) + ": the " + std::to_string(rows) + " x " + std::to_string(cols) +
                            " matrix with " + std::to_string(nnz) + " nonzeros (" + type_words<Value, Index>() +
                            ") needs " + detail::format_bytes(static_cast<double>(bytes)) + (*what ? " " : "") + what +
                            ", more than " + budget.source + " of " +
                            detail::format_bytes(static_cast<double>(budget.bytes)) +
                            " (set a larger max_memory, spmv --max-memory, to try anyway)");
}

// Runs a generator, turning an allocation failure into an spmv::Error the CLI can report.
template <class F>
auto guarded(const char* gen, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw Unsupported(std::string(gen) + ": not enough memory for the requested matrix");
  } catch (const std::length_error&) {
    throw Unsupported(std::string(gen) + ": not enough memory for the requested matrix");
  }
}

int thread_count(const GenerateOptions& options) {
#ifdef _OPENMP
  return options.threads > 0 ? options.threads : omp_get_max_threads();
#else
  (void)options;
  return 1;
#endif
}

// Calls body(b) for b in [0, blocks) on `threads` OpenMP threads, dynamically scheduled; `make_scratch`
// gives each thread its reusable buffers. The first exception a block throws is rethrown here, after
// the parallel region (an exception must not leave an OpenMP region).
template <class MakeScratch, class Body>
void parallel_blocks(int threads, std::int64_t blocks, MakeScratch make_scratch, Body body) {
  std::exception_ptr failure;
  std::once_flag first;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(threads)
  {
    try {
      auto scratch = make_scratch();
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < blocks; ++b) {
        if (failed.load(std::memory_order_relaxed)) continue;
        try {
          body(b, scratch);
        } catch (...) {
          std::call_once(first, [&] { failure = std::current_exception(); });
          failed.store(true, std::memory_order_relaxed);
        }
      }
    } catch (...) {  // make_scratch failed: this thread takes no block (the omp for is not reached)
      std::call_once(first, [&] { failure = std::current_exception(); });
      failed.store(true, std::memory_order_relaxed);
    }
  }
  if (failure) std::rethrow_exception(failure);
}

struct NoScratch {};

std::int64_t block_count(std::int64_t n, std::int64_t block) { return (n + block - 1) / block; }

// Turns the row lengths in row_ptr[1..rows] into offsets in place, in parallel: the blocks' sums in
// 64 bits first, so that `check(nnz)` (which refuses sizes beyond Index) runs before any offset is
// stored in Index. Returns nnz.
template <class Index, class Check>
std::int64_t lengths_to_offsets(std::vector<Index>& row_ptr, int threads, Check check) {
  const auto rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  const std::int64_t blocks = block_count(rows, kRowBlock);
  std::vector<std::int64_t> start(static_cast<std::size_t>(blocks) + 1, 0);
  parallel_blocks(threads, blocks, [] { return NoScratch{}; }, [&](std::int64_t b, NoScratch&) {
    std::int64_t sum = 0;
    for (std::int64_t r = b * kRowBlock; r < std::min(rows, (b + 1) * kRowBlock); ++r) sum += row_ptr[r + 1];
    start[b + 1] = sum;
  });
  std::partial_sum(start.begin(), start.end(), start.begin());
  const std::int64_t nnz = start.back();
  check(nnz);
  parallel_blocks(threads, blocks, [] { return NoScratch{}; }, [&](std::int64_t b, NoScratch&) {
    std::int64_t offset = start[b];
    for (std::int64_t r = b * kRowBlock; r < std::min(rows, (b + 1) * kRowBlock); ++r) {
      offset += row_ptr[r + 1];
      row_ptr[r + 1] = static_cast<Index>(offset);
    }
  });
  return nnz;
}

// Reusable buffers of sample_distinct (one set per thread).
struct SampleScratch {
  std::vector<std::int64_t> excluded;  // the complement's draw
  std::vector<char> marked;            // bitmap path: one byte per candidate, all zero between calls
};

// k distinct values of [0, n), sorted, into `out`; the expected number of draws stays below 2k.
// Above n / 2 the complement is drawn instead. Dense requests (16k >= n) mark draws in a byte map and
// scan it (O(n) = O(16k)); sparse ones draw k, sort, dedupe and top up, sorting and merging only the
// new draws.
void sample_distinct(Rng& rng, std::int64_t n, std::int64_t k, std::vector<std::int64_t>& out,
                     SampleScratch& scratch) {
  out.clear();
  if (k <= 0) return;
  if (k >= n) {
    out.resize(static_cast<std::size_t>(n));
    std::iota(out.begin(), out.end(), std::int64_t{0});
    return;
  }
  const auto draw = [&] { return static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))); };
  if (2 * k > n) {
    std::vector<std::int64_t> excluded;
    excluded.swap(scratch.excluded);
    sample_distinct(rng, n, n - k, excluded, scratch);
    std::size_t e = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      if (e < excluded.size() && excluded[e] == j)
        ++e;
      else
        out.push_back(j);
    }
    excluded.swap(scratch.excluded);
    return;
  }
  if (16 * k >= n) {
    auto& marked = scratch.marked;
    if (static_cast<std::int64_t>(marked.size()) < n) marked.resize(static_cast<std::size_t>(n), 0);
    for (std::int64_t have = 0; have < k;) {
      const std::int64_t j = draw();
      if (!marked[j]) {
        marked[j] = 1;
        ++have;
      }
    }
    for (std::int64_t j = 0; j < n; ++j)
      if (marked[j]) {
        out.push_back(j);
        marked[j] = 0;
      }
    return;
  }
  for (std::int64_t i = 0; i < k; ++i) out.push_back(draw());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  while (static_cast<std::int64_t>(out.size()) < k) {
    const auto middle = static_cast<std::ptrdiff_t>(out.size());
    for (auto i = static_cast<std::int64_t>(out.size()); i < k; ++i) out.push_back(draw());
    std::sort(out.begin() + middle, out.end());
    std::inplace_merge(out.begin(), out.begin() + middle, out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

// The `special` rows spread evenly over `rows`: row floor(k * rows / special), k = 0..special-1.
std::int64_t spread_row(std::int64_t k, std::int64_t rows, std::int64_t special) {
  return static_cast<std::int64_t>(static_cast<unsigned __int128>(k) * static_cast<std::uint64_t>(rows) /
                                   static_cast<std::uint64_t>(special));
}

// Whether row r is one of them: spread_row is increasing in k (special <= rows), and spread_row(k) >= r
// exactly when k >= r * special / rows, so only k = ceil(r * special / rows) can land on r.
bool is_spread_row(std::int64_t r, std::int64_t rows, std::int64_t special) {
  if (special <= 0) return false;
  const auto num = static_cast<unsigned __int128>(r) * static_cast<std::uint64_t>(special);
  const auto k = static_cast<std::int64_t>((num + static_cast<std::uint64_t>(rows) - 1) / static_cast<std::uint64_t>(rows));
  return k < special && spread_row(k, rows, special) == r;
}

// Random rows share these buffers: the sampled columns and sample_distinct's scratch.
struct RowScratch {
  std::vector<std::int64_t> row;
  SampleScratch sample;
};

// --- the generators, each a job: its sizes, row lengths (pass 1) and rows (pass 2) ------------------
// A row job provides rows(), cols(), bound() (SizeBound), length(r) and
// fill<Value, Index>(r, col, val, scratch) writing exactly length(r) entries in increasing column order.

// Stencil on an n^dim grid (dim 2 or 3): neighbours at offsets in [-1, 1] per axis, kept when
// keep(dx, dy, dz) holds; visited in increasing column order. The kept offsets are listed once (in
// that order), so a row visits 7 of them for poisson3d instead of testing all 27: both passes
// over 2.4 G nonzeros (issue 18) run on the list.
struct StencilJob {
  using Scratch = NoScratch;
  struct Offset {
    int dx, dy, dz;
  };
  const char* name;
  std::int64_t n;
  int dim;
  double diagonal;
  std::int64_t exact_nnz;
  std::array<Offset, 27> offsets;
  int offset_count;

  std::int64_t rows() const { return dim == 2 ? n * n : n * n * n; }
  std::int64_t cols() const { return rows(); }
  SizeBound bound() const { return {rows(), cols(), exact_nnz}; }

  template <class Emit>
  void visit(std::int64_t r, Emit emit) const {
    const std::int64_t x = r % n, y = (r / n) % n, z = dim == 3 ? r / (n * n) : 0;
    const std::int64_t nz = dim == 3 ? n : 1;
    for (int i = 0; i < offset_count; ++i) {
      const auto [dx, dy, dz] = offsets[i];
      const std::int64_t xx = x + dx, yy = y + dy, zz = z + dz;
      if (xx < 0 || xx >= n || yy < 0 || yy >= n || zz < 0 || zz >= nz) continue;
      emit((zz * n + yy) * n + xx, dx == 0 && dy == 0 && dz == 0 ? diagonal : -1.0);
    }
  }
  std::int64_t length(std::int64_t r) const {
    std::int64_t k = 0;
    visit(r, [&](std::int64_t, double) { ++k; });
    return k;
  }
  template <class Value, class Index>
  void fill(std::int64_t r, Index* col, Value* val, Scratch&) const {
    visit(r, [&](std::int64_t c, double v) {
      *col++ = static_cast<Index>(c);
      *val++ = static_cast<Value>(v);
    });
  }
};

StencilJob stencil_job(const char* gen, std::int64_t n, int dim, long double nnz_bound, double diagonal,
                       bool (*keep)(int, int, int), std::int64_t (*exact)(std::int64_t)) {
  require_size(gen, "n", n);
  require_entries(gen, dim == 2 ? static_cast<long double>(n) * n : static_cast<long double>(n) * n * n);
  require_entries(gen, nnz_bound);
  StencilJob job{gen, n, dim, diagonal, exact(n), {}, 0};
  for (int dz = (dim == 3 ? -1 : 0); dz <= (dim == 3 ? 1 : 0); ++dz)  // z slowest: increasing columns
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (keep(dx, dy, dz)) job.offsets[job.offset_count++] = {dx, dy, dz};
  return job;
}

StencilJob poisson2d_job(std::int64_t n) {
  return stencil_job(
      "poisson2d", n, 2, 5.0L * n * n, 4.0, [](int dx, int dy, int) { return dx == 0 || dy == 0; },
      [](std::int64_t m) { return 5 * m * m - 4 * m; });  // each of the 4 sides drops m neighbours
}

StencilJob poisson3d_job(std::int64_t n) {
  return stencil_job(
      "poisson3d", n, 3, 7.0L * n * n * n, 6.0,
      [](int dx, int dy, int dz) { return (dx != 0) + (dy != 0) + (dz != 0) <= 1; },
      [](std::int64_t m) { return 7 * m * m * m - 6 * m * m; });
}

StencilJob stencil27_job(std::int64_t n) {
  return stencil_job(
      "stencil27", n, 3, 27.0L * n * n * n, 26.0, [](int, int, int) { return true; },
      [](std::int64_t m) { return m == 0 ? std::int64_t{0} : (3 * m - 2) * (3 * m - 2) * (3 * m - 2); });
}

// Appends the sampled columns of one row with values uniform in [-1, 1) drawn after them.
template <class Value, class Index>
void write_random_row(Rng& rng, const std::vector<std::int64_t>& cols, Index* col, Value* val) {
  for (auto c : cols) {
    *col++ = static_cast<Index>(c);
    *val++ = static_cast<Value>(rng.symmetric());
  }
}

struct RandomUniformJob {
  using Scratch = RowScratch;
  const char* name = "random_uniform";
  std::int64_t rows_, cols_, per_row;
  std::uint64_t seed;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  SizeBound bound() const { return {rows_, cols_, rows_ * per_row}; }
  std::int64_t length(std::int64_t) const { return per_row; }
  template <class Value, class Index>
  void fill(std::int64_t r, Index* col, Value* val, Scratch& s) const {
    Rng rng(seed, static_cast<std::uint64_t>(r));
    sample_distinct(rng, cols_, per_row, s.row, s.sample);
    write_random_row(rng, s.row, col, val);
  }
};

RandomUniformJob random_uniform_job(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed) {
  const char* gen = "random_uniform";
  require_size(gen, "rows", rows);
  require_size(gen, "cols", cols);
  require(per_row >= 0 && per_row <= cols, std::string(gen) + ": per_row = " + std::to_string(per_row) +
                                               " must be in [0, cols = " + std::to_string(cols) + "]");
  require_entries(gen, static_cast<long double>(rows) * per_row);
  return {gen, rows, cols, per_row, seed};
}

struct BandedJob {
  using Scratch = NoScratch;
  const char* name = "banded";
  std::int64_t n, half_bandwidth;
  std::uint64_t seed;

  std::int64_t rows() const { return n; }
  std::int64_t cols() const { return n; }
  SizeBound bound() const {
    const std::int64_t m = std::min(half_bandwidth, std::max<std::int64_t>(n - 1, 0));
    return {n, n, n * (2 * m + 1) - m * (m + 1)};  // full band less the corners' two triangles
  }
  std::int64_t lo(std::int64_t i) const { return std::max<std::int64_t>(0, i - half_bandwidth); }
  std::int64_t hi(std::int64_t i) const { return std::min<std::int64_t>(n - 1, i + std::min(half_bandwidth, n)); }
  std::int64_t length(std::int64_t i) const { return hi(i) - lo(i) + 1; }
  template <class Value, class Index>
  void fill(std::int64_t i, Index* col, Value* val, Scratch&) const {
    Rng rng(seed, static_cast<std::uint64_t>(i));
    for (std::int64_t j = lo(i); j <= hi(i); ++j) {
      *col++ = static_cast<Index>(j);
      *val++ = static_cast<Value>(rng.symmetric());
    }
  }
};

BandedJob banded_job(std::int64_t n, std::int64_t half_bandwidth, std::uint64_t seed) {
  const char* gen = "banded";
  require_size(gen, "n", n);
  require_size(gen, "half_bandwidth", half_bandwidth);
  require_entries(gen, std::min(static_cast<long double>(n) * n,
                                static_cast<long double>(n) * (2.0L * half_bandwidth + 1)));
  return {gen, n, half_bandwidth, seed};
}

struct LongRowsJob {
  using Scratch = RowScratch;
  const char* name = "long_rows";
  std::int64_t rows_, cols_, long_rows, long_length, short_length;
  std::uint64_t seed;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  SizeBound bound() const { return {rows_, cols_, long_rows * long_length + (rows_ - long_rows) * short_length}; }
  std::int64_t length(std::int64_t r) const {
    return is_spread_row(r, rows_, long_rows) ? long_length : short_length;
  }
  template <class Value, class Index>
  void fill(std::int64_t r, Index* col, Value* val, Scratch& s) const {
    Rng rng(seed, static_cast<std::uint64_t>(r));
    sample_distinct(rng, cols_, length(r), s.row, s.sample);
    write_random_row(rng, s.row, col, val);
  }
};

LongRowsJob long_rows_job(std::int64_t rows, std::int64_t cols, std::int64_t long_rows, std::int64_t long_length,
                          std::int64_t short_length, std::uint64_t seed) {
  const char* gen = "long_rows";
  require_size(gen, "rows", rows);
  require_size(gen, "cols", cols);
  require(long_rows >= 0 && long_rows <= rows, std::string(gen) + ": long_rows = " + std::to_string(long_rows) +
                                                   " must be in [0, rows = " + std::to_string(rows) + "]");
  require(long_length >= 0 && long_length <= cols, std::string(gen) + ": long_length = " +
                                                       std::to_string(long_length) + " must be in [0, cols = " +
                                                       std::to_string(cols) + "]");
  require(short_length >= 0 && short_length <= cols, std::string(gen) + ": short_length = " +
                                                         std::to_string(short_length) + " must be in [0, cols = " +
                                                         std::to_string(cols) + "]");
  require_entries(gen, static_cast<long double>(long_rows) * long_length +
                           static_cast<long double>(rows - long_rows) * short_length);
  return {gen, rows, cols, long_rows, long_length, short_length, seed};
}

// Each row is nonempty by the first draw of its stream, a Bernoulli(nonempty_fraction): the count of
// nonempty rows is binomial, and pass 1 knows a row's length from that one draw.
struct MostlyEmptyJob {
  using Scratch = RowScratch;
  const char* name = "mostly_empty";
  std::int64_t rows_, cols_;
  double nonempty_fraction;
  std::int64_t per_row;
  std::uint64_t seed;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  SizeBound bound() const { return {rows_, cols_, rows_ * per_row}; }
  std::int64_t length(std::int64_t r) const {
    Rng rng(seed, static_cast<std::uint64_t>(r));
    return rng.uniform() < nonempty_fraction ? per_row : 0;
  }
  template <class Value, class Index>
  void fill(std::int64_t r, Index* col, Value* val, Scratch& s) const {
    Rng rng(seed, static_cast<std::uint64_t>(r));
    if (!(rng.uniform() < nonempty_fraction)) return;
    sample_distinct(rng, cols_, per_row, s.row, s.sample);
    write_random_row(rng, s.row, col, val);
  }
};

MostlyEmptyJob mostly_empty_job(std::int64_t rows, std::int64_t cols, double nonempty_fraction, std::int64_t per_row,
                                std::uint64_t seed) {
  const char* gen = "mostly_empty";
  require_size(gen, "rows", rows);
  require_size(gen, "cols", cols);
  require_fraction(gen, "nonempty_fraction", nonempty_fraction);
  require(per_row >= 0 && per_row <= cols, std::string(gen) + ": per_row = " + std::to_string(per_row) +
                                               " must be in [0, cols = " + std::to_string(cols) + "]");
  require_entries(gen, static_cast<long double>(rows) * per_row);
  return {gen, rows, cols, nonempty_fraction, per_row, seed};
}

// Rows hold `per_row` random off-diagonal columns plus the diagonal; the dense rows (spread evenly,
// as in long_rows) hold round(dense_fraction * n) off-diagonal columns (at most n - 1) plus the diagonal.
// Off-diagonal values are uniform in [-1, 1) and the diagonal is 1 + sum |off-diagonal| (strictly
// diagonally dominant, like a circuit's nodal matrix), summed in double and rounded once.
struct DenseRowsJob {
  using Scratch = RowScratch;
  const char* name = "dense_rows";
  std::int64_t n, dense_rows, dense_length, per_row;
  std::uint64_t seed;

  std::int64_t rows() const { return n; }
  std::int64_t cols() const { return n; }
  SizeBound bound() const { return {n, n, dense_rows * (dense_length + 1) + (n - dense_rows) * (per_row + 1)}; }
  std::int64_t off_diagonal(std::int64_t i) const { return is_spread_row(i, n, dense_rows) ? dense_length : per_row; }
  std::int64_t length(std::int64_t i) const { return off_diagonal(i) + 1; }
  template <class Value, class Index>
  void fill(std::int64_t i, Index* col, Value* val, Scratch& s) const {
    Rng rng(seed, static_cast<std::uint64_t>(i));
    sample_distinct(rng, std::max<std::int64_t>(n - 1, 0), off_diagonal(i), s.row, s.sample);
    double diagonal = 1.0;
    Value* diagonal_slot = nullptr;
    for (auto j : s.row) {
      const std::int64_t c = j >= i ? j + 1 : j;  // skip the diagonal
      if (!diagonal_slot && c > i) {
        *col++ = static_cast<Index>(i);
        diagonal_slot = val++;
      }
      const double v = rng.symmetric();
      diagonal += std::abs(v);
      *col++ = static_cast<Index>(c);
      *val++ = static_cast<Value>(v);
    }
    if (!diagonal_slot) {
      *col = static_cast<Index>(i);
      diagonal_slot = val;
    }
    *diagonal_slot = static_cast<Value>(diagonal);
  }
};

DenseRowsJob dense_rows_job(std::int64_t n, std::int64_t dense_rows, double dense_fraction, std::int64_t per_row,
                            std::uint64_t seed) {
  const char* gen = "dense_rows";
  require_size(gen, "n", n);
  require(dense_rows >= 0 && dense_rows <= n, std::string(gen) + ": dense_rows = " + std::to_string(dense_rows) +
                                                  " must be in [0, n = " + std::to_string(n) + "]");
  require_fraction(gen, "dense_fraction", dense_fraction);
  const std::int64_t off = std::max<std::int64_t>(n - 1, 0);
  require(per_row >= 0 && per_row <= off, std::string(gen) + ": per_row = " + std::to_string(per_row) +
                                              " must be in [0, n - 1 = " + std::to_string(off) + "]");
  const std::int64_t dense_length = std::min<std::int64_t>(off, std::llround(dense_fraction * static_cast<double>(n)));
  require_entries(gen, static_cast<long double>(dense_rows) * (dense_length + 1) +
                           static_cast<long double>(n - dense_rows) * (per_row + 1));
  return {gen, n, dense_rows, dense_length, per_row, seed};
}

// R-MAT (Chakrabarti, Zhan & Faloutsos 2004): each edge descends `scale` levels of the adjacency matrix,
// choosing a quadrant with probabilities a, b, c, d. Values count how often an edge was drawn.
struct RmatJob {
  const char* name = "rmat";
  int scale;
  std::int64_t edge_factor;
  std::uint64_t seed;
  std::uint64_t ta, tab, tabc;  // cumulative probabilities a, a + b, a + b + c scaled to 2^32

  std::int64_t n() const { return std::int64_t{1} << scale; }
  std::int64_t edges() const { return edge_factor * n(); }
  SizeBound bound() const { return {n(), n(), edges()}; }

  // Calls f(row, col) for every edge of chunk `chunk`, drawn from the chunk's own stream.
  template <class F>
  void chunk_edges(std::int64_t chunk, F f) const {
    Rng rng(seed, static_cast<std::uint64_t>(chunk));
    const std::int64_t end = std::min(edges(), (chunk + 1) * kRmatChunk);
    for (std::int64_t e = chunk * kRmatChunk; e < end; ++e) {
      std::uint64_t r = 0, col = 0, bits = 0;
      for (int level = 0; level < scale; ++level) {
        // Each level draws 32 random bits (two levels per 64-bit output, half the generator calls),
        // compared with the thresholds: 2^-32 resolution is far below any meaningful a, b, c.
        if ((level & 1) == 0) bits = rng.next();
        const std::uint64_t u = bits & 0xffffffffULL;
        bits >>= 32;
        // quadrant q = number of thresholds <= u: 0 = (0,0), 1 = (0,1), 2 = (1,0), 3 = (1,1); branch-free
        // because the four outcomes are unpredictable
        const std::uint64_t q = static_cast<std::uint64_t>(u >= ta) + (u >= tab) + (u >= tabc);
        r = (r << 1) | (q >> 1);
        col = (col << 1) | (q & 1);
      }
      f(r, col);
    }
  }
};

RmatJob rmat_job(int scale, std::int64_t edge_factor, std::uint64_t seed, double a, double b, double c) {
  const char* gen = "rmat";
  // 2^32 vertices is already far beyond memory.
  require(scale >= 0 && scale <= 32, std::string(gen) + ": scale = " + std::to_string(scale) + " is not in [0, 32]");
  require(edge_factor >= 0, std::string(gen) + ": edge_factor = " + std::to_string(edge_factor) + " is negative");
  require_entries(gen, static_cast<long double>(edge_factor) * std::ldexp(1.0L, scale));
  require_fraction(gen, "a", a);
  require_fraction(gen, "b", b);
  require_fraction(gen, "c", c);
  require(a + b + c <= 1.0 + 1e-12, std::string(gen) + ": a + b + c = " + std::to_string(a + b + c) +
                                        " exceeds 1 (d = 1 - a - b - c must be >= 0)");
  const auto threshold = [](double p) {
    return static_cast<std::uint64_t>(std::min(std::floor(std::ldexp(p, 32)), std::ldexp(1.0, 32)));
  };
  return {gen, scale, edge_factor, seed, threshold(a), threshold(a + b), threshold(a + b + c)};
}

// Pass 1 counts every row's length, a prefix sum makes the offsets, pass 2 fills the rows in place.
// Rows [first, first + rows) of the job (a slice for a distributed run; the whole matrix by default).
template <class Value, class Index, class Job>
CsrMatrix<Value, Index> build_rows(const Job& job, const GenerateOptions& options, std::int64_t first = 0,
                                   std::int64_t count = -1) {
  const std::int64_t rows = count < 0 ? job.rows() : count, cols = job.cols();
  const int threads = thread_count(options);
  detail::refuse_if_too_large<Index>(rows, cols, 0);
  const long double pointer_bytes = static_cast<long double>(rows + 1) * sizeof(Index);
  require_memory<Value, Index>(job.name, rows, cols, job.bound().nnz, pointer_bytes, "for its row pointers alone",
                               options);
  detail::PhaseLog phase("generate/row lengths");
  CsrMatrix<Value, Index> a;
  a.rows = static_cast<Index>(rows);
  a.cols = static_cast<Index>(cols);
  detail::reserve_prefaulted(a.row_ptr, static_cast<std::size_t>(rows) + 1, threads);
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  // a row's length is at most cols, which fits Index
  parallel_blocks(threads, block_count(rows, kRowBlock), [] { return NoScratch{}; }, [&](std::int64_t b, NoScratch&) {
    for (std::int64_t r = b * kRowBlock; r < std::min(rows, (b + 1) * kRowBlock); ++r)
      a.row_ptr[r + 1] = static_cast<Index>(job.length(first + r));
  });
  phase.next("generate/offsets");
  const std::int64_t nnz = lengths_to_offsets(a.row_ptr, threads, [&](std::int64_t total) {
    detail::refuse_if_too_large<Index>(rows, cols, total);
    require_memory<Value, Index>(job.name, rows, cols, total,
                                 pointer_bytes + static_cast<long double>(total) * (sizeof(Index) + sizeof(Value)),
                                 "", options);
  });
  phase.next("generate/allocate");
  detail::reserve_prefaulted(a.col_idx, static_cast<std::size_t>(nnz), threads);
  detail::reserve_prefaulted(a.values, static_cast<std::size_t>(nnz), threads);
  a.col_idx.resize(static_cast<std::size_t>(nnz));
  a.values.resize(static_cast<std::size_t>(nnz));
  phase.next("generate/fill");
  parallel_blocks(threads, block_count(rows, kRowBlock), [] { return typename Job::Scratch{}; },
                  [&](std::int64_t b, typename Job::Scratch& scratch) {
                    for (std::int64_t r = b * kRowBlock; r < std::min(rows, (b + 1) * kRowBlock); ++r)
                      if (a.row_ptr[r + 1] > a.row_ptr[r])
                        job.template fill<Value, Index>(first + r, a.col_idx.data() + a.row_ptr[r],
                                                        a.values.data() + a.row_ptr[r], scratch);
                  });
  return a;
}

// R-MAT without an edge list: pass 1 draws every chunk's edges and counts them per row (atomically);
// pass 2 draws them again, identically, and scatters each column into its row's next free slot. The
// order within a row then depends on the threads, but each row is sorted next, so the matrix does not:
// the multiset of edges is fixed by (seed, chunk). Duplicates are summed into counts per row in
// parallel, and the rows are compacted towards the front in place (compact_rows: a row never moves
// right). Peak memory: (2 rows + 2) Index for the row pointers and cursors, `edges`
// Index for the columns before duplicates are summed (the tail stays allocated, unused, since
// shrinking would copy), nnz Value for the counts. E.g. scale 27, edge factor 16 in float / int64:
// 2.1 GB + 17.2 GB + 4 bytes per nonzero, against 1.1 GB + 12 bytes per nonzero for the matrix itself.
template <class Value, class Index>
CsrMatrix<Value, Index> build_rmat(const RmatJob& job, const GenerateOptions& options) {
  const std::int64_t n = job.n(), edges = job.edges();
  const int threads = thread_count(options);
  detail::refuse_if_too_large<Index>(n, n, edges);  // pass 2 addresses every edge before summing
  require_memory<Value, Index>(job.name, n, n, edges,
                               static_cast<long double>(2 * n + 2) * sizeof(Index) +
                                   static_cast<long double>(edges) * (sizeof(Index) + sizeof(Value)),
                               "at most while its edges are drawn", options);
  detail::PhaseLog phase("rmat/count");
  CsrMatrix<Value, Index> a;
  a.rows = a.cols = static_cast<Index>(n);
  detail::reserve_prefaulted(a.row_ptr, static_cast<std::size_t>(n) + 1, threads);
  a.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  const std::int64_t chunks = block_count(edges, kRmatChunk);
  parallel_blocks(threads, chunks, [] { return NoScratch{}; }, [&](std::int64_t chunk, NoScratch&) {
    job.chunk_edges(chunk, [&](std::uint64_t r, std::uint64_t) {
      std::atomic_ref<Index>(a.row_ptr[r + 1]).fetch_add(1, std::memory_order_relaxed);
    });
  });
  phase.next("rmat/offsets");
  lengths_to_offsets(a.row_ptr, threads, [](std::int64_t) {});
  std::vector<Index> cursor;  // cursor[r]: row r's next free slot
  detail::reserve_prefaulted(cursor, a.row_ptr.size(), threads);
  cursor.assign(a.row_ptr.begin(), a.row_ptr.end());
  phase.next("rmat/allocate");
  detail::reserve_prefaulted(a.col_idx, static_cast<std::size_t>(edges), threads);
  a.col_idx.resize(static_cast<std::size_t>(edges));
  phase.next("rmat/scatter");
  parallel_blocks(threads, chunks, [] { return NoScratch{}; }, [&](std::int64_t chunk, NoScratch&) {
    job.chunk_edges(chunk, [&](std::uint64_t r, std::uint64_t c) {
      const Index slot = std::atomic_ref<Index>(cursor[r]).fetch_add(1, std::memory_order_relaxed);
      a.col_idx[static_cast<std::size_t>(slot)] = static_cast<Index>(c);
    });
  });
  phase.next("rmat/sort");
  // Sort each row; cursor[r + 1] := its count of distinct columns (cursor[0] := 0), then offsets.
  const std::int64_t row_blocks = block_count(n, kRowBlock);
  parallel_blocks(threads, row_blocks, [] { return NoScratch{}; }, [&](std::int64_t b, NoScratch&) {
    for (std::int64_t r = b * kRowBlock; r < std::min(n, (b + 1) * kRowBlock); ++r) {
      Index* begin = a.col_idx.data() + a.row_ptr[r];
      Index* end = a.col_idx.data() + a.row_ptr[r + 1];
      std::sort(begin, end);
      std::int64_t distinct = end > begin ? 1 : 0;
      for (const Index* p = begin + 1; p < end; ++p) distinct += *p != p[-1];
      cursor[r + 1] = static_cast<Index>(distinct);
    }
  });
  cursor[0] = 0;
  const std::int64_t nnz = lengths_to_offsets(cursor, threads, [](std::int64_t) {});
  phase.next("rmat/allocate values");
  detail::reserve_prefaulted(a.values, static_cast<std::size_t>(nnz), threads);
  a.values.resize(static_cast<std::size_t>(nnz));
  phase.next("rmat/sum duplicates");
  // Each row's distinct columns to the front of its own range, their counts to their final place.
  parallel_blocks(threads, row_blocks, [] { return NoScratch{}; }, [&](std::int64_t b, NoScratch&) {
    for (std::int64_t r = b * kRowBlock; r < std::min(n, (b + 1) * kRowBlock); ++r) {
      Index* col = a.col_idx.data() + a.row_ptr[r];
      const std::int64_t length = a.row_ptr[r + 1] - a.row_ptr[r];
      Value* count = a.values.data() + cursor[r];
      std::int64_t out = -1;
      for (std::int64_t k = 0; k < length; ++k) {
        if (out >= 0 && col[k] == col[out]) {
          count[out] += Value(1);
        } else {
          col[++out] = col[k];
          count[out] = Value(1);
        }
      }
    }
  });
  phase.next("rmat/compact");
  detail::compact_rows(a.col_idx.data(), a.row_ptr, cursor, threads);
  a.row_ptr.swap(cursor);
  a.col_idx.resize(static_cast<std::size_t>(nnz));
  return a;
}

using Job = std::variant<StencilJob, RandomUniformJob, RmatJob, BandedJob, LongRowsJob, MostlyEmptyJob, DenseRowsJob>;

template <class Value, class Index, class AnyJob>
CsrMatrix<Value, Index> build(const AnyJob& job, const GenerateOptions& options) {
  return guarded(job.name, [&] {
    if constexpr (std::is_same_v<AnyJob, RmatJob>)
      return build_rmat<Value, Index>(job, options);
    else
      return build_rows<Value, Index>(job, options);
  });
}

Matrix build_default(const auto& job) { return build<double, std::int64_t>(job, GenerateOptions{}); }

}  // namespace

Matrix poisson2d(std::int64_t n) { return build_default(poisson2d_job(n)); }
Matrix poisson3d(std::int64_t n) { return build_default(poisson3d_job(n)); }
Matrix stencil27(std::int64_t n) { return build_default(stencil27_job(n)); }

Matrix random_uniform(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed) {
  return build_default(random_uniform_job(rows, cols, per_row, seed));
}

Matrix rmat(int scale, std::int64_t edge_factor, std::uint64_t seed, double a, double b, double c) {
  return build_default(rmat_job(scale, edge_factor, seed, a, b, c));
}

Matrix banded(std::int64_t n, std::int64_t half_bandwidth, std::uint64_t seed) {
  return build_default(banded_job(n, half_bandwidth, seed));
}

Matrix long_rows(std::int64_t rows, std::int64_t cols, std::int64_t long_rows, std::int64_t long_length,
                 std::int64_t short_length, std::uint64_t seed) {
  return build_default(long_rows_job(rows, cols, long_rows, long_length, short_length, seed));
}

Matrix mostly_empty(std::int64_t rows, std::int64_t cols, double nonempty_fraction, std::int64_t per_row,
                    std::uint64_t seed) {
  return build_default(mostly_empty_job(rows, cols, nonempty_fraction, per_row, seed));
}

Matrix dense_rows(std::int64_t n, std::int64_t dense_rows, double dense_fraction, std::int64_t per_row,
                  std::uint64_t seed) {
  return build_default(dense_rows_job(n, dense_rows, dense_fraction, per_row, seed));
}

// --- registry ----------------------------------------------------------------------------------------
namespace {

using Params = std::map<std::string, double>;

struct Entry {
  GeneratorInfo info;
  std::function<Matrix(const char* kind, const Params&)> make;
};

double real_param(const char* kind, const Params& p, const std::string& name) {
  const double v = p.at(name);
  require(std::isfinite(v), std::string(kind) + ": parameter " + name + " is not finite");
  return v;
}

// Integers travel as doubles (CLI / Python): they must be integral and within 2^53, where doubles are exact.
std::int64_t int_param(const char* kind, const Params& p, const std::string& name) {
  const double v = real_param(kind, p, name);
  require(v == std::floor(v) && std::fabs(v) <= 9007199254740992.0,
          std::string(kind) + ": parameter " + name + " = " + std::to_string(v) + " must be an integer");
  return static_cast<std::int64_t>(v);
}

std::uint64_t seed_param(const char* kind, const Params& p, const std::string& name) {
  const std::int64_t v = int_param(kind, p, name);
  require(v >= 0, std::string(kind) + ": parameter " + name + " = " + std::to_string(v) + " must be >= 0");
  return static_cast<std::uint64_t>(v);
}

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> e;
    e.push_back({{"poisson2d", "2D 5-point Laplacian on an n x n grid (n^2 rows), values 4 / -1", {{"n", 1000}}},
                 [](const char* k, const Params& p) { return poisson2d(int_param(k, p, "n")); }});
    e.push_back({{"poisson3d", "3D 7-point Laplacian on an n^3 grid, values 6 / -1", {{"n", 100}}},
                 [](const char* k, const Params& p) { return poisson3d(int_param(k, p, "n")); }});
    e.push_back({{"stencil27", "3D 27-point stencil on an n^3 grid, values 26 / -1", {{"n", 50}}},
                 [](const char* k, const Params& p) { return stencil27(int_param(k, p, "n")); }});
    e.push_back({{"random_uniform", "per_row distinct uniformly random columns per row, values in [-1, 1)",
                  {{"rows", 100000}, {"cols", 100000}, {"per_row", 16}, {"seed", 1}}},
                 [](const char* k, const Params& p) {
                   return random_uniform(int_param(k, p, "rows"), int_param(k, p, "cols"), int_param(k, p, "per_row"),
                                         seed_param(k, p, "seed"));
                 }});
    e.push_back({{"rmat", "R-MAT power-law graph, 2^scale vertices, edge_factor * 2^scale edges (counts summed)",
                  {{"scale", 16}, {"edge_factor", 16}, {"seed", 1}, {"a", 0.57}, {"b", 0.19}, {"c", 0.19}}},
                 [](const char* k, const Params& p) {
                   const std::int64_t scale = int_param(k, p, "scale");
                   require(scale >= 0 && scale <= 32, std::string(k) + ": scale = " + std::to_string(scale) +
                                                          " is not in [0, 32]");
                   return rmat(static_cast<int>(scale), int_param(k, p, "edge_factor"), seed_param(k, p, "seed"),
                               real_param(k, p, "a"), real_param(k, p, "b"), real_param(k, p, "c"));
                 }});
    e.push_back({{"banded", "n x n band of half_bandwidth on each side of the diagonal, values in [-1, 1)",
                  {{"n", 100000}, {"half_bandwidth", 8}, {"seed", 1}}},
                 [](const char* k, const Params& p) {
                   return banded(int_param(k, p, "n"), int_param(k, p, "half_bandwidth"), seed_param(k, p, "seed"));
                 }});
    e.push_back({{"long_rows", "long_rows rows of long_length random columns spread evenly, the rest short_length",
                  {{"rows", 100000}, {"cols", 100000}, {"long_rows", 10}, {"long_length", 50000},
                   {"short_length", 8}, {"seed", 1}}},
                 [](const char* k, const Params& p) {
                   return long_rows(int_param(k, p, "rows"), int_param(k, p, "cols"), int_param(k, p, "long_rows"),
                                    int_param(k, p, "long_length"), int_param(k, p, "short_length"),
                                    seed_param(k, p, "seed"));
                 }});
    e.push_back({{"mostly_empty", "each row nonempty with probability nonempty_fraction, then per_row columns",
                  {{"rows", 100000}, {"cols", 100000}, {"nonempty_fraction", 0.01}, {"per_row", 32}, {"seed", 1}}},
                 [](const char* k, const Params& p) {
                   return mostly_empty(int_param(k, p, "rows"), int_param(k, p, "cols"),
                                       real_param(k, p, "nonempty_fraction"), int_param(k, p, "per_row"),
                                       seed_param(k, p, "seed"));
                 }});
    e.push_back({{"dense_rows", "circuit-like: diagonal + per_row random columns, dense_rows rows dense over "
                                "dense_fraction of the columns",
                  {{"n", 100000}, {"dense_rows", 10}, {"dense_fraction", 0.2}, {"per_row", 4}, {"seed", 1}}},
                 [](const char* k, const Params& p) {
                   return dense_rows(int_param(k, p, "n"), int_param(k, p, "dense_rows"),
                                     real_param(k, p, "dense_fraction"), int_param(k, p, "per_row"),
                                     seed_param(k, p, "seed"));
                 }});
    // FEM stiffness matrices (src/core/fem.cpp; the LMA element data comes from fem::build directly).
    for (const char* kind : {"fem2d", "fem3d"}) {
      const fem::MeshParams d = fem::mesh_params(kind, {});
      e.push_back({{kind, std::string("P1 FEM -div(kappa grad u), Dirichlet, on a distorted ") +
                              (d.dim == 2 ? "n^2-cell triangle" : "n^3-cell tetrahedron") + " mesh: (n-1)^" +
                              std::to_string(d.dim) + " rows (docs/algorithms/lma.md)",
                    {{"n", static_cast<double>(d.n)}, {"kappa_amplitude", d.kappa_amplitude}, {"distortion", d.distortion}}},
                   [](const char* k, const Params& p) {
                     return fem::build<double, std::int64_t>(fem::mesh_params(k, p), {.element_data = false}).matrix;
                   }});
    }
    return e;
  }();
  return entries;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

const std::vector<GeneratorInfo>& generators() {
  static const std::vector<GeneratorInfo> infos = [] {
    std::vector<GeneratorInfo> v;
    for (const auto& e : registry()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

namespace {

// The registry entry of `kind` and its parameters merged over the defaults; InvalidArgument naming the
// valid kinds or parameters otherwise.
std::pair<const Entry*, Params> lookup(std::string_view kind, const Params& params) {
  const Entry* entry = nullptr;
  std::vector<std::string> kinds;
  for (const auto& e : registry()) {
    kinds.push_back(e.info.name);
    if (e.info.name == kind) entry = &e;
  }
  if (!entry)
    throw InvalidArgument("unknown generator '" + std::string(kind) + "'; valid: " + join_names(kinds));
  Params merged = entry->info.defaults;
  for (const auto& [name, value] : params) {
    if (!merged.count(name)) {
      std::vector<std::string> names;
      for (const auto& [n, v] : entry->info.defaults) names.push_back(n);
      throw InvalidArgument("generator " + entry->info.name + ": unknown parameter '" + name +
                            "'; valid: " + join_names(names));
    }
    merged[name] = value;
  }
  return {entry, merged};
}

}  // namespace

Matrix generate(std::string_view kind, const std::map<std::string, double>& params) {
  const auto [entry, merged] = lookup(kind, params);
  return entry->make(entry->info.name.c_str(), merged);
}

// --- typed generation ----------------------------------------------------------------------------------
namespace {

// The generators that write any value / index type directly, by registry name. Kept apart from
// registry() (which reads the same parameters for the double / int64 functions) so that a kind
// registered there alone still generates, through the converting fallback of generate<V, I>.
struct TypedEntry {
  const char* name;
  Job (*job)(const char* kind, const Params& p);
};

const std::vector<TypedEntry>& typed_registry() {
  static const std::vector<TypedEntry> entries{
      {"poisson2d", [](const char* k, const Params& p) -> Job { return poisson2d_job(int_param(k, p, "n")); }},
      {"poisson3d", [](const char* k, const Params& p) -> Job { return poisson3d_job(int_param(k, p, "n")); }},
      {"stencil27", [](const char* k, const Params& p) -> Job { return stencil27_job(int_param(k, p, "n")); }},
      {"random_uniform",
       [](const char* k, const Params& p) -> Job {
         return random_uniform_job(int_param(k, p, "rows"), int_param(k, p, "cols"), int_param(k, p, "per_row"),
                                   seed_param(k, p, "seed"));
       }},
      {"rmat",
       [](const char* k, const Params& p) -> Job {
         const std::int64_t scale = int_param(k, p, "scale");
         require(scale >= 0 && scale <= 32, std::string(k) + ": scale = " + std::to_string(scale) + " is not in [0, 32]");
         return rmat_job(static_cast<int>(scale), int_param(k, p, "edge_factor"), seed_param(k, p, "seed"),
                         real_param(k, p, "a"), real_param(k, p, "b"), real_param(k, p, "c"));
       }},
      {"banded",
       [](const char* k, const Params& p) -> Job {
         return banded_job(int_param(k, p, "n"), int_param(k, p, "half_bandwidth"), seed_param(k, p, "seed"));
       }},
      {"long_rows",
       [](const char* k, const Params& p) -> Job {
         return long_rows_job(int_param(k, p, "rows"), int_param(k, p, "cols"), int_param(k, p, "long_rows"),
                              int_param(k, p, "long_length"), int_param(k, p, "short_length"),
                              seed_param(k, p, "seed"));
       }},
      {"mostly_empty",
       [](const char* k, const Params& p) -> Job {
         return mostly_empty_job(int_param(k, p, "rows"), int_param(k, p, "cols"),
                                 real_param(k, p, "nonempty_fraction"), int_param(k, p, "per_row"),
                                 seed_param(k, p, "seed"));
       }},
      {"dense_rows",
       [](const char* k, const Params& p) -> Job {
         return dense_rows_job(int_param(k, p, "n"), int_param(k, p, "dense_rows"), real_param(k, p, "dense_fraction"),
                               int_param(k, p, "per_row"), seed_param(k, p, "seed"));
       }},
  };
  return entries;
}

const TypedEntry* find_typed(std::string_view kind) {
  for (const auto& e : typed_registry())
    if (e.name == kind) return &e;
  return nullptr;
}

}  // namespace

template <class Value, class Index>
CsrMatrix<Value, Index> generate(std::string_view kind, const std::map<std::string, double>& params,
                                 const GenerateOptions& options) {
  const auto [entry, merged] = lookup(kind, params);
  const char* name = entry->info.name.c_str();
  if (const TypedEntry* typed = find_typed(kind))
    return std::visit([&](const auto& job) { return build<Value, Index>(job, options); }, typed->job(name, merged));
  if (detail::debug_log_enabled())
    std::fprintf(stderr, "[spmv] generator %s has no typed path: built in double / int64, then converted\n", name);
  return convert<Value, Index>(entry->make(name, merged));
}

std::optional<SizeBound> size_bound(std::string_view kind, const std::map<std::string, double>& params) {
  const auto [entry, merged] = lookup(kind, params);
  const TypedEntry* typed = find_typed(kind);
  if (!typed) return std::nullopt;
  return std::visit([](const auto& job) { return job.bound(); }, typed->job(entry->info.name.c_str(), merged));
}

bool supports_row_ranges(std::string_view kind) { return find_typed(kind) && kind != "rmat"; }

namespace {

// The typed job of a kind with row ranges and the range checked against its rows.
Job row_range_job(std::string_view kind, const Params& params, std::int64_t row_begin, std::int64_t row_end) {
  const auto [entry, merged] = lookup(kind, params);
  if (!supports_row_ranges(kind))
    throw Unsupported("generator " + entry->info.name + " has no row-range path (its rows are not independent)");
  Job job = find_typed(kind)->job(entry->info.name.c_str(), merged);
  const std::int64_t rows = std::visit([](const auto& j) { return j.bound().rows; }, job);
  require(row_begin >= 0 && row_begin <= row_end && row_end <= rows,
          "generator " + entry->info.name + ": row range [" + std::to_string(row_begin) + ", " +
              std::to_string(row_end) + ") is not within [0, " + std::to_string(rows) + "]");
  return job;
}

}  // namespace

std::vector<std::int64_t> row_lengths(std::string_view kind, const std::map<std::string, double>& params,
                                      std::int64_t row_begin, std::int64_t row_end) {
  const Job job = row_range_job(kind, params, row_begin, row_end);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(row_end - row_begin));
  std::visit(
      [&](const auto& j) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(j)>, RmatJob>) {
#pragma omp parallel for schedule(static)
          for (std::int64_t r = row_begin; r < row_end; ++r) lengths[r - row_begin] = j.length(r);
        }
      },
      job);
  return lengths;
}

template <class Value, class Index>
CsrMatrix<Value, Index> generate_rows(std::string_view kind, const std::map<std::string, double>& params,
                                      std::int64_t row_begin, std::int64_t row_end, const GenerateOptions& options) {
  const Job job = row_range_job(kind, params, row_begin, row_end);
  return std::visit(
      [&](const auto& j) -> CsrMatrix<Value, Index> {
        if constexpr (std::is_same_v<std::decay_t<decltype(j)>, RmatJob>) {
          throw Unsupported("rmat has no row-range path");  // refused by row_range_job already
        } else {
          return guarded(j.name, [&] { return build_rows<Value, Index>(j, options, row_begin, row_end - row_begin); });
        }
      },
      job);
}

#define SPMV_INSTANTIATE(V, I)                                                                                 \
  template CsrMatrix<V, I> generate<V, I>(std::string_view, const std::map<std::string, double>&, \
                                          const GenerateOptions&);                                     \
  template CsrMatrix<V, I> generate_rows<V, I>(std::string_view, const std::map<std::string, double>&, \
                                               std::int64_t, std::int64_t, const GenerateOptions&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::gen
