// The dispatch layer: Algorithm -> factory, the Auto rule, degenerate shapes, and the Plan.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/auto_rule.hpp"
#include "core/backends.hpp"
#include "core/debug_log.hpp"
#include "core/workspace_order.hpp"
#include "cuda/algorithms.cuh"
#include "cuda/column_chunked.cuh"
#include "cuda/event_driver.cuh"
#include "cuda/common/epilogue.cuh"
#include "cuda/common/format_common.cuh"
#include "cuda/half_values.cuh"
#include "cuda/reordered.cuh"
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
constexpr std::array<Entry<Value, Index>, 25> kTable{{
    {Algorithm::CsrScalar, make_csr_scalar<Value, Index>},
    {Algorithm::CsrVector, make_csr_vector<Value, Index>},
    {Algorithm::CsrCoop, make_csr_coop<Value, Index>},
    {Algorithm::CsrAdaptive, make_csr_adaptive<Value, Index>},
    {Algorithm::Pcsr, make_pcsr<Value, Index>},
    {Algorithm::LightSpmv, make_lightspmv<Value, Index>},
    {Algorithm::MergePath, make_merge_path<Value, Index>},
    {Algorithm::Hola, make_hola<Value, Index>},
    {Algorithm::HolaBuffered, make_hola_buffered<Value, Index>},
    {Algorithm::SegmentedSum, make_segmented_sum<Value, Index>},
    {Algorithm::TransposeAtomic, make_transpose_atomic<Value, Index>},
    {Algorithm::ExplicitTranspose, make_explicit_transpose<Value, Index>},
    {Algorithm::Symmetric, make_symmetric<Value, Index>},
    {Algorithm::Coo, make_coo<Value, Index>},
    {Algorithm::Ell, make_ell<Value, Index>},
    {Algorithm::EllR, make_ellr<Value, Index>},
    {Algorithm::EllRVector, make_ellr_vector<Value, Index>},
    {Algorithm::Dia, make_dia<Value, Index>},
    {Algorithm::Hyb, make_hyb<Value, Index>},
    {Algorithm::Sell, make_sell<Value, Index>},
    {Algorithm::CompressedCsr, make_compressed_csr<Value, Index>},
    {Algorithm::ColumnChunked, make_column_chunked<Value, Index>},
    {Algorithm::CusparseCsrAlg1, make_cusparse_csr_alg1<Value, Index>},
    {Algorithm::CusparseCsrAlg2, make_cusparse_csr_alg2<Value, Index>},
    {Algorithm::CusparseCooAlg1, make_cusparse_coo_alg1<Value, Index>},
}};

constexpr std::array kNonTranspose{
    Algorithm::CsrScalar, Algorithm::CsrVector, Algorithm::CsrCoop, Algorithm::CsrAdaptive,
    Algorithm::Pcsr,      Algorithm::LightSpmv, Algorithm::MergePath, Algorithm::Hola,
    Algorithm::SegmentedSum,
    Algorithm::Coo,       Algorithm::Ell,       Algorithm::EllR,      Algorithm::EllRVector,
    Algorithm::Dia,       Algorithm::Hyb,       Algorithm::Sell,      Algorithm::CompressedCsr,
    Algorithm::ColumnChunked,
    Algorithm::CusparseCsrAlg1, Algorithm::CusparseCsrAlg2, Algorithm::CusparseCooAlg1};
constexpr std::array kTranspose{Algorithm::Hola,          Algorithm::HolaBuffered,    Algorithm::TransposeAtomic,
                                Algorithm::CsrVector,     Algorithm::SegmentedSum,   Algorithm::ExplicitTranspose,
                                Algorithm::Symmetric,     Algorithm::ColumnChunked,   Algorithm::CusparseCsrAlg1,
                                Algorithm::CusparseCooAlg1};

}  // namespace

// The algorithms whose A x is bit-reproducible by construction (CudaAlgorithm::reproducible; csr-vector
// when it splits no row, or adds the chunks in order under Options::deterministic).
constexpr std::array kReproducibleNonTranspose{
    Algorithm::CsrScalar, Algorithm::CsrVector, Algorithm::CsrCoop,        Algorithm::Pcsr,
    Algorithm::LightSpmv, Algorithm::Ell,       Algorithm::EllR,           Algorithm::EllRVector,
    Algorithm::Dia,       Algorithm::Sell,      Algorithm::CompressedCsr,  Algorithm::CusparseCsrAlg2};

