#include "matrix_core.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <limits>
#include <map>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_support.hpp"
#include "spmv/error.hpp"
#include "spmv/host_memory.hpp"
#include "spmv/spmm.hpp"
#include "spmv/value_storage.hpp"

#if defined(SPMV_HAS_CUDA) && SPMV_HAS_CUDA
#include "spmv/cuda/linear_operator.hpp"
#include "spmv/cuda/plan.hpp"
#include "spmv/cuda/semiring.hpp"
#include "spmv/cuda/solvers.hpp"
#include "spmv/cuda/spmm.hpp"
#include "spmv/cuda/tuned_plan.hpp"
#define SPMV_PYTHON_CUDA 1
#else
#define SPMV_PYTHON_CUDA 0
#endif

namespace spmv::python {
namespace {

std::string dtype_name(nb::dlpack::dtype d) {
  using code = nb::dlpack::dtype_code;
  std::string kind;
  switch (static_cast<code>(d.code)) {
    case code::Int: kind = "int"; break;
    case code::UInt: kind = "uint"; break;
    case code::Float: kind = "float"; break;
    case code::Complex: kind = "complex"; break;
    case code::Bool: return "bool";
    default: kind = "dtype code " + std::to_string(d.code) + " bits "; break;
  }
  return kind + std::to_string(d.bits);
}

template <class T>
void require_dtype(nb::dlpack::dtype d, const char* name) {
  if (d != nb::dtype<T>())
    throw nb::type_error((std::string(name) + " has dtype " + dtype_name(d) + ", expected " +
                          dtype_name(nb::dtype<T>()))
                             .c_str());
}

std::string shape_text(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// x has op(A).cols entries and y op(A).rows; anything else is refused before the library sees it.
void check_sizes(std::int64_t rows, std::int64_t cols, Operation op, std::size_t x_size, std::size_t y_size) {
  const bool t = op == Operation::Transpose;
  const auto x_needed = static_cast<std::size_t>(t ? rows : cols);
  const auto y_needed = static_cast<std::size_t>(t ? cols : rows);
  const std::string what = std::string(t ? "A^T" : "A") + " (A is " + shape_text(rows, cols) + ")";
  if (x_size != x_needed)
    throw InvalidArgument("x has " + std::to_string(x_size) + " entries, " + what + " needs " +
                          std::to_string(x_needed));
  if (y_size != y_needed)
    throw InvalidArgument("y has " + std::to_string(y_size) + " entries, " + what + " gives " +
                          std::to_string(y_needed));
}

// The products read x while writing y; overlapping vectors would give wrong results (and on the
// GPU, races), so they are refused.
void check_no_overlap(std::uintptr_t x, std::size_t x_bytes, std::uintptr_t y, std::size_t y_bytes) {
  if (x_bytes == 0 || y_bytes == 0) return;
  if (x < y + y_bytes && y < x + x_bytes) throw InvalidArgument("x and y overlap in memory; pass separate arrays");
}

// The dense view of a 2-D host array from its strides: row-major when its rows are contiguous
// (stride 1 across columns), column-major when its columns are; a dimension of extent <= 1 has any
// stride. Anything else (negative or doubly strided) is refused; the Python side copies such arrays.
template <class T, class Array>
DenseView<T> dense_view(const Array& a, const char* name) {
  const std::int64_t rows = static_cast<std::int64_t>(a.shape(0)), cols = static_cast<std::int64_t>(a.shape(1));
  const std::int64_t s0 = a.stride(0), s1 = a.stride(1);
  auto* data = static_cast<T*>(a.data());
  if (rows == 0 || cols == 0) return {data, rows, cols, std::max<std::int64_t>(cols, 1), Layout::RowMajor};
  if ((cols <= 1 || s1 == 1) && (rows <= 1 || s0 >= std::max<std::int64_t>(cols, 1)))
    return {data, rows, cols, rows <= 1 ? std::max<std::int64_t>(cols, 1) : s0, Layout::RowMajor};
  if ((rows <= 1 || s0 == 1) && (cols <= 1 || s1 >= std::max<std::int64_t>(rows, 1)))
    return {data, rows, cols, cols <= 1 ? std::max<std::int64_t>(rows, 1) : s1, Layout::ColMajor};
  throw InvalidArgument(std::string(name) + " (" + shape_text(rows, cols) + ", strides " + std::to_string(s0) + ", " +
                        std::to_string(s1) + " elements) has no contiguous dimension; pass a C- or F-contiguous array");
}

template <class Value>
DenseView<Value> device_dense(const DeviceDense& d) {
  return {reinterpret_cast<Value*>(d.address), d.rows, d.cols, d.ld, d.row_major ? Layout::RowMajor : Layout::ColMajor};
}

template <class Value, class Index>
class TypedMatrix final : public MatrixCore {
 public:
  TypedMatrix(CsrMatrix<Value, Index> a, const Options& options) : a_(std::move(a)), options_(options) {
    validate(a_);
  }

  ~TypedMatrix() override {
#if SPMV_PYTHON_CUDA
    // Plans and the device copy are released with their device current (cuSPARSE handles want it).
    for (auto& [ordinal, state] : devices_) {
      try {
        DeviceGuard guard(ordinal);
        state.reset();
      } catch (...) {
        state.reset();
      }
    }
#endif
  }

  std::int64_t rows() const override { return a_.rows; }
  std::int64_t cols() const override { return a_.cols; }
  std::int64_t nnz() const override { return a_.nnz(); }
  bool double_values() const override { return std::is_same_v<Value, double>; }
  bool wide_indices() const override { return std::is_same_v<Index, std::int64_t>; }
  ValueStorage value_storage() const override { return options_.values; }

  ArrayView array(CsrArray which) const override {
    switch (which) {
      case CsrArray::RowPtr: return {a_.row_ptr.data(), a_.row_ptr.size(), nb::dtype<Index>()};
      case CsrArray::ColIdx: return {a_.col_idx.data(), a_.col_idx.size(), nb::dtype<Index>()};
      case CsrArray::Values: return {a_.values.data(), a_.values.size(), nb::dtype<Value>()};
    }
    throw InvalidArgument("unknown CSR array");
  }

  MatrixStats stats() const override { return compute_stats(a_); }
  CsrMatrix<double, std::int64_t> widened() const override { return convert<double, std::int64_t>(a_); }

  // A half-storage matrix widened to double keeps its (rounded) values exactly, in native storage: double
  // plans take no half storage. Narrowed or kept float, it keeps its storage.
  std::unique_ptr<MatrixCore> with_values(bool double_values) const override {
    if (double_values) {
      Options native = options_;
      native.values = ValueStorage::Native;
      return std::make_unique<TypedMatrix<double, Index>>(convert<double, Index>(a_), native);
    }
    return std::make_unique<TypedMatrix<float, Index>>(convert<float, Index>(a_), options_);
  }

  // x and y of a product on host arrays, after the checks every such product makes: the value type,
  // op(A)'s lengths, and no overlap.
  std::pair<std::span<const Value>, std::span<Value>> host_vectors(Operation op, ConstHostVector x,
                                                                   HostVector y) const {
    require_dtype<Value>(x.dtype(), "x");
    require_dtype<Value>(y.dtype(), "y");
    const std::size_t nx = x.shape(0), ny = y.shape(0);
    check_sizes(a_.rows, a_.cols, op, nx, ny);
    const auto* xp = static_cast<const Value*>(x.data());
    auto* yp = static_cast<Value*>(y.data());
    check_no_overlap(reinterpret_cast<std::uintptr_t>(xp), nx * sizeof(Value), reinterpret_cast<std::uintptr_t>(yp),
                     ny * sizeof(Value));
    return {std::span<const Value>(xp, nx), std::span<Value>(yp, ny)};
  }

  void apply_host(Target target, Algorithm algorithm, Operation op, double alpha, ConstHostVector x, double beta,
                  HostVector y) override {
    const auto [xs, ys] = host_vectors(op, x, y);
    const auto a = static_cast<Value>(alpha), b = static_cast<Value>(beta);

    if (target.backend == Backend::Cpu) {
      Operator<Value, Index>& oper = cpu_entry(algorithm, op);
      nb::gil_scoped_release release;  // the operator serializes its products; no thread waits holding the GIL
      oper.apply(a, xs, b, ys);
      return;
    }
#if SPMV_PYTHON_CUDA
    DevicePlan& plan = cuda_entry(target.ordinal, algorithm, op, nullptr);
    nb::gil_scoped_release release;
    DeviceGuard guard(target.ordinal);
    // One upload of x (and of y when it is read) and one download of y per call; the matrix and the
    // plan stay on the device.
    cuda::DeviceBuffer<Value> dx(xs);
    cuda::DeviceBuffer<Value> dy(ys.size());
    if (b != Value(0)) dy.upload(ys);
    plan.apply(a, dx.data(), b, dy.data(), nullptr);
    dy.download(ys);  // synchronizes the stream, so errors of the product surface here
#else
    require_cuda_device(target.ordinal);
#endif
  }

  void semiring_host(Target target, Semiring semiring, Algorithm algorithm, Operation op, ConstHostVector x,
                     HostVector y) override {
    const auto [xs, ys] = host_vectors(op, x, y);
    if (target.backend == Backend::Cpu) {
      const SemiringPlan<Value, Index>& plan = cpu_semiring_plan(semiring, algorithm, op);
      nb::gil_scoped_release release;  // apply() is const and holds no scratch: calls from several threads may overlap
      plan.apply(xs, ys);
      return;
    }
#if SPMV_PYTHON_CUDA
    cuda::SemiringPlan<Value, Index>& plan = cuda_semiring_plan(target.ordinal, semiring, algorithm, op, nullptr);
    nb::gil_scoped_release release;
    DeviceGuard guard(target.ordinal);
    // One upload of x and one download of y per call; the matrix stays on the device. y is only written.
    cuda::DeviceBuffer<Value> dx(xs);
    cuda::DeviceBuffer<Value> dy(ys.size());
    plan.apply(dx.data(), dy.data());
    dy.download(ys);  // synchronizes: errors of the product surface here
#else
    require_cuda_device(target.ordinal);
#endif
  }

  void semiring_device(int ordinal, Semiring semiring, Algorithm algorithm, Operation op, DeviceVector x,
                       DeviceVector y, std::uintptr_t stream) override {
    check_sizes(a_.rows, a_.cols, op, x.size, y.size);
#if SPMV_PYTHON_CUDA
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    check_device_xy(ordinal, x, y);
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    cuda::SemiringPlan<Value, Index>& plan = cuda_semiring_plan(ordinal, semiring, algorithm, op, s);
    nb::gil_scoped_release release;
    wait_for_producers(stream, x, y);
    // The plan orders its products over streams itself (its workspace; spmv/cuda/semiring.hpp).
    plan.apply(reinterpret_cast<const Value*>(x.address), reinterpret_cast<Value*>(y.address), s);
#else
    (void)semiring, (void)algorithm, (void)stream;
    require_cuda_device(ordinal);
#endif
  }

  void apply_device(int ordinal, Algorithm algorithm, Operation op, double alpha, DeviceVector x, double beta,
                    DeviceVector y, std::uintptr_t stream) override {
    check_sizes(a_.rows, a_.cols, op, x.size, y.size);
#if SPMV_PYTHON_CUDA
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    check_device_xy(ordinal, x, y);
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    // The plan is safe on any number of streams and threads (plan.hpp): products of algorithms with
    // a workspace are chained on the device, the others run concurrently.
    DevicePlan& plan = cuda_entry(ordinal, algorithm, op, s);
    nb::gil_scoped_release release;
    wait_for_producers(stream, x, y);
    plan.apply(static_cast<Value>(alpha), reinterpret_cast<const Value*>(x.address), static_cast<Value>(beta),
                      reinterpret_cast<Value*>(y.address), s);
#else
    (void)algorithm, (void)alpha, (void)beta, (void)stream;
    require_cuda_device(ordinal);
#endif
  }

  void spmm_host(Target target, Operation op, double alpha, ConstHostDense x, double beta, HostDense y) override {
    require_dtype<Value>(x.dtype(), "X");
    require_dtype<Value>(y.dtype(), "Y");
    const DenseView<const Value> xv = dense_view<const Value>(x, "X");
    const DenseView<Value> yv = dense_view<Value>(y, "Y");
    check_no_overlap(reinterpret_cast<std::uintptr_t>(xv.data), static_cast<std::size_t>(xv.extent()) * sizeof(Value),
                     reinterpret_cast<std::uintptr_t>(yv.data), static_cast<std::size_t>(yv.extent()) * sizeof(Value));
    const auto a = static_cast<Value>(alpha), b = static_cast<Value>(beta);
    if (target.backend == Backend::Cpu) {
      const cpu::SpmmPlan<Value, Index>& plan = cpu_spmm_entry(op);
      nb::gil_scoped_release release;  // apply() is const and owns no scratch
      plan.apply(a, xv, b, yv);
      return;
    }
#if SPMV_PYTHON_CUDA
    cuda::SpmmPlan<Value, Index>& plan = cuda_spmm_entry(target.ordinal, op, nullptr);
    nb::gil_scoped_release release;
    DeviceGuard guard(target.ordinal);
    // Sizes are checked by the plan before any copy is used; copies cover the views' whole extents,
    // so Y's padding between rows (or columns) comes back as it was.
    detail::check_dense("spmm", "X", xv, plan.x_rows(), xv.cols);
    detail::check_dense("spmm", "Y", yv, plan.y_rows(), xv.cols);
    cuda::DeviceBuffer<Value> dx(std::span<const Value>(xv.data, static_cast<std::size_t>(xv.extent())));
    cuda::DeviceBuffer<Value> dy(std::span<const Value>(yv.data, static_cast<std::size_t>(yv.extent())));
    plan.apply(a, DenseView<const Value>{dx.data(), xv.rows, xv.cols, xv.ld, xv.layout}, b,
               DenseView<Value>{dy.data(), yv.rows, yv.cols, yv.ld, yv.layout}, nullptr);
    dy.download(std::span<Value>(yv.data, dy.size()));  // synchronizes: errors of the product surface here
#else
    require_cuda_device(target.ordinal);
#endif
  }

  void spmm_device(int ordinal, Operation op, double alpha, DeviceDense x, double beta, DeviceDense y,
                   std::uintptr_t stream) override {
#if SPMV_PYTHON_CUDA
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    const DenseView<const Value> xv = device_dense<Value>(x);
    const DenseView<Value> yv = device_dense<Value>(y);
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    cuda::SpmmPlan<Value, Index>& plan = cuda_spmm_entry(ordinal, op, s);
    detail::check_dense("spmm", "X", xv, plan.x_rows(), xv.cols);
    detail::check_dense("spmm", "Y", yv, plan.y_rows(), xv.cols);
    check_device_vector(x.address, static_cast<std::size_t>(xv.extent()), sizeof(Value), ordinal, "X");
    check_device_vector(y.address, static_cast<std::size_t>(yv.extent()), sizeof(Value), ordinal, "Y");
    check_no_overlap(x.address, static_cast<std::size_t>(xv.extent()) * sizeof(Value), y.address,
                     static_cast<std::size_t>(yv.extent()) * sizeof(Value));
    nb::gil_scoped_release release;
    wait_for_producers(stream, x, y);
    plan.apply(static_cast<Value>(alpha), xv, static_cast<Value>(beta), yv, s);
#else
    (void)op, (void)alpha, (void)x, (void)beta, (void)y, (void)stream;
    require_cuda_device(ordinal);
#endif
  }

  // The CSR byte model of one product, the floor's apply term (SolverResult::apply_bytes).
  std::uint64_t apply_bytes() const {
    return csr_apply_bytes(a_.rows, a_.cols, static_cast<std::int64_t>(a_.nnz()), sizeof(Value), sizeof(Index));
  }

  SolverResult solve_host(Target target, Algorithm algorithm, const SolverOptions& options, ConstHostVector b,
                          HostVector x) override {
    require_dtype<Value>(b.dtype(), "b");
    require_dtype<Value>(x.dtype(), "x");
    const std::span<const Value> bs(static_cast<const Value*>(b.data()), b.shape(0));
    const std::span<Value> xs(static_cast<Value*>(x.data()), x.shape(0));
    if (options_.reorder != Reorder::None) {
      // options['reorder']: the solve runs on P A P^T with b and x permuted once per solve (solve_csr),
      // not through the matrix's reordered plan, which would permute x and y in every product. solve_csr
      // checks the sizes.
      Options reordered = options_;
      reordered.device = target.ordinal;
      nb::gil_scoped_release release;
      SolverResult r = solve_csr<Value, Index>(target.backend, a_, algorithm, reordered, bs, xs, options);
      r.apply_bytes = apply_bytes();
      return r;
    }
    std::vector<Value> diagonal;
    if (options.preconditioner == Preconditioner::Jacobi && a_.rows == a_.cols) diagonal = matrix_diagonal(a_);
    if (target.backend == Backend::Cpu) {
      Operator<Value, Index>& oper = cpu_entry(algorithm, Operation::NonTranspose);
      SolverResult r;
      if (converts_during_solve(algorithm, options_)) {
        // Auto without the hint may convert during the solve; the converted operator lives for this solve.
        ConvertingOperator<Value, Index> converting(a_, oper, options_);
        {
          nb::gil_scoped_release release;  // the progress callback takes the GIL back when it runs
          r = solve<Value>(converting, bs, xs, options, diagonal);
        }
        r.algorithm = converting.label();
      } else {
        {
          nb::gil_scoped_release release;
          r = solve<Value>(oper, bs, xs, options, diagonal);
        }
        r.algorithm = algorithm_label(oper.algorithm(), oper.policy());
      }
      r.apply_bytes = apply_bytes();
      return r;
    }
#if SPMV_PYTHON_CUDA
    check_sizes(a_.rows, a_.cols, Operation::NonTranspose, xs.size(), bs.size());
    DevicePlan& plan = cuda_entry(target.ordinal, algorithm, Operation::NonTranspose, nullptr);
    nb::gil_scoped_release release;
    DeviceGuard guard(target.ordinal);
    cuda::DeviceBuffer<Value> db(bs), dx(std::span<const Value>(xs.data(), xs.size())), dd;
    if (!diagonal.empty()) dd = cuda::DeviceBuffer<Value>(std::span<const Value>(diagonal));
    SolverResult r = solve_through(target.ordinal, plan, algorithm, [&](cuda::LinearOperator<Value>& op) {
      return cuda::solve<Value>(op, db.data(), dx.data(), options, dd.size() ? dd.data() : nullptr, nullptr);
    });
    dx.download(xs);
    r.apply_bytes = apply_bytes();
    return r;
#else
    require_cuda_device(target.ordinal);
    return {};
#endif
  }

  SolverResult solve_device(int ordinal, Algorithm algorithm, const SolverOptions& options, DeviceVector b,
                            DeviceVector x, std::uintptr_t stream) override {
    check_sizes(a_.rows, a_.cols, Operation::NonTranspose, x.size, b.size);
#if SPMV_PYTHON_CUDA
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    check_device_vector(b.address, b.size, sizeof(Value), ordinal, "b");
    check_device_vector(x.address, x.size, sizeof(Value), ordinal, "x");
    check_no_overlap(b.address, b.size * sizeof(Value), x.address, x.size * sizeof(Value));
    std::vector<Value> diagonal;
    if (options.preconditioner == Preconditioner::Jacobi && a_.rows == a_.cols) diagonal = matrix_diagonal(a_);
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    DevicePlan& plan = cuda_entry(ordinal, algorithm, Operation::NonTranspose, s);
    nb::gil_scoped_release release;
    if (b.stream) stream_wait(stream, b.stream);
    if (x.stream) stream_wait(stream, x.stream);
    cuda::DeviceBuffer<Value> dd;
    if (!diagonal.empty()) dd = cuda::DeviceBuffer<Value>(std::span<const Value>(diagonal), s);
    SolverResult r = solve_through(ordinal, plan, algorithm, [&](cuda::LinearOperator<Value>& op) {
      return cuda::solve<Value>(op, reinterpret_cast<const Value*>(b.address), reinterpret_cast<Value*>(x.address),
                                options, dd.size() ? dd.data() : nullptr, s);
    });
    r.apply_bytes = apply_bytes();
    return r;
#else
    (void)algorithm, (void)options, (void)stream;
    require_cuda_device(ordinal);
    return {};
#endif
  }

  PlanInfo plan_info(Target target, Algorithm algorithm, Operation op) override {
    if (target.backend == Backend::Cpu) {
      const Operator<Value, Index>& o = cpu_entry(algorithm, op);
      return {o.algorithm(), o.policy(), o.setup_ms(), o.extra_bytes()};
    }
#if SPMV_PYTHON_CUDA
    const DevicePlan& p = cuda_entry(target.ordinal, algorithm, op, nullptr);
    return {p.algorithm(), p.policy(), p.setup_ms(), p.extra_bytes()};
#else
    require_cuda_device(target.ordinal);
    return {};
#endif
  }

  std::size_t cached_plans() const override {
    return cpu_.size() + on_devices([](const auto& state) { return state.plans.size(); });
  }

  std::size_t cached_semiring_plans() const override {
    return cpu_semiring_.size() + on_devices([](const auto& state) { return state.semiring_plans.size(); });
  }

 private:
  using Key = std::pair<Algorithm, Operation>;

  // The sum of count(state) over the devices' states (0 without CUDA).
  template <class Count>
  std::size_t on_devices(Count count) const {
    std::size_t n = 0;
#if SPMV_PYTHON_CUDA
    for (const auto& [ordinal, state] : devices_) n += count(*state);
#else
    (void)count;
#endif
    return n;
  }

  // Called with the GIL held, which serializes changes to the caches. Operators and plans are safe
  // to share between threads (and plans between streams) themselves.
  Operator<Value, Index>& cpu_entry(Algorithm algorithm, Operation op) {
    auto it = cpu_.find({algorithm, op});
    if (it == cpu_.end()) it = cpu_.emplace(Key{algorithm, op}, make_cpu_operator(a_, algorithm, op, options_)).first;
    return *it->second;
  }

  const cpu::SpmmPlan<Value, Index>& cpu_spmm_entry(Operation op) {
    auto it = cpu_spmm_.find(op);
    if (it == cpu_spmm_.end())
      it = cpu_spmm_.emplace(op, std::make_unique<cpu::SpmmPlan<Value, Index>>(a_, op, options_.threads)).first;
    return *it->second;
  }

  // The matrix a semiring product with `op` walks: A, or A^T built on first use and kept (the semiring
  // kernels have no transposed walk). Called with the GIL held, like the plan caches.
  const CsrMatrix<Value, Index>& semiring_matrix(Operation op) {
    if (op == Operation::NonTranspose) return a_;
    if (!transposed_) transposed_ = std::make_unique<CsrMatrix<Value, Index>>(transpose(a_));
    return *transposed_;
  }

  // The CPU semiring plan for (op, semiring, algorithm), made on first use (with the GIL held, like the other
  // caches) with the matrix's Options: threads and the format knobs (max_padding, sell_c, sell_sigma,
  // hyb_ell_width). A half-storage matrix's semiring products read its rounded values in float (matrix_core.hpp).
  // A refused algorithm throws before anything is cached. The matrix never changes (its arrays are read-only
  // views, and A^T is built once), so a plan stays valid for the matrix's life: nothing to invalidate, as for the
  // CUDA plans.
  const SemiringPlan<Value, Index>& cpu_semiring_plan(Semiring semiring, Algorithm algorithm, Operation op) {
    const auto key = std::make_tuple(op, semiring, algorithm);
    auto found = cpu_semiring_.find(key);
    if (found == cpu_semiring_.end()) {
      Options options = options_;
      options.values = ValueStorage::Native;
      found = cpu_semiring_
                  .emplace(key, std::make_unique<SemiringPlan<Value, Index>>(semiring_matrix(op), semiring, algorithm,
                                                                             options))
                  .first;
    }
    return *found->second;
  }

#if SPMV_PYTHON_CUDA
  // Device vectors x and y of device `ordinal` (the caller holds a DeviceGuard): known to CUDA, inside
  // their allocations, aligned, and apart.
  static void check_device_xy(int ordinal, const DeviceVector& x, const DeviceVector& y) {
    check_device_vector(x.address, x.size, sizeof(Value), ordinal, "x");
    check_device_vector(y.address, y.size, sizeof(Value), ordinal, "y");
    check_no_overlap(x.address, x.size * sizeof(Value), y.address, y.size * sizeof(Value));
  }

  // `stream` waits for the streams the producers of x and y (vectors or dense blocks) last wrote them on.
  template <class X, class Y>
  static void wait_for_producers(std::uintptr_t stream, const X& x, const Y& y) {
    if (x.stream) stream_wait(stream, x.stream);
    if (y.stream) stream_wait(stream, y.stream);
  }

  // A Plan, or a TunedPlan for algorithm "tune" (include/spmv/cuda/tuned_plan.hpp).
  struct DevicePlan {
    std::unique_ptr<cuda::Plan<Value, Index>> plan;
    std::unique_ptr<cuda::TunedPlan<Value, Index>> tuned;
    void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) {
      if (tuned) tuned->apply(alpha, x, beta, y, stream);
      else plan->apply(alpha, x, beta, y, stream);
    }
    Algorithm algorithm() const { return tuned ? tuned->algorithm() : plan->algorithm(); }
    std::string policy() const { return tuned ? tuned->policy() : plan->policy(); }
    double setup_ms() const { return tuned ? tuned->setup_ms() : plan->setup_ms(); }
    std::size_t extra_bytes() const { return tuned ? tuned->extra_bytes() : plan->extra_bytes(); }
  };

  // The solvers' device operator over either kind of plan (A x; the plan outlives it).
  class DevicePlanOperator final : public cuda::LinearOperator<Value> {
   public:
    DevicePlanOperator(DevicePlan& plan, std::int64_t rows, std::int64_t cols) : plan_(plan), rows_(rows), cols_(cols) {}
    std::int64_t rows() const override { return rows_; }
    std::int64_t cols() const override { return cols_; }
    void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
      plan_.apply(alpha, x, beta, y, stream);
    }

   private:
    DevicePlan& plan_;
    std::int64_t rows_, cols_;
  };

