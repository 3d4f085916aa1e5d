// Matrix Market reader: banner and size line, then a tight per-line loop over the entries using
// std::from_chars (no iostreams, no per-entry allocation), templated on field and symmetry so that the
// hot loop carries no run-time switches. Large coordinate files are split at newlines and the chunks
// parsed in parallel; any irregularity there (an error, a count mismatch) re-runs the sequential
// parser, whose error message is the reference, so both paths report the same line.
#include "spmv/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <system_error>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/matrix_market_io.hpp"
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

std::int64_t line_of(std::string_view text, const char* where) {
  return 1 + std::count(text.data(), where, '\n');
}
// Where a missing entry was expected: the line after the last one.
std::int64_t line_after_last(std::string_view text) {
  std::int64_t lines = std::count(text.begin(), text.end(), '\n');
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines + 1;
}

[[noreturn]] void fail(std::string_view name, std::int64_t line, const std::string& message) {
  throw ParseError(std::string(name) + ":" + std::to_string(line) + ": " + message);
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
};

// Outcome of parsing a run of entry lines; on error `at` points into the offending line.
struct RangeStatus {
  std::int64_t count = 0;  // entry lines read (before mirroring)
  const char* at = nullptr;
  std::string message;
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
  while (p != end) {
    p = skip_blanks(p, end);
    if (p == end) break;
    if (*p == '\n') {
      ++p;
      continue;
    }
    if (*p == '%') {
      p = find_line_end(p, end);
      continue;
    }
    if (st.count == limit) [[unlikely]]
      return error(p, "more entries than the " + std::to_string(limit) + " declared in the size line");
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
// for skew-symmetric), so column j starts at row j (j + 1).
template <Field F, Symmetry S>
RangeStatus parse_array_range(const char* p, const char* end, std::int64_t rows, std::int64_t limit,
                              Entries& out) {
  RangeStatus st;
  auto error = [&](const char* at, std::string message) {
    st.at = at;
    st.message = std::move(message);
    return st;
  };
  auto first_row = [](std::int64_t col) -> std::int64_t {
    return S == Symmetry::General ? 0 : S == Symmetry::Symmetric ? col : col + 1;
  };
  std::int64_t i = first_row(0), j = 0;
  while (p != end) {
    p = skip_blanks(p, end);
    if (p == end) break;
    if (*p == '\n') {
      ++p;
      continue;
    }
    if (*p == '%') {
      p = find_line_end(p, end);
      continue;
    }
    if (st.count == limit) [[unlikely]]
      return error(p, "more values than the " + std::to_string(limit) + " the size line calls for");
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
using ArrayParser = RangeStatus (*)(const char*, const char*, std::int64_t, std::int64_t, Entries&);

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
  const char* data = nullptr;  // first byte after the size line
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

Preamble parse_preamble(std::string_view text, std::string_view name) {
  Preamble pre;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (text.empty()) fail(name, 1, std::string("empty file, expected the banner ") + kBannerForm);

  const char* banner_end = find_line_end(begin, end);
  const auto words = split_blanks(begin, banner_end);
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
  const char* p = banner_end;
  while (true) {
    if (p != end) ++p;  // past '\n'
    p = skip_blanks(p, end);
    if (p == end) fail(name, line_after_last(text), "file ends before the size line");
    if (*p == '\n') continue;
    if (*p == '%') {
      p = find_line_end(p, end);
      continue;
    }
    break;
  }
  pre.size_line = line_of(text, p);
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
  if (p != end && *p != '\n') fail(name, pre.size_line, "unexpected " + quote_token(p, end) + " after the " + expected);
  pre.data = p == end ? end : p + 1;

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

// The data section split into `chunks` runs at newlines, parsed in parallel and concatenated in file
// order. Returns false, leaving `out` empty, when anything is off; the caller then re-parses
// sequentially to report the first problem exactly as the sequential parser would.
bool parse_coordinate_chunks(const Preamble& pre, const char* begin, const char* end, int chunks, Entries& out) {
  const auto bytes = static_cast<std::size_t>(end - begin);
  std::vector<const char*> bounds(static_cast<std::size_t>(chunks) + 1, end);
  bounds[0] = begin;
  for (int k = 1; k < chunks; ++k) {
    const char* target = std::max(begin + bytes / static_cast<std::size_t>(chunks) * static_cast<std::size_t>(k), bounds[k - 1]);
    const char* nl = find_line_end(target, end);
    bounds[k] = nl == end ? end : nl + 1;
  }
  const CoordinateParser parser = coordinate_parser(pre.field, pre.symmetry);
  const std::size_t mirror = pre.symmetry == Symmetry::General ? 1 : 2;
  std::vector<Entries> parts(static_cast<std::size_t>(chunks));
  std::vector<RangeStatus> status(static_cast<std::size_t>(chunks));
  std::vector<std::exception_ptr> thrown(static_cast<std::size_t>(chunks));
  // Chunks (and so results) do not depend on the thread count; small texts stay on one thread.
  int threads = 1;
#ifdef _OPENMP
  const auto by_size = static_cast<int>(std::min<std::size_t>(bytes / kMinBytesPerThread, 1024));
  threads = std::max(1, std::min({chunks, omp_get_max_threads(), by_size}));
#endif
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int k = 0; k < chunks; ++k) {
    try {
      // Chunk 0 becomes the result, so it reserves room for all entries; the others reserve their
      // share of the declared count. Never beyond what the bytes can hold.
      const auto chunk_bytes = static_cast<std::size_t>(k == 0 ? bytes : bounds[k + 1] - bounds[k]);
      const double share = static_cast<double>(pre.entries) * static_cast<double>(chunk_bytes) / static_cast<double>(bytes);
      const auto cap = static_cast<double>(chunk_bytes / kMinCoordinateLineBytes + 1);
      parts[k].reserve(static_cast<std::size_t>(std::min(share * 1.01 + 16, cap)) * mirror);
      status[k] = parser(bounds[k], bounds[k + 1], pre.rows, pre.cols, kMaxInt64, parts[k]);
    } catch (...) {
      thrown[k] = std::current_exception();
    }
  }
  for (auto& e : thrown)
    if (e) std::rethrow_exception(e);
  std::int64_t lines = 0;
  std::vector<std::size_t> offset(static_cast<std::size_t>(chunks) + 1, 0);
  for (int k = 0; k < chunks; ++k) {
    if (status[k].at) return false;
    lines += status[k].count;
    offset[k + 1] = offset[k] + parts[k].size();
  }
  if (lines != pre.entries) return false;

  out = std::move(parts[0]);
  out.rows.resize(offset[chunks]);
  out.cols.resize(offset[chunks]);
  out.values.resize(offset[chunks]);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int k = 1; k < chunks; ++k) {
    std::copy(parts[k].rows.begin(), parts[k].rows.end(), out.rows.begin() + static_cast<std::ptrdiff_t>(offset[k]));
    std::copy(parts[k].cols.begin(), parts[k].cols.end(), out.cols.begin() + static_cast<std::ptrdiff_t>(offset[k]));
    std::copy(parts[k].values.begin(), parts[k].values.end(), out.values.begin() + static_cast<std::ptrdiff_t>(offset[k]));
    parts[k] = Entries{};
  }
  return true;
}

int automatic_chunks(std::size_t data_bytes) {
#ifdef _OPENMP
  if (!omp_in_parallel())
    return static_cast<int>(std::clamp<std::size_t>(data_bytes / kMinBytesPerThread, 1,
                                                     static_cast<std::size_t>(omp_get_max_threads())));
#else
  (void)data_bytes;
#endif
  return 1;
}

MatrixMarketFile parse(std::string_view text, std::string_view name, int chunks /* 0: automatic */) {
  const Preamble pre = parse_preamble(text, name);
  const char* end = text.data() + text.size();
  const auto data_bytes = static_cast<std::size_t>(end - pre.data);
  const bool coordinate = pre.format == Format::Coordinate;
  const std::size_t mirror = pre.symmetry == Symmetry::General ? 1 : 2;
  if (chunks == 0) chunks = automatic_chunks(data_bytes);

  Entries entries;
  bool done = false;
  if (coordinate && chunks > 1 && data_bytes > 0)
    done = parse_coordinate_chunks(pre, pre.data, end, chunks, entries);
  if (!done) {
    const std::size_t min_line = coordinate ? kMinCoordinateLineBytes : kMinArrayLineBytes;
    entries.reserve(std::min(static_cast<std::size_t>(pre.entries), data_bytes / min_line + 1) * mirror);
    const RangeStatus st = coordinate ? coordinate_parser(pre.field, pre.symmetry)(pre.data, end, pre.rows, pre.cols,
                                                                                   pre.entries, entries)
                                      : array_parser(pre.field, pre.symmetry)(pre.data, end, pre.rows, pre.entries,
                                                                              entries);
    if (st.at) fail(name, line_of(text, st.at), st.message);
    if (st.count < pre.entries)
      fail(name, line_after_last(text),
           "file ends after " + std::to_string(st.count) + " of the " + std::to_string(pre.entries) +
               (coordinate ? " entries declared on line " : " values called for by the size on line ") +
               std::to_string(pre.size_line) + " (truncated file?)");
  }

  MatrixMarketFile file;
  file.header = pre.header;
  file.matrix.rows = pre.rows;
  file.matrix.cols = pre.cols;
  file.matrix.row_idx = std::move(entries.rows);
  file.matrix.col_idx = std::move(entries.cols);
  file.matrix.values = std::move(entries.values);
  return file;
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
  const Preamble pre = parse_preamble(text, name);
  if (pre.format != Format::Array)
    fail(name, 1, "a vector must be a Matrix Market array with one column, this file is in coordinate format");
  if (pre.cols != 1)
    fail(name, pre.size_line, "a vector must have one column, this array has " + std::to_string(pre.cols));
  const MatrixMarketFile file = parse(text, name, 1);
  std::vector<double> v(static_cast<std::size_t>(pre.rows), 0.0);
  for (std::size_t k = 0; k < file.matrix.values.size(); ++k)
    v[static_cast<std::size_t>(file.matrix.row_idx[k])] = file.matrix.values[k];
  return v;
}

}  // namespace

MatrixMarketFile parse_matrix_market(std::string_view text, std::string_view name) { return parse(text, name, 0); }

MatrixMarketFile read_matrix_market(const std::string& path) {
  const std::string text = detail::read_text(path);
  return parse(text, detail::display_name(path), 0);
}

template <class Value, class Index>
CsrMatrix<Value, Index> read_csr(const std::string& path) {
  return to_csr<Value, Index>(read_matrix_market(path).matrix, Duplicates::Sum);
}

std::vector<double> read_vector(const std::string& path) {
  const std::string text = detail::read_text(path);
  return parse_vector(text, detail::display_name(path));
}

namespace detail {

MatrixMarketFile parse_matrix_market_chunks(std::string_view text, std::string_view name, int chunks) {
  return parse(text, name, std::max(chunks, 1));
}

}  // namespace detail

template CsrMatrix<float, std::int32_t> read_csr(const std::string&);
template CsrMatrix<float, std::int64_t> read_csr(const std::string&);
template CsrMatrix<double, std::int32_t> read_csr(const std::string&);
template CsrMatrix<double, std::int64_t> read_csr(const std::string&);

}  // namespace spmv
