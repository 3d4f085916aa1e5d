// PCSR (He & Gao, "A Novel CSR-Based Sparse Matrix-Vector Multiplication on GPUs", Mathematical
// Problems in Engineering 2016, article 8471283): two kernels. Kernel 1 multiplies every nonzero by its x entry
// into a products array (fully coalesced); kernel 2 reduces row segments of that array through
// shared memory. Here kernel 2 works on fixed tiles of `tile` products: each block stages one
// tile and reduces the rows that *start* in it (CSR-stream style, several threads per row when the tile
// holds few rows); the last such row may run past the tile, and the block reduces the rest of it from
// the products array in global memory. Every row is written exactly once, by the block holding its
// first nonzero (empty rows: the block holding their offset), so alpha/beta need no fix-up.
// docs/algorithms/pcsr.md has the details and the departures from the paper.
// The kernels and the tiles live in pcsr.cuh, written once for this SpMV and the semiring product
// (semiring_pcsr.cu): the same code with the (+, x) ops and the alpha/beta epilogue here.
#include <string>

#include "cuda/algorithms.cuh"
#include "cuda/pcsr.cuh"

namespace spmv::cuda {
namespace {

template <class Value, class Index>
class Pcsr final : public CudaAlgorithm<compute_t<Value>, Index> {
  using Real = compute_t<Value>;

 public:
  Pcsr(const CsrView<Value, Index>& a, const Options& options, cudaStream_t stream)
      : a_(a),
        aligned_(is_aligned(a.values, 16) && is_aligned(a.col_idx, 16)),
        tiles_(a.row_ptr, a.rows, a.nnz,
               checked_block_threads(options.block_size, pcsr_policy(sizeof(Value)).block_threads, "Pcsr"), stream) {}

  void apply(Real alpha, const Real* x, Real beta, Real* y, cudaStream_t stream) override {
    tiles_.template run<semiring_ops::PlusTimes<Real>>(a_, aligned_, alpha, x, beta, y, stream);
  }

  bool reproducible() const override { return true; }
  std::string policy() const override { return tiles_.policy() + " vector_loads=" + (aligned_ ? "on" : "off"); }
  std::size_t extra_bytes() const override { return tiles_.bytes(); }

 private:
  CsrView<Value, Index> a_;
  bool aligned_;
  PcsrTiles<Real, Index> tiles_;  // the products array (kernel 1 output, kernel 2 input) and each tile's rows
};

}  // namespace

template <class Value, class Index>
AlgorithmPtr<compute_t<Value>, Index> make_pcsr(const CsrView<Value, Index>& matrix, Operation op,
                                                const Options& options, cudaStream_t stream) {
  if (op != Operation::NonTranspose) throw unsupported_operation(Algorithm::Pcsr, op);
  return std::make_unique<Pcsr<Value, Index>>(matrix, options, stream);
}

SPMV_INSTANTIATE_FACTORY(make_pcsr)
SPMV_INSTANTIATE_HALF_FACTORY(make_pcsr)

}  // namespace spmv::cuda
