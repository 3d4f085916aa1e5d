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
