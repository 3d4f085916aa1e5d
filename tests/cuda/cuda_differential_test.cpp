// The shared differential sweep (tests/common/differential.hpp) against the CUDA backend, unchanged.
// Without a device the CUDA backend offers no algorithm, so nothing is instantiated.
#include <gtest/gtest.h>

#include "common/differential.hpp"

SPMV_DIFFERENTIAL_TESTS(Cuda, spmv::Backend::Cuda);