  // Runs `solve(op)` over the solvers' operator for `plan`: with Auto and no hint, one that may convert the
  // matrix during the solve (cuda::ConvertingPlanOperator; the converted plan lives for this solve only, the
  // cached plan stays as it is).
  template <class Solve>
  SolverResult solve_through(int ordinal, DevicePlan& plan, Algorithm algorithm, Solve&& solve) {
    if (!plan.tuned && converts_during_solve(algorithm, options_)) {
      Options options = options_;
      options.device = ordinal;
      cuda::ConvertingPlanOperator<Value, Index> op(devices_.at(ordinal)->csr.view(), *plan.plan, options);
      SolverResult r = solve(op);
      r.algorithm = op.label();
      return r;
    }
    DevicePlanOperator op(plan, a_.rows, a_.cols);
    SolverResult r = solve(op);
    r.algorithm = algorithm_label(plan.algorithm(), plan.policy());
    return r;
  }

  struct DeviceState {
    cuda::DeviceCsr<Value, Index> csr;  // uploaded once per device
    std::map<Key, std::unique_ptr<DevicePlan>> plans;  // declared after csr: destroyed before it
    std::map<Operation, std::unique_ptr<cuda::SpmmPlan<Value, Index>>> spmm_plans;
    std::unique_ptr<cuda::DeviceCsr<Value, Index>> transposed;  // A^T for semiring products, on first use
    // Per (op, semiring, algorithm), on first use; declared after the matrices they view: destroyed first.
    std::map<std::tuple<Operation, Semiring, Algorithm>, std::unique_ptr<cuda::SemiringPlan<Value, Index>>>
        semiring_plans;
  };

