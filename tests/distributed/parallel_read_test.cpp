// dist::read_matrix_market by byte ranges (every rank parses its share of the file) against the root
// read (rank 0 reads with read_csr and scatters): the same row and column partitions and bit-equal CSR
// arrays on every rank, on SuiteSparse files, on adversarial files written here and on random ones; the
// same error (file and line) on every rank for malformed files, and no hang (ctest's TIMEOUT).
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/bgzf.hpp"
#include "core/matrix_market_io.hpp"
#include "distributed/mpi_util.hpp"
#include "distributed/read_matrix_market.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv::dist {
namespace {

namespace fs = std::filesystem;
using spmv::test::bgzf;
using spmv::test::bgzf_cut_at;

// A folder of this run's files, the same on every rank (rank 0's pid), removed at the end.
class Scratch {
 public:
  explicit Scratch(const Communicator& comm) : comm_(comm) {
    long pid = static_cast<long>(::getpid());
    MPI_Bcast(&pid, 1, MPI_LONG, 0, comm.get());
    dir_ = fs::temp_directory_path() / ("spmv_parallel_read_" + std::to_string(pid));
    if (comm.rank() == 0) fs::create_directories(dir_);
    MPI_Barrier(comm.get());
  }
  ~Scratch() {
    MPI_Barrier(comm_.get());
    if (comm_.rank() == 0) fs::remove_all(dir_);
  }
  // Rank 0 writes `text` to `name`; every rank returns its path once it is written.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    if (comm_.rank() == 0) std::ofstream(path, std::ios::binary) << text;
    MPI_Barrier(comm_.get());
    return path;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The same, gzip-compressed (the name should end in .gz).
  std::string write_gz(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    if (comm_.rank() == 0) {
      spmv::detail::OutputFile out(path);
      out.write(text);
      out.close();
    }
    MPI_Barrier(comm_.get());
    return path;
  }

 private:
  const Communicator& comm_;
  fs::path dir_;
};

template <class Value>
auto bits(const std::vector<Value>& v) {
  using Bits = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  std::vector<Bits> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<Bits>(v[i]);
  return b;
}

template <class Value>
void expect_same_rows(const LocalRows<Value>& got, const LocalRows<Value>& want) {
  EXPECT_EQ(got.global_rows, want.global_rows);
  EXPECT_EQ(got.global_cols, want.global_cols);
  EXPECT_EQ(got.rows.offsets, want.rows.offsets);
  EXPECT_EQ(got.cols.offsets, want.cols.offsets);
  EXPECT_EQ(got.matrix.rows, want.matrix.rows);
  EXPECT_EQ(got.matrix.cols, want.matrix.cols);
  EXPECT_EQ(got.matrix.row_ptr, want.matrix.row_ptr);
  EXPECT_EQ(got.matrix.col_idx, want.matrix.col_idx);
  EXPECT_EQ(bits(got.matrix.values), bits(want.matrix.values));  // bit-equal, NaN and -0 included
  EXPECT_TRUE(got.permutation.empty());
}

// The byte-range read of `path` equals the root read, for both partitions (and, with `round_bytes`, an
// exchange in rounds of that many bytes).
template <class Value = double>
void expect_same_read(const Communicator& comm, const std::string& path,
                      std::int64_t round_bytes = detail::kAlltoallRoundBytes) {
  for (PartitionKind kind : {PartitionKind::Nonzeros, PartitionKind::Rows}) {
    SCOPED_TRACE(path + (kind == PartitionKind::Rows ? " (rows)" : " (nonzeros)"));
    const auto root = read_matrix_market<Value>(comm, path, kind, {}, ReadMode::Root);
    const auto ranges = detail::read_matrix_market<Value>(comm, path, kind, {}, ReadMode::ByteRanges, round_bytes);
    expect_same_rows(ranges, root);
  }
}

// What `read` throws on this rank: "TYPE: message" without the "rank R: " prefix, or "" when it returns.
std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const ParseError& e) {
    std::string m = e.what();
    if (m.rfind("rank ", 0) == 0) m = m.substr(m.find(": ") + 2);
    return "ParseError: " + m;
  } catch (const Error& e) {
    return std::string("Error: ") + e.what();
  }
  return "";
}

