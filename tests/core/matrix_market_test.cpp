// Matrix Market reader and writer: every field and symmetry on hand-written texts with the expected
// triplets, the array format, gzip (single and multi-member, corrupt), standard input and output,
// exact write -> read round trips, every malformed-input error with its file name and line, the
// chunked (parallel) parser against the sequential one, and the shared SuiteSparse matrices.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bgzf.hpp"
#include "common/paths.hpp"
#include "core/matrix_market_io.hpp"
#include "spmv/error.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv {
namespace {

namespace fs = std::filesystem;

// Values are compared bit for bit: the reader must reproduce the decimal text exactly (it is
// correctly rounded), and a round trip must give back the very same number.
bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
bool same_bits(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

struct Triplet {
  std::int64_t row, col;
  double value;
  bool operator==(const Triplet& o) const { return row == o.row && col == o.col && same_bits(value, o.value); }
};
std::ostream& operator<<(std::ostream& os, const Triplet& t) {
  return os << "(" << t.row << ", " << t.col << ", " << t.value << ")";
}

std::vector<Triplet> triplets(const CooMatrix<double, std::int64_t>& m) {
  std::vector<Triplet> t;
  for (std::size_t k = 0; k < m.row_idx.size(); ++k) t.push_back({m.row_idx[k], m.col_idx[k], m.values[k]});
  return t;
}

// Stream block sizes besides the reader's default (0, 8 MB and more): the hand-written texts here are
// far smaller, so tiny blocks are what puts block ends inside them (1 byte: every line is longer than
// a block; 5 and 16 bytes: lines cut at block ends).
constexpr std::size_t kBlockBytes[] = {0, 1, 5, 16};

// Parses sequentially and split into several chunks, in blocks of every size above; the results must
// be identical.
MatrixMarketFile parse(std::string_view text) {
  MatrixMarketFile seq = parse_matrix_market(text, "t.mtx");
  for (std::size_t block_bytes : kBlockBytes)
    for (int chunks : {1, 2, 3, 7}) {
      const MatrixMarketFile par = detail::parse_matrix_market_chunks(text, "t.mtx", chunks, block_bytes);
      EXPECT_EQ(par.matrix.rows, seq.matrix.rows) << chunks << " chunks, blocks of " << block_bytes;
      EXPECT_EQ(par.matrix.cols, seq.matrix.cols) << chunks << " chunks, blocks of " << block_bytes;
      EXPECT_EQ(triplets(par.matrix), triplets(seq.matrix)) << chunks << " chunks, blocks of " << block_bytes;
    }
  EXPECT_NO_THROW(validate(seq.matrix));
  return seq;
}

// The ParseError must begin "bad.mtx:LINE: " and contain `part`, whatever the chunking and blocks.
void expect_parse_error(std::string_view text, std::int64_t line, std::string_view part) {
  for (std::size_t block_bytes : kBlockBytes)
    for (int chunks : {1, 2, 3, 7}) {
      try {
        detail::parse_matrix_market_chunks(text, "bad.mtx", chunks, block_bytes);
        ADD_FAILURE() << "no error (" << chunks << " chunks, blocks of " << block_bytes << ") for:\n" << text;
      } catch (const ParseError& e) {
        const std::string message = e.what();
        const std::string prefix = "bad.mtx:" + std::to_string(line) + ": ";
        EXPECT_EQ(message.rfind(prefix, 0), 0u)
            << "expected prefix '" << prefix << "', got: " << message << " (blocks of " << block_bytes << ")";
        EXPECT_NE(message.find(part), std::string::npos)
            << "expected '" << part << "' in: " << message << " (blocks of " << block_bytes << ")";
      }
    }
}

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";

// ---------------------------------------------------------------------------------------------
// Fields and symmetries

TEST(MatrixMarketParse, RealGeneral) {
  const auto f = parse(kGeneral + "% a comment\n3 4 4\n1 1 1.5\n3 4 -2e3\n2 1 .25\n1 4 -0\n");
  EXPECT_EQ(f.header.format, "coordinate");
  EXPECT_EQ(f.header.field, "real");
  EXPECT_EQ(f.header.symmetry, "general");
  EXPECT_EQ(f.matrix.rows, 3);
  EXPECT_EQ(f.matrix.cols, 4);
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 1.5}, {2, 3, -2000.0}, {1, 0, 0.25}, {0, 3, -0.0}}));
}

TEST(MatrixMarketParse, IntegerGeneral) {
  const auto f = parse("%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 7\n2 3 -12\n1 2 +4\n");
  EXPECT_EQ(f.header.field, "integer");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 7.0}, {1, 2, -12.0}, {0, 1, 4.0}}));
}

TEST(MatrixMarketParse, PatternGeneralValuesAreOne) {
  const auto f = parse("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n");
  EXPECT_EQ(f.header.field, "pattern");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 1, 1.0}, {1, 0, 1.0}}));
}

TEST(MatrixMarketParse, SymmetricExpandsWithoutDuplicatingTheDiagonal) {
  const auto f = parse("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n");
  EXPECT_EQ(f.header.symmetry, "symmetric");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 4.0}, {1, 0, -1.0}, {0, 1, -1.0}, {2, 1, -2.0},
                                                      {1, 2, -2.0}, {2, 2, 5.0}}));
}

TEST(MatrixMarketParse, SymmetricUpperTriangleEntriesAreMirroredToo) {
  const auto f = parse("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 3\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 1, 3.0}, {1, 0, 3.0}}));
}

TEST(MatrixMarketParse, PatternSymmetric) {
  const auto f = parse("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n3 1\n2 2\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{2, 0, 1.0}, {0, 2, 1.0}, {1, 1, 1.0}}));
}

TEST(MatrixMarketParse, IntegerSymmetric) {
  const auto f = parse("%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n2 1 -3\n1 1 2\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{1, 0, -3.0}, {0, 1, -3.0}, {0, 0, 2.0}}));
}

TEST(MatrixMarketParse, SkewSymmetricNegatesTheMirrorAndKeepsAZeroDiagonal) {
  const auto f = parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 1.5\n3 3 0\n3 2 -2\n");
  EXPECT_EQ(f.header.symmetry, "skew-symmetric");
  EXPECT_EQ(triplets(f.matrix),
            (std::vector<Triplet>{{1, 0, 1.5}, {0, 1, -1.5}, {2, 2, 0.0}, {2, 1, -2.0}, {1, 2, 2.0}}));
}

TEST(MatrixMarketParse, IntegerSkewSymmetric) {
  const auto f = parse("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 4\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{1, 0, 4.0}, {0, 1, -4.0}}));
}

TEST(MatrixMarketParse, HermitianRealIsSymmetric) {
  const auto f = parse("%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 2\n2 1 3\n");
  EXPECT_EQ(f.header.symmetry, "hermitian");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 2.0}, {1, 0, 3.0}, {0, 1, 3.0}}));
}

TEST(MatrixMarketParse, DuplicatesAreKept) {
  const auto f = parse(kGeneral + "2 2 3\n1 1 1\n1 1 2\n2 2 3\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 1.0}, {0, 0, 2.0}, {1, 1, 3.0}}));
}

TEST(MatrixMarketParse, EmptyMatrices) {
  auto f = parse(kGeneral + "0 0 0\n");
  EXPECT_EQ(f.matrix.rows, 0);
  EXPECT_EQ(f.matrix.cols, 0);
  EXPECT_EQ(f.matrix.nnz(), 0);
  f = parse(kGeneral + "3 4 0\n% nothing\n\n");
  EXPECT_EQ(f.matrix.rows, 3);
  EXPECT_EQ(f.matrix.cols, 4);
  EXPECT_EQ(f.matrix.nnz(), 0);
  f = parse(kGeneral + "5 0 0");  // no final newline
  EXPECT_EQ(f.matrix.rows, 5);
  EXPECT_EQ(f.matrix.cols, 0);
}

TEST(MatrixMarketParse, BannerIsCaseInsensitiveAndHeaderLowercased) {
  const auto f = parse("%%matrixmarket MATRIX Coordinate REAL Symmetric\n1 1 1\n1 1 2\n");
  EXPECT_EQ(f.header.format, "coordinate");
  EXPECT_EQ(f.header.field, "real");
  EXPECT_EQ(f.header.symmetry, "symmetric");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 2.0}}));
}

