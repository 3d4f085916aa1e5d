// Half-precision values (Options::values): the device copy of the rounded values and the algorithm that
// reads it. The kernels themselves are the ordinary ones, instantiated for __half and __nv_bfloat16
// (src/cuda/common/stored_value.cuh); this file only converts, chooses and owns.
#include <algorithm>
#include <array>
#include <string>

#include "core/auto_rule.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/half_values.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv::cuda {
namespace {

// cuSPARSE is not among them: its mixed mode takes x in the matrix's type (A/X CUDA_R_16F or
// CUDA_R_16BF, y and compute CUDA_R_32F), so it computes another product (x rounded too); `spmv bench`
// compares half-value rows with cuSPARSE's f32 product instead (docs/ALGORITHMS.md).
constexpr std::array kHalfValueAlgorithms{Algorithm::CsrScalar, Algorithm::CsrVector, Algorithm::CsrCoop,
                                          Algorithm::CsrAdaptive, Algorithm::Pcsr,    Algorithm::LightSpmv,
                                          Algorithm::MergePath, Algorithm::Hola,      Algorithm::Sell};

template <class Stored>
__global__ void round_values_kernel(const float* __restrict__ in, long long n, Stored* __restrict__ out) {
  const long long stride = std::int64_t(gridDim.x) * blockDim.x;
  for (long long i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (std::is_same_v<Stored, __half>)
      out[i] = __float2half_rn(in[i]);
    else
      out[i] = __float2bfloat16_rn(in[i]);
  }
}

template <class Stored>
AlgorithmPtr<float, std::int32_t> make_stored(Algorithm algorithm, const CsrView<Stored, std::int32_t>& m,
                                              Operation op, const Options& options, cudaStream_t stream) {
  switch (algorithm) {
    case Algorithm::CsrScalar: return make_csr_scalar(m, op, options, stream);
    case Algorithm::CsrVector: return make_csr_vector(m, op, options, stream);
    case Algorithm::CsrCoop: return make_csr_coop(m, op, options, stream);
    case Algorithm::CsrAdaptive: return make_csr_adaptive(m, op, options, stream);
    case Algorithm::Pcsr: return make_pcsr(m, op, options, stream);
    case Algorithm::LightSpmv: return make_lightspmv(m, op, options, stream);
    case Algorithm::MergePath: return make_merge_path(m, op, options, stream);
    case Algorithm::Hola: return make_hola(m, op, options, stream);
    case Algorithm::Sell: return make_sell(m, op, options, stream);
    default: break;
  }
  throw Unsupported("algorithm " + std::string(to_string(algorithm)) + " has no half-value kernel");
}

// The values rounded to Stored into `values` (nnz 16-bit slots) on `stream`, and `algorithm` built on them.
template <class Stored>
AlgorithmPtr<float, std::int32_t> build_on_rounded(const CsrView<float, std::int32_t>& matrix,
                                                   DeviceBuffer<std::uint16_t>& values, Algorithm algorithm,
                                                   Operation op, const Options& options, cudaStream_t stream) {
  constexpr int block = 256;
  auto* rounded = reinterpret_cast<Stored*>(values.data());
  round_values_kernel<<<grid_for(matrix.nnz, block), block, 0, stream>>>(matrix.values, matrix.nnz, rounded);
  SPMV_CHECK_LAUNCH("round_values_kernel");
  const CsrView<Stored, std::int32_t> view{matrix.rows, matrix.cols, matrix.nnz, matrix.row_ptr, matrix.col_idx,
                                           rounded};
  return make_stored(algorithm, view, op, options, stream);
}

// Owns the rounded values and forwards to the algorithm built on them.
class HalfValues final : public CudaAlgorithm<float, std::int32_t> {
 public:
  HalfValues(DeviceBuffer<std::uint16_t> values, AlgorithmPtr<float, std::int32_t> inner, ValueStorage storage)
      : values_(std::move(values)), inner_(std::move(inner)), storage_(storage) {}

