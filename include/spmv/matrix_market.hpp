#pragma once
// Matrix Market I/O. Reading accepts coordinate (real, integer, pattern; general, symmetric,
// skew-symmetric, hermitian for real data) and array (dense) files, plain or gzip-compressed (detected
// from the content, not the name), from a path or standard input ("-"). Symmetric storage is expanded to
// both triangles, so the result is always "general". Errors are ParseError naming the file and line.
//
// Details of the reader (the Matrix Market spec, NIST 1996, leaves some of these open):
// - Entries come out in file order; an off-diagonal entry of a symmetric, skew-symmetric (negated) or
//   hermitian file is followed at once by its mirror. Entries above the diagonal in such files are
//   mirrored too (some writers store the upper triangle). Duplicates are kept (read_csr sums them).
// - Array files give one entry per stored value, explicit zeros included, in column-major order;
//   symmetric arrays store the lower triangle, skew-symmetric arrays the strictly lower one.
// - Banner words are case-insensitive. Comment lines ('%') and blank lines may appear anywhere after the
//   banner. Lines may end in "\r\n". One entry per line; anything after it is an error.
// - Integers take an optional '+'; values are decimal numbers as accepted by std::from_chars (also
//   "inf", "nan"); values that underflow become 0 or subnormal, values that overflow double are errors.
//   Integer-field values beyond 2^53 are rounded to double.
// - Refused: complex fields, pattern arrays, skew-symmetric pattern files, non-square symmetric files,
//   negative sizes, rows * cols beyond 2^63 - 1, nonzero diagonal entries in skew-symmetric files.
// - Memory is reserved from the declared entry count only up to what the text could hold, so a small
//   file declaring 10^18 entries fails with "file ends after ..." instead of exhausting memory.
// - Error messages read "FILE:LINE: message"; a missing entry is reported on the line after the last
//   one. A read failure (missing file, permissions) is an Error naming the path and the OS reason; a
//   corrupt gzip stream is a ParseError naming the file.
// - Large coordinate files are parsed in parallel (OpenMP) in chunks split at newlines; the result
//   and error messages are the same as those of the sequential parse.
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

// Writes "coordinate real general" with 17 significant digits (exact round trip for double; 9 for
// float); gzip-compressed when path ends in ".gz"; "-" writes to standard output.
template <class Value, class Index>
void write_matrix_market(const std::string& path, const CsrMatrix<Value, Index>& a);

// Dense vectors: Matrix Market "array real general" with one column, or plain text with one number
// per line (blank lines and lines starting with '%' or '#' ignored). Gzip is detected as for matrices.
std::vector<double> read_vector(const std::string& path);
// Writes a Matrix Market array file with 17 significant digits ("-" for standard output; gzip when the
// path ends in ".gz").
void write_vector(const std::string& path, std::span<const double> v);

namespace detail {

// parse_matrix_market with the data section of a coordinate file split into `chunks` pieces at
// newlines, parsed in parallel under OpenMP (chunks <= 1: sequential). The result and any error are
// identical for every `chunks`; parse_matrix_market picks it from the size and the thread count.
// Exposed so that tests and the fuzzer can compare the two paths on small inputs.
MatrixMarketFile parse_matrix_market_chunks(std::string_view text, std::string_view name, int chunks);

// True when `data` starts with the gzip magic bytes 1f 8b.
bool is_gzip(std::string_view data);
// Inflates a gzip stream of one or more members; ParseError naming `name` when it is corrupt,
// truncated or followed by bytes that are not another member.
std::string gunzip(std::string_view data, std::string_view name);

// The exact text write_matrix_market writes.
template <class Value, class Index>
std::string format_matrix_market(const CsrMatrix<Value, Index>& a);

}  // namespace detail
}  // namespace spmv
