// fatal.cpp: stopping the program with "mrengine-gomp: ..." on stderr, never a silent fallback.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fatal.hpp"

namespace mrg {

void unsupported(const char *symbol, const char *detail) {
  if (detail)
    fprintf(stderr, "mrengine-gomp: %s is not supported (%s)\n", symbol, detail);
  else
    fprintf(stderr, "mrengine-gomp: %s is not supported\n", symbol);
  fflush(stderr);
  abort();
}

void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mrengine-gomp: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

}  // namespace mrg
