// Preconditioned Conjugate Gradient (Hestenes & Stiefel 1952; Saad, "Iterative Methods for Sparse
// Linear Systems", 2nd ed., Alg. 9.1) on the CPU. Per iteration: one apply q = A p, one dot p.q, one
// fused sweep (x += alpha p, r -= alpha q, z = M^-1 r, with r.z and r.r reduced in the same pass) and
// the direction update p = z + beta p: 4 passes over the vectors instead of the textbook's 6.
#include <vector>

#include "solvers/cpu_vector_ops.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

template <class Value>
void cg_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
            std::span<const Value> inverse_diagonal) {
  const auto n = static_cast<std::int64_t>(b.size());
  const bool jacobi = !inverse_diagonal.empty();
  std::vector<Value> r(b.begin(), b.end()), p(n), q(n), z_storage(jacobi ? n : 0);
  std::span<Value> z = jacobi ? std::span<Value>(z_storage) : std::span<Value>(r);  // z = r without M

  run.apply(Value(-1), x, Value(1), r);  // r = b - A x0
  cpu::scale_by<Value>(inverse_diagonal, r, z);
  double rr = cpu::dot<Value>(r, r);
  double rho = jacobi ? cpu::dot<Value>(r, z) : rr;
  if (run.start(std::sqrt(rr))) return;
  cpu::copy<Value>(z, p);

  for (int k = 1;; ++k) {
    run.apply(Value(1), p, Value(0), q);
    const double pq = cpu::dot<Value>(p, q);
    if (!(pq > 0)) {  // also catches NaN
      run.stopped_on_breakdown(std::isfinite(pq) ? kBreakdownCgCurvature : kBreakdownNonFinite);
      return;
    }
    const auto alpha = static_cast<Value>(rho / pq);
    double rz_new = 0, rr_new = 0;
    const Value* dinv = inverse_diagonal.data();
#pragma omp parallel for schedule(static) reduction(+ : rz_new, rr_new)
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      const Value ri = r[i] - alpha * q[i];
      r[i] = ri;
      const Value zi = jacobi ? dinv[i] * ri : ri;
      if (jacobi) z[i] = zi;
      rr_new += static_cast<double>(ri) * ri;
      rz_new += static_cast<double>(ri) * zi;
    }
    if (!jacobi) rz_new = rr_new;
    if (run.step(k, std::sqrt(rr_new))) return;
    if (rz_new == 0) {  // r != 0 here (not converged), so M is not positive definite
      run.stopped_on_breakdown(kBreakdownCgRho);
      return;
    }
    const auto beta = static_cast<Value>(rz_new / rho);
    rho = rz_new;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
}

template void cg_cpu(CpuRun<float>&, std::span<const float>, std::span<float>, std::span<const float>);
template void cg_cpu(CpuRun<double>&, std::span<const double>, std::span<double>, std::span<const double>);

}  // namespace spmv::solvers
