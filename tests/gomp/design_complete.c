/* design_complete.c: a task completes when its own code ends (and its event, if detached, is
 * fulfilled), not when its descendants do: taskwait and a dependence wait for the children
 * alone; taskgroup and barriers wait for every descendant (doc/gomp.md, "Waiting"). On a
 * runtime where a task completes only after its descendants, each of these waits forever.
 * design.c runs them by name. */
#include "design.h"

enum { ROUNDS = 400 };

/* Task P creates a detached child C; its creator's taskwait waits for P alone, then fulfils
 * C's event; the taskgroup around them waits for C as well. */
int test_complete_taskwait(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int r = 0; r < ROUNDS; r++) {
    omp_event_handle_t ev;
    int c_ran = 0;
#pragma omp taskgroup
    {
#pragma omp task shared(ev, c_ran)
      {
#pragma omp task detach(ev) shared(c_ran)
        c_ran = 1;
      }
#pragma omp taskwait
      omp_fulfill_event(ev);
    }
    if (c_ran != 1) FAIL("round %d: the taskgroup ended before the grandchild ran", r);
  }
  return 0;
}

/* P (depend out) creates a detached child C; P's successor (depend in), which P's completion
 * releases, fulfils C's event. */
int test_complete_depend(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int r = 0; r < ROUNDS; r++) {
    omp_event_handle_t ev;
    int x = 0, c_ran = 0, bad = 0;
#pragma omp taskgroup
    {
#pragma omp task depend(out : x) shared(ev, x, c_ran)
      {
#pragma omp task detach(ev) shared(c_ran)
        c_ran = 1;
        x = 1;
      }
#pragma omp task depend(in : x) shared(ev, x, bad)
      {
        if (x != 1) bad = 1;
        omp_fulfill_event(ev);
      }
    }
    if (bad) FAIL("round %d: the successor ran before its predecessor's code", r);
    if (c_ran != 1) FAIL("round %d: the taskgroup ended before the grandchild ran", r);
  }
  return 0;
}

/* An undeferred task (if(0)) completes when its code ends: its creator goes on and fulfils the
 * event of the detached child the task left. */
int test_complete_undeferred(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int r = 0; r < ROUNDS; r++) {
    omp_event_handle_t ev;
    int c_ran = 0;
#pragma omp taskgroup
    {
#pragma omp task if (0) shared(ev, c_ran)
      {
#pragma omp task detach(ev) shared(c_ran)
        c_ran = 1;
      }
      omp_fulfill_event(ev);
    }
    if (c_ran != 1) FAIL("round %d: the taskgroup ended before the grandchild ran", r);
  }
  return 0;
}

/* Tasks an undeferred task leaves become its creator's to join; a taskgroup's end joins those
 * left inside it, and their descendants, even after a taskwait inside it has joined older ones
 * left before it began, which finished first: the 300 ms grandchild still runs when the
 * taskwait joins the two 20 ms ones. */
int test_complete_group_owed(void) {
  int late = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task if (0)
    for (int i = 0; i < 2; i++) {
#pragma omp task
      usleep(20000);
    }
#pragma omp taskgroup
    {
#pragma omp task if (0) shared(late)
      {
#pragma omp task shared(late)
        {
          usleep(300000);
          __atomic_store_n(&late, 1, __ATOMIC_RELAXED);
        }
      }
      usleep(100000);
#pragma omp taskwait
    }
    if (!__atomic_load_n(&late, __ATOMIC_RELAXED))
      FAIL("the taskgroup ended before the grandchild of its task ran");
  }
  return 0;
}

/* The same in nested taskgroups: tasks left before the outer one, in it before the inner one,
 * and in the inner one; a taskwait in the inner one joins the older, finished ones. Each end
 * waits for the grandchild left inside it. */
int test_complete_group_owed_nested(void) {
  int inner = 0, outer = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task if (0)
    {
#pragma omp task
      usleep(20000);
    }
#pragma omp taskgroup
    {
#pragma omp task if (0) shared(outer)
      {
#pragma omp task shared(outer)
        {
          usleep(500000);
          __atomic_store_n(&outer, 1, __ATOMIC_RELAXED);
        }
#pragma omp task
        usleep(20000);
      }
#pragma omp taskgroup
      {
#pragma omp task if (0) shared(inner)
        {
#pragma omp task shared(inner)
          {
            usleep(300000);
            __atomic_store_n(&inner, 1, __ATOMIC_RELAXED);
          }
        }
        usleep(100000);
#pragma omp taskwait
      }
      if (!__atomic_load_n(&inner, __ATOMIC_RELAXED))
        FAIL("the inner taskgroup ended before the grandchild of its task ran");
    }
    if (!__atomic_load_n(&outer, __ATOMIC_RELAXED))
      FAIL("the outer taskgroup ended before the grandchild of its task ran");
  }
  return 0;
}
