// Streamed reads (POSIX read in bounded pieces, gzip inflated on the fly, single- and multi-member),
// and the Matrix Market writer.
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
#include <vector>

#include "spmv/error.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv {
namespace detail {
namespace {

// zlib counts in uInt (32 bits): feed it at most this much at a time.
constexpr std::size_t kZlibChunk = std::size_t{1} << 30;
// Compressed or raw bytes are read from the file in pieces of this size: large enough that a read
// call costs nothing next to parsing, small next to the reader's 64 MB budget.
constexpr std::size_t kRawChunk = std::size_t{1} << 20;
// Output is formatted into a buffer of this size and then written in one call.
constexpr std::size_t kWriteBuffer = std::size_t{1} << 20;

std::string os_reason() { return std::strerror(errno); }

}  // namespace

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

struct InputStream::State {
  std::string name;
  int fd = -1;  // -1: the bytes are in memory
  bool owns_fd = false;
  std::int64_t file_size = -1;
  std::vector<char> storage;  // raw bytes read from fd
  std::string_view raw;       // unread raw bytes: in `storage`, or the caller's memory
  bool raw_end = false;       // nothing more to read from fd
  std::int64_t left = -1;     // bytes of a byte range still to read from fd; -1: to the end of the file
  std::uint64_t raw_consumed = 0;  // compressed bytes handed to zlib so far (for messages)
  bool gzip = false;
  bool gzip_done = false;
  z_stream zs{};
  // A line range: the bytes still to skip, the range [first_line, last_line), the lines ended so far
  // after the skipped bytes.
  bool line_range = false;
  std::int64_t skip = 0, first_line = 0, last_line = 0, line = 0;
  // A BGZF share: `skip` as above, then the rest of a line to drop, and the lines starting at or before
  // `text_end`; `text_at` is the uncompressed offset of the next inflated byte.
  bool bgzf_share = false, drop_line = false, share_done = false;
  std::int64_t text_at = 0, text_end = 0;
  std::int64_t delivered = 0;

  ~State() {
    if (gzip) inflateEnd(&zs);
    if (owns_fd) ::close(fd);
  }

  [[noreturn]] void fail(const std::string& message) const { throw ParseError(name + ": " + message); }

  // ::read, stopping at the end of a byte range.
  ssize_t read_fd(char* dst, std::size_t n) {
    if (left >= 0) n = std::min(n, static_cast<std::size_t>(left));
    if (n == 0) return 0;
    const ssize_t got = ::read(fd, dst, n);
    if (got > 0 && left >= 0) left -= got;
    return got;
  }

  // Moves the unread raw bytes to the front of `storage` and reads more behind them (file only).
  void refill() {
    if (fd < 0 || raw_end) {
      raw_end = true;
      return;
    }
    if (storage.size() < kRawChunk) storage.resize(kRawChunk);
    std::memmove(storage.data(), raw.data(), raw.size());
    std::size_t size = raw.size();
    while (size < storage.size()) {
      const ssize_t n = read_fd(storage.data() + size, storage.size() - size);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error("cannot read '" + name + "': " + os_reason());
      }
      if (n == 0) {
        raw_end = true;
        break;
      }
      size += static_cast<std::size_t>(n);
    }
    raw = std::string_view(storage.data(), size);
  }

  void start() {
    if (raw.size() < 2) refill();
    gzip = is_gzip(raw);
    if (gzip && inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {  // 16: gzip only
      gzip = false;
      throw Error("zlib: inflateInit2 failed");
    }
  }

  std::size_t read_plain(char* dst, std::size_t n) {
    if (raw.empty()) {
      // Large reads go straight to the caller's buffer.
      if (fd < 0 || raw_end) return 0;
      if (n < kRawChunk) refill();
      else
        while (true) {
          const ssize_t got = read_fd(dst, std::min(n, kZlibChunk));
          if (got >= 0) {
            if (got == 0) raw_end = true;
            return static_cast<std::size_t>(got);
          }
          if (errno != EINTR) throw Error("cannot read '" + name + "': " + os_reason());
        }
    }
    const std::size_t k = std::min(n, raw.size());
    std::memcpy(dst, raw.data(), k);
    raw.remove_prefix(k);
    return k;
  }

  std::size_t read_gzip(char* dst, std::size_t n) {
    std::size_t produced = 0;
    while (produced < n && !gzip_done) {
      if (raw.empty() && !raw_end) refill();
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
      zs.avail_in = static_cast<uInt>(std::min(raw.size(), kZlibChunk));
      zs.next_out = reinterpret_cast<Bytef*>(dst + produced);
      zs.avail_out = static_cast<uInt>(std::min(n - produced, kZlibChunk));
      const int rc = inflate(&zs, Z_NO_FLUSH);
      const auto used = static_cast<std::size_t>(reinterpret_cast<const char*>(zs.next_in) - raw.data());
      raw.remove_prefix(used);
      raw_consumed += used;
      produced = static_cast<std::size_t>(reinterpret_cast<char*>(zs.next_out) - dst);
      if (rc == Z_STREAM_END) {
        if (raw.size() < 2) refill();
        if (raw.empty()) {
          gzip_done = true;
          break;
        }
        // Concatenated members (gzip a b > c; pigz; bgzip) decompress to the concatenated contents.
        if (!is_gzip(raw))
          fail("unexpected bytes after the gzip data at offset " + std::to_string(raw_consumed) +
               " (corrupt gzip file?)");
        inflateReset(&zs);
        continue;
      }
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && raw.empty()) {
        if (raw_end) fail("truncated gzip data (the stream ends early)");
        continue;
      }
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      fail(std::string("corrupt gzip data (zlib: ") + (zs.msg ? zs.msg : "no progress") + ")");
    }
    return produced;
  }

