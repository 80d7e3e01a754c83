/* design_alone.c: the tasks of a team of one thread run at once, so a search goes depth-first
 * (doc/gomp.md, "Waiting"), except those that cannot: a detached task, and a task whose
 * predecessors have not completed. check-design.sh runs these on 2 engines: the second engine
 * is no thread of the team and does not change the order. */
#include <string.h>

#include "design.h"

/* The order, one letter per step, of a task tree: a at the start, b in a task, c in that
 * task's child, d after the child's creation, e after the first task's creation. Depth-first
 * gives "abcde"; deferred tasks, "ae" first. */
static char order[16];
static int steps;

static void step(char c) { order[steps++] = c; }

static void tree(void) {
  steps = 0;
  step('a');
#pragma omp task
  {
    step('b');
#pragma omp task
    step('c');
    step('d');
  }
  step('e');
#pragma omp taskwait
  order[steps] = '\0';
}

int test_alone_order(void) {
  tree(); /* outside any parallel region: the initial team has one thread */
  if (strcmp(order, "abcde") != 0) FAIL("outside a region: order %s, not abcde", order);
#pragma omp parallel num_threads(1)
  tree();
  if (strcmp(order, "abcde") != 0) FAIL("in a team of one: order %s, not abcde", order);
#pragma omp parallel num_threads(1)
#pragma omp single
  tree();
  if (strcmp(order, "abcde") != 0) FAIL("in a single of a team of one: order %s", order);
  return 0;
}

/* A task that depends on a detached sibling waits for the event, fulfilled later by the one
 * thread (it must not run at once and wait there: nothing would fulfil the event), while an
 * independent task created after it still runs at once. */
int test_alone_detach_depend(void) {
  for (int r = 0; r < 50; r++) {
    int x = 0, y = 0, z = 0;
    omp_event_handle_t ev;
#pragma omp parallel num_threads(1) shared(x, y, z, ev)
#pragma omp single
    {
#pragma omp task depend(out : x) detach(ev) shared(x)
      x = 1;
#pragma omp task depend(in : x) shared(x, y)
      y = x + 1;
#pragma omp task shared(z)
      z = 1;
      if (z != 1) FAIL("round %d: an independent task did not run at once", r);
      if (y != 0) FAIL("round %d: a task ran before its predecessor completed", r);
      omp_fulfill_event(ev);
#pragma omp taskwait
      if (y != 2) FAIL("round %d: y = %d after the taskwait, not 2", r, y);
    }
  }
  return 0;
}
