#pragma once
// Deterministic, seeded matrix generators for tests, benchmarks and the CLI. Every generator returns a
// canonical CSR matrix (columns sorted, no duplicates). The named functions return double / 64-bit
// indices; generate<Value, Index>() writes any of the four value/index types directly, with no master
// copy, in parallel (OpenMP over blocks of rows). The same arguments always give the same matrix, for
// any number of threads, on every platform (own RNG, no std::uniform_*_distribution, whose output is
// implementation-defined): each row draws from its own stream, derived from (seed, row).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/csr.hpp"

namespace spmv::gen {

using Matrix = CsrMatrix<double, std::int64_t>;

// 2D 5-point Laplacian on an n x n grid (n^2 rows), values 4 / -1.
Matrix poisson2d(std::int64_t n);
// 3D 7-point Laplacian on an n x n x n grid, values 6 / -1.
Matrix poisson3d(std::int64_t n);
// 3D 27-point stencil on an n x n x n grid, values 26 / -1.
Matrix stencil27(std::int64_t n);
// Each row holds `per_row` distinct uniformly random columns; values uniform in [-1, 1).
Matrix random_uniform(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed);
// R-MAT / Kronecker power-law graph with 2^scale vertices and edge_factor * 2^scale edges
// (duplicates summed), probabilities a, b, c (d = 1 - a - b - c).
Matrix rmat(int scale, std::int64_t edge_factor, std::uint64_t seed, double a = 0.57, double b = 0.19,
            double c = 0.19);
// n x n band: every row holds the columns within `half_bandwidth` of the diagonal.
Matrix banded(std::int64_t n, std::int64_t half_bandwidth, std::uint64_t seed);
// A wide matrix: `long_rows` rows of `long_length` random columns spread over the rows, the other rows
// holding `short_length` random columns.
Matrix long_rows(std::int64_t rows, std::int64_t cols, std::int64_t long_rows, std::int64_t long_length,
                 std::int64_t short_length, std::uint64_t seed);
// Only a fraction of rows hold entries (`per_row` each); the rest are empty.
Matrix mostly_empty(std::int64_t rows, std::int64_t cols, double nonempty_fraction, std::int64_t per_row,
                    std::uint64_t seed);
// Circuit-like: a sparse background of `per_row` entries plus the diagonal, and `dense_rows` rows that
// are dense over `dense_fraction` of the columns.
Matrix dense_rows(std::int64_t n, std::int64_t dense_rows, double dense_fraction, std::int64_t per_row,
                  std::uint64_t seed);

// Name-driven access for the CLI, the benchmark suite and Python: `spmv gen KIND key=value ...`.
struct GeneratorInfo {
  std::string name;                        // e.g. "poisson2d"
  std::string description;                 // one line
  std::map<std::string, double> defaults;  // every parameter with its default value
};
const std::vector<GeneratorInfo>& generators();
// Unknown kinds or parameter names throw InvalidArgument listing the valid ones.
Matrix generate(std::string_view kind, const std::map<std::string, double>& params = {});

// Limits of one typed generator call.
struct GenerateOptions {
  // Bytes the matrix may take; 0: what the system has available (MemAvailable, cgroup, ulimit -v). A
  // request above it throws MemoryLimitExceeded naming both sizes, before the large arrays exist.
  std::uint64_t max_memory = 0;
  int threads = 0;  // OpenMP threads, 0: the OpenMP default; the matrix never depends on it
};

// The matrix in Value / Index, written directly (two passes: row lengths, then the entries in place).
// Throws Unsupported when the size does not fit Index (before the large arrays exist; size_bound tells
// in advance), MemoryLimitExceeded as above. Instantiated for float/double x int32_t/int64_t. A kind
// registered without a typed path (none today) is built in double / int64 and converted, which holds
// two copies for a moment; SPMV_DEBUG_LOG=1 says so.
template <class Value, class Index>
CsrMatrix<Value, Index> generate(std::string_view kind, const std::map<std::string, double>& params = {},
                                 const GenerateOptions& options = {});

// Row slices, for distributed runs where each rank builds only its own rows (spmv/distributed.hpp).
// True for the kinds whose rows are independent of each other (all but rmat and the FEM kinds).
bool supports_row_ranges(std::string_view kind);
// The lengths of rows [row_begin, row_end) of generate(kind, params), without building the entries.
// Unsupported for a kind without row ranges; InvalidArgument for a range outside [0, rows].
std::vector<std::int64_t> row_lengths(std::string_view kind, const std::map<std::string, double>& params,
                                      std::int64_t row_begin, std::int64_t row_end);
// Rows [row_begin, row_end) of generate<Value, Index>(kind, params): row_end - row_begin rows, every
// column (global column indices), entries identical to those rows of the whole matrix.
template <class Value, class Index>
CsrMatrix<Value, Index> generate_rows(std::string_view kind, const std::map<std::string, double>& params,
                                      std::int64_t row_begin, std::int64_t row_end,
                                      const GenerateOptions& options = {});

// Sizes a generator call will produce, from its parameters alone: rows and columns exactly, nnz as an
// upper bound (exact for every kind but rmat, where it counts the edges before duplicates are summed,
// and mostly_empty). Lets callers pick 32- or 64-bit indices before generating. nullopt for a kind
// registered without a typed path. Same errors as generate.
struct SizeBound {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
};
std::optional<SizeBound> size_bound(std::string_view kind, const std::map<std::string, double>& params = {});

}  // namespace spmv::gen
