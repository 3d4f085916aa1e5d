// DIA on the CPU, parallel and vectorised (y = alpha*A*x + beta*y; Aᵀ keeps the sequential loop of
// format_kernels.cpp). Issue 17: the sequential DIA loop took 5.5 ms on poisson2d f32 where MKL takes
// 0.8 ms. A diagonal is a contiguous stream of values against a contiguous, shifted piece of x, so a
// DIA product needs no index and no gather: per vector of rows one load of values, one unaligned load
// of x and one fused multiply-add, and it reads value bytes only (4 per entry in f32 against CSR's 8).
//
// Rows are cut into blocks of kBlockRows (sums in L1); threads take contiguous ranges of blocks (OpenMP
// static schedule). A block is swept in segments on which the set of diagonals holding a stored slot is
// constant, each segment summing its active diagonals in registers, kGroupDiagonals at a time (one
// store per row and group, not one per diagonal: an earlier version that added diagonal by diagonal
// into the L1 block ran at 0.88x MKL on poisson2d f32, one thread; this one at 1.23x). Padding slots
// (outside [0, cols) or holding no entry) are skipped rather than multiplied, so 0 * Inf never enters
// a sum and the result is that of the CSR kernels for any x. The runs (maximal ranges of consecutive
// stored slots of one diagonal) are found once when the kernel is built. Each row sums its diagonals
// in offset order, as the sequential loop does, so the result does not depend on the thread count.
// Where the runs are short (a 3D stencil's ±1 diagonals break at every grid line: stencil27 n=60 has
// runs of 91 rows on average), the segments cut every block into short sweeps; then, when x holds no
// Inf or NaN (checked per product, one read of x), the sweep takes each diagonal's whole in-range
// span as one run and multiplies the padding, whose value is 0: 0 * finite adds +0 or -0 to a sum
// that starts at +0, which leaves every sum bit for bit what the stored slots alone give.
//
// Value codes (issue 13 §1 on the CPU, as src/cuda/format_dia.cu): when the slots hold at most as many
// distinct values as a vector has lanes (padding's 0 included; bit-exact), each slot is a one-byte code
// and a vector of codes becomes a vector of values by one in-register table lookup (vpermps / vpermpd
// on AVX2 and AVX-512), so a 5-point stencil streams 1 byte a slot instead of 4 or 8. The plain loop
// takes up to 256 values. Results are bit for bit those of the raw values. SPMV_DIA_CODES=0 keeps them
// raw (for measurements).
//
// SIMD: Google Highway with run-time dispatch, as src/cpu/csr_simd.cpp; Options::cpu_simd = 0 or
// SPMV_CPU_SIMD=0 runs the same blocks with a plain loop.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dia_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace spmv::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// acc[j] (+)= sum_t v[t][j] * xs[t][j] for j in [0, len), over the n diagonals active on these rows, in
// offset order, in a register per vector of rows; `add` continues the sums already in acc.
template <class Value>
HWY_INLINE void sum_diagonals(Value* HWY_RESTRICT acc, const Value* const* v, const Value* const* xs, int n,
                              std::int64_t len, bool add) {
  const hn::ScalableTag<Value> d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t j = 0;
  for (; j + 2 * lanes <= len; j += 2 * lanes) {
    auto s0 = add ? hn::LoadU(d, acc + j) : hn::Zero(d);
    auto s1 = add ? hn::LoadU(d, acc + j + lanes) : hn::Zero(d);
    for (int t = 0; t < n; ++t) {
      s0 = hn::MulAdd(hn::LoadU(d, v[t] + j), hn::LoadU(d, xs[t] + j), s0);
      s1 = hn::MulAdd(hn::LoadU(d, v[t] + j + lanes), hn::LoadU(d, xs[t] + j + lanes), s1);
    }
    hn::StoreU(s0, d, acc + j);
    hn::StoreU(s1, d, acc + j + lanes);
  }
  for (; j < len; ++j) {
    Value s = add ? acc[j] : Value(0);
    for (int t = 0; t < n; ++t) s += v[t][j] * xs[t][j];
    acc[j] = s;
  }
}

