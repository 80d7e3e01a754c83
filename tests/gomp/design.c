/* design.c: the design points of libmrgomp (doc/gomp.md), as a gcc -fopenmp program that
 * tests/gomp/check-design.sh runs against this tree's libgomp.so.1. `design NAME` runs one test
 * and exits 0 if it holds; each failure says what was wrong. */
#include "design.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

int tp_value = -1;

/* The runtime loaded is mrengine's: its C ABI is in the process and its engines run. */
static int mrengine_engines(void) {
  int (*num_engines)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_num_engines");
  return num_engines ? num_engines() : -1;
}

static int test_runtime(void) {
  int n = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    n = mrengine_engines();
  }
  if (n < 1) FAIL("MR_num_engines() is %d: the program did not run on mrengine", n);
  return 0;
}

/* A team of 10 on 2 engines: 10 distinct OS threads; member 0 is the caller's thread; member i
 * is the same OS thread in consecutive regions, so its threadprivate value survives. */
static int test_threadprivate(void) {
  enum { N = 10, ROUNDS = 5 };
  long tids[ROUNDS][N];
  long main_tid = os_tid();
  for (int r = 0; r < ROUNDS; r++) {
    int bad = 0;
#pragma omp parallel num_threads(N) reduction(+ : bad)
    {
      int me = omp_get_thread_num();
      if (omp_get_num_threads() != N) bad++;
      if (r > 0 && tp_value != me * 100 + r - 1) bad++;
      tp_value = me * 100 + r;
      tids[r][me] = os_tid();
#pragma omp barrier
      if (tp_value != me * 100 + r) bad++;
    }
    if (bad) FAIL("round %d: %d members saw a wrong team size or threadprivate value", r, bad);
    if (tids[r][0] != main_tid) FAIL("round %d: member 0 did not run on the calling thread", r);
    for (int i = 0; i < N; i++)
      for (int j = i + 1; j < N; j++)
        if (tids[r][i] == tids[r][j])
          FAIL("round %d: members %d and %d share an OS thread", r, i, j);
    if (r > 0)
      for (int i = 0; i < N; i++)
        if (tids[r][i] != tids[r - 1][i]) FAIL("member %d changed OS thread between regions", i);
  }
  return 0;
}

/* Use `bytes` of this thread's stack (every page written): more than a default thread stack
 * holds. */
static __attribute__((noinline)) int deep_stack(size_t bytes, int me) {
  volatile char buf[bytes];
  for (size_t i = 0; i < bytes; i += 4096) buf[i] = (char)me;
  return buf[bytes / 2] == (char)me;
}

/* With OMP_STACKSIZE=64M (check-design.sh), every member but the initial thread (whose stack is
 * the process's) has 64 MiB of stack: members on engines (contexts), on slot threads (a team
 * larger than the engines) and on pool threads (a nested team) each use 24 MiB of it. */
static int test_stacksize(void) {
  enum { MB = 1 << 20 };
  int ok = 0, nested_ok = 0;
#pragma omp parallel num_threads(3) reduction(+ : ok, nested_ok)
  {
    int me = omp_get_thread_num();
    ok += me == 0 || deep_stack(24 * MB, me);
#pragma omp parallel num_threads(2) reduction(+ : nested_ok)
    {
      int inner = omp_get_thread_num();
      nested_ok += (me == 0 && inner == 0) || deep_stack(24 * MB, inner);
    }
  }
  if (ok != 3) FAIL("%d of 3 members used their stack", ok);
  if (nested_ok != 6) FAIL("%d of 6 nested members used their stack", nested_ok);
  return 0;
}

/* A barrier separates phases: no member sees another's next-phase write early. */
static int test_barrier(void) {
  enum { N = 6, PHASES = 200 };
  int phase_of[N];
  int bad = 0;
#pragma omp parallel num_threads(N) reduction(+ : bad)
  {
    int me = omp_get_thread_num();
    for (int p = 0; p < PHASES; p++) {
      /* relaxed: the barrier is what must order these (the test checks that it does). */
      __atomic_store_n(&phase_of[me], p, __ATOMIC_RELAXED);
#pragma omp barrier
      for (int i = 0; i < N; i++) /* relaxed: as the store */
        if (__atomic_load_n(&phase_of[i], __ATOMIC_RELAXED) != p) bad++;
#pragma omp barrier
    }
  }
  if (bad) FAIL("%d reads saw a member in another phase across a barrier", bad);
  return 0;
}

