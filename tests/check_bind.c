/* check_bind.c: MR_context_bind_here, the engine feature libmrgomp's tied tasks rely on. A
 * spark whose child is stolen suspends at its join and is resumed by the child's last arrival:
 * unbound, on the child's engine (so it may change OS thread); bound, only on its own. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

enum { ROUNDS = 200 };

/* Counters of the rounds (sequentially consistent, the default: a test favours plainness). */
static atomic_int moved, suspended_joins, bind_failures;

static void slow_child(void *arg) {
  (void)arg;
  usleep(3000); /* long enough for the parent to reach its join first */
}

struct job {
  int bind;
  MR_Future done;
};

/* Sparks on the current engine's deque (MR_engine_view, as generated code reads it). */
static long local_sparks(void) {
  const MR_EngineView *v = MR_engine_view;
  return v ? (long)(AO_load(v->deque_bottom) - AO_load(v->deque_top)) : 0;
}

/* A context that forks a child, waits until another engine has taken it, then joins: the join
 * suspends, and the child's arrival resumes it. */
static void parent(void *arg) {
  struct job *j = arg;
  int before = MR_engine_id();
  if (j->bind && MR_context_bind_here() != before) atomic_fetch_add(&bind_failures, 1);
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, slow_child, NULL);
  /* Give the other engines time to steal the child (it is then not inline at the join). */
  for (int i = 0; i < 2000 && local_sparks() > 0; i++) usleep(10);
  MR_join_and_continue(&st);
  int after = MR_engine_id();
  if (after != before) atomic_fetch_add(&moved, 1);
  atomic_fetch_add(&suspended_joins, 1);
  MR_future_signal(&j->done, 1);
}

static void run_rounds(int bind) {
  atomic_store(&moved, 0);
  atomic_store(&suspended_joins, 0);
  atomic_store(&bind_failures, 0);
  for (int r = 0; r < ROUNDS; r++) {
    struct job j = {bind, MR_FUTURE_INIT};
    ck_assert_int_eq(MR_spawn(parent, &j, NULL), 0); /* unbound: any engine runs it */
    MR_future_wait(&j.done);
  }
  ck_assert_int_eq(atomic_load(&suspended_joins), ROUNDS);
}

START_TEST(test_bound_spark_stays) {
  mr_test_start(4, NULL);
  run_rounds(1);
  ck_assert_int_eq(atomic_load(&bind_failures), 0);
  ck_assert_int_eq(atomic_load(&moved), 0);
  /* The same rounds unbound do move (the check above is not vacuous). */
  run_rounds(0);
  ck_assert_int_gt(atomic_load(&moved), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

static void *foreign(void *arg) {
  *(int *)arg = MR_context_bind_here();
  return NULL;
}

START_TEST(test_not_an_engine) {
  ck_assert_int_eq(MR_context_bind_here(), MR_ENOTINIT); /* no runtime */
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_context_bind_here(), 0); /* the primordial context, on engine 0 */
  int rc = 1;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, foreign, &rc), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(rc, MR_ENOTENGINE);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("bind");
  TCase *tc = mr_tcase("bind", 60);
  tcase_add_test(tc, test_bound_spark_stays);
  tcase_add_test(tc, test_not_an_engine);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
