// Whole-file reads (POSIX read into one buffer: the parser wants all the text in memory), gzip
// inflate of single- and multi-member streams, and the Matrix Market writer.
#include "core/matrix_market_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <type_traits>

#include "spmv/error.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv {
namespace detail {
namespace {

// zlib counts in uInt (32 bits): feed it at most this much at a time.
constexpr std::size_t kZlibChunk = std::size_t{1} << 30;
// The best deflate ratio is about 1032:1, so a stream's trailer size can never honestly exceed this
// multiple of the compressed size; it caps the first allocation made from that (untrusted) field.
constexpr std::size_t kMaxDeflateRatio = 1032;
// Output is formatted into a buffer of this size and then written in one call.
constexpr std::size_t kWriteBuffer = std::size_t{1} << 20;

std::string os_reason() { return std::strerror(errno); }

std::string read_file_bytes(const std::string& path) {
  const bool from_stdin = path == "-";
  const std::string name = display_name(path);
  const int fd = from_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open '" + name + "': " + os_reason());
  struct Closer {
    int fd;
    bool owned;
    ~Closer() {
      if (owned) ::close(fd);
    }
  } closer{fd, !from_stdin};

  std::size_t capacity = std::size_t{1} << 16;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    capacity = static_cast<std::size_t>(st.st_size) + 1;  // + 1: the read that sees EOF needs room
  std::string data(capacity, '\0');
  std::size_t size = 0;
  while (true) {
    if (size == data.size()) data.resize(2 * data.size());
    const ssize_t n = ::read(fd, data.data() + size, std::min(data.size() - size, kZlibChunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read '" + name + "': " + os_reason());
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  data.resize(size);
  return data;
}

}  // namespace

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string gunzip(std::string_view data, std::string_view name) {
  auto fail = [&](const std::string& message) -> void { throw ParseError(std::string(name) + ": " + message); };
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error("zlib: inflateInit2 failed");  // 16: gzip only
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end_guard{&zs};

  // The last 4 bytes hold the last member's size mod 2^32: a hint for the first allocation only.
  std::size_t capacity = std::max<std::size_t>(4 * data.size(), 1 << 12);
  if (data.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(data.data() + data.size() - 4);
    const std::size_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (std::size_t{t[3]} << 24);
    capacity = std::max(capacity, std::min(isize + 1, kMaxDeflateRatio * data.size()));
  }
  std::string out(capacity, '\0');
  const auto* in = reinterpret_cast<const Bytef*>(data.data());
  std::size_t consumed = 0, produced = 0;
  while (true) {
    if (produced == out.size()) out.resize(2 * out.size());
    zs.next_in = const_cast<Bytef*>(in + consumed);
    zs.avail_in = static_cast<uInt>(std::min(data.size() - consumed, kZlibChunk));
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(std::min(out.size() - produced, kZlibChunk));
    const int rc = inflate(&zs, Z_NO_FLUSH);
    consumed = static_cast<std::size_t>(zs.next_in - in);
    produced = static_cast<std::size_t>(reinterpret_cast<char*>(zs.next_out) - out.data());
    if (rc == Z_STREAM_END) {
      if (consumed == data.size()) break;
      // Concatenated members (gzip a b > c; pigz; bgzip) decompress to the concatenated contents.
      if (!is_gzip(data.substr(consumed)))
        fail("unexpected bytes after the gzip data at offset " + std::to_string(consumed) + " (corrupt gzip file?)");
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && consumed == data.size()) fail("truncated gzip data (the stream ends early)");
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    fail(std::string("corrupt gzip data (zlib: ") + (zs.msg ? zs.msg : "no progress") + ")");
  }
  out.resize(produced);
  return out;
}

std::string read_text(const std::string& path) {
  std::string data = read_file_bytes(path);
  if (is_gzip(data)) data = gunzip(data, display_name(path));
  return data;
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdout;
    is_stdout_ = true;
  } else if (path.ends_with(".gz")) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw Error("cannot open '" + path + "' for writing: " + os_reason());
    gz_ = gzdopen(fd, "wb");
    if (!gz_) {
      ::close(fd);
      throw Error("cannot open '" + path + "' for writing: zlib could not allocate its state");
    }
    gzbuffer(static_cast<gzFile>(gz_), 1 << 18);
  } else {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw Error("cannot open '" + path + "' for writing: " + os_reason());
  }
}

OutputFile::~OutputFile() {
  if (!gz_ && (!file_ || is_stdout_)) return;
  if (gz_) gzclose(static_cast<gzFile>(gz_));
  if (file_) std::fclose(file_);
  ::unlink(path_.c_str());
}

void OutputFile::fail_write() {
  std::string reason = os_reason();
  if (gz_) {
    int code = 0;
    const char* message = gzerror(static_cast<gzFile>(gz_), &code);
    if (code != Z_ERRNO && message) reason = message;
  }
  throw Error("cannot write '" + display_name(path_) + "': " + reason);
}

void OutputFile::write(std::string_view bytes) {
  if (gz_) {
    while (!bytes.empty()) {
      const auto n = static_cast<unsigned>(std::min(bytes.size(), kZlibChunk));
      if (gzwrite(static_cast<gzFile>(gz_), bytes.data(), n) != static_cast<int>(n)) fail_write();
      bytes.remove_prefix(n);
    }
  } else if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    fail_write();
  }
}

void OutputFile::close() {
  if (gz_) {
    const int rc = gzclose(static_cast<gzFile>(gz_));
    gz_ = nullptr;
    if (rc != Z_OK) {
      ::unlink(path_.c_str());
      throw Error("cannot write '" + path_ + "': " + (rc == Z_ERRNO ? os_reason() : "zlib error " + std::to_string(rc)));
    }
  } else if (is_stdout_) {
    if (std::fflush(stdout) != 0) fail_write();
    file_ = nullptr;
  } else if (file_) {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0) {
      const std::string reason = os_reason();
      ::unlink(path_.c_str());
      throw Error("cannot write '" + path_ + "': " + reason);
    }
  }
}

