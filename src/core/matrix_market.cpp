// Matrix Market reader: banner and size line, then a tight per-line loop over the entries using
// std::from_chars (no iostreams, no per-entry allocation), templated on field and symmetry so that the
// hot loop carries no run-time switches. The text arrives in blocks of whole lines (TextBlocks over a
// detail::InputStream); each block of a coordinate file is split at newlines and the pieces parsed in
// parallel, then appended to the result. Any irregularity in a block (an error, too many entries)
// re-runs the sequential parser on that block, whose error message is the reference, so both paths
// report the same line.
#include "spmv/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <numeric>
#include <optional>
#include <type_traits>
#include <limits>
#include <string>
#include <system_error>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/matrix_market_io.hpp"
#include "core/matrix_market_range.hpp"
#include "core/memory_budget.hpp"
#include "spmv/error.hpp"

namespace spmv {
namespace {

enum class Format { Coordinate, Array };
enum class Field { Real, Integer, Pattern };
enum class Symmetry { General, Symmetric, Skew };  // "hermitian" on real data reads as Symmetric

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// Each thread of the parallel parse gets at least this much text: 2 MiB take ~5 ms on one core
// (~400 MB/s measured on the 2-core dev VM), far above the fork/join and concatenation overhead, which
// on a loaded machine reaches milliseconds per parallel region.
constexpr std::size_t kMinBytesPerThread = std::size_t{2} << 20;

// Text is streamed in blocks of whole lines of about this size per thread (and at least
// kMinBlockBytes): a block and the entries parsed from it (24 bytes each, about one per 25 bytes of
// typical text) are what the reader holds beside the result, so the largest block bounds the reader's
// overhead at about 2 x kMaxBlockBytes (64 MB). Each block is one parallel parse and one parallel
// append, whose joins cost a scheduler time slice when a thread is descheduled: on the loaded 2-core
// dev VM, 8 MB blocks made the 2-thread parse of 68.6 MB in memory slower than one thread (best
// 136-183 MB/s, against 317-325 for the former whole-text parse); 16 MB blocks halve the joins and
// keep a 95 MB file's `spmv info` at 138 MB, within its 194 MB bound (docs/PERFORMANCE.md). Text
// already in memory is not copied, so only the entries of a block are extra: it takes the largest.
constexpr std::size_t kBytesPerThreadInABlock = std::size_t{8} << 20;
constexpr std::size_t kMinBlockBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxBlockBytes = std::size_t{32} << 20;

// The shortest possible lines ("1 1\n", "0\n") bound how many entries a text can hold; reservations
// never exceed that bound, whatever the size line declares.
constexpr std::size_t kMinCoordinateLineBytes = 4;
constexpr std::size_t kMinArrayLineBytes = 2;

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool at_token_end(const char* p, const char* end) { return p == end || is_blank(*p) || *p == '\n'; }
inline const char* skip_blanks(const char* p, const char* end) {
  while (p != end && is_blank(*p)) ++p;
  return p;
}
inline const char* find_line_end(const char* p, const char* end) {
  const void* q = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return q ? static_cast<const char*>(q) : end;
}

// Past blank and comment lines to the first byte of the next entry (or end); both the coordinate and
// the array loops read entries this way.
inline const char* next_entry(const char* p, const char* end) {
  while (true) {
    p = skip_blanks(p, end);
    if (p == end) return end;
    if (*p == '\n') {
      ++p;
    } else if (*p == '%') {
      p = find_line_end(p, end);
    } else {
      return p;
    }
  }
}

[[noreturn]] void fail(std::string_view name, std::int64_t line, const std::string& message) {
  throw detail::located_parse_error(name, line, message);
}

// The token at p for a message: quoted, unprintable bytes escaped, long tokens cut.
std::string quote_token(const char* p, const char* end) {
  if (p == end || *p == '\n') return "end of line";
  constexpr int kMaxShown = 40;
  std::string s = "'";
  for (int n = 0; p != end && !is_blank(*p) && *p != '\n'; ++p, ++n) {
    if (n == kMaxShown) {
      s += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      s += "\\x";
      s += kHex[c >> 4];
      s += kHex[c & 15];
    }
  }
  return s + "'";
}
std::string quote(std::string_view token) { return quote_token(token.data(), token.data() + token.size()); }

enum class Num { Ok, Missing, Invalid, Overflow };

// Integer token at p (blanks already skipped); on success p moves past it.
inline Num parse_int(const char*& p, const char* end, std::int64_t& v) {
  if (p == end || *p == '\n') return Num::Missing;
  const char* q = p;
  if (*q == '+' && q + 1 != end && is_digit(q[1])) ++q;
  const auto [ptr, ec] = std::from_chars(q, end, v);
  if (ec == std::errc::invalid_argument || !at_token_end(ptr, end)) return Num::Invalid;
  if (ec == std::errc::result_out_of_range) return Num::Overflow;
  p = ptr;
  return Num::Ok;
}

// from_chars reports both overflow and underflow as out of range. The decimal exponent of the token
// tells them apart (|x| >= 1e308 against |x| < 1e-323): underflow reads as a signed zero, like strtod.
bool is_underflow(const char* p, const char* end) {
  if (*p == '-') ++p;
  std::int64_t exp10 = 0;
  bool nonzero = false;
  for (; p != end && is_digit(*p); ++p)
    if (nonzero || *p != '0') {
      nonzero = true;
      ++exp10;
    }
  if (p != end && *p == '.')
    for (++p; p != end && is_digit(*p); ++p)
      if (!nonzero) {
        if (*p != '0') nonzero = true;
        else --exp10;
      }
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative = p != end && *p == '-';
    if (p != end && (*p == '-' || *p == '+')) ++p;
    std::int64_t e = 0;
    for (; p != end && is_digit(*p); ++p) e = std::min<std::int64_t>(e * 10 + (*p - '0'), std::int64_t{1} << 40);
    exp10 += negative ? -e : e;
  }
  return exp10 <= 0;
}

inline Num parse_real(const char*& p, const char* end, double& v) {
  if (p == end || *p == '\n') return Num::Missing;
  const char* q = p;
  if (*q == '+' && q + 1 != end && (is_digit(q[1]) || q[1] == '.')) ++q;
  const auto [ptr, ec] = std::from_chars(q, end, v);
  if (ec == std::errc::invalid_argument || !at_token_end(ptr, end)) return Num::Invalid;
  if (ec == std::errc::result_out_of_range) {
    if (!is_underflow(q, ptr)) return Num::Overflow;
    v = *q == '-' ? -0.0 : 0.0;
  }
  p = ptr;
  return Num::Ok;
}

// `what` is a noun without article ("row index").
std::string number_message(Num status, const std::string& what, const char* p, const char* end) {
  const std::string expected = std::string(std::strchr("aeiou", what[0]) ? "expected an " : "expected a ") + what;
  switch (status) {
    case Num::Missing: return expected + ", found end of line";
    case Num::Invalid: return expected + ", found " + quote_token(p, end);
    case Num::Overflow: return what + " " + quote_token(p, end) + " is out of range";
    case Num::Ok: break;
  }
  return {};
}

struct Entries {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> values;

