#pragma once
// Private: the small-matrix work of s-step GMRES (SolverOptions::gmres_s_step > 1; docs/SOLVERS.md,
// "s-step GMRES"), shared by the CPU solver (src/solvers/gmres_sstep.cpp) and the CUDA one
// (src/cuda/solvers/gmres_sstep.cu, which runs these functions in a one-thread kernel), so that both
// backends take the same decisions from the same sums. The vector sweeps live with each backend.
//
// A block (Hoemmen, "Communication-avoiding Krylov subspace methods", PhD thesis, UC Berkeley 2010, ch. 3,
// CA-GMRES; the Newton basis of Bai, Hu & Reichel, IMA J. Numer. Anal. 14, 1994) starts from the cycle's
// orthonormal Q = [q_0 .. q_j0] (the basis columns 0..j0) and takes sb <= s steps:
//
//   1. sb products: w_0 = q_j0, w_{i+1} = sigma_i (A M^-1 w_i - alpha_i w_i + gamma_i w_{i-1}) into the basis
//      columns j0 + 1 .. j0 + sb (NewtonShifts; gamma_i != 0 only for the second step of a complex pair,
//      the real form (A - alpha)^2 + beta^2 of Bai, Hu & Reichel §3). So A M^-1 [w_0 .. w_{sb-1}] =
//      [w_0 .. w_sb] B with B (sb + 1) x sb: B(i+1, i) = 1 / sigma_i, B(i, i) = alpha_i, B(i-1, i) = -gamma_i.
//   2. sweep 1 (reads Q and W): C = Q^T W, (j0 + 1) x sb.
//   3. sweep 2 (reads Q, updates W): W <- W - Q C, and from the same loads the Gram matrix G = W^T W of
//      the result and D = Q^T W, the pass's measured loss against Q.
//   4. here: R = chol(G) (CholQR), its rank p (a pivot below kSStepPivotShare of its column's squared norm
//      ends the accepted columns); the loss of Q_new = W R^-1 against Q is D R^-1 (no read needed). Above
//      tau = sqrt(eps) of the value type (the Arnoldi step's criterion, gmres_arnoldi.hpp), a second block
//      pass (BCGS2: W <- W - Q D with C += D, sweep 2 again) runs; still above it, the block is refused.
//   5. sweep 3 (updates W): W <- W R^-1 for the p accepted columns, measuring Q_new^T Q_new from the stored
//      values; its loss above tau runs CholQR a second time (R3 = chol(Q_new^T Q_new), Q_new <- Q_new R3^-1,
//      R <- R3 R; CholQR2, Yamazaki et al., SIAM PP 2020); still above it, the block is refused.
//   6. here: the Hessenberg columns j0 .. j0 + p - 1 from W = Q C + Q_new R and B (reconstruct_hessenberg).
//
// A refused block, or p < sb, ends the cycle's s-step blocks: its remaining columns are built by ordinary
// Arnoldi steps from the last accepted column (the s = 1 recurrence), and the solve's result counts it.
#include <cstdint>

#include "solvers/solver_setup.hpp"

#if defined(__CUDACC__)
#define SPMV_SSTEP_HD __host__ __device__
#else
#define SPMV_SSTEP_HD
#endif

#include <math.h>

#include <complex>
#include <vector>

