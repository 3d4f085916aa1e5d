#pragma once
// BGZF files written by the tests themselves (no bgzip binary needed), as bgzip writes them (SAM format
// specification §4.1): the text cut into pieces, each deflated as its own gzip member whose header
// carries the extra subfield 'B','C' (BSIZE = the member's size - 1) and whose trailer holds its CRC-32
// and ISIZE, then bgzip's empty 28-byte EOF member.
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace spmv::test {

// The text cut at `cuts` (increasing offsets; repeated or out-of-range ones are skipped).
inline std::string bgzf_cut_at(std::string_view text, std::vector<std::size_t> cuts) {
  cuts.push_back(text.size());
  std::string out;
  const auto le = [&](std::uint32_t x, int bytes) {
    for (int k = 0; k < bytes; ++k) out += static_cast<char>((x >> (8 * k)) & 0xff);
  };
  std::size_t from = 0;
  for (const std::size_t to : cuts) {
    if (to <= from || to > text.size()) continue;
    const std::string_view piece = text.substr(from, to - from);
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)  // -15: raw deflate
      throw std::runtime_error("zlib: deflateInit2 failed");
    std::string body(deflateBound(&zs, static_cast<uLong>(piece.size())), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
    zs.avail_in = static_cast<uInt>(piece.size());
    zs.next_out = reinterpret_cast<Bytef*>(body.data());
    zs.avail_out = static_cast<uInt>(body.size());
    const int rc = deflate(&zs, Z_FINISH);
    body.resize(zs.total_out);
    deflateEnd(&zs);
    const std::size_t member = 18 + body.size() + 8;
    if (rc != Z_STREAM_END || member > (std::size_t{1} << 16))
      throw std::runtime_error("bgzf_cut_at: a piece does not fit a BGZF member");
    out.append("\x1f\x8b\x08\x04\0\0\0\0\0\xff\x06\0BC\x02\0", 16);
    le(static_cast<std::uint32_t>(member - 1), 2);
    out += body;
    le(static_cast<std::uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(piece.size()))), 4);
    le(static_cast<std::uint32_t>(piece.size()), 4);
    from = to;
  }
  out.append("\x1f\x8b\x08\x04\0\0\0\0\0\xff\x06\0BC\x02\0\x1b\0\x03\0\0\0\0\0\0\0\0\0", 28);
  return out;
}

// Members of `piece` bytes of text each (the last one shorter).
inline std::string bgzf(std::string_view text, std::size_t piece) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = piece; at < text.size(); at += piece) cuts.push_back(at);
  return bgzf_cut_at(text, cuts);
}

}  // namespace spmv::test