  void reserve(std::size_t n) {
    rows.reserve(n);
    cols.reserve(n);
    values.reserve(n);
  }
  void push(std::int64_t r, std::int64_t c, double v) {
    rows.push_back(r);
    cols.push_back(c);
    values.push_back(v);
  }
  std::size_t size() const { return rows.size(); }
  void clear() {
    rows.clear();
    cols.clear();
    values.clear();
  }
};

// Outcome of parsing a run of entry lines; on error `at` points into the offending line.
struct RangeStatus {
  std::int64_t count = 0;  // entry lines read (before mirroring)
  const char* at = nullptr;
  std::string message;
  // More entry lines than `limit`: the message is left to the caller, which knows the declared count
  // (the limit of a later block is only what remains of it).
  bool too_many = false;
};

std::string index_range_message(const char* what, std::int64_t index, std::int64_t size, const char* unit) {
  return std::string(what) + " " + std::to_string(index) + " is out of range (" +
         (index == 0 ? "indices start at 1; " : "") + "the matrix has " + std::to_string(size) + " " + unit + ")";
}

// Coordinate entries "i j [value]" in [p, end), at most `limit` of them.
template <Field F, Symmetry S>
RangeStatus parse_coordinate_range(const char* p, const char* end, std::int64_t rows, std::int64_t cols,
                                   std::int64_t limit, Entries& out) {
  RangeStatus st;
  auto error = [&](const char* at, std::string message) {
    st.at = at;
    st.message = std::move(message);
    return st;
  };
  while ((p = next_entry(p, end)) != end) {
    if (st.count == limit) [[unlikely]] {
      st.too_many = true;
      return error(p, {});
    }
    const char* line = p;
    std::int64_t i = 0, j = 0;
    double v = 1.0;
    if (const Num s = parse_int(p, end, i); s != Num::Ok) [[unlikely]]
      return error(p, number_message(s, "row index", p, end));
    p = skip_blanks(p, end);
    const char* col_token = p;
    if (const Num s = parse_int(p, end, j); s != Num::Ok) [[unlikely]]
      return error(p, number_message(s, "column index", p, end));
    if constexpr (F == Field::Real) {
      p = skip_blanks(p, end);
      if (const Num s = parse_real(p, end, v); s != Num::Ok) [[unlikely]]
        return error(p, number_message(s, "real value", p, end));
    } else if constexpr (F == Field::Integer) {
      p = skip_blanks(p, end);
      std::int64_t iv = 0;
      if (const Num s = parse_int(p, end, iv); s != Num::Ok) [[unlikely]]
        return error(p, number_message(s, "integer value", p, end));
      v = static_cast<double>(iv);
    }
    p = skip_blanks(p, end);
    if (p != end && *p != '\n') [[unlikely]]
      return error(p, "unexpected " + quote_token(p, end) + " after the entry");
    if (i < 1 || i > rows) [[unlikely]]
      return error(line, index_range_message("row index", i, rows, "rows"));
    if (j < 1 || j > cols) [[unlikely]]
      return error(col_token, index_range_message("column index", j, cols, "columns"));
    if constexpr (S == Symmetry::Skew) {
      if (i == j && v != 0.0) [[unlikely]]
        return error(line, "diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) +
                               ") of a skew-symmetric matrix must be zero");
    }
    out.push(i - 1, j - 1, v);
    if constexpr (S != Symmetry::General) {
      if (i != j) out.push(j - 1, i - 1, S == Symmetry::Skew ? -v : v);
    }
    ++st.count;
  }
  return st;
}

// Array values, one per line, column-major; symmetric storage holds the lower triangle (strictly lower
// for skew-symmetric), so column j starts at row j (j + 1). (i, j) is the position of the next value,
// carried from block to block; i < 0 before the first.
template <Field F, Symmetry S>
RangeStatus parse_array_range(const char* p, const char* end, std::int64_t rows, std::int64_t limit,
                              Entries& out, std::int64_t& i, std::int64_t& j) {
  RangeStatus st;
  auto error = [&](const char* at, std::string message) {
    st.at = at;
    st.message = std::move(message);
    return st;
  };
  auto first_row = [](std::int64_t col) -> std::int64_t {
    return S == Symmetry::General ? 0 : S == Symmetry::Symmetric ? col : col + 1;
  };
  if (i < 0) i = first_row(0);  // the first block
  while ((p = next_entry(p, end)) != end) {
    if (st.count == limit) [[unlikely]] {
      st.too_many = true;
      return error(p, {});
    }
    double v = 0.0;
    if constexpr (F == Field::Integer) {
      std::int64_t iv = 0;
      if (const Num s = parse_int(p, end, iv); s != Num::Ok) return error(p, number_message(s, "integer value", p, end));
      v = static_cast<double>(iv);
    } else {
      if (const Num s = parse_real(p, end, v); s != Num::Ok) return error(p, number_message(s, "real value", p, end));
    }
    p = skip_blanks(p, end);
    if (p != end && *p != '\n') return error(p, "unexpected " + quote_token(p, end) + " after the value (array files hold one value per line)");
    out.push(i, j, v);
    if constexpr (S != Symmetry::General) {
      if (i != j) out.push(j, i, S == Symmetry::Skew ? -v : v);
    }
    ++st.count;
    if (++i == rows) i = first_row(++j);
  }
  return st;
}

using CoordinateParser = RangeStatus (*)(const char*, const char*, std::int64_t, std::int64_t, std::int64_t, Entries&);
using ArrayParser = RangeStatus (*)(const char*, const char*, std::int64_t, std::int64_t, Entries&, std::int64_t&,
                                    std::int64_t&);

template <Symmetry S>
CoordinateParser coordinate_parser(Field f) {
  switch (f) {
    case Field::Real: return parse_coordinate_range<Field::Real, S>;
    case Field::Integer: return parse_coordinate_range<Field::Integer, S>;
    case Field::Pattern: break;
  }
  return parse_coordinate_range<Field::Pattern, S>;
}
CoordinateParser coordinate_parser(Field f, Symmetry s) {
  switch (s) {
    case Symmetry::General: return coordinate_parser<Symmetry::General>(f);
    case Symmetry::Symmetric: return coordinate_parser<Symmetry::Symmetric>(f);
    case Symmetry::Skew: break;
  }
  return coordinate_parser<Symmetry::Skew>(f);
}
template <Symmetry S>
ArrayParser array_parser(Field f) {
  return f == Field::Integer ? parse_array_range<Field::Integer, S> : parse_array_range<Field::Real, S>;
}
ArrayParser array_parser(Field f, Symmetry s) {
  switch (s) {
    case Symmetry::General: return array_parser<Symmetry::General>(f);
    case Symmetry::Symmetric: return array_parser<Symmetry::Symmetric>(f);
    case Symmetry::Skew: break;
  }
  return array_parser<Symmetry::Skew>(f);
}

// Everything before the entries.
struct Preamble {
  MatrixMarketHeader header;
  Format format = Format::Coordinate;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  std::int64_t rows = 0, cols = 0;
  std::int64_t entries = 0;  // entry lines the file must hold (declared nnz, or stored array values)
  std::int64_t size_line = 0;
};

// The text of an InputStream as lines (for the preamble) and then as blocks of whole lines (for the
// entries), with the line number of any byte of the current block. Holds one block, never the whole
// text; a comment line longer than a block is not kept either (only its '%').
class TextBlocks {
 public:
  // Text already in memory is parsed in place; a stream is read into buf_.
  TextBlocks(detail::InputStream& in, std::size_t block_bytes) : in_(in), block_bytes_(block_bytes) {
    if (const std::optional<std::string_view> text = in.memory()) {
      data_ = text->data();
      size_ = text->size();
      at_end_ = true;
    }
  }

