/* design_over.c: a team with more members than processors waits without spinning away the
 * processors its preempted members need (doc/gomp.md, "Waiting": Oversubscription). */
#include <sys/resource.h>

#include "design.h"

/* Processor time of the whole process so far, in seconds. */
static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
         ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) * 1e-6;
}

/* 2,000 short regions of 4 members per processor: with 2 processors each region took 600 us of
 * processor time when the waits spun as in a team that fits (and the creator yielded waiting
 * for preempted members to let go of the team), about 50 us since; the bound is 250 us. */
int test_oversubscribed(void) {
  int procs = omp_get_num_procs();
  if (procs > 8) {
    printf("design: oversubscribed: %d processors, skipped (made for small machines)\n", procs);
    return 0;
  }
  enum { ROUNDS = 2000, LEN = 512 };
  static double a[LEN];
  int n = 4 * procs;
#pragma omp parallel num_threads(n)
  a[omp_get_thread_num() % LEN] = 0; /* the team and its threads, made before the clock */
  double t0 = cpu_seconds();
  for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel for schedule(static) num_threads(n)
    for (int i = 0; i < LEN; i++) a[i] += 1.0;
  }
  double per_region = (cpu_seconds() - t0) / ROUNDS;
  for (int i = 0; i < LEN; i++)
    if (a[i] != ROUNDS) FAIL("a[%d] = %g, not %d", i, a[i], ROUNDS);
  if (per_region > 250e-6)
    FAIL("%d members on %d processors: %.0f us of processor time a region", n, procs,
         per_region * 1e6);
  return 0;
}
