// The dispatch layer: Algorithm -> factory, the Auto rule, degenerate shapes, and the Plan.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "core/backends.hpp"
#include "core/workspace_order.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/row_statistics.cuh"

namespace spmv {
namespace cuda {
namespace {

template <class Value, class Index>
struct Entry {
  Algorithm algorithm;
  AlgorithmFactory<Value, Index> factory;
};

// One line per algorithm (STYLE.md §1).
template <class Value, class Index>
constexpr std::array<Entry<Value, Index>, 22> kTable{{
    {Algorithm::CsrScalar, make_csr_scalar<Value, Index>},
    {Algorithm::CsrVector, make_csr_vector<Value, Index>},
    {Algorithm::CsrCoop, make_csr_coop<Value, Index>},
    {Algorithm::CsrAdaptive, make_csr_adaptive<Value, Index>},
    {Algorithm::Pcsr, make_pcsr<Value, Index>},
    {Algorithm::LightSpmv, make_lightspmv<Value, Index>},
    {Algorithm::MergePath, make_merge_path<Value, Index>},
    {Algorithm::Hola, make_hola<Value, Index>},
    {Algorithm::HolaBuffered, make_hola_buffered<Value, Index>},
    {Algorithm::TransposeAtomic, make_transpose_atomic<Value, Index>},
    {Algorithm::ExplicitTranspose, make_explicit_transpose<Value, Index>},
    {Algorithm::Coo, make_coo<Value, Index>},
    {Algorithm::Ell, make_ell<Value, Index>},
    {Algorithm::EllR, make_ellr<Value, Index>},
    {Algorithm::EllRVector, make_ellr_vector<Value, Index>},
    {Algorithm::Dia, make_dia<Value, Index>},
    {Algorithm::Hyb, make_hyb<Value, Index>},
    {Algorithm::Sell, make_sell<Value, Index>},
    {Algorithm::CompressedCsr, make_compressed_csr<Value, Index>},
    {Algorithm::CusparseCsrAlg1, make_cusparse_csr_alg1<Value, Index>},
    {Algorithm::CusparseCsrAlg2, make_cusparse_csr_alg2<Value, Index>},
    {Algorithm::CusparseCooAlg1, make_cusparse_coo_alg1<Value, Index>},
}};

constexpr std::array kNonTranspose{
    Algorithm::CsrScalar, Algorithm::CsrVector, Algorithm::CsrCoop, Algorithm::CsrAdaptive,
    Algorithm::Pcsr,      Algorithm::LightSpmv, Algorithm::MergePath, Algorithm::Hola,
    Algorithm::Coo,       Algorithm::Ell,       Algorithm::EllR,      Algorithm::EllRVector,
    Algorithm::Dia,       Algorithm::Hyb,       Algorithm::Sell,      Algorithm::CompressedCsr,
    Algorithm::CusparseCsrAlg1, Algorithm::CusparseCsrAlg2, Algorithm::CusparseCooAlg1};
constexpr std::array kTranspose{Algorithm::Hola,          Algorithm::HolaBuffered,    Algorithm::TransposeAtomic,
                                Algorithm::CsrVector,     Algorithm::ExplicitTranspose, Algorithm::CusparseCsrAlg1,
                                Algorithm::CusparseCooAlg1};

// The CUDA side of WorkspaceOrder: one event of the plan, recorded after each product.
class EventDriver {
 public:
  using Stream = cudaStream_t;

  EventDriver() {
    cudaEvent_t event = nullptr;
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    event_.reset(event);
  }
  bool capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    SPMV_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    return status != cudaStreamCaptureStatusNone;
  }
  // Unique for the process lifetime, unlike the handle, which a new stream may reuse; it also tells
  // apart the per-thread default streams of different threads, which share one handle.
  std::uint64_t id(cudaStream_t stream) {
    unsigned long long id = 0;
    SPMV_CUDA_CHECK(cudaStreamGetId(stream, &id));
    return id;
  }
  void record(cudaStream_t stream) { SPMV_CUDA_CHECK(cudaEventRecord(event_.get(), stream)); }
  void wait(cudaStream_t stream) { SPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, event_.get(), 0)); }

 private:
  struct Destroy {
    void operator()(cudaEvent_t event) const { cudaEventDestroy(event); }
  };
  std::unique_ptr<CUevent_st, Destroy> event_;
};

bool debug_log() {
  static const bool enabled = [] {
    const char* v = std::getenv("SPMV_DEBUG_LOG");
    return v && *v && std::string(v) != "0";
  }();
  return enabled;
}

}  // namespace

