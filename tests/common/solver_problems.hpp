#pragma once
// The solver tests' problems and their oracle, shared by the CPU tests (tests/cpu/solvers_test.cpp)
// and the CUDA tests (tests/cuda/cuda_solvers_test.cu): SPD and nonsymmetric matrices, right-hand
// sides, textbook sequential reference solvers in double (no fusion, no parallel sums), and the error
// bound a solve's true residual is checked against.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/zoo.hpp"
#include "spmv/csr.hpp"
#include "spmv/generators.hpp"
#include "spmv/operator.hpp"
#include "spmv/reorder.hpp"
#include "spmv/solvers.hpp"

namespace spmv::test {

using SolverMatrix = CsrMatrix<double, std::int64_t>;

// y = A x in double, row by row in order.
inline std::vector<double> reference_product(const SolverMatrix& a, std::span<const double> x) {
  std::vector<double> y(a.rows, 0.0);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) y[i] += a.values[k] * x[a.col_idx[k]];
  return y;
}

// For Options::reorder in solves: a 2D Poisson matrix on a 24 x 24 grid numbered by i -> 389 i mod 576
// (389 is prime to 576, so a permutation; RCM has a band to restore), a known solution that is not
// constant (a wrongly permuted x cannot pass) and b = A x.
struct ScrambledProblem {
  SolverMatrix a;
  std::vector<double> truth, b;
};
inline ScrambledProblem scrambled_poisson_problem() {
  ScrambledProblem p;
  const SolverMatrix grid = gen::poisson2d(24);
  std::vector<std::int64_t> order(static_cast<std::size_t>(grid.rows));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>((i * 389) % order.size());
  p.a = permute_symmetric(grid, order);
  p.truth.resize(order.size());
  for (std::size_t i = 0; i < p.truth.size(); ++i) p.truth[i] = 1.0 + static_cast<double>(i % 7) / 7.0;
  p.b = reference_product(p.a, p.truth);
  return p;
}

inline double reference_dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline double norm_inf_matrix(const SolverMatrix& a) {
  double m = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double s = 0;
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) s += std::abs(a.values[k]);
    m = std::max(m, s);
  }
  return m;
}

// A nonsymmetric, diagonally dominant convection-diffusion-like matrix: the 2D Laplacian plus an
// upwind first-order term (BiCGStab / GMRES; CG does not apply).
inline SolverMatrix convection_diffusion(std::int64_t n, double wind) {
  CooMatrix<double, std::int64_t> coo;
  coo.rows = coo.cols = n * n;
  auto add = [&](std::int64_t r, std::int64_t c, double v) {
    coo.row_idx.push_back(r);
    coo.col_idx.push_back(c);
    coo.values.push_back(v);
  };
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t r = i * n + j;
      add(r, r, 4.0 + wind);
      if (i > 0) add(r, r - n, -1.0 - wind);
      if (i + 1 < n) add(r, r + n, -1.0);
      if (j > 0) add(r, r - 1, -1.0);
      if (j + 1 < n) add(r, r + 1, -1.0);
    }
  return to_csr<double, std::int64_t>(coo);
}

// shift * I + convection_diffusion(n, wind): the spectrum is a small cluster far from 0, so A v_j is
// nearly parallel to v_j and classical Gram-Schmidt cancels most of w at every Arnoldi step
// (||w - V h|| / ||w|| at most about (4 + wind) / shift, the off-diagonal row sums over the diagonal):
// GMRES's re-orthogonalisation branch runs at every step once shift >= 10, while the method converges
// fast (by about that ratio per step).
inline SolverMatrix clustered_spectrum(std::int64_t n, double wind, double shift) {
  SolverMatrix a = convection_diffusion(n, wind);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) a.values[k] += shift;
  return a;
}

