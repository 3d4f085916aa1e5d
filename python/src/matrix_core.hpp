#pragma once
// The C++ half of spmv.Matrix: one host CSR matrix in one of the library's four (value, index) type
// combinations, plus the plans built for it, cached per (device, algorithm, operation) so that
// repeated products do no preprocessing.
//
// Half storage (Options::values = F16 / Bf16, float matrices only): the host values are rounded once,
// when the core is made, so that every path sees the one matrix the products compute with. The
// SpMV operators and plans (CPU, CUDA, the solvers on them) store the values in half precision; the
// paths without a half-storage kernel -- SpMM and the semirings -- read the same rounded values in
// float: the same results up to summation order, without the halved value bytes.
//
// The Python half (spmv/_matrix.py) checks shapes, dtypes and strides and converts NumPy input; this
// layer checks again before anything reaches the library, so that no bad pointer ever does.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "spmv/semiring.hpp"
#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/operator.hpp"
#include "spmv/solvers.hpp"
#include "spmv/stats.hpp"
#include "spmv/value_storage.hpp"

namespace spmv::python {

namespace nb = nanobind;

// 1-D, C-contiguous host arrays of any dtype; the dtype is checked against the matrix's at the call.
using HostVector = nb::ndarray<nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using ConstHostVector = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// 2-D host arrays of any strides (SpMM); the layout is read from the strides at the call, which needs
// one dimension of unit stride (spmv/_matrix.py makes such a copy of anything else).
using HostDense = nb::ndarray<nb::ndim<2>, nb::device::cpu>;
using ConstHostDense = nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu>;

// Where a product runs: the CPU, or CUDA device `ordinal`.
struct Target {
  Backend backend = Backend::Cpu;
  int ordinal = 0;
};

// A device vector as described by its producer (__cuda_array_interface__): its address, its number
// of entries and the stream its producer last wrote it on (0: none given).
struct DeviceVector {
  std::uintptr_t address = 0;
  std::size_t size = 0;
  std::uintptr_t stream = 0;
};

// A 2-D device array for SpMM: address, shape, leading dimension and layout (in elements), and the
// stream its producer last wrote it on (0: none given).
struct DeviceDense {
  std::uintptr_t address = 0;
  std::int64_t rows = 0, cols = 0, ld = 0;
  bool row_major = true;
  std::uintptr_t stream = 0;
};

// What a cached plan resolved to (for logs, tests and Matrix.plan_info()).
struct PlanInfo {
  Algorithm algorithm = Algorithm::Auto;
  std::string policy;
  double setup_ms = 0;
  std::size_t extra_bytes = 0;
};

// A read-only view of one of the CSR arrays, owned by the matrix.
struct ArrayView {
  const void* data = nullptr;
  std::size_t size = 0;
  nb::dlpack::dtype dtype;
};

enum class CsrArray { RowPtr, ColIdx, Values };

class MatrixCore {
 public:
  virtual ~MatrixCore() = default;

  virtual std::int64_t rows() const = 0;
  virtual std::int64_t cols() const = 0;
  virtual std::int64_t nnz() const = 0;
  virtual bool double_values() const = 0;
  virtual bool wide_indices() const = 0;
  virtual ValueStorage value_storage() const = 0;  // Options::values; Native for double matrices
  virtual ArrayView array(CsrArray which) const = 0;
  virtual MatrixStats stats() const = 0;
  // The host CSR widened to double values and 64-bit indices (exact), as spmv::bench::bench_matrix takes it.
  virtual CsrMatrix<double, std::int64_t> widened() const = 0;
  // The same matrix with float or double values (indices unchanged); plans are not carried over.
  virtual std::unique_ptr<MatrixCore> with_values(bool double_values) const = 0;