// Thresholds of the Auto rule, from the H200 benchmark of 2026-11-21 (spmv bench, % of the 4264 GB/s
// copy bandwidth, f64 / f32; docs/algorithms/csr_vector.md has the table).
// A longest row above this multiple of the mean counts as a long row (long_rows, dense_rows, rmat).
constexpr double kLongRowFactor = 32.0;
// With long rows, a coefficient of variation above this means a few huge rows hold most nonzeros
// (long_rows cv 56, dense_rows cv 97): CSR-vector splits them over warps (2048-nonzero chunks:
// long_rows 47.3% / 38.4%, dense_rows 51.3% / 40.7%, vs cuSPARSE CSR_ALG1 46.9% / 38.1% and
// 50.2% / 39.4%; CSR-adaptive 40.6% / 27.8% on long_rows). Below it the lengths follow a power law
// (rmat cv 9): Hola with small blocks (hola_common.cuh), no preprocessing. rmat, 2026-11-21, run
// alone / after other matrices: Hola 37.0-37.6% / 27.7% and 35.2% / 28.1%, merge-path 35.4-36.6% /
// 26.8% and 36.6% / 27.4%, CSR-vector 36.9% / 27.8% and 35.9% / 27.6%, cuSPARSE COO_ALG1 37.2% /
// 29.1%: a near tie of the three, Hola ahead on average; none beats cuSPARSE in float.
constexpr double kFewHugeRowsCv = 20.0;
// Without long rows, row lengths varying more than this relative to the mean (mostly_empty: mean 4,
// std 12) go to CSR-adaptive (39.1% / 27.8%; CSR-vector 38.1% / 26.9%, merge-path 38.1% / 28.3%).
constexpr double kIrregularCv = 1.0;
// Regular rows this short go to CSR-scalar, a thread per row (poisson2d, 5 per row: 86% / 81%, vs
// CSR-vector 69% / 59%); longer ones to CSR-vector (stencil27: 81% / 79% vs CSR-scalar 35% / 47%;
// random_uniform 16 per row: 38.3% / 27.2% vs 26.6% / 24.4%).
constexpr double kScalarMaxMean = 8.0;
// Below this many nonzeros a product takes a few microseconds and launch latency dominates: the
// one-launch CSR-vector (long rows split inside the same launch) beats the multi-launch kernels.
// H200 suite of 2026-11-21 (commit cc6277a, 22 SuiteSparse files + 8 generated, f64 and f32): Auto
// at least as fast as the best cuSPARSE on 55 of 60 (matrix, precision) with this cut, 45 without.
constexpr std::int64_t kSmallMatrixNnz = std::int64_t(1) << 18;
// A^T x: the explicit transpose (CSC built once on the GPU, then a non-transposed CSR kernel) was the
// fastest per product on every matrix of that suite, 1.3x-2.6x the best cuSPARSE transpose (e.g.
// stencil27 f64 86% of copy bandwidth vs 39%), and bit-reproducible, but it holds a second copy of the
// matrix (about nnz*(value + index) bytes, reported as extra_bytes). Its setup was repaid against the
// fastest copy-free kernel after 19-105 products on 15 of the 16 (matrix, precision) cases of the suite
// (docs/PERFORMANCE.md, "pays off after"; poisson2d f32 needed 686, where the copy-free kernel is
// within 3% of it anyway), so Auto takes it only when the caller expects at least this many products
// and the copy fits.
constexpr std::int64_t kExplicitTransposeMinApplies = 128;
// The copy may take at most this share of the free device memory: the rest stays the caller's.
constexpr double kTransposeCopyMemoryShare = 0.5;
// Without the copy, short regular rows scatter fastest with a thread per row and atomics
// (transpose-atomic: poisson2d/3d f64 60.6% / 58.4% of copy bandwidth, Hola-SpMVT 45.4% / 42.1%,
// cuSPARSE 51.8% / 47.6%); every other shape goes to Hola-SpMVT (stencil27 30.0% vs 10.6%, random
// 26.0% vs 12.8%, rmat 14.6% vs 0.7%, mostly_empty 24.8% vs 21.6%).

