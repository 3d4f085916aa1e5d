#pragma once
#include <cusparse.h>

#include <string>

#include "spmv/error.hpp"

namespace spmv::cuda {

#define SPMV_CUSPARSE_CHECK(call)                                                                          \
  do {                                                                                                     \
    const cusparseStatus_t spmv_status_ = (call);                                                          \
    if (spmv_status_ == CUSPARSE_STATUS_NOT_SUPPORTED)                                                     \
      throw ::spmv::Unsupported(std::string(#call) + " is not supported by cuSPARSE for this case");      \
    if (spmv_status_ != CUSPARSE_STATUS_SUCCESS)                                                           \
      throw ::spmv::CudaError(std::string(#call) + " failed: " + cusparseGetErrorString(spmv_status_) +    \
                              " (" + __FILE__ + ":" + std::to_string(__LINE__) + ")");                   \
  } while (0)

}  // namespace spmv::cuda