  // The device matrix a semiring product with `op` walks on device `ordinal` (uploaded on first use).
  cuda::CsrView<Value, Index> cuda_semiring_matrix(int ordinal, Operation op, cudaStream_t stream) {
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    auto& state = *device_state(ordinal, stream)->second;
    if (op == Operation::NonTranspose) return state.csr.view();
    if (!state.transposed)
      state.transposed = std::make_unique<cuda::DeviceCsr<Value, Index>>(semiring_matrix(op), stream);
    return state.transposed->view();
  }

  // The semiring plan for (semiring, algorithm, op) on device `ordinal`, made on first use (with the GIL
  // held, like the other caches). A refused algorithm throws before anything is cached.
  cuda::SemiringPlan<Value, Index>& cuda_semiring_plan(int ordinal, Semiring semiring, Algorithm algorithm,
                                                      Operation op, cudaStream_t stream) {
    const cuda::CsrView<Value, Index> m = cuda_semiring_matrix(ordinal, op, stream);
    DeviceGuard guard(ordinal);
    auto& plans = devices_.at(ordinal)->semiring_plans;
    const auto key = std::make_tuple(op, semiring, algorithm);
    auto found = plans.find(key);
    if (found == plans.end())
      found = plans.emplace(key, std::make_unique<cuda::SemiringPlan<Value, Index>>(m, semiring, algorithm, stream))
                  .first;
    return *found->second;
  }

