#pragma once
// Private: the orthogonalisation of one Arnoldi step of the CPU GMRES (src/solvers/gmres.cpp), in a
// header so that tests can check the basis it builds (tests/cpu/gmres_arnoldi_test.cpp). The CUDA GMRES
// (src/cuda/solvers/gmres.cu) runs the same recurrence with the decision taken on the device:
//
//   1. one sweep over the rows: h = V_j^T w and w.w together (a multi-dot over the j + 2 columns
//      v_0 .. v_j, w of the basis array; w is column j + 1);
//   2. Pythagoras: ||w - V_j h||^2 = w.w - h.h (V_j orthonormal);
//   3. accepted when w.w - h.h > eta^2 w.w with eta = 1/sqrt(2) (kReorthogonaliseBelow in
//      solver_setup.hpp), and then v_{j+1} = (w - V_j h) / beta in one fused sweep (arnoldi_normalise);
//   4. otherwise a second classical Gram-Schmidt pass (Daniel, Gragg, Kaufman & Stewart 1976; Kahan's
//      "twice is enough", Parlett, The Symmetric Eigenvalue Problem, §6-9): w -= V_j h, h2 = V_j^T w,
//      w -= V_j h2 with ||w|| computed explicitly in that sweep, the Hessenberg column h + h2; the
//      fused sweep then only scales.
//
// Why eta = 1/sqrt(2), the classical DGKS choice (Daniel, Gragg, Kaufman & Stewart 1976): subtracting
// V_j h from w loses about log2(||w|| / ||w - V_j h||) bits of orthogonality, and a vector built by one
// pass also inherits the basis's own loss amplified by ||w|| / ||w - V_j h||, so the loss compounds from
// step to step. Above eta less than half of w's energy cancels; below it a second pass restores
// orthogonality to working precision unless w is numerically in span(V_j) (then ||w|| is at rounding
// level and the Givens rotation reports the invariant subspace or the breakdown, as with CGS2).
// Laxer thresholds were measured and dropped (2026-11-23): on a symmetric operator ||w - V h|| / ||w||
// is 0.32-0.45, so eta = 1/sqrt(2) takes the second pass at ~97% of Poisson's steps (GMRES then costs
// about CGS2); eta = 1/4 or 1/32 skip it there, but as the Krylov space nears exhaustion the compounded
// loss changed GMRES(40) on a 729-unknown Poisson from the MGS reference's 43 iterations to 47-51,
// depending on the thread count (tests/cpu/gmres_arnoldi_test.cpp). Skipping the second pass safely
// needs an estimate of the accumulated loss, not a per-step threshold.
//
// Vector sweeps per step (solver_setup.hpp's vector_words_per_iteration counts them): the multi-dot
// reads V_j and w (j + 2), the fused update reads V_j and w and writes v_{j+1} (j + 3). A
// re-orthogonalised step adds 2j + 7: two subtractions (j + 3 each) and a multi-dot (j + 2), while the
// fused sweep shrinks to a scaling (2 instead of j + 3).
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "solvers/solver_setup.hpp"

namespace spmv::solvers {

// What one Arnoldi orthogonalisation decided: h_{j+1,j} and which columns the fused sweep subtracts.
struct ArnoldiStep {
  double beta = 0;               // ||w - V_j H(:, j)||: h_{j+1,j}
  int subtract_columns = 0;      // j + 1 after one pass; 0 after two (w is orthogonalised in place)
  bool reorthogonalised = false;
};

// The decision of step 3/4 from w.w and h.h (the same test on the device, gmres.cu's finish kernel):
// true when the single pass is accepted. A non-finite w.w is accepted too, so that the non-finite beta
// reaches the Givens rotation, which reports it (a second pass could not repair it).
inline bool single_pass_accepted(double ww, double hh) {
  return !std::isfinite(ww) || ww - hh > kReorthogonaliseBelow * ww;
}

namespace arnoldi {

// h[c] = V_c . w for the first `columns` columns of V (column c at V + c*n), in one sweep over the rows.
template <class Value>
void multi_dot(const Value* v, std::int64_t n, int columns, const Value* w, double* h) {
  for (int c = 0; c < columns; ++c) h[c] = 0;
#pragma omp parallel
  {
    std::vector<double> local(columns, 0.0);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      for (int c = 0; c < columns; ++c) local[c] += static_cast<double>(v[c * n + i]) * w[i];
#pragma omp critical
    for (int c = 0; c < columns; ++c) h[c] += local[c];
  }
}

// w = (w - V h) * scale over the first `columns` columns; returns this process's part of ||w||^2 after
// the update (callers that do not need it ignore it).
template <class Value>
double subtract_and_scale(const Value* v, std::int64_t n, int columns, const double* h, Value scale, Value* w) {
  double norm2 = 0;
#pragma omp parallel for schedule(static) reduction(+ : norm2)
  for (std::int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int c = 0; c < columns; ++c) sum += h[c] * v[c * n + i];
    const Value updated = (w[i] - static_cast<Value>(sum)) * scale;
    w[i] = updated;
    norm2 += static_cast<double>(updated) * updated;
  }
  return norm2;
}

}  // namespace arnoldi

// Orthogonalises w = column j + 1 of `basis` (n rows per column) against columns 0..j: fills
// hess_column[0..j] and returns beta and the fused sweep's columns; h and h2 are scratch of j + 2
// entries (h keeps the coefficients arnoldi_normalise subtracts). `global_sum(span)` sums partial
// reductions across processes in place (a no-op for one process): one call per step, three when
// re-orthogonalised, so every process takes the same branch.
template <class Value, class GlobalSum>
ArnoldiStep arnoldi_orthogonalise(Value* basis, std::int64_t n, int j, double* h, double* h2, double* hess_column,
                                  GlobalSum&& global_sum) {
  Value* w = basis + static_cast<std::size_t>(j + 1) * n;
  arnoldi::multi_dot(basis, n, j + 2, w, h);  // h[j + 1] = w.w
  global_sum(std::span<double>(h, j + 2));
  double hh = 0;
  for (int c = 0; c <= j; ++c) hh += h[c] * h[c];
  const double ww = h[j + 1];
  ArnoldiStep step;
  if (single_pass_accepted(ww, hh)) {
    for (int c = 0; c <= j; ++c) hess_column[c] = h[c];
    step.beta = std::sqrt(ww - hh);
    step.subtract_columns = j + 1;
    return step;
  }
  arnoldi::subtract_and_scale(basis, n, j + 1, h, Value(1), w);
  arnoldi::multi_dot(basis, n, j + 1, w, h2);
  global_sum(std::span<double>(h2, j + 1));
  double norm2 = arnoldi::subtract_and_scale(basis, n, j + 1, h2, Value(1), w);
  global_sum(std::span<double>(&norm2, 1));
  for (int c = 0; c <= j; ++c) hess_column[c] = h[c] + h2[c];
  step.beta = std::sqrt(norm2);
  step.reorthogonalised = true;
  return step;
}

// v_{j+1} = (w - V_j h) / beta in one sweep (step.subtract_columns of h; 0: a plain scaling).
template <class Value>
void arnoldi_normalise(Value* basis, std::int64_t n, int j, const double* h, const ArnoldiStep& step) {
  arnoldi::subtract_and_scale(basis, n, step.subtract_columns, h, static_cast<Value>(1.0 / step.beta),
                              basis + static_cast<std::size_t>(j + 1) * n);
}

}  // namespace spmv::solvers
