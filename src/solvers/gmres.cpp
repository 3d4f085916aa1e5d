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
#include <type_traits>
#include <vector>

#include "solvers/cpu_vector_ops.hpp"
#include "solvers/gmres_arnoldi.hpp"
#include "solvers/gmres_cycle.hpp"
#include "solvers/gmres_sstep.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

namespace {

// GMRES(m) with its basis stored in Basis: Value (w = A z is then column j + 1 itself), float for a
// double solve (GmresBasis::Float32) or ScaledHalf for a float one (Float16): then w and the SpMV's input
// z are vectors of the value type of their own, and v_j is widened into z before each product.
template <class Value, class Basis>
void gmres_cycles(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                  std::span<const Value> inverse_diagonal, int m) {
  constexpr bool kCompressed = !std::is_same_v<Value, Basis>;
  const auto n = static_cast<std::int64_t>(b.size());
  const bool jacobi = !inverse_diagonal.empty();
  const Value* dinv = inverse_diagonal.data();
  std::vector<Basis> basis(static_cast<std::size_t>(m + 1) * n);
  std::vector<Value> z(jacobi || kCompressed ? n : 0), w_own(kCompressed ? n : 0);
  // Hessenberg column-major (m+1) x m, rotations, right-hand side g = beta e1 rotated, solution y.
  std::vector<double> hess(static_cast<std::size_t>(m + 1) * m), cs(m), sn(m), g(m + 1), y(m), h(m + 2), s(m + 2);
  auto column = [&](int c) { return basis.data() + static_cast<std::size_t>(c) * n; };
  auto H = [&](int row, int col) -> double& { return hess[static_cast<std::size_t>(col) * (m + 1) + row]; };
  // Where A z lands: column j + 1, or w_own.
  const auto product = [&](int j) -> std::span<Value> {
    if constexpr (kCompressed) return w_own;
    else return {column(j + 1), static_cast<std::size_t>(n)};
  };

  int k = 0;  // iterations (Arnoldi steps) so far
  bool claimed = false;  // the last cycle ended on an estimate that the restart must confirm
  double refused = 0;    // the true residual of the last refused estimate
  for (bool first = true;; first = false) {
    // r = b - A x into V_0 (or w_own); at a restart its norm is the true residual, a better test than g's.
    std::span<Value> r = product(-1);
    cpu::copy<Value>(b, r);
    run.apply(Value(-1), x, Value(1), r);
    const double beta = std::sqrt(run.sum(cpu::dot<Value>(r, r)));
    if (gmres_restart_ends(run, beta, first, k, claimed, refused)) return;
    const double inv_beta = 1.0 / beta;
    Basis* v0 = column(0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) v0[i] = static_cast<Basis>(r[i] * static_cast<Value>(inv_beta));
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;

    int columns = 0;  // Krylov vectors of this cycle that enter the update
    bool stop = false;
    for (int j = 0; j < m; ++j) {
      std::span<Value> w = product(j);
      const Basis* vj = column(j);
      std::span<const Value> input = z;  // M^-1 v_j, widened from a compressed basis
      if constexpr (kCompressed) {
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) z[i] = (jacobi ? dinv[i] : Value(1)) * static_cast<Value>(vj[i]);
      } else {
        input = {vj, static_cast<std::size_t>(n)};
        if (jacobi) {
          cpu::scale_by<Value>(inverse_diagonal, input, z);
          input = z;
        }
      }
      run.apply(Value(1), input, Value(0), w);
      const ArnoldiStep step = arnoldi_step(basis.data(), n, j, static_cast<const Value*>(w.data()), h.data(),
                                            s.data(), &H(0, j), [&](std::span<double> part) { run.global_sum(part); });
      const double h_next = step.beta;
      if (!gmres_rotate_column(run, &H(0, j), j, h_next, cs.data(), sn.data(), g.data())) break;
      columns = j + 1;
      ++k;
      stop = run.step(k, std::abs(g[j + 1]));
      if (stop || h_next == 0) break;  // h_next == 0: invariant subspace, the cycle's solution is exact
    }
    // A compressed basis's A V_j = V_{j+1} H holds only to the basis's rounding, so the Givens estimate
    // may undercut the true residual by about that much of the cycle's initial residual: a convergence
    // it reports is confirmed by the restart's true residual (one more apply) before the solve stops.
    const bool confirm = kCompressed && stop && run.converged();
    claimed = confirm;
    gmres_update_x(hess.data(), m + 1, g.data(), y.data(), columns, basis.data(), n, jacobi ? dinv : nullptr, x);
    if ((stop && !confirm) || run.broken()) return;
  }
}

}  // namespace

template <class Value>
void gmres_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
               std::span<const Value> inverse_diagonal, int restart) {
  if (run.options().gmres_s_step > 1)  // working basis only (check_problem refuses the others)
    return gmres_sstep_cpu<Value>(run, b, x, inverse_diagonal, restart, run.options().gmres_s_step);
  if constexpr (std::is_same_v<Value, double>) {
    if (run.options().gmres_basis == GmresBasis::Float32)
      return gmres_cycles<double, float>(run, b, x, inverse_diagonal, restart);
  } else {
    if (run.options().gmres_basis == GmresBasis::Float16)
      return gmres_cycles<float, ScaledHalf>(run, b, x, inverse_diagonal, restart);
  }
  gmres_cycles<Value, Value>(run, b, x, inverse_diagonal, restart);
}

template void gmres_cpu(CpuRun<float>&, std::span<const float>, std::span<float>, std::span<const float>, int);
template void gmres_cpu(CpuRun<double>&, std::span<const double>, std::span<double>, std::span<const double>, int);

}  // namespace spmv::solvers