  // y = alpha*op(A)*x + beta*y on host arrays. A CUDA target copies x (and y when beta != 0) to the
  // device and y back, once per call, using the matrix uploaded once and the cached plan.
  virtual void apply_host(Target target, Algorithm algorithm, Operation op, double alpha, ConstHostVector x,
                          double beta, HostVector y) = 0;
  // The same on device arrays of CUDA device `ordinal`, enqueued on `stream` after the producers'
  // streams; nothing is copied and nothing waits for the result.
  virtual void apply_device(int ordinal, Algorithm algorithm, Operation op, double alpha, DeviceVector x,
                            double beta, DeviceVector y, std::uintptr_t stream) = 0;
  // SpMM, Y = alpha*op(A)*X + beta*Y (include/spmv/spmm.hpp, include/spmv/cuda/spmm.hpp), with the
  // SpMM plan cached per (device, operation). Host arrays: the CPU plan, or on CUDA one upload of X and
  // Y and one download of Y per call. Device arrays: in place on `stream`, after the producers' streams.
  virtual void spmm_host(Target target, Operation op, double alpha, ConstHostDense x, double beta, HostDense y) = 0;
  virtual void spmm_device(int ordinal, Operation op, double alpha, DeviceDense x, double beta, DeviceDense y,
                           std::uintptr_t stream) = 0;
  // y = op(A) ⊕.⊗ x over a semiring (include/spmv/semiring.hpp); op = T multiplies A^T, built once and
  // kept (and uploaded once per device). `algorithm` is the kernel: Auto, or on the CPU RowLoop, MergeParallel,
  // Sell, Ell, EllR, Hyb, Coo or Dia, on CUDA CsrVector, MergePath, Sell or the same formats; one SemiringPlan
  // (spmv:: on the CPU, converted once with the matrix's Options; cuda:: per device) kept per op, semiring and
  // algorithm; others are refused (Unsupported). Host arrays: the CPU plan, or on CUDA one upload of x and one
  // download of y per call. Device arrays: in place on `stream`, after the
  // producers' streams.
  virtual void semiring_host(Target target, Semiring semiring, Algorithm algorithm, Operation op, ConstHostVector x,
                             HostVector y) = 0;
  virtual void semiring_device(int ordinal, Semiring semiring, Algorithm algorithm, Operation op, DeviceVector x,
                               DeviceVector y, std::uintptr_t stream) = 0;
  // Solves A x = b (x holds x0) with the cached plan of (algorithm, non-transposed); Jacobi takes the
  // matrix's diagonal. Host arrays: the CPU operator, or on CUDA one upload of b, x0 and the diagonal
  // and one download of x. Device arrays: in place on `stream`, after the producers' streams; returns
  // when x is final (the solver reads its stopping state back).
  virtual SolverResult solve_host(Target target, Algorithm algorithm, const SolverOptions& options,
                                  ConstHostVector b, HostVector x) = 0;
  virtual SolverResult solve_device(int ordinal, Algorithm algorithm, const SolverOptions& options, DeviceVector b,
                                    DeviceVector x, std::uintptr_t stream) = 0;
  // Builds (or finds) the cached plan and describes it.
  virtual PlanInfo plan_info(Target target, Algorithm algorithm, Operation op) = 0;
  // Number of cached plans (CPU operators and CUDA plans), for tests of the cache.
  virtual std::size_t cached_plans() const = 0;
  // The semiring plans kept (CPU and every device), per op, semiring and algorithm.
  virtual std::size_t cached_semiring_plans() const = 0;
};

// Takes ownership of a validated CSR matrix. Instantiated for float/double x int32_t/int64_t. With
// options.values != Native, float values are rounded to that storage (InvalidArgument for double).
template <class Value, class Index>
std::unique_ptr<MatrixCore> make_matrix_core(CsrMatrix<Value, Index> a, const Options& options);

// A double / 64-bit matrix (generators, Matrix Market) narrowed to float when `double_values` is
// false and to 32-bit indices whenever the sizes fit them.
std::unique_ptr<MatrixCore> make_matrix_core_narrowed(const CsrMatrix<double, std::int64_t>& a, bool double_values,
                                                      const Options& options);

// Options from a dict of field names (Matrix(..., options={"threads": 4})); unknown names are refused.
Options parse_options(const nb::dict& given);

void bind_matrix(nb::module_& m);

}  // namespace spmv::python
