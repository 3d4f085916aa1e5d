#pragma once
// Private: the words for the first entry that keeps A from equalling A^T, shared by the host check
// (spmv::symmetry_violation, src/core/csr.cpp) and the device one (src/cuda/symmetric.cu).
#include <cstdint>
#include <string>

namespace spmv::detail {

enum class SymmetryBreak { None, ColumnsNotIncreasing, MirrorMissing, MirrorDiffers };

// Entry (row, col) = value breaks A == A^T for `why`; `previous` is the column before it in the row
// (ColumnsNotIncreasing), `mirror` the value stored at (col, row) (MirrorDiffers).
std::string describe_symmetry_break(SymmetryBreak why, std::int64_t row, std::int64_t col, double value,
                                    double mirror, std::int64_t previous);

}  // namespace spmv::detail
