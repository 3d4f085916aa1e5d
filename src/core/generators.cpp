// Deterministic matrix generators. One xoshiro256** stream per call, seeded through splitmix64
// (Blackman & Vigna 2018), consumed in a fixed order, so a seed names the same matrix on every platform.
// Rows are built straight into preallocated CSR arrays; random column sets are drawn, sorted and
// deduplicated, then topped up (no per-entry maps), which keeps 30 M nonzeros within a few seconds.
#include "spmv/generators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <new>
#include <numeric>
#include <string>

#include "spmv/error.hpp"

namespace spmv::gen {
namespace {

// Larger requests are refused as absurd (8 TiB of column indices), before any allocation.
constexpr long double kMaxEntries = 1099511627776.0L;  // 2^40

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
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

// Runs a generator, turning an allocation failure into an spmv::Error the CLI can report.
template <class F>
Matrix guarded(const char* gen, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw Unsupported(std::string(gen) + ": not enough memory for the requested matrix");
  } catch (const std::length_error&) {
    throw Unsupported(std::string(gen) + ": not enough memory for the requested matrix");
  }
}

// Reusable buffers of sample_distinct (one set per generator call).
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

Matrix empty_matrix(std::int64_t rows, std::int64_t cols) {
  Matrix a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  return a;
}

// Appends one row of sorted columns with random values in [-1, 1).
void append_random_row(Matrix& a, Rng& rng, const std::vector<std::int64_t>& cols) {
  for (auto c : cols) {
    a.col_idx.push_back(c);
    a.values.push_back(rng.symmetric());
  }
}

// Row r of the `special` rows spread evenly over `rows`: floor(k * rows / special), k = 0..special-1.
std::int64_t spread_row(std::int64_t k, std::int64_t rows, std::int64_t special) {
  return static_cast<std::int64_t>(static_cast<unsigned __int128>(k) * static_cast<std::uint64_t>(rows) /
                                   static_cast<std::uint64_t>(special));
}

// Stencil on an n^dim grid (dim 2 or 3): neighbours at offsets in [-reach, reach] per axis, kept when
// `keep(dx, dy, dz)` holds; visited in increasing column order.
template <class Keep>
Matrix stencil(const char* gen, std::int64_t n, int dim, long double nnz_bound, double diagonal, Keep keep) {
  require_size(gen, "n", n);
  const long double rows_ld = dim == 2 ? static_cast<long double>(n) * n : static_cast<long double>(n) * n * n;
  require_entries(gen, rows_ld);
  require_entries(gen, nnz_bound);
  return guarded(gen, [&] {
    const std::int64_t rows = static_cast<std::int64_t>(rows_ld);
    Matrix a = empty_matrix(rows, rows);
    a.col_idx.reserve(static_cast<std::size_t>(nnz_bound));
    a.values.reserve(static_cast<std::size_t>(nnz_bound));
    const std::int64_t nz = dim == 3 ? n : 1;
    std::int64_t row = 0;
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x, ++row) {
          for (int dz = (dim == 3 ? -1 : 0); dz <= (dim == 3 ? 1 : 0); ++dz)
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx) {
                if (!keep(dx, dy, dz)) continue;
                const std::int64_t xx = x + dx, yy = y + dy, zz = z + dz;
                if (xx < 0 || xx >= n || yy < 0 || yy >= n || zz < 0 || zz >= nz) continue;
                a.col_idx.push_back((zz * n + yy) * n + xx);
                a.values.push_back(dx == 0 && dy == 0 && dz == 0 ? diagonal : -1.0);
              }
          a.row_ptr[row + 1] = static_cast<std::int64_t>(a.col_idx.size());
        }
    return a;
  });
}

}  // namespace

Matrix poisson2d(std::int64_t n) {
  return stencil("poisson2d", n, 2, 5.0L * n * n, 4.0,
                 [](int dx, int dy, int) { return dx == 0 || dy == 0; });
}

