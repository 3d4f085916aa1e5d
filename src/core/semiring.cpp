// Semiring names and zeros (spmv/semiring.hpp); the CPU product is src/cpu/semiring_multiply.cpp.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/semiring_ops.hpp"

namespace spmv {
namespace {

constexpr std::array<std::pair<Semiring, std::string_view>, 5> kNames{{{Semiring::PlusTimes, "plus-times"},
                                                                        {Semiring::MinPlus, "min-plus"},
                                                                        {Semiring::MaxTimes, "max-times"},
                                                                        {Semiring::OrAnd, "or-and"},
                                                                        {Semiring::MaxMin, "max-min"}}};

}  // namespace

std::string_view to_string(Semiring s) {
  for (const auto& [value, name] : kNames)
    if (value == s) return name;
  return "?";
}

std::optional<Semiring> parse_semiring(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& [value, known] : kNames)
    if (lower == known) return value;
  return std::nullopt;
}

std::string semiring_names() {
  std::string out;
  for (const auto& [value, name] : kNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

template <class Value>
Value semiring_zero(Semiring s) {
  return semiring_ops::with_semiring<Value>(s, [](auto ops) { return decltype(ops)::zero(); });
}

template float semiring_zero(Semiring);
template double semiring_zero(Semiring);

}  // namespace spmv
