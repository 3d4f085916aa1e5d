#pragma once
// Private: what every solver shares on both backends: option and shape checks, the stopping rule, the
// breakdown wording and the bookkeeping of one CPU solve (timing of applies, history, progress).
// Never includes CUDA headers (the CUDA solvers include it too; scaled_half.hpp takes cuda_fp16.h only
// under nvcc).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "solvers/scaled_half.hpp"
#include "spmv/error.hpp"
#include "spmv/solvers.hpp"

namespace spmv::solvers {

// Throws InvalidArgument for a non-square operator, vectors of the wrong length or bad options, among
// them a GMRES basis the value type (`value_size` bytes) has no compressed form for: Float16 in a double
// solve (its Float32 halves the bytes, and fp16 would cost a double solve all but 11 of its bits).
void check_problem(std::int64_t rows, std::int64_t cols, std::size_t b_size, std::size_t x_size,
                   const SolverOptions& options, std::size_t value_size);

// The row named in an error: "row 17 (0-based)".
std::string row_name(std::int64_t row);

// Breakdown texts, one wording for both backends (tests compare them).
inline constexpr const char* kBreakdownNonFinite =
    "the residual became NaN or Inf (the operator produced a non-finite value, or the iteration overflowed)";
inline constexpr const char* kBreakdownCgCurvature =
    "p.Ap <= 0: the operator is not symmetric positive definite (CG needs SPD)";
inline constexpr const char* kBreakdownRho = "rho = 0: the residual became orthogonal to the shadow residual";
inline constexpr const char* kBreakdownCgRho =
    "rho = r.z = 0 with r != 0: the preconditioner is not positive definite";
inline constexpr const char* kBreakdownBicgAlpha = "r0.v = 0: BiCGStab cannot take its alpha step";
inline constexpr const char* kBreakdownOmega = "omega = 0: the stabilising step stalled (t.s = 0 or t = 0)";
inline constexpr const char* kBreakdownGmresSingular =
    "the Hessenberg matrix is singular: the operator maps a Krylov vector to 0 (singular operator)";
inline constexpr const char* kBreakdownGmresStagnated =
    "the true residual stagnated above the tolerance: two restarts in a row refused the compressed basis's "
    "estimate and the second found no smaller residual (the working precision's attainable accuracy; "
    "docs/SOLVERS.md)";
inline constexpr const char* kBreakdownCgStagnated =
    "the true residual stagnated above the tolerance: pipelined CG's recurrence residual met it twice, and the "
    "second time the true residual was no smaller than the first (the working precision's attainable accuracy; "
    "docs/SOLVERS.md)";

// The floor's vector term (docs/SOLVERS.md, "The floor"): value-sized words per row that one iteration's vector kernels
// read and write, counted from the CUDA kernels (the CPU sweeps make the same passes). A dot of a vector with itself
// reads it once. CG unfused (issue 9): dot p.q 2, update x,r rw + p,q (+ dinv, z written) 6 (8), direction p rw + z 3 =
// 11 (13 with Jacobi); fused: dot p.q 2, residual r rw + q (+ dinv) 3 (4), direction x,p rw + r (+ dinv) 5 (6) = 10
// (12); pipelined: one sweep, 13 (20; cg.cpp says which). BiCGStab: direction 5 (6), dot 2, s-step 4 (5), t.s/t.t 2,
// update 8 = 21 (23). GMRES(m), per Arnoldi step j (src/solvers/gmres_arnoldi.hpp): the multi-dot V_j^T w and w.w j+2,
// the fused update v_{j+1} = (w - V_j h) / beta with V_j^T v_{j+1} and v.v j+3 (+3 for M^-1 v_j) = 2j+5, averaged over
// a cycle (m+4) plus the cycle's update (m+2 per cycle, about 1 per step) = m+5 (+3 with Jacobi) for m <= 30. Beyond,
// the CUDA multi-dot re-reads w once per further kGmresDotColumns columns, and a step with more than kGmresDotColumns
// columns in V_j measures V_j^T v_{j+1} in a multi-dot of its own (j+2 more; both counted). A corrected step (its
// measured loss above sqrt(eps), rare) adds j+5; not counted: the floor is the common step's. `basis_word`: the size of
// a basis entry in words of the value type (0.5 for GmresBasis::Float32 in a double solve): the sweeps' reads and
// writes of V count that much, w's a word; the SpMV then reads a widened copy of v_j (read v, write z: b + 1, or b + 2
// with Jacobi's dinv).
// s-step GMRES (gmres_s_step = s > 1, gmres_sstep.hpp), per block from column j0 of sb >= 2 steps (cols = j0 + 1
// columns in V): sweep 1 (Q^T W) reads cols + sb, sweep 2 (W - Q C with its Gram matrix and Q^T W) reads
// cols + sb and writes sb, sweep 3 (W R^-1 with its Gram matrix) reads and writes sb: 2 cols + 5 sb; each
// product's Newton term (y = sigma (gamma w_{i-1} - alpha w_i), then y += sigma A M^-1 w_i) reads w_i and writes
// y, the SpMV reads y back: 3 (5 with Jacobi: dinv read, z written). A block of one step is an Arnoldi step.
// Summed over a cycle, / m, plus the cycle's update (1): m = 30, s = 5: 14.4 words a step (16.4 with Jacobi)
// against 35 (38). The first cycle (Arnoldi steps) and a block's second pass or second Cholesky QR (rare)
// are not counted.
double vector_words_per_iteration(const SolverOptions& options, double basis_word = 1.0);

// The bytes of one GMRES basis entry: float for GmresBasis::Float32, 2 for Float16, else the value type's.
inline std::size_t gmres_basis_size(const SolverOptions& options, std::size_t value_size) {
  switch (options.gmres_basis) {
    case GmresBasis::Float32: return sizeof(float);
    case GmresBasis::Float16: return sizeof(ScaledHalf);
    case GmresBasis::Working: break;
  }
  return value_size;
}

// The loss of orthogonality a new GMRES basis vector may carry before the second Gram-Schmidt pass
// corrects it: sqrt(eps) of the type the basis is stored in, semi-orthogonality (src/solvers/
// gmres_arnoldi.hpp says why; a float basis cannot be orthogonal beyond float's rounding). Both
// backends read it.
template <class Basis>
double orthogonality_tolerance() {
  if constexpr (std::is_same_v<Basis, ScaledHalf>) return std::sqrt(ScaledHalf::kEpsilon);
  else return std::sqrt(static_cast<double>(std::numeric_limits<Basis>::epsilon()));
}

// Arnoldi trusts Pythagoras, ||w - V_j h||^2 = w.w - h.h, only while w.w - h.h is above this share of
// w.w; at or below it, beta1 = ||w|| and the second pass runs. Any positive difference will do for a
// float or double basis (the loss test catches an inaccurate beta1, and the second pass repairs it); an
// fp16 one needs at most 12 bits cancelled, which keeps 1 / beta1 <= 2^6 / ||w|| and the stored entries
// in range (scaled_half.hpp). 2^-12 for every type would send steps that cancel all but 1e-6 of w.w
// through the second pass at every step instead of half of them (gmres_arnoldi_test's clustered spectrum).
template <class Basis>
constexpr double pythagoras_min_share() {
  return std::is_same_v<Basis, ScaledHalf> ? 0x1p-12 : 0.0;
}

// Columns of the basis one CUDA GMRES multi-dot block accumulates in registers (per-thread double sums):
// V_j^T w and w.w take one sweep while j + 2 <= 32, i.e. for GMRES(m) with m <= 30 (the default), and
// one more read of w per further 32 columns; the fused update measures V_j^T v_{j+1} in its own sweep
// while j + 1 <= 32. 32 doubles = 64 registers per thread, which keeps two
// 256-thread blocks per SM, with up to 33 independent loads in flight per thread. Here, not in the CUDA
// file, because vector_words_per_iteration counts the extra reads.
inline constexpr int kGmresDotColumns = 32;

// The largest s-step block (SolverOptions::gmres_s_step): the block's Gram matrix and change-of-basis work are
// s x s and (m + 1) x s arrays sized by it on both backends, and beyond 8 Newton steps the block's vectors
// are too close to dependent for a Cholesky QR in double (docs/SOLVERS.md, "s-step GMRES").
inline constexpr int kGmresMaxSStep = 8;

// Fills the options-dependent floor fields of `result` (variant, applies_per_iteration, vector_bytes)
// for a solve of n unknowns in a value type of `value_size` bytes.
void describe_iteration(const SolverOptions& options, std::int64_t n, std::size_t value_size, SolverResult& result);

// Reductions of a distributed solve: this process's partial sums become the global ones in place
// (SolverOptions::global_sum; nothing to do for one process).
inline void global_sum(const SolverOptions& options, std::span<double> partial) {
  if (options.global_sum) options.global_sum(partial);
}

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One CPU solve's bookkeeping: applies the operator (timed), records residuals, decides whether to
// stop. The methods (cg.cpp, bicgstab.cpp, gmres.cpp) hold the algorithms and call these.
template <class Value>
class CpuRun {
 public:
  CpuRun(LinearOperator<Value>& op, const SolverOptions& options, double b_norm, SolverResult& result)
      : op_(op), options_(options), b_norm_(b_norm), result_(result) {}

