#pragma once
// Dense matrices for SpMM (Y = alpha*op(A)*X + beta*Y): a non-owning view of someone else's array,
// row-major or column-major with a leading dimension (BLAS / cuSPARSE's cusparseDnMat convention).
// Entry (i, j) lives at data[i*ld + j] (row-major) or data[i + j*ld] (column-major); offsets are
// computed in 64 bits, so k*ld products never overflow 32-bit arithmetic. Host or device memory alike:
// the view never dereferences its pointer. No CUDA header (STYLE.md §5).
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace spmv {

enum class Layout { RowMajor, ColMajor };

inline std::string_view to_string(Layout layout) {
  return layout == Layout::RowMajor ? "row-major" : "column-major";
}

// T is Value for outputs, const Value for inputs.
template <class T>
struct DenseView {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  // row-major: >= cols; column-major: >= rows (and >= 1)
  Layout layout = Layout::RowMajor;

  constexpr std::int64_t row_stride() const { return layout == Layout::RowMajor ? ld : 1; }
  constexpr std::int64_t col_stride() const { return layout == Layout::RowMajor ? 1 : ld; }
  constexpr std::int64_t offset(std::int64_t i, std::int64_t j) const { return i * row_stride() + j * col_stride(); }
  constexpr T& operator()(std::int64_t i, std::int64_t j) const { return data[offset(i, j)]; }
  // Elements the array must hold: the last entry's offset + 1 (0 when the view is empty).
  constexpr std::int64_t extent() const { return rows == 0 || cols == 0 ? 0 : offset(rows - 1, cols - 1) + 1; }
  // A read-only view of the same array.
  // (A template, so that DenseView<const V> declares no conversion to itself.)
  template <class U>
    requires(!std::is_const_v<T> && std::is_same_v<U, const T>)
  constexpr operator DenseView<U>() const {
    return {data, rows, cols, ld, layout};
  }
};

// Tightly packed views (ld = cols for row-major, rows for column-major; at least 1).
template <class T>
constexpr DenseView<T> row_major(T* data, std::int64_t rows, std::int64_t cols) {
  return {data, rows, cols, cols > 0 ? cols : 1, Layout::RowMajor};
}
template <class T>
constexpr DenseView<T> col_major(T* data, std::int64_t rows, std::int64_t cols) {
  return {data, rows, cols, rows > 0 ? rows : 1, Layout::ColMajor};
}

namespace detail {
// Throws InvalidArgument naming `who` and `name` unless the view is `rows` x `cols`, its sizes are not
// negative, its leading dimension is at least the contiguous extent (and 1), its extent fits int64,
// and data is not null when it has entries.
void check_dense(const char* who, const char* name, std::int64_t view_rows, std::int64_t view_cols, std::int64_t ld,
                 Layout layout, bool null_data, std::int64_t rows, std::int64_t cols);
template <class T>
void check_dense(const char* who, const char* name, const DenseView<T>& v, std::int64_t rows, std::int64_t cols) {
  check_dense(who, name, v.rows, v.cols, v.ld, v.layout, v.data == nullptr, rows, cols);
}
}  // namespace detail

}  // namespace spmv
