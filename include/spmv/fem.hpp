#pragma once
// Finite-element problems and the local-matrix-assembly (LMA) operator (issue 9; Reguly & Giles,
// "Finite element algorithms and data structures on graphical processing units", IJPP 2015, §3).
//
// The problem: -div(kappa grad u) = f on the unit square / unit cube, homogeneous Dirichlet boundary,
// P1 (linear) elements on a structured simplex mesh: n^dim cells, each split into dim! simplices along
// its main diagonal (Kuhn / Freudenthal triangulation: 2 triangles, 6 tetrahedra, conforming across
// cells). The nodes are moved by a smooth map that keeps the boundary in place,
//   x_k = xi_k + distortion * sin(2 pi xi_k) * prod_{m != k} sin(pi xi_m),
// so that the element matrices are general dense SPD-semidefinite blocks (on the undistorted mesh half
// of their off-diagonal entries are exactly zero and the matrix is the 5- / 7-point Laplacian). The
// coefficient is smooth and positive,
//   kappa(x) = 1 + kappa_amplitude * prod_k sin(2 pi x_k),   |kappa_amplitude| < 1,
// taken at each element's centroid (one-point quadrature). Element matrix of simplex T:
//   K_T[a][b] = kappa(centroid T) * |T| * grad(phi_a) . grad(phi_b).
// Boundary nodes are eliminated: the unknowns are the (n-1)^dim interior nodes, numbered
// lexicographically (first coordinate fastest), so the assembled matrix is SPD.
//
// docs/algorithms/lma.md explains the operator, its byte and FLOP model against the assembled matrix,
// and its determinism.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmv/algorithm.hpp"
#include "spmv/csr.hpp"
#include "spmv/linear_operator.hpp"
#include "spmv/operator.hpp"

namespace spmv::fem {

struct MeshParams {
  int dim = 2;                   // 2: triangles, 3: tetrahedra
  std::int64_t n = 0;            // cells per side (n >= 1)
  double kappa_amplitude = 0.5;  // kappa in [1 - |a|, 1 + |a|]; |a| < 1
  double distortion = 0.05;      // node displacement amplitude, in [0, 0.05] (see mesh_params_check)
};

struct BuildOptions {
  bool element_data = true;  // false: the assembled matrix (and diagonal) only, no LMA arrays
  int threads = 0;           // OpenMP threads, 0: the OpenMP default; the result never depends on it
  // Bytes the problem may take; 0: what the system has available. Above it: MemoryLimitExceeded naming
  // both sizes, before the large arrays exist.
  std::uint64_t max_memory = 0;
};

// One FEM problem in the value and index type it is used in: computed in double, rounded once when
// stored. Element e of the LMA arrays has nodes_per_element local nodes; arrays are element-major
// structure-of-arrays, so that consecutive elements are consecutive in memory for each local slot
// (one thread per element reads them coalesced on a GPU).
template <class Value, class Index>
struct FemProblem {
  MeshParams mesh;
  std::int64_t unknowns = 0;     // (n - 1)^dim
  std::int64_t elements = 0;     // simplices with at least one unknown (the others contribute nothing)
  int nodes_per_element = 0;     // dim + 1
  CsrMatrix<Value, Index> matrix;  // global assembly (GMA): canonical CSR, symmetric positive definite
  std::vector<Value> diagonal;     // of `matrix` (Jacobi)
  // element_unknowns[l * elements + e]: the unknown of local node l of element e, -1 on the boundary.
  std::vector<Index> element_unknowns;
  // element_matrices[(a * nodes_per_element + b) * elements + e] = K_e[a][b] (full, symmetric).
  std::vector<Value> element_matrices;