  // The next line without its '\n', and its number; false at the end of the text.
  bool next_line(std::string_view& line, std::int64_t& number) {
    const std::size_t length = first_line_length();
    if (pos_ == size_) return false;
    line = std::string_view(data_ + pos_, length);
    number = line_;
    consume(std::min(length + 1, size_ - pos_), length < size_ - pos_ ? 1 : 0);
    return true;
  }

  // The next block of whole lines (the last one may lack its '\n'); empty at the end. finish_block
  // must follow before the next call.
  std::string_view next_block() {
    fill(block_bytes_);
    const std::size_t available = size_ - pos_;
    if (available == 0) return {};
    std::size_t length = available;
    if (!at_end_ || available > block_bytes_) {
      const char* begin = data_ + pos_;
      const void* nl = ::memrchr(begin, '\n', std::min(available, block_bytes_));
      length = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - begin) + 1
                  : std::min(first_line_length() + 1, size_ - pos_);
    }
    block_ = std::string_view(data_ + pos_, length);
    return block_;
  }
  void finish_block(std::int64_t newlines) { consume(block_.size(), newlines); }

  // Bytes of the text consumed so far (lines and blocks), and the number of the line at that point.
  std::int64_t offset() const { return consumed_; }
  std::int64_t line() const { return line_; }

  // Line number of p, a byte of the current block.
  std::int64_t line_of(const char* p) const { return line_ + std::count(block_.data(), p, '\n'); }
  // Where a missing entry was expected once the text is consumed: the line after the last one.
  std::int64_t line_after_last() const { return line_ + (ends_inside_line_ ? 1 : 0); }

 private:
  // Makes at least `want` bytes available after pos_, unless the text ends first.
  void fill(std::size_t want) {
    if (size_ - pos_ >= want || at_end_) return;
    std::memmove(buf_.data(), buf_.data() + pos_, size_ - pos_);
    size_ -= pos_;
    pos_ = 0;
    if (buf_.size() < want) buf_.resize(want);
    data_ = buf_.data();
    while (size_ < want) {
      const std::size_t n = in_.read(buf_.data() + size_, buf_.size() - size_);
      if (n == 0) {
        at_end_ = true;
        break;
      }
      size_ += n;
    }
  }

  // Length of the line at pos_ without its '\n', reading on until the '\n' or the end.
  std::size_t first_line_length() {
    fill(1);
    std::size_t scanned = 0;
    while (true) {
      const char* begin = data_ + pos_;
      if (const void* nl = std::memchr(begin + scanned, '\n', size_ - pos_ - scanned))
        return static_cast<std::size_t>(static_cast<const char*>(nl) - begin);
      scanned = size_ - pos_;
      if (at_end_) return scanned;
      // A comment line longer than a block (1.5 GB of them inflate from 3 MB of gzip): drop what
      // was read of it but its '%'. The banner (line 1) is always kept whole for its messages.
      const char* first = skip_blanks(begin, begin + scanned);
      if (scanned > block_bytes_ && line_ > 1 && first != begin + scanned && *first == '%') {
        const auto kept = static_cast<std::size_t>(first - data_) + 1;
        consumed_ += static_cast<std::int64_t>(size_ - kept);  // dropped unread: still part of the text
        size_ = kept;
        scanned = size_ - pos_;
      }
      fill(scanned + block_bytes_);
    }
  }