/* Nested locks are owned by tasks: the owner re-enters, another task waits. */
static int test_locks(void) {
  omp_nest_lock_t nl;
  omp_lock_t l;
  omp_init_nest_lock(&nl);
  omp_init_lock(&l);
  long nested = 0, simple = 0; /* one counter per lock */
#pragma omp parallel num_threads(4)
  for (int i = 0; i < 1000; i++) {
    omp_set_nest_lock(&nl);
    omp_set_nest_lock(&nl);
    nested++;
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl);
    omp_set_lock(&l);
    simple++;
    omp_unset_lock(&l);
  }
  if (nested != 4000 || simple != 4000) FAIL("counters are %ld and %ld, not 4000", nested, simple);
  if (omp_test_nest_lock(&nl) != 1 || omp_test_nest_lock(&nl) != 2) FAIL("nest lock depth wrong");
  omp_unset_nest_lock(&nl);
  omp_unset_nest_lock(&nl);
  omp_destroy_nest_lock(&nl);
  omp_destroy_lock(&l);
  return 0;
}

/* Allocator traits are omp_alloctrait_t: a 4-byte key, then padding, then the value. The padding
 * holds whatever the storage held (here every byte set first), and the traits still give an
 * allocator with their alignment, pool size and fallback. */
static int test_alloc_traits(void) {
  omp_alloctrait_t traits[3];
  memset(traits, 0xa5, sizeof traits);
  traits[0].key = omp_atk_alignment;
  traits[0].value = 256;
  traits[1].key = omp_atk_pool_size;
  traits[1].value = 4096;
  traits[2].key = omp_atk_fallback;
  traits[2].value = omp_atv_null_fb;
  omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 3, traits);
  if (a == omp_null_allocator) FAIL("omp_init_allocator refused valid traits");
  void *p = omp_alloc(1000, a);
  if (!p || (uintptr_t)p % 256 != 0) FAIL("omp_alloc gave %p, not 256-byte aligned", p);
  if (omp_alloc(4000, a) != NULL) FAIL("the pool of 4096 bytes gave 1000 and then 4000");
  omp_free(p, a);
  omp_destroy_allocator(a);
  /* A size whose total with the header wraps around is refused, not given a small block. */
  if (omp_alloc(SIZE_MAX - 8, omp_default_mem_alloc) != NULL)
    FAIL("omp_alloc(SIZE_MAX - 8) gave a block");
  return 0;
}

/* An unsupported entry point (GOMP_offload_register: there are no offload devices) stops the
 * program with the runtime's message (check-design.sh checks the message and the status). */
void GOMP_offload_register(const void *host_table, int target_type, const void *target_data);
static int test_unsupported(void) {
#pragma omp parallel num_threads(2)
  GOMP_offload_register(NULL, 0, NULL);
  return 0;
}

/* Nonmonotonic dynamic loops hand each member its own run of chunks, and a member whose run is
 * empty steals the back half of the longest other run: every iteration runs exactly once, for
 * loops of every shape (empty, fewer iterations than members, a partial last chunk, several
 * nowait loops in a row, the combined parallel-loop form), and a member whose own iterations
 * are slow gets help. */