TEST(MatrixMarketParse, LayoutVariants) {
  // Tabs, leading blanks, CRLF, blank and comment lines between entries, no final newline.
  const std::string text =
      "%%MatrixMarket\tmatrix  coordinate real general  \r\n"
      "%comment\r\n"
      "\r\n"
      "   2\t2   3 \r\n"
      "% between\n"
      "\t1 1\t1e1\r\n"
      "\n"
      "   \t \n"
      "2 2 +2.5E-1\n"
      "  %indented comment\n"
      "1 2 -.5";
  const auto f = parse(text);
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 10.0}, {1, 1, 0.25}, {0, 1, -0.5}}));
}

TEST(MatrixMarketParse, SpecialValues) {
  const auto f = parse(kGeneral + "1 8 8\n1 1 inf\n1 2 -inf\n1 3 nan\n1 4 1e-400\n1 5 -1e-400\n1 6 4.9406564584124654e-324\n"
                                  "1 7 1.7976931348623157e308\n1 8 0.1\n");
  const auto& v = f.matrix.values;
  ASSERT_EQ(v.size(), 8u);
  EXPECT_TRUE(std::isinf(v[0]) && v[0] > 0);
  EXPECT_TRUE(std::isinf(v[1]) && v[1] < 0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_TRUE(same_bits(v[3], 0.0));  // underflow reads as zero, keeping the sign
  EXPECT_TRUE(same_bits(v[4], -0.0));
  EXPECT_TRUE(same_bits(v[5], std::numeric_limits<double>::denorm_min()));
  EXPECT_TRUE(same_bits(v[6], std::numeric_limits<double>::max()));
  EXPECT_TRUE(same_bits(v[7], 0.1));
}

TEST(MatrixMarketParse, LargeIndicesAndIntegers) {
  const auto f = parse("%%MatrixMarket matrix coordinate integer general\n"
                       "9000000000000000000 1 1\n9000000000000000000 1 -9223372036854775808\n");
  EXPECT_EQ(f.matrix.rows, 9000000000000000000);
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{8999999999999999999, 0, -9223372036854775808.0}}));
}

// ---------------------------------------------------------------------------------------------
// Array format

TEST(MatrixMarketArray, GeneralIsColumnMajorWithExplicitZeros) {
  const auto f = parse("%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n\n3\n0\n% c\n5\n6\n");
  EXPECT_EQ(f.header.format, "array");
  EXPECT_EQ(f.matrix.rows, 2);
  EXPECT_EQ(f.matrix.cols, 3);
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 1.0}, {1, 0, 2.0}, {0, 1, 3.0}, {1, 1, 0.0}, {0, 2, 5.0},
                                                      {1, 2, 6.0}}));
}

TEST(MatrixMarketArray, SymmetricStoresTheLowerTriangle) {
  const auto f = parse("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 1.0}, {1, 0, 2.0}, {0, 1, 2.0}, {2, 0, 3.0}, {0, 2, 3.0},
                                                      {1, 1, 4.0}, {2, 1, 5.0}, {1, 2, 5.0}, {2, 2, 6.0}}));
}

TEST(MatrixMarketArray, SkewSymmetricStoresTheStrictlyLowerTriangle) {
  const auto f = parse("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{1, 0, 1.0}, {0, 1, -1.0}, {2, 0, 2.0}, {0, 2, -2.0},
                                                      {2, 1, 3.0}, {1, 2, -3.0}}));
}

TEST(MatrixMarketArray, IntegerAndHermitian) {
  auto f = parse("%%MatrixMarket matrix array integer general\n1 2\n-3\n+4\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, -3.0}, {0, 1, 4.0}}));
  f = parse("%%MatrixMarket matrix array real hermitian\n2 2\n1\n2\n3\n");
  EXPECT_EQ(triplets(f.matrix), (std::vector<Triplet>{{0, 0, 1.0}, {1, 0, 2.0}, {0, 1, 2.0}, {1, 1, 3.0}}));
}

TEST(MatrixMarketArray, EmptyShapes) {
  EXPECT_EQ(parse("%%MatrixMarket matrix array real general\n0 5\n").matrix.nnz(), 0);
  EXPECT_EQ(parse("%%MatrixMarket matrix array real general\n4 0\n").matrix.nnz(), 0);
  EXPECT_EQ(parse("%%MatrixMarket matrix array real skew-symmetric\n1 1\n").matrix.nnz(), 0);
  EXPECT_EQ(parse("%%MatrixMarket matrix array real symmetric\n0 0\n").matrix.nnz(), 0);
}

// ---------------------------------------------------------------------------------------------
// Malformed input: every error names the file and the line.

TEST(MatrixMarketErrors, Banner) {
  expect_parse_error("", 1, "empty file");
  expect_parse_error("1 1 1\n", 1, "missing Matrix Market banner");
  expect_parse_error("\n" + kGeneral + "1 1 0\n", 1, "found an empty line");
  expect_parse_error("%%MatrixMarketX matrix coordinate real general\n1 1 0\n", 1, "missing Matrix Market banner");
  expect_parse_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "incomplete banner");
  expect_parse_error("%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 1, "unexpected 'extra'");
  expect_parse_error("%%MatrixMarket vector coordinate real general\n1 1 0\n", 1, "unknown object 'vector'");
  expect_parse_error("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "unknown format 'sparse'");
  expect_parse_error("%%MatrixMarket matrix coordinate double general\n1 1 0\n", 1, "unknown field 'double'");
  expect_parse_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
                     "complex matrices are not supported");
  expect_parse_error("%%MatrixMarket matrix array COMPLEX hermitian\n1 1\n1 0\n", 1, "complex matrices are not supported");
  expect_parse_error("%%MatrixMarket matrix coordinate real upper\n1 1 0\n", 1, "unknown symmetry 'upper'");
  expect_parse_error("%%MatrixMarket matrix array pattern general\n1 1\n", 1, "pattern field is only valid");
  expect_parse_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n", 1, "cannot be skew-symmetric");
}

TEST(MatrixMarketErrors, SizeLine) {
  expect_parse_error(kGeneral + "% only comments\n\n", 4, "file ends before the size line");
  expect_parse_error("%%MatrixMarket matrix coordinate real general", 2, "file ends before the size line");
  expect_parse_error(kGeneral + "2 x 1\n", 2, "expected number of columns in the size line");
  expect_parse_error(kGeneral + "-2 2 1\n", 2, "negative number of rows -2");
  expect_parse_error(kGeneral + "2 -2 1\n", 2, "negative number of columns -2");
  expect_parse_error(kGeneral + "2 2 -1\n", 2, "negative number of entries -1");
  expect_parse_error(kGeneral + "99999999999999999999 2 1\n", 2,
                     "number of rows '99999999999999999999' is out of range");
  expect_parse_error(kGeneral + "2 2\n", 2, "number of entries missing");
  expect_parse_error(kGeneral + "2 2 1 7\n1 1 1\n", 2, "unexpected '7' after the size line");
  expect_parse_error(kGeneral + "2 2 1.0\n1 1 1\n", 2, "found '1.0'");
  expect_parse_error("%%MatrixMarket matrix array real general\n2 2 4\n", 2, "unexpected '4' after the size line");
  expect_parse_error(kGeneral + "4294967296 4294967296 0\n", 2, "overflows 64-bit integers");
  expect_parse_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 2, "must be square");
  expect_parse_error("%%MatrixMarket matrix array real skew-symmetric\n3 2\n1\n", 2, "must be square");
}

