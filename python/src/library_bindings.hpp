#pragma once
// Module-level functions: algorithm names, CUDA facts, generators, Matrix Market reading, statistics
// and the benchmark loop of `spmv bench` (spmv::cli::bench_matrix).
#include <nanobind/nanobind.h>

namespace spmv::python {

void bind_library(nanobind::module_& m);

}  // namespace spmv::python
