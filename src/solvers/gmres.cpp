// Restarted GMRES(m) (Saad & Schultz 1986; Saad, 2nd ed., Alg. 6.9 with Givens rotations, §6.5.3)
// with right Jacobi preconditioning: it minimises the true residual ||b - A x|| over x0 + M^-1 K_m, so
// the Givens estimate |g_{j+1}| that the stopping rule reads is the unpreconditioned residual.
// Arnoldi orthogonalises with one classical Gram-Schmidt pass whose dot products and ||w|| come from
// one sweep (the norm by Pythagoras) and a fused update + normalisation that also measures the new
// vector's loss of orthogonality; a second pass corrects it only when that loss exceeds sqrt(eps)
// (src/solvers/gmres_arnoldi.hpp says why; the CUDA path, src/cuda/solvers/gmres.cu, runs the same
// recurrence with the decisions on the device). Per step that is 2 sweeps over V_j, as one pass of
// classical Gram-Schmidt, instead of CGS2's 4 plus a norm and a scaling.
// Each restart recomputes r = b - A x with one extra apply; the cycle also ends when the Krylov space
// becomes invariant (h_{j+1,j} = 0, the "lucky" breakdown: the cycle's solution is then exact).
#include <algorithm>
#include <vector>

#include "solvers/cpu_vector_ops.hpp"
#include "solvers/gmres_arnoldi.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

template <class Value>
void gmres_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
               std::span<const Value> inverse_diagonal, int restart) {
  const auto n = static_cast<std::int64_t>(b.size());
  const int m = restart;
  const bool jacobi = !inverse_diagonal.empty();
  const Value* dinv = inverse_diagonal.data();
  std::vector<Value> basis(static_cast<std::size_t>(m + 1) * n), z(n);
  // Hessenberg column-major (m+1) x m, rotations, right-hand side g = beta e1 rotated, solution y.
  std::vector<double> hess(static_cast<std::size_t>(m + 1) * m), cs(m), sn(m), g(m + 1), y(m), h(m + 2), s(m + 2);
  auto column = [&](int c) { return std::span<Value>(basis.data() + c * n, n); };
  auto H = [&](int row, int col) -> double& { return hess[static_cast<std::size_t>(col) * (m + 1) + row]; };

  int k = 0;  // iterations (Arnoldi steps) so far
  for (bool first = true;; first = false) {
    // r = b - A x into V_0; at a restart its norm is the true residual, a better test than g's.
    std::span<Value> r = column(0);
    cpu::copy<Value>(b, r);
    run.apply(Value(-1), x, Value(1), r);
    const double beta = std::sqrt(run.sum(cpu::dot<Value>(r, r)));
    if (first) {
      if (run.start(beta)) return;
    } else if (!std::isfinite(beta)) {
      run.stopped_on_breakdown(kBreakdownNonFinite);
      return;
    } else if (run.replace_last_residual(beta)) {
      return;
    }
    const auto inv_beta = static_cast<Value>(1.0 / beta);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) r[i] *= inv_beta;
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;

    int columns = 0;  // Krylov vectors of this cycle that enter the update
    bool stop = false;
    for (int j = 0; j < m; ++j) {
      std::span<Value> w = column(j + 1);
      cpu::scale_by<Value>(inverse_diagonal, column(j), z);
      run.apply(Value(1), z, Value(0), w);
      const ArnoldiStep step = arnoldi_step(basis.data(), n, j, h.data(), s.data(), &H(0, j),
                                            [&](std::span<double> part) { run.global_sum(part); });
      const double h_next = step.beta;
      // Earlier rotations on the new column, then the rotation that zeroes h_{j+1,j}.
      for (int i = 0; i < j; ++i) {
        const double t = cs[i] * H(i, j) + sn[i] * H(i + 1, j);
        H(i + 1, j) = -sn[i] * H(i, j) + cs[i] * H(i + 1, j);
        H(i, j) = t;
      }
      const double denom = std::hypot(H(j, j), h_next);
      if (denom == 0 || !std::isfinite(denom)) {
        run.stopped_on_breakdown(denom == 0 ? kBreakdownGmresSingular : kBreakdownNonFinite);
        break;  // the columns before j still improve x
      }
      cs[j] = H(j, j) / denom;
      sn[j] = h_next / denom;
      H(j, j) = denom;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      columns = j + 1;
      ++k;
      stop = run.step(k, std::abs(g[j + 1]));
      if (stop || h_next == 0) break;  // h_next == 0: invariant subspace, the cycle's solution is exact
    }
    // y = R^-1 g (back substitution), x += M^-1 V y.
    for (int i = columns - 1; i >= 0; --i) {
      double sum = g[i];
      for (int c = i + 1; c < columns; ++c) sum -= H(i, c) * y[c];
      y[i] = sum / H(i, i);
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int c = 0; c < columns; ++c) sum += y[c] * basis[c * n + i];
      x[i] += jacobi ? dinv[i] * static_cast<Value>(sum) : static_cast<Value>(sum);
    }
    if (stop || run.broken()) return;
  }
}

template void gmres_cpu(CpuRun<float>&, std::span<const float>, std::span<float>, std::span<const float>, int);
template void gmres_cpu(CpuRun<double>&, std::span<const double>, std::span<double>, std::span<const double>, int);

}  // namespace spmv::solvers