Matrix poisson3d(std::int64_t n) {
  return stencil("poisson3d", n, 3, 7.0L * n * n * n, 6.0,
                 [](int dx, int dy, int dz) { return (dx != 0) + (dy != 0) + (dz != 0) <= 1; });
}

Matrix stencil27(std::int64_t n) {
  return stencil("stencil27", n, 3, 27.0L * n * n * n, 26.0, [](int, int, int) { return true; });
}

Matrix random_uniform(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed) {
  const char* gen = "random_uniform";
  require_size(gen, "rows", rows);
  require_size(gen, "cols", cols);
  require(per_row >= 0 && per_row <= cols, std::string(gen) + ": per_row = " + std::to_string(per_row) +
                                               " must be in [0, cols = " + std::to_string(cols) + "]");
  require_entries(gen, static_cast<long double>(rows) * per_row);
  return guarded(gen, [&] {
    Matrix a = empty_matrix(rows, cols);
    a.col_idx.reserve(static_cast<std::size_t>(rows * per_row));
    a.values.reserve(static_cast<std::size_t>(rows * per_row));
    Rng rng(seed);
    std::vector<std::int64_t> row;
    SampleScratch scratch;
    for (std::int64_t r = 0; r < rows; ++r) {
      sample_distinct(rng, cols, per_row, row, scratch);
      append_random_row(a, rng, row);
      a.row_ptr[r + 1] = static_cast<std::int64_t>(a.col_idx.size());
    }
    return a;
  });
}

// R-MAT (Chakrabarti, Zhan & Faloutsos 2004): each edge descends `scale` levels of the adjacency matrix,
// choosing a quadrant with probabilities a, b, c, d. Values count how often an edge was drawn.
Matrix rmat(int scale, std::int64_t edge_factor, std::uint64_t seed, double a, double b, double c) {
  const char* gen = "rmat";
  // 2^32 vertices is already far beyond memory; the bound lets an edge pack into one 64-bit word.
  require(scale >= 0 && scale <= 32, std::string(gen) + ": scale = " + std::to_string(scale) + " is not in [0, 32]");
  require(edge_factor >= 0, std::string(gen) + ": edge_factor = " + std::to_string(edge_factor) + " is negative");
  require_entries(gen, static_cast<long double>(edge_factor) * std::ldexp(1.0L, scale));
  require_fraction(gen, "a", a);
  require_fraction(gen, "b", b);
  require_fraction(gen, "c", c);
  require(a + b + c <= 1.0 + 1e-12, std::string(gen) + ": a + b + c = " + std::to_string(a + b + c) +
                                        " exceeds 1 (d = 1 - a - b - c must be >= 0)");
  return guarded(gen, [&] {
    const std::int64_t n = std::int64_t{1} << scale;
    const std::int64_t edges = edge_factor * n;
    // Each level draws 32 random bits (two levels per 64-bit output, half the generator calls), compared
    // with the cumulative probabilities scaled to 2^32: 2^-32 resolution is far below any meaningful a, b, c.
    const auto threshold = [](double p) {
      return static_cast<std::uint64_t>(std::min(std::floor(std::ldexp(p, 32)), std::ldexp(1.0, 32)));
    };
    const std::uint64_t ta = threshold(a), tab = threshold(a + b), tabc = threshold(a + b + c);
    Rng rng(seed);
    std::vector<std::uint64_t> packed(static_cast<std::size_t>(edges));
    for (auto& e : packed) {
      std::uint64_t r = 0, col = 0, bits = 0;
      for (int level = 0; level < scale; ++level) {
        if ((level & 1) == 0) bits = rng.next();
        const std::uint64_t u = bits & 0xffffffffULL;
        bits >>= 32;
        // quadrant q = number of thresholds <= u: 0 = (0,0), 1 = (0,1), 2 = (1,0), 3 = (1,1); branch-free
        // because the four outcomes are unpredictable
        const std::uint64_t q = static_cast<std::uint64_t>(u >= ta) + (u >= tab) + (u >= tabc);
        r = (r << 1) | (q >> 1);
        col = (col << 1) | (q & 1);
      }
      e = (r << 32) | col;
    }
    // counting sort by row, then sort + merge duplicates within each row, compacting in place
    Matrix m = empty_matrix(n, n);
    for (auto e : packed) ++m.row_ptr[(e >> 32) + 1];
    std::partial_sum(m.row_ptr.begin(), m.row_ptr.end(), m.row_ptr.begin());
    m.col_idx.resize(static_cast<std::size_t>(edges));
    {
      std::vector<std::int64_t> cursor(m.row_ptr.begin(), m.row_ptr.end() - 1);
      for (auto e : packed) m.col_idx[cursor[e >> 32]++] = static_cast<std::int64_t>(e & 0xffffffffULL);
    }
    std::vector<std::uint64_t>().swap(packed);
    m.values.resize(static_cast<std::size_t>(edges));
    // out <= k throughout, so compacted entries never overwrite ones not yet read
    std::int64_t out = 0, begin = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t end = m.row_ptr[r + 1];
      const std::int64_t row_start = out;
      std::sort(m.col_idx.begin() + begin, m.col_idx.begin() + end);
      for (std::int64_t k = begin; k < end; ++k) {
        if (out > row_start && m.col_idx[k] == m.col_idx[out - 1]) {
          m.values[out - 1] += 1.0;
        } else {
          m.col_idx[out] = m.col_idx[k];
          m.values[out] = 1.0;
          ++out;
        }
      }
      begin = end;
      m.row_ptr[r + 1] = out;
    }
    m.col_idx.resize(static_cast<std::size_t>(out));
    m.values.resize(static_cast<std::size_t>(out));
    m.col_idx.shrink_to_fit();
    m.values.shrink_to_fit();
    return m;
  });
}

