// PCSR of the semiring product (SemiringPlan, Algorithm::Pcsr): the PCSR SpMV's two kernels (pcsr.cuh, He & Gao
// 2016; pcsr.cu has the design) with the semiring's ops. Kernel 1 writes every term a_k ⊗ x[col_k] into the products
// array; kernel 2 stages a tile of it in shared memory and folds each row that starts in the tile with ⊕ from the
// semiring's zero (CSR-stream lanes a row and a shuffle butterfly of ⊕; a row running past the tile is finished from
// the products array by the whole block, cub::BlockReduce with ⊕). Every row is written once, by the block holding
// its first nonzero, with a plain store: no carry crosses blocks, so no atomics and no fix-up for any semiring, and
// an empty row gets the zero. The order of every fold is fixed by the tiles, so each product gives the same bits
// (plus-times included; min, max and or-and give the definition's values in any case). The products array is a
// workspace: the plan orders products on different streams. Options read: block_size (a power of two in [32, 1024],
// the SpMV's compiled sizes), as the SpMV.
#include <memory>
#include <string>

#include "core/semiring_ops.hpp"
#include "cuda/common/vector_load.cuh"
#include "cuda/pcsr.cuh"
#include "cuda/semiring_formats.cuh"

namespace spmv::cuda {
namespace {

template <class Ops, class Value, class Index>
class SemiringPcsr final : public SemiringFormat<Value, Index> {
 public:
  SemiringPcsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        tiles_(a.row_ptr, a.rows, a.nnz,
               checked_block_threads(options.block_size, pcsr_policy(sizeof(Value)).block_threads, "Pcsr"), stream) {
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the tiles found before the plan returns
  }

  // alpha = 1 and beta = 0 for plus-times (row_output.cuh: the SpMV's instantiation, y = the sum), unread otherwise.
  void apply(const Value* x, Value* y, cudaStream_t stream) override {
    tiles_.template run<Ops>(a_, aligned_, Value(1), x, Value(0), y, stream);
  }
  std::string policy() const override {
    return "pcsr " + tiles_.policy() + " vector_loads=" + (aligned_ ? "on" : "off") + " deterministic";
  }
  std::size_t bytes() const override { return tiles_.bytes(); }
  bool writes_workspace() const override { return true; }  // the products array

 private:
  CsrView<Value, Index> a_;
  bool aligned_;
  PcsrTiles<Value, Index> tiles_;
};

}  // namespace

template <class Value, class Index>
SemiringFormatPtr<Value, Index> make_semiring_pcsr(const CsrView<Value, Index>& a, Semiring s, const Options& options,
                                                   cudaStream_t stream) {
  return semiring_format::make_for<SemiringPcsr, Value, Index>(s, a, options, stream);
}

SPMV_INSTANTIATE_SEMIRING_FORMAT(make_semiring_pcsr)

}  // namespace spmv::cuda
