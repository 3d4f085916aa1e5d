#pragma once
// Private: collective error handling. A step that may fail on some ranks only (reading a file on the
// root, validating this rank's rows) runs inside collectively(), which catches the failure and lets
// every rank agree on it, so that the others throw too instead of waiting for a message never sent.
#include <exception>
#include <new>
#include <string>

#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

namespace spmv::dist::detail {

// Which spmv::Error subclass a failure was, so that every rank throws the same type.
enum class ErrorKind : int { None = 0, Error, InvalidArgument, ParseError, Unsupported, MemoryLimit, BadAlloc };

// Every rank passes its failure (None when it succeeded); when any failed, every rank throws the
// lowest failing rank's error as "rank R: MESSAGE" in the same type.
void agree_or_throw(const Communicator& comm, ErrorKind kind, const std::string& message);

template <class F>
void collectively(const Communicator& comm, F&& f) {
  ErrorKind kind = ErrorKind::None;
  std::string message;
  try {
    f();
  } catch (const MemoryLimitExceeded& e) {
    kind = ErrorKind::MemoryLimit, message = e.what();
  } catch (const ParseError& e) {
    kind = ErrorKind::ParseError, message = e.what();
  } catch (const Unsupported& e) {
    kind = ErrorKind::Unsupported, message = e.what();
  } catch (const InvalidArgument& e) {
    kind = ErrorKind::InvalidArgument, message = e.what();
  } catch (const std::bad_alloc&) {
    kind = ErrorKind::BadAlloc, message = "out of memory";
  } catch (const std::exception& e) {
    kind = ErrorKind::Error, message = e.what();
  }
  agree_or_throw(comm, kind, message);
}

}  // namespace spmv::dist::detail
