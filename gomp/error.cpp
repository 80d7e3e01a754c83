// error.cpp: the error directive at execution time (`#pragma omp error at(execution)`): a
// warning is printed and the program goes on; a fatal error is printed and the program exits
// with EXIT_FAILURE. The message takes the form libgomp.so.1's users see ("libgomp: error
// directive encountered: ..."), since this library stands in for it and programs and their
// tests match that text. The directive's message comes with its length, or with (size_t)-1
// when it is a C string; without a message only the directive is named.
#include <stdio.h>
#include <stdlib.h>

#include "export.hpp"

namespace {

void report(const char *severity, const char *msg, size_t len) {
  fprintf(stderr, "\nlibgomp: %serror directive encountered", severity);
  if (msg) {
    fputs(": ", stderr);
    if (len == static_cast<size_t>(-1))
      fputs(msg, stderr);
    else
      fwrite(msg, 1, len, stderr);
  }
  fputc('\n', stderr);
}

}  // namespace

MRG_EXPORT void GOMP_warning(const char *msg, size_t len) { report("", msg, len); }
MRG_EXPORT void GOMP_error(const char *msg, size_t len) {
  report("fatal error: ", msg, len);
  exit(EXIT_FAILURE);
}