// Both reads fail with the same ParseError naming the file and `line` (on every rank: each checks).
void expect_same_error(const Communicator& comm, const std::string& path, std::int64_t line,
                       const std::string& fragment) {
  SCOPED_TRACE(path);
  for (PartitionKind kind : {PartitionKind::Nonzeros, PartitionKind::Rows}) {
    const std::string root = error_of([&] { read_matrix_market<double>(comm, path, kind, {}, ReadMode::Root); });
    const std::string ranges =
        error_of([&] { read_matrix_market<double>(comm, path, kind, {}, ReadMode::ByteRanges); });
    EXPECT_EQ(ranges, root);
    EXPECT_EQ(ranges.rfind("ParseError: " + path + ":" + std::to_string(line) + ": ", 0), 0u) << ranges;
    EXPECT_NE(ranges.find(fragment), std::string::npos) << ranges;
  }
}

const char* kBanner = "%%MatrixMarket matrix coordinate ";

// Files for the error tests: the size line is line 3; 60 entries of rows 1-9 and columns 1-7.
const std::string kErrorsHead = std::string(kBanner) + "real general\n%c\n";
std::string sixty_entries() {
  std::string good;
  for (int k = 0; k < 60; ++k) good += std::to_string(1 + k % 9) + " " + std::to_string(1 + k % 7) + " 1.25\n";
  return good;
}

// The entry section's errors, in files made by `write(name, text)` (plain or gzip): a bad line at the
// start, in the middle and at the end of the entries (on the first, a middle and the last rank); too
// many entries (the first line past the count, before any later bad line; past a count of 0); too few
// (the line after the last, with and without a final '\n', and with no entry line at all).
void expect_entry_errors(const Communicator& comm,
                         const std::function<std::string(const std::string&, const std::string&)>& write) {
  const std::string head = kErrorsHead, good = sixty_entries();
  for (int at : {0, 29, 59}) {
    std::istringstream in(good);
    std::string text = head + "9 7 60\n", line;
    for (int k = 0; std::getline(in, line); ++k) text += (k == at ? "3 x 1\n" : line + "\n");
    expect_same_error(comm, write("bad_" + std::to_string(at), text), 4 + at, "expected a column index, found 'x'");
  }
  expect_same_error(comm, write("too_many", head + "9 7 50\n" + good + "oops\n"), 54,
                    "more entries than the 50 declared in the size line");
  expect_same_error(comm, write("too_many_zero", head + "9 7 0\n\n%c\n" + good), 6, "more entries than the 0 declared");
  expect_same_error(comm, write("too_few", head + "9 7 70\n" + good + "%end\n"), 65,
                    "file ends after 60 of the 70 entries declared on line 3");
  expect_same_error(comm, write("too_few_unterminated", head + "9 7 70\n" + good + "1 1 1"), 65,
                    "file ends after 61 of the 70 entries");
  expect_same_error(comm, write("too_few_empty", head + "9 7 3"), 4, "file ends after 0 of the 3");
}

TEST(ParallelRead, SuiteSparseFiles) {
  const Communicator comm;
  const Scratch scratch(comm);
  for (const char* name : {"lp_afiro", "west0067", "Pd", "cage8", "bcsstk13", "zenios", "luxembourg_osm", "watt_2"}) {
    const std::string gz = std::string(SPMV_SHARED_MATRICES) + "/" + name + ".mtx.gz";
    if (!fs::exists(gz)) GTEST_SKIP() << gz << " missing";
    const std::string path =
        scratch.write(std::string(name) + ".mtx", comm.rank() == 0 ? spmv::detail::read_text(gz) : "");
    expect_same_read(comm, path);
    expect_same_read<float>(comm, path);
  }
}

