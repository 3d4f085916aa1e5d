#pragma once
// File plumbing shared by the Matrix Market reader and writer: whole-file reads (with gzip detection)
// and buffered, optionally gzip-compressed output. Errors name the path and the OS reason.
#include <cstdio>
#include <string>
#include <string_view>

namespace spmv::detail {

// The name used in messages: "<stdin>" for "-", else the path as given.
std::string display_name(const std::string& path);

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
