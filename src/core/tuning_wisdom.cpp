// Wisdom files of the run-time tuner (format: docs/algorithms/tuning.md). nlohmann_json is a private,
// header-only build dependency of the core: installed users do not need it.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unistd.h>

#include "core/tuner.hpp"
#include "spmv/error.hpp"

namespace spmv::detail {
namespace {

constexpr const char* kFormatTag = "spmv_tuning_wisdom";
constexpr int kFormatVersion = 1;

struct Fnv1a {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(std::int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<std::uint64_t>(v >> (8 * i)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  }
};

nlohmann::json key_json(const WisdomKey& k) {
  return {{"device", k.device}, {"value", k.value},   {"index", k.index}, {"op", k.operation},
          {"conversions", k.conversions}, {"rows", k.rows}, {"cols", k.cols}, {"nnz", k.nnz},
          {"structure", k.structure}};
}

WisdomEntry entry_from_json(const nlohmann::json& j) {
  WisdomEntry e;
  e.key.device = j.at("device").get<std::string>();
  e.key.value = j.at("value").get<std::string>();
  e.key.index = j.at("index").get<std::string>();
  e.key.operation = j.at("op").get<std::string>();
  e.key.conversions = j.at("conversions").get<bool>();
  e.key.rows = j.at("rows").get<std::int64_t>();
  e.key.cols = j.at("cols").get<std::int64_t>();
  e.key.nnz = j.at("nnz").get<std::int64_t>();
  e.key.structure = j.at("structure").get<std::string>();
  e.algorithm = j.at("algorithm").get<std::string>();
  for (const auto& [name, value] : j.at("knobs").items()) e.knobs.emplace_back(name, value.get<int>());
  e.ms = j.value("ms", 0.0);
  e.samples = j.value("samples", 0);
  return e;
}

nlohmann::json entry_json(const WisdomEntry& e) {
  nlohmann::json j = key_json(e.key);
  j["algorithm"] = e.algorithm;
  j["knobs"] = nlohmann::json::object();
  for (const auto& [name, value] : e.knobs) j["knobs"][name] = value;
  j["ms"] = e.ms;
  j["samples"] = e.samples;
  return j;
}

// The parsed entries of `path`; an empty list when the file does not exist. Anything else that is
// not a wisdom file of this version throws ParseError naming the file.
std::vector<WisdomEntry> read_entries(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return {};
    throw ParseError("tuning wisdom " + path + ": cannot be read");
  }
  std::vector<WisdomEntry> entries;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object() || j.value(kFormatTag, 0) != kFormatVersion || !j.at("entries").is_array())
      throw ParseError("tuning wisdom " + path + ": not an spmv wisdom file of version " +
                       std::to_string(kFormatVersion) + " (expected {\"" + kFormatTag + "\": " +
                       std::to_string(kFormatVersion) + ", \"entries\": [...]})");
    for (const auto& e : j.at("entries")) entries.push_back(entry_from_json(e));
  } catch (const nlohmann::json::exception& e) {
    throw ParseError("tuning wisdom " + path + ": " + e.what());
  }
  return entries;
}

std::mutex& save_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

ColumnSample wisdom_column_sample(std::int64_t nnz) {
  if (nnz <= kWisdomColumnSample) return {1, nnz};
  return {nnz / kWisdomColumnSample, kWisdomColumnSample};
}

template <class Index>
std::string structure_hash(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::span<const Index> row_ptr,
                           std::span<const Index> col_sample) {
  Fnv1a h;
  h.add(rows);
  h.add(cols);
  h.add(nnz);
  for (Index v : row_ptr) h.add(static_cast<std::int64_t>(v));
  for (Index v : col_sample) h.add(static_cast<std::int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h.h));
  return buf;
}
template std::string structure_hash<std::int32_t>(std::int64_t, std::int64_t, std::int64_t,
                                                  std::span<const std::int32_t>, std::span<const std::int32_t>);