Algorithm choose_algorithm(double row_mean, double row_std, std::int64_t row_max, std::int64_t rows,
                           std::int64_t nnz, Operation op, std::int64_t expected_applies, bool transpose_copy_fits) {
  (void)rows;
  const bool long_rows = double(row_max) > kLongRowFactor * (row_mean + 1);
  if (op == Operation::Transpose) {
    if (expected_applies >= kExplicitTransposeMinApplies && transpose_copy_fits) return Algorithm::ExplicitTranspose;
    const bool short_regular = !long_rows && row_std <= kIrregularCv * row_mean && row_mean <= kScalarMaxMean;
    return short_regular ? Algorithm::TransposeAtomic : Algorithm::Hola;
  }
  if (nnz < kSmallMatrixNnz) return Algorithm::CsrVector;
  if (long_rows)
    return row_std > kFewHugeRowsCv * row_mean ? Algorithm::CsrVector : Algorithm::Hola;
  if (row_std > kIrregularCv * row_mean) return Algorithm::CsrAdaptive;
  return row_mean <= kScalarMaxMean ? Algorithm::CsrScalar : Algorithm::CsrVector;
}

// A x with the caller's hint of many products: DIA reads no column indices (8 B/nnz instead of 12 in
// f64), and on the H200 suite it ran at 2.0-2.4x cuSPARSE on poisson2d/3d and stencil27 (126-150% of
// copy bandwidth under the CSR byte model), its conversion (0.8-1.9 ms) repaid against Auto's CSR
// choice after 29-59 products (docs/PERFORMANCE.md, 2026-11-23). Auto tries it from this many
// expected products on ...
constexpr std::int64_t kDiaMinApplies = 64;
// ... and keeps it only when DIA stores at most this many slots per nonzero, so that it still reads
// fewer bytes than CSR: (value + index) / value is 1.5 in f64 and 2 in f32; the margin keeps it clear
// of the break-even, where the CSR kernels' better x reuse wins.
constexpr double kDiaMaxPaddingF64 = 1.2;
constexpr double kDiaMaxPaddingF32 = 1.5;

// The explicit transpose's device memory: the CSC copy plus its build's scratch (keys, two
// permutations, CUB's radix-sort storage, about as large again).
template <class Value, class Index>
bool explicit_transpose_fits(const CsrView<Value, Index>& a) {
  const double copy = double(a.nnz) * (sizeof(Value) + sizeof(Index)) + double(a.cols + 1) * sizeof(Index);
  const double scratch = double(a.nnz) * (3 * sizeof(Index) + sizeof(long long));
  std::size_t free = 0, total = 0;
  SPMV_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return copy + scratch <= kTransposeCopyMemoryShare * double(free);
}
template bool explicit_transpose_fits(const CsrView<float, std::int32_t>&);
template bool explicit_transpose_fits(const CsrView<float, std::int64_t>&);
template bool explicit_transpose_fits(const CsrView<double, std::int32_t>&);
template bool explicit_transpose_fits(const CsrView<double, std::int64_t>&);

bool auto_tries_dia(Operation op, std::int64_t expected_applies) {
  return op == Operation::NonTranspose && expected_applies >= kDiaMinApplies;
}

template <class Value, class Index>
struct Plan<Value, Index>::Impl {
  CsrView<Value, Index> matrix;
  Algorithm algorithm = Algorithm::Auto;
  Operation op = Operation::NonTranspose;
  AlgorithmPtr<Value, Index> kernel;  // null for degenerate shapes
  double setup_ms = 0;
  // Present when the kernel writes a workspace of its own: orders products across streams.
  std::optional<detail::WorkspaceOrder<EventDriver>> order;
};

