/* inline_client.c: a client of the inline fork and join, built -fPIC into a shared library
 * (tests/libinlineclient.la), the way a language's runtime or a plugin links mrengine. Its fib
 * forks one branch per call; a stolen branch makes its parent suspend at the join and resume on
 * the thief's engine, so the same call frame runs on two OS threads, and every later fork and
 * join in it must use the engine it runs on now (mrengine.h, MR_view_now_). */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "inline_client.h"
#include "mrengine.h"
#include "mrengine_stats.h"

struct arg {
  int n;
  long r;
};

/* The engine the inline fork and join of this frame would use now. */
static __inline__ __attribute__((always_inline)) int view_engine(void) {
#ifdef MR_INLINE_FORKS
  const MR_EngineView *v = MR_view_now_();
  return v ? (int)v->engine : -1;
#else
  return MR_engine_id();
#endif
}

static void branch(void *env) {
  struct arg *a = env;
  a->r = inline_client_fib(a->n);
}

/* A leaf that takes a little while now and then, so that the other engine steals. */
static long leaf(int n) {
  volatile long spin = 0; /* volatile: the loop is not optimised away */
  long i;
  if ((n & 1) == 0) return n;
  for (i = 0; i < 200; i++) spin = spin + i;
  return n;
}

long inline_client_fib(int n) {
  MR_SyncTerm st;
  struct arg a[2];
  int before, k;
  long b = 0;
  if (n < 2) return leaf(n);
  /* Two conjunctions in one frame, in a loop: fib(n-1) | fib(n-2), then fib(n-2) again | nothing.
   * A compiler that kept the thread-local's address across the first join (it is invariant to
   * the compiler) would use the old engine's view in the second fork and join. */
  for (k = 0; k < 2; k++) {
    a[k].n = n - 1 - k;
    a[k].r = 0;
    before = MR_engine_id();
    MR_sync_term_init(&st, 2);
    MR_fork_new_child(&st, branch, &a[k]);
    if (k == 0) b = inline_client_fib(n - 2);
    MR_join_and_continue(&st);
    inline_client_note(before, MR_engine_id(), view_engine());
  }
  return a[1].r == b ? a[0].r + b : -1;
}

/* ---- A move made on purpose ------------------------------------------------------------------ */

struct stay {
  int parent_engine;  /* the engine of the frame that forked it */
  atomic_int stolen;  /* set by the branch when it runs on another engine */
  atomic_int joining; /* set by the parent before its join */
  uint64_t suspends;  /* the parent engine's suspensions before that join */
};

static uint64_t suspends_on(int engine) {
  MR_EngineStats s;
  MR_engine_stats_init(&s);
  return MR_stats_get(engine, &s) == 0 ? s.contexts_suspended : 0;
}

#define TEN_SECONDS 10000000000u /* ns, MR_now's unit */

/* Run in place by its parent, it returns at once. Stolen, it keeps running until the parent's
 * engine has counted the parent's suspension at the join, and 5 ms more for the parent's own
 * arrival that follows it (switch.hpp): then this branch arrives last and resumes the parent on
 * this engine. Each wait gives up after 10 s (the parent then resumes where it suspended). */
static void stay_until_parent_waits(void *env) {
  struct stay *s = env;
  struct timespec pause = {0, 5000000};
  uint64_t deadline;
  if (MR_engine_id() == s->parent_engine) return;
  atomic_store(&s->stolen, 1);
  deadline = MR_now() + TEN_SECONDS;
  while (!atomic_load(&s->joining) && MR_now() < deadline) sched_yield();
  while (suspends_on(s->parent_engine) == s->suspends && MR_now() < deadline) sched_yield();
  nanosleep(&pause, NULL);
}

int inline_client_move(void) {
  MR_SyncTerm st;
  struct stay s;
  struct arg a;
  uint64_t deadline;
  int before = MR_engine_id(), stolen, moved;
  long b;
  s.parent_engine = before;
  atomic_init(&s.stolen, 0);
  atomic_init(&s.joining, 0);
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, stay_until_parent_waits, &s);
  /* A context's first spark is published (H1: none of its engine's is yet): wait here, without
   * calling the runtime, until the other engine takes it. */
  deadline = MR_now() + TEN_SECONDS;
  while (!atomic_load(&s.stolen) && MR_now() < deadline) sched_yield();
  stolen = atomic_load(&s.stolen);
  s.suspends = suspends_on(before);
  atomic_store(&s.joining, 1);
  MR_join_and_continue(&st);
  moved = MR_engine_id() != before;
  inline_client_note(before, MR_engine_id(), view_engine());
  /* A second conjunction in the frame that moved. */
  before = MR_engine_id();
  a.n = 10;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, branch, &a);
  b = inline_client_fib(9);
  MR_join_and_continue(&st);
  inline_client_note(before, MR_engine_id(), view_engine());
  return stolen && a.r + b == 89 ? moved : -1;
}
