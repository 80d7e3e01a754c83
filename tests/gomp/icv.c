/* icv.c: ICVs that the environment sets, as a gcc -fopenmp program that tests/gomp/check-icv.sh
 * runs against this tree's libgomp.so.1 and against the system's libgomp, under the
 * environment each test names. `icv NAME` runs one test and exits 0 if it holds; each failure
 * says what was wrong. */
#include <omp.h>
#include <pthread.h>

#define MR_GOMP_PROG "icv"
#include "by_name.h"

/* OMP_SCHEDULE=static,1 on 2 threads: iteration i runs on thread i % 2. The loops have a task
 * reduction, so gcc passes the schedule to GOMP_loop_start and GOMP_loop_ull_start, where kind
 * 4 is a runtime schedule with the nonmonotonic modifier (not auto). */
static int test_sched_runtime_nonmonotonic(void) {
  enum { N = 64 };
  int owner[N], ull_owner[N];
  long sum = 0;
  unsigned long long usum = 0;
  /* Bounds the compiler cannot see: an unsigned long long loop then keeps its type. */
  volatile unsigned long long vn = N;
  unsigned long long un = vn;
  memset(owner, -1, sizeof owner);
  memset(ull_owner, -1, sizeof ull_owner);
#pragma omp parallel num_threads(2)
  {
#pragma omp for schedule(nonmonotonic : runtime) reduction(task, + : sum)
    for (long i = 0; i < N; i++) {
      owner[i] = omp_get_thread_num();
#pragma omp task in_reduction(+ : sum)
      sum += i;
    }
#pragma omp for schedule(nonmonotonic : runtime) reduction(task, + : usum)
    for (unsigned long long i = 0; i < un; i++) {
      ull_owner[i] = omp_get_thread_num();
#pragma omp task in_reduction(+ : usum)
      usum += i;
    }
  }
  if (sum != N * (N - 1) / 2 || usum != N * (N - 1) / 2)
    FAIL("the task reductions gave %ld and %llu, not %d", sum, usum, N * (N - 1) / 2);
  for (int i = 0; i < N; i++) {
    if (owner[i] != i % 2)
      FAIL("long loop: iteration %d ran on thread %d, not %d (OMP_SCHEDULE=static,1)", i, owner[i],
           i % 2);
    if (ull_owner[i] != i % 2)
      FAIL(
          "unsigned long long loop: iteration %d ran on thread %d, not %d (OMP_SCHEDULE="
          "static,1)",
          i, ull_owner[i], i % 2);
  }
  return 0;
}

/* OMP_NUM_THREADS=3,2 (or OMP_PROC_BIND with a list): a list asks for nesting, not for as many
 * levels as it has entries: max-active-levels-var is the supported maximum, and a level past
 * the list takes the list's last entry. */
static int test_levels_list(void) {
  int levels = omp_get_max_active_levels();
  if (levels < 3) FAIL("max-active-levels-var is %d with a list", levels);
  int bad = 0, deepest = 0;
#pragma omp parallel reduction(+ : bad)
  {
#pragma omp parallel reduction(+ : bad)
    {
#pragma omp parallel reduction(+ : bad)
      {
        if (omp_get_active_level() != 3) bad++;
        if (omp_get_num_threads() != 2) bad++;
#pragma omp atomic write
        deepest = omp_get_num_threads();
      }
    }
  }
  if (bad)
    FAIL("%d members of the third level were not in an active team of 2 (last: %d)", bad, deepest);
  return 0;
}

/* OMP_THREAD_LIMIT=4: each initial thread is a contention group of its own. Four threads start
 * a region of 4 at once (each region's member 0 waits until all four regions have started):
 * each gets 4, as on libgomp; one region asking for 8 gets 4. */
enum { GROUPS = 4 };
static pthread_barrier_t groups_started;
static int group_size[GROUPS];
static void *group(void *arg) {
  int g = (int)(long)arg;
#pragma omp parallel num_threads(4)
  {
#pragma omp master
    {
      group_size[g] = omp_get_num_threads();
      pthread_barrier_wait(&groups_started);
    }
  }
  return NULL;
}
static int test_thread_limit_groups(void) {
  if (omp_get_thread_limit() != 4) FAIL("omp_get_thread_limit() is %d", omp_get_thread_limit());
  int n8 = 0;
#pragma omp parallel num_threads(8)
#pragma omp master
  n8 = omp_get_num_threads();
  if (n8 != 4) FAIL("a region of 8 got %d threads under OMP_THREAD_LIMIT=4", n8);
  pthread_t th[GROUPS];
  pthread_barrier_init(&groups_started, NULL, GROUPS);
  for (int g = 0; g < GROUPS; g++)
    if (pthread_create(&th[g], NULL, group, (void *)(long)g) != 0) FAIL("pthread_create");
  for (int g = 0; g < GROUPS; g++) pthread_join(th[g], NULL);
  for (int g = 0; g < GROUPS; g++)
    if (group_size[g] != 4)
      FAIL("the region of initial thread %d got %d threads (4 4 4 4 wanted: %d %d %d %d)", g,
           group_size[g], group_size[0], group_size[1], group_size[2], group_size[3]);
  return 0;
}

int main(int argc, char **argv) {
  static const NamedTest tests[] = {
      {"sched-runtime-nonmonotonic", test_sched_runtime_nonmonotonic},
      {"levels-list", test_levels_list},
      {"thread-limit-groups", test_thread_limit_groups},
  };
  return run_by_name(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
