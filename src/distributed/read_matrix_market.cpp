// Reading a Matrix Market file across the ranks (docs/DISTRIBUTED.md "Reading a file in parallel"):
// either rank 0 reads it whole (read_csr) and scatters the rows, or every rank parses the lines that start
// in its share of the entry section's bytes and sends each entry to its row's owner, so that no rank ever
// holds the whole matrix. The parse, its rules and its messages are read_csr's (core/matrix_market_range.hpp);
// what this file adds is where each rank's lines begin and end, line numbers across the ranks (an exscan of
// the newlines), the entry count across the ranks, and the exchange.
#include "distributed/read_matrix_market.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/debug_log.hpp"
#include "core/matrix_market_io.hpp"
#include "core/matrix_market_range.hpp"
#include "core/phase_log.hpp"
#include "distributed/collective.hpp"
#include "distributed/mpi_util.hpp"

namespace spmv::dist {
namespace detail {
namespace {

using spmv::detail::MatrixMarketLayout;
using spmv::detail::RangeEntries;
using spmv::detail::RangeOutcome;

// Why the byte ranges cannot run, as bits OR-ed over the ranks (every rank then knows every reason).
enum RangeRefusal : int {
  kCannotRead = 1,      // a rank could not open the file or parse its preamble
  kNotPlain = 2,        // not a regular file: no offsets into the text
  kArray = 4,           // an array file: an entry's position is its index in the file
  kDifferentFiles = 8,  // the ranks see files of different sizes or preambles (paths local to each node)
};

std::string refusal_text(int refusal) {
  std::string text;
  const auto add = [&](const char* reason) { text += (text.empty() ? "" : "; ") + std::string(reason); };
  if (refusal & kCannotRead) add("a rank cannot open it or read its header");
  if (refusal & kNotPlain) add("not a regular file: no byte ranges");
  if (refusal & kArray) add("an array file");
  if (refusal & kDifferentFiles) add("the ranks see different files (sizes or headers differ)");
  return text;
}

// Every rank opens the file and reads its preamble. Returns the refusal bits (0: the ranges can run) and
// fills `layout`, `size` (of the file as stored), `compressed` (a gzip file: its text has no byte
// offsets, so the ranks split its lines instead) and `bgzf` (a gzip file in BGZF members: the ranks
// split its members instead); `failure` keeps this rank's own error for ReadMode::ByteRanges.
int probe(const Communicator& comm, const std::string& path, MatrixMarketLayout& layout, std::int64_t& size,
          bool& compressed, bool& bgzf, std::exception_ptr& failure) {
  int refusal = 0;
  try {
    spmv::detail::InputStream in(path);
    size = in.known_size();
    compressed = size < 0 && std::filesystem::is_regular_file(path);  // regular, size unknown: gzip
    if (compressed) size = static_cast<std::int64_t>(std::filesystem::file_size(path));
    bgzf = compressed && spmv::detail::is_bgzf(path);
    if (size < 0) {
      refusal |= kNotPlain;
    } else {
      layout = spmv::detail::read_matrix_market_layout(in);
      if (!layout.coordinate) refusal |= kArray;
    }
  } catch (...) {
    refusal |= kCannotRead;
    failure = std::current_exception();
  }
  const MPI_Comm c = comm.get();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &refusal, 1, MPI_INT, MPI_BOR, c), "MPI_Allreduce");
  if (refusal) return refusal;
  // The same file everywhere: its size and what its preamble says, compared through MIN and MAX (the
  // banner's words by a hash: the ranks run one binary).
  const auto& h = layout.header;
  const auto banner = static_cast<std::int64_t>(std::hash<std::string>{}(h.format + ' ' + h.field + ' ' + h.symmetry));
  std::int64_t low[8] = {size, layout.data_offset, layout.rows, layout.cols, layout.entries, banner, compressed, bgzf};
  std::int64_t high[8];
  std::copy(std::begin(low), std::end(low), high);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, low, 8, MPI_INT64_T, MPI_MIN, c), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, high, 8, MPI_INT64_T, MPI_MAX, c), "MPI_Allreduce");
  return std::equal(std::begin(low), std::end(low), std::begin(high)) ? 0 : kDifferentFiles;
}

// An entry on its way to the rank that owns its row (global indices, 32-bit when the sizes allow).
template <class Value, class Index>
struct Entry {
  Index row, col;
  Value value;
};