Matrix banded(std::int64_t n, std::int64_t half_bandwidth, std::uint64_t seed) {
  const char* gen = "banded";
  require_size(gen, "n", n);
  require_size(gen, "half_bandwidth", half_bandwidth);
  const long double bound =
      std::min(static_cast<long double>(n) * n, static_cast<long double>(n) * (2.0L * half_bandwidth + 1));
  require_entries(gen, bound);
  return guarded(gen, [&] {
    Matrix a = empty_matrix(n, n);
    a.col_idx.reserve(static_cast<std::size_t>(bound));
    a.values.reserve(static_cast<std::size_t>(bound));
    Rng rng(seed);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t lo = std::max<std::int64_t>(0, i - half_bandwidth);
      const std::int64_t hi = std::min<std::int64_t>(n - 1, i + std::min(half_bandwidth, n));
      for (std::int64_t j = lo; j <= hi; ++j) {
        a.col_idx.push_back(j);
        a.values.push_back(rng.symmetric());
      }
      a.row_ptr[i + 1] = static_cast<std::int64_t>(a.col_idx.size());
    }
    return a;
  });
}

Matrix long_rows(std::int64_t rows, std::int64_t cols, std::int64_t long_rows, std::int64_t long_length,
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
  const long double nnz =
      static_cast<long double>(long_rows) * long_length + static_cast<long double>(rows - long_rows) * short_length;
  require_entries(gen, nnz);
  return guarded(gen, [&] {
    Matrix a = empty_matrix(rows, cols);
    a.col_idx.reserve(static_cast<std::size_t>(nnz));
    a.values.reserve(static_cast<std::size_t>(nnz));
    Rng rng(seed);
    std::vector<std::int64_t> row;
    SampleScratch scratch;
    std::int64_t next_long = 0;  // index k of the next long row, at spread_row(k)
    for (std::int64_t r = 0; r < rows; ++r) {
      const bool is_long = next_long < long_rows && spread_row(next_long, rows, long_rows) == r;
      if (is_long) ++next_long;
      sample_distinct(rng, cols, is_long ? long_length : short_length, row, scratch);
      append_random_row(a, rng, row);
      a.row_ptr[r + 1] = static_cast<std::int64_t>(a.col_idx.size());
    }
    return a;
  });
}