  // The device's state, the matrix uploaded on first use (the caller holds a DeviceGuard).
  typename std::map<int, std::unique_ptr<DeviceState>>::iterator device_state(int ordinal, cudaStream_t stream) {
    auto device = devices_.find(ordinal);
    if (device == devices_.end()) {
      auto state = std::make_unique<DeviceState>();
      state->csr = cuda::DeviceCsr<Value, Index>(a_, stream);
      device = devices_.emplace(ordinal, std::move(state)).first;
    }
    return device;
  }

  cuda::SpmmPlan<Value, Index>& cuda_spmm_entry(int ordinal, Operation op, cudaStream_t stream) {
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    auto& state = *device_state(ordinal, stream)->second;
    auto it = state.spmm_plans.find(op);
    if (it == state.spmm_plans.end()) {
      Options options = options_;
      options.device = ordinal;
      // SpMM has no half-storage kernel: it reads the rounded values the matrix holds, in float
      // (matrix_core.hpp, "Half storage").
      options.values = ValueStorage::Native;
      it = state.spmm_plans
               .emplace(op, std::make_unique<cuda::SpmmPlan<Value, Index>>(state.csr.view(), op, options, stream))
               .first;
    }
    return *it->second;
  }

  DevicePlan& cuda_entry(int ordinal, Algorithm algorithm, Operation op, cudaStream_t stream) {
    require_cuda_device(ordinal);
    DeviceGuard guard(ordinal);
    auto device = device_state(ordinal, stream);
    auto& plans = device->second->plans;
    auto it = plans.find({algorithm, op});
    if (it == plans.end()) {
      Options options = options_;
      options.device = ordinal;
      auto plan = std::make_unique<DevicePlan>();
      if (algorithm == Algorithm::Tune)
        plan->tuned = std::make_unique<cuda::TunedPlan<Value, Index>>(device->second->csr.view(), op, options, stream);
      else
        plan->plan = std::make_unique<cuda::Plan<Value, Index>>(device->second->csr.view(), algorithm, op, options, stream);
      it = plans.emplace(Key{algorithm, op}, std::move(plan)).first;
    }
    return *it->second;
  }

