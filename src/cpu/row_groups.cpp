// Row groups on the CPU (A x only): consecutive rows with the same column indices form a group (at most
// kGroupMaxRows), and a group's columns are cut into runs of consecutive columns (at most one vector
// long). Each run reads x with one masked vector load, shared by the group's rows, instead of a gather
// per vector of nonzeros; each row then takes one masked load of its values and one fused multiply-add
// per run. This is the structure of finite-element matrices with several unknowns per node (bcsstk16:
// rows in threes with the same columns, runs of ~7.5 consecutive columns): one x load per ~20 nonzeros,
// where SELL gathers x once per 16 (f32) or 8 (f64) and MKL's inspector-executor beat SELL by 1.2-1.5x
// (docs/algorithms/cpu_simd.md, "Row groups"). The layout stores, per group, its first row and its runs
// (first column, length), and the values run by run, row by row within a run, so a group's loads are
// sequential; one column index per run and group instead of one per nonzero.
//
// A vector load of x at a run's first column reads Lanes(d) entries; where the target's masked load is
// not fault-free (SSE4 and below load the whole vector: load_run) that could read past x's end, so
// groups with a run that starts within Lanes(d) of the end run the scalar loop ("tail" groups). The value
// array is padded by a vector of zeros for the same reason. Masked lanes load zero, so an Inf or NaN of x
// outside a run never enters a sum. Threads take contiguous ranges of groups balanced by nonzeros, fixed
// at plan time; a row's sum does not depend on the thread count.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/row_groups.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>

#ifndef SPMV_CPU_ROW_GROUPS_DEFINED
#define SPMV_CPU_ROW_GROUPS_DEFINED
namespace spmv::cpu::detail {
// The arrays a sweep reads.
template <class Value, class Index>
struct RowGroupsView {
  const Index* first_row;        // groups + 1: group g holds rows [first_row[g], first_row[g + 1])
  const std::int64_t* run_at;    // groups + 1: group g's runs are [run_at[g], run_at[g + 1])
  const Index* run_col;          // first column of each run
  const std::uint8_t* run_len;   // its length, 1 .. Lanes
  const std::int64_t* value_at;  // groups + 1: group g's values start here
  const std::uint8_t* tail;      // 1: a run starts within a vector of x's end (the scalar loop)
  const Value* val;              // run by run, row by row within a run; padded by a vector of zeros
};

// Group g in plain scalar code, in the order of the vector kernel's lanes per run.
template <class Value, class Index>
void group_plain(const RowGroupsView<Value, Index>& m, std::int64_t g, Value alpha, const Value* x, Value beta,
                 Value* y) {
  const std::int64_t rows = m.first_row[g + 1] - m.first_row[g];
  for (std::int64_t r = 0; r < rows; ++r) {
    Value sum = 0;
    const Value* v = m.val + m.value_at[g];
    for (std::int64_t j = m.run_at[g]; j < m.run_at[g + 1]; ++j) {
      const std::int64_t length = m.run_len[j];
      for (std::int64_t t = 0; t < length; ++t) sum += v[r * length + t] * x[m.run_col[j] + t];
      v += rows * length;
    }
    Value& out = y[m.first_row[g] + r];
    out = beta == 0 ? alpha * sum : alpha * sum + beta * out;
  }
}
}  // namespace spmv::cpu::detail
#endif

HWY_BEFORE_NAMESPACE();
namespace spmv::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes [0, FirstN) of p, zero elsewhere. AVX2 and AVX-512 load unaligned and leave the masked lanes
// unread; Highway 1.0's MaskedLoad is an aligned whole load on SSE4 and below (it faulted on runs that
// start anywhere), so those load the whole vector unaligned, in bounds by the tail rule and the padding.
template <class M, class D, class T>
HWY_INLINE auto load_run(M in_run, D d, const T* HWY_RESTRICT p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return hn::MaskedLoad(in_run, d, p);
#else
  return hn::IfThenElseZero(in_run, hn::LoadU(d, p));
#endif
}