TEST(MatrixMarketErrors, EntryCounts) {
  // Truncated: the missing entry is reported on the line after the last one.
  expect_parse_error(kGeneral + "% c\n3 3 3\n1 1 1\n2 2 2\n", 6, "file ends after 2 of the 3 entries declared on line 3");
  expect_parse_error(kGeneral + "3 3 3\n1 1 1\n2 2 2", 5, "file ends after 2 of the 3 entries");
  expect_parse_error(kGeneral + "3 3 1\n", 3, "file ends after 0 of the 1 entries");
  expect_parse_error(kGeneral + "3 3 1\n1 1 1\n\n% c\n2 2 2\n", 6, "more entries than the 1 declared");
  expect_parse_error(kGeneral + "3 3 0\n1 1 1\n", 3, "more entries than the 0 declared");
  // A tiny file declaring 10^18 entries: reported as truncated, without reserving memory for them.
  expect_parse_error(kGeneral + "2 2 1000000000000000000\n1 1 1\n", 4,
                     "file ends after 1 of the 1000000000000000000 entries");
  expect_parse_error("%%MatrixMarket matrix coordinate real symmetric\n9223372036854775807 9223372036854775807 1\n",
                     2, "overflows");
  expect_parse_error("%%MatrixMarket matrix coordinate pattern symmetric\n3000000000 3000000000 9223372036854775807\n1 1\n",
                     4, "file ends after 1 of the 9223372036854775807 entries");
}

TEST(MatrixMarketErrors, Entries) {
  expect_parse_error(kGeneral + "3 3 1\n0 1 1\n", 3, "row index 0 is out of range (indices start at 1");
  expect_parse_error(kGeneral + "3 3 1\n1 0 1\n", 3, "column index 0 is out of range");
  expect_parse_error(kGeneral + "3 3 1\n4 1 1\n", 3, "row index 4 is out of range (the matrix has 3 rows)");
  expect_parse_error(kGeneral + "3 3 1\n1 4 1\n", 3, "column index 4 is out of range (the matrix has 3 columns)");
  expect_parse_error(kGeneral + "3 3 1\n-1 1 1\n", 3, "row index -1 is out of range");
  expect_parse_error(kGeneral + "0 0 1\n1 1 1\n", 3, "the matrix has 0 rows");
  expect_parse_error(kGeneral + "3 3 1\n1 1 abc\n", 3, "expected a real value, found 'abc'");
  expect_parse_error(kGeneral + "3 3 1\n1 1\n", 3, "expected a real value, found end of line");
  expect_parse_error(kGeneral + "3 3 1\n1\n", 3, "expected a column index, found end of line");
  expect_parse_error(kGeneral + "3 3 1\n1.0 1 1\n", 3, "expected a row index, found '1.0'");
  expect_parse_error(kGeneral + "3 3 1\nx 1 1\n", 3, "expected a row index, found 'x'");
  expect_parse_error(kGeneral + "3 3 1\n1 1 1.0 x\n", 3, "unexpected 'x' after the entry");
  expect_parse_error(kGeneral + "3 3 1\n1 1 1.0x\n", 3, "expected a real value, found '1.0x'");
  expect_parse_error(kGeneral + "3 3 1\n1 1 +-1\n", 3, "expected a real value, found '+-1'");
  expect_parse_error(kGeneral + "3 3 1\n1 1 1e\n", 3, "found '1e'");
  expect_parse_error(kGeneral + "3 3 1\n1 1 0x10\n", 3, "found '0x10'");
  expect_parse_error(kGeneral + "3 3 1\n99999999999999999999 1 1\n", 3,
                     "row index '99999999999999999999' is out of range");
  expect_parse_error(kGeneral + "3 3 1\n1 99999999999999999999 1\n", 3, "column index '99999999999999999999' is out of range");
  expect_parse_error(kGeneral + "3 3 1\n1 1 1e999\n", 3, "real value '1e999' is out of range");
  expect_parse_error(kGeneral + "3 3 1\n1 1 -1e999\n", 3, "real value '-1e999' is out of range");
  expect_parse_error("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3,
                     "expected an integer value, found '1.5'");
  expect_parse_error("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 100000000000000000000\n", 3,
                     "integer value '100000000000000000000' is out of range");
  expect_parse_error("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3, "unexpected '1' after the entry");
  expect_parse_error("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 3\n", 4,
                     "diagonal entry (2, 2) of a skew-symmetric matrix must be zero");
  expect_parse_error(kGeneral + "2 2 1\n1 1 " + std::string(1, '\0') + " 1\n", 3, "found '\\x00'");
  expect_parse_error(kGeneral + "2 2 1\n1 1 1\x80\n", 3, "found '1\\x80'");
  expect_parse_error("%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 3 1\r\n", 3, "column index 3");
  expect_parse_error(kGeneral + "2 2 1\n1 1 " + std::string(100, '7') + "x\n", 3, "...'");  // long tokens are cut
}

TEST(MatrixMarketErrors, Array) {
  const std::string banner = "%%MatrixMarket matrix array real general\n";
  expect_parse_error(banner + "2 2\n1\n2\n3\n", 6, "file ends after 3 of the 4 values");
  expect_parse_error(banner + "2 1\n1\n2\n3\n", 5, "more values than the 2");
  // Found by the fuzzer (fuzz/corpus/regression-too-many-values-in-a-later-block.mtx): when the extra
  // value is in a later stream block, the message named what remained of the count (0), not the count.
  expect_parse_error(banner + "2 3\n1\n2\n3\n0\n5\n6\n7\n", 9, "more values than the 6 the size line calls for");
  expect_parse_error(banner + "2 1\n1 2\n", 3, "unexpected '2' after the value");
  expect_parse_error(banner + "2 1\n1\nabc\n", 4, "expected a real value, found 'abc'");
  expect_parse_error("%%MatrixMarket matrix array integer general\n2 1\n1\n2.5\n", 4, "expected an integer value");
  expect_parse_error("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n", 8, "5 of the 6 values");
  expect_parse_error(banner + "4294967296 4294967296\n", 2, "overflows 64-bit integers");
}

TEST(MatrixMarketErrors, BadLineDeepInALargeFile) {
  // Many lines so that the bad one lands in a later chunk of the parallel parser.
  std::string text = kGeneral + "100 100 400\n";
  for (int k = 0; k < 400; ++k) {
    if (k == 300) text += "% comment\n";
    text += std::to_string(k % 100 + 1) + " " + std::to_string(k / 4 + 1) + " " + std::to_string(k) + ".5\n";
  }
  ASSERT_NO_THROW(parse(text));
  std::string bad = text;
  // Entry k = 370 sits on line 2 (size) + 1 (comment before k = 300) + 371.
  const std::string line370 = "71 93 370.5";
  const auto at = bad.find("\n" + line370 + "\n");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at + 1, line370.size(), line370 + " junk");
  expect_parse_error(bad, 374, "unexpected 'junk' after the entry");
  expect_parse_error(text + "1 1 1\n", 404, "more entries than the 400 declared");
  std::string truncated = text.substr(0, text.size() - 20);
  truncated.resize(truncated.rfind('\n') + 1);
  expect_parse_error(truncated, 402, "file ends after 398 of the 400 entries");
}

// ---------------------------------------------------------------------------------------------
// The chunked parser agrees with the sequential one on a larger random text.

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

TEST(MatrixMarketChunks, AgreeWithSequentialOnRandomText) {
  for (const char* symmetry : {"general", "symmetric", "skew-symmetric"}) {
    std::uint64_t seed = 7;
    const int n = 50, entries = 3000;
    std::string text = std::string("%%MatrixMarket matrix coordinate real ") + symmetry + "\n" + std::to_string(n) + " " +
                       std::to_string(n) + " " + std::to_string(entries) + "\n";
    for (int k = 0; k < entries; ++k) {
      if (splitmix(seed) % 10 == 0) text += "% comment 1 2 3\n";
      if (splitmix(seed) % 10 == 0) text += "\n";
      auto i = static_cast<int>(splitmix(seed) % n) + 1, j = static_cast<int>(splitmix(seed) % n) + 1;
      if (std::string(symmetry) == "skew-symmetric" && i == j) i = i % n + 1;
      text += std::to_string(i) + " " + std::to_string(j) + " " + std::to_string(static_cast<int>(splitmix(seed) % 1000)) + "e-3\n";
    }
    const auto seq = parse_matrix_market(text, "t.mtx");
    for (int chunks = 1; chunks <= 16; ++chunks) {
      const auto par = detail::parse_matrix_market_chunks(text, "t.mtx", chunks);
      EXPECT_EQ(triplets(par.matrix), triplets(seq.matrix)) << symmetry << ", " << chunks << " chunks";
    }
    // Streamed in blocks that end inside lines, inside comments and inside parallel pieces.
    for (const std::size_t block_bytes : {std::size_t{1}, std::size_t{97}, std::size_t{4096}})
      for (int chunks : {1, 3}) {
        const auto par = detail::parse_matrix_market_chunks(text, "t.mtx", chunks, block_bytes);
        EXPECT_EQ(triplets(par.matrix), triplets(seq.matrix))
            << symmetry << ", " << chunks << " chunks, blocks of " << block_bytes;
      }
  }
}

