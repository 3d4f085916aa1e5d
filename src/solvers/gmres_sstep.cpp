// s-step GMRES(m) on the CPU (SolverOptions::gmres_s_step = s > 1; docs/SOLVERS.md, "s-step GMRES";
// gmres_sstep.hpp has the block's algorithm and the small-matrix work shared with the CUDA solver).
// The first cycle of a solve runs ordinary Arnoldi steps (gmres_arnoldi.hpp, the s = 1 recurrence) and keeps
// its Hessenberg matrix unrotated; its eigenvalues (the Ritz values), Leja-ordered, give the Newton shifts of
// every later cycle, whose basis is then built s vectors at a time: s products, one block classical
// Gram-Schmidt pass (two sweeps over V: Q^T W, then W - Q C with its Gram matrix and its loss), a Cholesky QR
// of the block (one sweep over the block), and the Hessenberg columns rebuilt from the change of basis. The
// Givens rotations then run column by column as in the s = 1 solver, so the stopping rule is applied at
// every step: a solve stops at the step whose estimate meets the tolerance, not at its block's end (the
// block's later products were computed and are counted as applies, not as iterations).
// Right Jacobi preconditioning as in gmres.cpp. Basis in the value type only (solve.cpp refuses a
// compressed one). A cycle that used s-step blocks confirms a converged estimate with the restart's true
// residual, as the compressed basis does (gmres.cpp): the rebuilt Hessenberg matrix holds the Arnoldi
// relation to the block's rounding (eps / the sine of its last direction, at most eps^(3/4); gmres_sstep.hpp).
#include "solvers/gmres_sstep.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/debug_log.hpp"
#include "solvers/cpu_vector_ops.hpp"
#include "solvers/gmres_arnoldi.hpp"
#include "solvers/gmres_cycle.hpp"
#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