  void apply(float alpha, const float* x, float beta, float* y, cudaStream_t stream) override {
    inner_->apply(alpha, x, beta, y, stream);
  }
  std::string policy() const override { return inner_->policy() + " values=" + std::string(to_string(storage_)); }
  std::size_t extra_bytes() const override { return values_.bytes() + inner_->extra_bytes(); }
  bool writes_workspace() const override { return inner_->writes_workspace(); }
  bool reproducible() const override { return inner_->reproducible(); }

 private:
  DeviceBuffer<std::uint16_t> values_;  // declared first: the algorithm (and its views of it) goes first
  AlgorithmPtr<float, std::int32_t> inner_;
  ValueStorage storage_;
};

std::string half_list() {
  std::string list;
  for (Algorithm a : kHalfValueAlgorithms) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
  return list;
}

}  // namespace

std::span<const Algorithm> half_value_algorithms() { return kHalfValueAlgorithms; }

void check_half_values(Algorithm algorithm, Operation op, const Options& options) {
  const std::string storage(to_string(options.values));
  if (op == Operation::Transpose && algorithm != Algorithm::Auto && algorithm != Algorithm::CsrVector)
    throw Unsupported("A^T x with values=" + storage + " is offered by csr-vector (atomic scatter) only, not by " +
                      std::string(to_string(algorithm)));
  if (options.reorder != Reorder::None) throw Unsupported("values=" + storage + " does not combine with reorder");
  if (algorithm != Algorithm::Auto &&
      std::find(kHalfValueAlgorithms.begin(), kHalfValueAlgorithms.end(), algorithm) == kHalfValueAlgorithms.end())
    throw Unsupported("algorithm " + std::string(to_string(algorithm)) + " does not offer values=" + storage +
                      "; these do: " + half_list());
}

AlgorithmPtr<float, std::int32_t> make_half_values(const CsrView<float, std::int32_t>& matrix, Algorithm algorithm,
                                                   Operation op, const Options& options, cudaStream_t stream,
                                                   Algorithm* chosen) {
  const bool requested_auto = algorithm == Algorithm::Auto;
  if (requested_auto && op == Operation::Transpose) {
    algorithm = Algorithm::CsrVector;
  } else if (requested_auto) {
    // The CSR rule as for f32 (its kernels all serve half values); the format conversions are not offered.
    const RowStatistics s = row_statistics(matrix, stream);
    const detail::RowShape shape = row_shape(matrix, s);
    algorithm = detail::csr_kernel_for(detail::classify_rows(shape));
    // segmented-sum (power-law and half-empty long rows) has no half-value kernel: the classes' kernel
    // before it, merge-path.
    if (algorithm == Algorithm::SegmentedSum) algorithm = Algorithm::MergePath;
    // Options::deterministic: the rule's merge-path carries between tiles with atomics.
    if (options.deterministic && algorithm == Algorithm::MergePath) algorithm = Algorithm::CsrVector;
  }
  DeviceBuffer<std::uint16_t> values(static_cast<std::size_t>(matrix.nnz));
  AlgorithmPtr<float, std::int32_t> inner =
      options.values == ValueStorage::F16
          ? build_on_rounded<__half>(matrix, values, algorithm, op, options, stream)
          : build_on_rounded<__nv_bfloat16>(matrix, values, algorithm, op, options, stream);
  if (options.deterministic && !inner->reproducible())
    throw Unsupported("algorithm " + std::string(to_string(algorithm)) + " (" + inner->policy() +
                      ") is not bit-reproducible; with Options::deterministic and values=" +
                      std::string(to_string(options.values)) +
                      " use csr-scalar, csr-vector, csr-coop, pcsr, lightspmv or sell");
  *chosen = algorithm;
  return std::make_unique<HalfValues>(std::move(values), std::move(inner), options.values);
}

}  // namespace spmv::cuda
