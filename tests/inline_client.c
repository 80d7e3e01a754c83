/* inline_client.c: a client of the inline fork and join, built -fPIC into a shared library
 * (tests/libinlineclient.la), the way a language's runtime or a plugin links mrengine. Its fib
 * forks one branch per call; a stolen branch makes its parent suspend at the join and resume on
 * the thief's engine, so the same call frame runs on two OS threads, and every later fork and
 * join in it must use the engine it runs on now (mrengine.h, MR_view_now_). */
#include <stddef.h>

#include "inline_client.h"
#include "mrengine.h"

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