// Lanes(d) codes from p as d's lane indices (one-byte codes widened to the lanes' integer width).
template <class D>
HWY_INLINE auto code_indices(D d, const std::uint8_t* HWY_RESTRICT p) {
  const hn::RebindToSigned<D> di;
  const hn::Rebind<std::int32_t, D> d32;
  const auto wide = hn::PromoteTo(d32, hn::LoadU(hn::Rebind<std::uint8_t, D>(), p));
  if constexpr (sizeof(hn::TFromD<D>) == 4) return hn::IndicesFromVec(d, wide);
  else return hn::IndicesFromVec(d, hn::PromoteTo(di, wide));
}

// sum_diagonals with the values given as codes into `table` (Lanes(d) entries, padded with zeros).
template <class Value>
HWY_INLINE void sum_diagonal_codes(Value* HWY_RESTRICT acc, const std::uint8_t* const* c, const Value* const* xs,
                                   int n, std::int64_t len, bool add, const Value* table) {
  const hn::ScalableTag<Value> d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto values = hn::LoadU(d, table);
  std::int64_t j = 0;
  for (; j + 2 * lanes <= len; j += 2 * lanes) {
    auto s0 = add ? hn::LoadU(d, acc + j) : hn::Zero(d);
    auto s1 = add ? hn::LoadU(d, acc + j + lanes) : hn::Zero(d);
    for (int t = 0; t < n; ++t) {
      const auto v0 = hn::TableLookupLanes(values, code_indices(d, c[t] + j));
      const auto v1 = hn::TableLookupLanes(values, code_indices(d, c[t] + j + lanes));
      s0 = hn::MulAdd(v0, hn::LoadU(d, xs[t] + j), s0);
      s1 = hn::MulAdd(v1, hn::LoadU(d, xs[t] + j + lanes), s1);
    }
    hn::StoreU(s0, d, acc + j);
    hn::StoreU(s1, d, acc + j + lanes);
  }
  for (; j < len; ++j) {
    Value s = add ? acc[j] : Value(0);
    for (int t = 0; t < n; ++t) s += table[c[t][j]] * xs[t][j];
    acc[j] = s;
  }
}

void sum_diagonals_f32(float* acc, const float* const* v, const float* const* xs, int n, std::int64_t len,
                       bool add) {
  sum_diagonals(acc, v, xs, n, len, add);
}
void sum_diagonal_codes_f32(float* acc, const std::uint8_t* const* c, const float* const* xs, int n,
                            std::int64_t len, bool add, const float* table) {
  sum_diagonal_codes(acc, c, xs, n, len, add, table);
}
void sum_diagonal_codes_f64(double* acc, const std::uint8_t* const* c, const double* const* xs, int n,
                            std::int64_t len, bool add, const double* table) {
  sum_diagonal_codes(acc, c, xs, n, len, add, table);
}
// The most distinct values a code table may hold on this target: one vector of them.
std::int64_t table_lanes_f32() { return static_cast<std::int64_t>(hn::Lanes(hn::ScalableTag<float>())); }
std::int64_t table_lanes_f64() { return static_cast<std::int64_t>(hn::Lanes(hn::ScalableTag<double>())); }
void sum_diagonals_f64(double* acc, const double* const* v, const double* const* xs, int n, std::int64_t len,
                       bool add) {
  sum_diagonals(acc, v, xs, n, len, add);
}

}  // namespace spmv::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include <bit>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dia_values_env.hpp"
#include "core/value_bits.hpp"
#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/host_memory.hpp"