Matrix mostly_empty(std::int64_t rows, std::int64_t cols, double nonempty_fraction, std::int64_t per_row,
                    std::uint64_t seed) {
  const char* gen = "mostly_empty";
  require_size(gen, "rows", rows);
  require_size(gen, "cols", cols);
  require_fraction(gen, "nonempty_fraction", nonempty_fraction);
  require(per_row >= 0 && per_row <= cols, std::string(gen) + ": per_row = " + std::to_string(per_row) +
                                               " must be in [0, cols = " + std::to_string(cols) + "]");
  require_entries(gen, static_cast<long double>(rows) * per_row);
  return guarded(gen, [&] {
    Matrix a = empty_matrix(rows, cols);
    // expected size plus 5% (grows geometrically in the rare case the draw exceeds it)
    const auto expected = static_cast<std::size_t>(1.05L * rows * per_row * nonempty_fraction) + 64;
    a.col_idx.reserve(expected);
    a.values.reserve(expected);
    Rng rng(seed);
    std::vector<std::int64_t> row;
    SampleScratch scratch;
    for (std::int64_t r = 0; r < rows; ++r) {
      // one Bernoulli(nonempty_fraction) draw per row, so the count of nonempty rows is binomial
      if (rng.uniform() < nonempty_fraction) {
        sample_distinct(rng, cols, per_row, row, scratch);
        append_random_row(a, rng, row);
      }
      a.row_ptr[r + 1] = static_cast<std::int64_t>(a.col_idx.size());
    }
    return a;
  });
}

// Rows hold `per_row` random off-diagonal columns plus the diagonal; the dense rows (spread evenly,
// as in long_rows) hold round(dense_fraction * n) off-diagonal columns (at most n - 1) plus the diagonal.
// Off-diagonal values are uniform in [-1, 1) and the diagonal is 1 + sum |off-diagonal| (strictly
// diagonally dominant, like a circuit's nodal matrix).
Matrix dense_rows(std::int64_t n, std::int64_t dense_rows, double dense_fraction, std::int64_t per_row,
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
  const long double nnz = static_cast<long double>(dense_rows) * (dense_length + 1) +
                          static_cast<long double>(n - dense_rows) * (per_row + 1);
  require_entries(gen, nnz);
  return guarded(gen, [&] {
    Matrix a = empty_matrix(n, n);
    a.col_idx.reserve(static_cast<std::size_t>(nnz));
    a.values.reserve(static_cast<std::size_t>(nnz));
    Rng rng(seed);
    std::vector<std::int64_t> row;
    SampleScratch scratch;
    std::int64_t next_dense = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const bool is_dense = next_dense < dense_rows && spread_row(next_dense, n, dense_rows) == i;
      if (is_dense) ++next_dense;
      sample_distinct(rng, off, is_dense ? dense_length : per_row, row, scratch);
      double diagonal = 1.0;
      std::size_t diagonal_pos = 0;
      bool placed = false;
      for (auto j : row) {
        const std::int64_t col = j >= i ? j + 1 : j;  // skip the diagonal
        if (!placed && col > i) {
          diagonal_pos = a.col_idx.size();
          a.col_idx.push_back(i);
          a.values.push_back(0.0);
          placed = true;
        }
        const double v = rng.symmetric();
        diagonal += std::abs(v);
        a.col_idx.push_back(col);
        a.values.push_back(v);
      }
      if (!placed) {
        diagonal_pos = a.col_idx.size();
        a.col_idx.push_back(i);
        a.values.push_back(0.0);
      }
      a.values[diagonal_pos] = diagonal;
      a.row_ptr[i + 1] = static_cast<std::int64_t>(a.col_idx.size());
    }
    return a;
  });
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

Matrix generate(std::string_view kind, const std::map<std::string, double>& params) {
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
  return entry->make(entry->info.name.c_str(), merged);
}

}  // namespace spmv::gen
