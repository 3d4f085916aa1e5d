// CPU products on the converted formats: sequential loops that exist to check the conversions and to
// give the CUDA format kernels a host counterpart, not to be fast (the column-major layouts are read with
// a stride here); DIA's and SELL's A·x are the exceptions, run by the parallel SIMD kernels of
// src/cpu/dia_simd.cpp and src/cpu/sell_simd.cpp (SELL's C is the SIMD width on the CPU).
// Each row is accumulated in Value; the transpose first scales y by beta, then scatters
// alpha * x_i * a_ij. alpha == 0 never reads A or x (BLAS convention); beta == 0 never reads y.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "cpu/cpu_operator.hpp"
#include "cpu/instantiate.hpp"
#include "spmv/error.hpp"
#include "spmv/formats.hpp"

namespace spmv::detail {
namespace {

template <class Value>
void scale(std::int64_t n, Value beta, Value* y) {
  if (beta == Value{0}) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = Value{0};
  } else if (beta != Value{1}) {
    for (std::int64_t i = 0; i < n; ++i) y[i] *= beta;
  }
}

template <class Value>
Value combine(Value alpha, Value sum, Value beta, Value y) {
  return beta == Value{0} ? alpha * sum : alpha * sum + beta * y;
}

// --- COO ---
template <class Value, class Index>
void coo_apply(const CooMatrix<Value, Index>& m, Operation op, Value alpha, const Value* x, Value beta, Value* y) {
  const bool n = op == Operation::NonTranspose;
  scale<Value>(n ? m.rows : m.cols, beta, y);
  const auto nnz = static_cast<std::int64_t>(m.values.size());
  for (std::int64_t k = 0; k < nnz; ++k) {
    const Index in = n ? m.col_idx[k] : m.row_idx[k];
    const Index out = n ? m.row_idx[k] : m.col_idx[k];
    y[out] += alpha * (m.values[k] * x[in]);
  }
}

// --- ELL / ELL-R (row_length == nullptr: stop at the first padding slot) ---
template <class Value, class Index>
void ell_apply(const EllMatrix<Value, Index>& m, const Index* row_length, Operation op, Value alpha, const Value* x,
               Value beta, Value* y) {
  const auto rows = static_cast<std::size_t>(m.rows);
  auto length_of = [&](std::size_t r) -> std::int64_t {
    if (row_length) return row_length[r];
    std::int64_t k = 0;
    while (k < m.width && m.col_idx[static_cast<std::size_t>(k) * rows + r] >= 0) ++k;
    return k;
  };
  if (op == Operation::NonTranspose) {
    for (std::size_t r = 0; r < rows; ++r) {
      Value sum{0};
      const std::int64_t len = length_of(r);
      for (std::int64_t k = 0; k < len; ++k) {
        const std::size_t slot = static_cast<std::size_t>(k) * rows + r;
        sum += m.values[slot] * x[m.col_idx[slot]];
      }
      y[r] = combine(alpha, sum, beta, y[r]);
    }
  } else {
    scale<Value>(m.cols, beta, y);
    for (std::size_t r = 0; r < rows; ++r) {
      const Value t = alpha * x[r];
      const std::int64_t len = length_of(r);
      for (std::int64_t k = 0; k < len; ++k) {
        const std::size_t slot = static_cast<std::size_t>(k) * rows + r;
        y[m.col_idx[slot]] += m.values[slot] * t;
      }
    }
  }
}

// --- DIA: the stored-slot mask keeps padding out of the sum, so 0 * Inf never appears ---
template <class Value, class Index>
void dia_apply(const DiaMatrix<Value, Index>& m, Operation op, Value alpha, const Value* x, Value beta, Value* y) {
  const std::int64_t rows = m.rows, cols = m.cols;
  const auto ndiag = static_cast<std::int64_t>(m.offsets.size());
  if (op == Operation::NonTranspose) {
    for (std::int64_t i = 0; i < rows; ++i) {
      Value sum{0};
      for (std::int64_t d = 0; d < ndiag; ++d) {
        const std::int64_t j = i + m.offsets[d];
        const std::int64_t slot = d * rows + i;
        if (j >= 0 && j < cols && m.is_stored(slot)) sum += m.values[slot] * x[j];
      }
      y[i] = combine(alpha, sum, beta, y[i]);
    }
  } else {
    scale<Value>(cols, beta, y);
    for (std::int64_t i = 0; i < rows; ++i) {
      const Value t = alpha * x[i];
      for (std::int64_t d = 0; d < ndiag; ++d) {
        const std::int64_t j = i + m.offsets[d];
        const std::int64_t slot = d * rows + i;
        if (j >= 0 && j < cols && m.is_stored(slot)) y[j] += m.values[slot] * t;
      }
    }
  }
}

// --- HYB: a row's ELL part, then its COO entries (sorted by row) ---
template <class Value, class Index>
void hyb_apply(const HybMatrix<Value, Index>& m, Operation op, Value alpha, const Value* x, Value beta, Value* y) {
  const auto rows = static_cast<std::size_t>(m.ell.rows);
  const auto coo_nnz = m.coo.values.size();
  if (op == Operation::NonTranspose) {
    std::size_t p = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      Value sum{0};
      for (std::int64_t k = 0; k < m.ell.width; ++k) {
        const std::size_t slot = static_cast<std::size_t>(k) * rows + r;
        const Index c = m.ell.col_idx[slot];
        if (c < 0) break;
        sum += m.ell.values[slot] * x[c];
      }
      for (; p < coo_nnz && static_cast<std::size_t>(m.coo.row_idx[p]) == r; ++p)
        sum += m.coo.values[p] * x[m.coo.col_idx[p]];
      y[r] = combine(alpha, sum, beta, y[r]);
    }
  } else {
    scale<Value>(m.ell.cols, beta, y);
    for (std::size_t r = 0; r < rows; ++r) {
      const Value t = alpha * x[r];
      for (std::int64_t k = 0; k < m.ell.width; ++k) {
        const std::size_t slot = static_cast<std::size_t>(k) * rows + r;
        const Index c = m.ell.col_idx[slot];
        if (c < 0) break;
        y[c] += m.ell.values[slot] * t;
      }
    }
    for (std::size_t p = 0; p < coo_nnz; ++p) y[m.coo.col_idx[p]] += m.coo.values[p] * (alpha * x[m.coo.row_idx[p]]);
  }
}

