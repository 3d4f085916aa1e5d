#pragma once
// Every failure the library reports is an spmv::Error (a std::runtime_error) carrying a message a
// person can act on. Subclasses let callers (CLI, Python) map errors to exit codes / exception types.
#include <stdexcept>
#include <string>

namespace spmv {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Arguments that violate the API contract (sizes, null pointers, malformed CSR arrays).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Input files that are not valid Matrix Market (the message names file and line).
class ParseError : public Error {
 public:
  using Error::Error;
};

// A request the library understands but cannot honour: an algorithm not offered by a backend,
// padding beyond the allowed factor, a size that overflows the index type.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// Reading a matrix would need more memory than is available or than the caller's max_memory allows;
// the message names both sizes. Raised before the large allocations, from the file's size line.
class MemoryLimitExceeded : public Unsupported {
 public:
  using Unsupported::Unsupported;
};

// A failing CUDA / cuSPARSE call; the message names the call, the error and the source location.
class CudaError : public Error {
 public:
  using Error::Error;
};

}  // namespace spmv
