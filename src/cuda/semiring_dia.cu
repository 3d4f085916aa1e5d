// DIA of the semiring product (SemiringPlan, Algorithm::Dia): the DIA SpMV's conversion (format_dia.cuh: one
// column of `rows` slots a occupied diagonal, refused with its message beyond the padding rule) with the plan's
// Options, asked for its stored-slot mask, and one thread a row walking the diagonals in ascending offset order
// (ascending column) with the semiring's ops.
//
// A slot holding 0 is padding or a stored zero, and only a stored one may enter a row (min-plus: 0 + x_j is a
// wrong answer for padding, a term for a stored zero). As on the CPU (src/cpu/semiring_dia.cpp, DiaMatrix::stored),
// a slot is folded only where its column lies in [0, cols) and its bit in the mask is set (the mask's words hold
// 32 consecutive rows of a diagonal, so a warp's rows read one word). The SpMV's kernels keep no mask (0 · x_j for
// padding changes its sums only where x_j is Inf or NaN) and store the values as bits or codes; this kernel reads
// the raw values, correctness first.
//
// What DIA cannot hold is two entries at one (row, column): the conversion sums them. For plus-times that is the
// product's distributivity (the SpMV's DIA does the same), for the others a_1 ⊗ x ⊕ a_2 ⊗ x is not (a_1 + a_2) ⊗ x
// (min-plus: min(a_1, a_2) + x), so the plan refuses (Unsupported) a matrix with duplicates for them, as the CPU
// does; the conversion counts them while it sets the mask. One launch, no workspace.
#include <string>
#include <type_traits>

#include "cuda/common/format_dia.cuh"
#include "cuda/semiring_format_kernels.cuh"

namespace spmv::cuda {
namespace {

// One thread a row; diagonals ascend, so a canonical row is folded in storage order from the semiring's zero.
// Columns in 64 bits: row + offset can leave the 32-bit range when rows + cols > 2^31.
template <class Ops, class Value, class Index>
__global__ void __launch_bounds__(semiring_format::kThreads)
    semiring_dia_kernel(Index rows, Index cols, Index ndiag, const Index* __restrict__ offsets,
                        const Value* __restrict__ values, const unsigned* __restrict__ stored, long long words,
                        const Value* __restrict__ x, Value* __restrict__ y) {
  for (long long i = format::global_thread(); i < rows; i += format::grid_threads()) {
    const auto row = static_cast<Index>(i);
    const unsigned bit = 1u << (row & 31);
    const unsigned* mask = stored + row / 32;
    Value acc = Ops::zero();
#pragma unroll 4
    for (Index d = 0; d < ndiag; ++d) {
      const long long col = static_cast<long long>(row) + __ldg(offsets + d);
      if (col >= 0 && col < cols && (__ldg(mask + d * words) & bit))
        acc = Ops::add(acc, Ops::mul(format::load_stream(values + d * rows + row), __ldg(x + col)));
    }
    y[row] = acc;
  }
}

template <class Ops, class Value, class Index>
class SemiringDia final : public SemiringFormat<Value, Index> {
 public:
  SemiringDia(const CsrView<Value, Index>& a, Semiring s, const Options& options, cudaStream_t stream)
      : m_(format::build_dia(a, options, /*stored_mask=*/true, stream)) {
    semiring_ops::refuse_dia_duplicates(s, m_.duplicates, "spmv::cuda::SemiringPlan", "csr-vector, merge-path or coo");
  }

  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    semiring_dia_kernel<Ops><<<grid_for(m_.rows, semiring_format::kThreads), semiring_format::kThreads, 0, stream>>>(
        m_.rows, m_.cols, m_.ndiag, m_.offsets.data(), m_.values.data(), m_.stored.data(), m_.stored_words, x, y);
    SPMV_CHECK_LAUNCH("semiring_dia_kernel");
  }
  std::string policy() const override {
    return "dia block=" + std::to_string(semiring_format::kThreads) + " diagonals=" + std::to_string(m_.ndiag) +
           " values=raw stored_mask=on";
  }
  std::size_t bytes() const override { return m_.bytes(); }
  bool writes_workspace() const override { return false; }

 private:
  format::DiaStorage<Value, Index> m_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_dia(const CsrView<Value, Index>& a, Semiring s,
                                                  const Options& options, cudaStream_t stream) {
  return semiring_format::make_for<SemiringDia, Value, Index>(s, a, s, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_dia)

}  // namespace spmv::cuda
