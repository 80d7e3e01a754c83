// fatal.cpp: the one place the runtime stops the process, and the one place it warns.
#include "config.h"

#include "fatal.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace mr::engine {

namespace {

// Print "mrengine: <kind><message>" on stderr as one write.
void report(const char *kind, const char *fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::fprintf(stderr, "mrengine: %s%s\n", kind, buf);
  std::fflush(stderr);
}

}  // namespace

[[noreturn]] void fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report("", fmt, ap);
  va_end(ap);
  std::abort();
}

void warning(bool quiet, const char *fmt, ...) {
  if (quiet) return;
  va_list ap;
  va_start(ap, fmt);
  report("warning: ", fmt, ap);
  va_end(ap);
}

}  // namespace mr::engine