namespace sstep {

std::vector<std::complex<double>> hessenberg_eigenvalues(const double* h, int k, int ldh) {
  using Complex = std::complex<double>;
  std::vector<Complex> a(static_cast<std::size_t>(k) * k);
  const auto at = [&](int i, int j) -> Complex& { return a[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * k]; };
  for (int j = 0; j < k; ++j)
    for (int i = 0; i <= std::min(j + 1, k - 1); ++i) at(i, j) = h[i + static_cast<std::size_t>(j) * ldh];
  std::vector<Complex> out;
  out.reserve(k);
  const double eps = std::numeric_limits<double>::epsilon();
  int hi = k - 1, since_deflation = 0, total = 0;
  while (hi >= 0) {
    if (hi == 0) {
      out.push_back(at(0, 0));
      break;
    }
    int l = hi;
    for (; l > 0; --l) {  // the active block [l, hi]: no negligible subdiagonal inside it
      const double scale = std::abs(at(l, l)) + std::abs(at(l - 1, l - 1));
      if (std::abs(at(l, l - 1)) <= eps * (scale > 0 ? scale : 1.0)) {
        at(l, l - 1) = 0;
        break;
      }
    }
    if (l == hi) {
      out.push_back(at(hi, hi));
      --hi;
      since_deflation = 0;
      continue;
    }
    if (++total > 60 * k) {  // not converged (not seen on GMRES's Hessenberg matrices): the diagonal as estimates
      for (int i = 0; i <= hi; ++i) out.push_back(at(i, i));
      break;
    }
    // Wilkinson's shift: the eigenvalue of the trailing 2 x 2 nearer its last diagonal entry; an exceptional
    // shift every 10 iterations without a deflation breaks a cycle.
    const Complex a11 = at(hi - 1, hi - 1), a12 = at(hi - 1, hi), a21 = at(hi, hi - 1), a22 = at(hi, hi);
    Complex mu = a22;
    if (++since_deflation % 10 == 0) {
      mu = a22 + std::abs(a21);
    } else {
      const Complex delta = (a11 - a22) * 0.5;
      Complex root = std::sqrt(delta * delta + a12 * a21);
      if (std::abs(delta - root) > std::abs(delta + root)) root = -root;
      if (std::abs(delta + root) > 0) mu = a22 - a12 * a21 / (delta + root);
    }
    // One QR step on the active block: A - mu I = Q R by Givens rotations, then R Q + mu I.
    const int len = hi - l;
    std::vector<Complex> rot_c(len), rot_s(len);
    for (int i = l; i <= hi; ++i) at(i, i) -= mu;
    for (int i = l; i < hi; ++i) {
      const Complex x = at(i, i), y = at(i + 1, i);
      const double r = std::hypot(std::abs(x), std::abs(y));
      const Complex c = r > 0 ? x / r : Complex(1), s = r > 0 ? y / r : Complex(0);
      for (int col = i; col <= hi; ++col) {
        const Complex t1 = at(i, col), t2 = at(i + 1, col);
        at(i, col) = std::conj(c) * t1 + std::conj(s) * t2;
        at(i + 1, col) = -s * t1 + c * t2;
      }
      rot_c[i - l] = c;
      rot_s[i - l] = s;
    }
    for (int i = l; i < hi; ++i) {
      const Complex c = rot_c[i - l], s = rot_s[i - l];
      for (int row = l; row <= std::min(i + 2, hi); ++row) {
        const Complex t1 = at(row, i), t2 = at(row, i + 1);
        at(row, i) = t1 * c + t2 * s;
        at(row, i + 1) = -t1 * std::conj(s) + t2 * std::conj(c);
      }
    }
    for (int i = l; i <= hi; ++i) at(i, i) += mu;
  }
  return out;
}

NewtonShifts leja_newton_shifts(const std::vector<std::complex<double>>& ritz, int s) {
  using Complex = std::complex<double>;
  NewtonShifts shifts;
  shifts.count = std::min(s, kMaxS);
  for (int i = 0; i < kMaxS; ++i) shifts.sigma[i] = 1.0;
  double largest = 0;
  for (const Complex& z : ritz) largest = std::max(largest, std::abs(z));
  // A real matrix's Ritz values are real or conjugate pairs: one candidate per pair (Im > 0).
  struct Candidate {
    Complex z;
    bool pair;
  };
  std::vector<Candidate> candidates;
  const double imaginary_floor = 1e-10 * largest;
  for (const Complex& z : ritz) {
    if (!std::isfinite(z.real()) || !std::isfinite(z.imag())) continue;
    if (std::abs(z.imag()) <= imaginary_floor) candidates.push_back({Complex(z.real(), 0), false});
    else if (z.imag() > 0) candidates.push_back(Candidate{z, true});
  }
  if (candidates.empty()) return shifts;  // alpha = gamma = 0, sigma = 1: the monomial basis
  // Leja order: the largest modulus first, then the maximal product of distances (summed logarithms) to the
  // points taken, a pair's conjugate included.
  std::vector<Candidate> order;
  std::vector<Complex> taken;
  std::vector<bool> used(candidates.size(), false);
  for (std::size_t step = 0; step < candidates.size(); ++step) {
    std::size_t best = candidates.size();
    double best_score = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (used[c]) continue;
      double score = 0;
      if (taken.empty()) score = std::abs(candidates[c].z);
      else
        for (const Complex& t : taken) score += std::log(std::abs(candidates[c].z - t));
      if (best == candidates.size() || score > best_score) best = c, best_score = score;
    }
    used[best] = true;
    order.push_back(candidates[best]);
    taken.push_back(candidates[best].z);
    if (candidates[best].pair) taken.push_back(std::conj(candidates[best].z));
  }
  // The steps, the sequence repeated while fewer than s.
  std::vector<Complex> step_point(shifts.count);
  for (int i = 0; i < shifts.count;) {
    for (const Candidate& c : order) {
      if (i >= shifts.count) break;
      step_point[i] = c.z;
      shifts.alpha[i++] = c.z.real();
      if (c.pair && i < shifts.count) {
        step_point[i] = std::conj(c.z);
        shifts.alpha[i] = c.z.real();
        shifts.gamma[i] = c.z.imag() * c.z.imag();  // times sigma_{i-1} below
        ++i;
      }
    }
  }
  for (int i = 0; i < shifts.count; ++i) {
    double spread = 0;
    for (const Complex& t : taken) spread = std::max(spread, std::abs(t - step_point[i]));
    shifts.sigma[i] = spread > 0 && std::isfinite(spread) ? 1.0 / spread : 1.0;
  }
  for (int i = 1; i < shifts.count; ++i) shifts.gamma[i] *= shifts.sigma[i - 1];
  return shifts;
}

}  // namespace sstep