  std::size_t read_text(char* dst, std::size_t n) { return gzip ? read_gzip(dst, n) : read_plain(dst, n); }

  // The text is read into `dst` itself and the bytes outside the range are dropped there, so that a
  // range costs no buffer of its own. An empty range reads nothing; a range stops reading at its end.
  std::size_t read_lines(char* dst, std::size_t n) {
    while (first_line < last_line && line < last_line) {
      const std::size_t got = read_text(dst, n);
      if (got == 0) break;
      const char* const stop = dst + got;
      const char* p = dst + std::min(skip, static_cast<std::int64_t>(got));
      skip -= p - dst;
      const auto after_line = [&](const char* q) {  // past the '\n' that ends q's line, or `stop`
        const void* nl = std::memchr(q, '\n', static_cast<std::size_t>(stop - q));
        if (!nl) return stop;
        ++line;
        return static_cast<const char*>(nl) + 1;
      };
      while (p < stop && line < first_line) p = after_line(p);
      const char* end = p;
      while (end < stop && line < last_line) end = after_line(end);
      if (end > p) {
        std::memmove(dst, p, static_cast<std::size_t>(end - p));
        return static_cast<std::size_t>(end - p);
      }
    }
    return 0;
  }

  // As read_lines: the text is inflated into `dst` and what lies outside the share is dropped there.
  std::size_t read_share(char* dst, std::size_t n) {
    while (!share_done) {
      const std::size_t got = read_gzip(dst, n);
      if (got == 0) break;
      const char* const stop = dst + got;
      const std::int64_t at = text_at;  // the offset of dst[0]
      text_at += static_cast<std::int64_t>(got);
      const char* p = dst + std::min(skip, static_cast<std::int64_t>(got));
      skip -= p - dst;
      if (drop_line && p < stop) {
        const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(stop - p));
        drop_line = nl == nullptr;
        p = nl ? static_cast<const char*>(nl) + 1 : stop;
        if (!drop_line && at + (p - dst) > text_end) break;  // the next line starts past the share
      }
      // Every byte before text_end, then on to the first '\n' at or after it (the line that starts at or
      // crosses text_end).
      const char* end = stop;
      if (text_end - at < static_cast<std::int64_t>(got)) {
        const char* from = std::max<const char*>(p, dst + std::max<std::int64_t>(text_end - at, 0));
        if (const void* nl = std::memchr(from, '\n', static_cast<std::size_t>(stop - from))) {
          end = static_cast<const char*>(nl) + 1;
          share_done = true;
        }
      }
      if (end > p) {
        std::memmove(dst, p, static_cast<std::size_t>(end - p));
        return static_cast<std::size_t>(end - p);
      }
    }
    share_done = true;
    return 0;
  }
};

InputStream::InputStream(const std::string& path) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.name = display_name(path);
  const bool from_stdin = path == "-";
  s.fd = from_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) throw Error("cannot open '" + s.name + "': " + os_reason());
  s.owns_fd = !from_stdin;
  struct stat st {};
  if (::fstat(s.fd, &st) == 0 && S_ISREG(st.st_mode)) s.file_size = st.st_size;
  s.start();
}

InputStream::InputStream(const std::string& path, std::int64_t offset, std::int64_t length)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.name = display_name(path);
  s.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) throw Error("cannot open '" + s.name + "': " + os_reason());
  s.owns_fd = true;
  if (offset < 0 || length < 0 || ::lseek(s.fd, static_cast<off_t>(offset), SEEK_SET) != static_cast<off_t>(offset))
    throw Error("cannot read '" + s.name + "' from byte " + std::to_string(offset) + ": " + os_reason());
  s.left = length;
  s.file_size = length;
}

InputStream::InputStream(std::string_view bytes, std::string_view name, bool detect_gzip)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.name = name;
  s.raw = bytes;
  s.raw_end = true;
  s.file_size = static_cast<std::int64_t>(bytes.size());
  if (detect_gzip) s.start();
}

