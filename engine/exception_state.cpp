// exception_state.cpp: the thread's C++ exception state, taken and put back (exception_state.hpp).
#include "config.h"

#include "exception_state.hpp"

#include <cxxabi.h>

namespace mr::engine {

namespace {

// __cxa_get_globals is declared const (the same answer for every call), which is true of one
// thread only: a caller that inlined it could reuse an answer across a switch that moved it to
// another thread. These two are never inlined, so every call asks the thread it runs on.
ExceptionState *thread_state() noexcept {
  return reinterpret_cast<ExceptionState *>(abi::__cxa_get_globals());
}

}  // namespace

[[gnu::noinline]] ExceptionState exceptions_take() noexcept {
  ExceptionState *g = thread_state();
  ExceptionState s = *g;
  *g = ExceptionState{};
  return s;
}

[[gnu::noinline]] void exceptions_put(const ExceptionState &s) noexcept { *thread_state() = s; }

}  // namespace mr::engine