  // Before each product the operator may change how it applies A given the products made so far
  // (LinearOperator::reconsider: ConvertingOperator); every apply runs outside the methods' parallel regions.
  void apply(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y) {
    op_.reconsider(result_.applies);
    const auto t0 = Clock::now();
    op_.apply(alpha, x, beta, y);
    apply_ms_ += ms_since(t0);
    ++result_.applies;
  }

  // The residual of x0 (iteration 0). True when there is nothing more to do.
  bool start(double residual_norm) {
    loop_start_ = Clock::now();
    apply_ms_ = 0;  // the share is of the loop's time; the initial residual is setup
    return record(0, residual_norm);
  }

  // Iteration `k` ended with recurrence residual norm `residual_norm`. True when the solve stops:
  // converged, max_iterations reached, or a non-finite residual (breakdown).
  bool step(int k, double residual_norm) {
    result_.iterations = k;
    return record(k, residual_norm);
  }

  // GMRES at a restart: the true residual norm replaces the last iteration's Givens estimate (the
  // iteration count is unchanged). True when it meets the tolerance.
  bool replace_last_residual(double residual_norm) {
    const double relative = residual_norm / b_norm_;
    result_.recurrence_residual = relative;
    if (options_.record_history && !result_.history.empty()) result_.history.back() = relative;
    result_.converged = residual_norm <= stop_norm();
    return result_.converged;
  }