namespace {

using sstep::kMaxS;

// The block sweeps (gmres_sstep.hpp steps 2, 3 and 5), this process's parts, per row block of
// arnoldi::kRowBlock rows so that a block of V is read from memory once per sweep and its s columns of W
// are reused from cache: plain loops (the CPU path is the reference here; its Arnoldi steps have Highway
// sweeps, gmres_sweeps.hpp). Column c of the basis at v + c * n; W = the sb columns at w (stride n).

// out[c + i * cols] = V_c . W_i.
template <class Value>
void block_dots(const Value* v, std::int64_t n, int cols, const Value* w, int sb, double* out) {
  arnoldi::sum_over_blocks(n, cols * sb, out, [&](std::int64_t i0, std::int64_t i1, double* local) {
    const std::int64_t len = i1 - i0;
    for (int i = 0; i < sb; ++i)
      for (int c = 0; c < cols; ++c) local[c + i * cols] += arnoldi::block_dot(v + c * n + i0, w + i * n + i0, len);
  });
}

// W_i <- W_i - sum_c coef[c + i * cols] V_c (the projection summed in double, rounded once), then from
// the block's values out[c + i * cols] = V_c . W_i (D) and out[cols * sb + a + b * sb] = W_a . W_b, a <= b
// (G's upper triangle).
template <class Value>
void block_update(const Value* v, std::int64_t n, int cols, const double* coef, Value* w, int sb, double* out) {
  arnoldi::sum_over_blocks(n, cols * sb + sb * sb, out, [&](std::int64_t i0, std::int64_t i1, double* local) {
    const std::int64_t len = i1 - i0;
    double projection[arnoldi::kRowBlock];
    for (int i = 0; i < sb; ++i) {
      arnoldi::project_block(v, n, cols, coef + i * cols, i0, len, projection);
      Value* wi = w + i * n + i0;
      for (std::int64_t r = 0; r < len; ++r) wi[r] = static_cast<Value>(static_cast<double>(wi[r]) - projection[r]);
    }
    for (int i = 0; i < sb; ++i) {
      for (int c = 0; c < cols; ++c) local[c + i * cols] += arnoldi::block_dot(v + c * n + i0, w + i * n + i0, len);
      for (int a = 0; a <= i; ++a)
        local[cols * sb + a + i * sb] += arnoldi::block_dot(w + a * n + i0, w + i * n + i0, len);
    }
  });
}

// W <- W X over the first p columns (X upper triangular, ld kMaxS; each row's result summed in double and
// rounded once), and out[a + b * p] = W_a . W_b, a <= b, of the stored result.
template <class Value>
void block_scale(Value* w, std::int64_t n, int p, const double* x, double* out) {
  arnoldi::sum_over_blocks(n, p * p, out, [&](std::int64_t i0, std::int64_t i1, double* local) {
    const std::int64_t len = i1 - i0;
    for (std::int64_t r = i0; r < i1; ++r) {
      double in[kMaxS];
      for (int i = 0; i < p; ++i) in[i] = static_cast<double>(w[i * n + r]);
      for (int q = 0; q < p; ++q) {
        double sum = 0;
        for (int l = 0; l <= q; ++l) sum += x[l + q * kMaxS] * in[l];
        w[q * n + r] = static_cast<Value>(sum);
      }
    }
    for (int b = 0; b < p; ++b)
      for (int a = 0; a <= b; ++a) local[a + b * p] += arnoldi::block_dot(w + a * n + i0, w + b * n + i0, len);
  });
}

// What the blocks of a solve did, for the result's variant and the debug log.
struct BlockCounts {
  int blocks = 0;          // s-step blocks attempted
  int fallbacks = 0;       // blocks that ended their cycle's s-step blocks (refused, or fewer columns accepted)
  int second_passes = 0;   // BCGS2 passes
  int second_cholqr = 0;   // CholQR2 passes
};

}  // namespace

