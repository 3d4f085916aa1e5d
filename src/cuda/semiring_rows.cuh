#pragma once
// Private: the semiring row kernel of semiring_multiply.cu at a chosen sub-warp width (2, 4, 8 or 32
// lanes per row; anything else throws InvalidArgument). SemiringPlan picks the width once from the row
// statistics; the public semiring_multiply picks 4 or 32 from the mean row length.
#include <cuda_runtime.h>

#include <cstdint>

#include "spmv/cuda/plan.hpp"
#include "spmv/semiring.hpp"

namespace spmv::cuda {

// semiring_multiply's width, from the mean row length alone: 4 lanes, or 32 from 12 entries a row.
int plain_rows_width(std::int64_t rows, std::int64_t nnz);

template <class Value, class Index>
void semiring_rows(Semiring s, const CsrView<Value, Index>& a, const Value* x, Value* y, int width,
                   cudaStream_t stream);

}  // namespace spmv::cuda