  void consume(std::size_t bytes, std::int64_t newlines) {
    if (bytes > 0) ends_inside_line_ = data_[pos_ + bytes - 1] != '\n';
    pos_ += bytes;
    consumed_ += static_cast<std::int64_t>(bytes);
    line_ += newlines;
  }

  detail::InputStream& in_;
  std::size_t block_bytes_;
  std::string buf_;
  const char* data_ = nullptr;  // the text: buf_.data(), or the caller's memory
  std::size_t pos_ = 0, size_ = 0;
  bool at_end_ = false;
  std::int64_t line_ = 1;  // number of the line at pos_
  std::int64_t consumed_ = 0;
  bool ends_inside_line_ = false;
  std::string_view block_;
};

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

std::vector<std::string_view> split_blanks(const char* p, const char* end) {
  std::vector<std::string_view> tokens;
  while (true) {
    p = skip_blanks(p, end);
    if (p == end) return tokens;
    const char* q = p;
    while (q != end && !is_blank(*q)) ++q;
    tokens.emplace_back(p, static_cast<std::size_t>(q - p));
    p = q;
  }
}

constexpr const char* kBannerForm = "'%%MatrixMarket matrix <format> <field> <symmetry>'";

Preamble parse_preamble(TextBlocks& text, std::string_view name) {
  Preamble pre;
  std::string_view line;
  std::int64_t number = 0;
  if (!text.next_line(line, number)) fail(name, 1, std::string("empty file, expected the banner ") + kBannerForm);

  const auto words = split_blanks(line.data(), line.data() + line.size());
  if (words.empty() || lower(words[0]) != "%%matrixmarket")
    fail(name, 1,
         std::string("missing Matrix Market banner: expected ") + kBannerForm + ", found " +
             (words.empty() ? std::string("an empty line") : quote(words[0])));
  if (words.size() < 5) fail(name, 1, std::string("incomplete banner, expected ") + kBannerForm);
  if (words.size() > 5) fail(name, 1, "unexpected " + quote(words[5]) + " after the banner's symmetry");

  if (lower(words[1]) != "matrix") fail(name, 1, "unknown object " + quote(words[1]) + " (expected 'matrix')");

  pre.header.format = lower(words[2]);
  if (pre.header.format == "coordinate") pre.format = Format::Coordinate;
  else if (pre.header.format == "array") pre.format = Format::Array;
  else fail(name, 1, "unknown format " + quote(words[2]) + " (expected 'coordinate' or 'array')");

  pre.header.field = lower(words[3]);
  if (pre.header.field == "real") pre.field = Field::Real;
  else if (pre.header.field == "integer") pre.field = Field::Integer;
  else if (pre.header.field == "pattern") pre.field = Field::Pattern;
  else if (pre.header.field == "complex") fail(name, 1, "complex matrices are not supported");
  else fail(name, 1, "unknown field " + quote(words[3]) + " (expected 'real', 'integer', 'pattern' or 'complex')");

  pre.header.symmetry = lower(words[4]);
  if (pre.header.symmetry == "general") pre.symmetry = Symmetry::General;
  else if (pre.header.symmetry == "symmetric" || pre.header.symmetry == "hermitian") pre.symmetry = Symmetry::Symmetric;
  else if (pre.header.symmetry == "skew-symmetric") pre.symmetry = Symmetry::Skew;
  else
    fail(name, 1,
         "unknown symmetry " + quote(words[4]) + " (expected 'general', 'symmetric', 'skew-symmetric' or 'hermitian')");

  if (pre.format == Format::Array && pre.field == Field::Pattern)
    fail(name, 1, "the pattern field is only valid in coordinate format");
  if (pre.field == Field::Pattern && pre.symmetry == Symmetry::Skew)
    fail(name, 1, "a pattern matrix cannot be skew-symmetric (there are no values to negate)");

  // Comment and blank lines, then the size line.
  const char* p = nullptr;
  const char* end = nullptr;
  while (true) {
    if (!text.next_line(line, number)) fail(name, text.line_after_last(), "file ends before the size line");
    end = line.data() + line.size();
    p = skip_blanks(line.data(), end);
    if (p != end && *p != '%') break;
  }
  pre.size_line = number;
  const bool coordinate = pre.format == Format::Coordinate;
  const char* expected = coordinate ? "size line 'rows columns entries'" : "size line 'rows columns'";
  auto read_size = [&](std::int64_t& v, const char* what) {
    p = skip_blanks(p, end);
    const char* token = p;
    const Num s = parse_int(p, end, v);
    if (s == Num::Missing) fail(name, pre.size_line, std::string("incomplete ") + expected + ": " + what + " missing");
    if (s == Num::Invalid)
      fail(name, pre.size_line, std::string("expected ") + what + " in the " + expected + ", found " + quote_token(token, end));
    if (s == Num::Overflow) fail(name, pre.size_line, std::string(what) + " " + quote_token(token, end) + " is out of range");
    if (v < 0) fail(name, pre.size_line, std::string("negative ") + what + " " + std::to_string(v));
  };
  read_size(pre.rows, "number of rows");
  read_size(pre.cols, "number of columns");
  if (coordinate) read_size(pre.entries, "number of entries");
  p = skip_blanks(p, end);
  if (p != end) fail(name, pre.size_line, "unexpected " + quote_token(p, end) + " after the " + expected);

  std::int64_t product = 0;
  if (__builtin_mul_overflow(pre.rows, pre.cols, &product))
    fail(name, pre.size_line,
         "rows x columns = " + std::to_string(pre.rows) + " x " + std::to_string(pre.cols) + " overflows 64-bit integers");
  if (pre.symmetry != Symmetry::General && pre.rows != pre.cols)
    fail(name, pre.size_line,
         "a " + pre.header.symmetry + " matrix must be square, this one is " + std::to_string(pre.rows) + " x " +
             std::to_string(pre.cols));
  if (!coordinate) {
    // n (n + 1) / 2 and n (n - 1) / 2 without overflow: n^2 fits, and so does each halved form.
    const std::int64_t n = pre.rows;
    auto half_product = [](std::int64_t a, std::int64_t b) { return a % 2 == 0 ? (a / 2) * b : a * (b / 2); };
    pre.entries = pre.symmetry == Symmetry::General ? product
                  : pre.symmetry == Symmetry::Symmetric ? half_product(n, n + 1)
                  : n == 0                              ? 0
                                                        : half_product(n, n - 1);
  }
  return pre;
}