static int test_nonmonotonic(void) {
  enum { MAXN = 3000 };
  static int count[MAXN];
  static const int sizes[] = {0, 1, 2, 3, 7, 64, 65, 1000, 2999};
  static const int chunks[] = {1, 2, 5, 64};
  for (int rep = 0; rep < 10; rep++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
        int n = sizes[si], c = chunks[ci], nt = 2 + rep % 2;
        memset(count, 0, sizeof count);
#pragma omp parallel num_threads(nt)
        {
#pragma omp for schedule(nonmonotonic : dynamic, c) nowait
          for (int i = 0; i < n; i++) __atomic_add_fetch(&count[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(nonmonotonic : dynamic, c) nowait
          for (int i = n - 1; i >= 0; i--) __atomic_add_fetch(&count[i], 10, __ATOMIC_RELAXED);
#pragma omp for schedule(nonmonotonic : dynamic, c + 1) nowait
          for (int i = 0; i < n; i += 2) __atomic_add_fetch(&count[i], 100, __ATOMIC_RELAXED);
        }
#pragma omp parallel for schedule(nonmonotonic : dynamic, c) num_threads(nt)
        for (int i = 0; i < n; i++) __atomic_add_fetch(&count[i], 1000, __ATOMIC_RELAXED);
        for (int i = 0; i < n; i++) {
          int want = 1011 + (i % 2 == 0 ? 100 : 0);
          if (count[i] != want)
            FAIL("%d iterations, chunk %d, %d threads: iteration %d counted %d, not %d", n, c, nt,
                 i, count[i], want);
        }
      }
  /* Member 0's run is the first half, and each of its iterations takes 200 us: member 1, done
   * with its own half at once, must take some of member 0's. */
  enum { N = 200 };
  int who[N];
#pragma omp parallel for schedule(nonmonotonic : dynamic, 1) num_threads(2)
  for (int i = 0; i < N; i++) {
    if (i < N / 2) usleep(200);
    who[i] = omp_get_thread_num();
  }
  int helped = 0;
  for (int i = 0; i < N / 2; i++) helped += who[i] == 1;
  if (helped == 0) FAIL("member 1 took none of member 0's slow iterations");
  /* gcc's code copies lastprivate and linear variables out of the member whose last chunk ends
   * the loop: that member must take no earlier chunk afterwards, however the others steal. */
  for (int rep = 0; rep < 200; rep++) {
    int n = 3 + rep % 40, last = -1, lin = 5;
#pragma omp parallel for schedule(nonmonotonic                                    \
                                  : dynamic, 1) lastprivate(last) linear(lin : 3) \
    num_threads(2 + rep % 2)
    for (int i = 0; i < n; i++) {
      if (i < n / 3 && rep % 3 == 0) usleep(50); /* the first run is slow: the others steal */
      last = i;
      lin += 3;
    }
    if (last != n - 1 || lin != 5 + 3 * n)
      FAIL("%d iterations: lastprivate %d (not %d), linear %d (not %d)", n, last, n - 1, lin,
           5 + 3 * n);
  }
  return 0;
}

/* Consecutive top-level regions reuse their team: single runs once per region, loops of the
 * runtime schedule (set between regions, combined form included) start from their first chunk
 * in every region and see the schedule just set, and teams of other sizes in between are
 * their own. */
static int test_kept_team(void) {
  enum { N = 50 };
  static const omp_sched_t kinds[] = {omp_sched_static, omp_sched_dynamic, omp_sched_guided};
  for (int r = 0; r < 300; r++) {
    int nt = r % 7 == 6 ? 3 : r % 11 == 10 ? 1 : 2;
    omp_sched_t kind = kinds[r % 3];
    int chunk = r % 4; /* 0: the kind's default */
    omp_set_schedule(kind, chunk);
    int count[N] = {0}, count2[N] = {0}, singles = 0, wrong_icv = 0, size = 0;
#pragma omp parallel num_threads(nt)
    {
      omp_sched_t k;
      int c;
      omp_get_schedule(&k, &c);
      if (k != kind || c != (chunk ? chunk : k == omp_sched_static ? 0 : 1))
        __atomic_add_fetch(&wrong_icv, 1, __ATOMIC_RELAXED);
#pragma omp single
      {
        singles++;
        size = omp_get_num_threads();
      }
#pragma omp for schedule(runtime)
      for (int i = 0; i < N; i++) __atomic_add_fetch(&count[i], 1, __ATOMIC_RELAXED);
#pragma omp single nowait
      singles++;
    }
#pragma omp parallel for schedule(runtime) num_threads(nt)
    for (int i = 0; i < N; i++) __atomic_add_fetch(&count2[i], 1, __ATOMIC_RELAXED);
    if (size != nt) FAIL("region %d: a team of %d, not %d", r, size, nt);
    if (singles != 2) FAIL("region %d: single constructs ran %d times, not 2", r, singles);
    if (wrong_icv)
      FAIL("region %d: %d members did not see the schedule set before it", r, wrong_icv);
    for (int i = 0; i < N; i++)
      if (count[i] != 1 || count2[i] != 1)
        FAIL("region %d (schedule %d, chunk %d, %d threads): iteration %d ran %d and %d times", r,
             (int)kind, chunk, nt, i, count[i], count2[i]);
  }
  return 0;
}

static void spin_us(int us) {
  double until = omp_get_wtime() + us * 1e-6;
  while (omp_get_wtime() < until) {}
}

/* k top-level regions of 2 members, each checking its team; the creator stays busy between
 * regions without suspending. */
static void regions_of_two(int k, int *wrong) {
  for (int r = 0; r < k; r++) {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_num_threads() != 2) __atomic_add_fetch(wrong, 1, __ATOMIC_RELAXED);
      if (omp_get_thread_num() == 0) spin_us(30);
    }
    spin_us(20);
  }
}

