#include "spmv/algorithm.hpp"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace spmv {
namespace {

// Intent-level names first (kIntents of them), then the algorithms in declaration order.
constexpr std::size_t kIntents = 2;
constexpr std::array<std::pair<Algorithm, std::string_view>, 32> kNames{{
    {Algorithm::Auto, "auto"},
    {Algorithm::Tune, "tune"},
    {Algorithm::Reference, "reference"},
    {Algorithm::RowLoop, "row-loop"},
    {Algorithm::ColumnChunked, "column-chunked"},
    {Algorithm::MergeParallel, "merge-parallel"},
    {Algorithm::Mkl, "mkl"},
    {Algorithm::CsrScalar, "csr-scalar"},
    {Algorithm::CsrVector, "csr-vector"},
    {Algorithm::CsrCoop, "csr-coop"},
    {Algorithm::CsrAdaptive, "csr-adaptive"},
    {Algorithm::Pcsr, "pcsr"},
    {Algorithm::LightSpmv, "lightspmv"},
    {Algorithm::MergePath, "merge-path"},
    {Algorithm::Hola, "hola"},
    {Algorithm::SegmentedSum, "segmented-sum"},
    {Algorithm::TransposeAtomic, "transpose-atomic"},
    {Algorithm::HolaBuffered, "hola-buffered"},
    {Algorithm::ExplicitTranspose, "explicit-transpose"},
    {Algorithm::Symmetric, "symmetric"},
    {Algorithm::Coo, "coo"},
    {Algorithm::Ell, "ell"},
    {Algorithm::EllR, "ellr"},
    {Algorithm::EllRVector, "ellr-vector"},
    {Algorithm::Dia, "dia"},
    {Algorithm::Hyb, "hyb"},
    {Algorithm::Sell, "sell"},
    {Algorithm::CompressedCsr, "compressed-csr"},
    {Algorithm::CusparseCsrAlg1, "cusparse-csr-alg1"},
    {Algorithm::CusparseCsrAlg2, "cusparse-csr-alg2"},
    {Algorithm::CusparseCooAlg1, "cusparse-coo-alg1"},
    {Algorithm::Eigen, "eigen"},
}};

constexpr auto make_all() {
  std::array<Algorithm, kNames.size() - kIntents> all{};
  for (std::size_t i = kIntents; i < kNames.size(); ++i) all[i - kIntents] = kNames[i].first;
  return all;
}
constexpr auto kAll = make_all();

std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '-' && c != '_') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

}  // namespace

std::string_view to_string(Algorithm a) {
  for (auto& [alg, name] : kNames)
    if (alg == a) return name;
  return "unknown";
}

std::string_view to_string(Operation op) {
  return op == Operation::NonTranspose ? "N" : "T";
}

std::string_view to_string(Backend b) { return b == Backend::Cpu ? "cpu" : "cuda"; }

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  const std::string wanted = normalize(name);
  for (auto& [alg, n] : kNames)
    if (normalize(n) == wanted) return alg;
  return std::nullopt;
}

std::span<const Algorithm> all_algorithms() { return kAll; }

bool is_vendor(Algorithm a) {
  return a == Algorithm::CusparseCsrAlg1 || a == Algorithm::CusparseCsrAlg2 || a == Algorithm::CusparseCooAlg1 ||
         a == Algorithm::Eigen || a == Algorithm::Mkl;
}

}  // namespace spmv
