/* check_lifecycle.c: --lazy-engines (engines start when work first needs them) and
 * MR_shutdown_now (stop at the next suspension point, drop and count what is left). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "mrengine.h"
#include "testutil.h"

static long sfib(int n) { return n < 2 ? n : sfib(n - 1) + sfib(n - 2); }

/* ---- lazy engines ---- */

START_TEST(test_lazy_engines_start_on_demand) {
  int threads0 = mr_test_count_threads();
  mr_test_start(4, "--lazy-engines");
  mr_test_expect_threads(threads0 + MR_TEST_RUNTIME_THREADS); /* no engine thread yet */
  ck_assert_int_eq(sfib(20), 6765);                           /* sequential work starts none */
  mr_test_expect_threads(threads0 + MR_TEST_RUNTIME_THREADS);
  ck_assert_int_eq(mr_test_pfib(22), 17711); /* sparks wake (start) sleepers */
  int started = mr_test_count_threads() - threads0 - MR_TEST_RUNTIME_THREADS;
  if (MR_TEST_EXACT_RESOURCES) {
    ck_assert_int_ge(started, 1);
    ck_assert_int_le(started, 3);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  mr_test_expect_threads(threads0);
}
END_TEST

/* A context bound to an engine that has not started starts it (CONTEXT to a sleeper). With
 * pinning, the engine binds itself when it starts. */
static atomic_int bound_ok;
static void on_engine_1(void *arg) {
  (void)arg;
  int cpu = -2;
  ck_assert_int_eq(MR_engine_id(), 1);
  ck_assert_int_eq(MR_engine_cpu(1, &cpu), 0);
  if (cpu >= 0) ck_assert_int_eq(sched_getcpu(), cpu);
  atomic_fetch_add(&bound_ok, 1);
}

START_TEST(test_lazy_bound_context_starts_its_engine) {
  int threads0 = mr_test_count_threads();
  mr_test_start(2, "--lazy-engines --thread-pinning cores");
  int cpu = 0;
  ck_assert_int_eq(MR_engine_cpu(1, &cpu), 0);
  ck_assert_int_eq(cpu, -1); /* not started, not bound */
  atomic_store(&bound_ok, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = 1;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(MR_spawn(on_engine_1, NULL, &o), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&bound_ok), 10);
  mr_test_expect_threads(threads0);
}
END_TEST

/* Shutdown races with engines being started by wakers: nothing leaks, the census balances
 * (MR_shutdown checks it), every spawned context runs. */
static atomic_int runs;
static void small_job(void *arg) {
  (void)arg;
  ck_assert_int_eq(mr_test_pfib(12), 144);
  atomic_fetch_add(&runs, 1);
}

START_TEST(test_lazy_shutdown_races_with_starts) {
  int threads0 = mr_test_count_threads();
  for (int round = 0; round < 200; round++) {
    mr_test_start(4, "--lazy-engines");
    atomic_store(&runs, 0);
    int n = round % 4;
    for (int i = 0; i < n; i++) ck_assert_int_eq(MR_spawn(small_job, NULL, NULL), 0);
    ck_assert_int_eq(MR_shutdown(), 0);
    ck_assert_int_eq(atomic_load(&runs), n);
  }
  mr_test_expect_threads(threads0);
}
END_TEST

/* ---- MR_shutdown_now ---- */

static atomic_int ran;
static void count_job(void *arg) {
  (void)arg;
  atomic_fetch_add(&ran, 1);
}

static void *fork_three_and_leave(void *arg) {
  static MR_SyncTerm st; /* never joined: its sparks are dropped */
  (void)arg;
  MR_sync_term_init(&st, 4);
  for (int i = 0; i < 3; i++) MR_fork_new_child(&st, count_job, NULL);
  return NULL;
}

/* One engine, busy with this (the primordial) context: nothing queued ever runs, and
 * MR_shutdown_now counts exactly what was queued. */
START_TEST(test_shutdown_now_counts_what_it_drops) {
  mr_test_start(1, NULL);
  atomic_store(&ran, 0);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(MR_spawn(count_job, NULL, NULL), 0);
  MR_SyncTerm st;
  MR_sync_term_init(&st, 6);
  for (int i = 0; i < 5; i++) MR_fork_new_child(&st, count_job, NULL);
  pthread_t t; /* 3 more sparks through the injector */
  ck_assert_int_eq(pthread_create(&t, NULL, fork_three_and_leave, NULL), 0);
  pthread_join(t, NULL);
  MR_ShutdownReport r;
  r.size = sizeof r;
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 10);
  ck_assert_uint_eq(r.sparks_dropped, 8);
  ck_assert_int_eq(atomic_load(&ran), 0);
  ck_assert_int_eq(MR_num_engines(), 0);
}
END_TEST