namespace spmv::detail {

HWY_EXPORT(sum_diagonals_f32);
HWY_EXPORT(sum_diagonals_f64);
HWY_EXPORT(sum_diagonal_codes_f32);
HWY_EXPORT(sum_diagonal_codes_f64);
HWY_EXPORT(table_lanes_f32);
HWY_EXPORT(table_lanes_f64);

namespace {

// Rows per block: kBlockRows sums (4 KB in f32, 8 KB in f64) stay in a 32 KB L1 while the diagonals and
// x stream past; blocks must also be long against a vector so that segment ends are rare. Chosen, not
// swept, on the 2-core AMD EPYC (Zen 3, AVX2) development machine (poisson2d n=1000, stencil27 n=60).
constexpr std::int64_t kBlockRows = 1024;
// Diagonals summed in registers together: each is a stream of values (and of x) that the hardware
// prefetchers must follow; all 27 of stencil27 at once ran 2.8x slower than 8 at a time on the Zen 3
// machine (one thread, f32); 4 and 8 were within noise of each other there (stencil27 f32 0.89x / 0.85x
// MKL, f64 1.0x / 1.08x), and 8 keeps poisson2d's 5 diagonals in one pass (f64 3.2 ms against 3.5).
constexpr std::int64_t kGroupDiagonals = 8;
// Stored runs shorter than this many rows on average make the sweep take whole spans for finite x
// (see the top of this file). Set between stencil27 n=60 (91 rows a run) and poisson2d n=1000 (~1000).
constexpr std::int64_t kShortRun = 256;

template <class Value>
void sum_diagonals_plain(Value* acc, const Value* const* v, const Value* const* xs, int n, std::int64_t len,
                         bool add) {
  for (std::int64_t j = 0; j < len; ++j) {
    Value s = add ? acc[j] : Value(0);
    for (int t = 0; t < n; ++t) s += v[t][j] * xs[t][j];
    acc[j] = s;
  }
}

template <class Value>
void sum_diagonal_codes_plain(Value* acc, const std::uint8_t* const* c, const Value* const* xs, int n,
                              std::int64_t len, bool add, const Value* table) {
  for (std::int64_t j = 0; j < len; ++j) {
    Value s = add ? acc[j] : Value(0);
    for (int t = 0; t < n; ++t) s += table[c[t][j]] * xs[t][j];
    acc[j] = s;
  }
}

using detail::ValueBits;  // the code table compares values bit-exactly

// Runs of diagonal d: begin/end[ptr[d] .. ptr[d + 1]), rows, increasing.
struct RunList {
  std::vector<std::int64_t> ptr, begin, end;
  std::size_t bytes() const { return (ptr.size() + begin.size() + end.size()) * sizeof(std::int64_t); }
};

template <class Value, class Index>
struct DiaRuns {
  DiaMatrix<Value, Index> m;  // values moved to `values` below
  RunList stored;             // the runs of stored slots
  RunList spans;              // each diagonal's in-range slots [max(0, -off), min(rows, cols - off)) as one run
  bool short_runs = false;    // sweep the spans when x is finite (the stored runs average < kShortRun rows)
  std::unique_ptr<Value[]> values;  // m.values, placed by first touch; or, with a code table, empty and
  std::unique_ptr<std::uint8_t[]> codes;  // the slots' positions in `table`, the same layout
  std::vector<Value> table;         // distinct slot values, ascending bits, padded with zeros to a vector
};

// The bits of the slots' distinct values, ascending, when there are at most `capacity`, else empty.
template <class Value>
std::vector<ValueBits<Value>> distinct_bits(const std::vector<Value>& values, std::int64_t capacity) {
  std::vector<ValueBits<Value>> seen;  // ascending: a binary search a slot, an insertion per new value
  for (const Value v : values) {
    const auto b = detail::value_bits(v);
    const auto at = std::lower_bound(seen.begin(), seen.end(), b);
    if (at != seen.end() && *at == b) continue;
    if (static_cast<std::int64_t>(seen.size()) == capacity) return {};
    seen.insert(at, b);
  }
  return seen;
}

// First touch: each thread copies the diagonals' values of the row blocks it sweeps (the same static
// schedule over the same blocks and threads as dia_blocks) into fresh, uninitialised storage, so that on
// a machine of several memory nodes their pages sit on the node of the thread that reads them (Linux
// places a page where it is first written; to_dia wrote them on one thread).
// With a code table (`table_bits`, ascending, not empty) the codes are written instead, each slot's code
// found in the table by the same first touch, and r.table gets its values.
template <class Value, class Index>
void place_values(DiaRuns<Value, Index>& r, const std::vector<ValueBits<Value>>& table_bits, int threads) {
  const std::int64_t rows = r.m.rows, blocks = (rows + kBlockRows - 1) / kBlockRows;
  const auto ndiag = static_cast<std::int64_t>(r.m.offsets.size());
  const bool codes = !table_bits.empty();
  if (codes) {  // advised before the first touch below
    r.codes.reset(new std::uint8_t[r.m.values.size()]);
    advise_huge_pages(r.codes.get(), r.m.values.size());
  } else {
    r.values.reset(new Value[r.m.values.size()]);
    advise_huge_pages(r.values.get(), r.m.values.size() * sizeof(Value));
  }
  const Value* src = r.m.values.data();
  Value* dst = r.values.get();
  std::uint8_t* code = r.codes.get();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t i0 = b * kBlockRows, i1 = std::min(rows, i0 + kBlockRows);
    for (std::int64_t d = 0; d < ndiag; ++d) {
      if (!codes) {
        std::copy(src + d * rows + i0, src + d * rows + i1, dst + d * rows + i0);
        continue;
      }
      for (std::int64_t s = d * rows + i0; s < d * rows + i1; ++s)  // the table is ascending: binary search
        code[s] = static_cast<std::uint8_t>(
            std::lower_bound(table_bits.begin(), table_bits.end(), detail::value_bits(src[s])) -
            table_bits.begin());
    }
  }
  std::vector<Value>().swap(r.m.values);
  for (const auto b : table_bits) r.table.push_back(std::bit_cast<Value>(b));
  if (codes) r.table.resize(std::max<std::size_t>(r.table.size(), 64 / sizeof(Value)), Value(0));  // a whole vector
}

// Per-thread scratch of the sweep, sized once at plan time (apply allocates nothing): a run cursor and
// the value / x pointers of the active diagonals, ndiag each.
template <class Value>
struct SweepScratch {
  std::vector<std::int64_t> cursor;
  std::vector<const Value*> v, xs;
  std::vector<const std::uint8_t*> c;
};

template <class Value, class Index>
std::shared_ptr<DiaRuns<Value, Index>> find_runs(DiaMatrix<Value, Index> m) {
  auto r = std::make_shared<DiaRuns<Value, Index>>();
  const std::int64_t rows = m.rows, cols = m.cols;
  r->stored.ptr.push_back(0);
  r->spans.ptr.push_back(0);
  std::int64_t stored_slots = 0;
  for (std::size_t d = 0; d < m.offsets.size(); ++d) {
    const std::int64_t off = m.offsets[d];
    const std::int64_t lo = std::max<std::int64_t>(0, -off), hi = std::min<std::int64_t>(rows, cols - off);
    const std::int64_t base = static_cast<std::int64_t>(d) * rows;
    for (std::int64_t i = lo; i < hi;) {
      if (!m.is_stored(base + i)) {
        ++i;
        continue;
      }
      const std::int64_t begin = i;
      while (i < hi && m.is_stored(base + i)) ++i;
      r->stored.begin.push_back(begin);
      r->stored.end.push_back(i);
      stored_slots += i - begin;
    }
    r->stored.ptr.push_back(static_cast<std::int64_t>(r->stored.begin.size()));
    if (lo < hi) {
      r->spans.begin.push_back(lo);
      r->spans.end.push_back(hi);
    }
    r->spans.ptr.push_back(static_cast<std::int64_t>(r->spans.begin.size()));
  }
  r->short_runs = stored_slots < kShortRun * static_cast<std::int64_t>(r->stored.begin.size());
  r->m = std::move(m);
  return r;
}

// Whether x[0, n) holds no Inf or NaN (x - x is 0 exactly for finite x).
template <class Value>
bool all_finite(const Value* x, std::int64_t n, int threads) {
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) bad |= !(x[i] - x[i] == Value(0));
  return bad == 0;
}

