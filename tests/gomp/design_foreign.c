/* design_foreign.c: the tasks of members on threads that are not engines (slot and pool
 * threads: doc/gomp.md, "Which thread runs what"): a member's taskwait runs its own child that
 * has not started, so it does not wait for an engine while the engines' members wait for it
 * without running tasks (in ordered, a critical section, a spin on a flag). design.c runs them
 * by name. */
#include "design.h"

enum { ROUNDS = 20 };

/* An ordered loop of 4 members on 2 engines (members 2 and 3 on slot threads) whose body runs
 * a task and waits for it before its ordered region. */
int test_foreign_ordered(void) {
  for (int r = 0; r < ROUNDS; r++) {
    int next = 0, bad = 0;
#pragma omp parallel for ordered schedule(static, 1) num_threads(4) shared(next, bad)
    for (int i = 0; i < 16; i++) {
      int v = 0;
#pragma omp task shared(v)
      v = i + 1;
#pragma omp taskwait
      if (v != i + 1) __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED); /* relaxed: a count */
#pragma omp ordered
      {
        if (next != i) bad++;
        next = i + 1;
      }
    }
    if (bad) FAIL("round %d: %d iterations saw their task unfinished or ran out of order", r, bad);
  }
  return 0;
}

/* The same loop on 2 engines (check-design.sh), with waits a slot thread cannot finish alone:
 * the member waits for a task that only an engine runs (a taskgroup's, a taskloop's, a task
 * held for its dependences, a taskwait with dependences), while the members on the engines wait
 * in ordered for its iteration. They suspend while they wait, and their engines run the task:
 * the loop hung (30 s of 30) when they spun holding their engines. */
int test_foreign_ordered_engine_tasks(void) {
  for (int kind = 0; kind < 4; kind++) {
    int next = 0, bad = 0;
#pragma omp parallel for ordered schedule(static, 1) num_threads(4) shared(next, bad)
    for (int i = 0; i < 8; i++) {
      int x = 0;
      if (kind == 0) {
#pragma omp taskgroup
        {
#pragma omp task shared(x)
          x = 1;
        }
      } else if (kind == 1) {
#pragma omp taskloop shared(x) num_tasks(2)
        for (int k = 0; k < 2; k++) __atomic_add_fetch(&x, 1, __ATOMIC_RELAXED); /* a count */
        x = x == 2;
      } else if (kind == 2) {
#pragma omp task depend(out : x) shared(x)
        x = 1;
#pragma omp task if (0) depend(inout : x) shared(x)
        x = x == 1;
      } else {
#pragma omp task depend(out : x) shared(x)
        x = 1;
#pragma omp taskwait depend(in : x)
      }
      if (x != 1) __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED); /* relaxed: a count */
#pragma omp ordered
      {
        if (next != i) bad++;
        next = i + 1;
      }
    }
    if (bad)
      FAIL("kind %d: %d iterations saw their task unfinished or ran out of order", kind, bad);
  }
  return 0;
}

/* A task and its taskwait inside a critical section, in a team larger than the engines
 * (check-design.sh runs it on 1 engine): member 1, on a slot thread, holds the section while
 * member 0, on the engine, waits for it. */
int test_foreign_critical(void) {
  for (int r = 0; r < ROUNDS; r++) {
    int sum = 0;
#pragma omp parallel num_threads(2) shared(sum)
    {
#pragma omp critical
      {
        int v = 0;
#pragma omp task shared(v)
        v = 1;
#pragma omp taskwait
        sum += v;
      }
    }
    if (sum != 2) FAIL("round %d: the tasks added %d, not 2", r, sum);
  }
  return 0;
}