// One group of `kRows` rows: an accumulator per row, one masked load of x per run.
template <int kRows, class D, class Value, class Index>
HWY_INLINE void group_sums(D d, const RowGroupsView<Value, Index>& m, std::int64_t g, Value alpha,
                           const Value* HWY_RESTRICT x, Value beta, Value* HWY_RESTRICT y) {
  using V = decltype(hn::Zero(d));
  V acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = hn::Zero(d);
  const Value* v = m.val + m.value_at[g];
  for (std::int64_t j = m.run_at[g]; j < m.run_at[g + 1]; ++j) {
    const std::int64_t length = m.run_len[j];
    const auto in_run = hn::FirstN(d, static_cast<std::size_t>(length));
    const auto xs = load_run(in_run, d, x + m.run_col[j]);
    for (int r = 0; r < kRows; ++r) acc[r] = hn::MulAdd(load_run(in_run, d, v + r * length), xs, acc[r]);
    v += kRows * length;
  }
  Value* out = y + m.first_row[g];
  for (int r = 0; r < kRows; ++r) {
    const Value sum = hn::GetLane(hn::SumOfLanes(d, acc[r]));
    out[r] = beta == 0 ? alpha * sum : alpha * sum + beta * out[r];
  }
}

// Groups [g_begin, g_end).
template <class Value, class Index>
void groups(const RowGroupsView<Value, Index>& view, std::int64_t g_begin, std::int64_t g_end, Value alpha,
            const Value* x, Value beta, Value* y) {
  const hn::ScalableTag<Value> d;
  const RowGroupsView<Value, Index> m = view;  // a local copy: y's stores cannot alias its fields
  for (std::int64_t g = g_begin; g < g_end; ++g) {
    if (m.tail[g]) {
      group_plain(m, g, alpha, x, beta, y);
      continue;
    }
    switch (m.first_row[g + 1] - m.first_row[g]) {
      case 1: group_sums<1>(d, m, g, alpha, x, beta, y); break;
      case 2: group_sums<2>(d, m, g, alpha, x, beta, y); break;
      case 3: group_sums<3>(d, m, g, alpha, x, beta, y); break;
      default: group_sums<4>(d, m, g, alpha, x, beta, y); break;
    }
  }
}

#define SPMV_ROW_GROUPS_ENTRY(V, I, suffix)                                                                 \
  void groups_##suffix(const RowGroupsView<V, I>& m, std::int64_t g_begin, std::int64_t g_end, V alpha,   \
                       const V* x, V beta, V* y) {                                                        \
    groups<V, I>(m, g_begin, g_end, alpha, x, beta, y);                                                   \
  }                                                                                                       \
  std::int64_t group_lanes_##suffix() { return static_cast<std::int64_t>(hn::Lanes(hn::ScalableTag<V>())); }
SPMV_ROW_GROUPS_ENTRY(float, std::int32_t, f32_i32)
SPMV_ROW_GROUPS_ENTRY(float, std::int64_t, f32_i64)
SPMV_ROW_GROUPS_ENTRY(double, std::int32_t, f64_i32)
SPMV_ROW_GROUPS_ENTRY(double, std::int64_t, f64_i64)
#undef SPMV_ROW_GROUPS_ENTRY

}  // namespace spmv::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/cpu_operator.hpp"
#include "cpu/csr_simd.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/host_memory.hpp"

