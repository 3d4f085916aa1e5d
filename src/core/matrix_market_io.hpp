#pragma once
// File plumbing shared by the Matrix Market reader and writer: streamed reads (gzip detected and
// inflated on the fly) and buffered, optionally gzip-compressed output. Errors name the path and the
// OS reason.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spmv::detail {

// The name used in messages: "<stdin>" for "-", else the path as given.
std::string display_name(const std::string& path);

// One rank's share of a BGZF file's text (dist::read_matrix_market): the share's members start at
// compressed offset `member`, whose text starts at uncompressed offset `text_begin` (U_r), and the next
// share's at `text_end` (U_{r+1}; INT64_MAX for the last share). `data_offset` (D > 0) is where the entry
// section starts in the text.
struct BgzfShare {
  std::int64_t member = 0;
  std::int64_t text_begin = 0;
  std::int64_t text_end = 0;
  std::int64_t data_offset = 0;
};

// The text of a file ("-": standard input) or of bytes in memory, delivered in pieces so that a
// reader never holds more than its own buffer: a stream that starts with the gzip magic is inflated
// as it is read (one or more members). Corrupt gzip data is a ParseError naming the file, a failed
// read an Error naming the path and the OS reason.
class InputStream {
 public:
  explicit InputStream(const std::string& path);
  // Bytes [offset, offset + length) of a regular file, as plain text (no gzip detection): the reader of
  // one rank's byte range (dist::read_matrix_market). known_size() is `length`.
  InputStream(const std::string& path, std::int64_t offset, std::int64_t length);
  // `bytes` must outlive the stream; `name` is used in messages. Gzip is detected only when asked:
  // parse_matrix_market takes text.
  InputStream(std::string_view bytes, std::string_view name, bool detect_gzip);
  // Lines [first, last) of the text of `path` after its first `skip` bytes (gzip inflated as above),
  // each with its '\n', filtered from the stream as it is read (on to the end of the text when `last`
  // is past it): one rank's share of a gzip file's entry section, whose text has no byte offsets, so
  // that the rank never holds its share of the text (dist::read_matrix_market). known_size() is -1.
  InputStream(const std::string& path, std::int64_t skip, std::int64_t first, std::int64_t last);
  // The lines of a BGZF share's text, by Hadoop LineRecordReader's rule so that every line of the entry
  // section is delivered by exactly one share, without looking back: from s = max(text_begin,
  // data_offset); when text_begin >= data_offset the line that holds s is dropped first (up to and
  // including the first '\n' at or after s: it belongs to the previous share); then every line whose
  // first byte p satisfies p <= text_end, each whole (the last one is finished in the next members).
  // Inflates from `member` (the members after it inflate as one stream) and stops after its last line.
  // known_size() is -1.
  InputStream(const std::string& path, const BgzfShare& share);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Up to `n` bytes of text into `dst`; 0 only at the end.
  std::size_t read(char* dst, std::size_t n);
  // The text's size when known before reading (uncompressed regular files and memory), else -1.
  std::int64_t known_size() const;
  // The whole text when it already lies in memory (plain bytes given to the constructor, nothing read
  // yet), so that a reader can parse it in place instead of copying it block by block; else nullopt.
  std::optional<std::string_view> memory() const;
  // Bytes of text read() has delivered so far.
  std::int64_t delivered() const;
  const std::string& name() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The first line start at or after `offset` in the regular file `path`: `offset` itself when it is 0 or
// follows a '\n', else the byte after the next '\n' (the file's size when no '\n' follows). Reads only
// from offset - 1 to that '\n'.
std::int64_t line_start_at_or_after(const std::string& path, std::int64_t offset);

// BGZF (bgzip's blocked gzip; SAM format specification §4.1): gzip members of at most 64 KiB, each
// with the extra subfield 'B','C' holding BSIZE (its compressed size - 1) and ending in ISIZE (its text's
// size). Errors name the file and the compressed offset (ParseError), or the OS reason (Error).
// Whether the regular file `path` starts with a BGZF member (a gzip member whose header carries BC).
bool is_bgzf(const std::string& path);
// The compressed offset of the first BGZF member at or after `offset` of `path` (0 for 0), validated by
// the chain of members that follows it (each member's BSIZE leads to another BGZF header, or exactly to
// the end of the file); the file's size when there is none within a member's maximal size (64 KiB) of
// `offset`, as past a corrupt stretch (the share before it then meets the corruption).
std::int64_t bgzf_member_at_or_after(const std::string& path, std::int64_t offset);
// The text size of the members in [begin, end) of `path` (the sum of their ISIZE), reading only their
// headers and trailers; a member that is not a BGZF member or runs past `end` is a ParseError naming
// the file and its compressed offset.
std::int64_t bgzf_text_size(const std::string& path, std::int64_t begin, std::int64_t end);

// Whole contents of `path` ("-": standard input), gunzipped when they start with the gzip magic.
std::string read_text(const std::string& path);

// Output to `path` ("-": standard output), gzip-compressed when the path ends in ".gz". A file that
// is destroyed without a successful close() (an exception on the way) is removed, so a failed write
// never leaves a truncated file that looks valid.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes);
  void close();

 private:
  [[noreturn]] void fail_write();

  std::string path_;
  std::FILE* file_ = nullptr;
  void* gz_ = nullptr;  // gzFile, kept opaque so that zlib.h stays out of this header
  bool is_stdout_ = false;
};

}  // namespace spmv::detail