// Parsed entries kept for the result: indices in StoreIndex (32 bits whenever the size allows, even
// for a 64-bit result), values already in the result's type, so that they cost no more than the CSR
// entries built from them.
template <class StoreIndex, class Value>
struct EntryStore {
  std::vector<StoreIndex> rows, cols;
  std::vector<Value> values;

  std::size_t size() const { return rows.size(); }
  void reserve(std::size_t n) {
    rows.reserve(n);
    cols.reserve(n);
    values.reserve(n);
  }
  // Appends parts[0..count) in order, copying the parts in parallel.
  void append(const std::vector<Entries>& parts, int count, int threads) {
    std::vector<std::size_t> offset(static_cast<std::size_t>(count) + 1, size());
    for (int k = 0; k < count; ++k) offset[k + 1] = offset[k] + parts[k].size();
    rows.resize(offset[count]);
    cols.resize(offset[count]);
    values.resize(offset[count]);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int k = 0; k < count; ++k) {
      const Entries& e = parts[k];
      const auto at = static_cast<std::ptrdiff_t>(offset[k]);
      std::transform(e.rows.begin(), e.rows.end(), rows.begin() + at, [](std::int64_t i) { return static_cast<StoreIndex>(i); });
      std::transform(e.cols.begin(), e.cols.end(), cols.begin() + at, [](std::int64_t i) { return static_cast<StoreIndex>(i); });
      std::transform(e.values.begin(), e.values.end(), values.begin() + at, [](double v) { return static_cast<Value>(v); });
    }
  }
};

// Bytes per entry and per row that a read holds at its peak (result and intermediates).
struct Footprint {
  double per_entry = 0;
  double per_row = 0;
};

// Reads the entries of one Matrix Market text block by block. `chunks`: pieces each block is split
// into for the parallel parse (0: one per thread).
class EntryReader {
 public:
  EntryReader(detail::InputStream& in, std::string_view name, int chunks, std::size_t block_bytes)
      : in_(in),
        name_(name),
        chunks_(chunks),
        text_(in, block_bytes ? block_bytes : default_block_bytes(in.memory().has_value())) {
    pre_ = parse_preamble(text_, name_);
  }
  // The entries alone: `in` starts at an entry line of a file whose preamble `pre` is (a byte range of
  // its entry section); lines are numbered from 1 at the stream's first byte. `share_lines` (-1: none):
  // the entry lines the range should hold, counted instead of the declared ones in the memory check.
  EntryReader(detail::InputStream& in, std::string_view name, const Preamble& pre, std::int64_t share_lines)
      : in_(in), name_(name), chunks_(0), text_(in, default_block_bytes(false)), pre_(pre),
        share_lines_(share_lines) {}

  const Preamble& preamble() const { return pre_; }
  std::size_t mirror() const { return pre_.symmetry == Symmetry::General ? 1 : 2; }

  // Entry lines the text can really hold: the declared count (or a range's share of it), capped by the
  // text's size when known.
  std::int64_t entry_lines_bound() const {
    const std::int64_t declared = share_lines_ >= 0 ? std::min(pre_.entries, share_lines_) : pre_.entries;
    const std::int64_t size = in_.known_size();
    if (size < 0) return declared;
    const auto min_line = static_cast<std::int64_t>(pre_.format == Format::Coordinate ? kMinCoordinateLineBytes
                                                                                         : kMinArrayLineBytes);
    return std::min(declared, size / min_line + 1);
  }

  // Refuses the read, before its large allocations, when the least it can need exceeds the budget;
  // returns how many entries to reserve (the most the text can give, if that fits the budget too).
  std::size_t check_memory(const Footprint& reader, const ReadOptions& options) const {
    const auto lines = static_cast<double>(entry_lines_bound());
    const auto rows = static_cast<double>(pre_.rows);
    // Mirrored entries: all but the diagonal ones, of which there are at most `rows`.
    const double least_entries = mirror() == 1 ? lines : std::max(lines, 2 * lines - rows);
    const double most_entries = lines * static_cast<double>(mirror());
    const double per_entry = reader.per_entry + static_cast<double>(options.extra_bytes_per_entry);
    const double fixed = (rows + 1) * (reader.per_row + static_cast<double>(options.extra_bytes_per_row)) +
                         static_cast<double>(pre_.cols) * static_cast<double>(options.extra_bytes_per_column);
    const double need = least_entries * per_entry + fixed;
    const detail::MemoryBudget budget = detail::memory_budget(options.max_memory);
    if (need > static_cast<double>(budget.bytes))
      throw MemoryLimitExceeded(
          std::string(name_) + ":" + std::to_string(pre_.size_line) + ": reading this " + std::to_string(pre_.rows) +
          " x " + std::to_string(pre_.cols) + " matrix with " + std::to_string(pre_.entries) +
          (pre_.format == Format::Coordinate ? " entries" : " values") + " needs at least " +
          detail::format_bytes(need) + ", more than " + budget.source + " of " +
          detail::format_bytes(static_cast<double>(budget.bytes)) +
          " (set a larger max_memory, spmv --max-memory, to try anyway)");
    return static_cast<std::size_t>(most_entries * per_entry + fixed <= static_cast<double>(budget.bytes) ? most_entries
                                                                                                          : least_entries);
  }

