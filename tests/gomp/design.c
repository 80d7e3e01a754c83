/* design.c: the design points of libmrgomp (doc/gomp.md), as a gcc -fopenmp program that
 * tests/gomp/check-design.sh runs against this tree's libgomp.so.1. `design NAME` runs one test
 * and exits 0 if it holds; each failure says what was wrong. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...)                              \
  do {                                         \
    fprintf(stderr, "design: %s: ", __func__); \
    fprintf(stderr, __VA_ARGS__);              \
    fputc('\n', stderr);                       \
    exit(1);                                   \
  } while (0)

static int tp_value = -1;
#pragma omp threadprivate(tp_value)

static long os_tid(void) { return (long)syscall(SYS_gettid); }

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

/* A tied task stays on its OS thread across taskwait, with its threadprivate values. */
static long fib_task(int n, int *moved) {
  if (n < 2) return n;
  long a, b;
  long before = os_tid();
  int *tp_addr = &tp_value;
#pragma omp task shared(a, moved) if (n > 12)
  a = fib_task(n - 1, moved);
#pragma omp task shared(b, moved) if (n > 12)
  b = fib_task(n - 2, moved);
#pragma omp taskwait
  /* relaxed: a count, read after the region's barrier. */
  if (os_tid() != before || &tp_value != tp_addr) __atomic_add_fetch(moved, 1, __ATOMIC_RELAXED);
  return a + b;
}

static int test_tied(void) {
  int moved = 0;
  long r = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
  r = fib_task(27, &moved);
  if (r != 196418) FAIL("fib(27) gave %ld", r);
  if (moved) FAIL("%d tasks resumed on another OS thread after taskwait", moved);
  return 0;
}

/* Sibling dependences: a chain of inout tasks runs in order; readers run after their writer and
 * before the next writer. */
static int test_depend(void) {
  enum { LEN = 300 };
  int x = 0, order_bad = 0, reads[LEN];
#pragma omp parallel num_threads(4)
#pragma omp single
  {
    for (int i = 0; i < LEN; i++) {
#pragma omp task depend(inout : x) shared(x, order_bad) firstprivate(i)
      {
        if (x != i) __atomic_add_fetch(&order_bad, 1, __ATOMIC_RELAXED); /* relaxed: a count */
        x = i + 1;
      }
#pragma omp task depend(in : x) shared(x, reads) firstprivate(i)
      reads[i] = x;
    }
#pragma omp taskwait
  }
  if (order_bad) FAIL("%d writers ran out of order", order_bad);
  if (x != LEN) FAIL("x is %d, not %d", x, LEN);
  for (int i = 0; i < LEN; i++)
    if (reads[i] != i + 1) FAIL("reader %d saw %d, not %d", i, reads[i], i + 1);
  return 0;
}

/* A task with pending predecessors is started by the last of them to complete, once: a diamond
 * (a; b and c after a; d after b and c) and a fan-in (K writers of their own slots, then a
 * reader of all K, whose creation registers with writers that are completing meanwhile, their
 * bodies of different lengths), each successor checking every predecessor's effect, then a
 * writer after the reader. Every task must run exactly once. */
