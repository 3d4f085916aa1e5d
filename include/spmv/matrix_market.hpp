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
// - The text is streamed: read (and inflated) in blocks of a few MB of whole lines, each block parsed
//   in parallel (OpenMP) and appended, so memory holds the entries and one block, never the whole text.
//   read_csr keeps its intermediate entries in the result's value type and in 32-bit indices when the
//   size allows, so that its peak stays within 2x the CSR it returns plus the block buffers (~64 MB).
// - Before the large allocations the size line is checked against a memory budget: the bytes the read
//   needs (row pointers, entries, and what ReadOptions says the caller adds) against
//   ReadOptions::max_memory, or else the memory available (MemAvailable in /proc/meminfo, a cgroup
//   limit, RLIMIT_AS); MemoryLimitExceeded names both sizes. The entry count used is the declared one,
//   capped by what the text could hold when its size is known (plain files, memory), so a small file
//   declaring 10^18 entries fails with "file ends after ..." instead of exhausting memory.
// - Error messages read "FILE:LINE: message"; a missing entry is reported on the line after the last
//   one. A read failure (missing file, permissions) is an Error naming the path and the OS reason; a
//   corrupt gzip stream is a ParseError naming the file.
// - Each block of a coordinate file is split at newlines and parsed in parallel; the result and error
//   messages are the same as those of the sequential parse.
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

struct ReadOptions {
  // Refuse matrices whose read needs more than this many bytes; 0: the memory available.
  std::uint64_t max_memory = 0;
  // What the caller will allocate beside the result, counted in the same budget: e.g. the vectors of
  // a product (8 bytes per row and per column in double), or the CSR built later from a COO result.
  std::uint64_t extra_bytes_per_row = 0;
  std::uint64_t extra_bytes_per_column = 0;
  std::uint64_t extra_bytes_per_entry = 0;
};

struct MatrixMarketFile {
  MatrixMarketHeader header;
  CooMatrix<double, std::int64_t> matrix;  // expanded to general; pattern entries are 1.0
};

// `name` is used in error messages only.
MatrixMarketFile parse_matrix_market(std::string_view text, std::string_view name = "<memory>");
// Reads a file ("-" for standard input), gunzipping when it starts with the gzip magic bytes.
MatrixMarketFile read_matrix_market(const std::string& path, const ReadOptions& options = {});

// Read straight into CSR (duplicates summed, columns sorted) without a 64-bit COO copy on the way.
// Throws Unsupported when the matrix does not fit Index; `header`, when given, receives the header as
// stored (e.g. "symmetric" before expansion).
template <class Value, class Index>
CsrMatrix<Value, Index> read_csr(const std::string& path, const ReadOptions& options = {},
                                 MatrixMarketHeader* header = nullptr);

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

// parse_matrix_market with each streamed block of a coordinate file split into `chunks` pieces at
// newlines, parsed in parallel under OpenMP (chunks <= 1: sequential), and blocks of about
// `block_bytes` (0: the reader's default). The result and any error are identical for every `chunks`
// and `block_bytes`; parse_matrix_market picks them from the size and the thread count. Exposed so that
// tests and the fuzzer can compare the paths on small inputs.
MatrixMarketFile parse_matrix_market_chunks(std::string_view text, std::string_view name, int chunks,
                                            std::size_t block_bytes = 0);

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