// Sends every entry to the owner of its row under `target` and returns this rank's rows as CSR: the
// entries of a row in the order of their senders' ranks and, within a sender, in its order (file order,
// when every rank sends its range's entries in file order), then canonicalize() as read_csr: columns
// sorted, duplicates summed in that order. The entries a rank keeps (nearly all of them in a file
// stored by rows) are neither packed nor exchanged: they are read in place, in the rank's turn among
// the senders. Frees `entries`.
template <class Value, class Index>
CsrMatrix<Value, std::int64_t> move_to_owners(const Communicator& comm, RangeEntries<Value, Index>& entries,
                                              const RowPartition& target, std::int64_t cols, std::int64_t round_bytes) {
  const int ranks = comm.size(), rank = comm.rank();
  const std::size_t n = entries.rows.size();
  std::vector<int> owner(n);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks), 0);
  for (std::size_t k = 0; k < n; ++k) ++counts[static_cast<std::size_t>(owner[k] = target.owner(entries.rows[k]))];
  counts[static_cast<std::size_t>(rank)] = 0;  // kept in place
  std::vector<Entry<Value, Index>> packed(n - static_cast<std::size_t>(std::count(owner.begin(), owner.end(), rank)));
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(ranks), 0);
  for (std::size_t q = 1; q < cursor.size(); ++q) cursor[q] = cursor[q - 1] + counts[q - 1];
  for (std::size_t k = 0; k < n; ++k)
    if (owner[k] != rank)
      packed[static_cast<std::size_t>(cursor[static_cast<std::size_t>(owner[k])]++)] = {
          entries.rows[k], entries.cols[k], entries.values[k]};
  std::vector<std::int64_t> from(static_cast<std::size_t>(ranks) + 1, 0);  // offsets of each sender's entries
  const std::vector<Entry<Value, Index>> received =
      alltoallv_in_rounds<Entry<Value, Index>>(comm.get(), packed, counts, round_bytes, &from);
  packed = {};
  // Every entry of this rank's rows in the senders' order: this rank's own in its turn.
  const auto for_each_entry = [&](auto&& f) {
    for (int q = 0; q < ranks; ++q) {
      if (q == rank) {
        for (std::size_t k = 0; k < n; ++k)
          if (owner[k] == rank) f(entries.rows[k], entries.cols[k], entries.values[k]);
        continue;
      }
      for (auto k = from[static_cast<std::size_t>(q)]; k < from[static_cast<std::size_t>(q) + 1]; ++k)
        f(received[static_cast<std::size_t>(k)].row, received[static_cast<std::size_t>(k)].col,
          received[static_cast<std::size_t>(k)].value);
    }
  };
  // Stable by row, as read_csr's csr_from_store.
  CsrMatrix<Value, std::int64_t> a;
  const std::int64_t first = target.begin(rank);
  a.rows = target.count(rank);
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  for_each_entry([&](std::int64_t r, std::int64_t, Value) { ++a.row_ptr[static_cast<std::size_t>(r - first) + 1]; });
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  a.col_idx.resize(static_cast<std::size_t>(a.row_ptr.back()));
  a.values.resize(static_cast<std::size_t>(a.row_ptr.back()));
  cursor.assign(a.row_ptr.begin(), a.row_ptr.end() - 1);
  for_each_entry([&](std::int64_t r, std::int64_t c, Value v) {
    const auto at = static_cast<std::size_t>(cursor[static_cast<std::size_t>(r - first)]++);
    a.col_idx[at] = c;
    a.values[at] = v;
  });
  entries = {};
  canonicalize(a);
  return a;
}

// Moves canonical rows from one partition of contiguous blocks to another: rank q gets the rows of
// its new block that this rank holds. The blocks of both partitions follow the rank order, so the
// arrays are already grouped by destination (no packing) and the received pieces come in row order
// (no sorting): three exchanges (row lengths, columns, values), what stays on a rank copied once.
template <class Value>
CsrMatrix<Value, std::int64_t> move_rows(const Communicator& comm, const CsrMatrix<Value, std::int64_t>& a,
                                         const RowPartition& from, const RowPartition& to, std::int64_t round_bytes) {
  const int ranks = comm.size(), rank = comm.rank();
  std::vector<std::int64_t> rows_to(static_cast<std::size_t>(ranks), 0), entries_to(rows_to.size(), 0);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(a.rows));
  for (std::size_t r = 0; r < lengths.size(); ++r) lengths[r] = a.row_ptr[r + 1] - a.row_ptr[r];
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t lo = std::max(from.begin(rank), to.begin(q)), hi = std::min(from.end(rank), to.end(q));
    if (lo >= hi) continue;
    rows_to[static_cast<std::size_t>(q)] = hi - lo;
    entries_to[static_cast<std::size_t>(q)] = a.row_ptr[hi - from.begin(rank)] - a.row_ptr[lo - from.begin(rank)];
  }
  const MPI_Comm c = comm.get();
  const auto got_lengths = alltoallv_in_rounds<std::int64_t>(c, lengths, rows_to, round_bytes);
  CsrMatrix<Value, std::int64_t> b;
  b.rows = to.count(rank);
  b.cols = a.cols;
  b.row_ptr.assign(static_cast<std::size_t>(b.rows) + 1, 0);
  for (std::size_t r = 0; r < got_lengths.size(); ++r) b.row_ptr[r + 1] = b.row_ptr[r] + got_lengths[r];
  b.col_idx = alltoallv_in_rounds<std::int64_t>(c, a.col_idx, entries_to, round_bytes);
  b.values = alltoallv_in_rounds<Value>(c, a.values, entries_to, round_bytes);
  return b;
}