// --- SELL-C-sigma: walk sorted positions, write to the original row perm[p] ---
template <class Value, class Index>
void sell_apply(const SellMatrix<Value, Index>& m, Operation op, Value alpha, const Value* x, Value beta, Value* y) {
  const std::int64_t rows = m.rows, c = m.c;
  if (op == Operation::Transpose) scale<Value>(m.cols, beta, y);
  for (std::int64_t p = 0; p < rows; ++p) {
    const Index r = m.perm[p];
    const std::int64_t base = m.slice_ptr[p / c] + p % c;
    const std::int64_t width = m.slice_width[p / c];
    if (op == Operation::NonTranspose) {
      Value sum{0};
      for (std::int64_t k = 0; k < width; ++k) {
        const Index col = m.col_idx[base + k * c];
        if (col < 0) break;
        sum += m.values[base + k * c] * x[col];
      }
      y[r] = combine(alpha, sum, beta, y[r]);
    } else {
      const Value t = alpha * x[r];
      for (std::int64_t k = 0; k < width; ++k) {
        const Index col = m.col_idx[base + k * c];
        if (col < 0) break;
        y[col] += m.values[base + k * c] * t;
      }
    }
  }
}

// Wraps a converted matrix and its loop into a CpuKernel; alpha == 0 only scales y.
template <class Value, class Index, class Format, class Loop>
CpuKernel<Value, Index> make_kernel(Format converted, Operation op, std::int64_t y_size, Loop loop, std::string policy) {
  auto m = std::make_shared<const Format>(std::move(converted));
  CpuKernel<Value, Index> k;
  k.extra_bytes = storage_bytes(*m);
  k.policy = std::move(policy);
  k.run = [m, op, y_size, loop](Value alpha, const Value* x, Value beta, Value* y) {
    if (alpha == Value{0}) {
      scale(y_size, beta, y);
      return;
    }
    loop(*m, op, alpha, x, beta, y);
  };
  return k;
}

}  // namespace

