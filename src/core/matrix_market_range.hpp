#pragma once
// Private: what a reader of one byte range of a Matrix Market file needs from the serial reader
// (src/core/matrix_market.cpp), so that dist::read_matrix_market, where every rank parses its own range
// of lines, follows read_csr's rules and messages exactly instead of repeating them: the preamble (banner,
// comments, size line) with the byte offset and line number where the entries start, and read_csr's
// entry parser (OpenMP within each block, mirrored entries right after their originals, values rounded
// to Value as read_csr stores them) run over a range of whole lines.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/matrix_market_io.hpp"
#include "spmv/error.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv::detail {

struct MatrixMarketLayout {
  MatrixMarketHeader header;  // as stored ("symmetric" before expansion)
  bool coordinate = true;     // false: an array file
  bool mirrored = false;      // symmetric, skew-symmetric or hermitian: off-diagonal entries mirrored
  std::int64_t rows = 0, cols = 0;
  std::int64_t entries = 0;      // entry lines the file must hold (the size line's count)
  std::int64_t size_line = 0;    // line number of the size line
  std::int64_t data_offset = 0;  // byte offset of the text after the size line's '\n'
  std::int64_t data_line = 0;    // line number of that byte
  // Where read_csr reports a missing entry when no text follows the size line.
  std::int64_t line_after_preamble = 0;
};

// The preamble of the text `in` delivers (from its first byte); ParseError exactly as read_csr's.
MatrixMarketLayout read_matrix_market_layout(InputStream& in);

// Entries in file order (0-based indices in Index: int32_t when the matrix's sizes allow), values
// rounded to Value.
template <class Value, class Index>
struct RangeEntries {
  std::vector<Index> rows, cols;
  std::vector<Value> values;
};

// What parse_coordinate_lines found. Lines are counted from the range's first line (offset 0).
struct RangeOutcome {
  std::int64_t entry_lines = 0;   // entry lines parsed before the first problem (every one without a problem)
  std::int64_t newlines = 0;      // '\n' bytes in the range (counted only when there is no problem)
  bool ends_inside_line = false;  // the range's last byte is not '\n' (no problem only)
  bool failed = false;            // the first problem, as read_csr reports it:
  std::int64_t line_offset = 0;   //   lines of the range before its line
  std::string message;            //   the message without read_csr's "FILE:LINE: " prefix
};

// Parses the coordinate entries of a range of whole lines of the entry section (`in` delivers exactly
// those bytes) into `out`, at most `limit` entry lines (one more is a problem with read_csr's "more
// entries than declared" message). Before the large allocations the range's share of the read is checked
// against ReadOptions' budget (MemoryLimitExceeded): the entry lines its size allows, or `share_lines`
// when that is not -1 (a share of a gzip file's lines: its size is unknown before the read), at most
// the declared count. I/O failures throw as in read_csr.
template <class Value, class Index>
RangeOutcome parse_coordinate_lines(InputStream& in, const MatrixMarketLayout& layout, std::int64_t limit,
                                    std::int64_t share_lines, const ReadOptions& options,
                                    RangeEntries<Value, Index>& out);

// read_csr's error for `message` at `line` of `name`: "NAME:LINE: MESSAGE".
ParseError located_parse_error(std::string_view name, std::int64_t line, const std::string& message);
// read_csr's message when the text holds `found` of the layout's entry lines.
std::string missing_entries_message(const MatrixMarketLayout& layout, std::int64_t found);

}  // namespace spmv::detail