// A gzip file has no byte offsets: its ranks split the lines of the inflated text instead (each
// inflating it up to its share's end). The same rows as the root read on SuiteSparse files as stored
// and on awkward layouts gzipped here (Auto takes the split too), and the same errors, file and line.
TEST(ParallelRead, GzipFilesSplitByLines) {
  const Communicator comm;
  const Scratch scratch(comm);
  for (const char* name : {"lp_afiro", "west0067", "Pd", "cage8", "bcsstk13"}) {
    const std::string gz = std::string(SPMV_SHARED_MATRICES) + "/" + name + ".mtx.gz";
    if (!fs::exists(gz)) GTEST_SKIP() << gz << " missing";
    expect_same_read(comm, gz);
  }
  const std::string west = std::string(SPMV_SHARED_MATRICES) + "/west0067.mtx.gz";
  expect_same_rows(read_matrix_market<double>(comm, west),
                   read_matrix_market<double>(comm, west, PartitionKind::Nonzeros, {}, ReadMode::Root));
  const std::string head = std::string(kBanner) + "real general\n";
  expect_same_read(comm, scratch.write_gz("crlf.mtx.gz", std::string(kBanner) +
                                                             "real general\r\n%c\r\n3 3 4\r\n1 1 1\r\n3 2 2\r\n\r\n"
                                                             "2 3 3\r\n1 1 4\r\n"));
  expect_same_read(comm, scratch.write_gz("unterminated.mtx.gz", head + "3 3 2\n1 1 1\n3 3 2"));
  expect_same_read(comm, scratch.write_gz("blank_and_comments.mtx.gz",
                                          std::string(kBanner) + "real symmetric\n% c\n4 4 5\n% c\n\n3 1 1.5\n"
                                                                 "1 1 2\n  \n2 1 -0.25\n3 1 0.125\n% e\n4 4 0\n"));
  expect_same_read(comm, scratch.write_gz("one_entry.mtx.gz", head + "1000 7 1\n999 3 -2.5\n"));
  expect_same_read(comm, scratch.write_gz("empty.mtx.gz", head + "5 3 0\n"));
  expect_same_read(comm, scratch.write_gz("empty_comments.mtx.gz", head + "5 3 0\n%\n\n% nothing\n"));
  expect_same_read(comm, scratch.write_gz("size_line_last.mtx.gz", head + "4 4 0"));
  std::string wide = head + "7 300 400\n";
  for (int k = 0; k < 400; ++k) wide += std::to_string(1 + k % 7) + " " + std::to_string(1 + (k * 37) % 300) + " 1.5\n";
  expect_same_read(comm, scratch.write_gz("wide.mtx.gz", wide));
  // A text longer than the inflating block (1 MB): lines across block boundaries.
  std::string big = head + "2000 2000 60000\n";
  for (std::int64_t k = 0; k < 60000; ++k)
    big += std::to_string(1 + (k * 7919) % 2000) + " " + std::to_string(1 + (k * 104729) % 2000) + " " +
           std::to_string(0.001 * static_cast<double>(k)) + "\n";
  expect_same_read(comm, scratch.write_gz("big.mtx.gz", big));
  expect_same_read<float>(comm, scratch.write_gz("big_f32.mtx.gz", big));
  // Errors: a bad line on the first, a middle and the last rank; too many entries; too few.
  expect_entry_errors(comm, [&](const std::string& name, const std::string& text) {
    return scratch.write_gz(name + ".mtx.gz", text);
  });
}

// The ReadOptions budget is checked against each rank's share of a gzip file's lines, its text's size
// being unknown before the read: 16 bytes an entry (32-bit indices, f64), so a budget of the largest
// share passes and one byte less fails on every rank, while the root read needs the whole matrix.
TEST(ParallelRead, GzipBudgetCountsEachRanksShare) {
  const Communicator comm;
  const Scratch scratch(comm);
  constexpr std::int64_t kEntries = 6000;
  std::string text = std::string(kBanner) + "real general\n300 300 " + std::to_string(kEntries) + "\n";
  for (std::int64_t k = 0; k < kEntries; ++k)
    text += std::to_string(1 + k % 300) + " " + std::to_string(1 + (k * 7) % 300) + " 2.5\n";
  const std::string gz = scratch.write_gz("budget.mtx.gz", text);
  const std::int64_t ranks = comm.size(), largest_share = (kEntries + ranks - 1) / ranks;
  ReadOptions options;
  options.max_memory = static_cast<std::uint64_t>(16 * largest_share);
  for (PartitionKind kind : {PartitionKind::Nonzeros, PartitionKind::Rows}) {
    const auto ranges = read_matrix_market<double>(comm, gz, kind, options, ReadMode::ByteRanges);
    expect_same_rows(ranges, read_matrix_market<double>(comm, gz, kind, {}, ReadMode::Root));
    if (ranks > 1)
      EXPECT_THROW(read_matrix_market<double>(comm, gz, kind, options, ReadMode::Root), MemoryLimitExceeded);
  }
  options.max_memory -= 1;
  EXPECT_THROW(read_matrix_market<double>(comm, gz, PartitionKind::Nonzeros, options, ReadMode::ByteRanges),
               MemoryLimitExceeded);
}