static std::string reproducible_list(Operation op) {
  if (op == Operation::Transpose) return "explicit-transpose, or symmetric on a matrix equal to its transpose";
  std::string list;
  for (std::size_t i = 0; i < kReproducibleNonTranspose.size(); ++i)
    list += (i == 0 ? "" : i + 1 == kReproducibleNonTranspose.size() ? " or " : ", ") +
            std::string(to_string(kReproducibleNonTranspose[i]));
  return list;
}

// A x: Auto's rule lives in src/core/auto_rule.{hpp,cpp} (CUDA-free, fitted and cross-validated on
// matrix families). A^T x keeps its own measured thresholds here (H200 benchmark of 2026-11-21, % of
// the 4264 GB/s copy bandwidth, f64 / f32):
// a longest row above this multiple of the mean counts as a long row (long_rows, dense_rows, rmat) ...
constexpr double kTransposeLongRowFactor = 32.0;
// ... and rows varying more than this relative to the mean, or longer on average than this, are not
// "short regular" rows (see transpose-atomic below).
constexpr double kTransposeIrregularCv = 1.0;
constexpr double kTransposeScalarMaxMean = 8.0;
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
// Below this many nonzeros a product lasts about as long as two launches (12 MB at ~3 TB/s, ~4 us),
// and CSR-vector's atomic scatter (one launch after the scaling of y, a sub-warp per row) beat both
// on the small SuiteSparse matrices without long rows (H200, 2026-11-26, docs/PERFORMANCE.md
// "Transpose without a copy": harmonic mean over the best cuSPARSE 0.89 -> 1.00 f32, 0.90 -> 0.97 f64
// on the half of the files not looked at). The bound comes from the launch time, not from a fit.
constexpr std::int64_t kTransposeVectorMaxNnz = std::int64_t(1) << 20;
// Below that bound, csr-vector's sub-warp per row stays the choice up to this longest row relative to
// the mean (a row past it keeps one sub-warp busy while the rest of the grid waits); longer rows go to
// segmented-sum's nonzero-balanced stripes. Fitted on the even members of 36 generated matrices below
// 2^20 nonzeros with long rows (R-MAT scales 10-15, long_rows, dense_rows; factor 32-512 and none),
// checked on the odd: hmean over the best cuSPARSE transpose 0.87 -> 1.00 (Hola-SpMVT, the choice
// before, ran at 0.85; csr-vector with every row at 0.33). H200, 2026-11-30, docs/PERFORMANCE.md
// "A^T x of small matrices with long rows".
constexpr double kTransposeVectorLongRowFactor = 64.0;
// A^T x with the hint on a square matrix: A == A^T is checked first on the device (a thread per nonzero,
// two binary searches, stopping at the first violation) and, when it holds, A^T x runs A x's own plan:
// no copy, A x's speed, 1.6-2.9x the best cuSPARSE transpose (H200, 2026-11-27, 11 SuiteSparse files and
// three 20 M-nonzero stencils; docs/PERFORMANCE.md "A^T x of a matrix equal to its transpose"). The
// check added 0.01-0.11 ms to the plan on the files and 0.66-0.95 ms on the stencils, 2-20 products of
// A x, repaid against the copy-free kernels after 7-29 products; hence this many. Without the hint
// nothing depends on the values at plan time (a caller may change them between products), as with the
// conversions.
constexpr std::int64_t kSymmetricMinApplies = 32;

Algorithm choose_algorithm(double row_mean, double row_std, std::int64_t row_max, std::int64_t rows,
                           std::int64_t nnz, Operation op, std::int64_t expected_applies, bool transpose_copy_fits,
                           std::int64_t empty_rows) {
  if (op == Operation::Transpose) {
    if (expected_applies >= kExplicitTransposeMinApplies && transpose_copy_fits) return Algorithm::ExplicitTranspose;
    if (nnz < kTransposeVectorMaxNnz)
      return double(row_max) > kTransposeVectorLongRowFactor * (row_mean + 1) ? Algorithm::SegmentedSum
                                                                              : Algorithm::CsrVector;
    const bool long_rows = double(row_max) > kTransposeLongRowFactor * (row_mean + 1);
    const bool short_regular =
        !long_rows && row_std <= kTransposeIrregularCv * row_mean && row_mean <= kTransposeScalarMaxMean;
    if (short_regular) return Algorithm::TransposeAtomic;
    // segmented-sum's stripes beat Hola-SpMVT on all twelve suite cases of this class (2^20 nonzeros and
    // more; docs/PERFORMANCE.md "A^T x without a copy in stripes").
    return Algorithm::SegmentedSum;
  }
  detail::RowShape shape;
  shape.rows = rows;
  shape.nnz = nnz;
  shape.mean = row_mean;
  shape.stddev = row_std;
  shape.max = row_max;
  shape.empty_rows = empty_rows;
  return detail::csr_kernel_for(detail::classify_rows(shape));
}

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