// Comment lines longer than a block are dropped as they stream (a 3 MB .mtx.gz can inflate to 1.5 GB
// of them); neither the entries nor the line numbers of later messages may change.
TEST(MatrixMarketChunks, CommentLinesLongerThanABlock) {
  const std::string comment = "%" + std::string(300, 'c') + "\n";
  const std::string text = kGeneral + comment + "3 3 3\n" + comment + "1 1 1\n" + comment + comment + "2 2 2\n3 3 3\n";
  const auto m = parse(text).matrix;
  EXPECT_EQ(triplets(m), (std::vector<Triplet>{{0, 0, 1.0}, {1, 1, 2.0}, {2, 2, 3.0}}));
  expect_parse_error(kGeneral + comment + "3 3 2\n" + comment + "1 1 1\n" + comment + "2 x 2\n", 7,
                     "expected a column index, found 'x'");
  expect_parse_error(kGeneral + comment + "3 3 3\n" + comment + "1 1 1\n" + comment, 7,
                     "file ends after 1 of the 3 entries");
  for (const std::size_t block_bytes : kBlockBytes) {
    // The banner stays whole in messages, however small the block.
    try {
      detail::parse_matrix_market_chunks("%%MatrixMarket matrix coordinate real wrong\n1 1 0\n", "bad.mtx", 1,
                                         block_bytes);
      ADD_FAILURE() << "no error, blocks of " << block_bytes;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("unknown symmetry 'wrong'"), std::string::npos) << e.what();
    }
  }
}

TEST(MatrixMarketChunks, LargeTextRunsOnSeveralThreads) {
  // Over 2 MiB per chunk, so that (with OpenMP) the chunks really run concurrently.
  std::uint64_t seed = 11;
  const int entries = 300000;
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n100000 100000 " + std::to_string(entries) + "\n";
  for (int k = 0; k < entries; ++k)
    text += std::to_string(splitmix(seed) % 100000 + 1) + " " + std::to_string(splitmix(seed) % 100000 + 1) + " " +
            std::to_string(static_cast<double>(splitmix(seed) % 1000000) * 1e-6) + "\n";
  ASSERT_GT(text.size(), std::size_t{4} << 20);
  const auto seq = detail::parse_matrix_market_chunks(text, "t.mtx", 1);
  for (int chunks : {2, 3}) {
    const auto par = detail::parse_matrix_market_chunks(text, "t.mtx", chunks);
    EXPECT_TRUE(triplets(par.matrix) == triplets(seq.matrix)) << chunks << " chunks";
  }
  EXPECT_TRUE(triplets(parse_matrix_market(text).matrix) == triplets(seq.matrix));
}

// ---------------------------------------------------------------------------------------------
// Files: writer, gzip, standard streams, round trips

class MatrixMarketFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("spmv_mm_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void put(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A gzip member built by hand (RFC 1952) around stored deflate blocks (RFC 1951 §3.2.4), so the tests
// can make multi-member and corrupt streams without a second gzip implementation.
std::uint32_t crc32(std::string_view s) {
  std::uint32_t c = 0xffffffffu;
  for (const unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}
void append_le32(std::string& out, std::uint32_t x) {
  for (int k = 0; k < 4; ++k) out += static_cast<char>((x >> (8 * k)) & 0xff);
}
std::string gzip_member(std::string_view data) {
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  std::size_t pos = 0;
  do {
    const std::size_t n = std::min<std::size_t>(data.size() - pos, 65535);
    out += static_cast<char>(pos + n == data.size() ? 1 : 0);  // BFINAL, BTYPE = 00 (stored)
    out += static_cast<char>(n & 0xff);
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(~n & 0xff);
    out += static_cast<char>((~n >> 8) & 0xff);
    out.append(data.substr(pos, n));
    pos += n;
  } while (pos < data.size());
  append_le32(out, crc32(data));
  append_le32(out, static_cast<std::uint32_t>(data.size()));
  return out;
}

// A canonical random CSR matrix whose values exercise the decimal round trip: random bit patterns,
// subnormals, extremes, signed zeros, infinities.
template <class Value, class Index>
CsrMatrix<Value, Index> random_csr(Index rows, Index cols, std::uint64_t seed) {
  using Bits = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  using L = std::numeric_limits<Value>;
  const Value special[] = {Value(0), -Value(0), L::denorm_min(), -L::denorm_min(), L::min(), L::max(), -L::max(),
                           L::infinity(), -L::infinity(), L::epsilon(), Value(1) / Value(3), Value(0.1)};
  CsrMatrix<Value, Index> a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (Index r = 0; r < rows; ++r) {
    for (Index c = 0; c < cols; ++c) {
      if (splitmix(seed) % 5 != 0) continue;
      Value v;
      const auto pick = splitmix(seed) % 4;
      if (pick == 0) {
        v = special[splitmix(seed) % std::size(special)];
      } else {
        do v = std::bit_cast<Value>(static_cast<Bits>(splitmix(seed))); while (!std::isfinite(v));
      }
      a.col_idx.push_back(c);
      a.values.push_back(v);
    }
    a.row_ptr.push_back(static_cast<Index>(a.col_idx.size()));
  }
  return a;
}

template <class Value, class Index>
void expect_same(const CsrMatrix<Value, Index>& a, const CsrMatrix<Value, Index>& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  ASSERT_EQ(a.row_ptr, b.row_ptr);
  ASSERT_EQ(a.col_idx, b.col_idx);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (std::size_t k = 0; k < a.values.size(); ++k)
    ASSERT_TRUE(same_bits(a.values[k], b.values[k])) << "entry " << k << ": " << a.values[k] << " vs " << b.values[k];
}

template <class Value, class Index>
void round_trip(const std::string& path) {
  const auto a = random_csr<Value, Index>(41, 57, 1234);
  ASSERT_GT(a.nnz(), 300);
  write_matrix_market(path, a);
  expect_same(read_csr<Value, Index>(path), a);
}

TEST_F(MatrixMarketFiles, RoundTripIsExactForDouble) { round_trip<double, std::int64_t>(path("d.mtx")); }
TEST_F(MatrixMarketFiles, RoundTripIsExactForFloat) { round_trip<float, std::int32_t>(path("f.mtx")); }
TEST_F(MatrixMarketFiles, RoundTripIsExactThroughGzip) {
  round_trip<double, std::int32_t>(path("d.mtx.gz"));
  round_trip<float, std::int64_t>(path("f.mtx.gz"));
  EXPECT_TRUE(detail::is_gzip(slurp(path("d.mtx.gz"))));
}

TEST_F(MatrixMarketFiles, RoundTripKeepsNaN) {
  CsrMatrix<double, std::int32_t> a{1, 2, {0, 2}, {0, 1}, {std::nan(""), -std::nan("")}};
  write_matrix_market(path("nan.mtx"), a);
  const auto b = read_csr<double, std::int32_t>(path("nan.mtx"));
  ASSERT_EQ(b.nnz(), 2);
  EXPECT_TRUE(std::isnan(b.values[0]));
  EXPECT_TRUE(std::isnan(b.values[1]));
}

TEST(MatrixMarketWrite, ExactText) {
  CsrMatrix<double, std::int32_t> a{2, 3, {0, 2, 3}, {0, 2, 1}, {1.0, 0.1, -2.5}};
  EXPECT_EQ(detail::format_matrix_market(a),
            "%%MatrixMarket matrix coordinate real general\n% written by spmv\n2 3 3\n1 1 1\n1 3 0.10000000000000001\n"
            "2 2 -2.5\n");
  CsrMatrix<float, std::int64_t> f{2, 3, {0, 2, 3}, {0, 2, 1}, {1.0f, 0.1f, -2.5f}};
  EXPECT_EQ(detail::format_matrix_market(f),
            "%%MatrixMarket matrix coordinate real general\n% written by spmv\n2 3 3\n1 1 1\n1 3 0.100000001\n2 2 -2.5\n");
  CsrMatrix<double, std::int64_t> empty;
  EXPECT_EQ(detail::format_matrix_market(empty), "%%MatrixMarket matrix coordinate real general\n% written by spmv\n0 0 0\n");
}

TEST(MatrixMarketWrite, DuplicatesWrittenAsStoredAreSummedOnRead) {
  CsrMatrix<double, std::int64_t> a{1, 3, {0, 3}, {2, 0, 2}, {1.0, 2.0, 0.5}};
  const auto coo = parse_matrix_market(detail::format_matrix_market(a)).matrix;
  const auto b = to_csr<double, std::int64_t>(coo, Duplicates::Sum);
  EXPECT_EQ(b.col_idx, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(b.values, (std::vector<double>{2.0, 1.5}));  // 1.0 + 0.5 is exact
}

TEST_F(MatrixMarketFiles, WriteErrors) {
  CsrMatrix<double, std::int32_t> a{1, 1, {0, 1}, {0}, {1.0}};
  const std::string missing_dir = path("no/such/dir/a.mtx");
  try {
    write_matrix_market(missing_dir, a);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing_dir), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_matrix_market(path("no/such/dir/a.mtx.gz"), a), Error);
  // An invalid matrix is refused before the file is created.
  CsrMatrix<double, std::int32_t> bad{1, 1, {0, 1}, {3}, {1.0}};
  EXPECT_THROW(write_matrix_market(path("bad.mtx"), bad), InvalidArgument);
  EXPECT_FALSE(fs::exists(path("bad.mtx")));
}

TEST_F(MatrixMarketFiles, ReadErrorsNameThePathAndTheReason) {
  const std::string missing = path("missing.mtx");
  try {
    read_matrix_market(missing);
    FAIL() << "no error";
  } catch (const ParseError&) {
    FAIL() << "a missing file is not a parse error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
  try {
    read_matrix_market(dir_.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::strerror(EISDIR)), std::string::npos) << e.what();
  }
  // Parse errors in a file name its path.
  put(path("bad.mtx"), kGeneral + "2 2 1\n1 1 x\n");
  try {
    read_matrix_market(path("bad.mtx"));
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path("bad.mtx") + ":3: ", 0), 0u) << e.what();
  }
  EXPECT_THROW((read_csr<double, std::int32_t>(missing)), Error);
  EXPECT_THROW(read_vector(missing), Error);
}

