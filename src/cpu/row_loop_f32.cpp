// The f32 instantiations of the scalar CSR row loop (csr_rows_scalar-inl.hpp), in a file of their own so
// that src/CMakeLists.txt can compile them without GCC's vectoriser: its 4-wide SLP form of the row sum
// (scalar loads, shuffles, in-order adds) ran 1.1-1.5x slower than the plain loop on rows of 3-45.
#include <cstdint>

#include "cpu/csr_rows_scalar-inl.hpp"

namespace spmv::cpu {

template void detail::csr_rows_scalar(const std::int32_t*, const std::int32_t*, const float*, const float*,
                                      std::int32_t, std::int32_t, float, float, float*);
template void detail::csr_rows_scalar(const std::int64_t*, const std::int64_t*, const float*, const float*,
                                      std::int64_t, std::int64_t, float, float, float*);

}  // namespace spmv::cpu