static int test_depend_release(void) {
  enum { ROUNDS = 3000, K = 8, TASKS = 4 + K + 2 };
  int bad = 0, runs_bad = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
  for (int r = 0; r < ROUNDS; r++) {
    int a = 0, b = 0, c = 0, d = 0, sum = 0, slot[K] = {0}, ran[TASKS] = {0};
    /* relaxed: counts, read after the taskwait. */
#define RAN(i) __atomic_add_fetch(&ran[i], 1, __ATOMIC_RELAXED)
#define BAD() __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED)
#pragma omp task depend(out : a) shared(a, ran)
    {
      RAN(0);
      a = 1;
    }
#pragma omp task depend(in : a) depend(out : b) shared(a, b, ran, bad)
    {
      RAN(1);
      if (a != 1) BAD();
      b = a + 1;
    }
#pragma omp task depend(in : a) depend(out : c) shared(a, c, ran, bad)
    {
      RAN(2);
      if (a != 1) BAD();
      c = a + 2;
    }
#pragma omp task depend(in : b, c) depend(out : d) shared(b, c, d, ran, bad)
    {
      RAN(3);
      if (b != 2 || c != 3) BAD();
      d = b + c;
    }
    for (int k = 0; k < K; k++) {
#pragma omp task depend(out : slot[k]) shared(slot, ran) firstprivate(k, r)
      {
        RAN(4 + k);
        /* A short spin that varies with the round, so that the writers complete at different
         * points of the reader's registration. */
        for (volatile int spin = (r * 7 + k * 13) % 64; spin > 0; spin--) {}
        slot[k] = k + 1;
      }
    }
#pragma omp task depend(in                                                                        \
                        : slot[0], slot[1], slot[2], slot[3], slot[4], slot[5], slot[6], slot[7], \
                          d) shared(slot, d, sum, ran, bad)
    {
      RAN(4 + K);
      int s = 0;
      for (int k = 0; k < K; k++) {
        if (slot[k] != k + 1) BAD();
        s += slot[k];
      }
      if (d != 5) BAD();
      sum = s;
    }
#pragma omp task depend(inout : slot[3]) shared(slot, sum, ran, bad)
    {
      RAN(4 + K + 1);
      if (sum != K * (K + 1) / 2) BAD();
      slot[3] = 0;
    }
#undef RAN
#undef BAD
#pragma omp taskwait
    for (int i = 0; i < TASKS; i++)
      if (ran[i] != 1) runs_bad++;
    if (slot[3] != 0) runs_bad++;
  }
  if (bad) FAIL("%d successors missed a predecessor's effect", bad);
  if (runs_bad) FAIL("%d tasks did not run exactly once", runs_bad);
  return 0;
}

/* A long wavefront left to the barrier: one member creates a grid of tasks, each after its upper
 * and left neighbours (created first), most of them before their predecessors complete, and the
 * region's end joins them all. Each checks that its neighbours ran before it. */
static int test_depend_wavefront(void) {
  enum { N = 40, SWEEPS = 10 };
  static int cell[N + 1][N + 1];
  int bad = 0;
  memset(cell, 0, sizeof cell);
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int s = 1; s <= SWEEPS; s++)
    for (int i = 1; i <= N; i++)
      for (int j = 1; j <= N; j++) {
#pragma omp task depend(inout                                                  \
                        : cell[i][j]) depend(in                                \
                                             : cell[i - 1][j], cell[i][j - 1]) \
    firstprivate(i, j, s) shared(cell, bad)
        {
          /* The row above and the column to the left have done this sweep (the border is 0). */
          if ((i > 1 && cell[i - 1][j] != s) || (j > 1 && cell[i][j - 1] != s) ||
              cell[i][j] != s - 1)
            __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED); /* relaxed: a count */
          cell[i][j] = s;
        }
      }
  for (int i = 1; i <= N; i++)
    for (int j = 1; j <= N; j++)
      if (cell[i][j] != SWEEPS) FAIL("cell %d,%d ran %d sweeps, not %d", i, j, cell[i][j], SWEEPS);
  if (bad) FAIL("%d tasks ran before a predecessor", bad);
  return 0;
}

/* Every task of the team is complete when a barrier ends, whoever created it: one member creates
 * them all while the other waits at the barrier (suspended, so its engine can run them). */
static int test_barrier_runs_tasks(void) {
  enum { TASKS = 2000 };
  int done = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    for (int i = 0; i < TASKS; i++) {
#pragma omp task shared(done)
      __atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
    }
#pragma omp barrier
    if (__atomic_load_n(&done, __ATOMIC_RELAXED) != TASKS)
      __atomic_store_n(&done, -1, __ATOMIC_RELAXED);
  }
  if (done != TASKS) FAIL("tasks not complete at the barrier (%d of %d)", done, TASKS);
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

/* An unsupported entry point (omp_display_affinity: affinity formats are not implemented) stops
 * the program with the runtime's message (check-design.sh checks the message and the status). */
static int test_unsupported(void) {
#pragma omp parallel num_threads(2)
  omp_display_affinity(NULL);
  return 0;
}

/* Task reductions of a region: every task multiplies into the copy of the member whose thread
 * runs it, and no copy is initialised again after a task used it (each implicit task starts
 * by initialising its member's copy; a task that an engine ran before its member had begun
 * lost its factors). */