InputStream::InputStream(const std::string& path, std::int64_t skip, std::int64_t first, std::int64_t last)
    : InputStream(path) {
  State& s = *state_;
  s.file_size = -1;
  s.line_range = true;
  s.skip = skip;
  s.first_line = first;
  s.last_line = last;
}

InputStream::InputStream(const std::string& path, const BgzfShare& share) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.name = display_name(path);
  s.bgzf_share = true;
  const std::int64_t from = std::max(share.text_begin, share.data_offset);
  s.drop_line = share.text_begin >= share.data_offset;
  // Nothing to deliver: a share inside the preamble, or one whose dropped line reaches its end.
  s.share_done = from > share.text_end || (s.drop_line && from >= share.text_end);
  if (s.share_done) return;
  s.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) throw Error("cannot open '" + s.name + "': " + os_reason());
  s.owns_fd = true;
  if (::lseek(s.fd, static_cast<off_t>(share.member), SEEK_SET) != static_cast<off_t>(share.member))
    throw Error("cannot read '" + s.name + "' from byte " + std::to_string(share.member) + ": " + os_reason());
  s.start();
  s.share_done = s.raw.empty();  // a share that starts at the end of the file (past the last member)
  if (!s.gzip && !s.share_done)
    s.fail("no gzip member at compressed offset " + std::to_string(share.member) + " (corrupt BGZF file?)");
  s.raw_consumed = static_cast<std::uint64_t>(share.member);
  s.skip = from - share.text_begin;
  s.text_at = share.text_begin;
  s.text_end = share.text_end;
}

InputStream::~InputStream() = default;

std::size_t InputStream::read(char* dst, std::size_t n) {
  State& s = *state_;
  const std::size_t got = s.bgzf_share ? s.read_share(dst, n) : s.line_range ? s.read_lines(dst, n) : s.read_text(dst, n);
  s.delivered += static_cast<std::int64_t>(got);
  return got;
}

std::int64_t InputStream::known_size() const { return state_->gzip ? -1 : state_->file_size; }

std::optional<std::string_view> InputStream::memory() const {
  const State& s = *state_;
  if (s.fd >= 0 || s.gzip || s.raw.size() != static_cast<std::size_t>(s.file_size)) return std::nullopt;
  return s.raw;
}

std::int64_t InputStream::delivered() const { return state_->delivered; }

const std::string& InputStream::name() const { return state_->name; }

namespace {

std::string read_all(InputStream& in) {
  std::string text(std::size_t{1} << 16, '\0');
  if (in.known_size() >= 0) text.resize(static_cast<std::size_t>(in.known_size()) + 1);  // + 1: the read that sees the end
  std::size_t size = 0;
  while (true) {
    if (size == text.size()) text.resize(2 * text.size());
    const std::size_t n = in.read(text.data() + size, text.size() - size);
    if (n == 0) break;
    size += n;
  }
  text.resize(size);
  return text;
}

}  // namespace

std::string gunzip(std::string_view data, std::string_view name) {
  InputStream in(data, name, true);
  return read_all(in);
}