// Within a block, the rows are swept in segments on which the set of diagonals with a stored slot does
// not change (a segment ends where any diagonal's run begins or ends); each segment is summed over its
// active diagonals in one pass, the sums kept in registers; diagonals are taken kGroupDiagonals at a
// time, each group after the first adding to the block's sums.
template <class Value, class Index>
void dia_blocks(const DiaRuns<Value, Index>& r, const RunList& runs, bool simd, int threads,
                std::vector<SweepScratch<Value>>& scratch, Value alpha, const Value* x, Value beta, Value* y) {
  using SumDiagonals = void (*)(Value*, const Value* const*, const Value* const*, int, std::int64_t, bool);
  using SumCodes = void (*)(Value*, const std::uint8_t* const*, const Value* const*, int, std::int64_t, bool,
                            const Value*);
  SumDiagonals sum = sum_diagonals_plain<Value>;
  SumCodes sum_codes = sum_diagonal_codes_plain<Value>;
  if (simd) {
    if constexpr (std::is_same_v<Value, float>) {
      sum = &HWY_DYNAMIC_DISPATCH(sum_diagonals_f32);
      sum_codes = &HWY_DYNAMIC_DISPATCH(sum_diagonal_codes_f32);
    } else {
      sum = &HWY_DYNAMIC_DISPATCH(sum_diagonals_f64);
      sum_codes = &HWY_DYNAMIC_DISPATCH(sum_diagonal_codes_f64);
    }
  }
  const bool codes = r.codes != nullptr;
  const Value* table = r.table.data();
  const std::int64_t rows = r.m.rows;
  const std::int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  const auto ndiag = static_cast<std::int64_t>(r.m.offsets.size());
  const std::int64_t* begins = runs.begin.data();
  const std::int64_t* ends = runs.end.data();
  const std::int64_t* run_ptr = runs.ptr.data();
#pragma omp parallel num_threads(threads)
  {
    SweepScratch<Value>& own = scratch[static_cast<std::size_t>(omp_get_thread_num())];
    std::int64_t* cursor = own.cursor.data();
    const Value** vp = own.v.data();
    const Value** xp = own.xs.data();
    const std::uint8_t** cp = own.c.data();
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      alignas(64) Value acc[kBlockRows];
      const std::int64_t i0 = b * kBlockRows, i1 = std::min(rows, i0 + kBlockRows);
      for (std::int64_t d = 0; d < ndiag; ++d)  // first run of d that ends after i0
        cursor[d] = std::upper_bound(ends + run_ptr[d], ends + run_ptr[d + 1], i0) - ends;
      for (std::int64_t g0 = 0; g0 < std::max<std::int64_t>(ndiag, 1); g0 += kGroupDiagonals) {
        const std::int64_t g1 = std::min(ndiag, g0 + kGroupDiagonals);
        for (std::int64_t p = i0; p < i1;) {
          std::int64_t q = i1;
          int n = 0;
          for (std::int64_t d = g0; d < g1; ++d) {
            std::int64_t& k = cursor[d];
            while (k < run_ptr[d + 1] && ends[k] <= p) ++k;
            if (k == run_ptr[d + 1]) continue;
            if (begins[k] <= p) {  // active on [p, end of run)
              if (codes) cp[n] = r.codes.get() + d * rows + p;
              else vp[n] = r.values.get() + d * rows + p;
              xp[n] = x + p + r.m.offsets[static_cast<std::size_t>(d)];
              ++n;
              q = std::min(q, ends[k]);
            } else {
              q = std::min(q, begins[k]);
            }
          }
          if (codes) sum_codes(acc + (p - i0), cp, xp, n, q - p, g0 > 0, table);
          else sum(acc + (p - i0), vp, xp, n, q - p, g0 > 0);
          p = q;
        }
      }
      if (beta == 0)
        for (std::int64_t i = i0; i < i1; ++i) y[i] = alpha * acc[i - i0];
      else
        for (std::int64_t i = i0; i < i1; ++i) y[i] = alpha * acc[i - i0] + beta * y[i];
    }
  }
}

}  // namespace