// A permutation of n rows made of cycles of length `cycle` (row i has its 1 in the next column of its
// cycle): orthogonal and nonsymmetric; A v is nearly orthogonal to v for a random v, so GMRES's
// single Gram-Schmidt pass is accepted at every step, and GMRES converges in `cycle` steps (the degree
// of the minimal polynomial x^cycle - 1).
inline SolverMatrix cyclic_permutation(std::int64_t n, std::int64_t cycle) {
  CooMatrix<double, std::int64_t> coo;
  coo.rows = coo.cols = n;
  for (std::int64_t i = 0; i < n; ++i) {
    coo.row_idx.push_back(i);
    coo.col_idx.push_back(i / cycle * cycle + (i % cycle + 1) % cycle);
    coo.values.push_back(1.0);
  }
  return to_csr<double, std::int64_t>(coo);
}

// diag(1e300, 1): with b = (1, 1) the first Arnoldi vector's w.w overflows (GMRES's non-finite
// breakdown after a finite initial residual).
inline SolverMatrix overflowing_matrix() {
  CooMatrix<double, std::int64_t> coo;
  coo.rows = coo.cols = 2;
  coo.row_idx = {0, 1}, coo.col_idx = {0, 1}, coo.values = {1e300, 1.0};
  return to_csr<double, std::int64_t>(coo);
}

inline std::vector<double> random_rhs(std::int64_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> b(n);
  for (auto& v : b) v = rng.symmetric();
  return b;
}

// The attainable accuracy of the true residual (Greenbaum, "Iterative Methods for Solving Linear
// Systems", 1997, §7.3): the recurrence residual and b - A x drift apart by rounding in every update,
// at most about c * eps * k * ||A|| * max_j ||x_j|| / ||b||. We take c = 10 and max_j ||x_j|| <= 2 ||x||
// (the iterates of these well-behaved problems approach x from below), and add the tolerance itself.
inline double true_residual_bound(double tolerance, double eps, int iterations, double a_norm, double x_norm,
                                  double b_norm) {
  return tolerance + 10.0 * eps * (iterations + 1) * a_norm * 2.0 * x_norm / b_norm;
}

// One solve through the CPU operator chosen by Auto, in Value, with the matrix's diagonal for Jacobi;
// returns the result and x (in double).
template <class Value>
SolverResult solve_cpu(const SolverMatrix& a64, const std::vector<double>& b64, std::vector<double>& x64,
                       const SolverOptions& options) {
  const auto a = convert<Value, std::int32_t>(a64);
  auto op = make_cpu_operator(a, Algorithm::Auto, Operation::NonTranspose);
  std::vector<Value> b(b64.begin(), b64.end()), x(b.size(), Value(0));
  const auto diagonal = matrix_diagonal(a);
  const SolverResult r = solve<Value>(*op, b, x, options, diagonal);
  x64.assign(x.begin(), x.end());
  return r;
}

// ----- Textbook reference solvers (sequential, double, unfused), returning the iteration count. -----

struct ReferenceRun {
  int iterations = 0;
  bool converged = false;
  std::vector<double> x;
  std::vector<double> history;  // reference_cg: ||r_k|| / ||b||, entry 0 for x0
};

inline std::vector<double> inverse_or_ones(const SolverMatrix& a, bool jacobi) {
  std::vector<double> d(a.rows, 1.0);
  if (jacobi) {
    const auto diag = matrix_diagonal(a);
    for (std::int64_t i = 0; i < a.rows; ++i) d[i] = 1.0 / diag[i];
  }
  return d;
}

// Saad, Alg. 9.1 (preconditioned CG), x0 = 0.
inline ReferenceRun reference_cg(const SolverMatrix& a, std::span<const double> b, bool jacobi, double tol,
                                 int maxit) {
  const auto n = a.rows;
  const auto dinv = inverse_or_ones(a, jacobi);
  ReferenceRun run{0, false, std::vector<double>(n, 0.0)};
  std::vector<double> r(b.begin(), b.end()), z(n), p(n);
  for (std::int64_t i = 0; i < n; ++i) z[i] = dinv[i] * r[i];
  p = z;
  double rho = reference_dot(r, z);
  const double b_norm = std::sqrt(reference_dot(b, b));
  const double stop = tol * b_norm;
  run.history.push_back(std::sqrt(reference_dot(r, r)) / b_norm);
  if (std::sqrt(reference_dot(r, r)) <= stop) return run.converged = true, run;
  for (int k = 1; k <= maxit; ++k) {
    const auto q = reference_product(a, p);
    const double alpha = rho / reference_dot(p, q);
    for (std::int64_t i = 0; i < n; ++i) run.x[i] += alpha * p[i];
    for (std::int64_t i = 0; i < n; ++i) r[i] -= alpha * q[i];
    run.iterations = k;
    run.history.push_back(std::sqrt(reference_dot(r, r)) / b_norm);
    if (std::sqrt(reference_dot(r, r)) <= stop) return run.converged = true, run;
    for (std::int64_t i = 0; i < n; ++i) z[i] = dinv[i] * r[i];
    const double rho_new = reference_dot(r, z);
    for (std::int64_t i = 0; i < n; ++i) p[i] = z[i] + rho_new / rho * p[i];
    rho = rho_new;
  }
  return run;
}