namespace {

// BGZF (SAM format specification §4.1): a member is at most 64 KiB compressed and inflates to at most
// 64 KiB; its header is the gzip header (RFC 1952 §2.3) with FEXTRA, holding the subfield 'B','C' of 2
// bytes: BSIZE, the member's size - 1.
constexpr std::int64_t kBgzfMaxMember = std::int64_t{1} << 16;
constexpr std::uint8_t kFlagExtra = 0x04, kFlagReserved = 0xe0;
// Members a candidate header's chain is followed for before it counts as a member start: a false match
// inside compressed data needs the gzip magic, a valid BC subfield and then that many more headers at
// the offsets its sizes give (or the exact end of the file).
constexpr int kBgzfChainCheck = 4;

std::uint32_t le(const unsigned char* p, int bytes) {
  std::uint32_t x = 0;
  for (int k = bytes - 1; k >= 0; --k) x = (x << 8) | p[k];
  return x;
}

// A file opened for pread, closed on every path (line_start_at_or_after and the BGZF member walks).
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : name_(display_name(path)) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error("cannot open '" + name_ + "': " + os_reason());
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail();
    size_ = st.st_size;
  }
  ~ReadOnlyFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  // Up to `n` bytes at `offset`: fewer only at the end of the file.
  std::size_t read_at(unsigned char* dst, std::size_t n, std::int64_t offset) const {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t k = ::pread(fd_, dst + got, n - got, static_cast<off_t>(offset) + static_cast<off_t>(got));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) fail();
      if (k == 0) break;
      got += static_cast<std::size_t>(k);
    }
    return got;
  }
  std::int64_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // The size of the BGZF member at `offset` (BSIZE + 1), or -1 when there is none: no gzip header with
  // FEXTRA and a BC subfield, or a size too small for its header and trailer or past the file's end.
  std::int64_t bgzf_member_at(std::int64_t offset) const {
    unsigned char head[12];
    if (offset < 0 || read_at(head, sizeof head, offset) != sizeof head) return -1;
    if (head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 || !(head[3] & kFlagExtra) || (head[3] & kFlagReserved))
      return -1;
    const std::uint32_t xlen = le(head + 10, 2);
    std::vector<unsigned char> extra(xlen);
    if (read_at(extra.data(), xlen, offset + 12) != xlen) return -1;
    for (std::size_t k = 0; k + 4 <= xlen; k += 4 + le(&extra[k + 2], 2)) {
      const std::uint32_t slen = le(&extra[k + 2], 2);
      if (extra[k] == 'B' && extra[k + 1] == 'C' && slen == 2 && k + 6 <= xlen) {
        const std::int64_t member = std::int64_t{le(&extra[k + 4], 2)} + 1;
        const bool fits = member >= 12 + std::int64_t{xlen} + 8 && offset + member <= size_;
        return fits ? member : -1;
      }
    }
    return -1;
  }
  [[noreturn]] void bad_member(std::int64_t offset, const std::string& why) const {
    throw ParseError(name_ + ": bad BGZF member at compressed offset " + std::to_string(offset) + ": " + why +
                     " (corrupt or truncated BGZF file?)");
  }

 private:
  [[noreturn]] void fail() const { throw Error("cannot read '" + name_ + "': " + os_reason()); }

  std::string name_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

}  // namespace

std::int64_t line_start_at_or_after(const std::string& path, std::int64_t offset) {
  if (offset <= 0) return 0;
  const ReadOnlyFile file(path);
  std::vector<unsigned char> buf(std::size_t{1} << 16);
  std::int64_t at = offset - 1;  // the byte before: a '\n' there makes `offset` a line start
  while (true) {
    const std::size_t n = file.read_at(buf.data(), buf.size(), at);
    if (n == 0) break;  // the end of the file
    if (const void* nl = std::memchr(buf.data(), '\n', n))
      return at + (static_cast<const unsigned char*>(nl) - buf.data()) + 1;
    at += static_cast<std::int64_t>(n);
  }
  return std::max(at, offset);  // no '\n' after offset: the file's size
}

bool is_bgzf(const std::string& path) { return ReadOnlyFile(path).bgzf_member_at(0) > 0; }

std::int64_t bgzf_member_at_or_after(const std::string& path, std::int64_t offset) {
  const ReadOnlyFile file(path);
  if (offset <= 0) return 0;
  const auto starts_chain = [&](std::int64_t at) {
    for (int k = 0; k < kBgzfChainCheck && at < file.size(); ++k) {
      const std::int64_t member = file.bgzf_member_at(at);
      if (member < 0) return false;
      at += member;
    }
    return true;
  };
  // A member starts within any kBgzfMaxMember bytes of a valid file; 2 more for the magic's tail.
  std::vector<unsigned char> buf(static_cast<std::size_t>(kBgzfMaxMember) + 2);
  const std::size_t n = file.read_at(buf.data(), buf.size(), offset);
  for (std::size_t k = 0; k + 2 < n && k < static_cast<std::size_t>(kBgzfMaxMember); ++k)
    if (buf[k] == 0x1f && buf[k + 1] == 0x8b && buf[k + 2] == 8 && starts_chain(offset + static_cast<std::int64_t>(k)))
      return offset + static_cast<std::int64_t>(k);
  return file.size();
}

std::int64_t bgzf_text_size(const std::string& path, std::int64_t begin, std::int64_t end) {
  const ReadOnlyFile file(path);
  std::int64_t text = 0;
  for (std::int64_t at = begin, previous = -1; at < end;) {
    const std::int64_t member = file.bgzf_member_at(at);
    if (member < 0 && previous >= 0)
      file.bad_member(previous, "its size leads to offset " + std::to_string(at) + ", where no BGZF member starts");
    if (member < 0) file.bad_member(at, "no BGZF header, or a size past the end of the file");
    if (at + member > end)
      file.bad_member(at, "its " + std::to_string(member) + " bytes run past the next member, at " + std::to_string(end));
    unsigned char isize[4];
    file.read_at(isize, 4, at + member - 4);
    if (le(isize, 4) > static_cast<std::uint32_t>(kBgzfMaxMember))
      file.bad_member(at, "its text size " + std::to_string(le(isize, 4)) + " exceeds 64 KiB");
    text += le(isize, 4);
    previous = at;
    at += member;
  }
  return text;
}

std::string read_text(const std::string& path) {
  InputStream in(path);
  return read_all(in);
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