// A BGZF file is split by its members: each rank parses the lines that start in its members' text. The
// same rows as the root read (read_csr of the same file) and as the root read of the plain text, with
// members of a few dozen to a few hundred bytes so that members, lines and rank shares interleave: lines
// across members, members that start exactly at line starts, more ranks than members (empty shares),
// shares inside the header (a long comment), CRLF, comments and blank lines, symmetric and pattern files;
// the same errors, file and line; a gzip file without BC keeps the line split.
TEST(ParallelRead, BgzfFilesSplitByMembers) {
  const Communicator comm;
  const Scratch scratch(comm);
  const std::string head = std::string(kBanner) + "real general\n";
  std::string wide = head + "7 300 400\n";
  for (int k = 0; k < 400; ++k) wide += std::to_string(1 + k % 7) + " " + std::to_string(1 + (k * 37) % 300) + " 1.5\n";
  std::string long_header = std::string(kBanner) + "pattern symmetric\n%" + std::string(3000, 'h') + "\n%\n30 30 50\n";
  for (int k = 0; k < 50; ++k) long_header += std::to_string(1 + (k * 7) % 30) + " " + std::to_string(1 + k % 7) + "\n";
  const std::pair<const char*, std::string> texts[] = {
      {"wide", wide},
      {"long_header", long_header},
      {"crlf", std::string(kBanner) + "real general\r\n%c\r\n3 3 4\r\n1 1 1\r\n3 2 2\r\n\r\n2 3 3\r\n1 1 4\r\n"},
      {"comments", std::string(kBanner) + "real symmetric\n% c\n4 4 5\n% c\n\n3 1 1.5\n1 1 2\n  \n2 1 -0.25\n3 1 "
                                          "0.125\n% e\n4 4 0\n"},
      {"pattern", std::string(kBanner) + "pattern general\n4 4 6\n3 1\n1 1\n\n2 1\n3 1\n% c\n4 4\n2 3\n"},
      {"unterminated", head + "3 3 2\n1 1 1\n3 3 2"},
      {"one_entry", head + "1000 7 1\n999 3 -2.5\n"},
      {"empty", head + "5 3 0\n%\n\n% nothing\n"},
      {"size_line_last", head + "4 4 0"},
  };
  for (const auto& [name, text] : texts) {
    const std::string plain = scratch.write(std::string(name) + ".mtx", text);
    const auto want = read_matrix_market<double>(comm, plain, PartitionKind::Rows, {}, ReadMode::Root);
    for (const std::size_t piece : {std::size_t{23}, std::size_t{200}, std::size_t{1000}, std::size_t{65536}}) {
      const std::string path = scratch.write(std::string(name) + "_" + std::to_string(piece) + ".mtx.gz", bgzf(text, piece));
      EXPECT_TRUE(spmv::detail::is_bgzf(path));
      expect_same_read(comm, path);
      expect_same_rows(read_matrix_market<double>(comm, path, PartitionKind::Rows, {}, ReadMode::ByteRanges), want);
    }
    // Every member starting at a line start, and every one starting a byte after one.
    std::vector<std::size_t> line_starts, after_line_starts;
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
      line_starts.push_back(at + 1);
      if (at + 2 < text.size()) after_line_starts.push_back(at + 2);
    }
    for (const auto& cuts : {line_starts, after_line_starts}) {
      const std::string path = scratch.write(std::string(name) + "_lines.mtx.gz", bgzf_cut_at(text, cuts));
      expect_same_read(comm, path);
      expect_same_rows(read_matrix_market<double>(comm, path, PartitionKind::Rows, {}, ReadMode::ByteRanges), want);
    }
  }
  // A text of many members (of 4 KiB) and many lines.
  std::string big = head + "2000 2000 20000\n";
  for (std::int64_t k = 0; k < 20000; ++k)
    big += std::to_string(1 + (k * 7919) % 2000) + " " + std::to_string(1 + (k * 104729) % 2000) + " " +
           std::to_string(0.001 * static_cast<double>(k)) + "\n";
  expect_same_read(comm, scratch.write("big.mtx.gz", bgzf(big, 4096)));
  expect_same_read<float>(comm, scratch.write("big_f32.mtx.gz", bgzf(big, 333)));
  // Errors: a bad line on the first, a middle and the last rank (in a middle member); too many entries;
  // too few.
  expect_entry_errors(comm, [&](const std::string& name, const std::string& text) {
    return scratch.write(name + ".mtx.gz", bgzf(text, 97));
  });
  // A gzip file without BC is not BGZF: its ranks split its lines (GzipFilesSplitByLines).
  EXPECT_FALSE(spmv::detail::is_bgzf(scratch.write_gz("plain_gzip.mtx.gz", wide)));
  EXPECT_FALSE(spmv::detail::is_bgzf(scratch.write("plain.mtx", wide)));
}

