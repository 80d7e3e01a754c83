/* check_runtime.c: the runtime through its C ABI: parallel conjunctions, spawned and bound
 * contexts, statistics, shutdown from every engine state with nothing left behind. */
#define _GNU_SOURCE
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrengine.h"
#include "testutil.h"

static long sfib(int n) { return n < 2 ? n : sfib(n - 1) + sfib(n - 2); }

static const int kEngines[] = {1, 2, 4};

START_TEST(test_fib_on_1_2_4_engines) {
  mr_test_start(kEngines[_i], NULL);
  for (int n = 0; n <= 24; n += 3) ck_assert_int_eq(mr_test_pfib(n), sfib(n));
  for (int rep = 0; rep < 5; rep++) ck_assert_int_eq(mr_test_pfib(25), 75025);
  /* At a quiescent point every pushed spark was run once, here or by a thief. */
  uint64_t pushed = MR_TEST_STAT(sparks_pushed);
  uint64_t ran = MR_TEST_STAT(sparks_run_local) + MR_TEST_STAT(sparks_stolen);
  ck_assert_uint_eq(pushed, ran);
  ck_assert_uint_gt(pushed, 75025);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a conjunction of many branches ---- */
static atomic_int branch_hits[64];
static void mark_branch(void *env) { atomic_fetch_add(&branch_hits[(intptr_t)env], 1); }

START_TEST(test_wide_conjunction_runs_each_branch_once) {
  mr_test_start(2, NULL);
  for (int rep = 0; rep < 2000; rep++) {
    int width = 1 + rep % 64;
    for (int i = 0; i < 64; i++) atomic_store(&branch_hits[i], 0);
    MR_SyncTerm st;
    MR_sync_term_init(&st, (unsigned)width);
    for (int i = 1; i < width; i++) MR_fork_new_child(&st, mark_branch, (void *)(intptr_t)i);
    mark_branch((void *)(intptr_t)0);
    MR_join_and_continue(&st);
    for (int i = 0; i < 64; i++) ck_assert_int_eq(atomic_load(&branch_hits[i]), i < width);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- spawned contexts ---- */
static atomic_int spawned_runs;
static void count_run(void *arg) {
  (void)arg;
  atomic_fetch_add(&spawned_runs, 1);
}
static void spawn_fib(void *arg) {
  ck_assert_int_eq(mr_test_pfib(15), 610);
  count_run(arg);
}

START_TEST(test_shutdown_waits_for_spawned_contexts) {
  mr_test_start(2, NULL);
  atomic_store(&spawned_runs, 0);
  for (int i = 0; i < 2000; i++)
    ck_assert_int_eq(MR_spawn(i % 2 ? count_run : spawn_fib, NULL, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&spawned_runs), 2000);
}
END_TEST

/* A context bound to engine k runs only there, also after it suspended in a join whose branch
 * ran elsewhere. */
static atomic_int wrong_engine, bound_done;
static void bound_body(void *arg) {
  int k = (int)(intptr_t)arg;
  if (MR_engine_id() != k) atomic_fetch_add(&wrong_engine, 1);
  ck_assert_int_eq(mr_test_pfib(12), 144);
  if (MR_engine_id() != k) atomic_fetch_add(&wrong_engine, 1);
  atomic_fetch_add(&bound_done, 1);
}

START_TEST(test_bound_contexts_stay_on_their_engine) {
  mr_test_start(3, NULL);
  atomic_store(&wrong_engine, 0);
  atomic_store(&bound_done, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  for (int i = 0; i < 600; i++) {
    o.engine = i % 3;
    ck_assert_int_eq(MR_spawn(bound_body, (void *)(intptr_t)o.engine, &o), 0);
    if (i % 50 == 0) mr_test_sleep_ms(2); /* let engines fall asleep between bursts */
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&bound_done), 600);
  ck_assert_int_eq(atomic_load(&wrong_engine), 0);
}
END_TEST

START_TEST(test_spawn_argument_errors) {
  mr_test_start(2, NULL);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  ck_assert_int_eq(MR_spawn(NULL, NULL, NULL), MR_EINVAL);
  o.engine = 2;
  ck_assert_int_eq(MR_spawn(count_run, NULL, &o), MR_ERANGE);
  o.engine = -2;
  ck_assert_int_eq(MR_spawn(count_run, NULL, &o), MR_ERANGE);
  o.engine = -1;
  o.size = 1;
  ck_assert_int_eq(MR_spawn(count_run, NULL, &o), MR_EINVAL);
  MR_EngineStats s;
  MR_engine_stats_init(&s);
  ck_assert_int_eq(MR_stats_get(5, &s), MR_ERANGE);
  ck_assert_int_eq(MR_stats_get(0, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* MR_SpawnOptions.flags is reserved: any nonzero value is refused before a context is made,
 * bound or not, so that a later meaning for a bit cannot be mistaken for today's default. */
START_TEST(test_spawn_reserved_flags_refused) {
  static const unsigned kFlags[] = {1u, 2u, 0x80000000u, ~0u};
  mr_test_start(2, NULL);
  atomic_store(&spawned_runs, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  ck_assert_uint_eq(o.flags, 0);
  for (int e = -1; e <= 1; e++) {
    o.engine = e;
    for (size_t i = 0; i < sizeof kFlags / sizeof kFlags[0]; i++) {
      o.flags = kFlags[i];
      ck_assert_int_eq(MR_spawn(count_run, NULL, &o), MR_EINVAL);
    }
    o.flags = 0;
    ck_assert_int_eq(MR_spawn(count_run, NULL, &o), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&spawned_runs), 3);
}
END_TEST

static void *foreign_id(void *out) {
  *(int *)out = MR_engine_id();
  return NULL;
}

START_TEST(test_engine_ids) {
  ck_assert_int_eq(MR_engine_id(), -1);
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_engine_id(), 0);
  int id = 7;
  pthread_t t;
  pthread_create(&t, NULL, foreign_id, &id);
  pthread_join(t, NULL);
  ck_assert_int_eq(id, -1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(MR_engine_id(), -1);
}
END_TEST

/* ---- shutdown from every engine state, nothing left behind ---- */

static atomic_int stop_busy;
static void busy_until_flag(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_busy)) {}
}
static void *release_busy_later(void *arg) {
  (void)arg;
  mr_test_sleep_ms(30);
  atomic_store(&stop_busy, 1);
  return NULL;
}

/* _i: 0 sleeping engines, 1 stealing engines (long spin), 2 a working engine, 3 engines just
 * notified (shutdown right after work was posted), 4 polling interval tiny. */
START_TEST(test_shutdown_from_every_state_leaves_nothing) {
  /* Round 0 warms up: glibc keeps per-thread malloc arenas and cached thread stacks after the
   * threads end, and hwloc its one-time mappings; the rounds after it must leave nothing. */
  int threads0 = mr_test_count_threads(), maps0 = 0;
  for (int round = 0; round < 20; round++) {
    struct timespec t0, t1;
    switch (_i) {
      case 0:
        mr_test_start(3, "--spin-rounds 0");
        mr_test_sleep_ms(20);
        break;
      case 1:
        mr_test_start(3, "--spin-rounds 1000000");
        mr_test_sleep_ms(5);
        break;
      case 2: {
        mr_test_start(3, NULL);
        atomic_store(&stop_busy, 0);
        ck_assert_int_eq(MR_spawn(busy_until_flag, NULL, NULL), 0);
        pthread_t t;
        pthread_create(&t, NULL, release_busy_later, NULL);
        pthread_detach(t);
        break;
      }
      case 3:
        mr_test_start(3, NULL);
        mr_test_sleep_ms(5);
        ck_assert_int_eq(mr_test_pfib(10), 55);
        break;
      default:
        mr_test_start(3, "--poll-interval-us 50 --spin-rounds 1");
        mr_test_sleep_ms(3);
        break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(MR_shutdown(), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    /* Not a speed bound (this machine is shared): a shutdown that waited for something to time
     * out, or for the 30 ms busy context more than once, would take seconds. Under a load of
     * 12 on 2 cores a healthy one took 213 ms. */
    ck_assert_msg(ms < 2000.0, "shutdown took %.1f ms (case %d)", ms, _i);
    mr_test_sleep_ms(_i == 2 ? 40 : 0); /* the detached releaser thread ends */
    /* pthread_join returns when the kernel clears the thread id, a moment before the task
     * leaves /proc/self/task: allow it up to 200 ms to go. */
    mr_test_expect_threads(threads0);
    if (round == 0)
      maps0 = mr_test_count_mappings();
    else
      mr_test_expect_mappings(maps0);
  }
}
END_TEST

/* Forking after MR_shutdown is a misuse that must stop the process, not crash in freed memory.
 * (Forking from a thread that is not an engine is allowed: check_foreign.) */
START_TEST(test_fork_after_shutdown_stops) {
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, count_run, NULL);
}
END_TEST

int main(void) {
  /* One malloc arena: the mapping count then only moves with what the runtime maps itself. */
  mallopt(M_ARENA_MAX, 1);
  Suite *s = suite_create("runtime");
  TCase *tc = mr_tcase("conjunctions", 120);
  tcase_add_loop_test(tc, test_fib_on_1_2_4_engines, 0, 3);
  tcase_add_test(tc, test_wide_conjunction_runs_each_branch_once);
  suite_add_tcase(s, tc);
  tc = mr_tcase("contexts", 120);
  tcase_add_test(tc, test_shutdown_waits_for_spawned_contexts);
  tcase_add_test(tc, test_bound_contexts_stay_on_their_engine);
  tcase_add_test(tc, test_spawn_argument_errors);
  tcase_add_test(tc, test_spawn_reserved_flags_refused);
  tcase_add_test(tc, test_engine_ids);
  suite_add_tcase(s, tc);
  tc = mr_tcase("shutdown", 120);
  tcase_add_loop_test(tc, test_shutdown_from_every_state_leaves_nothing, 0, 5);
  tcase_add_test_raise_signal(tc, test_fork_after_shutdown_stops, SIGABRT);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