TEST_F(MatrixMarketFiles, GzipDetectedByContentNotName) {
  const std::string text = kGeneral + "2 2 2\n1 1 1\n2 2 2\n";
  put(path("plain.gz"), text);                 // plain text named .gz
  put(path("compressed.mtx"), gzip_member(text));  // gzip named .mtx
  EXPECT_EQ(triplets(read_matrix_market(path("plain.gz")).matrix), triplets(parse(text).matrix));
  EXPECT_EQ(triplets(read_matrix_market(path("compressed.mtx")).matrix), triplets(parse(text).matrix));
}

TEST_F(MatrixMarketFiles, MultiMemberGzip) {
  const std::string text = kGeneral + "% split across members\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n";
  const std::size_t cut1 = 30, cut2 = 70;  // inside the banner and inside an entry line
  put(path("multi.mtx.gz"), gzip_member(text.substr(0, cut1)) + gzip_member(text.substr(cut1, cut2 - cut1)) +
                                gzip_member("") + gzip_member(text.substr(cut2)));
  EXPECT_EQ(triplets(read_matrix_market(path("multi.mtx.gz")).matrix), triplets(parse(text).matrix));
  // A member larger than one stored block (65535 bytes).
  std::string big = kGeneral + "1 1 20000\n";
  for (int k = 0; k < 20000; ++k) big += "1 1 " + std::to_string(k) + "\n";
  put(path("big.mtx.gz"), gzip_member(big.substr(0, 100000)) + gzip_member(big.substr(100000)));
  EXPECT_EQ(read_matrix_market(path("big.mtx.gz")).matrix.nnz(), 20000);
}

void expect_gzip_error(const std::string& path, std::string_view part) {
  try {
    read_matrix_market(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const ParseError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(part), std::string::npos) << "expected '" << part << "' in: " << message;
  }
}

TEST_F(MatrixMarketFiles, CorruptGzipIsAParseErrorNamingTheFile) {
  const std::string good = gzip_member(kGeneral + "1 1 1\n1 1 1\n");
  std::string bad_crc = good;
  bad_crc[bad_crc.size() - 6] ^= 0x01;
  put(path("crc.mtx.gz"), bad_crc);
  expect_gzip_error(path("crc.mtx.gz"), "corrupt gzip data");
  put(path("truncated.mtx.gz"), good.substr(0, good.size() - 3));
  expect_gzip_error(path("truncated.mtx.gz"), "truncated gzip data");
  put(path("magic_only.mtx.gz"), good.substr(0, 2));
  expect_gzip_error(path("magic_only.mtx.gz"), "truncated gzip data");
  put(path("trailing.mtx.gz"), good + "garbage");
  expect_gzip_error(path("trailing.mtx.gz"), "unexpected bytes after the gzip data");
  std::string bad_block = good;
  bad_block[10] = 0x07;  // BTYPE = 11: reserved
  put(path("block.mtx.gz"), bad_block);
  expect_gzip_error(path("block.mtx.gz"), "corrupt gzip data");
  std::string bad_method = good;
  bad_method[2] = 0x07;  // compression method other than deflate
  put(path("method.mtx.gz"), bad_method);
  expect_gzip_error(path("method.mtx.gz"), "corrupt gzip data");
  // Also through the in-memory entry point the fuzzer uses.
  EXPECT_THROW(detail::gunzip(bad_crc, "x"), ParseError);
  EXPECT_EQ(detail::gunzip(good, "x"), kGeneral + "1 1 1\n1 1 1\n");
}

// The text a line-range stream delivers, read `block` bytes at a time; delivered() counts it all.
std::string read_line_range(const std::string& file, std::int64_t skip, std::int64_t first, std::int64_t last,
                            std::size_t block) {
  detail::InputStream in(file, skip, first, last);
  EXPECT_EQ(in.known_size(), -1);
  std::string out, buf(block, '\0');
  for (std::size_t n; (n = in.read(buf.data(), block)) > 0;) out.append(buf.data(), n);
  EXPECT_EQ(in.delivered(), static_cast<std::int64_t>(out.size()));
  return out;
}

// Lines [first, last) of `text` after its first `skip` bytes, each with its '\n' (the last may lack it).
std::string lines_of(std::string_view text, std::size_t skip, std::int64_t first, std::int64_t last) {
  std::string out;
  std::int64_t line = 0;
  for (std::size_t at = skip; at < text.size() && line < last; ++line) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t next = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line >= first) out.append(text.substr(at, next - at));
    at = next;
  }
  return out;
}

