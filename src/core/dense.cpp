// Validation of dense-matrix views (include/spmv/dense.hpp), shared by the CPU and CUDA SpMM.
#include "spmv/dense.hpp"

#include <limits>
#include <string>

#include "spmv/error.hpp"

namespace spmv::detail {

void check_dense(const char* who, const char* name, std::int64_t view_rows, std::int64_t view_cols, std::int64_t ld,
                 Layout layout, bool null_data, std::int64_t rows, std::int64_t cols) {
  const std::string prefix = std::string(who) + ": " + name;
  if (view_rows < 0 || view_cols < 0)
    throw InvalidArgument(prefix + " has negative size " + std::to_string(view_rows) + " x " + std::to_string(view_cols));
  if (view_rows != rows || view_cols != cols)
    throw InvalidArgument(prefix + " is " + std::to_string(view_rows) + " x " + std::to_string(view_cols) +
                          ", the product needs " + std::to_string(rows) + " x " + std::to_string(cols));
  const std::int64_t inner = layout == Layout::RowMajor ? view_cols : view_rows;
  const std::int64_t outer = layout == Layout::RowMajor ? view_rows : view_cols;
  if (ld < 1 || ld < inner)
    throw InvalidArgument(prefix + " (" + std::string(to_string(layout)) + ", " + std::to_string(view_rows) + " x " +
                          std::to_string(view_cols) + ") has leading dimension " + std::to_string(ld) +
                          "; it must be at least " + std::to_string(inner > 1 ? inner : 1));
  if (inner == 0 || outer == 0) return;
  // The last entry's offset, (outer - 1) * ld + inner - 1, must fit int64.
  if (outer - 1 > (std::numeric_limits<std::int64_t>::max() - inner) / ld)
    throw InvalidArgument(prefix + ": " + std::to_string(outer) + " x leading dimension " + std::to_string(ld) +
                          " overflows 64-bit offsets");
  if (null_data) throw InvalidArgument(prefix + " has " + std::to_string(view_rows) + " x " +
                                       std::to_string(view_cols) + " entries but a null pointer");
}

}  // namespace spmv::detail