bool auto_tries_dia(Operation op, const detail::RowShape& shape, int value_bytes, std::int64_t expected_applies) {
  return op == Operation::NonTranspose && detail::conversion_repaid(Algorithm::Dia, shape, value_bytes, expected_applies);
}

bool auto_hint_may_convert(const detail::RowShape& shape, int value_bytes, std::int64_t expected_applies) {
  // The conversions the Plan constructor below tries for A x, then race_column_chunked's own test.
  return auto_tries_dia(Operation::NonTranspose, shape, value_bytes, expected_applies) ||
         detail::format_for(detail::classify_rows(shape), shape, value_bytes, expected_applies) != Algorithm::Auto ||
         detail::column_chunks_may_pay(shape.rows, shape.cols, shape.nnz, value_bytes, l2_cache_bytes(),
                                       expected_applies);
}

// The symmetric route for Auto's A^T x: its plan when A == A^T (algorithm set to Symmetric), else null
// (the violation logged).
template <class Value, class Index>
AlgorithmPtr<Value, Index> try_symmetric(const CsrView<Value, Index>& matrix, const Options& options,
                                         cudaStream_t stream, Algorithm& algorithm) {
  try {
    auto kernel = make_symmetric<Value, Index>(matrix, Operation::Transpose, options, stream);
    algorithm = Algorithm::Symmetric;
    return kernel;
  } catch (const Unsupported& e) {
    if (detail::debug_log_enabled()) std::fprintf(stderr, "[spmv] auto: symmetric not taken: %s\n", e.what());
    return nullptr;
  }
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
  const bool requested_auto = algorithm == Algorithm::Auto;
  // Half-precision values (src/cuda/half_values.cu): their own set of algorithms, on a rounded copy.
  if (options.values != ValueStorage::Native) {
    if constexpr (std::is_same_v<Value, float> && std::is_same_v<Index, std::int32_t>) {
      check_half_values(algorithm, op, options);
      if (!degenerate) impl_->kernel = make_half_values(matrix, algorithm, op, options, stream, &algorithm);
    } else {
      throw Unsupported("values=" + std::string(to_string(options.values)) +
                        " keeps fp16/bf16 values with fp32 vectors and sums: it needs a float plan with 32-bit "
                        "indices");
    }
  }
  if (options.reorder != Reorder::None && matrix.rows != matrix.cols)
    throw Unsupported("reorder " + std::string(to_string(options.reorder)) +
                      " needs a square matrix (a symmetric permutation), got " + std::to_string(matrix.rows) + " x " +
                      std::to_string(matrix.cols));
  if (options.reorder != Reorder::None && !degenerate) {  // check_half_values refused reorder
    auto reordered = make_reordered<Value, Index>(matrix, algorithm, op, options, stream);
    algorithm = reordered->inner_algorithm();
    impl_->kernel = std::move(reordered);
  }
  // Auto for A x may convert (DIA, then SELL or ELL) when the caller's expected_applies repays it
  // (src/core/auto_rule.hpp); `conversions` lists what to try, in order, before the CSR choice.
  std::vector<Algorithm> conversions;
  if (algorithm == Algorithm::Auto && !impl_->kernel) {
    if (degenerate) {
      algorithm = choose_algorithm(0, 0, 0, matrix.rows, 0, op);
    } else {
      const RowStatistics s = row_statistics(matrix, stream);
      algorithm = choose_algorithm(s.mean, s.stddev, s.max, matrix.rows, matrix.nnz, op, options.expected_applies,
                                   op == Operation::Transpose && explicit_transpose_fits(matrix), s.empty_rows);
      if (op == Operation::Transpose && matrix.rows == matrix.cols &&
          options.expected_applies >= kSymmetricMinApplies)
        impl_->kernel = try_symmetric(matrix, options, stream, algorithm);
      if (op == Operation::NonTranspose) {
        const detail::RowShape shape = row_shape(matrix, s);
        const int value_bytes = sizeof(Value);
        if (auto_tries_dia(op, shape, value_bytes, options.expected_applies)) conversions.push_back(Algorithm::Dia);
        const Algorithm format = detail::format_for(detail::classify_rows(shape), shape, value_bytes,
                                                    options.expected_applies);
        if (format != Algorithm::Auto) conversions.push_back(format);
      }
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
  for (Algorithm format : conversions) {
    Options limited = options;
    limited.subwarp = 0;  // the caller's lanes per row were meant for a CSR kernel: a format takes its own rule
    if (format != Algorithm::Sell)  // SELL keeps the caller's limit: its rule bounds the empty rows instead
      limited.max_padding = std::min(format::max_padding_of(options), format == Algorithm::Dia
                                                                           ? detail::dia_max_padding(sizeof(Value))
                                                                           : detail::kEllMaxPadding);
    try {
      impl_->kernel = format == Algorithm::Dia   ? make_dia<Value, Index>(matrix, op, limited, stream)
                      : format == Algorithm::Ell ? make_ell<Value, Index>(matrix, op, limited, stream)
                                                 : make_sell<Value, Index>(matrix, op, limited, stream);
      algorithm = format;
      break;
    } catch (const Unsupported& e) {  // too much padding: the next choice stands (logged)
      if (detail::debug_log_enabled())
        std::fprintf(stderr, "[spmv] auto: %s not taken: %s\n", std::string(to_string(format)).c_str(), e.what());
    }
  }
  // Auto's A x under Options::deterministic: a choice that sums with atomics or carries is replaced
  // before its plan is built (the check below would build it, then discard it).
  if (options.deterministic && requested_auto && op == Operation::NonTranspose && !impl_->kernel &&
      std::find(kReproducibleNonTranspose.begin(), kReproducibleNonTranspose.end(), algorithm) ==
          kReproducibleNonTranspose.end())
    algorithm = Algorithm::CsrVector;
  impl_->algorithm = algorithm;
  if (!degenerate && !impl_->kernel) {
    for (const auto& entry : kTable<Value, Index>)
      if (entry.algorithm == algorithm) impl_->kernel = entry.factory(matrix, op, options, stream);
  }
  // Auto's A x with the hint where x exceeds L2: column chunks, raced against the whole matrix's plan
  // just built (possibly a conversion: DIA, ELL, SELL) and kept only when they win by enough to repay
  // their setup (column_chunked.cu).
  if (requested_auto && op == Operation::NonTranspose && !degenerate && options.values == ValueStorage::Native &&
      options.reorder == Reorder::None && !options.deterministic) {
    if (auto chunked = race_column_chunked(matrix, *impl_->kernel, options, stream)) {
      impl_->kernel = std::move(chunked);
      impl_->algorithm = algorithm = Algorithm::ColumnChunked;
    }
  }
  if (options.deterministic && impl_->kernel && !impl_->kernel->reproducible()) {
    if (!requested_auto)
      throw Unsupported("algorithm " + std::string(to_string(algorithm)) + " (" + impl_->kernel->policy() +
                        ") is not bit-reproducible: its summation order depends on timing (atomics or carries); "
                        "with Options::deterministic use " + reproducible_list(op));
    // Auto's reproducible choice: CSR-vector (split rows' chunks added in order) for A x; for A^T x A x's
    // plan when A == A^T, else the explicit transpose, which sums in a fixed order with its copy of A.
    if (op == Operation::NonTranspose) {
      impl_->kernel = make_csr_vector<Value, Index>(matrix, op, options, stream);
      algorithm = Algorithm::CsrVector;
    } else if (auto symmetric = matrix.rows == matrix.cols ? try_symmetric(matrix, options, stream, algorithm)
                                                           : nullptr) {
      impl_->kernel = std::move(symmetric);  // A x's reproducible plan, without a copy
    } else if (explicit_transpose_fits(matrix)) {
      impl_->kernel = make_explicit_transpose<Value, Index>(matrix, op, options, stream);
      algorithm = Algorithm::ExplicitTranspose;
    } else {
      throw Unsupported("a deterministic A^T x of a matrix that differs from its transpose needs the explicit "
                        "transpose (a second copy of the matrix), which does not fit in half the free device memory");
    }
    impl_->algorithm = algorithm;
  }
  if (impl_->kernel && impl_->kernel->writes_workspace()) impl_->order.emplace(EventDriver());
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  impl_->setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (detail::debug_log_enabled())
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
bool Plan<Value, Index>::reproducible() const { return !impl_->kernel || impl_->kernel->reproducible(); }
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