  // Parses every entry into `store`; errors name the file and line as the sequential parser does.
  template <class Store>
  void read_into(Store& store) {
    std::int64_t lines = 0;
    const Problem problem = read_entries(store, pre_.entries, lines);
    if (problem.failed) fail(name_, problem.line, problem.message);
    if (lines < pre_.entries) fail(name_, text_.line_after_last(), missing_message(pre_, lines));
  }

  // The first problem of read_entries: its line and message (without the "FILE:LINE: " prefix).
  struct Problem {
    bool failed = false;
    std::int64_t line = 0;
    std::string message;
  };

  // Parses entry lines into `store` until the text ends or the first problem: a line that does not
  // parse, or one entry line more than `limit`. `lines`: the entry lines parsed before it.
  template <class Store>
  Problem read_entries(Store& store, std::int64_t limit, std::int64_t& lines) {
    const bool coordinate = pre_.format == Format::Coordinate;
    const CoordinateParser coordinate_parse = coordinate_parser(pre_.field, pre_.symmetry);
    const ArrayParser array_parse = array_parser(pre_.field, pre_.symmetry);
    std::int64_t remaining = limit;
    std::int64_t array_row = -1, array_col = 0;
    for (std::string_view block = text_.next_block(); !block.empty(); block = text_.next_block()) {
      const char* begin = block.data();
      const char* end = begin + block.size();
      int pieces = 0, threads = 1;
      if (coordinate && parse_in_parallel(begin, end, remaining, pieces, threads)) {
        store.append(parts_, pieces, threads);
        text_.finish_block(newlines_);
        continue;
      }
      parts_.resize(std::max<std::size_t>(parts_.size(), 1));
      Entries& out = parts_[0];
      out.clear();
      const RangeStatus st = coordinate ? coordinate_parse(begin, end, pre_.rows, pre_.cols, remaining, out)
                                        : array_parse(begin, end, pre_.rows, remaining, out, array_row, array_col);
      if (st.at) {
        lines = limit - remaining + st.count;
        return {true, text_.line_of(st.at),
                !st.too_many ? st.message
                : coordinate ? "more entries than the " + std::to_string(pre_.entries) + " declared in the size line"
                             : "more values than the " + std::to_string(pre_.entries) + " the size line calls for"};
      }
      remaining -= st.count;
      store.append(parts_, 1, 1);
      text_.finish_block(std::count(begin, end, '\n'));
    }
    lines = limit - remaining;
    return {};
  }

  // The line at the end of the text consumed so far, and where a missing entry is reported.
  std::int64_t line() const { return text_.line(); }
  std::int64_t line_after_last() const { return text_.line_after_last(); }

  static std::string missing_message(const Preamble& pre, std::int64_t found) {
    const bool coordinate = pre.format == Format::Coordinate;
    return "file ends after " + std::to_string(found) + " of the " + std::to_string(pre.entries) +
           (coordinate ? " entries declared on line " : " values called for by the size on line ") +
           std::to_string(pre.size_line) + " (truncated file?)";
  }

 private:
  static int max_threads() {
#ifdef _OPENMP
    if (!omp_in_parallel()) return omp_get_max_threads();
#endif
    return 1;
  }
  static std::size_t default_block_bytes(bool in_memory) {
    if (in_memory) return kMaxBlockBytes;
    return std::clamp(static_cast<std::size_t>(max_threads()) * kBytesPerThreadInABlock, kMinBlockBytes,
                      kMaxBlockBytes);
  }

  // The block split at newlines into pieces parsed in parallel into parts_. False, when the block is
  // too small to split or anything is off (an error, more entries than remain): the caller then parses
  // it sequentially, which reports the first problem exactly.
  bool parse_in_parallel(const char* begin, const char* end, std::int64_t& remaining, int& pieces, int& threads) {
    const auto bytes = static_cast<std::size_t>(end - begin);
    const int wanted = chunks_ > 0 ? chunks_ : max_threads();
    pieces = chunks_ > 0 ? chunks_ : static_cast<int>(std::clamp<std::size_t>(bytes / kMinBytesPerThread, 1, static_cast<std::size_t>(wanted)));
    if (pieces <= 1) return false;
    // Pieces (and so results) do not depend on the thread count; small texts stay on one thread.
    threads = std::max(1, std::min({pieces, max_threads(), static_cast<int>(std::min<std::size_t>(bytes / kMinBytesPerThread, 1024))}));
    std::vector<const char*> bounds(static_cast<std::size_t>(pieces) + 1, end);
    bounds[0] = begin;
    for (int k = 1; k < pieces; ++k) {
      const char* target = std::max(begin + bytes / static_cast<std::size_t>(pieces) * static_cast<std::size_t>(k), bounds[k - 1]);
      const char* nl = find_line_end(target, end);
      bounds[k] = nl == end ? end : nl + 1;
    }
    if (parts_.size() < static_cast<std::size_t>(pieces)) parts_.resize(static_cast<std::size_t>(pieces));
    std::vector<RangeStatus> status(static_cast<std::size_t>(pieces));
    std::vector<std::int64_t> newlines(static_cast<std::size_t>(pieces), 0);
    std::vector<std::exception_ptr> thrown(static_cast<std::size_t>(pieces));
    const CoordinateParser parser = coordinate_parser(pre_.field, pre_.symmetry);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int k = 0; k < pieces; ++k) {
      try {
        parts_[k].clear();
        status[k] = parser(bounds[k], bounds[k + 1], pre_.rows, pre_.cols, kMaxInt64, parts_[k]);
        newlines[k] = std::count(bounds[k], bounds[k + 1], '\n');
      } catch (...) {
        thrown[k] = std::current_exception();
      }
    }
    for (auto& e : thrown)
      if (e) std::rethrow_exception(e);
    std::int64_t lines = 0;
    newlines_ = 0;
    for (int k = 0; k < pieces; ++k) {
      if (status[k].at) return false;
      lines += status[k].count;
      newlines_ += newlines[k];
    }
    if (lines > remaining) return false;
    remaining -= lines;
    return true;
  }

  detail::InputStream& in_;
  std::string_view name_;
  int chunks_;
  TextBlocks text_;
  Preamble pre_;
  std::int64_t share_lines_ = -1;
  std::vector<Entries> parts_;  // kept from block to block so that their capacity is reused
  std::int64_t newlines_ = 0;
};