  std::map<int, std::unique_ptr<DeviceState>> devices_;
#endif

  CsrMatrix<Value, Index> a_;
  Options options_;
  std::map<Key, std::unique_ptr<Operator<Value, Index>>> cpu_;
  std::map<Operation, std::unique_ptr<cpu::SpmmPlan<Value, Index>>> cpu_spmm_;
  std::unique_ptr<CsrMatrix<Value, Index>> transposed_;  // A^T for the semiring products with op = T
  // Per (op, semiring, algorithm), on first use; declared after the matrices the row kernels' plans read: destroyed
  // first.
  std::map<std::tuple<Operation, Semiring, Algorithm>, std::unique_ptr<SemiringPlan<Value, Index>>> cpu_semiring_;
};

// One copy of a user array into the library's storage, converting the element type on the way.
// Index arrays are int32 or int64; they are narrowed only when the matrix fits 32-bit indices, where a
// value that does not fit is out of range anyway and is refused as such.
template <class To>
std::vector<To> copy_indices(const ConstHostVector& a, const char* name, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = a.shape(0);
  auto out = vector_on_huge_pages<To>(n);  // the products stream it: 2 MiB pages (spmv/host_memory.hpp)
  const auto narrow = [&](const auto* p) {
    for (std::size_t k = 0; k < n; ++k) {
      const auto v = p[k];
      if (v < std::numeric_limits<To>::min() || v > std::numeric_limits<To>::max())
        throw InvalidArgument(std::string(name) + "[" + std::to_string(k) + "] = " + std::to_string(v) +
                              " is out of range for a " + shape_text(rows, cols) + " matrix");
      out[k] = static_cast<To>(v);
    }
  };
  if (a.dtype() == nb::dtype<std::int32_t>()) {
    const auto* p = static_cast<const std::int32_t*>(a.data());
    std::copy(p, p + n, out.begin());
  } else {
    require_dtype<std::int64_t>(a.dtype(), name);
    narrow(static_cast<const std::int64_t*>(a.data()));
  }
  return out;
}

template <class To>
std::vector<To> copy_values(const ConstHostVector& a) {
  const std::size_t n = a.shape(0);
  auto out = vector_on_huge_pages<To>(n);  // the products stream it: 2 MiB pages (spmv/host_memory.hpp)
  if (a.dtype() == nb::dtype<double>()) {
    const auto* p = static_cast<const double*>(a.data());
    std::transform(p, p + n, out.begin(), [](double v) { return static_cast<To>(v); });
  } else {
    require_dtype<float>(a.dtype(), "data");
    const auto* p = static_cast<const float*>(a.data());
    std::transform(p, p + n, out.begin(), [](float v) { return static_cast<To>(v); });
  }
  return out;
}

template <class Value, class Index>
std::unique_ptr<MatrixCore> from_arrays_typed(std::int64_t rows, std::int64_t cols, const ConstHostVector& indptr,
                                              const ConstHostVector& indices, const ConstHostVector& data,
                                              const Options& options) {
  auto a = make_csr<Value, Index>(static_cast<Index>(rows), static_cast<Index>(cols),
                                  copy_indices<Index>(indptr, "indptr", rows, cols),
                                  copy_indices<Index>(indices, "indices", rows, cols), copy_values<Value>(data));
  return make_matrix_core(std::move(a), options);
}

// User CSR arrays (int32/int64 indices, float32/float64 values; spmv/_matrix.py converts anything
// else) copied once into the library's CsrMatrix and validated by make_csr. Indices are 32-bit when
// the sizes fit, else 64-bit; values are double or float as asked.
// index_bits: 0 picks 32 when the sizes fit, else 64; 32 or 64 forces (32 refused when they do not fit).
std::unique_ptr<MatrixCore> from_arrays(std::int64_t rows, std::int64_t cols, ConstHostVector indptr,
                                        ConstHostVector indices, ConstHostVector data, bool double_values,
                                        int index_bits, nb::dict options) {
  if (rows < 0 || cols < 0) throw InvalidArgument("negative shape " + shape_text(rows, cols));
  if (index_bits != 0 && index_bits != 32 && index_bits != 64)
    throw InvalidArgument("index_bits must be 0, 32 or 64, got " + std::to_string(index_bits));
  const Options o = parse_options(options);
  const auto nnz = static_cast<std::int64_t>(data.shape(0));
  const bool fits = fits_index<std::int32_t>(rows, cols, nnz);
  if (index_bits == 32 && !fits)
    throw Unsupported("a " + shape_text(rows, cols) + " matrix with " + std::to_string(nnz) +
                      " nonzeros does not fit 32-bit indices; use int64 indices");
  const bool fits32 = index_bits == 0 ? fits : index_bits == 32;
  if (double_values)
    return fits32 ? from_arrays_typed<double, std::int32_t>(rows, cols, indptr, indices, data, o)
                  : from_arrays_typed<double, std::int64_t>(rows, cols, indptr, indices, data, o);
  return fits32 ? from_arrays_typed<float, std::int32_t>(rows, cols, indptr, indices, data, o)
                : from_arrays_typed<float, std::int64_t>(rows, cols, indptr, indices, data, o);
}

Algorithm algorithm_from_name(const std::string& name) {
  if (auto a = parse_algorithm(name)) return *a;
  std::string valid = "auto, tune";
  for (Algorithm a : all_algorithms()) valid += ", " + std::string(to_string(a));
  throw InvalidArgument("unknown algorithm '" + name + "'; valid names: " + valid);
}

Operation operation_from(bool transpose) { return transpose ? Operation::Transpose : Operation::NonTranspose; }

Semiring semiring_from_name(const std::string& name) {
  const auto s = parse_semiring(name);
  if (!s) throw InvalidArgument("semiring '" + name + "': expected one of " + semiring_names());
  return *s;
}

Target target_from(const std::string& backend, int ordinal) {
  if (backend == "cpu") return {Backend::Cpu, 0};
  if (backend == "cuda") {
    if (ordinal < 0) throw InvalidArgument("negative CUDA device ordinal " + std::to_string(ordinal));
    return {Backend::Cuda, ordinal};
  }
  throw InvalidArgument("unknown device '" + backend + "'; expected 'cpu' or 'cuda'");
}

// The solver settings spmv/_solvers.py passes: method, preconditioner, tol, maxiter, restart,
// gmres_basis, gmres_s_step, history, progress_every, callback (None or callable(iteration, residual)), check_every.
SolverOptions solver_options_from(const nb::dict& d) {
  SolverOptions o;
  const auto method = nb::cast<std::string>(d["method"]);
  const auto precond = nb::cast<std::string>(d["preconditioner"]);
  if (auto m = parse_solver_method(method)) o.method = *m;
  else throw InvalidArgument("unknown method '" + method + "'; expected cg, bicgstab or gmres");
  if (auto p = parse_preconditioner(precond)) o.preconditioner = *p;
  else throw InvalidArgument("unknown preconditioner '" + precond + "'; expected 'jacobi' or None");
  o.tolerance = nb::cast<double>(d["tol"]);
  o.max_iterations = nb::cast<int>(d["maxiter"]);
  o.restart = nb::cast<int>(d["restart"]);
  const auto basis = nb::cast<std::string>(d["gmres_basis"]);
  if (auto b = parse_gmres_basis(basis)) o.gmres_basis = *b;
  else throw InvalidArgument("unknown basis '" + basis + "'; expected 'working', 'f32' or 'f16'");
  o.gmres_s_step = nb::cast<int>(d["gmres_s_step"]);
  o.record_history = nb::cast<bool>(d["history"]);
  o.progress_every = nb::cast<int>(d["progress_every"]);
  o.check_every = nb::cast<int>(d["check_every"]);
  o.fused = nb::cast<bool>(d["fused"]);
  o.graph = nb::cast<bool>(d["graph"]);
  o.pipelined = nb::cast<bool>(d["pipelined"]);
  nb::object callback = d["callback"];
  if (!callback.is_none()) {
    // Called from the solver with the GIL released around the solve: take it for the call. A Python
    // exception in the callback propagates out of the solve.
    o.progress = [callback](const SolverProgress& p) {
      nb::gil_scoped_acquire acquire;
      callback(p.iteration, p.relative_residual);
    };
  }
  return o;
}

nb::dict result_dict(const SolverResult& r) {
  nb::dict d;
  d["converged"] = r.converged;
  d["iterations"] = r.iterations;
  d["applies"] = r.applies;
  d["residual"] = r.residual;
  d["recurrence_residual"] = r.recurrence_residual;
  d["history"] = r.history;
  d["total_ms"] = r.total_ms;
  d["ms_per_iteration"] = r.ms_per_iteration;
  d["apply_share"] = r.apply_share;
  d["breakdown"] = r.breakdown;
  d["algorithm"] = r.algorithm;
  d["variant"] = r.variant;
  d["apply_bytes"] = r.apply_bytes;
  d["applies_per_iteration"] = r.applies_per_iteration;
  d["vector_bytes"] = r.vector_bytes;
  return d;
}

nb::object array_view(nb::handle self, CsrArray which) {
  const ArrayView v = nb::cast<const MatrixCore&>(self).array(which);
  const std::size_t shape[1] = {v.size};
  // A zero-copy, read-only view; the ndarray keeps the matrix alive (owner = self).
  nb::ndarray<nb::numpy, nb::ro, nb::ndim<1>> array(v.data, 1, shape, self, nullptr, v.dtype);
  return nb::cast(array, nb::rv_policy::reference);
}

}  // namespace