// Barrett et al., "Templates", Fig. 2.10 (right-preconditioned BiCGStab), x0 = 0.
inline ReferenceRun reference_bicgstab(const SolverMatrix& a, std::span<const double> b, bool jacobi, double tol,
                                       int maxit) {
  const auto n = a.rows;
  const auto dinv = inverse_or_ones(a, jacobi);
  ReferenceRun run{0, false, std::vector<double>(n, 0.0)};
  std::vector<double> r(b.begin(), b.end()), shadow = r, p(n, 0.0), v(n, 0.0), ph(n), s(n), sh(n);
  const double stop = tol * std::sqrt(reference_dot(b, b));
  if (std::sqrt(reference_dot(r, r)) <= stop) return run.converged = true, run;
  double rho_old = 1, alpha = 1, omega = 1;
  for (int k = 1; k <= maxit; ++k) {
    const double rho = reference_dot(shadow, r);
    const double beta = rho / rho_old * (alpha / omega);
    for (std::int64_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    for (std::int64_t i = 0; i < n; ++i) ph[i] = dinv[i] * p[i];
    v = reference_product(a, ph);
    alpha = rho / reference_dot(shadow, v);
    for (std::int64_t i = 0; i < n; ++i) s[i] = r[i] - alpha * v[i];
    run.iterations = k;
    if (std::sqrt(reference_dot(s, s)) <= stop) {
      for (std::int64_t i = 0; i < n; ++i) run.x[i] += alpha * ph[i];
      return run.converged = true, run;
    }
    for (std::int64_t i = 0; i < n; ++i) sh[i] = dinv[i] * s[i];
    const auto t = reference_product(a, sh);
    omega = reference_dot(t, s) / reference_dot(t, t);
    for (std::int64_t i = 0; i < n; ++i) run.x[i] += alpha * ph[i] + omega * sh[i];
    for (std::int64_t i = 0; i < n; ++i) r[i] = s[i] - omega * t[i];
    if (std::sqrt(reference_dot(r, r)) <= stop) return run.converged = true, run;
    rho_old = rho;
  }
  return run;
}

// Saad, Alg. 6.9 with modified Gram-Schmidt and Givens rotations, right preconditioning, x0 = 0.
inline ReferenceRun reference_gmres(const SolverMatrix& a, std::span<const double> b, bool jacobi, double tol,
                                    int maxit, int m) {
  const auto n = a.rows;
  const auto dinv = inverse_or_ones(a, jacobi);
  ReferenceRun run{0, false, std::vector<double>(n, 0.0)};
  const double stop = tol * std::sqrt(reference_dot(b, b));
  while (true) {
    auto ax = reference_product(a, run.x);
    std::vector<double> r(n);
    for (std::int64_t i = 0; i < n; ++i) r[i] = b[i] - ax[i];
    const double beta = std::sqrt(reference_dot(r, r));
    if (beta <= stop) return run.converged = true, run;
    if (run.iterations >= maxit) return run;
    std::vector<std::vector<double>> v(1, r);
    for (auto& e : v[0]) e /= beta;
    std::vector<std::vector<double>> h(m + 1, std::vector<double>(m, 0.0));
    std::vector<double> cs(m), sn(m), g(m + 1, 0.0);
    g[0] = beta;
    int cols = 0;
    bool done = false;
    for (int j = 0; j < m && run.iterations < maxit; ++j) {
      std::vector<double> z(n);
      for (std::int64_t i = 0; i < n; ++i) z[i] = dinv[i] * v[j][i];
      auto w = reference_product(a, z);
      for (int i = 0; i <= j; ++i) {
        h[i][j] = reference_dot(w, v[i]);
        for (std::int64_t e = 0; e < n; ++e) w[e] -= h[i][j] * v[i][e];
      }
      h[j + 1][j] = std::sqrt(reference_dot(w, w));
      for (int i = 0; i < j; ++i) {
        const double t = cs[i] * h[i][j] + sn[i] * h[i + 1][j];
        h[i + 1][j] = -sn[i] * h[i][j] + cs[i] * h[i + 1][j];
        h[i][j] = t;
      }
      const double d = std::hypot(h[j][j], h[j + 1][j]);
      cs[j] = h[j][j] / d;
      sn[j] = h[j + 1][j] / d;
      const double hn = h[j + 1][j];
      h[j][j] = d;
      g[j + 1] = -sn[j] * g[j];
      g[j] *= cs[j];
      cols = j + 1;
      ++run.iterations;
      if (std::abs(g[j + 1]) <= stop) {
        done = true;
        break;
      }
      for (auto& e : w) e /= hn;
      v.push_back(w);
    }
    std::vector<double> y(cols);
    for (int i = cols - 1; i >= 0; --i) {
      double s = g[i];
      for (int c = i + 1; c < cols; ++c) s -= h[i][c] * y[c];
      y[i] = s / h[i][i];
    }
    for (int c = 0; c < cols; ++c)
      for (std::int64_t i = 0; i < n; ++i) run.x[i] += dinv[i] * y[c] * v[c][i];
    if (done) return run.converged = true, run;
  }
}

inline ReferenceRun reference_solve(SolverMethod method, const SolverMatrix& a, std::span<const double> b,
                                    bool jacobi, double tol, int maxit, int restart) {
  switch (method) {
    case SolverMethod::Cg: return reference_cg(a, b, jacobi, tol, maxit);
    case SolverMethod::BiCgStab: return reference_bicgstab(a, b, jacobi, tol, maxit);
    case SolverMethod::Gmres: return reference_gmres(a, b, jacobi, tol, maxit, restart);
  }
  return {};
}

// Iteration counts of the same recurrence summed in a different order (OpenMP or GPU reductions,
// fused sweeps, CGS2 against MGS) drift apart once rounding differences are amplified; on these
// steadily converging problems they stay within a few iterations. The allowance: 3 + 5%.
inline int iteration_slack(int reference_iterations) { return 3 + reference_iterations / 20; }

// The solver test grid shared by the CPU and CUDA tests: matrix x method x preconditioner x precision
// (CG only on the symmetric ones).
struct SolverCase {
  std::string matrix;  // poisson2d, poisson3d, convdiff
  SolverMethod method;
  bool jacobi;
  bool single;  // float instead of double
};

inline std::string solver_case_name(const testing::TestParamInfo<SolverCase>& info) {
  const SolverCase& c = info.param;
  return c.matrix + "_" + std::string(to_string(c.method)) + (c.jacobi ? "_jacobi" : "_none") +
         (c.single ? "_f32" : "_f64");
}

inline SolverMatrix solver_problem_matrix(const std::string& name) {
  if (name == "poisson2d") return gen::poisson2d(24);  // 576 unknowns
  if (name == "poisson3d") return gen::poisson3d(9);   // 729 unknowns
  return convection_diffusion(20, 0.5);                // 400 unknowns, nonsymmetric
}

inline std::vector<SolverCase> solver_cases() {
  std::vector<SolverCase> cases;
  for (bool single : {false, true})
    for (bool jacobi : {false, true}) {
      for (const char* m : {"poisson2d", "poisson3d"})
        for (SolverMethod method : {SolverMethod::Cg, SolverMethod::BiCgStab, SolverMethod::Gmres})
          cases.push_back({m, method, jacobi, single});
      for (SolverMethod method : {SolverMethod::BiCgStab, SolverMethod::Gmres})
        cases.push_back({"convdiff", method, jacobi, single});
    }
  return cases;
}

}  // namespace spmv::test