/* A running context is waited for (it reaches the scheduler); one waiting on a future that
 * nobody will signal is dropped. */
static atomic_int running, release_it, finished;
static MR_Future never;
static void runs_a_while(void *arg) {
  (void)arg;
  atomic_store(&running, 1);
  while (!atomic_load(&release_it)) {}
  atomic_store(&finished, 1);
}
static void waits_forever(void *arg) {
  (void)arg;
  (void)MR_future_wait(&never);
  ck_abort_msg("a dropped context ran on");
}
static void *release_later(void *arg) {
  (void)arg;
  mr_test_sleep_ms(50);
  atomic_store(&release_it, 1);
  return NULL;
}

START_TEST(test_shutdown_now_waits_for_running_contexts) {
  mr_test_start(2, NULL);
  MR_future_init(&never);
  atomic_store(&running, 0);
  atomic_store(&release_it, 0);
  atomic_store(&finished, 0);
  ck_assert_int_eq(MR_spawn(waits_forever, NULL, NULL), 0);
  ck_assert_int_eq(MR_spawn(runs_a_while, NULL, NULL), 0);
  for (int i = 0; i < 10000 && !atomic_load(&running); i++) mr_test_sleep_ms(1);
  ck_assert_int_eq(atomic_load(&running), 1);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, release_later, NULL), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_int_eq(atomic_load(&finished), 1); /* it was allowed to finish */
  ck_assert_uint_eq(r.contexts_dropped, 1);    /* the future's waiter */
  ck_assert_uint_eq(r.sparks_dropped, 0);
  pthread_join(t, NULL);
}
END_TEST

/* Stopping in the middle of real work, over and over: no thread and no stack is left behind
 * (dropped contexts are unmapped without being unwound). */
static void fib_job(void *arg) {
  (void)arg;
  ck_assert_int_eq(mr_test_pfib(16), 987);
}

START_TEST(test_shutdown_now_in_flight_leaves_nothing) {
  int threads0 = mr_test_count_threads();
  int maps0 = 0;
  uint64_t dropped = 0;
  for (int round = 0; round < 60; round++) {
    mr_test_start(2, round % 2 ? "--lazy-engines" : NULL);
    for (int i = 0; i < 20; i++) ck_assert_int_eq(MR_spawn(fib_job, NULL, NULL), 0);
    if (round % 3 == 0) mr_test_sleep_ms(1);
    MR_ShutdownReport r;
    r.size = sizeof r;
    ck_assert_int_eq(MR_shutdown_now(&r), 0);
    dropped += r.contexts_dropped + r.sparks_dropped;
    mr_test_expect_threads(threads0);
    if (round == 2) maps0 = mr_test_count_mappings();
    if (round > 2) mr_test_expect_mappings(maps0);
  }
  ck_assert_uint_gt(dropped, 0); /* the test did stop work in flight */
}
END_TEST

START_TEST(test_shutdown_now_errors) {
  ck_assert_int_eq(MR_shutdown_now(NULL), MR_ENOTINIT);
  mr_test_start(2, NULL);
  MR_ShutdownReport r;
  r.size = 3;
  ck_assert_int_eq(MR_shutdown_now(&r), MR_EINVAL);
  ck_assert_int_eq(MR_num_engines(), 2); /* still running */
  ck_assert_int_eq(MR_shutdown_now(NULL), 0);
  ck_assert_int_eq(MR_spawn(count_job, NULL, NULL), MR_ENOTINIT);
}
END_TEST

int main(void) {
  /* One malloc arena: the mapping count then only moves with what the runtime maps itself. */
  mallopt(M_ARENA_MAX, 1);
  Suite *s = suite_create("lifecycle");
  TCase *tc = mr_tcase("lazy", 120);
  tcase_add_test(tc, test_lazy_engines_start_on_demand);
  tcase_add_test(tc, test_lazy_bound_context_starts_its_engine);
  tcase_add_test(tc, test_lazy_shutdown_races_with_starts);
  suite_add_tcase(s, tc);
  tc = mr_tcase("shutdown_now", 120);
  tcase_add_test(tc, test_shutdown_now_counts_what_it_drops);
  tcase_add_test(tc, test_shutdown_now_waits_for_running_contexts);
  tcase_add_test(tc, test_shutdown_now_in_flight_leaves_nothing);
  tcase_add_test(tc, test_shutdown_now_errors);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