// The stream behind dist::read_matrix_market's gzip shares: exactly the bytes of lines [first, last) after
// the preamble, ending at the '\n' of line last - 1 or at the end of the text, across the reader's
// blocks (1 MB, and 7 bytes) and the inflated text's 1 MB raw chunks; ranges at the start, to the end,
// empty ones, a last line without '\n', Windows line endings; gzip (one deflate member, stored members)
// and plain text alike.
TEST_F(MatrixMarketFiles, LineRangeStreamDeliversItsLinesOnly) {
  constexpr std::int64_t kLines = 150000;  // and one without '\n'
  const std::string preamble = kGeneral + "% comment\n9 9 150001\n";
  std::string body;
  for (int k = 0; k < kLines; ++k)
    body += std::to_string(1 + k % 9) + " " + std::to_string(1 + k * 7 % 9) + " " + std::to_string(k * 0.37) +
            (k % 5 == 0 ? "\r\n" : "\n");
  body += "9 9 1";  // no final '\n'
  const std::string text = preamble + body;
  ASSERT_GT(text.size(), std::size_t{2} << 20);
  {
    detail::OutputFile out(path("deflate.mtx.gz"));
    out.write(text);
    out.close();
  }
  put(path("stored.mtx.gz"), gzip_member(text.substr(0, 1500000)) + gzip_member(text.substr(1500000)));
  put(path("plain.mtx"), text);
  constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();
  const auto line_at = [&](std::size_t byte) {  // the body's line holding the text's byte `byte`
    return static_cast<std::int64_t>(std::count(body.begin(), body.begin() + static_cast<long>(byte - preamble.size()),
                                                '\n'));
  };
  const std::int64_t mb1 = line_at(std::size_t{1} << 20), mb2 = line_at(std::size_t{2} << 20);
  const std::pair<std::int64_t, std::int64_t> ranges[] = {
      {0, kEnd},  {0, 0},       {0, 1},          {mb1 - 3, mb1 + 4}, {mb1, mb1 + 1}, {mb1, mb1},   {mb1 - 1, mb2 + 1},
      {17, mb1},  {mb2, kEnd},  {kLines - 1, kLines}, {kLines - 1, kEnd}, {kLines, kEnd}, {kLines + 1, kEnd},
      {0, kLines}};
  for (const char* name : {"deflate.mtx.gz", "stored.mtx.gz", "plain.mtx"})
    for (const auto& [first, last] : ranges) {
      SCOPED_TRACE(std::string(name) + " lines " + std::to_string(first) + " to " + std::to_string(last));
      const std::string want = lines_of(text, preamble.size(), first, last);
      EXPECT_EQ(read_line_range(path(name), static_cast<std::int64_t>(preamble.size()), first, last,
                                std::size_t{1} << 20),
                want);
      if (last - first < 20 || (last == kEnd && first >= kLines - 1))
        EXPECT_EQ(read_line_range(path(name), static_cast<std::int64_t>(preamble.size()), first, last, 7), want);
    }
  // Without a skip the preamble's lines count too; a text that ends inside the skipped bytes delivers nothing.
  EXPECT_EQ(read_line_range(path("deflate.mtx.gz"), 0, 1, 3, 4096), lines_of(text, 0, 1, 3));
  put(path("short.mtx.gz"), gzip_member(kGeneral));
  EXPECT_EQ(read_line_range(path("short.mtx.gz"), static_cast<std::int64_t>(kGeneral.size()) + 5, 0, kEnd, 64), "");
}

// The BGZF pieces behind dist::read_matrix_market's BGZF shares. Members found from any offset are the
// first ones at or after it; their ISIZE sums give the text's size; and for every way of cutting the
// members into shares (empty ones, ones inside the preamble, with CRLF, comments, a last line without
// '\n', members starting at line starts), the shares' streams deliver the entry section exactly once,
// in order (Hadoop LineRecordReader's rule), read in large and in 7-byte blocks.
TEST_F(MatrixMarketFiles, BgzfSharesDeliverEachLineOnce) {
  const std::string preamble = kGeneral + "% a comment longer than a member: " + std::string(150, 'c') + "\r\n9 9 40\n";
  std::string body;
  for (int k = 0; k < 40; ++k)
    body += std::to_string(1 + k % 9) + " " + std::to_string(1 + k * 7 % 9) + " " + std::to_string(k * 0.37) +
            (k % 5 == 0 ? "\r\n" : k % 7 == 0 ? "\n% c\n\n" : "\n");
  body += "9 9 1";  // no final '\n'
  const std::string text = preamble + body;
  const auto data = static_cast<std::int64_t>(preamble.size());
  std::vector<std::size_t> line_starts;
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) line_starts.push_back(at + 1);
  for (const auto& cuts : {std::vector<std::size_t>{}, line_starts, [&] {
                             std::vector<std::size_t> every_37;
                             for (std::size_t at = 37; at < text.size(); at += 37) every_37.push_back(at);
                             return every_37;
                           }()}) {
    const std::string bytes = test::bgzf_cut_at(text, cuts);
    put(path("t.mtx.gz"), bytes);
    const std::string file = path("t.mtx.gz");
    ASSERT_TRUE(detail::is_bgzf(file));
    // The members: compressed offsets and the text offsets they start at (the EOF member last, empty).
    std::vector<std::int64_t> member{0}, text_at{0};
    for (std::size_t at = 0; at < bytes.size();) {
      at += 1 + static_cast<unsigned char>(bytes[at + 16]) + 256 * static_cast<std::size_t>(static_cast<unsigned char>(bytes[at + 17]));
      member.push_back(static_cast<std::int64_t>(at));
      text_at.push_back(text_at.back() + detail::bgzf_text_size(file, member[member.size() - 2], member.back()));
    }
    EXPECT_EQ(text_at.back(), static_cast<std::int64_t>(text.size()));
    EXPECT_EQ(detail::bgzf_text_size(file, 0, member.back()), static_cast<std::int64_t>(text.size()));
    for (std::int64_t offset = 0, m = 0; offset <= member.back(); ++offset) {
      while (member[static_cast<std::size_t>(m)] < offset) ++m;
      ASSERT_EQ(detail::bgzf_member_at_or_after(file, offset), member[static_cast<std::size_t>(m)]) << offset;
    }
    // Shares of members: every split of the member list into up to 4 shares at chosen member indices.
    const auto members = static_cast<int>(member.size());
    const auto share_text = [&](int from, int to, bool last, std::size_t block) {
      const detail::BgzfShare share{member[static_cast<std::size_t>(from)], text_at[static_cast<std::size_t>(from)],
                                    last ? std::numeric_limits<std::int64_t>::max() : text_at[static_cast<std::size_t>(to)],
                                    data};
      detail::InputStream in(file, share);
      EXPECT_EQ(in.known_size(), -1);
      std::string out, buf(block, '\0');
      for (std::size_t n; (n = in.read(buf.data(), block)) > 0;) out.append(buf.data(), n);
      return out;
    };
    for (int a = 0; a < members; ++a)
      for (int b = a; b < members; b += 1 + (b % 3)) {
        SCOPED_TRACE("cuts " + std::to_string(cuts.size()) + ", shares at members 0 " + std::to_string(a) + " " +
                     std::to_string(b));
        const std::string got = share_text(0, a, false, 1 << 16) + share_text(a, b, false, 1 << 16) +
                                share_text(b, members - 1, true, 1 << 16);
        ASSERT_EQ(got, body);
        if (a % 4 == 0) ASSERT_EQ(share_text(0, a, false, 7) + share_text(a, b, false, 7) + share_text(b, 0, true, 7), body);
      }
  }
  // A member cut short, and one whose size leads nowhere: ParseErrors naming the file and the member.
  const std::string bytes = test::bgzf(text, 100);
  put(path("cut.mtx.gz"), bytes.substr(0, bytes.size() - 40));
  const std::int64_t second = 1 + static_cast<unsigned char>(bytes[16]) + 256 * static_cast<unsigned char>(bytes[17]);
  const auto error_of = [](auto&& f) {
    try {
      f();
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of([&] { detail::bgzf_text_size(path("cut.mtx.gz"), 0, static_cast<std::int64_t>(bytes.size()) - 40); })
                .find("cut.mtx.gz: bad BGZF member at compressed offset"),
            std::string::npos);
  std::string wrong = bytes;
  wrong[16] = static_cast<char>(wrong[16] - 1);
  put(path("wrong.mtx.gz"), wrong);
  EXPECT_NE(error_of([&] { detail::bgzf_text_size(path("wrong.mtx.gz"), 0, static_cast<std::int64_t>(wrong.size())); })
                .find("wrong.mtx.gz: bad BGZF member at compressed offset 0: its size leads to offset " +
                      std::to_string(second - 1)),
            std::string::npos);
  EXPECT_EQ(detail::bgzf_member_at_or_after(path("wrong.mtx.gz"), 1), second);  // past the bad chain
  // Not BGZF: a plain gzip file, plain text.
  put(path("plain.mtx.gz"), gzip_member(text));
  put(path("plain.mtx"), text);
  EXPECT_FALSE(detail::is_bgzf(path("plain.mtx.gz")));
  EXPECT_FALSE(detail::is_bgzf(path("plain.mtx")));
}

