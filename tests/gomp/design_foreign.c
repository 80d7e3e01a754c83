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
