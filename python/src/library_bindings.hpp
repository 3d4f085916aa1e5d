#pragma once
// Module-level functions: algorithm names, CUDA facts, generators, Matrix Market reading, statistics
// and the benchmark loop of `spmv bench` (spmv::bench::bench_matrix, src/bench).
#include <nanobind/nanobind.h>

namespace spmv::python {

void bind_library(nanobind::module_& m);

}  // namespace spmv::python