namespace spmv::cpu::detail {

HWY_EXPORT(groups_f32_i32);
HWY_EXPORT(groups_f32_i64);
HWY_EXPORT(groups_f64_i32);
HWY_EXPORT(groups_f64_i64);
HWY_EXPORT(group_lanes_f32_i32);
HWY_EXPORT(group_lanes_f32_i64);
HWY_EXPORT(group_lanes_f64_i32);
HWY_EXPORT(group_lanes_f64_i64);

namespace {

template <class Value, class Index>
using GroupsFn = void (*)(const RowGroupsView<Value, Index>&, std::int64_t, std::int64_t, Value, const Value*, Value,
                          Value*);

template <class Value, class Index>
GroupsFn<Value, Index> simd_groups() {
  constexpr bool f32 = std::is_same_v<Value, float>, i32 = std::is_same_v<Index, std::int32_t>;
  if constexpr (f32 && i32) return &HWY_DYNAMIC_DISPATCH(groups_f32_i32);
  else if constexpr (f32) return &HWY_DYNAMIC_DISPATCH(groups_f32_i64);
  else if constexpr (i32) return &HWY_DYNAMIC_DISPATCH(groups_f64_i32);
  else return &HWY_DYNAMIC_DISPATCH(groups_f64_i64);
}

template <class Value, class Index>
std::int64_t group_lanes() {
  constexpr bool f32 = std::is_same_v<Value, float>, i32 = std::is_same_v<Index, std::int32_t>;
  if constexpr (f32 && i32) return HWY_DYNAMIC_DISPATCH(group_lanes_f32_i32)();
  else if constexpr (f32) return HWY_DYNAMIC_DISPATCH(group_lanes_f32_i64)();
  else if constexpr (i32) return HWY_DYNAMIC_DISPATCH(group_lanes_f64_i32)();
  else return HWY_DYNAMIC_DISPATCH(group_lanes_f64_i64)();
}

template <class Value, class Index>
void groups_plain(const RowGroupsView<Value, Index>& m, std::int64_t g_begin, std::int64_t g_end, Value alpha,
                  const Value* x, Value beta, Value* y) {
  for (std::int64_t g = g_begin; g < g_end; ++g) group_plain(m, g, alpha, x, beta, y);
}

template <class Value, class Index>
struct RowGroupsPlan {
  std::vector<Index> first_row;
  std::vector<std::int64_t> run_at, value_at;
  std::vector<Index> run_col;
  std::vector<std::uint8_t> run_len, tail;
  std::vector<Value> val;
  std::vector<std::int64_t> bounds;  // threads + 1 group boundaries
  RowGroupsView<Value, Index> view() const {
    return {first_row.data(), run_at.data(), run_col.data(), run_len.data(), value_at.data(), tail.data(),
            val.data()};
  }
};

// Whether rows r and q hold the same columns.
template <class Value, class Index>
bool same_columns(const CsrMatrix<Value, Index>& a, std::int64_t r, std::int64_t q) {
  const auto n = a.row_ptr[r + 1] - a.row_ptr[r];
  return n == a.row_ptr[q + 1] - a.row_ptr[q] &&
         std::equal(a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1],
                    a.col_idx.begin() + a.row_ptr[q]);
}

}  // namespace
}  // namespace spmv::cpu::detail

namespace spmv::detail {
using cpu::detail::RowGroupsPlan;

template <class Value, class Index>
std::int64_t row_group_lanes() {
  return cpu::detail::group_lanes<Value, Index>();
}

template <class Value, class Index>
RowGroupsShape row_groups_shape(const CsrMatrix<Value, Index>& a, std::int64_t max_runs) {
  RowGroupsShape shape;
  shape.lanes = cpu::detail::group_lanes<Value, Index>();
  for (std::int64_t r = 0; r < a.rows && (max_runs < 0 || shape.runs <= max_runs);) {
    std::int64_t n = 1;
    while (r + n < a.rows && n < kGroupMaxRows && cpu::detail::same_columns(a, r, r + n)) ++n;
    ++shape.groups;
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1];) {
      std::int64_t length = 1;
      while (k + length < a.row_ptr[r + 1] && length < shape.lanes && a.col_idx[k + length] == a.col_idx[k] + length)
        ++length;
      ++shape.runs;
      k += length;
    }
    r += n;
  }
  return shape;
}