template <class Value>
void gmres_sstep_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                     std::span<const Value> inverse_diagonal, int m, int s, const sstep::NewtonShifts* preset,
                     double pivot_share_override) {
  const auto n = static_cast<std::int64_t>(b.size());
  const bool jacobi = !inverse_diagonal.empty();
  const Value* dinv = inverse_diagonal.data();
  const double tau = orthogonality_tolerance<Value>();
  const double pivot_share = pivot_share_override >= 0 ? pivot_share_override : sstep::kSStepPivotShare * tau;
  std::vector<Value> basis(static_cast<std::size_t>(m + 1) * n), z(jacobi ? n : 0);
  // hess: the unrotated Hessenberg matrix (the change of basis reads its earlier columns; the first cycle's
  // gives the Ritz values); rot: its columns rotated (R of the least-squares problem).
  const std::size_t ldh = static_cast<std::size_t>(m + 1);
  std::vector<double> hess(ldh * m), rot(ldh * m), cs(m), sn(m), g(m + 1), y(m), h(m + 2), sv(m + 2);
  // The block's sums: C (ld cols), the update's D and G, a second pass's, and W^T W after the scaling.
  const std::size_t sums = ldh * kMaxS + kMaxS * kMaxS;
  std::vector<double> cmat(sums), upd(sums), qq(kMaxS * kMaxS);
  double r_factor[kMaxS * kMaxS], r3[kMaxS * kMaxS], x_inv[kMaxS * kMaxS];
  auto column = [&](int c) { return basis.data() + static_cast<std::size_t>(c) * n; };
  auto H = [&](int row, int col) -> double& { return hess[static_cast<std::size_t>(col) * ldh + row]; };
  auto Rt = [&](int row, int col) -> double& { return rot[static_cast<std::size_t>(col) * ldh + row]; };
  const auto global = [&](double* p, int count) { run.global_sum(std::span<double>(p, static_cast<std::size_t>(count))); };

  sstep::NewtonShifts shifts;
  if (preset) shifts = *preset;
  BlockCounts counts;

  // One block from column j0 (orthonormal columns 0..j0), sb steps: the Hessenberg columns accepted (0..sb),
  // written into hess, their vectors into the basis columns j0 + 1 ...
  const auto block = [&](int j0, int sb) -> int {
    const int cols = j0 + 1;
    Value* w = column(j0 + 1);
    ++counts.blocks;
    for (int i = 0; i < sb; ++i) {  // the Newton products
      const Value* wi = column(j0 + i);
      const Value* wprev = i > 0 ? column(j0 + i - 1) : wi;
      Value* out = column(j0 + i + 1);
      const double alpha = shifts.alpha[i], gamma = i > 0 ? shifts.gamma[i] : 0.0, sigma = shifts.sigma[i];
#pragma omp parallel for schedule(static)
      for (std::int64_t r = 0; r < n; ++r) {
        if (jacobi) z[r] = dinv[r] * wi[r];
        out[r] = static_cast<Value>(sigma * (gamma * static_cast<double>(wprev[r]) - alpha * static_cast<double>(wi[r])));
      }
      run.apply(static_cast<Value>(sigma), jacobi ? std::span<const Value>(z) : std::span<const Value>(wi, n), Value(1),
                std::span<Value>(out, n));
    }
    const auto refuse = [&](const char* why) {
      if (detail::debug_log_enabled())
        std::fprintf(stderr, "[spmv] gmres s-step: block at column %d (%d steps) %s; Arnoldi steps for the rest of the cycle\n",
                     j0, sb, why);
      ++counts.fallbacks;
      return 0;
    };
    block_dots(basis.data(), n, cols, w, sb, cmat.data());
    global(cmat.data(), cols * sb);
    block_update(basis.data(), n, cols, cmat.data(), w, sb, upd.data());
    global(upd.data(), cols * sb + sb * sb);
    int p = sstep::cholesky_rank(upd.data() + cols * sb, sb, sb, pivot_share, r_factor);
    sstep::upper_inverse(r_factor, p, x_inv);
    double loss = sstep::projected_loss(upd.data(), cols, x_inv, p);
    if (!(loss <= tau)) {  // BCGS2: W -= Q D, C += D
      ++counts.second_passes;
      for (int e = 0; e < cols * sb; ++e) cmat[e] += upd[e];
      std::vector<double> coef(upd.begin(), upd.begin() + cols * sb);
      block_update(basis.data(), n, cols, coef.data(), w, sb, upd.data());
      global(upd.data(), cols * sb + sb * sb);
      p = std::min(p, sstep::cholesky_rank(upd.data() + cols * sb, sb, sb, pivot_share, r_factor));
      sstep::upper_inverse(r_factor, p, x_inv);
      loss = sstep::projected_loss(upd.data(), cols, x_inv, p);
      if (!(loss <= tau)) return refuse("kept its loss of orthogonality against V above sqrt(eps) after two passes");
    }
    if (p == 0) return refuse("found its first Newton vector dependent on V (Cholesky QR's first pivot)");
    block_scale(w, n, p, x_inv, qq.data());
    global(qq.data(), p * p);
    if (!(sstep::identity_loss(qq.data(), p, p) <= tau)) {  // CholQR2
      ++counts.second_cholqr;
      if (sstep::cholesky_rank(qq.data(), p, p, pivot_share, r3) < p)
        return refuse("failed its second Cholesky QR");
      sstep::upper_inverse(r3, p, x_inv);
      block_scale(w, n, p, x_inv, qq.data());
      global(qq.data(), p * p);
      sstep::compose_upper(r3, p, r_factor);
      if (!(sstep::identity_loss(qq.data(), p, p) <= tau)) return refuse("kept its loss within the block above sqrt(eps)");
    }
    sstep::reconstruct_hessenberg(hess.data(), m, j0, p, cmat.data(), r_factor, shifts);
    if (p < sb) {
      if (detail::debug_log_enabled())
        std::fprintf(stderr, "[spmv] gmres s-step: block at column %d accepted %d of %d steps (Cholesky QR pivot); "
                     "Arnoldi steps for the rest of the cycle\n", j0, p, sb);
      ++counts.fallbacks;
    }
    return p;
  };

  int k = 0;              // iterations (Arnoldi steps) so far
  bool claimed = false;   // the last cycle ended on an estimate that the restart must confirm
  double refused = 0;     // the true residual of the last refused estimate
  // The step of the first refused claim (-1: none): from there on every cycle runs Arnoldi steps. Why: the
  // Hessenberg matrix rebuilt from a block's change of basis holds the Arnoldi relation only to about
  // eps^(3/4) of the value type (6e-6 in float, gmres_sstep.hpp), so near a tolerance below that its Givens
  // estimate undercuts the true residual, and cycle after cycle of blocks would be refused until the
  // stagnation stop. Arnoldi cycles need no confirmation and converge as the s = 1 solver does.
  int arnoldi_from = -1;
  const auto report = [&] {
    if (counts.blocks == 0) return;
    run.append_variant(", " + std::to_string(counts.blocks) + " blocks, " + std::to_string(counts.fallbacks) +
                       " fell back to Arnoldi, " + std::to_string(counts.second_passes) + " second passes, " +
                       std::to_string(counts.second_cholqr) + " second Cholesky QRs");
    if (arnoldi_from >= 0) run.append_variant(", Arnoldi after a refused claim at step " + std::to_string(arnoldi_from));
  };
  for (bool first = true;; first = false) {
    // r = b - A x into V_0, and the restart's decisions.
    std::span<Value> r(column(0), n);
    cpu::copy<Value>(b, r);
    run.apply(Value(-1), x, Value(1), r);
    const double beta = std::sqrt(run.sum(cpu::dot<Value>(r, r)));
    if (gmres_restart_ends(run, beta, first, k, claimed, refused)) return report();
    if (claimed && arnoldi_from < 0) {  // the restart refused the blocks' claimed convergence
      arnoldi_from = k;
      if (detail::debug_log_enabled())
        std::fprintf(stderr, "[spmv] gmres s-step: the restart refused the estimate of a cycle with blocks at step %d "
                     "(true residual %.3e); Arnoldi steps for the rest of the solve\n", k, beta);
    }
    const Value inv_beta = static_cast<Value>(1.0 / beta);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) r[i] *= inv_beta;
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;

    int columns = 0;
    bool stop = false, used_blocks = false, arnoldi_only = shifts.count == 0 || arnoldi_from >= 0, end = false;
    // Rotates Hessenberg column jj into rot and takes the stopping decision: true when the cycle ends.
    const auto close_column = [&](int jj) -> bool {
      for (int i = 0; i <= jj + 1; ++i) Rt(i, jj) = H(i, jj);
      const double h_next = H(jj + 1, jj);
      if (!gmres_rotate_column(run, &Rt(0, jj), jj, h_next, cs.data(), sn.data(), g.data())) return true;
      columns = jj + 1;
      ++k;
      stop = run.step(k, std::abs(g[jj + 1]));
      return stop || h_next == 0;
    };
    for (int j = 0; j < m && !end;) {
      const int sb = std::min({s, m - j, run.options().max_iterations - k});
      if (!arnoldi_only && sb >= 2) {
        const int p = block(j, sb);
        used_blocks = true;
        for (int i = 0; i < p && !end; ++i) end = close_column(j + i);
        if (p < sb) arnoldi_only = true;
        j += p;
        continue;
      }
      std::span<const Value> input(column(j), n);
      if (jacobi) {
        cpu::scale_by<Value>(inverse_diagonal, input, z);
        input = z;
      }
      run.apply(Value(1), input, Value(0), std::span<Value>(column(j + 1), n));
      const ArnoldiStep step = arnoldi_step(basis.data(), n, j, static_cast<const Value*>(column(j + 1)), h.data(),
                                            sv.data(), &H(0, j), [&](std::span<double> part) { run.global_sum(part); });
      H(j + 1, j) = step.beta;
      end = close_column(j);
      ++j;
    }
    // The Newton shifts from the first cycle's Ritz values (its columns: fewer than m when it ended early).
    if (shifts.count == 0 && columns > 0 && !stop && !run.broken())
      shifts = sstep::leja_newton_shifts(sstep::hessenberg_eigenvalues(hess.data(), columns, m + 1), s);
    const bool confirm = used_blocks && stop && run.converged();
    claimed = confirm;
    gmres_update_x(rot.data(), m + 1, g.data(), y.data(), columns, basis.data(), n, jacobi ? dinv : nullptr, x);
    if ((stop && !confirm) || run.broken()) return report();
  }
}

template void gmres_sstep_cpu(CpuRun<float>&, std::span<const float>, std::span<float>, std::span<const float>, int,
                              int, const sstep::NewtonShifts*, double);
template void gmres_sstep_cpu(CpuRun<double>&, std::span<const double>, std::span<double>, std::span<const double>,
                              int, int, const sstep::NewtonShifts*, double);

}  // namespace spmv::solvers