namespace {

template <class T>
void append_number(std::string& out, T x) {
  char buf[32];
  std::to_chars_result r;
  if constexpr (std::is_floating_point_v<T>) {
    // max_digits10 significant digits: 17 for double, 9 for float, enough to read back exactly.
    r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, std::numeric_limits<T>::max_digits10);
  } else {
    r = std::to_chars(buf, buf + sizeof buf, x);
  }
  out.append(buf, r.ptr);
}

// Formats the file into `buf`, handing it to `flush` whenever it passes kWriteBuffer (flush may
// empty it).
template <class Value, class Index, class Flush>
void format_coordinate(const CsrMatrix<Value, Index>& a, std::string& buf, Flush&& flush) {
  buf += "%%MatrixMarket matrix coordinate real general\n% written by spmv\n";
  append_number(buf, static_cast<std::int64_t>(a.rows));
  buf += ' ';
  append_number(buf, static_cast<std::int64_t>(a.cols));
  buf += ' ';
  append_number(buf, static_cast<std::int64_t>(a.nnz()));
  buf += '\n';
  for (Index r = 0; r < a.rows; ++r) {
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      append_number(buf, static_cast<std::int64_t>(r) + 1);
      buf += ' ';
      append_number(buf, static_cast<std::int64_t>(a.col_idx[k]) + 1);
      buf += ' ';
      append_number(buf, a.values[k]);
      buf += '\n';
      if (buf.size() >= kWriteBuffer) flush(buf);
    }
  }
}

}  // namespace

template <class Value, class Index>
std::string format_matrix_market(const CsrMatrix<Value, Index>& a) {
  validate(a);
  std::string text;
  format_coordinate(a, text, [](std::string&) {});
  return text;
}

}  // namespace detail

template <class Value, class Index>
void write_matrix_market(const std::string& path, const CsrMatrix<Value, Index>& a) {
  validate(a);  // before the file is created
  detail::OutputFile out(path);
  std::string buf;
  buf.reserve(detail::kWriteBuffer + 4096);
  detail::format_coordinate(a, buf, [&](std::string& b) {
    out.write(b);
    b.clear();
  });
  out.write(buf);
  out.close();
}

void write_vector(const std::string& path, std::span<const double> v) {
  detail::OutputFile out(path);
  std::string buf = "%%MatrixMarket matrix array real general\n% written by spmv\n";
  detail::append_number(buf, static_cast<std::int64_t>(v.size()));
  buf += " 1\n";
  for (const double x : v) {
    detail::append_number(buf, x);
    buf += '\n';
    if (buf.size() >= detail::kWriteBuffer) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf);
  out.close();
}

#define SPMV_INSTANTIATE_MM_WRITE(V, I)                                               \
  template void write_matrix_market(const std::string&, const CsrMatrix<V, I>&);     \
  template std::string detail::format_matrix_market(const CsrMatrix<V, I>&);

SPMV_INSTANTIATE_MM_WRITE(float, std::int32_t)
SPMV_INSTANTIATE_MM_WRITE(float, std::int64_t)
SPMV_INSTANTIATE_MM_WRITE(double, std::int32_t)
SPMV_INSTANTIATE_MM_WRITE(double, std::int64_t)

}  // namespace spmv
