#pragma once
// What the stand-alone benchmarks take as MATRIX: a Matrix Market file (.mtx or .mtx.gz) or a
// generator spec kind:key=value,... (as `spmv bench --gen`), read or generated with f64 values and
// 32-bit indices.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/generators.hpp"
#include "spmv/matrix_market.hpp"

namespace spmv::bench_tools {

// The non-empty pieces of `list` between separators.
inline std::vector<std::string> split(const std::string& list, char sep) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(sep, start), list.size());
    if (end > start) parts.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

inline CsrMatrix<double, std::int32_t> load_matrix_spec(const std::string& spec) {
  if (spec.find(".mtx") != std::string::npos) return read_csr<double, std::int32_t>(spec);
  const auto colon = spec.find(':');
  std::map<std::string, double> params;
  if (colon != std::string::npos)
    for (const auto& kv : split(spec.substr(colon + 1), ',')) {
      const auto eq = kv.find('=');
      params[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    }
  return gen::generate<double, std::int32_t>(spec.substr(0, colon), params);
}

}  // namespace spmv::bench_tools