template <class Value, class Index>
CpuKernel<Value, Index> make_cpu_format_kernel(const CsrMatrix<Value, Index>& a, Algorithm algorithm, Operation op,
                                               const Options& options) {
  const std::int64_t y_size = op == Operation::NonTranspose ? a.rows : a.cols;
  switch (algorithm) {
    case Algorithm::Coo: {
      validate(a);
      auto m = to_coo(a);
      const std::string policy = "coo nnz=" + std::to_string(m.values.size()) + " (sequential scatter)";
      return make_kernel<Value, Index>(std::move(m), op, y_size, coo_apply<Value, Index>, policy);
    }
    case Algorithm::Ell: {
      auto m = to_ell(a, options);
      const std::string policy = "ell width=" + std::to_string(m.width) + " slots=" + std::to_string(m.slots());
      auto loop = [](const EllMatrix<Value, Index>& e, Operation o, Value al, const Value* x, Value be, Value* y) {
        ell_apply<Value, Index>(e, nullptr, o, al, x, be, y);
      };
      return make_kernel<Value, Index>(std::move(m), op, y_size, loop, policy);
    }
    case Algorithm::EllR:
    case Algorithm::EllRVector: {
      auto m = to_ellr(a, options);
      std::string policy = std::string(to_string(algorithm)) + " width=" + std::to_string(m.ell.width);
      if (algorithm == Algorithm::EllRVector) policy += " (CPU: the same sequential row loop as ellr)";
      auto loop = [](const EllRMatrix<Value, Index>& e, Operation o, Value al, const Value* x, Value be, Value* y) {
        ell_apply<Value, Index>(e.ell, e.row_length.data(), o, al, x, be, y);
      };
      return make_kernel<Value, Index>(std::move(m), op, y_size, loop, policy);
    }
    case Algorithm::Dia: {
      auto m = to_dia(a, options);
      if (op == Operation::NonTranspose) return make_dia_simd_kernel(std::move(m), options);
      const std::string policy = "dia diagonals=" + std::to_string(m.offsets.size());
      return make_kernel<Value, Index>(std::move(m), op, y_size, dia_apply<Value, Index>, policy);
    }
    case Algorithm::Hyb: {
      auto m = to_hyb(a, options);
      const std::string policy = "hyb ell_width=" + std::to_string(m.ell.width) +
                                 (options.hyb_ell_width < 0 ? " (Bell & Garland rule)" : " (explicit)") +
                                 " coo_nnz=" + std::to_string(m.coo.values.size());
      return make_kernel<Value, Index>(std::move(m), op, y_size, hyb_apply<Value, Index>, policy);
    }
    case Algorithm::Sell: {
      Options sell = options;
      sell.sell_c = cpu_sell_c<Value, Index>(options);  // C = the SIMD width unless set
      auto m = to_sell(a, sell);
      if constexpr (std::is_same_v<Value, float>)  // half values: both products on the 16-bit slices
        if (options.values != ValueStorage::Native) return make_half_sell_kernel(std::move(m), op, options);
      if (op == Operation::NonTranspose) return make_sell_simd_kernel(std::move(m), options);
      const std::string policy = "sell C=" + std::to_string(m.c) + " sigma=" + std::to_string(m.sigma) +
                                 " slices=" + std::to_string(m.num_slices()) +
                                 " slots=" + std::to_string(m.slice_ptr.back());
      return make_kernel<Value, Index>(std::move(m), op, y_size, sell_apply<Value, Index>, policy);
    }
    case Algorithm::CompressedCsr: {
      auto m = to_compressed_csr(a, options);
      const std::string policy = "compressed-csr " + compressed_csr_summary(m) +
                                 (op == Operation::Transpose ? " (transpose: sequential scatter)" : "");
      return make_kernel<Value, Index>(std::move(m), op, y_size, compressed_csr_apply<Value, Index>, policy);
    }
    default:
      throw InvalidArgument("make_cpu_format_kernel: " + std::string(to_string(algorithm)) +
                            " is not a format algorithm (coo, ell, ellr, ellr-vector, dia, hyb, sell, compressed-csr)");
  }
}

#define SPMV_INSTANTIATE(V, I)                                                                          \
  template CpuKernel<V, I> make_cpu_format_kernel(const CsrMatrix<V, I>&, Algorithm, Operation, const Options&);
SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE)
#undef SPMV_INSTANTIATE

}  // namespace spmv::detail
