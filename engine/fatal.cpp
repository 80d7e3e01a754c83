// fatal.cpp: the one place the runtime stops the process, and the one place it warns.
#include "config.h"

#include "fatal.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace mr::engine {

[[noreturn]] void fatal(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "mrengine: %s\n", buf);
  std::fflush(stderr);
  std::abort();
}

void warning(bool quiet, const char *fmt, ...) {
  if (quiet) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "mrengine: warning: %s\n", buf);
}

}  // namespace mr::engine