// A BGZF file's share of this rank (docs/DISTRIBUTED.md "Reading a file in parallel"): the members from
// the first one at or after byte size r / P (B_r) to the next rank's first one, whose text starts at
// U_r, the sum of the text sizes of the members before it (their ISIZE trailers: no rank inflates
// anything here). A bad member is an error on every rank naming the file and its offset.
spmv::detail::BgzfShare bgzf_share(const Communicator& comm, const std::string& path, std::int64_t size,
                                   std::int64_t data_offset, std::int64_t& text_size) {
  const int rank = comm.rank(), ranks = comm.size();
  const MPI_Comm c = comm.get();
  std::int64_t start = 0;
  collectively(comm, [&] {
    start = spmv::detail::bgzf_member_at_or_after(path, static_cast<std::int64_t>(static_cast<__int128>(size) * rank / ranks));
  });
  std::vector<std::int64_t> starts(static_cast<std::size_t>(ranks) + 1, size);
  check_mpi(MPI_Allgather(&start, 1, MPI_INT64_T, starts.data(), 1, MPI_INT64_T, c), "MPI_Allgather");
  const auto r = static_cast<std::size_t>(rank);
  std::int64_t text = 0, before = 0;
  collectively(comm, [&] { text = spmv::detail::bgzf_text_size(path, starts[r], starts[r + 1]); });
  check_mpi(MPI_Exscan(&text, &before, 1, MPI_INT64_T, MPI_SUM, c), "MPI_Exscan");
  if (rank == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  text_size = text;
  const std::int64_t next = rank + 1 == ranks ? std::numeric_limits<std::int64_t>::max() : before + text;
  return {starts[r], before, next, data_offset};
}

// Every rank parses the lines that start in its share of the entry section's bytes (a line belongs to
// the rank whose share holds its first byte), then the entries move to their rows' owners. A gzip file
// (`compressed`) is split by lines instead: rank r parses the entry section's lines [E r / P,
// E (r + 1) / P) for the declared entry count E, the last rank on to the end, each rank inflating the
// text up to its share's end and streaming its lines into the parser (so no rank holds its share of the
// text, only its share of the entries). A BGZF file (`bgzf`, compressed too) is split by its members:
// rank r parses the lines of the entry section that start in the text of its members (bgzf_share; the
// line that crosses its end included, the one that crosses its start left to the rank before), each
// rank inflating only its members and the rest of its last line.
template <class Value, class Index>
LocalRows<Value> read_byte_ranges(const Communicator& comm, const std::string& path, PartitionKind kind,
                                  const ReadOptions& options, const MatrixMarketLayout& layout, std::int64_t size,
                                  bool compressed, bool bgzf, std::int64_t round_bytes) {
  const int rank = comm.rank(), ranks = comm.size();
  const MPI_Comm c = comm.get();
  const std::string name = spmv::detail::display_name(path);
  const std::int64_t data = layout.data_offset;
  const auto share_start = [&](int r) {
    return data + static_cast<std::int64_t>(static_cast<__int128>(size - data) * r / ranks);
  };
  // SPMV_DEBUG_LOG=1: each rank's phases on stderr.
  const std::string phase = "read_matrix_market rank " + std::to_string(rank) + "/";
  spmv::detail::PhaseLog log(phase + "parse");
  constexpr std::int64_t kToTheEnd = std::numeric_limits<std::int64_t>::max();
  // Plain: this rank's bytes [begin, end). Gzip: its lines [first, last) of the entry section, counted
  // in the memory check as `share_lines` (its text's size is unknown), and `end` the bytes they held.
  std::int64_t begin = 0, end = 0, first = 0, last = 0, share_lines = -1;
  spmv::detail::BgzfShare share;
  if (bgzf) {
    std::int64_t text = 0;
    share = bgzf_share(comm, path, size, data, text);
    // The budget counts the entry lines that can start in [s, U_{r+1}], one every 4 bytes at most
    // ("1 1\n", read_csr's shortest coordinate line), its text's size being unknown before the read.
    const std::int64_t from = std::max(share.text_begin, data), to = share.text_begin + text;
    share_lines = from > to ? 0 : (to - from) / 4 + 1;
  } else if (compressed) {
    const auto line_share = [&](int r) {
      return static_cast<std::int64_t>(static_cast<__int128>(layout.entries) * r / ranks);
    };
    first = line_share(rank);
    last = rank + 1 == ranks ? kToTheEnd : line_share(rank + 1);
    share_lines = line_share(rank + 1) - first;
  }
  const auto open_range = [&] {
    return bgzf         ? std::make_unique<spmv::detail::InputStream>(path, share)
           : compressed ? std::make_unique<spmv::detail::InputStream>(path, data, first, last)
                        : std::make_unique<spmv::detail::InputStream>(path, begin, end - begin);
  };
  RangeEntries<Value, Index> entries;
  RangeOutcome outcome;
  collectively(comm, [&] {
    if (!compressed) {
      begin = spmv::detail::line_start_at_or_after(path, share_start(rank));
      end = rank + 1 == ranks ? size : spmv::detail::line_start_at_or_after(path, share_start(rank + 1));
    }
    const auto in = open_range();
    outcome = spmv::detail::parse_coordinate_lines(*in, layout, kToTheEnd, share_lines, options, entries);
    if (compressed) end = in->delivered();
  });
  // This rank's text ends the file's. BGZF: the last rank's share may be empty, but only the share that
  // ends the text can end inside a line (the others end at the '\n' of their last line).
  const bool at_file_end = bgzf || (compressed ? rank + 1 == ranks : end == size);

  // Entry lines and newlines before this rank's range. They are exact up to the first rank with a
  // problem; the ranks after it may be wrong, but their errors never win (the lowest rank's does).
  log.next(phase + "check");
  std::int64_t mine[2] = {outcome.entry_lines, outcome.newlines}, before[2] = {0, 0};
  check_mpi(MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, c), "MPI_Exscan");
  if (rank == 0) before[0] = before[1] = 0;  // MPI_Exscan leaves rank 0's result undefined
  const std::int64_t first_line = layout.data_line + before[1];
  // This rank's first problem as read_csr would meet it: the entry line past the declared count comes
  // before a bad line when that line's index reaches the count (read_csr checks the count first).
  collectively(comm, [&] {
    const std::int64_t lines_before = before[0], declared = layout.entries;
    if (lines_before > declared) return;  // the line past the count is on an earlier rank
    const std::int64_t reached = lines_before + outcome.entry_lines;
    if (reached > declared || (outcome.failed && reached == declared)) {
      const auto again = open_range();  // parse again up to the count: its line
      RangeEntries<Value, Index> unused;
      const RangeOutcome at =
          spmv::detail::parse_coordinate_lines(*again, layout, declared - lines_before, share_lines, options, unused);
      throw spmv::detail::located_parse_error(name, first_line + at.line_offset, at.message);
    }
    if (outcome.failed)
      throw spmv::detail::located_parse_error(name, first_line + outcome.line_offset, outcome.message);
  });
  // Fewer entry lines than declared: read_csr's message, on the line after the file's last one.
  std::int64_t totals[3] = {outcome.entry_lines, outcome.newlines, end - begin};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_INT64_T, MPI_SUM, c), "MPI_Allreduce");
  int unterminated = at_file_end && begin < end && outcome.ends_inside_line;  // the file's last line lacks '\n'
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &unterminated, 1, MPI_INT, MPI_MAX, c), "MPI_Allreduce");
  if (totals[0] < layout.entries) {
    const std::int64_t line =
        totals[2] == 0 ? layout.line_after_preamble : layout.data_line + totals[1] + unterminated;
    collectively(comm, [&] {
      throw spmv::detail::located_parse_error(name, line, spmv::detail::missing_entries_message(layout, totals[0]));
    });
  }

  // The rows: straight to their owners under the row partition; under the nonzero partition first to
  // the equal-rows blocks, where duplicates are summed and the row lengths are known (read_csr's row
  // lengths, which the serial path balances), then on to the balanced blocks.
  log.next(phase + "to the row owners");
  LocalRows<Value> out;
  out.global_rows = layout.rows;
  out.global_cols = layout.cols;
  out.rows = partition_rows(layout.rows, ranks);
  out.matrix = move_to_owners(comm, entries, out.rows, layout.cols, round_bytes);
  if (kind == PartitionKind::Nonzeros) {
    log.next(phase + "balance");
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(out.matrix.rows));
    for (std::size_t r = 0; r < lengths.size(); ++r) lengths[r] = out.matrix.row_ptr[r + 1] - out.matrix.row_ptr[r];
    const RowPartition balanced = partition_nonzeros(comm, out.rows, lengths);
    out.matrix = move_rows(comm, out.matrix, out.rows, balanced, round_bytes);
    out.rows = balanced;
  }
  out.cols = default_column_partition(out.global_rows, out.global_cols, out.rows);
  return out;
}

}  // namespace