  bool stopped_on_breakdown(const char* reason) {
    result_.breakdown = reason;
    return true;
  }

  bool broken() const { return !result_.breakdown.empty(); }
  // Appends to SolverResult::variant what the method did beyond its options (the s-step GMRES's blocks).
  void append_variant(const std::string& text) { result_.variant += text; }
  bool converged() const { return result_.converged; }

  double stop_norm() const { return options_.tolerance * b_norm_; }

  // Reductions of a distributed solve (solvers::global_sum): one partial sum, or two in one message.
  bool distributed() const { return static_cast<bool>(options_.global_sum); }
  double sum(double partial) const {
    solvers::global_sum(options_, {&partial, 1});
    return partial;
  }
  std::pair<double, double> sum(double a, double b) const {
    double partial[2] = {a, b};
    solvers::global_sum(options_, partial);
    return {partial[0], partial[1]};
  }
  void global_sum(std::span<double> partial) const { solvers::global_sum(options_, partial); }
  const SolverOptions& options() const { return options_; }

  // Loop timing into the result.
  void finish() {
    const double loop_ms = ms_since(loop_start_);
    result_.ms_per_iteration = result_.iterations > 0 ? loop_ms / result_.iterations : 0;
    result_.apply_share = loop_ms > 0 ? std::min(1.0, apply_ms_ / loop_ms) : 0;
  }

 private:
  bool record(int k, double residual_norm) {
    const double relative = residual_norm / b_norm_;
    result_.recurrence_residual = relative;
    if (options_.record_history) result_.history.push_back(relative);
    if (!std::isfinite(residual_norm)) return stopped_on_breakdown(kBreakdownNonFinite);
    if (options_.progress && options_.progress_every > 0 && k > 0 && k % options_.progress_every == 0)
      options_.progress({k, relative});
    if (residual_norm <= stop_norm()) {
      result_.converged = true;
      return true;
    }
    return k >= options_.max_iterations;
  }

  LinearOperator<Value>& op_;
  const SolverOptions& options_;
  double b_norm_;
  SolverResult& result_;
  Clock::time_point loop_start_ = Clock::now();
  double apply_ms_ = 0;
};

// The three methods on the CPU. On entry x is x0 (finite), b is finite with ||b|| = b_norm > 0, and
// inverse_diagonal is empty (no preconditioner) or holds 1/diag(A).
template <class Value>
void cg_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
            std::span<const Value> inverse_diagonal);
template <class Value>
void bicgstab_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
                  std::span<const Value> inverse_diagonal);
template <class Value>
void gmres_cpu(CpuRun<Value>& run, std::span<const Value> b, std::span<Value> x,
               std::span<const Value> inverse_diagonal, int restart);

}  // namespace spmv::solvers
