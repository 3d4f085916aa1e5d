#pragma once
// Matrix Market I/O. Reading accepts coordinate (real, integer, pattern; general, symmetric,
// skew-symmetric, hermitian for real data) and array (dense) files, plain or gzip-compressed (detected
// from the content, not the name), from a path or standard input ("-"). Symmetric storage is expanded to
// both triangles, so the result is always "general". Errors are ParseError naming the file and line.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/csr.hpp"

namespace spmv {

struct MatrixMarketHeader {
  std::string format;    // "coordinate" or "array"
  std::string field;     // "real", "integer" or "pattern"
  std::string symmetry;  // "general", "symmetric", "skew-symmetric" or "hermitian"
};

struct MatrixMarketFile {
  MatrixMarketHeader header;
  CooMatrix<double, std::int64_t> matrix;  // expanded to general; pattern entries are 1.0
};

// `name` is used in error messages only.
MatrixMarketFile parse_matrix_market(std::string_view text, std::string_view name = "<memory>");
// Reads a file ("-" for standard input), gunzipping when it starts with the gzip magic bytes.
MatrixMarketFile read_matrix_market(const std::string& path);

// Convenience: read and convert to CSR (duplicates summed, columns sorted). Throws Unsupported when
// the matrix does not fit Index.
template <class Value, class Index>
CsrMatrix<Value, Index> read_csr(const std::string& path);

// Writes "coordinate real general" with 17 significant digits (exact round trip for double);
// gzip-compressed when path ends in ".gz"; "-" writes to standard output.
template <class Value, class Index>
void write_matrix_market(const std::string& path, const CsrMatrix<Value, Index>& a);

// Dense vectors: Matrix Market "array real general" with one column, or plain text with one number
// per line (blank lines and lines starting with '%' or '#' ignored).
std::vector<double> read_vector(const std::string& path);
// Writes a Matrix Market array file with 17 significant digits ("-" for standard output).
void write_vector(const std::string& path, std::span<const double> v);

}  // namespace spmv
