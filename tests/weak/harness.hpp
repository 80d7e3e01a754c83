// harness.hpp: what every harness of tests/weak includes first. The harnesses are compiled by
// GenMC's clang (pthreads, C++20, no std::thread, no <mutex>, no <string>) with the engine's
// own sources, included from the top of the tree (-I$(top_srcdir) -I$(top_srcdir)/include and
// the build's generated headers); tests/weak/check_weak.sh runs them.
#ifndef MR_TESTS_WEAK_HARNESS_HPP
#define MR_TESTS_WEAK_HARNESS_HPP

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <new>

#include "engine/fatal.hpp"

// fatal() of engine/fatal.cpp (which needs stdarg printing): an invariant that MR_CHECK finds
// broken is a failure of the execution GenMC explores.
namespace mr::engine {
[[noreturn]] void fatal(const char *fmt, ...) {
  (void)fmt;
  assert(!"mrengine: fatal");
  abort();
}
}  // namespace mr::engine

// The array and aligned forms of new and delete, on GenMC's malloc (it models only the plain
// form): the deque's slots, the cache-line aligned records (alignas(64)). The array form zeroes
// the memory word by word, as libstdc++'s std::atomic (value-initialised since C++20) does with
// the deque's slots; GenMC's own <atomic> leaves them uninitialised.
void *operator new[](std::size_t n) {
  void *p = malloc(n);
  for (std::size_t i = 0; i < n / sizeof(std::uintptr_t); i++)
    static_cast<volatile std::uintptr_t *>(p)[i] = 0;  // volatile: no memset for GenMC
  return p;
}
void operator delete[](void *p) noexcept { free(p); }
void *operator new(std::size_t n, std::align_val_t) { return malloc(n); }
void operator delete(void *p, std::align_val_t) noexcept { free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { free(p); }

#endif
