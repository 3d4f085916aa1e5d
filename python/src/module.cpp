// spmv._core: the nanobind extension behind the spmv package. Library errors become Python
// exceptions carrying the library's message: InvalidArgument -> ValueError, ParseError ->
// spmv.ParseError (a ValueError), Unsupported -> spmv.UnsupportedError (a RuntimeError), CudaError
// -> spmv.CudaError (a RuntimeError), any other std::exception -> RuntimeError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <vector>

#include "library_bindings.hpp"
#include "matrix_core.hpp"
#include "spmv/error.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "spmv C++ core (use the spmv package)";

  // Translators are tried most recent first; the four classes are disjoint leaves of spmv::Error, and
  // anything else (spmv::Error itself, std::runtime_error) falls through to nanobind's RuntimeError.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const spmv::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  nb::exception<spmv::ParseError>(m, "ParseError", PyExc_ValueError);
  nb::exception<spmv::Unsupported>(m, "UnsupportedError", PyExc_RuntimeError);
  nb::exception<spmv::CudaError>(m, "CudaError", PyExc_RuntimeError);

  spmv::python::bind_matrix(m);
  spmv::python::bind_library(m);
}