// A BGZF file whose members' sizes are wrong, or cut short, is an error on every rank naming the file and
// the member's compressed offset (never a hang or a crash).
TEST(ParallelRead, CorruptBgzfFilesFailOnEveryRank) {
  const Communicator comm;
  const Scratch scratch(comm);
  std::string text = std::string(kBanner) + "real general\n9 7 600\n";
  for (int k = 0; k < 600; ++k) text += std::to_string(1 + k % 9) + " " + std::to_string(1 + k % 7) + " 1.25\n";
  const std::string good = bgzf(text, 300);
  const auto member_starts = [&] {
    std::vector<std::size_t> starts;
    for (std::size_t at = 0; at < good.size(); at += 1 + static_cast<unsigned char>(good[at + 16]) +
                                                       256 * static_cast<std::size_t>(static_cast<unsigned char>(good[at + 17])))
      starts.push_back(at);
    return starts;
  }();
  ASSERT_GT(member_starts.size(), 10u);
  std::string wrong_size = good;
  const std::size_t middle = member_starts[member_starts.size() / 2];
  wrong_size[middle + 16] = static_cast<char>(wrong_size[middle + 16] + 5);  // BSIZE 5 bytes too large
  const std::string truncated = good.substr(0, member_starts[member_starts.size() - 2] + 20);
  // The truncated file is small enough that every rank's preamble read inflates all of it and meets its
  // end first (a larger one meets bgzf_text_size's check: MatrixMarketFiles.BgzfSharesDeliverEachLineOnce).
  for (const auto& [name, bytes, message] :
       {std::tuple<std::string, std::string, std::string>{
            "wrong_size.mtx.gz", wrong_size,
            "bad BGZF member at compressed offset " + std::to_string(middle) + ": "},  // why: where its share ends
        {"truncated.mtx.gz", truncated, "truncated gzip data"}}) {
    const std::string path = scratch.write(name, bytes);
    for (PartitionKind kind : {PartitionKind::Nonzeros, PartitionKind::Rows}) {
      const std::string error =
          error_of([&] { read_matrix_market<double>(comm, path, kind, {}, ReadMode::ByteRanges); });
      EXPECT_EQ(error.rfind("ParseError: " + path + ": " + message, 0), 0u) << error;
    }
  }
}

TEST(ParallelRead, EveryStorageKind) {
  const Communicator comm;
  const Scratch scratch(comm);
  // Duplicates (summed in file order), unsorted entries, comments and blank lines between entries,
  // entries above the diagonal of symmetric files (mirrored too), explicit zeros.
  const std::string entries = "% a comment\n\n3 1 1.5\n1 1 2\n  \n2 1 -0.25\n3 1 0.125\n% another\n4 4 0\n2 2 1e-3\n";
  for (const char* kind : {"real general", "real symmetric", "integer skew-symmetric", "pattern symmetric",
                           "real hermitian", "pattern general", "integer general", "real skew-symmetric"}) {
    std::string body = entries;
    const std::string k = kind;
    if (k.find("skew") != std::string::npos) body = "% skew\n3 1 1.5\n2 1 -0.25\n3 1 0.125\n\n4 3 7\n1 4 3\n";
    if (k.find("integer") != std::string::npos)
      body = k.find("skew") != std::string::npos ? "3 1 2\n2 1 -5\n3 1 1\n4 3 7\n1 4 3\n"
                                                 : "3 1 2\n1 1 -5\n2 1 4\n3 1 9\n4 4 0\n";
    if (k.find("pattern") != std::string::npos) body = "3 1\n1 1\n\n2 1\n3 1\n% c\n4 4\n2 3\n";
    std::int64_t lines = 0;
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);)
      if (line.find_first_not_of(' ') != std::string::npos && line[line.find_first_not_of(' ')] != '%') ++lines;
    const std::string text = kBanner + k + "\n% header comment\n4 4 " + std::to_string(lines) + "\n" + body;
    SCOPED_TRACE(k);
    const std::string name = "kind_" + std::to_string(std::hash<std::string>{}(k)) + ".mtx";
    expect_same_read(comm, scratch.write(name, text));
    expect_same_read<float>(comm, scratch.write(name, text));
  }
}

