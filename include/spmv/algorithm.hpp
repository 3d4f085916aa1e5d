#pragma once
// Intent-level names for everything that can compute y = alpha*op(A)*x + beta*y (STYLE.md §3).
// Strings appear only at the edges (CLI, Python) through to_string / parse_algorithm.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace spmv {

enum class Operation { NonTranspose, Transpose };

enum class Backend { Cpu, Cuda };

enum class Algorithm {
  Auto,  // the selector picks one of the others from row statistics
  Tune,  // run-time tuning: the first products try candidates (Auto's choice first), then settle
  // CPU backend
  Reference,        // sequential oracle, double accumulation
  RowLoop,          // naive row loop in the value type
  ColumnChunked,    // vector processed in chunks of `span` columns, a cursor per row
  MergeParallel,    // OpenMP, merge-path split of (rows, nonzeros)
  Mkl,              // vendor baseline: Intel MKL inspector-executor mkl_sparse_?_mv; built with SPMV_WITH_MKL
  // CUDA backend, CSR
  CsrScalar,        // Bell & Garland: one thread per row
  CsrVector,        // Bell & Garland: a (sub-)warp per row
  CsrCoop,          // Reguly & Giles: coop threads per row, fixed rule
  CsrAdaptive,      // Greathouse & Daga: row blocks, CSR-stream / CSR-vector / long rows
  Pcsr,             // He & Gao: products kernel + segmented reduction kernel
  LightSpmv,        // Liu & Schmidt: atomic row counter, vectors of 2-32 lanes
  MergePath,        // Merrill & Garland: merge-path over (row ends, nonzeros)
  Hola,             // Steinberger, Zayer & Seidel: globally homogeneous, locally adaptive
  SegmentedSum,     // nonzero-balanced warp tiles, a row-end bit per nonzero, warp segmented scan
  // Transpose-specific (y = alpha*A^T*x + beta*y)
  TransposeAtomic,    // one thread per row, atomic adds into y
  HolaBuffered,       // Hola-SpMVT with a shared-memory output buffer
  ExplicitTranspose,  // CSR -> CSC once, then a non-transposed product; deterministic
  Symmetric,          // A == A^T checked once, then A x's own plan: no copy, no atomics; refused otherwise
  // Formats (both backends; the plan converts from CSR once)
  Coo,
  Ell,
  EllR,        // ELLPACK-R: ELL + row lengths
  EllRVector,  // ELLPACK-R with several threads per row
  Dia,
  Hyb,
  Sell,  // SELL-C-sigma
  CompressedCsr,  // 32-row slices, 16-bit column offsets, value table / codes (formats.hpp)
  // Vendor libraries, offered for comparison (never chosen by Auto)
  CusparseCsrAlg1,  // cusparseSpMV CUSPARSE_SPMV_CSR_ALG1
  CusparseCsrAlg2,  // cusparseSpMV CUSPARSE_SPMV_CSR_ALG2 (deterministic)
  CusparseCooAlg1,  // cusparseSpMV CUSPARSE_SPMV_COO_ALG1
  Eigen,            // Eigen::SparseMatrix (row-major) * vector, CPU; present when built with Eigen
};

// True for the vendor baselines above.
bool is_vendor(Algorithm a);

std::string_view to_string(Algorithm a);
std::string_view to_string(Operation op);
std::string_view to_string(Backend b);
// Accepts the names printed by to_string (case-insensitive, '-' and '_' ignored).
std::optional<Algorithm> parse_algorithm(std::string_view name);
// Every enumerator except Auto and Tune, in declaration order.
std::span<const Algorithm> all_algorithms();

}  // namespace spmv
