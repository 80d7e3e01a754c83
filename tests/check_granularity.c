/* check_granularity.c: MR_par_cond_local_wsdeque_length and its frozen MR_EngineView, from a
 * client compiled as strict C99 (-std=c99 -pedantic -Werror; see Makefile.am). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "mrengine.h"
#include "testutil.h"

/* The layout: version 1's four fields, then version 2's six, then version 3's channel, then
 * version 4's published bottom, publication count, owner's copy of top and thieves' request.
 * These offsets are part of the ABI and never change. */
START_TEST(test_view_layout_is_frozen) {
  const size_t p = sizeof(void *), w = sizeof(AO_t);
  ck_assert_uint_eq(offsetof(MR_EngineView, deque_top), 0);
  ck_assert_uint_eq(offsetof(MR_EngineView, deque_bottom), p);
  ck_assert_uint_eq(offsetof(MR_EngineView, spark_threshold), 2 * p);
  ck_assert_uint_eq(offsetof(MR_EngineView, version), 2 * p + w);
  ck_assert_uint_eq(offsetof(MR_EngineView, engine), 2 * p + 2 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, slow), 2 * p + 3 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, deque_array), 2 * p + 4 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, census), 3 * p + 4 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, sparks_pushed), 4 * p + 4 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, sparks_run_local), 5 * p + 4 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, channel), 6 * p + 4 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, deque_published), 6 * p + 5 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, publish_below), 7 * p + 5 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, deque_top_copy), 7 * p + 6 * w);
  ck_assert_uint_eq(offsetof(MR_EngineView, publish_wanted), 8 * p + 6 * w);
  ck_assert_uint_eq(sizeof(MR_EngineView), 9 * p + 6 * w);
  ck_assert_uint_eq(sizeof(MR_SparkSlot), 3 * w);
  ck_assert_uint_eq(offsetof(MR_SparkArray, slots), w + p);
  ck_assert_int_eq(MR_ENGINE_VIEW_VERSION, 4);
}
END_TEST

static void nothing(void *env) { (void)env; }

/* One engine (no thief), factor 3: the answer is "spark" while fewer than 3 sparks wait. */
START_TEST(test_threshold_is_factor_times_engines) {
  mr_test_start(0, "-P 1 --granularity-factor 3");
  ck_assert_ptr_nonnull(MR_engine_view);
  ck_assert_uint_eq(MR_engine_view->spark_threshold, 3);
  ck_assert_uint_eq(MR_engine_view->version, MR_ENGINE_VIEW_VERSION);
  ck_assert_ptr_eq(MR_engine_view_v4, MR_engine_view);
  ck_assert_uint_eq(MR_engine_view->engine, 0);
  MR_SyncTerm st;
  MR_sync_term_init(&st, 6);
  for (int k = 0; k < 5; k++) {
    ck_assert_int_eq(MR_par_cond_local_wsdeque_length(), k < 3);
    MR_fork_new_child(&st, nothing, NULL);
  }
  MR_join_and_continue(&st);
  ck_assert_int_eq(MR_par_cond_local_wsdeque_length(), 1); /* empty again */
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_ptr_null(MR_engine_view);
  ck_assert_int_eq(MR_par_cond_local_wsdeque_length(), 0);
}
END_TEST