// Runs f with standard input (fd 0) read from `file`.
template <class F>
auto with_stdin(const std::string& file, F&& f) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  const int saved = ::dup(0);
  ::dup2(fd, 0);
  ::close(fd);
  struct Restore {
    int saved;
    ~Restore() {
      ::dup2(saved, 0);
      ::close(saved);
    }
  } restore{saved};
  return f();
}

TEST_F(MatrixMarketFiles, ReadsStandardInput) {
  const std::string text = "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n";
  put(path("in.mtx"), text);
  put(path("in.mtx.gz"), gzip_member(text));
  const auto expected = triplets(parse(text).matrix);
  EXPECT_EQ(triplets(with_stdin(path("in.mtx"), [] { return read_matrix_market("-"); }).matrix), expected);
  EXPECT_EQ(triplets(with_stdin(path("in.mtx.gz"), [] { return read_matrix_market("-"); }).matrix), expected);
  put(path("bad.mtx"), text + "1 1\n");
  try {
    with_stdin(path("bad.mtx"), [] { return read_matrix_market("-"); });
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("<stdin>:4: ", 0), 0u) << e.what();
  }
  put(path("v.txt"), "1\n2\n");
  EXPECT_EQ(with_stdin(path("v.txt"), [] { return read_vector("-"); }), (std::vector<double>{1.0, 2.0}));
}

