// Hola of the semiring product (SemiringPlan, Algorithm::Hola): the Hola-SpMV kernels (op = NonTranspose; Steinberger,
// Zayer & Seidel, ICS'17; hola.cu has the design, hola_spmv.cuh the kernel) with the semiring's ops. Every block gets
// the same number of nonzeros and every thread the same number inside it; a thread folds its terms a_k ⊗ x[col_k]
// with ⊕ from the zero and writes the rows that end inside it. The rows that several threads or blocks add to are
// combined with ⊕ by atomics: a row shared between blocks (and an empty row) is set to the semiring's zero by the
// first kernel, a candidate row of a block's output buffer starts from the zero in shared memory, and the partial
// folds arrive with a compare-and-swap loop on the value's bits for min, max and or (row_output.cuh's atomic_add:
// exact in any order, so they give the definition's values, a zero's sign aside), atomicAdd for plus-times (not
// bit-reproducible, as the SpMV). A row held by one block is written once with a plain store. No workspace: the first
// kernel rewrites blockRowStarts with the same values every product (as the SpMV's, which CudaAlgorithm's rule lets
// run on several streams at once). Options read: block_size (a multiple of 32 up to 1024) and hola_sort_columns, as
// the SpMV. The first kernel is not timed at plan time (the SpMV's policy reports it).
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/hola_spmv.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
class SemiringHola final : public SemiringFormat<Value, Index> {
 public:
  SemiringHola(const CsrView<Value, Index>& a, const Options& options) : launch_(a, options) {}

  // alpha = 1 and beta = 0 for plus-times (row_output.cuh: the SpMV's instantiation, y = the sum), unread otherwise.
  void apply(const Value* x, Value* y, cudaStream_t stream) override { launch_.run(Value(1), x, Value(0), y, stream); }
  std::string policy() const override {
    return "hola " + launch_.policy() +
           (kIsPlusTimes<Ops> ? " (shared rows added with atomics: not bit-reproducible)"
                              : " (shared rows ⊕-added with compare-and-swap: exact)");
  }
  std::size_t bytes() const override { return launch_.bytes(); }
  bool writes_workspace() const override { return false; }  // blockRowStarts: the same values every product

 private:
  hola::HolaSpmvLaunch<Ops, Value, Index> launch_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_hola(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t) {
  return semiring_format::make_for<SemiringHola, Value, Index>(s, a, options);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_hola)

}  // namespace spmv::cuda