START_TEST(test_default_factor_and_zero) {
  mr_test_start(0, "-P 2");
  ck_assert_uint_eq(MR_engine_view->spark_threshold, 16); /* 8 x 2 engines */
  ck_assert_int_eq(MR_shutdown(), 0);
  mr_test_start(0, "-P 2 --granularity-factor=0");
  ck_assert_int_eq(MR_par_cond_local_wsdeque_length(), 0); /* never spark */
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

static void *foreign(void *out) {
  *(int *)out = MR_par_cond_local_wsdeque_length() + (MR_engine_view != NULL ? 10 : 0);
  return NULL;
}

START_TEST(test_not_an_engine_says_no) {
  mr_test_start(0, "-P 2");
  int r = -1;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, foreign, &r), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(r, 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* fib that sparks only when the test says so: still right on 1, 2 and 4 engines. */
struct fib_arg {
  int n;
  long r;
};
static long gfib(int n);
static void gfib_branch(void *env) {
  struct fib_arg *a = env;
  a->r = gfib(a->n);
}
static long gfib(int n) {
  if (n < 2) return n;
  if (!MR_par_cond_local_wsdeque_length()) return gfib(n - 1) + gfib(n - 2);
  {
    MR_SyncTerm st;
    struct fib_arg a;
    long b;
    a.n = n - 1;
    a.r = 0;
    MR_sync_term_init(&st, 2);
    MR_fork_new_child(&st, gfib_branch, &a);
    b = gfib(n - 2);
    MR_join_and_continue(&st);
    return a.r + b;
  }
}

START_TEST(test_fib_with_the_test) {
  static const char *opts[] = {"-P 1", "-P 2", "-P 4"};
  mr_test_start(0, opts[_i]);
  for (int rep = 0; rep < 10; rep++) ck_assert_int_eq(gfib(24), 46368);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A producer past its cut-off: one engine creates tasks, spawning one while its deque is short
 * and running it at once otherwise (as libmrgomp's GOMP_task does), and never joins until it
 * stops. The other engine must keep getting tasks all along: the engine that steals the last
 * published one asks for more, and the producer's next spawn publishes. Before that request,
 * the producer's count still held the stolen spark as published, so it held every later one;
 * the thief asked only once it had run what it took, when the producer's deque was full again
 * and the producer no longer spawned: the thief slept and ran nothing until the producer's end
 * (a task kernel ran on one thread of two). The producer goes on until the other engine has run
 * a few tasks, for at most 10 s. */
/* How long a wait below gives a step that takes microseconds, before it fails. */
#define PATIENCE_NS 10000000000u /* 10 s */

static unsigned long produced_elsewhere;
static void busy_task(void *env) {
  uint64_t until = MR_now() + 20000; /* 20 us */
  (void)env;
  while (MR_now() < until) {}
  if (MR_engine_id() != 0) __atomic_fetch_add(&produced_elsewhere, 1, __ATOMIC_RELAXED);
}

START_TEST(test_producer_past_its_cutoff_shares) {
  MR_Scope s;
  uint64_t deadline;
  unsigned long spawned = 0, inline_runs = 0, during;
  mr_test_start(2, NULL);
  __atomic_store_n(&produced_elsewhere, 0, __ATOMIC_RELAXED);
  ck_assert_int_eq(MR_engine_id(), 0);
  ck_assert_int_eq(MR_scope_begin(&s), 0);
  deadline = MR_now() + PATIENCE_NS;
  while (__atomic_load_n(&produced_elsewhere, __ATOMIC_RELAXED) < 5 && MR_now() < deadline) {
    if (MR_par_cond_local_wsdeque_length()) {
      ck_assert_int_eq(MR_scope_spawn(&s, busy_task, NULL), 0);
      spawned++;
    } else {
      busy_task(NULL);
      inline_runs++;
    }
  }
  during = __atomic_load_n(&produced_elsewhere, __ATOMIC_RELAXED);
  ck_assert_int_eq(MR_scope_end(&s), 0);
  printf("check_granularity: %lu spawned, %lu run at once, %lu on the other engine meanwhile\n",
         spawned, inline_runs, during);
  ck_assert_uint_ge(during, 5);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A request says "spark": two engines, factor 1 (threshold 2). Engine 0 spawns X, which the
 * other engine takes (the last published spark: it asks as it takes it) and runs until told to
 * stop. Engine 0's next spawn, A, answers that request (A is published), and B and C are held
 * (H1). Once X stops, the other engine takes A, the last published spark again, and asks. The
 * deque still holds 2 (>= 2), but engine 0 holds sparks that somebody asked for, so the answer
 * is "spark" (its fork would publish them); with factor 0 it would still be "never". */
static int x_running, x_released, a_ran;

/* *flag once it is set, or after PATIENCE_NS (acquire: what its setter wrote before is seen). */
static int flag_within_patience(const int *flag) {
  uint64_t deadline = MR_now() + PATIENCE_NS;
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && MR_now() < deadline) {}
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}
static void wait_for(const int *flag) { ck_assert_int_eq(flag_within_patience(flag), 1); }

static void task_x(void *env) {
  (void)env;
  __atomic_store_n(&x_running, 1, __ATOMIC_RELEASE);
  (void)flag_within_patience(&x_released);
}
static void task_a(void *env) {
  (void)env;
  __atomic_store_n(&a_ran, 1, __ATOMIC_RELEASE);
}

START_TEST(test_a_request_says_spark) {
  MR_Scope s;
  const MR_EngineView *v;
  mr_test_start(2, "--granularity-factor 1");
  v = MR_engine_view_v4;
  ck_assert_int_eq(MR_scope_begin(&s), 0);
  ck_assert_int_eq(MR_scope_spawn(&s, task_x, NULL), 0);
  wait_for(&x_running);
  ck_assert_int_eq(MR_scope_spawn(&s, task_a, NULL), 0);
  ck_assert_int_eq(MR_scope_spawn(&s, nothing, NULL), 0);
  ck_assert_int_eq(MR_scope_spawn(&s, nothing, NULL), 0);
  ck_assert_uint_eq(AO_load(v->deque_bottom) - AO_load(v->deque_published), 2); /* held */
  ck_assert_uint_eq(AO_load(v->publish_wanted) & 1, 0);                         /* answered */
  __atomic_store_n(&x_released, 1, __ATOMIC_RELEASE);
  wait_for(&a_ran);
  ck_assert_uint_eq(AO_load(v->publish_wanted) & 1, 1);
  ck_assert_uint_eq(AO_load(v->deque_bottom) - AO_load_acquire(v->deque_top), 2);
  ck_assert_int_eq(MR_par_cond_local_wsdeque_length(), 1);
  ck_assert_int_eq(MR_scope_end(&s), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("granularity");
  TCase *tc = mr_tcase("granularity", 60);
  tcase_add_test(tc, test_view_layout_is_frozen);
  tcase_add_test(tc, test_threshold_is_factor_times_engines);
  tcase_add_test(tc, test_default_factor_and_zero);
  tcase_add_test(tc, test_not_an_engine_says_no);
  tcase_add_loop_test(tc, test_fib_with_the_test, 0, 3);
  tcase_add_test(tc, test_producer_past_its_cutoff_shares);
  tcase_add_test(tc, test_a_request_says_spark);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