template <class Value, class Index>
CpuKernel<Value, Index> make_row_groups_kernel(const CsrMatrix<Value, Index>& a, const Options& options) {
  auto plan = std::make_shared<RowGroupsPlan<Value, Index>>();
  const std::int64_t lanes = cpu::detail::group_lanes<Value, Index>();
  plan->first_row.push_back(0);
  plan->run_at.push_back(0);
  plan->value_at.push_back(0);
  reserve_huge_pages(plan->val, static_cast<std::size_t>(a.nnz() + lanes));
  for (std::int64_t r = 0; r < a.rows;) {
    std::int64_t n = 1;
    while (r + n < a.rows && n < kGroupMaxRows && cpu::detail::same_columns(a, r, r + n)) ++n;
    bool tail = false;
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1];) {
      std::int64_t length = 1;
      while (k + length < a.row_ptr[r + 1] && length < lanes && a.col_idx[k + length] == a.col_idx[k] + length)
        ++length;
      plan->run_col.push_back(a.col_idx[k]);
      plan->run_len.push_back(static_cast<std::uint8_t>(length));
      tail = tail || std::int64_t{a.col_idx[k]} + lanes > a.cols;
      for (std::int64_t row = r; row < r + n; ++row) {
        const auto from = a.values.begin() + (a.row_ptr[row] + (k - a.row_ptr[r]));
        plan->val.insert(plan->val.end(), from, from + length);
      }
      k += length;
    }
    r += n;
    plan->first_row.push_back(static_cast<Index>(r));
    plan->run_at.push_back(static_cast<std::int64_t>(plan->run_col.size()));
    plan->value_at.push_back(static_cast<std::int64_t>(plan->val.size()));
    plan->tail.push_back(tail);
  }
  plan->val.resize(plan->val.size() + static_cast<std::size_t>(lanes), Value(0));  // a full vector past the end
  const auto groups = static_cast<std::int64_t>(plan->tail.size());
  const int threads = options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());
  plan->bounds.resize(static_cast<std::size_t>(threads) + 1);
  const std::int64_t total = plan->value_at[groups];
  for (int t = 0; t <= threads; ++t) {  // the first group whose values start at the thread's share
    const std::int64_t target = total / threads * t + total % threads * t / threads;
    plan->bounds[t] = std::lower_bound(plan->value_at.begin(), plan->value_at.begin() + groups, target) -
                      plan->value_at.begin();
  }
  plan->bounds[threads] = groups;
  const bool simd = cpu::detail::simd_enabled(options.cpu_simd);
  CpuKernel<Value, Index> kernel;
  kernel.extra_bytes = plan->val.size() * sizeof(Value) + plan->run_col.size() * (sizeof(Index) + 1) +
                       static_cast<std::size_t>(groups) * (sizeof(Index) + 2 * sizeof(std::int64_t) + 1);
  kernel.policy = "row groups=" + std::to_string(groups) + " runs=" + std::to_string(plan->run_col.size()) +
                  " threads=" + std::to_string(threads) +
                  (simd ? " simd=" + cpu::detail::simd_target() : std::string(" simd=off"));
  const cpu::detail::GroupsFn<Value, Index> run =
      simd ? cpu::detail::simd_groups<Value, Index>() : &cpu::detail::groups_plain<Value, Index>;
  const std::int64_t rows = a.rows;
  kernel.run = [plan, run, threads, rows](Value alpha, const Value* x, Value beta, Value* y) {
    if (alpha == 0) {  // y = beta * y without reading A or x; beta == 0 does not read y
      for (std::int64_t i = 0; i < rows; ++i) y[i] = beta == 0 ? Value(0) : beta * y[i];
      return;
    }
    const auto view = plan->view();
    if (threads == 1) return run(view, 0, plan->bounds[1], alpha, x, beta, y);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int t = 0; t < threads; ++t) run(view, plan->bounds[t], plan->bounds[t + 1], alpha, x, beta, y);
  };
  return kernel;
}

#define SPMV_INSTANTIATE(V, I)                                                   \
  template std::int64_t row_group_lanes<V, I>();                                \
  template RowGroupsShape row_groups_shape(const CsrMatrix<V, I>&, std::int64_t);\
  template CpuKernel<V, I> make_row_groups_kernel(const CsrMatrix<V, I>&, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
#endif  // HWY_ONCE
