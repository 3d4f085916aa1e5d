// libFuzzer target for the Matrix Market reader. For every input it checks that:
// - parsing either succeeds or throws ParseError whose message starts with "fuzz:LINE: " (any other
//   exception escapes and libFuzzer reports it; ASan/UBSan catch memory errors and undefined behaviour);
// - the chunked (parallel) parser, with the default and with tiny stream blocks, gives exactly the same
//   matrix, or exactly the same message;
// - a successful result is a valid COO matrix that converts to a valid canonical CSR, and writing that
//   CSR and reading it back gives it again bit for bit;
// - inputs starting with the gzip magic are also gunzipped (errors must be ParseError) and checked.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/matrix_market.hpp"

namespace {

using Coo = spmv::CooMatrix<double, std::int64_t>;

// Dimensions beyond this are valid but make to_csr allocate rows + 1 offsets, which libFuzzer's
// malloc limit would report as a crash; the parser itself never allocates from the declared sizes.
constexpr std::int64_t kMaxRowsForCsr = std::int64_t{1} << 20;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "matrix_market_fuzz: %s\n", what.c_str());
  std::abort();
}

bool same_value(double a, double b) {
  if (a != a && b != b) return true;  // NaN payloads need not survive text
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool same(const Coo& a, const Coo& b) {
  if (a.rows != b.rows || a.cols != b.cols || a.row_idx != b.row_idx || a.col_idx != b.col_idx ||
      a.values.size() != b.values.size())
    return false;
  for (std::size_t k = 0; k < a.values.size(); ++k)
    if (!same_value(a.values[k], b.values[k])) return false;
  return true;
}

bool same(const spmv::CsrMatrix<double, std::int64_t>& a, const spmv::CsrMatrix<double, std::int64_t>& b) {
  if (a.rows != b.rows || a.cols != b.cols || a.row_ptr != b.row_ptr || a.col_idx != b.col_idx) return false;
  for (std::size_t k = 0; k < a.values.size(); ++k)
    if (!same_value(a.values[k], b.values[k])) return false;
  return true;
}

struct Outcome {
  bool ok = false;
  spmv::MatrixMarketFile file;
  std::string error;
};

Outcome parse(std::string_view text, int chunks, std::size_t block_bytes = 0) {
  Outcome o;
  try {
    o.file = chunks == 0 ? spmv::parse_matrix_market(text, "fuzz")
                         : spmv::detail::parse_matrix_market_chunks(text, "fuzz", chunks, block_bytes);
    o.ok = true;
  } catch (const spmv::ParseError& e) {
    o.error = e.what();
  }
  return o;
}

void check_message(const std::string& message) {
  // "fuzz:LINE: message" with LINE >= 1
  if (message.rfind("fuzz:", 0) != 0) die("message without the file name: " + message);
  std::size_t p = 5;
  while (p < message.size() && message[p] >= '0' && message[p] <= '9') ++p;
  if (p == 5 || message[5] == '0' || message.compare(p, 2, ": ") != 0) die("message without a line number: " + message);
}

void check_text(std::string_view text) {
  const Outcome seq = parse(text, 0);
  // Fuzz inputs are far smaller than the reader's 8 MB blocks: tiny blocks (1 byte: every line is
  // longer than a block, so long comment lines are dropped as they stream; 7 and 64 bytes: lines cut
  // at block ends) exercise the streaming, which must not change the result or the message.
  for (const std::size_t block_bytes : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}})
    for (const int chunks : {1, 2, 5}) {
      const Outcome par = parse(text, chunks, block_bytes);
      if (par.ok != seq.ok) die("chunked and sequential parsers disagree on success");
      if (!seq.ok && par.error != seq.error) die("different messages:\n" + seq.error + "\n" + par.error);
      if (seq.ok && (!same(par.file.matrix, seq.file.matrix) || par.file.header.format != seq.file.header.format ||
                     par.file.header.field != seq.file.header.field ||
                     par.file.header.symmetry != seq.file.header.symmetry))
        die("chunked and sequential parsers give different matrices");
    }
  if (!seq.ok) {
    check_message(seq.error);
    return;
  }
  const Coo& coo = seq.file.matrix;
  spmv::validate(coo);  // InvalidArgument escaping here is a parser bug
  if (coo.rows > kMaxRowsForCsr) return;

  const auto csr = spmv::to_csr<double, std::int64_t>(coo, spmv::Duplicates::Sum);
  spmv::validate(csr);
  if (!spmv::is_canonical(csr)) die("read_csr-style conversion is not canonical");
  try {
    spmv::validate(spmv::to_csr<float, std::int32_t>(coo, spmv::Duplicates::Sum));
  } catch (const spmv::Unsupported&) {
    // columns or entries beyond 32-bit indices: a documented refusal
  }

  // Write and read back: the same canonical matrix, bit for bit.
  const std::string written = spmv::detail::format_matrix_market(csr);
  const Outcome again = parse(written, 0);
  if (!again.ok) die("cannot read back what was written: " + again.error);
  if (!same(spmv::to_csr<double, std::int64_t>(again.file.matrix, spmv::Duplicates::Sum), csr))
    die("write -> read round trip changed the matrix");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_text(input);
  if (spmv::detail::is_gzip(input)) {
    std::string text;
    try {
      text = spmv::detail::gunzip(input, "fuzz.gz");
    } catch (const spmv::ParseError& e) {
      if (std::string(e.what()).rfind("fuzz.gz: ", 0) != 0) die(std::string("gzip message without the file name: ") + e.what());
      return 0;
    }
    // A 4 KiB deflate stream can inflate to ~4 MB; parsing that much adds little but slows the run.
    if (text.size() <= (std::size_t{1} << 20)) check_text(text);
  }
  return 0;
}