TEST_F(MatrixMarketFiles, WritesStandardOutput) {
  CsrMatrix<double, std::int32_t> a{2, 2, {0, 1, 2}, {1, 0}, {0.5, -3.0}};
  std::fflush(stdout);
  const int fd = ::open(path("out.mtx").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const int saved = ::dup(1);
  ::dup2(fd, 1);
  ::close(fd);
  std::string error;
  try {
    write_matrix_market("-", a);
    write_vector("-", std::vector<double>{1.25});
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  EXPECT_EQ(error, "");
  EXPECT_EQ(slurp(path("out.mtx")), detail::format_matrix_market(a) +
                                         "%%MatrixMarket matrix array real general\n% written by spmv\n1 1\n1.25\n");
}

// ---------------------------------------------------------------------------------------------
// Vectors

TEST_F(MatrixMarketFiles, VectorRoundTripIsExact) {
  std::uint64_t seed = 99;
  std::vector<double> v = {0.0, -0.0, 0.1, 1e-310, -1.7976931348623157e308, std::numeric_limits<double>::infinity()};
  for (int k = 0; k < 200; ++k) {
    double x;
    do x = std::bit_cast<double>(splitmix(seed)); while (!std::isfinite(x));
    v.push_back(x);
  }
  for (const std::string name : {"v.mtx", "v.mtx.gz"}) {
    write_vector(path(name), v);
    const auto w = read_vector(path(name));
    ASSERT_EQ(w.size(), v.size()) << name;
    for (std::size_t k = 0; k < v.size(); ++k) EXPECT_TRUE(same_bits(w[k], v[k])) << name << " entry " << k;
  }
  write_vector(path("empty.mtx"), std::vector<double>{});
  EXPECT_TRUE(read_vector(path("empty.mtx")).empty());
}

TEST_F(MatrixMarketFiles, VectorFormats) {
  put(path("plain.txt"), "# values\n1.5\n\n  -2 \r\n% more\n3e2\n+4");
  EXPECT_EQ(read_vector(path("plain.txt")), (std::vector<double>{1.5, -2.0, 300.0, 4.0}));
  put(path("int.mtx"), "%%MatrixMarket matrix array integer general\n% c\n3 1\n1\n-2\n3\n");
  EXPECT_EQ(read_vector(path("int.mtx")), (std::vector<double>{1.0, -2.0, 3.0}));
  put(path("empty.txt"), "");
  EXPECT_TRUE(read_vector(path("empty.txt")).empty());
}

void expect_vector_error(const std::string& path, const std::string& prefix, std::string_view part) {
  try {
    read_vector(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const ParseError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << "expected prefix '" << prefix << "', got: " << message;
    EXPECT_NE(message.find(part), std::string::npos) << "expected '" << part << "' in: " << message;
  }
}

TEST_F(MatrixMarketFiles, VectorErrors) {
  put(path("two.txt"), "1\n2 3\n");
  expect_vector_error(path("two.txt"), path("two.txt") + ":2: ", "unexpected '3' after the number");
  put(path("word.txt"), "1\n\n# c\nabc\n");
  expect_vector_error(path("word.txt"), path("word.txt") + ":4: ", "expected a number, found 'abc'");
  put(path("big.txt"), "1e400\n");
  expect_vector_error(path("big.txt"), path("big.txt") + ":1: ", "out of range");
  put(path("coo.mtx"), kGeneral + "2 1 1\n1 1 1\n");
  expect_vector_error(path("coo.mtx"), path("coo.mtx") + ":1: ", "coordinate format");
  put(path("wide.mtx"), "%%MatrixMarket matrix array real general\n% c\n2 2\n1\n2\n3\n4\n");
  expect_vector_error(path("wide.mtx"), path("wide.mtx") + ":3: ", "one column, this array has 2");
  put(path("short.mtx"), "%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  expect_vector_error(path("short.mtx"), path("short.mtx") + ":5: ", "file ends after 2 of the 3 values");
}

// ---------------------------------------------------------------------------------------------
// read_csr

TEST_F(MatrixMarketFiles, ReadCsrSumsDuplicatesAndSortsColumns) {
  put(path("dup.mtx"), kGeneral + "2 3 4\n2 3 1\n1 3 2\n1 1 3\n1 3 0.25\n");
  const auto a = read_csr<float, std::int32_t>(path("dup.mtx"));
  EXPECT_EQ(a.row_ptr, (std::vector<std::int32_t>{0, 2, 3}));
  EXPECT_EQ(a.col_idx, (std::vector<std::int32_t>{0, 2, 2}));
  EXPECT_EQ(a.values, (std::vector<float>{3.0f, 2.25f, 1.0f}));  // sums of dyadic numbers: exact
}

// read_csr builds the CSR from 32-bit stored entries (64-bit when the size needs them) and frees them
// array by array: it must give what to_csr gives from read_matrix_market's COO, for every symmetry,
// from plain and gzip files, for both index widths and both value types.
TEST_F(MatrixMarketFiles, ReadCsrMatchesToCsrOfTheCoo) {
  for (const char* symmetry : {"general", "symmetric", "skew-symmetric"}) {
    SCOPED_TRACE(symmetry);
    std::uint64_t seed = 5;
    const int n = 300, entries = 20000;
    std::string text = std::string("%%MatrixMarket matrix coordinate real ") + symmetry + "\n% c\n" +
                       std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(entries) + "\n";
    for (int k = 0; k < entries; ++k) {
      auto i = static_cast<int>(splitmix(seed) % n) + 1, j = static_cast<int>(splitmix(seed) % n) + 1;
      if (std::string(symmetry) == "skew-symmetric" && i == j) i = i % n + 1;
      text += std::to_string(i) + " " + std::to_string(j) + " " + std::to_string(static_cast<int>(splitmix(seed) % 1000)) +
              "e-3\n";
    }
    put(path("r.mtx"), text);
    const auto coo = read_matrix_market(path("r.mtx")).matrix;
    const auto expected = to_csr<double, std::int64_t>(coo, Duplicates::Sum);
    const auto a = read_csr<double, std::int64_t>(path("r.mtx"));
    EXPECT_EQ(a.row_ptr, expected.row_ptr);
    EXPECT_EQ(a.col_idx, expected.col_idx);
    ASSERT_EQ(a.values.size(), expected.values.size());
    for (std::size_t k = 0; k < a.values.size(); ++k) EXPECT_TRUE(same_bits(a.values[k], expected.values[k])) << k;
    const auto b = read_csr<float, std::int32_t>(path("r.mtx"));
    const auto expected_b = to_csr<float, std::int32_t>(coo, Duplicates::Sum);
    EXPECT_EQ(b.row_ptr, expected_b.row_ptr);
    EXPECT_EQ(b.col_idx, expected_b.col_idx);
    EXPECT_EQ(b.values, expected_b.values);
    put(path("r.mtx.gz"), gzip_member(text));
    const auto c = read_csr<double, std::int32_t>(path("r.mtx.gz"));
    EXPECT_EQ(c.col_idx, std::vector<std::int32_t>(expected.col_idx.begin(), expected.col_idx.end()));
  }
}

// ReadOptions::max_memory: refused from the size line, before reading the entries, naming both sizes;
// a limit the matrix fits in changes nothing.
TEST_F(MatrixMarketFiles, MaxMemoryRefusesFromTheSizeLine) {
  put(path("m.mtx"), kGeneral + "% c\n1000000 1000000 2\n1 1 1\n");  // one entry missing: never reached
  ReadOptions small;
  small.max_memory = 1000000;  // 1 MB, less than the 8 MB of row pointers of read_csr<double, int64>
  try {
    read_csr<double, std::int64_t>(path("m.mtx"), small);
    ADD_FAILURE() << "no MemoryLimitExceeded";
  } catch (const MemoryLimitExceeded& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path("m.mtx") + ":3: reading this 1000000 x 1000000 matrix with 2 entries needs at least ", 0),
              0u)
        << message;
    EXPECT_NE(message.find("more than the max_memory limit of 1.0 MB"), std::string::npos) << message;
  }
  // The COO has no per-row arrays: what the caller adds per row is what makes it too large here.
  EXPECT_THROW(read_matrix_market(path("m.mtx"), small), ParseError);  // fits: reads on to the missing entry
  ReadOptions with_vectors = small;
  with_vectors.extra_bytes_per_row = 8;
  EXPECT_THROW(read_matrix_market(path("m.mtx"), with_vectors), MemoryLimitExceeded);
  ReadOptions per_column = small;
  per_column.extra_bytes_per_column = 8;
  EXPECT_THROW(read_matrix_market(path("m.mtx"), per_column), MemoryLimitExceeded);
  // Entries count too: 10^5 declared entries need more than 1 MB, but a plain file's size caps them.
  put(path("e.mtx"), kGeneral + "10 10 100000\n1 1 1\n");
  EXPECT_THROW(read_matrix_market(path("e.mtx"), small), ParseError);  // capped by the 20-odd bytes
  put(path("e.mtx.gz"), gzip_member(kGeneral + "10 10 100000\n1 1 1\n"));
  EXPECT_THROW(read_matrix_market(path("e.mtx.gz"), small), MemoryLimitExceeded);  // size unknown
  ReadOptions large;
  large.max_memory = 100000000;
  put(path("ok.mtx"), kGeneral + "1000000 1000000 1\n1 1 1\n");
  EXPECT_EQ((read_csr<double, std::int64_t>(path("ok.mtx"), large).nnz()), 1);
}

TEST_F(MatrixMarketFiles, ReadCsrRefusesIndicesTooSmall) {
  put(path("wide.mtx"), kGeneral + "1 3000000000 1\n1 2999999999 1\n");
  EXPECT_THROW((read_csr<double, std::int32_t>(path("wide.mtx"))), Unsupported);
  const auto a = read_csr<double, std::int64_t>(path("wide.mtx"));
  EXPECT_EQ(a.col_idx, (std::vector<std::int64_t>{2999999998}));
}

// ---------------------------------------------------------------------------------------------
// The shared SuiteSparse matrices (/work/shared/matrices/README.md)

struct Expected {
  const char* field;
  const char* symmetry;
  std::int64_t rows, cols, nnz_full;
};
const std::map<std::string, Expected> kTable = {
    {"EX5.mtx.gz", {"real", "general", 6545, 6545, 295680}},
    {"PGPgiantcompo.mtx.gz", {"real", "general", 10680, 10680, 48632}},
    {"Pd.mtx.gz", {"real", "general", 8081, 8081, 13036}},
    {"add32.mtx.gz", {"real", "general", 4960, 4960, 23884}},
    {"adder_dcop_05.mtx.gz", {"real", "general", 1813, 1813, 11097}},
    {"bayer10.mtx.gz", {"real", "general", 13436, 13436, 94926}},
    {"bcsstk13.mtx.gz", {"real", "symmetric", 2003, 2003, 83883}},
    {"bcsstk16.mtx.gz", {"real", "symmetric", 4884, 4884, 290378}},
    {"cage10.mtx.gz", {"real", "general", 11397, 11397, 150645}},
    {"cage8.mtx.gz", {"real", "general", 1015, 1015, 11003}},
    {"cryg2500.mtx.gz", {"real", "general", 2500, 2500, 12349}},
    {"cs4.mtx.gz", {"real", "general", 22499, 22499, 87716}},
    {"ct2010.mtx.gz", {"real", "general", 67578, 67578, 336352}},
    {"cti.mtx.gz", {"real", "general", 16840, 16840, 96464}},
    {"ex6.mtx.gz", {"real", "general", 1651, 1651, 49533}},
    {"lp_afiro.mtx.gz", {"real", "general", 27, 51, 102}},
    {"luxembourg_osm.mtx.gz", {"pattern", "symmetric", 114599, 114599, 239332}},
    {"nh2010.mtx.gz", {"real", "general", 48837, 48837, 234550}},
    {"watt_2.mtx.gz", {"real", "general", 1856, 1856, 11550}},
    {"west0067.mtx.gz", {"real", "general", 67, 67, 294}},
    {"whitaker3.mtx.gz", {"pattern", "symmetric", 9800, 9800, 57978}},
    {"zenios.mtx.gz", {"real", "symmetric", 2873, 2873, 27191}},
};

TEST(MatrixMarketShared, EveryFileMatchesTheTable) {
  const auto files = test::shared_matrix_files();
  if (files.empty()) GTEST_SKIP() << "no shared matrices in " << test::shared_matrices_dir();
  int checked = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const auto f = read_matrix_market(file.string());
    EXPECT_EQ(f.header.format, "coordinate");
    EXPECT_NO_THROW(validate(f.matrix));
    // SuiteSparse files hold no duplicates, so summing them changes nothing.
    const auto csr = to_csr<double, std::int32_t>(f.matrix, Duplicates::Sum);
    EXPECT_EQ(csr.nnz(), f.matrix.nnz());
    const auto it = kTable.find(file.filename().string());
    if (it == kTable.end()) continue;
    const Expected& e = it->second;
    EXPECT_EQ(f.header.field, e.field);
    EXPECT_EQ(f.header.symmetry, e.symmetry);
    EXPECT_EQ(f.matrix.rows, e.rows);
    EXPECT_EQ(f.matrix.cols, e.cols);
    EXPECT_EQ(f.matrix.nnz(), e.nnz_full);
    ++checked;
  }
  EXPECT_GE(checked, 3) << "the shared folder no longer holds the files of the table";
}

TEST_F(MatrixMarketFiles, SharedMatrixSurvivesWriteAndRead) {
  const auto source = test::shared_matrices_dir() / "bcsstk13.mtx.gz";
  if (!fs::exists(source)) GTEST_SKIP() << source << " not found";
  const auto a = read_csr<double, std::int64_t>(source.string());
  EXPECT_EQ(a.nnz(), 83883);
  write_matrix_market(path("b.mtx.gz"), a);
  expect_same(read_csr<double, std::int64_t>(path("b.mtx.gz")), a);
}

// ---------------------------------------------------------------------------------------------
// Inputs found by fuzzing (fuzz/corpus/regression-*) stay fixed.

}  // namespace
}  // namespace spmv
