// Semiring names and zeros (spmv/semiring.hpp); the CPU product is src/cpu/semiring_multiply.cpp.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/backends.hpp"
#include "core/native_values.hpp"
#include "core/semiring_ops.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"

namespace spmv {
namespace {

constexpr std::array<std::pair<Semiring, std::string_view>, 5> kNames{{{Semiring::PlusTimes, "plus-times"},
                                                                        {Semiring::MinPlus, "min-plus"},
                                                                        {Semiring::MaxTimes, "max-times"},
                                                                        {Semiring::OrAnd, "or-and"},
                                                                        {Semiring::MaxMin, "max-min"}}};

// The semiring kernels of each backend (src/cpu/semiring_plan.cpp, src/cuda/semiring_plan.cu), Auto first.
constexpr Algorithm kCpuKernels[] = {Algorithm::Auto, Algorithm::RowLoop, Algorithm::MergeParallel,
                                     Algorithm::ColumnChunked, Algorithm::Sell, Algorithm::Ell,
                                     Algorithm::EllR, Algorithm::Hyb, Algorithm::Coo, Algorithm::Dia,
                                     Algorithm::CompressedCsr};
constexpr Algorithm kCudaKernels[] = {Algorithm::Auto,      Algorithm::CsrVector, Algorithm::MergePath,
                                      Algorithm::Sell,      Algorithm::Ell,       Algorithm::EllR,
                                      Algorithm::Hyb,       Algorithm::Coo,       Algorithm::Dia,
                                      Algorithm::CsrScalar, Algorithm::CsrCoop,   Algorithm::CsrAdaptive,
                                      Algorithm::LightSpmv, Algorithm::Pcsr,      Algorithm::Hola,
                                      Algorithm::SegmentedSum, Algorithm::ColumnChunked, Algorithm::EllRVector,
                                      Algorithm::CompressedCsr};

}  // namespace

std::span<const Algorithm> semiring_algorithms(Backend backend) {
  return backend == Backend::Cpu ? std::span<const Algorithm>(kCpuKernels) : std::span<const Algorithm>(kCudaKernels);
}

std::string semiring_algorithm_names(Backend backend) {
  std::string out;
  for (const Algorithm a : semiring_algorithms(backend)) out += (out.empty() ? "" : ", ") + std::string(to_string(a));
  return out;
}

void semiring_ops::refuse_dia_duplicates(Semiring s, std::int64_t duplicates, std::string_view where,
                                         std::string_view instead) {
  if (s == Semiring::PlusTimes || duplicates == 0) return;
  throw Unsupported(std::string(where) + ": DIA holds one value a row and diagonal and sums duplicate entries, " +
                    "which changes a " + std::string(to_string(s)) + " product (" + std::to_string(duplicates) +
                    " duplicates); merge them first or use " + std::string(instead));
}

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

void semiring_ops::check_lengths(Semiring s, std::int64_t rows, std::int64_t cols, std::size_t x, std::size_t y) {
  if (static_cast<std::int64_t>(x) != cols || static_cast<std::int64_t>(y) != rows)
    throw InvalidArgument("semiring_multiply (" + std::string(to_string(s)) + "): A is " + std::to_string(rows) +
                          " x " + std::to_string(cols) + ", x has " + std::to_string(x) + " entries and y " +
                          std::to_string(y));
}

template <class Value, class Index>
void semiring_multiply(Backend backend, Semiring s, const CsrMatrix<Value, Index>& a, std::span<const Value> x,
                       std::span<Value> y, const Options& options, Algorithm algorithm) {
  spmv::detail::require_native_values(options, "the semiring product");
  semiring_ops::check_lengths(s, a.rows, a.cols, x.size(), y.size());  // before any conversion or device call
  if (backend == Backend::Cpu) return SemiringPlan<Value, Index>(a, s, algorithm, options).apply(x, y);
#ifdef SPMV_HAS_CUDA
  // Without a device, refuse as make_cuda_operator and make_cuda_spmm_operator do (Unsupported): the
  // first runtime call would otherwise throw CudaError with the runtime's wording (on a machine with no
  // driver, "CUDA driver version is insufficient"), which callers that map Unsupported to "not
  // available here" misread as a failed product.
  if (!cuda_available()) throw Unsupported("semiring_multiply: no CUDA device is available");
#endif
  detail::cuda_semiring_multiply(s, a, x, y, options, algorithm);
}

#ifndef SPMV_HAS_CUDA
template <class Value, class Index>
void detail::cuda_semiring_multiply(Semiring, const CsrMatrix<Value, Index>&, std::span<const Value>, std::span<Value>,
                                    const Options&, Algorithm) {
  throw Unsupported("spmv was built without the CUDA backend (configure with -DSPMV_ENABLE_CUDA=ON)");
}
#endif

#define SPMV_INSTANTIATE(V, I)                                                                                    \
  template void semiring_multiply(Backend, Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, \
                                  const Options&, Algorithm);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE
#ifndef SPMV_HAS_CUDA
#define SPMV_INSTANTIATE(V, I) \
  template void detail::cuda_semiring_multiply(Semiring, const CsrMatrix<V, I>&, std::span<const V>, std::span<V>, \
                                               const Options&, Algorithm);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE
#endif

}  // namespace spmv
