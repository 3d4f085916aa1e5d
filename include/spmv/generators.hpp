#pragma once
// Deterministic, seeded matrix generators for tests, benchmarks and the CLI. Every generator returns a
// canonical CSR matrix (columns sorted, no duplicates) in double / 64-bit indices; convert<V, I>()
// narrows it. The same arguments always give the same matrix on every platform (own RNG, no
// std::uniform_*_distribution, whose output is implementation-defined).
#include <cstdint>
#include <map>
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

}  // namespace spmv::gen