MatrixMarketFile read_coo(detail::InputStream& in, std::string_view name, const ReadOptions& options, int chunks,
                          std::size_t block_bytes) {
  EntryReader reader(in, name, chunks, block_bytes);
  const Preamble& pre = reader.preamble();
  EntryStore<std::int64_t, double> store;
  store.reserve(reader.check_memory({2 * sizeof(std::int64_t) + sizeof(double), 0}, options));
  reader.read_into(store);
  MatrixMarketFile file;
  file.header = pre.header;
  file.matrix.rows = pre.rows;
  file.matrix.cols = pre.cols;
  file.matrix.row_idx = std::move(store.rows);
  file.matrix.col_idx = std::move(store.cols);
  file.matrix.values = std::move(store.values);
  return file;
}

template <class T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// CSR from the stored entries in file order, as to_csr builds it (stable by row, then canonicalize:
// columns sorted, duplicates summed in file order), but freeing each stored array once it is copied:
// values first, then column indices, so that the peak is the store plus one array of the result.
template <class Value, class Index, class StoreIndex>
CsrMatrix<Value, Index> csr_from_store(EntryStore<StoreIndex, Value>& store, std::int64_t rows, std::int64_t cols) {
  const std::size_t nnz = store.size();
  detail::refuse_if_too_large<Index>(rows, cols, static_cast<std::int64_t>(nnz));  // before summing, as to_csr
  CsrMatrix<Value, Index> a;
  a.rows = static_cast<Index>(rows);
  a.cols = static_cast<Index>(cols);
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (const StoreIndex r : store.rows) ++a.row_ptr[static_cast<std::size_t>(r) + 1];
  std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
  std::vector<Index> cursor;
  auto scatter = [&](auto& from, auto& to) {
    cursor.assign(a.row_ptr.begin(), a.row_ptr.end() - 1);
    to.resize(nnz);
    for (std::size_t k = 0; k < nnz; ++k)
      to[static_cast<std::size_t>(cursor[static_cast<std::size_t>(store.rows[k])]++)] =
          static_cast<typename std::decay_t<decltype(to)>::value_type>(from[k]);
    release(from);
  };
  scatter(store.values, a.values);
  scatter(store.cols, a.col_idx);
  release(cursor);
  release(store.rows);
  canonicalize(a);
  return a;
}

template <class Value, class Index, class StoreIndex>
CsrMatrix<Value, Index> read_csr_stored(EntryReader& reader, const ReadOptions& options) {
  constexpr double per_entry = 2.0 * sizeof(StoreIndex) + sizeof(Value) +  // the store
                               std::max(sizeof(Value), sizeof(Index));     // the result array being filled
  const std::size_t reserve = reader.check_memory({per_entry, 2.0 * sizeof(Index)}, options);  // row_ptr, cursor
  EntryStore<StoreIndex, Value> store;
  store.reserve(reserve);
  reader.read_into(store);
  return csr_from_store<Value, Index>(store, reader.preamble().rows, reader.preamble().cols);
}

bool starts_with_banner(std::string_view text) {
  constexpr std::string_view kBanner = "%%matrixmarket";
  return text.size() >= kBanner.size() && lower(text.substr(0, kBanner.size())) == kBanner;
}

// Plain text: one number per line; blank lines and lines starting with '%' or '#' are skipped.
std::vector<double> parse_plain_vector(std::string_view text, std::string_view name) {
  std::vector<double> v;
  const char* p = text.data();
  const char* end = p + text.size();
  for (std::int64_t line = 1; p != end; ++line) {
    const char* eol = find_line_end(p, end);
    p = skip_blanks(p, eol);
    if (p != eol && *p != '%' && *p != '#') {
      double x = 0;
      const char* token = p;
      if (const Num s = parse_real(p, eol, x); s != Num::Ok) fail(name, line, number_message(s, "number", token, eol));
      p = skip_blanks(p, eol);
      if (p != eol) fail(name, line, "unexpected " + quote_token(p, eol) + " after the number (one number per line)");
      v.push_back(x);
    }
    p = eol == end ? end : eol + 1;
  }
  return v;
}

std::vector<double> parse_vector(std::string_view text, std::string_view name) {
  if (!starts_with_banner(text)) return parse_plain_vector(text, name);
  detail::InputStream in(text, name, false);
  EntryReader reader(in, name, 1, 0);
  const Preamble& pre = reader.preamble();
  if (pre.format != Format::Array)
    fail(name, 1, "a vector must be a Matrix Market array with one column, this file is in coordinate format");
  if (pre.cols != 1)
    fail(name, pre.size_line, "a vector must have one column, this array has " + std::to_string(pre.cols));
  EntryStore<std::int64_t, double> store;
  store.reserve(reader.check_memory({2 * sizeof(std::int64_t) + sizeof(double), sizeof(double)}, {}));
  reader.read_into(store);
  std::vector<double> v(static_cast<std::size_t>(pre.rows), 0.0);
  for (std::size_t k = 0; k < store.size(); ++k) v[static_cast<std::size_t>(store.rows[k])] = store.values[k];
  return v;
}

}  // namespace

MatrixMarketFile parse_matrix_market(std::string_view text, std::string_view name) {
  return detail::parse_matrix_market_chunks(text, name, 0);
}