// Options fields by name, for Matrix(..., options={...}).
Options parse_options(const nb::dict& given) {
  Options o;
  const std::vector<std::pair<const char*, int Options::*>> ints{
      {"block_size", &Options::block_size},         {"threads", &Options::threads},
      {"column_span", &Options::column_span},       {"coop", &Options::coop},
      {"repeat", &Options::repeat},                 {"subwarp", &Options::subwarp},
      {"hola_sort_columns", &Options::hola_sort_columns}, {"sell_c", &Options::sell_c},
      {"sell_sigma", &Options::sell_sigma},         {"hyb_ell_width", &Options::hyb_ell_width},
      {"cpu_simd", &Options::cpu_simd},             {"cpu_rows", &Options::cpu_rows},
  };
  for (auto [key, value] : given) {
    const std::string name = nb::cast<std::string>(key);
    bool found = false;
    for (auto& [field, member] : ints)
      if (name == field) {
        if (!nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value))
          throw nb::type_error(("options['" + name + "'] must be an int").c_str());
        o.*member = nb::cast<int>(value);
        found = true;
      }
    if (name == "max_padding") {
      o.max_padding = nb::cast<double>(value);
      found = true;
    }
    if (name == "expected_applies") {
      if (!nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value) || nb::cast<std::int64_t>(value) < 0)
        throw nb::type_error("options['expected_applies'] must be a non-negative int");
      o.expected_applies = nb::cast<std::int64_t>(value);
      found = true;
    }
    if (name == "tuning_wisdom") {  // algorithm "tune": the wisdom file (docs/algorithms/tuning.md)
      if (!nb::isinstance<nb::str>(value)) throw nb::type_error("options['tuning_wisdom'] must be a str (a path)");
      o.tuning_wisdom = nb::cast<std::string>(value);
      found = true;
    }
    if (name == "deterministic") {  // bitwise-reproducible products (docs/ALGORITHMS.md "Determinism")
      if (!nb::isinstance<nb::bool_>(value)) throw nb::type_error("options['deterministic'] must be a bool");
      o.deterministic = nb::cast<bool>(value);
      found = true;
    }
    if (name == "values") {  // "native", "f16" or "bf16" (include/spmv/value_storage.hpp)
      const auto storage =
          nb::isinstance<nb::str>(value) ? parse_value_storage(nb::cast<std::string>(value)) : std::nullopt;
      if (!storage) throw InvalidArgument("options['values'] must be one of 'native', 'f16', 'bf16'");
      o.values = *storage;
      found = true;
    }
    if (name == "reorder") {  // "none", "rcm" or "degree" (include/spmv/reorder.hpp)
      const auto how = nb::isinstance<nb::str>(value) ? parse_reorder(nb::cast<std::string>(value)) : std::nullopt;
      if (!how) throw nb::type_error("options['reorder'] must be one of 'none', 'rcm', 'degree'");
      o.reorder = *how;
      found = true;
    }
    if (!found) {
      std::string valid = "max_padding, expected_applies, tuning_wisdom, reorder, deterministic, values";
      for (auto& [field, member] : ints) valid += std::string(", ") + field;
      throw InvalidArgument("unknown option '" + name + "'; valid options: " + valid);
    }
  }
  return o;
}