/* Top-level regions started by two engines at once (a detached task's, deferred in the team of
 * one outside any region, and main's): each region gets the team it asks for, and neither
 * creator waits for a kept team whose member can only run on its own engine. */
static int test_two_creators(void) {
  int wrong = 0;
  for (int it = 0; it < 5; it++) {
    omp_event_handle_t ev;
#pragma omp task detach(ev) shared(wrong)
    regions_of_two(300, &wrong);
    usleep(2000);
    regions_of_two(300, &wrong);
    omp_fulfill_event(ev);
#pragma omp taskwait
  }
  if (wrong) FAIL("%d regions had a team of the wrong size", wrong);
  return 0;
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

/* Between regions the other members look for the next region only briefly, then park: while
 * the program sleeps between regions, the process uses almost no processor time. */
static int test_idle(void) {
  int sum = 0;
  for (int r = 0; r < 3; r++) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
    sum += 1;
  }
  if (sum != 6) FAIL("the regions counted %d members, not 6", sum);
  double before = cpu_seconds();
  struct timespec ts = {0, 400 * 1000 * 1000};
  nanosleep(&ts, NULL);
  double used = cpu_seconds() - before;
  if (used > 0.1) FAIL("%.0f ms of processor time while the program slept 400 ms", used * 1e3);
  return 0;
}

/* A program that starts mrengine itself may shut it down after its OpenMP regions: the team
 * members parked on their engines between regions do not keep MR_shutdown waiting. */
static int test_shutdown(void) {
  int (*init)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "MR_init");
  int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_shutdown");
  if (!init || !shutdown) FAIL("mrengine's MR_init and MR_shutdown are not in the process");
  int rc = init(NULL);
  if (rc != 0) FAIL("MR_init: %d", rc);
  int count[100] = {0};
  for (int r = 0; r < 20; r++) {
#pragma omp parallel for schedule(dynamic, 3) num_threads(2)
    for (int i = 0; i < 100; i++) __atomic_add_fetch(&count[i], 1, __ATOMIC_RELAXED);
  }
  for (int i = 0; i < 100; i++)
    if (count[i] != 20) FAIL("iteration %d ran %d times in 20 regions", i, count[i]);
  struct timespec ts = {0, 5 * 1000 * 1000}; /* past the members' search: they have parked */
  nanosleep(&ts, NULL);
  alarm(20); /* a shutdown that waits for the parked members never returns */
  rc = shutdown();
  if (rc != 0) FAIL("MR_shutdown: %d", rc);
  return 0;
}

int main(int argc, char **argv) {
  static const NamedTest tests[] = {
      {"runtime", test_runtime},
      {"threadprivate", test_threadprivate},
      {"barrier", test_barrier},
      {"stacksize", test_stacksize},
      {"tied", test_tied},
      {"depend", test_depend},
      {"depend-release", test_depend_release},
      {"depend-wavefront", test_depend_wavefront},
      {"barrier-tasks", test_barrier_runs_tasks},
      {"locks", test_locks},
      {"ordered", test_ordered},
      {"task-reduction", test_task_reduction},
      {"cancel-undeferred", test_cancel_undeferred},
      {"depend-undeferred", test_depend_undeferred},
      {"complete-taskwait", test_complete_taskwait},
      {"complete-depend", test_complete_depend},
      {"complete-undeferred", test_complete_undeferred},
      {"complete-group-owed", test_complete_group_owed},
      {"complete-group-owed-nested", test_complete_group_owed_nested},
      {"spawned-member0", test_spawned_member0},
      {"lazy-absent", test_lazy_absent},
      {"spawned-shutdown", test_spawned_shutdown},
      {"current-suspend", test_current_suspend},
      {"current-program", test_current_program},
      {"foreign-ordered", test_foreign_ordered},
      {"foreign-critical", test_foreign_critical},
      {"alone-order", test_alone_order},
      {"alone-detach-depend", test_alone_detach_depend},
      {"oversubscribed", test_oversubscribed},
      {"oversubscribed-yield", test_oversubscribed_yield},
      {"nonmonotonic", test_nonmonotonic},
      {"kept-team", test_kept_team},
      {"idle", test_idle},
      {"shutdown", test_shutdown},
      {"two-creators", test_two_creators},
      {"alloc-traits", test_alloc_traits},
      {"unsupported", test_unsupported},
  };
  return run_by_name(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