MatrixMarketFile read_matrix_market(const std::string& path, const ReadOptions& options) {
  detail::InputStream in(path);
  return read_coo(in, in.name(), options, 0, 0);
}

template <class Value, class Index>
CsrMatrix<Value, Index> read_csr(const std::string& path, const ReadOptions& options, MatrixMarketHeader* header) {
  detail::InputStream in(path);
  EntryReader reader(in, in.name(), 0, 0);
  const Preamble& pre = reader.preamble();
  detail::refuse_if_too_large<Index>(pre.rows, pre.cols, 0);  // before reading; nnz is checked after
  if (header) *header = pre.header;
  // 32-bit stored indices whenever rows and columns fit: a 64-bit result then costs no more to build.
  CsrMatrix<Value, Index> a = fits_index<std::int32_t>(pre.rows, pre.cols, 0)
                                  ? read_csr_stored<Value, Index, std::int32_t>(reader, options)
                                  : read_csr_stored<Value, Index, std::int64_t>(reader, options);
  return a;
}

std::vector<double> read_vector(const std::string& path) {
  const std::string text = detail::read_text(path);
  return parse_vector(text, detail::display_name(path));
}

namespace detail {

MatrixMarketFile parse_matrix_market_chunks(std::string_view text, std::string_view name, int chunks,
                                            std::size_t block_bytes) {
  InputStream in(text, name, false);
  return read_coo(in, name, {}, std::max(chunks, 0), block_bytes);
}

ParseError located_parse_error(std::string_view name, std::int64_t line, const std::string& message) {
  return ParseError(std::string(name) + ":" + std::to_string(line) + ": " + message);
}

MatrixMarketLayout read_matrix_market_layout(InputStream& in) {
  // Small blocks: only the preamble is read here, usually a few hundred bytes.
  constexpr std::size_t kPreambleBlockBytes = std::size_t{64} << 10;
  TextBlocks text(in, kPreambleBlockBytes);
  const Preamble pre = parse_preamble(text, in.name());
  MatrixMarketLayout layout;
  layout.header = pre.header;
  layout.coordinate = pre.format == Format::Coordinate;
  layout.mirrored = pre.symmetry != Symmetry::General;
  layout.rows = pre.rows;
  layout.cols = pre.cols;
  layout.entries = pre.entries;
  layout.size_line = pre.size_line;
  layout.data_offset = text.offset();
  layout.data_line = text.line();
  layout.line_after_preamble = text.line_after_last();
  return layout;
}

std::string missing_entries_message(const MatrixMarketLayout& layout, std::int64_t found) {
  Preamble pre;
  pre.format = layout.coordinate ? Format::Coordinate : Format::Array;
  pre.entries = layout.entries;
  pre.size_line = layout.size_line;
  return EntryReader::missing_message(pre, found);
}

template <class Value, class Index>
RangeOutcome parse_coordinate_lines(InputStream& in, const MatrixMarketLayout& layout, std::int64_t limit,
                                    std::int64_t share_lines, const ReadOptions& options,
                                    RangeEntries<Value, Index>& out) {
  if (!layout.coordinate) throw InvalidArgument("parse_coordinate_lines: an array file has no coordinate lines");
  Preamble pre;
  pre.header = layout.header;
  pre.format = Format::Coordinate;
  pre.field = layout.header.field == "integer" ? Field::Integer : layout.header.field == "pattern" ? Field::Pattern
                                                                                                  : Field::Real;
  pre.symmetry = !layout.mirrored                             ? Symmetry::General
                 : layout.header.symmetry == "skew-symmetric" ? Symmetry::Skew
                                                              : Symmetry::Symmetric;
  pre.rows = layout.rows;
  pre.cols = layout.cols;
  pre.entries = layout.entries;
  pre.size_line = layout.size_line;
  EntryReader reader(in, in.name(), pre, share_lines);
  // Global indices (the caller sends them on); row pointers are the caller's, built from its rows.
  if (!fits_index<Index>(layout.rows, layout.cols, 0))
    throw InvalidArgument("parse_coordinate_lines: the matrix's indices do not fit the index type");
  EntryStore<Index, Value> store;
  store.reserve(reader.check_memory({2.0 * sizeof(Index) + sizeof(Value), 0}, options));
  RangeOutcome outcome;
  const EntryReader::Problem problem = reader.read_entries(store, limit, outcome.entry_lines);
  if (problem.failed) {
    outcome.failed = true;
    outcome.line_offset = problem.line - 1;
    outcome.message = problem.message;
  } else {
    outcome.newlines = reader.line() - 1;
    outcome.ends_inside_line = reader.line_after_last() != reader.line();
  }
  out.rows = std::move(store.rows);
  out.cols = std::move(store.cols);
  out.values = std::move(store.values);
  return outcome;
}

#define SPMV_INSTANTIATE_RANGE(V, I)                                                                         \
  template RangeOutcome parse_coordinate_lines(InputStream&, const MatrixMarketLayout&, std::int64_t, std::int64_t, \
                                               const ReadOptions&, RangeEntries<V, I>&);
SPMV_INSTANTIATE_RANGE(float, std::int32_t)
SPMV_INSTANTIATE_RANGE(float, std::int64_t)
SPMV_INSTANTIATE_RANGE(double, std::int32_t)
SPMV_INSTANTIATE_RANGE(double, std::int64_t)
#undef SPMV_INSTANTIATE_RANGE

}  // namespace detail

#define SPMV_INSTANTIATE_READ_CSR(V, I) \
  template CsrMatrix<V, I> read_csr(const std::string&, const ReadOptions&, MatrixMarketHeader*);

SPMV_INSTANTIATE_READ_CSR(float, std::int32_t)
SPMV_INSTANTIATE_READ_CSR(float, std::int64_t)
SPMV_INSTANTIATE_READ_CSR(double, std::int32_t)
SPMV_INSTANTIATE_READ_CSR(double, std::int64_t)

}  // namespace spmv