template <class Value, class Index>
CpuKernel<Value, Index> make_dia_simd_kernel(DiaMatrix<Value, Index> m, const Options& options) {
  const std::int64_t diagonals = static_cast<std::int64_t>(m.offsets.size());
  const std::size_t slots = m.values.size();
  const std::size_t extra = slots * sizeof(Value) + m.offsets.size() * sizeof(Index) +
                            m.stored.size() * sizeof(std::uint32_t);
  const int threads = options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());
  const bool simd = cpu::detail::simd_enabled(options.cpu_simd);
  std::vector<ValueBits<Value>> table_bits;
  if (detail::dia_codes_allowed()) table_bits = distinct_bits(m.values, dia_code_capacity<Value>(options));
  std::shared_ptr<DiaRuns<Value, Index>> placed = find_runs(std::move(m));
  place_values(*placed, table_bits, threads);
  std::shared_ptr<const DiaRuns<Value, Index>> runs = std::move(placed);
  CpuKernel<Value, Index> kernel;
  kernel.extra_bytes = (runs->codes ? extra - slots * (sizeof(Value) - 1) : extra) + runs->stored.bytes() +
                       runs->spans.bytes() + runs->table.size() * sizeof(Value);
  kernel.policy = "dia diagonals=" + std::to_string(diagonals) + " runs=" + std::to_string(runs->stored.begin.size()) +
                  (runs->short_runs ? " (short: whole spans when x is finite)" : "") +
                  (runs->codes ? " values=codes8 table=" + std::to_string(table_bits.size())
                               : std::string(" values=raw")) +
                  " threads=" + std::to_string(threads) + " block_rows=" + std::to_string(kBlockRows) +
                  (simd ? " simd=" + cpu::detail::simd_target() : std::string(" simd=off"));
  auto scratch = std::make_shared<std::vector<SweepScratch<Value>>>(static_cast<std::size_t>(threads));
  for (auto& s : *scratch) {
    s.cursor.resize(static_cast<std::size_t>(diagonals));
    s.v.resize(static_cast<std::size_t>(diagonals));
    s.xs.resize(static_cast<std::size_t>(diagonals));
    s.c.resize(static_cast<std::size_t>(diagonals));
  }
  kernel.run = [runs, scratch, simd, threads](Value alpha, const Value* x, Value beta, Value* y) {
    const std::int64_t rows = runs->m.rows;
    if (alpha == 0) {  // y = beta * y without reading A or x; beta == 0 does not read y
      for (std::int64_t i = 0; i < rows; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
      return;
    }
    const bool spans = runs->short_runs && all_finite(x, static_cast<std::int64_t>(runs->m.cols), threads);
    dia_blocks(*runs, spans ? runs->spans : runs->stored, simd, threads, *scratch, alpha, x, beta, y);
  };
  return kernel;
}

// The largest code table the product's path takes: a vector of lanes with SIMD, 256 in the plain loop.
template <class Value>
std::int64_t dia_code_capacity(const Options& options) {
  if (!cpu::detail::simd_enabled(options.cpu_simd)) return 256;
  if constexpr (std::is_same_v<Value, float>) return HWY_DYNAMIC_DISPATCH(table_lanes_f32)();
  else return HWY_DYNAMIC_DISPATCH(table_lanes_f64)();
}
template std::int64_t dia_code_capacity<float>(const Options&);
template std::int64_t dia_code_capacity<double>(const Options&);

#define SPMV_INSTANTIATE(V, I) template CpuKernel<V, I> make_dia_simd_kernel(DiaMatrix<V, I>, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
#endif  // HWY_ONCE
