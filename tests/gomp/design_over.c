/* design_over.c: a team with more members than processors waits without spinning away the
 * processors its preempted members need, and yields them rather than sleeping (doc/gomp.md,
 * "Waiting": Oversubscription). */
#include "design.h" /* first: it asks for the GNU names (RUSAGE_THREAD) */

#include <string.h>
#include <sys/resource.h>

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
  printf(
      "design: oversubscribed: %d members on %d processors: %.0f us of processor time a region\n",
      n, procs, per_region * 1e6);
#ifdef __SANITIZE_THREAD__
  /* ThreadSanitizer multiplies the processor time of every access: the bound is not its to meet
   * (a CI run of the TSan build went over 250 us a region). */
  return 0;
#endif
  if (per_region > 250e-6)
    FAIL("%d members on %d processors: %.0f us of processor time a region", n, procs,
         per_region * 1e6);
  return 0;
}

/* The voluntary context switches of the calling thread so far: each sleep (a futex wait, a
 * condition variable's) is one; a yield that gives the processor to another thread is not. */
static long sleeps_of_thread(void) {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nvcsw;
}

/* 2,000 regions of 4 members per processor (8 threads on 2 engines: 6 of them slot threads),
 * run twice by check-design.sh: with OMP_WAIT_POLICY=active, a member waiting for its next job
 * or for the others at the region's end yields the processor instead of sleeping, so the
 * members' threads sleep in almost no region (when each slot thread slept on its job's
 * condition variable, about 6 times a region); with passive, they sleep at once, in nearly
 * every region. Every member runs every region, on its own thread. */
int test_oversubscribed_yield(void) {
  int procs = omp_get_num_procs();
  if (procs > 8) {
    printf("design: oversubscribed-yield: %d processors, skipped (made for small machines)\n",
           procs);
    return 0;
  }
  const char *policy = getenv("OMP_WAIT_POLICY");
  int active = policy && strcmp(policy, "active") == 0;
  if (!active && !(policy && strcmp(policy, "passive") == 0))
    FAIL("run with OMP_WAIT_POLICY=active or passive");
  enum { ROUNDS = 2000, MAX = 32 };
  static long runs[MAX], tid[MAX], first[MAX], last[MAX];
  int n = 4 * procs;
#pragma omp parallel num_threads(n)
  tid[omp_get_thread_num()] = os_tid(); /* the team and its threads, made before counting */
  for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel num_threads(n)
    {
      int i = omp_get_thread_num();
      if (omp_get_num_threads() != n) FAIL("a team of %d, not %d", omp_get_num_threads(), n);
      if (os_tid() != tid[i]) FAIL("member %d moved to another thread in region %d", i, r);
      runs[i]++;
      if (r == 0) first[i] = sleeps_of_thread();
      if (r == ROUNDS - 1) last[i] = sleeps_of_thread();
    }
  }
  long sleeps = 0;
  for (int i = 0; i < n; i++) {
    if (runs[i] != ROUNDS) FAIL("member %d ran %ld regions of %d", i, runs[i], ROUNDS);
    sleeps += last[i] - first[i];
  }
  printf(
      "design: oversubscribed-yield: %s, %d members on %d processors: %ld sleeps in %d "
      "regions\n",
      policy, n, procs, sleeps, ROUNDS);
  if (active && sleeps > ROUNDS / 10)
    FAIL("active: the members slept %ld times in %d regions", sleeps, ROUNDS);
  if (!active && sleeps < ROUNDS / 2)
    FAIL("passive: the members slept only %ld times in %d regions", sleeps, ROUNDS);
  return 0;
}
