/* design_tasks.c: the design points of libmrgomp's tasks (doc/gomp.md): tied tasks stay on
 * their thread, dependences order and release tasks, barriers run tasks, task reductions,
 * ordered loops and undeferred tasks. design.c runs them by name. */
#include "design.h"

#include <string.h>

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

int test_tied(void) {
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
int test_depend(void) {
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
int test_depend_release(void) {
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
int test_depend_wavefront(void) {
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
int test_barrier_runs_tasks(void) {
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

/* Task reductions of a region: every task multiplies into the copy of the member whose thread
 * runs it, and no copy is initialised again after a task used it (each implicit task starts
 * by initialising its member's copy; a task that an engine ran before its member had begun
 * lost its factors). */
int test_task_reduction(void) {
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
int test_ordered(void) {
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
int test_cancel_undeferred(void) {
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
int test_depend_undeferred(void) {
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
