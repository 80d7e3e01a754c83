/* pfib.c: fib(n) with one spark per call, through the C ABI of mrengine.
 *
 * usage: pfib [n]     (engines: MRENGINE_OPTIONS="-P 2", default all PUs)
 * Prints the result, the time, the engines and each engine's counters (MR_stats_print), then
 * measures the CPU time the idle runtime uses over one second. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "mrengine.h"

struct fib_arg {
  int n;
  long result;
};

static long pfib(int n);

static void fib_branch(void *env) {
  struct fib_arg *a = env;
  a->result = pfib(a->n);
}

static long pfib(int n) {
  if (n < 2) return n;
  MR_SyncTerm st;
  struct fib_arg a = {n - 1, 0};
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, fib_branch, &a); /* fib(n-1) may be stolen */
  long b = pfib(n - 2);                   /* fib(n-2) here */
  MR_join_and_continue(&st);
  return a.result + b;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 30;
  if (n < 0 || n > 45) {
    fprintf(stderr, "usage: pfib [n]   (0 <= n <= 45)\n");
    return 2;
  }
  int rc = MR_init(NULL);
  if (rc != 0) {
    fprintf(stderr, "pfib: MR_init: %s\n", MR_strerror(rc));
    return 1;
  }
  double t0 = now();
  long r = pfib(n);
  double t1 = now();
  printf("fib(%d) = %ld in %.3f s on %d engine(s)\n", n, r, t1 - t0, MR_num_engines());
  MR_stats_print(stdout); /* the same table as MRENGINE_OPTIONS=--stats at shutdown */
  /* The idle runtime: let the engines fall asleep, then measure one second of process CPU. */
  struct timespec settle = {0, 100 * 1000 * 1000}, second = {1, 0};
  nanosleep(&settle, NULL);
  double c0 = cpu_seconds();
  nanosleep(&second, NULL);
  double c1 = cpu_seconds();
  printf("idle runtime: %.3f ms of CPU over 1 s\n", (c1 - c0) * 1e3);
  MR_shutdown();
  return 0;
}
