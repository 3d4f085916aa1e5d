// The FEM problem generator: sizes, canonical symmetric positive definite assembly, the assembled matrix
// equal to the sum of the element matrices, zero row sums, the undistorted mesh's known stencils, the
// interpolant's energy converging to the continuous one, typed and thread-independent output, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "spmv/csr.hpp"
#include "spmv/error.hpp"
#include "spmv/fem.hpp"
#include "spmv/generators.hpp"

namespace {

using spmv::fem::MeshParams;
using Problem = spmv::fem::FemProblem<double, std::int64_t>;

constexpr double kEps = std::numeric_limits<double>::epsilon();

MeshParams mesh(int dim, std::int64_t n, double kappa_amplitude = 0.5, double distortion = 0.05) {
  return {dim, n, kappa_amplitude, distortion};
}

Problem build(const MeshParams& m, const spmv::fem::BuildOptions& options = {}) {
  return spmv::fem::build<double, std::int64_t>(m, options);
}

spmv::CsrMatrix<float, std::int32_t> narrow(const spmv::CsrMatrix<double, std::int64_t>& a) {
  return spmv::convert<float, std::int32_t>(a);
}

double at(const Problem& p, std::int64_t i, std::int64_t j) {
  const auto& a = p.matrix;
  for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
    if (a.col_idx[k] == j) return a.values[k];
  return 0.0;
}

// Every small mesh the structural tests run on, tiny ones first (no or one unknown).
std::vector<MeshParams> small_meshes() {
  std::vector<MeshParams> v;
  for (std::int64_t n : {1, 2, 3, 4, 7}) v.push_back(mesh(2, n));
  for (std::int64_t n : {1, 2, 3, 5}) v.push_back(mesh(3, n));
  return v;
}

std::string name(const MeshParams& m) { return "fem" + std::to_string(m.dim) + "d n=" + std::to_string(m.n); }

TEST(Fem, SizesAndCanonicalSymmetricMatrix) {
  for (const MeshParams& m : small_meshes()) {
    SCOPED_TRACE(name(m));
    const Problem p = build(m);
    const auto s = spmv::fem::sizes(m);
    const std::int64_t interior = static_cast<std::int64_t>(std::pow(m.n - 1, m.dim));
    EXPECT_EQ(p.unknowns, interior);
    EXPECT_EQ(s.unknowns, interior);
    EXPECT_EQ(p.matrix.rows, interior);
    EXPECT_EQ(p.matrix.cols, interior);
    EXPECT_EQ(p.nnz(), s.nnz);
    EXPECT_EQ(p.elements, s.elements);
    EXPECT_EQ(p.nodes_per_element, m.dim + 1);
    ASSERT_NO_THROW(spmv::validate(p.matrix));
    EXPECT_TRUE(spmv::is_canonical(p.matrix));
    // Exactly symmetric: K_e[a][b] and K_e[b][a] are the same expression, summed in the same order.
    const auto t = spmv::transpose(p.matrix);
    EXPECT_EQ(t.row_ptr, p.matrix.row_ptr);
    EXPECT_EQ(t.col_idx, p.matrix.col_idx);
    EXPECT_EQ(t.values, p.matrix.values);
    ASSERT_EQ(p.diagonal.size(), static_cast<std::size_t>(p.unknowns));
    for (std::int64_t i = 0; i < p.unknowns; ++i) {
      EXPECT_EQ(p.diagonal[i], at(p, i, i));
      EXPECT_GT(p.diagonal[i], 0.0);
    }
    ASSERT_EQ(p.element_unknowns.size(), static_cast<std::size_t>(p.elements * (m.dim + 1)));
    ASSERT_EQ(p.element_matrices.size(), static_cast<std::size_t>(p.elements * (m.dim + 1) * (m.dim + 1)));
  }
  // By hand: n = 1 has no interior node; n = 2 one, shared by 6 triangles / 24 tetrahedra.
  EXPECT_EQ(spmv::fem::sizes(mesh(2, 1)).elements, 0);
  EXPECT_EQ(spmv::fem::sizes(mesh(3, 1)).elements, 0);
  EXPECT_EQ(spmv::fem::sizes(mesh(2, 2)).elements, 6);
  EXPECT_EQ(spmv::fem::sizes(mesh(3, 2)).elements, 24);
  // 3 x 3 interior nodes: 9 diagonal entries, 2 x 6 along each axis, 2 x 4 along the diagonal (1, 1).
  EXPECT_EQ(spmv::fem::sizes(mesh(2, 4)).nnz, 9 + 12 + 12 + 8);
  const Problem p3 = build(mesh(3, 4));
  EXPECT_EQ(p3.matrix.row_length(13), 15);  // the centre of the 3x3x3 interior
}

// Dense Cholesky of the assembled matrix succeeds (all pivots > 0) iff it is SPD.
TEST(Fem, PositiveDefinite) {
  for (const MeshParams& m : {mesh(2, 6), mesh(3, 4), mesh(2, 5, 0.9, 0.05), mesh(3, 3, -0.9, 0.0)}) {
    SCOPED_TRACE(name(m));
    const Problem p = build(m);
    const auto n = static_cast<std::size_t>(p.unknowns);
    std::vector<double> a(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (auto k = p.matrix.row_ptr[i]; k < p.matrix.row_ptr[i + 1]; ++k) a[i * n + p.matrix.col_idx[k]] = p.matrix.values[k];
    for (std::size_t j = 0; j < n; ++j) {
      double d = a[j * n + j];
      for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
      ASSERT_GT(d, 0.0) << "pivot " << j;
      const double l = std::sqrt(d);
      a[j * n + j] = l;
      for (std::size_t i = j + 1; i < n; ++i) {
        double s = a[i * n + j];
        for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
        a[i * n + j] = s / l;
      }
    }
  }
}

// GMA = sum of the element matrices, entry by entry. Both sums are of the same k terms in different
// orders: |difference| <= 2 * gamma_k * sum |terms| (Higham §3.1), allowed as 2 * (k + 2) * eps * sum|terms|.
TEST(Fem, AssembledMatrixIsTheSumOfTheElementMatrices) {
  for (const MeshParams& m : small_meshes()) {
    SCOPED_TRACE(name(m));
    const Problem p = build(m);
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> terms;
    const int npe = p.nodes_per_element;
    for (std::int64_t e = 0; e < p.elements; ++e)
      for (int a = 0; a < npe; ++a)
        for (int b = 0; b < npe; ++b) {
          const std::int64_t i = p.element_unknowns[a * p.elements + e], j = p.element_unknowns[b * p.elements + e];
          if (i >= 0 && j >= 0) terms[{i, j}].push_back(p.element_matrices[(a * npe + b) * p.elements + e]);
        }
    std::size_t entries = 0;
    for (std::int64_t i = 0; i < p.unknowns; ++i)
      for (auto k = p.matrix.row_ptr[i]; k < p.matrix.row_ptr[i + 1]; ++k) {
        const auto it = terms.find({i, p.matrix.col_idx[k]});
        ASSERT_NE(it, terms.end()) << "entry (" << i << ", " << p.matrix.col_idx[k] << ") has no element";
        double sum = 0, magnitude = 0;
        for (double t : it->second) {
          sum += t;
          magnitude += std::abs(t);
        }
        const double bound = 2.0 * (static_cast<double>(it->second.size()) + 2) * kEps * magnitude;
        EXPECT_LE(std::abs(p.matrix.values[k] - sum), bound) << "entry (" << i << ", " << p.matrix.col_idx[k] << ")";
        ++entries;
      }
    EXPECT_EQ(entries, terms.size());  // and no element pair is missing from the pattern
  }
}

// Gradients of the barycentric functions sum to zero, so every element row sums to zero and so does
// every row of a node whose neighbours are all unknowns (not next to the boundary), for any kappa.
TEST(Fem, RowSumsVanishAwayFromTheBoundary) {
  for (const MeshParams& m : {mesh(2, 9), mesh(3, 6), mesh(2, 8, 0.0, 0.0), mesh(3, 5, 0.0, 0.0)}) {
    SCOPED_TRACE(name(m));
    const Problem p = build(m);
    const std::int64_t full_row = m.dim == 2 ? 7 : 15;
    int checked = 0;
    for (std::int64_t i = 0; i < p.unknowns; ++i) {
      if (p.matrix.row_length(i) != full_row) continue;
      double sum = 0, magnitude = 0;
      for (auto k = p.matrix.row_ptr[i]; k < p.matrix.row_ptr[i + 1]; ++k) {
        sum += p.matrix.values[k];
        magnitude += std::abs(p.matrix.values[k]);
      }
      // Each entry carries the rounding of its element terms (<= 24 x 4 of them) and the row sum 15 more.
      EXPECT_LE(std::abs(sum), 2.0 * (96 + 15 + 2) * kEps * magnitude) << "row " << i;
      ++checked;
    }
    EXPECT_GT(checked, 0);
  }
}

// Constant kappa on the undistorted mesh: P1 on Kuhn simplices gives the 5-point Laplacian in 2D and
// h times the 7-point Laplacian in 3D; the diagonal-direction entries are (rounded) zeros.
TEST(Fem, UndistortedMeshGivesTheFiniteDifferenceStencils) {
  for (const MeshParams& m : {mesh(2, 7, 0.0, 0.0), mesh(3, 5, 0.0, 0.0)}) {
    SCOPED_TRACE(name(m));
    const Problem p = build(m);
    const auto fd = m.dim == 2 ? spmv::gen::poisson2d(m.n - 1) : spmv::gen::poisson3d(m.n - 1);
    const double h = m.dim == 2 ? 1.0 : 1.0 / static_cast<double>(m.n);
    for (std::int64_t i = 0; i < p.unknowns; ++i)
      for (auto k = p.matrix.row_ptr[i]; k < p.matrix.row_ptr[i + 1]; ++k) {
        const std::int64_t j = p.matrix.col_idx[k];
        double want = 0;
        for (auto l = fd.row_ptr[i]; l < fd.row_ptr[i + 1]; ++l)
          if (fd.col_idx[l] == j) want = h * fd.values[l];
        // Values of size ~6h from element terms of size ~h: 2 * (96 + 2) * eps * 8h covers the rounding.
        EXPECT_NEAR(p.matrix.values[k], want, 2.0 * 98 * kEps * 8 * h) << "(" << i << ", " << j << ")";
      }
  }
}

// The interpolant of u = prod sin(pi x_k) (zero on the boundary) has discrete energy u^T A u ->
// int |grad u|^2 = dim * pi^2 / 2^dim with kappa = 1, with an O(h^2) error (a(u_I, u_I) = a(u, u) -
// 2 a(u, u - u_I) + |u - u_I|_1^2 and a(u, u - u_I) = (-lap u, u - u_I) = O(h^2)). Checks gradients,
// volumes and the distortion together: the error must be small and fall by about 4 when h halves.
TEST(Fem, InterpolantEnergyConvergesAtSecondOrder) {
  for (int dim : {2, 3}) {
    SCOPED_TRACE(dim);
    const double exact = dim * std::numbers::pi * std::numbers::pi / (1 << dim);
    std::vector<double> errors;
    for (std::int64_t n : dim == 2 ? std::vector<std::int64_t>{16, 32} : std::vector<std::int64_t>{8, 16}) {
      const MeshParams m = mesh(dim, n, 0.0, 0.05);
      const Problem p = build(m, {.element_data = false});
      std::vector<double> u(static_cast<std::size_t>(p.unknowns));
      for (std::int64_t i = 0; i < p.unknowns; ++i) {
        const auto x = spmv::fem::unknown_position(m, i);
        u[i] = 1;
        for (int k = 0; k < dim; ++k) u[i] *= std::sin(std::numbers::pi * x[k]);
      }
      double energy = 0;
      for (std::int64_t i = 0; i < p.unknowns; ++i)
        for (auto k = p.matrix.row_ptr[i]; k < p.matrix.row_ptr[i + 1]; ++k)
          energy += u[i] * p.matrix.values[k] * u[p.matrix.col_idx[k]];
      errors.push_back(std::abs(energy - exact) / exact);
    }
    EXPECT_LT(errors[1], dim == 2 ? 0.01 : 0.03);
    EXPECT_GT(errors[0] / errors[1], 3.0);  // second order: 4 in the limit
  }
}

// Values are computed in double and rounded once; the structure and the element map do not depend on
// the types, and nothing depends on the thread count.
TEST(Fem, TypedAndThreadIndependent) {
  for (const MeshParams& m : {mesh(2, 40), mesh(3, 9)}) {
    SCOPED_TRACE(name(m));
    const Problem wide = build(m, {.threads = 1});
    const Problem three = build(m, {.threads = 3});
    EXPECT_EQ(wide.matrix.col_idx, three.matrix.col_idx);
    EXPECT_EQ(wide.matrix.values, three.matrix.values);
    EXPECT_EQ(wide.element_unknowns, three.element_unknowns);
    EXPECT_EQ(wide.element_matrices, three.element_matrices);
    const auto narrow = spmv::fem::build<float, std::int32_t>(m, {.threads = 2});
    const auto converted = spmv::convert<float, std::int32_t>(wide.matrix);
    EXPECT_EQ(narrow.matrix.row_ptr, converted.row_ptr);
    EXPECT_EQ(narrow.matrix.col_idx, converted.col_idx);
    EXPECT_EQ(narrow.matrix.values, converted.values);
    ASSERT_EQ(narrow.element_matrices.size(), wide.element_matrices.size());
    for (std::size_t k = 0; k < wide.element_matrices.size(); ++k)
      ASSERT_EQ(narrow.element_matrices[k], static_cast<float>(wide.element_matrices[k]));
    for (std::size_t k = 0; k < wide.element_unknowns.size(); ++k)
      ASSERT_EQ(narrow.element_unknowns[k], wide.element_unknowns[k]);
  }
}

TEST(Fem, GeneratorRegistry) {
  const auto a = spmv::gen::generate("fem2d", {{"n", 6}, {"kappa_amplitude", 0.25}});
  const Problem p = build(mesh(2, 6, 0.25));
  EXPECT_EQ(a.col_idx, p.matrix.col_idx);
  EXPECT_EQ(a.values, p.matrix.values);
  const auto b = spmv::gen::generate<float, std::int32_t>("fem3d", {{"n", 4}, {"distortion", 0}});
  EXPECT_EQ(b.values, narrow(build(mesh(3, 4, 0.5, 0.0)).matrix).values);
  EXPECT_EQ(spmv::fem::mesh_params("fem3d", {}).n, 100);
  EXPECT_THROW(spmv::gen::generate("fem2d", {{"m", 3}}), spmv::InvalidArgument);
}

TEST(Fem, InvalidParameters) {
  EXPECT_THROW(build(mesh(2, 0)), spmv::InvalidArgument);
  EXPECT_THROW(build(mesh(4, 3)), spmv::InvalidArgument);
  EXPECT_THROW(build(mesh(2, 3, 1.0)), spmv::InvalidArgument);
  EXPECT_THROW(build(mesh(2, 3, 0.5, 0.2)), spmv::InvalidArgument);
  EXPECT_THROW(build(mesh(2, 3, 0.5, -0.01)), spmv::InvalidArgument);
  EXPECT_THROW(build(mesh(2, 3, std::nan(""))), spmv::InvalidArgument);
  EXPECT_THROW(spmv::fem::mesh_params("fem2d", {{"n", 2.5}}), spmv::InvalidArgument);
  EXPECT_THROW(spmv::fem::mesh_params("fem4d", {}), spmv::InvalidArgument);
  EXPECT_THROW(build(mesh(3, 300), {.max_memory = 1000}),
               spmv::MemoryLimitExceeded);
  EXPECT_THROW(spmv::fem::unknown_position(mesh(2, 3), 4), spmv::InvalidArgument);
}

}  // namespace