template <class Value, class Index>
std::unique_ptr<MatrixCore> make_matrix_core(CsrMatrix<Value, Index> a, const Options& options) {
  if (options.values != ValueStorage::Native) {
    if constexpr (std::is_same_v<Value, double>) {
      throw InvalidArgument("values='" + std::string(to_string(options.values)) +
                            "' stores a float32 matrix's values; this matrix has float64 values (use float32)");
    } else {
      // Rounded once, here: every path then sees the matrix the half-storage plans compute with.
      a = round_values(std::move(a), options.values);
    }
  }
  return std::make_unique<TypedMatrix<Value, Index>>(std::move(a), options);
}
template std::unique_ptr<MatrixCore> make_matrix_core(CsrMatrix<float, std::int32_t>, const Options&);
template std::unique_ptr<MatrixCore> make_matrix_core(CsrMatrix<float, std::int64_t>, const Options&);
template std::unique_ptr<MatrixCore> make_matrix_core(CsrMatrix<double, std::int32_t>, const Options&);
template std::unique_ptr<MatrixCore> make_matrix_core(CsrMatrix<double, std::int64_t>, const Options&);

std::unique_ptr<MatrixCore> make_matrix_core_narrowed(const CsrMatrix<double, std::int64_t>& a, bool double_values,
                                                      const Options& options) {
  const bool fits32 = fits_index<std::int32_t>(a.rows, a.cols, a.nnz());
  if (double_values)
    return fits32 ? make_matrix_core(convert<double, std::int32_t>(a), options)
                  : make_matrix_core(convert<double, std::int64_t>(a), options);
  return fits32 ? make_matrix_core(convert<float, std::int32_t>(a), options)
                : make_matrix_core(convert<float, std::int64_t>(a), options);
}