// Sizes and line shapes that put the rank boundaries in awkward places.
TEST(ParallelRead, AwkwardLayouts) {
  const Communicator comm;
  const Scratch scratch(comm);
  const std::string head = std::string(kBanner) + "real general\n";
  // Windows line endings throughout.
  expect_same_read(
      comm, scratch.write("crlf.mtx", std::string(kBanner) +
                                          "real general\r\n%c\r\n3 3 4\r\n1 1 1\r\n3 2 2\r\n\r\n2 3 3\r\n1 1 4\r\n"));
  // No '\n' after the last entry.
  expect_same_read(comm, scratch.write("unterminated.mtx", head + "3 3 2\n1 1 1\n3 3 2"));
  // Long lines: every boundary falls inside one (padding and long comments), one line longer than a
  // whole share.
  std::string padded = head + "5 5 5\n";
  for (int i = 1; i <= 5; ++i)
    padded += std::string(37 * i, ' ') + std::to_string(i) + std::string(11, ' ') + std::to_string(6 - i) + " " +
              std::to_string(i * 0.5) + std::string(53, '\t') + "\n%" + std::string(97 * i, 'x') + "\n";
  expect_same_read(comm, scratch.write("mid_line.mtx", padded));
  expect_same_read(
      comm, scratch.write("one_long_comment.mtx", head + "2 2 2\n1 1 1\n%" + std::string(100000, 'c') + "\n2 2 2\n"));
  // Fewer entry lines than ranks, one and none; an empty matrix; a 0 x 0 matrix; the size line last,
  // without its '\n'; rows and columns without entries.
  expect_same_read(comm, scratch.write("one_entry.mtx", head + "1000 7 1\n999 3 -2.5\n"));
  expect_same_read(comm, scratch.write("two_entries.mtx", head + "2 2 2\n2 2 1\n1 2 3\n"));
  expect_same_read(comm, scratch.write("empty.mtx", head + "5 3 0\n"));
  expect_same_read(comm, scratch.write("empty_comments.mtx", head + "5 3 0\n%\n\n% nothing\n"));
  expect_same_read(comm, scratch.write("zero_by_zero.mtx", head + "0 0 0\n"));
  expect_same_read(comm, scratch.write("size_line_last.mtx", head + "4 4 0"));
  std::string sparse = head + "100000 100000 6\n";
  for (int r : {99999, 5, 50000, 5, 77, 100000}) sparse += std::to_string(r) + " " + std::to_string(r) + " 1\n";
  expect_same_read(comm, scratch.write("empty_rows.mtx", sparse));
  // One row holding every entry, and a rectangular matrix (columns split in equal blocks).
  std::string one_row = head + "50 50 200\n";
  for (int k = 0; k < 200; ++k) one_row += "17 " + std::to_string(50 - k % 50) + " " + std::to_string(k) + "\n";
  expect_same_read(comm, scratch.write("one_row.mtx", one_row));
  std::string wide = head + "7 300 40\n";
  for (int k = 0; k < 40; ++k) wide += std::to_string(1 + k % 7) + " " + std::to_string(1 + (k * 37) % 300) + " 1.5\n";
  expect_same_read(comm, scratch.write("wide.mtx", wide));
  // Column indices past 2^31: the entries are parsed and exchanged in 64-bit indices.
  expect_same_read(comm, scratch.write("huge_columns.mtx", head + "3 3000000000 4\n1 2999999999 1\n3 1 2\n"
                                                                  "2 3000000000 3\n1 2999999999 4\n"));
}

// The exchange in rounds: one entry per pair and round (hundreds of rounds), and a few entries per round.
TEST(ParallelRead, ExchangeInRounds) {
  const Communicator comm;
  const Scratch scratch(comm);
  std::mt19937_64 rng(7);
  std::string text = std::string(kBanner) + "real general\n300 300 2000\n";
  for (int k = 0; k < 2000; ++k)
    text += std::to_string(1 + rng() % 300) + " " + std::to_string(1 + rng() % 300) + " " +
            std::to_string(static_cast<double>(rng() % 1000) / 7) + "\n";
  const std::string path = scratch.write("rounds.mtx", text);
  for (std::int64_t round_bytes : {1, 100, 4096}) expect_same_read(comm, path, round_bytes);
}