  std::int64_t nnz() const { return static_cast<std::int64_t>(matrix.col_idx.size()); }
};

// Throws InvalidArgument for dim not in {2, 3}, n < 1, |kappa_amplitude| >= 1 or a distortion outside
// [0, 0.05]: below 1 / (4 pi) the map's Jacobian is column-diagonally dominant in 3D (diagonal >= 1 - 2 pi d,
// the two others <= pi d each), so every element keeps its orientation (build checks it).
void mesh_params_check(const MeshParams& mesh);

// Instantiated for float/double x int32_t/int64_t. Deterministic for any thread count. Throws
// Unsupported when the sizes do not fit Index, MemoryLimitExceeded as above.
template <class Value, class Index>
FemProblem<Value, Index> build(const MeshParams& mesh, const BuildOptions& options = {});

// Rows, columns and nonzeros of the assembled matrix and the element count, from the parameters alone
// (lets callers pick 32- or 64-bit indices before building).
struct Sizes {
  std::int64_t unknowns = 0, nnz = 0, elements = 0;
};
Sizes sizes(const MeshParams& mesh);

// Physical coordinates of unknown u in [0, unknowns) (right-hand sides, plots, tests); [2] = 0 in 2D.
std::array<double, 3> unknown_position(const MeshParams& mesh, std::int64_t u);

// The mesh parameters of a generator call "fem2d" / "fem3d" with keys n, kappa_amplitude, distortion
// (the registry of spmv::gen lists them with their defaults); InvalidArgument for other kinds or keys.
bool is_fem_kind(std::string_view kind);
MeshParams mesh_params(std::string_view kind, const std::map<std::string, double>& params);

// The LMA product in double, term by term from the stored element data (the test and benchmark
// oracle, sequential): expected_i = alpha * sum_{e, a: u(e,a) = i} sum_b K_e[a][b] x_{u(e,b)} + beta * y0_i,
// magnitude_i = the same sum of |K_e[a][b] x_{u(e,b)}| and terms_i = how many products it holds (the
// n of the error bound; docs/algorithms/lma.md). beta == 0 ignores y0; alpha == 0 reads neither.
struct LmaReference {
  std::vector<double> expected, magnitude;
  std::vector<std::int64_t> terms;
};
template <class Value, class Index>
LmaReference lma_reference(const FemProblem<Value, Index>& p, double alpha, std::span<const Value> x, double beta,
                           std::span<const Value> y0);

// Multiply-adds of one LMA product: sum over elements of (unknowns of the element)^2, boundary rows and
// columns of K_e skipped. GFLOP/s of the LMA = 2 * this / time.
template <class Value, class Index>
std::int64_t lma_multiply_adds(const FemProblem<Value, Index>& p);

// y = alpha * sum_e P_e^T K_e P_e x + beta * y on host vectors (P_e gathers the element's unknowns), as
// a LinearOperator, with the benchmark's extras. The operator owns a copy of the element data, reordered
// by colour (no two elements of a colour share an unknown), so each colour is one race-free parallel
// pass and the result is the same bit for bit for any thread count (docs/algorithms/lma.md). Safe to
// call from several threads: calls on one operator are serialized (the CUDA one owns its device copies
// of x and y).
template <class Value>
class LmaOperator : public LinearOperator<Value> {
 public:
  virtual Backend backend() const = 0;
  virtual std::string policy() const = 0;  // elements, colours, layout, for logs and bench rows
  virtual double setup_ms() const = 0;     // colouring + reordering (+ upload) at construction
  virtual int colours() const = 0;
  // Times repeated products on backend-resident copies of x and y (y's contents afterwards are
  // unspecified): warm-up, then the median of repetitions, as Operator::time.
  virtual Timing time(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
                      const TimingOptions& options) = 0;
};

template <class Value, class Index>
std::unique_ptr<LmaOperator<Value>> make_cpu_lma_operator(const FemProblem<Value, Index>& p,
                                                          const Options& options = {});
// Defined by the CUDA backend (src/cuda/lma.cu); without it, throws Unsupported. Uses options.device.
template <class Value, class Index>
std::unique_ptr<LmaOperator<Value>> make_cuda_lma_operator(const FemProblem<Value, Index>& p,
                                                           const Options& options = {});
template <class Value, class Index>
std::unique_ptr<LmaOperator<Value>> make_lma_operator(Backend backend, const FemProblem<Value, Index>& p,
                                                      const Options& options = {});

// The element order both backends run: elements grouped by colour, greedily (each element takes the
// smallest colour none of its unknowns has seen yet, in mesh order), so no two elements of a colour
// write the same entry of y. order[k] is the original index of the k-th element; colour c holds
// positions [colour_offsets[c], colour_offsets[c + 1]). Deterministic.
struct Colouring {
  std::vector<std::int64_t> order;
  std::vector<std::int64_t> colour_offsets{0};
  int colours() const { return static_cast<int>(colour_offsets.size()) - 1; }
};
template <class Value, class Index>
Colouring colour_elements(const FemProblem<Value, Index>& p);

}  // namespace spmv::fem