template <class Value, class Index>
Plan<Value, Index>::Plan(CsrView<Value, Index> matrix, Algorithm algorithm, Operation op, const Options& options,
                         cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  if (matrix.rows < 0 || matrix.cols < 0 || matrix.nnz < 0)
    throw InvalidArgument("spmv::cuda::Plan: negative matrix size");
  if (matrix.nnz > 0 && (!matrix.row_ptr || !matrix.col_idx || !matrix.values))
    throw InvalidArgument("spmv::cuda::Plan: null matrix array");
  if (matrix.rows > 0 && !matrix.row_ptr) throw InvalidArgument("spmv::cuda::Plan: null row_ptr");
  impl_->matrix = matrix;
  impl_->op = op;
  const auto start = std::chrono::steady_clock::now();
  const bool degenerate = matrix.rows == 0 || matrix.cols == 0 || matrix.nnz == 0;
  const bool auto_dia = algorithm == Algorithm::Auto && auto_tries_dia(op, options.expected_applies);
  if (algorithm == Algorithm::Auto) {
    if (degenerate) {
      algorithm = choose_algorithm(0, 0, 0, matrix.rows, 0, op);
    } else {
      const RowStatistics s = row_statistics(matrix, stream);
      algorithm = choose_algorithm(s.mean, s.stddev, s.max, matrix.rows, matrix.nnz, op, options.expected_applies,
                                   op == Operation::Transpose && explicit_transpose_fits(matrix));
    }
  }
  const auto& offered = op == Operation::NonTranspose ? std::span<const Algorithm>(kNonTranspose)
                                                      : std::span<const Algorithm>(kTranspose);
  if (std::find(offered.begin(), offered.end(), algorithm) == offered.end()) {
    std::string list;
    for (Algorithm a : offered) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
    throw Unsupported("the CUDA backend does not offer " + std::string(to_string(algorithm)) + " for op = " +
                      std::string(to_string(op)) + "; it offers: " + list);
  }
  // Degenerate shapes never reach a kernel (STYLE.md §4): apply() only scales y.
  if (!degenerate && auto_dia) {
    Options dia = options;
    dia.max_padding =
        std::min(format::max_padding_of(options), sizeof(Value) == 8 ? kDiaMaxPaddingF64 : kDiaMaxPaddingF32);
    try {
      impl_->kernel = make_dia<Value, Index>(matrix, op, dia, stream);
      algorithm = Algorithm::Dia;
    } catch (const Unsupported& e) {  // not banded enough: the CSR choice stands (logged below)
      if (debug_log()) std::fprintf(stderr, "[spmv] auto: DIA not taken: %s\n", e.what());
    }
  }
  impl_->algorithm = algorithm;
  if (!degenerate && !impl_->kernel) {
    for (const auto& entry : kTable<Value, Index>)
      if (entry.algorithm == algorithm) impl_->kernel = entry.factory(matrix, op, options, stream);
  }
  if (impl_->kernel && impl_->kernel->writes_workspace()) impl_->order.emplace(EventDriver());
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  impl_->setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (debug_log())
    std::fprintf(stderr, "[spmv] plan %lldx%lld nnz=%lld op=%s: %s (%s), setup %.3f ms, extra %zu bytes\n",
                 static_cast<long long>(matrix.rows), static_cast<long long>(matrix.cols),
                 static_cast<long long>(matrix.nnz), std::string(to_string(op)).c_str(),
                 std::string(to_string(algorithm)).c_str(), policy().c_str(), impl_->setup_ms, extra_bytes());
}

template <class Value, class Index>
Plan<Value, Index>::~Plan() = default;
template <class Value, class Index>
Plan<Value, Index>::Plan(Plan&&) noexcept = default;
template <class Value, class Index>
Plan<Value, Index>& Plan<Value, Index>::operator=(Plan&&) noexcept = default;

template <class Value, class Index>
void Plan<Value, Index>::apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) {
  if (!impl_) throw InvalidArgument("spmv::cuda::Plan::apply on a moved-from plan");
  // alpha == 0 references neither A nor x (BLAS): NaN or Inf in x must not reach y. An empty A
  // likewise leaves y = beta * y.
  if (alpha == Value(0) || !impl_->kernel) {
    scale_vector(beta, y, y_size(), stream);
    return;
  }
  if (!impl_->order) {
    impl_->kernel->apply(alpha, x, beta, y, stream);
    return;
  }
  impl_->order->run(stream, [&] { impl_->kernel->apply(alpha, x, beta, y, stream); });
}

template <class Value, class Index>
Algorithm Plan<Value, Index>::algorithm() const { return impl_->algorithm; }
template <class Value, class Index>
Operation Plan<Value, Index>::operation() const { return impl_->op; }
template <class Value, class Index>
std::string Plan<Value, Index>::policy() const {
  return impl_->kernel ? impl_->kernel->policy() : std::string("empty matrix: y = beta*y");
}
template <class Value, class Index>
double Plan<Value, Index>::setup_ms() const { return impl_->setup_ms; }
template <class Value, class Index>
std::size_t Plan<Value, Index>::extra_bytes() const { return impl_->kernel ? impl_->kernel->extra_bytes() : 0; }
template <class Value, class Index>
Index Plan<Value, Index>::x_size() const {
  return impl_->op == Operation::NonTranspose ? impl_->matrix.cols : impl_->matrix.rows;
}
template <class Value, class Index>
Index Plan<Value, Index>::y_size() const {
  return impl_->op == Operation::NonTranspose ? impl_->matrix.rows : impl_->matrix.cols;
}

template class Plan<float, std::int32_t>;
template class Plan<float, std::int64_t>;
template class Plan<double, std::int32_t>;
template class Plan<double, std::int64_t>;

}  // namespace cuda

std::span<const Algorithm> detail::cuda_algorithms(Operation op) {
  if (!cuda_available()) return {};
  if (op == Operation::NonTranspose) return cuda::kNonTranspose;
  return cuda::kTranspose;
}

}  // namespace spmv