void bind_matrix(nb::module_& m) {
  nb::class_<MatrixCore>(m, "MatrixCore",
                         "The C++ half of spmv.Matrix: the host CSR arrays and the cached plans (use spmv.Matrix).")
      .def_prop_ro("rows", &MatrixCore::rows)
      .def_prop_ro("cols", &MatrixCore::cols)
      .def_prop_ro("nnz", &MatrixCore::nnz)
      .def_prop_ro("double_values", &MatrixCore::double_values)
      .def_prop_ro("wide_indices", &MatrixCore::wide_indices)
      .def_prop_ro("value_storage", [](const MatrixCore& self) { return std::string(to_string(self.value_storage())); })
      .def_prop_ro("indptr", [](nb::handle self) { return array_view(self, CsrArray::RowPtr); })
      .def_prop_ro("indices", [](nb::handle self) { return array_view(self, CsrArray::ColIdx); })
      .def_prop_ro("data", [](nb::handle self) { return array_view(self, CsrArray::Values); })
      .def("with_values", &MatrixCore::with_values, nb::arg("double_values"))
      .def(
          "apply_host",
          [](MatrixCore& self, const std::string& backend, int ordinal, const std::string& algorithm, bool transpose,
             double alpha, ConstHostVector x, double beta, HostVector y) {
            self.apply_host(target_from(backend, ordinal), algorithm_from_name(algorithm), operation_from(transpose),
                            alpha, x, beta, y);
          },
          nb::arg("backend"), nb::arg("ordinal"), nb::arg("algorithm"), nb::arg("transpose"), nb::arg("alpha"),
          nb::arg("x").noconvert(), nb::arg("beta"), nb::arg("y").noconvert())
      .def(
          "semiring_host",
          [](MatrixCore& self, const std::string& backend, int ordinal, const std::string& semiring,
             const std::string& algorithm, bool transpose, ConstHostVector x, HostVector y) {
            self.semiring_host(target_from(backend, ordinal), semiring_from_name(semiring),
                               algorithm_from_name(algorithm), operation_from(transpose), x, y);
          },
          nb::arg("backend"), nb::arg("ordinal"), nb::arg("semiring"), nb::arg("algorithm"), nb::arg("transpose"),
          nb::arg("x").noconvert(), nb::arg("y").noconvert())
      .def(
          "semiring_device",
          [](MatrixCore& self, int ordinal, const std::string& semiring, const std::string& algorithm,
             bool transpose, std::uintptr_t x, std::size_t x_size, std::uintptr_t x_stream, std::uintptr_t y,
             std::size_t y_size, std::uintptr_t y_stream, std::uintptr_t stream) {
            self.semiring_device(ordinal, semiring_from_name(semiring), algorithm_from_name(algorithm),
                                 operation_from(transpose), {x, x_size, x_stream}, {y, y_size, y_stream}, stream);
          },
          nb::arg("ordinal"), nb::arg("semiring"), nb::arg("algorithm"), nb::arg("transpose"), nb::arg("x"),
          nb::arg("x_size"), nb::arg("x_stream"), nb::arg("y"), nb::arg("y_size"), nb::arg("y_stream"),
          nb::arg("stream"))
      .def(
          "apply_device",
          [](MatrixCore& self, int ordinal, const std::string& algorithm, bool transpose, double alpha,
             std::uintptr_t x, std::size_t x_size, std::uintptr_t x_stream, double beta, std::uintptr_t y,
             std::size_t y_size, std::uintptr_t y_stream, std::uintptr_t stream) {
            self.apply_device(ordinal, algorithm_from_name(algorithm), operation_from(transpose), alpha,
                              {x, x_size, x_stream}, beta, {y, y_size, y_stream}, stream);
          },
          nb::arg("ordinal"), nb::arg("algorithm"), nb::arg("transpose"), nb::arg("alpha"), nb::arg("x"),
          nb::arg("x_size"), nb::arg("x_stream"), nb::arg("beta"), nb::arg("y"), nb::arg("y_size"),
          nb::arg("y_stream"), nb::arg("stream"))
      .def(
          "spmm_host",
          [](MatrixCore& self, const std::string& backend, int ordinal, bool transpose, double alpha, ConstHostDense x,
             double beta, HostDense y) {
            self.spmm_host(target_from(backend, ordinal), operation_from(transpose), alpha, x, beta, y);
          },
          nb::arg("backend"), nb::arg("ordinal"), nb::arg("transpose"), nb::arg("alpha"), nb::arg("x").noconvert(),
          nb::arg("beta"), nb::arg("y").noconvert())
      .def(
          "spmm_device",
          [](MatrixCore& self, int ordinal, bool transpose, double alpha, std::uintptr_t x, std::int64_t x_rows,
             std::int64_t x_cols, std::int64_t x_ld, bool x_row_major, std::uintptr_t x_stream, double beta,
             std::uintptr_t y, std::int64_t y_rows, std::int64_t y_cols, std::int64_t y_ld, bool y_row_major,
             std::uintptr_t y_stream, std::uintptr_t stream) {
            self.spmm_device(ordinal, operation_from(transpose), alpha, {x, x_rows, x_cols, x_ld, x_row_major, x_stream},
                             beta, {y, y_rows, y_cols, y_ld, y_row_major, y_stream}, stream);
          },
          nb::arg("ordinal"), nb::arg("transpose"), nb::arg("alpha"), nb::arg("x"), nb::arg("x_rows"),
          nb::arg("x_cols"), nb::arg("x_ld"), nb::arg("x_row_major"), nb::arg("x_stream"), nb::arg("beta"),
          nb::arg("y"), nb::arg("y_rows"), nb::arg("y_cols"), nb::arg("y_ld"), nb::arg("y_row_major"),
          nb::arg("y_stream"), nb::arg("stream"))
      .def(
          "plan_info",
          [](MatrixCore& self, const std::string& backend, int ordinal, const std::string& algorithm,
             bool transpose) {
            const PlanInfo p =
                self.plan_info(target_from(backend, ordinal), algorithm_from_name(algorithm), operation_from(transpose));
            nb::dict d;
            d["algorithm"] = std::string(to_string(p.algorithm));
            d["policy"] = p.policy;
            d["setup_ms"] = p.setup_ms;
            d["extra_bytes"] = p.extra_bytes;
            return d;
          },
          nb::arg("backend"), nb::arg("ordinal"), nb::arg("algorithm"), nb::arg("transpose"))
      .def(
          "solve_host",
          [](MatrixCore& self, const std::string& backend, int ordinal, const std::string& algorithm,
             const nb::dict& settings, ConstHostVector b, HostVector x) {
            const SolverOptions o = solver_options_from(settings);
            return result_dict(self.solve_host(target_from(backend, ordinal), algorithm_from_name(algorithm), o, b, x));
          },
          nb::arg("backend"), nb::arg("ordinal"), nb::arg("algorithm"), nb::arg("settings"), nb::arg("b").noconvert(),
          nb::arg("x").noconvert())
      .def(
          "solve_device",
          [](MatrixCore& self, int ordinal, const std::string& algorithm, const nb::dict& settings, std::uintptr_t b,
             std::size_t b_size, std::uintptr_t b_stream, std::uintptr_t x, std::size_t x_size, std::uintptr_t x_stream,
             std::uintptr_t stream) {
            const SolverOptions o = solver_options_from(settings);
            return result_dict(self.solve_device(ordinal, algorithm_from_name(algorithm), o, {b, b_size, b_stream},
                                                 {x, x_size, x_stream}, stream));
          },
          nb::arg("ordinal"), nb::arg("algorithm"), nb::arg("settings"), nb::arg("b"), nb::arg("b_size"),
          nb::arg("b_stream"), nb::arg("x"), nb::arg("x_size"), nb::arg("x_stream"), nb::arg("stream"))
      .def_prop_ro("cached_plans", &MatrixCore::cached_plans)
      .def_prop_ro("cached_semiring_plans", &MatrixCore::cached_semiring_plans);

  m.def("matrix_from_arrays", &from_arrays, nb::arg("rows"), nb::arg("cols"), nb::arg("indptr").noconvert(),
        nb::arg("indices").noconvert(), nb::arg("data").noconvert(), nb::arg("double_values"), nb::arg("index_bits"),
        nb::arg("options"), "Copies CSR arrays (int32/int64 indices, float32/float64 values) into a validated MatrixCore.");
  m.def("parse_algorithm", [](const std::string& name) { return std::string(to_string(algorithm_from_name(name))); },
        nb::arg("name"), "The canonical name of an algorithm; ValueError listing the valid names otherwise.");
}

}  // namespace spmv::python