TEST(ParallelRead, ErrorsNameTheFileAndLine) {
  const Communicator comm;
  const Scratch scratch(comm);
  expect_entry_errors(comm, [&](const std::string& name, const std::string& text) {
    return scratch.write(name + ".mtx", text);
  });
  const std::string head = kErrorsHead;
  const std::string good = sixty_entries();
  // Each of the parser's complaints.
  expect_same_error(comm, scratch.write("row_range.mtx", head + "9 7 61\n" + good + "10 1 1\n"), 64,
                    "row index 10 is out of range");
  expect_same_error(comm, scratch.write("col_zero.mtx", head + "9 7 60\n2 0 1\n" + good.substr(good.find('\n') + 1)), 4,
                    "column index 0 is out of range (indices start at 1");
  expect_same_error(comm, scratch.write("overflow.mtx", head + "9 7 61\n" + good + "1 1 1e999\n"), 64,
                    "real value '1e999' is out of range");
  const std::size_t cut = good.find('\n', 200) + 1;  // after the line holding byte 200
  expect_same_error(
      comm, scratch.write("trailing.mtx", head + "9 7 61\n" + good.substr(0, cut) + "1 1 1 1\n" + good.substr(cut)),
      4 + static_cast<std::int64_t>(std::count(good.begin(), good.begin() + static_cast<long>(cut), '\n')),
      "unexpected '1' after the entry");
  expect_same_error(comm,
                    scratch.write("skew_diag.mtx", std::string(kBanner) + "real skew-symmetric\n9 9 2\n2 1 1\n3 3 1\n"),
                    4, "must be zero");
  // A bad line that is itself the one past the count.
  expect_same_error(comm, scratch.write("too_many_bad.mtx", head + "9 7 60\n" + good + "1 1 nope\n"), 64,
                    "more entries than the 60 declared");
  // Errors in the preamble come from the same parser.
  expect_same_error(comm, scratch.write("bad_size.mtx", head + "9 -7 3\n1 1 1\n"), 3, "negative number of columns");
  expect_same_error(comm, scratch.write("bad_banner.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 0\n"),
                    1, "complex matrices are not supported");
  // Unreadable: every rank throws the root read's error (Auto falls back to it).
  const std::string missing = scratch.path("missing.mtx");
  EXPECT_EQ(error_of([&] { read_matrix_market<double>(comm, missing); }),
            error_of([&] { read_matrix_market<double>(comm, missing, PartitionKind::Nonzeros, {}, ReadMode::Root); }));
  EXPECT_THROW(read_matrix_market<double>(comm, missing, PartitionKind::Nonzeros, {}, ReadMode::ByteRanges), Error);
}

// Where byte ranges cannot run: Auto reads on the root, ByteRanges refuses on every rank.
TEST(ParallelRead, FallsBackToTheRoot) {
  const Communicator comm;
  const Scratch scratch(comm);
  const std::string array =
      scratch.write("array.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n");
  const std::string coordinate =
      scratch.write("coordinate.mtx", std::string(kBanner) + "real general\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n");
  const auto same_as_root = [&](const std::string& path, PartitionKind kind) {
    expect_same_rows(read_matrix_market<double>(comm, path, kind),
                     read_matrix_market<double>(comm, path, kind, {}, ReadMode::Root));
  };
  same_as_root(array, PartitionKind::Nonzeros);
  EXPECT_THROW(read_matrix_market<double>(comm, array, PartitionKind::Nonzeros, {}, ReadMode::ByteRanges), Unsupported);
  // A rank that cannot open the file (here: it names another path), or sees another file.
  if (comm.size() > 1) {
    const std::string elsewhere = comm.rank() == 1 ? scratch.path("not_there.mtx") : coordinate;
    same_as_root(elsewhere, PartitionKind::Nonzeros);
    EXPECT_THROW(read_matrix_market<double>(comm, elsewhere, PartitionKind::Nonzeros, {}, ReadMode::ByteRanges), Error);
    const std::string bigger =
        scratch.write("bigger.mtx", std::string(kBanner) + "real general\n3 3 4\n1 1 1\n2 2 2\n3 3 3\n1 3 4\n");
    for (const std::string& other : {comm.rank() == 1 ? array : coordinate, comm.rank() == 1 ? bigger : coordinate}) {
      same_as_root(other, PartitionKind::Rows);
      EXPECT_THROW(read_matrix_market<double>(comm, other, PartitionKind::Rows, {}, ReadMode::ByteRanges), Unsupported);
    }
    // The gzip-compressed text on one rank, the plain text on another.
    const std::string gz =
        scratch.write_gz("coordinate.mtx.gz", std::string(kBanner) + "real general\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n");
    const auto other_files_fall_back = [&](const std::string& path) {
      same_as_root(path, PartitionKind::Nonzeros);
      EXPECT_THROW(read_matrix_market<double>(comm, path, PartitionKind::Nonzeros, {}, ReadMode::ByteRanges),
                   Unsupported);
    };
    other_files_fall_back(comm.rank() == 1 ? gz : coordinate);
    // Files of the same size and entry offset whose banners differ.
    const std::string integers =
        scratch.write("integers.mtx", std::string(kBanner) + "integer general\n3 3 2\n1 1 5\n2 2 7\n");
    const std::string pattern =
        scratch.write("pattern.mtx", std::string(kBanner) + "pattern general\n3 3 2\n1 1 5\n2 2 7\n");
    other_files_fall_back(comm.rank() == 1 ? pattern : integers);
  }
  // The graph partition needs the whole graph.
  EXPECT_THROW(read_matrix_market<double>(comm, coordinate, PartitionKind::Graph, {}, ReadMode::ByteRanges),
               Unsupported);
  if (graph_partition_available()) {
    const auto a = read_matrix_market<double>(comm, coordinate, PartitionKind::Graph);
    const auto b = read_matrix_market<double>(comm, coordinate, PartitionKind::Graph, {}, ReadMode::Root);
    EXPECT_EQ(a.rows.offsets, b.rows.offsets);
    EXPECT_EQ(a.matrix.col_idx, b.matrix.col_idx);
    EXPECT_EQ(a.permutation, b.permutation);
  }
}