static int test_task_reduction(void) {
  for (int rep = 0; rep < 200; rep++) {
    long sum = 0, product = 1;
#pragma omp parallel reduction(task, + : sum) reduction(task, * : product) num_threads(4)
    {
#pragma omp for
      for (int i = 0; i < 4; i++) {
#pragma omp task in_reduction(+ : sum) in_reduction(* : product)
        {
          sum += 2;
          product *= 2;
          for (int j = 0; j < 2; j++) {
#pragma omp task in_reduction(+ : sum) in_reduction(* : product)
            {
              sum += 5;
              product *= 2;
            }
          }
        }
      }
    }
    if (sum != 48 || product != 4096)
      FAIL("round %d: sum %ld (not 48), product %ld (not 4096)", rep, sum, product);
  }
  return 0;
}

/* Ordered regions of a dynamic loop run in iteration order, whoever runs the iterations. */
static int test_ordered(void) {
  enum { N = 500 };
  int seq[N], pos = 0;
#pragma omp parallel for ordered schedule(dynamic, 3) num_threads(4)
  for (int i = 0; i < N; i++) {
#pragma omp ordered
    seq[pos++] = i;
  }
  for (int i = 0; i < N; i++)
    if (seq[i] != i) FAIL("ordered position %d holds iteration %d", i, seq[i]);
  return 0;
}

/* Cancellation (OMP_CANCELLATION=true, set by check-design.sh): once a taskgroup is cancelled,
 * no task created in it runs, neither the deferred ones nor those run undeferred: if(0), and
 * the many that fill the engine's deque so that the runtime's cut-off runs them at once. */
static int test_cancel_undeferred(void) {
  enum { TASKS = 2000 };
  int ran = 0, cancelled = 0;
  if (!omp_get_cancellation()) FAIL("OMP_CANCELLATION is not true");
#pragma omp parallel num_threads(2) shared(ran, cancelled)
#pragma omp single
#pragma omp taskgroup
  {
#pragma omp task shared(cancelled)
    {
      cancelled = 1; /* before: cancel ends the task */
#pragma omp cancel taskgroup
    }
#pragma omp taskwait
    if (!cancelled) __atomic_store_n(&ran, -1000000, __ATOMIC_RELAXED); /* relaxed: read after */
    for (int i = 0; i < TASKS; i++) {
#pragma omp task shared(ran)
      __atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED); /* relaxed: a count, read after the region */
#pragma omp task shared(ran) if (0)
      __atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED);
    }
  }
  if (ran < 0) FAIL("the cancelling task did not run");
  if (ran) FAIL("%d tasks created in a cancelled taskgroup ran", ran);
  return 0;
}

/* An undeferred task (if(0)) with dependences waits for a deferred sibling it depends on, still
 * running; once the parent has no deferred child, such tasks run at once, in order. */
static int test_depend_undeferred(void) {
  for (int r = 0; r < 200; r++) {
    int x = 0, y = 0;
#pragma omp parallel num_threads(1 + r % 3)
#pragma omp single
    {
#pragma omp task depend(out : x) shared(x)
      {
        usleep(100);
        x = 1;
      }
#pragma omp task depend(in : x) depend(out : y) shared(x, y) if (0)
      y = x + 1;
#pragma omp task depend(inout : y) shared(y)
      y *= 10;
#pragma omp taskwait
#pragma omp task depend(inout : y) shared(y) if (0)
      y += 1;
#pragma omp task depend(inout : y) shared(y) if (0)
      y *= 2;
    }
    if (x != 1 || y != 42) FAIL("round %d: x = %d, y = %d (not 1 and 42)", r, x, y);
  }
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
  static const struct {
    const char *name;
    int (*fn)(void);
  } tests[] = {
      {"runtime", test_runtime},
      {"threadprivate", test_threadprivate},
      {"barrier", test_barrier},
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
      {"nonmonotonic", test_nonmonotonic},
      {"kept-team", test_kept_team},
      {"idle", test_idle},
      {"shutdown", test_shutdown},
      {"two-creators", test_two_creators},
      {"unsupported", test_unsupported},
  };
  if (argc != 2) {
    fprintf(stderr, "usage: design TEST\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (strcmp(argv[1], tests[i].name) == 0) return tests[i].fn();
  fprintf(stderr, "design: no test %s\n", argv[1]);
  return 2;
}
