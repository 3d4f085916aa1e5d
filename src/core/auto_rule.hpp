#pragma once
// Auto's rule for y = A*x on the GPU, CUDA-free so that CI tests it and the run-time tuner starts from
// it (issue 13 §2). Two steps, both from row statistics the plan computes on the device:
//  1. the CSR kernel, by row class (no conversion, no extra memory);
//  2. with Options::expected_applies, a conversion to DIA or ELL when a cost model predicts that the
//     products it speeds up repay its setup within those applies.
// The constants were fitted on the even members of matrix families with swept parameters and checked
// on the odd members (bench/auto_families.py; docs/ALGORITHMS.md "Auto's cross-validation").
#include <cstdint>
#include <string_view>

#include "spmv/algorithm.hpp"

namespace spmv::detail {

struct RowShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  double mean = 0;    // nonzeros per row, empty rows included
  double stddev = 0;  // population standard deviation of the row lengths
  std::int64_t max = 0;
  std::int64_t empty_rows = 0;
};

enum class RowClass { Small, FewHugeRows, PowerLaw, MostlyEmpty, Irregular, Short, Long };
std::string_view to_string(RowClass c);

RowClass classify_rows(const RowShape& s);
// Step 1: the CSR kernel for A*x.
Algorithm csr_kernel_for(RowClass c);
// Step 2: whether converting to `format` (Dia or Ell) is repaid within `expected_applies` products
// of a matrix of this shape with `value_bytes`-byte values (4-byte indices assumed for the estimate).
bool conversion_repaid(Algorithm format, const RowShape& s, int value_bytes, std::int64_t expected_applies);
// The padded format Auto tries after DIA for this class, or Auto when none: ELL for short regular
// rows whose longest row is within kEllMaxPadding of the mean (ELL then reads no row pointers and
// stores almost no padding).
Algorithm format_for(RowClass c, const RowShape& s, int value_bytes, std::int64_t expected_applies);
// Padding Auto allows the formats it converts to (DIA: slots per nonzero, by value size; ELL).
double dia_max_padding(int value_bytes);
extern const double kEllMaxPadding;

}  // namespace spmv::detail