// Random small files: random shapes, storage kinds, duplicates, order, spacing, comments and line
// endings, every one read both ways (a fixed seed per case).
TEST(ParallelRead, RandomFilesMatchTheRootRead) {
  const Communicator comm;
  const Scratch scratch(comm);
  const char* symmetries[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(1000 + seed);
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    const std::string symmetry = symmetries[pick(4)];
    const std::string field = symmetry == "skew-symmetric"
                                  ? (pick(2) ? "real" : "integer")
                                  : std::vector<std::string>{"real", "integer", "pattern"}[pick(3)];
    const bool square = symmetry != "general" || pick(2);
    const int rows = pick(5) == 0 ? pick(3) : 1 + pick(60);
    const int cols = square ? rows : (pick(5) == 0 ? pick(3) : 1 + pick(60));
    const int count = rows * cols == 0 ? 0 : pick(4) == 0 ? pick(4) : pick(300);
    const std::string eol = pick(4) == 0 ? "\r\n" : "\n";
    std::vector<std::string> lines;
    for (int k = 0; k < count; ++k) {
      if (symmetry == "skew-symmetric" && rows == 1) break;  // no off-diagonal entry
      int i = 1 + pick(std::max(rows, 1)), j = 1 + pick(std::max(cols, 1));
      if (symmetry == "skew-symmetric" && i == j) j = i == 1 ? 2 : 1;
      std::string line = std::string(pick(3), ' ') + std::to_string(i) +
                         std::string(1 + pick(2), pick(2) ? ' ' : '\t') + std::to_string(j);
      if (field == "real") {
        std::ostringstream v;
        v.precision(17);
        v << (static_cast<double>(static_cast<std::int64_t>(rng() % 2000001) - 1000000) / (1 + pick(1000)));
        line += " " + v.str();
      } else if (field == "integer") {
        line += " " + std::to_string(static_cast<int>(rng() % 201) - 100);
      }
      lines.push_back(line + std::string(pick(3), ' '));
    }
    const int declared = static_cast<int>(lines.size());
    // Duplicates: some lines twice, then everything shuffled with comments and blank lines between.
    for (int k = 0, n = pick(20); k < n && declared > 0; ++k)
      lines.push_back(lines[static_cast<std::size_t>(pick(declared))]);
    std::shuffle(lines.begin(), lines.end(), rng);
    std::string text = "%%MatrixMarket matrix coordinate " + field + " " + symmetry + eol;
    for (int k = 0, n = pick(3); k < n; ++k) text += "% comment " + std::string(pick(80), 'c') + eol;
    text += std::to_string(rows) + " " + std::to_string(cols) + " " + std::to_string(lines.size()) + eol;
    for (const auto& line : lines) {
      if (pick(10) == 0) text += pick(2) ? eol : "%" + std::string(pick(200), '-') + eol;
      text += line + eol;
    }
    if (pick(3) == 0 && !text.empty()) text.resize(text.size() - eol.size());  // no final line ending
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + field + " " + symmetry);
    const std::string path = scratch.write("random_" + std::to_string(seed) + ".mtx", text);
    expect_same_read(comm, path, pick(2) ? detail::kAlltoallRoundBytes : 1 + pick(500));
    if (seed % 4 == 0) expect_same_read<float>(comm, path);
  }
}

}  // namespace
}  // namespace spmv::dist