template <class Value>
LocalRows<Value> read_matrix_market(const Communicator& comm, const std::string& path, PartitionKind kind,
                                    const ReadOptions& options, ReadMode mode, std::int64_t round_bytes) {
  // The parallel graph and streaming partitions start from the nonzero partition's rows, read either way.
  if (kind == PartitionKind::ParallelGraph)
    return partition_graph_parallel(comm, read_matrix_market<Value>(comm, path, PartitionKind::Nonzeros, options, mode,
                                                                   round_bytes));
  if (kind == PartitionKind::Streaming)
    return partition_streaming(comm, read_matrix_market<Value>(comm, path, PartitionKind::Nonzeros, options, mode,
                                                              round_bytes));
  if (mode != ReadMode::Root) {
    int refusal = 0;
    std::string reason;
    MatrixMarketLayout layout;
    std::int64_t size = -1;
    bool compressed = false, bgzf = false;
    std::exception_ptr failure;
    if (kind == PartitionKind::Graph)
      reason = "the graph partition needs the whole graph";
    else if (path == "-")
      reason = "standard input has no byte ranges";
    else if ((refusal = probe(comm, path, layout, size, compressed, bgzf, failure)) != 0)
      reason = refusal_text(refusal);
    if (reason.empty()) {
      if (spmv::detail::debug_log_enabled() && comm.rank() == 0)
        std::fprintf(stderr, "[spmv] read_matrix_market %s: every rank parses its %s (%d ranges)\n", path.c_str(),
                     bgzf         ? "BGZF members' lines"
                     : compressed ? "lines of the inflated text"
                                  : "byte range",
                     comm.size());
      // 32-bit indices for the parsed and exchanged entries whenever the sizes allow (16 bytes an
      // entry in f64 instead of 24), as read_csr stores its entries.
      return fits_index<std::int32_t>(layout.rows, layout.cols, 0)
                 ? read_byte_ranges<Value, std::int32_t>(comm, path, kind, options, layout, size, compressed,
                                                         bgzf, round_bytes)
                 : read_byte_ranges<Value, std::int64_t>(comm, path, kind, options, layout, size, compressed,
                                                         bgzf, round_bytes);
    }
    if (mode == ReadMode::ByteRanges)
      collectively(comm, [&] {  // the ranks' own failures (a missing file, a bad header) when there are any
        if (failure) std::rethrow_exception(failure);
        if (!(refusal & kCannotRead)) throw Unsupported("read_matrix_market '" + path + "' by byte ranges: " + reason);
      });
    if (spmv::detail::debug_log_enabled() && comm.rank() == 0)
      std::fprintf(stderr, "[spmv] read_matrix_market %s: rank 0 reads it whole and scatters (%s)\n", path.c_str(),
                   reason.c_str());
  }
  CsrMatrix<Value, std::int64_t> whole;
  collectively(comm, [&] {
    if (comm.rank() == 0) whole = read_csr<Value, std::int64_t>(path, options);
  });
  return scatter_rows(comm, whole, kind, 0);
}

template LocalRows<float> read_matrix_market<float>(const Communicator&, const std::string&, PartitionKind,
                                                    const ReadOptions&, ReadMode, std::int64_t);
template LocalRows<double> read_matrix_market<double>(const Communicator&, const std::string&, PartitionKind,
                                                      const ReadOptions&, ReadMode, std::int64_t);

}  // namespace detail

template <class Value>
LocalRows<Value> read_matrix_market(const Communicator& comm, const std::string& path, PartitionKind kind,
                                    const ReadOptions& options, ReadMode mode) {
  return detail::read_matrix_market<Value>(comm, path, kind, options, mode, detail::kAlltoallRoundBytes);
}

template LocalRows<float> read_matrix_market<float>(const Communicator&, const std::string&, PartitionKind,
                                                    const ReadOptions&, ReadMode);
template LocalRows<double> read_matrix_market<double>(const Communicator&, const std::string&, PartitionKind,
                                                      const ReadOptions&, ReadMode);

}  // namespace spmv::dist
