/* by_name.h: what the gcc -fopenmp programs of tests/gomp share. A check script runs each as
 * `PROG TEST`: it runs that one test, exits 0 if it holds, and says what was wrong if not.
 * MR_GOMP_PROG, the program's name in its messages, is defined before this is included. */
#ifndef MR_GOMP_BY_NAME_H
#define MR_GOMP_BY_NAME_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Report what was wrong, in the calling test's name, and fail the run. */
#define FAIL(...)                                        \
  do {                                                   \
    fprintf(stderr, "%s: %s: ", MR_GOMP_PROG, __func__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fputc('\n', stderr);                                 \
    exit(1);                                             \
  } while (0)

typedef struct NamedTest {
  const char *name;
  int (*fn)(void);
} NamedTest;

/* Run the test argv[1] names; without one, or with a name not in tests, say which there are
 * and return 2. */
static inline int run_by_name(int argc, char **argv, const NamedTest *tests, size_t n) {
  if (argc == 2)
    for (size_t i = 0; i < n; i++)
      if (strcmp(argv[1], tests[i].name) == 0) return tests[i].fn();
  fprintf(stderr, "usage: %s TEST, where TEST is one of:", MR_GOMP_PROG);
  for (size_t i = 0; i < n; i++) fprintf(stderr, " %s", tests[i].name);
  fputc('\n', stderr);
  return 2;
}

#endif