namespace spmv::solvers::sstep {

inline constexpr int kMaxS = kGmresMaxSStep;

// A pivot d_p of the block's Cholesky factorisation, the squared norm of w_p's part orthogonal to
// w_0 .. w_{p-1}, is accepted while d_p > tau G(p, p) (tau = sqrt(eps) of the value type): the new
// direction is then at least eps^(1/4) of the vector, so the working precision's rounding of the Newton
// vector (eps relative) reaches it as at most eps^(3/4), and CholQR's loss of orthogonality, about
// eps_double kappa^2 with kappa <= eps^(-1/4) per column, stays near tau. Below it the block's Krylov
// vectors are numerically dependent: the columns before p are kept, Arnoldi builds the rest (it finds an
// exact invariant subspace, h_{j+1,j} = 0, as the s = 1 solver does).
inline constexpr double kSStepPivotShare = 1.0;  // times tau

// The Newton steps of every block of a cycle: step i uses alpha[i], gamma[i], sigma[i].
struct NewtonShifts {
  int count = 0;  // shifts known (0: none yet, the first cycle)
  double alpha[kMaxS] = {};
  double gamma[kMaxS] = {};
  double sigma[kMaxS] = {};
};

// R = chol(G) for the leading columns of the symmetric count x count G (column-major, ld `ld`; its upper
// triangle is read): R upper triangular, column-major ld kMaxS, G = R^T R over the accepted columns.
// Returns p, the columns accepted: column c is accepted while every column before it was and its pivot
// exceeds pivot_share * G(c, c) (and is finite). Entries of R in columns >= p are 0.
SPMV_SSTEP_HD inline int cholesky_rank(const double* g, int count, int ld, double pivot_share, double* r) {
  for (int i = 0; i < kMaxS * kMaxS; ++i) r[i] = 0;
  for (int c = 0; c < count; ++c) {
    for (int i = 0; i < c; ++i) {
      double t = g[i + c * ld];
      for (int k = 0; k < i; ++k) t -= r[k + i * kMaxS] * r[k + c * kMaxS];
      r[i + c * kMaxS] = t / r[i + i * kMaxS];
    }
    double d = g[c + c * ld];
    for (int k = 0; k < c; ++k) d -= r[k + c * kMaxS] * r[k + c * kMaxS];
    if (!(d > pivot_share * g[c + c * ld]) || !isfinite(d) || !(g[c + c * ld] > 0)) {
      for (int i = 0; i < c; ++i) r[i + c * kMaxS] = 0;
      return c;
    }
    r[c + c * kMaxS] = sqrt(d);
  }
  return count;
}

// X = R^-1 for the leading p x p of the upper triangular R (both ld kMaxS; X upper, the rest 0).
SPMV_SSTEP_HD inline void upper_inverse(const double* r, int p, double* x) {
  for (int i = 0; i < kMaxS * kMaxS; ++i) x[i] = 0;
  for (int c = 0; c < p; ++c) {
    x[c + c * kMaxS] = 1.0 / r[c + c * kMaxS];
    for (int i = c - 1; i >= 0; --i) {
      double t = 0;
      for (int k = i + 1; k <= c; ++k) t += r[i + k * kMaxS] * x[k + c * kMaxS];
      x[i + c * kMaxS] = -t / r[i + i * kMaxS];
    }
  }
}

// max |(D X)_{c,i}| over rows c < rows and columns i < p: the loss of W X against Q when D = Q^T W
// (column-major, ld rows) and X = R^-1.
SPMV_SSTEP_HD inline double projected_loss(const double* d, int rows, const double* x, int p) {
  double worst = 0;
  for (int i = 0; i < p; ++i)
    for (int c = 0; c < rows; ++c) {
      double t = 0;
      for (int k = 0; k <= i; ++k) t += d[c + k * rows] * x[k + i * kMaxS];
      worst = fmax(worst, fabs(t));
      if (!isfinite(t)) return t;
    }
  return worst;
}

// max |M - I| over the p x p symmetric M (column-major, ld `ld`; the upper triangle is read).
SPMV_SSTEP_HD inline double identity_loss(const double* m, int p, int ld) {
  double worst = 0;
  for (int i = 0; i < p; ++i)
    for (int c = 0; c <= i; ++c) {
      const double e = fabs(m[c + i * ld] - (c == i ? 1.0 : 0.0));
      if (!isfinite(e)) return e;
      worst = fmax(worst, e);
    }
  return worst;
}

// R <- R3 R for upper triangular p x p factors (ld kMaxS): the second CholQR's factor composed with the
// first (W = Q_1 R, Q_1 = Q R3).
SPMV_SSTEP_HD inline void compose_upper(const double* r3, int p, double* r) {
  double t[kMaxS * kMaxS];
  for (int i = 0; i < kMaxS * kMaxS; ++i) t[i] = 0;
  for (int c = 0; c < p; ++c)
    for (int i = 0; i <= c; ++i) {
      double sum = 0;
      for (int k = i; k <= c; ++k) sum += r3[i + k * kMaxS] * r[k + c * kMaxS];
      t[i + c * kMaxS] = sum;
    }
  for (int i = 0; i < kMaxS * kMaxS; ++i) r[i] = t[i];
}

// The Hessenberg columns j0 .. j0 + p - 1 of the cycle (h: column-major, ld m + 1, the unrotated H with
// A M^-1 Q_k = Q_{k+1} H_k; columns < j0 known) from the block's W = [w_1 .. w_p] = Q C + Q_new R
// (c: column-major, ld j0 + 1, the sum of the passes' coefficients; r upper, ld kMaxS) and its Newton
// steps. With Z = [q_j0, w_1 .. w_p] = Q_{j0+p} T (T's column 0 is e_j0, column t >= 1 is [C; R] of w_t):
// A M^-1 Z_{0..p-1} = Z B and A M^-1 Q_{j0+p-1} = Q_{j0+p} H give H T_s = T B on the block's columns, so
// H_new U = T B - H_old T_old, with U the rows j0 .. j0+p-1 of T's first p columns (upper triangular,
// diagonal 1, R(0,0) .. R(p-2,p-2)) and T_old its rows 0 .. j0-1 (Hoemmen, thesis §3.2.2, written for a
// general B). Solved column by column; a row of the result depends only on the same row of H, so the rows
// are independent (reconstruct_hessenberg_row: the CUDA kernel gives each row a thread). Entries below
// each column's subdiagonal are structurally zero (T B and H_old T_old reach row j0 + i + 1 in column i,
// U^-1 is upper triangular) and are written as 0.
SPMV_SSTEP_HD inline void reconstruct_hessenberg_row(double* h, int m, int j0, int p, const double* c, const double* r,
                                                     const NewtonShifts& shifts, int row) {
  const int ldh = m + 1, ldc = j0 + 1;
  // T(row, t) for t in 0..p.
  const auto t_entry = [&](int rw, int t) -> double {
    if (t == 0) return rw == j0 ? 1.0 : 0.0;
    if (rw <= j0) return c[rw + (t - 1) * ldc];
    const int k = rw - j0 - 1;  // row of R
    return k <= t - 1 ? r[k + (t - 1) * kMaxS] : 0.0;
  };
  for (int i = 0; i < p; ++i) {
    double* out = h + static_cast<std::int64_t>(j0 + i) * ldh + row;
    if (row > j0 + i + 1) {
      *out = 0;
      continue;
    }
    // (T B)(row, i) - (H_old T_old)(row, i)
    double v = t_entry(row, i + 1) / shifts.sigma[i] + shifts.alpha[i] * t_entry(row, i);
    if (i > 0) {
      v -= shifts.gamma[i] * t_entry(row, i - 1);
      for (int k = (row > 0 ? row - 1 : 0); k < j0; ++k)  // H_old(row, k) = 0 for row > k + 1
        v -= h[row + static_cast<std::int64_t>(k) * ldh] * c[k + (i - 1) * ldc];
    }
    // minus sum_{k < i} H_new(row, k) U(k, i), divided by U(i, i)
    for (int k = 0; k < i; ++k) v -= h[row + static_cast<std::int64_t>(j0 + k) * ldh] * t_entry(j0 + k, i);
    *out = v / t_entry(j0 + i, i);
  }
}

SPMV_SSTEP_HD inline void reconstruct_hessenberg(double* h, int m, int j0, int p, const double* c, const double* r,
                                                 const NewtonShifts& shifts) {
  for (int row = 0; row <= j0 + p; ++row) reconstruct_hessenberg_row(h, m, j0, p, c, r, shifts, row);
}

// ----- Host only: the shifts from the first cycle's Hessenberg matrix (gmres_sstep.cpp). -----

// The eigenvalues of the k x k upper Hessenberg matrix h (column-major, ld ldh): the Ritz values of the
// cycle. Complex single-shift QR with Wilkinson shifts and deflation (Golub & Van Loan, 4th ed., §7.5);
// O(k^3) once per solve.
std::vector<std::complex<double>> hessenberg_eigenvalues(const double* h, int k, int ldh);

// s Newton steps from Ritz values: Leja-ordered (each next point maximises the product of its distances
// to the points before, the first has the largest modulus: Reichel, BIT 30, 1990), a complex pair taken
// as two consecutive steps in the real form (alpha = Re, then gamma = sigma_prev * Im^2), a pair that
// the s-th step would split entering as its real part alone (the first step of the form). Fewer Ritz
// values than s repeat the sequence. sigma_i = 1 / max_k |theta_k - theta_i| (the spread of the Ritz
// values seen from the shift) keeps the Newton vectors near unit norm; 1 when that is 0 or not finite.
NewtonShifts leja_newton_shifts(const std::vector<std::complex<double>>& ritz, int s);

}  // namespace spmv::solvers::sstep

namespace spmv::solvers {

// The CPU s-step GMRES(m) (gmres_sstep.cpp), s in [2, kGmresMaxSStep]; gmres_cpu calls it for
// gmres_s_step > 1. Test hooks, left at their defaults in solves: `preset`, Newton shifts to use from the
// first cycle on instead of its Arnoldi steps (a block that meets an invariant subspace, which a first
// Arnoldi cycle would have solved); `pivot_share` >= 0 replaces kSStepPivotShare * tau (0: every positive
// pivot accepted, so that a block reaches the second Cholesky QR, which the default share keeps rare).
template <class Value>
void gmres_sstep_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                     std::span<const Value> inverse_diagonal, int restart, int s,
                     const sstep::NewtonShifts* preset = nullptr, double pivot_share = -1);

}  // namespace spmv::solvers