template std::string structure_hash<std::int64_t>(std::int64_t, std::int64_t, std::int64_t,
                                                  std::span<const std::int64_t>, std::span<const std::int64_t>);

std::string cpu_device_name(int threads) {
  std::string model = "cpu";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = "cpu: " + line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  return model + " x" + std::to_string(threads);
}

std::string wisdom_path(const Options& options) {
  if (!options.tuning_wisdom.empty()) return options.tuning_wisdom;
  const char* env = std::getenv("SPMV_TUNING_WISDOM");
  return env ? std::string(env) : std::string();
}

std::optional<WisdomEntry> load_wisdom(const std::string& path, const WisdomKey& key, std::string* note) {
  std::lock_guard lock(save_mutex());
  const auto entries = read_entries(path);
  std::string why = entries.empty() ? "no entries" : "no entry for this device, types, operation and matrix";
  for (const WisdomEntry& e : entries) {
    if (e.key == key) return e;
    WisdomKey same_sizes = e.key;
    same_sizes.structure = key.structure;
    if (same_sizes == key) why = "stale entry: same sizes, different structure hash (" + e.key.structure + ")";
  }
  if (note) *note = why;
  return std::nullopt;
}

void save_wisdom(const std::string& path, const WisdomEntry& entry) {
  std::lock_guard lock(save_mutex());
  std::vector<WisdomEntry> entries = read_entries(path);  // a corrupt file throws: never overwritten
  bool replaced = false;
  for (WisdomEntry& e : entries)
    if (e.key == entry.key) {
      e = entry;
      replaced = true;
    }
  if (!replaced) entries.push_back(entry);
  nlohmann::json j = {{kFormatTag, kFormatVersion}, {"entries", nlohmann::json::array()}};
  for (const WisdomEntry& e : entries) j["entries"].push_back(entry_json(e));
  // Another process may read the file meanwhile: write a private temporary, then rename over it.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
    if (!out) throw InvalidArgument("tuning wisdom " + path + ": cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InvalidArgument("tuning wisdom " + path + ": cannot replace the file");
  }
}

std::optional<Candidate> wisdom_candidate(const Tuner& tuner, const WisdomEntry& entry) {
  const auto algorithm = parse_algorithm(entry.algorithm);
  if (!algorithm) return std::nullopt;
  const auto& families = tuner.space().families;
  // Auto's choice with no knobs is point 0 (built as Auto builds it); otherwise the first family of
  // that algorithm with every named knob on one of its axes.
  for (int f = 0; f < static_cast<int>(families.size()); ++f) {
    if (families[f].algorithm != *algorithm) continue;
    Candidate c{f, std::vector<int>(families[f].axes.size(), -1)};
    std::size_t matched = 0;
    for (std::size_t i = 0; i < families[f].axes.size(); ++i) {
      const Axis& ax = families[f].axes[i];
      for (const auto& [name, value] : entry.knobs) {
        if (name != to_string(ax.knob)) continue;
        const auto it = std::find(ax.values.begin(), ax.values.end(), value);
        if (it == ax.values.end()) return std::nullopt;
        c.position[i] = static_cast<int>(it - ax.values.begin());
        ++matched;
      }
    }
    if (matched != entry.knobs.size()) return std::nullopt;
    return c;
  }
  return std::nullopt;
}

WisdomEntry wisdom_entry(const Tuner& tuner, int c, const WisdomKey& key) {
  WisdomEntry e;
  e.key = key;
  const Candidate& cand = tuner.candidate(c);
  const Family& f = tuner.space().families[cand.family];
  e.algorithm = std::string(to_string(f.algorithm));
  for (std::size_t i = 0; i < f.axes.size(); ++i)
    if (cand.position[i] >= 0) e.knobs.emplace_back(std::string(to_string(f.axes[i].knob)), f.axes[i].values[cand.position[i]]);
  e.ms = tuner.estimate(c);
  e.samples = tuner.samples();
  return e;
}

}  // namespace spmv::detail
