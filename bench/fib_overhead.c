/* fib_overhead.c: spark+join overhead and speedup on fib(n), one spark per call, no cutoff.
 *
 * usage: fib_overhead [n] [runs]     (default n = 30, runs = 5)
 * Per run: a sequential fib that really makes every call (noipa), and the parallel fib on 1 and
 * on 2 engines, in the same process. Prints the median (min..max) of each and
 *   overhead per spark on 1 engine = (parallel on 1 engine - sequential) / sparks
 *   speedup 1 -> 2 engines        = parallel on 1 engine / parallel on 2 engines
 * and the same parallel fib that sparks only when MR_par_cond_local_wsdeque_length() says so
 * (the granularity test generated code would use), on 1 and 2 engines. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mrengine.h"

__attribute__((noipa)) static long sfib(int n) { return n < 2 ? n : sfib(n - 1) + sfib(n - 2); }

struct arg {
  int n;
  long r;
};
static long pfib(int n);
static void branch(void *env) {
  struct arg *a = env;
  a->r = pfib(a->n);
}
static long pfib(int n) {
  if (n < 2) return n;
  MR_SyncTerm st;
  struct arg a = {n - 1, 0};
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, branch, &a);
  long b = pfib(n - 2);
  MR_join_and_continue(&st);
  return a.r + b;
}

/* The same with the granularity test: spark only while the local deque is short. */
static long gfib(int n);
static void gbranch(void *env) {
  struct arg *a = env;
  a->r = gfib(a->n);
}
static long gfib(int n) {
  if (n < 2) return n;
  if (!MR_par_cond_local_wsdeque_length()) return gfib(n - 1) + gfib(n - 2);
  MR_SyncTerm st;
  struct arg a = {n - 1, 0};
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, gbranch, &a);
  long b = gfib(n - 2);
  MR_join_and_continue(&st);
  return a.r + b;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double timed_pfib(int engines, int n, long expect, long (*fib)(int)) {
  MR_Config c;
  MR_config_default(&c);
  c.engines = engines;
  c.flags |= MR_CONFIG_IGNORE_ENV;
  if (MR_init(&c) != 0) {
    fprintf(stderr, "fib_overhead: MR_init failed\n");
    exit(1);
  }
  (void)fib(n > 20 ? 20 : n); /* warm the context caches */
  double t0 = now();
  long r = fib(n);
  double t = now() - t0;
  MR_shutdown();
  if (r != expect) {
    fprintf(stderr, "fib_overhead: wrong result %ld\n", r);
    exit(1);
  }
  return t;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 30;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 2 || n > 40 || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: fib_overhead [n (2..40)] [runs (1..100)]\n");
    return 2;
  }
  double *seq = calloc((size_t)runs, sizeof *seq), *p1 = calloc((size_t)runs, sizeof *p1),
         *p2 = calloc((size_t)runs, sizeof *p2), *ov = calloc((size_t)runs, sizeof *ov),
         *sp = calloc((size_t)runs, sizeof *sp), *g1 = calloc((size_t)runs, sizeof *g1),
         *g2 = calloc((size_t)runs, sizeof *g2);
  long expect = sfib(n);
  double sparks = 0; /* fib(n) makes fib(n+1)-1 sparks: one per call with n >= 2 */
  {
    long a = 0, b = 1;
    for (int i = 0; i < n + 1; i++) {
      long t = a + b;
      a = b;
      b = t;
    }
    sparks = (double)a - 1;
  }
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    if (sfib(n) != expect) return 1;
    seq[r] = now() - t0;
    p1[r] = timed_pfib(1, n, expect, pfib);
    p2[r] = timed_pfib(2, n, expect, pfib);
    g1[r] = timed_pfib(1, n, expect, gfib);
    g2[r] = timed_pfib(2, n, expect, gfib);
    ov[r] = (p1[r] - seq[r]) / sparks * 1e9;
    sp[r] = p1[r] / p2[r];
  }
  double *all[] = {seq, p1, p2, ov, sp, g1, g2};
  const char *names[] = {"sequential fib (s)",
                         "parallel, 1 engine (s)",
                         "parallel, 2 engines (s)",
                         "overhead per spark, 1 engine (ns)",
                         "speedup 1 -> 2 engines (x)",
                         "with granularity test, 1 engine (s)",
                         "with granularity test, 2 engines (s)"};
  printf("fib(%d), %.0f sparks, %d runs: median (min .. max)\n", n, sparks, runs);
  for (int k = 0; k < 7; k++) {
    qsort(all[k], (size_t)runs, sizeof(double), cmp);
    printf("  %-36s %10.4f  (%.4f .. %.4f)\n", names[k], all[k][runs / 2], all[k][0],
           all[k][runs - 1]);
  }
  return 0;
}
