/* check_blocking.c: blocking regions. A context between MR_blocking_begin and MR_blocking_end
 * runs on a backup thread, so its engine goes on running sparks; at the end it is back on an
 * engine. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "mrengine.h"
#include "testutil.h"

static sem_t gate;
static atomic_int entered, left;

static void wait_for(atomic_int *v, int n) {
  for (int i = 0; i < 20000 && atomic_load(v) < n; i++) mr_test_sleep_ms(1);
  ck_assert_int_eq(atomic_load(v), n);
}

/* Blocks in sem_wait on the gate, which opens only after the sparks below have finished: if a
 * blocked context held its engine, the sparks could never finish and the test would time out. */
static void gated(void *arg) {
  (void)arg;
  ck_assert_int_ge(MR_engine_id(), 0);
  MR_blocking_begin();
  ck_assert_int_eq(MR_engine_id(), -1); /* on a backup thread */
  atomic_fetch_add(&entered, 1);
  while (sem_wait(&gate) != 0) ck_assert_int_eq(errno, EINTR);
  MR_blocking_end();
  ck_assert_int_ge(MR_engine_id(), 0); /* back on an engine */
  ck_assert_int_eq(mr_test_pfib(12), 144);
  atomic_fetch_add(&left, 1);
}

/* 2 engines, 8 contexts blocked at once: sparks still run on both engines meanwhile. */
START_TEST(test_blocked_contexts_leave_engines_free) {
  mr_test_start(2, "--max-backup-threads 8");
  for (int round = 0; round < 5; round++) {
    sem_init(&gate, 0, 0);
    atomic_store(&entered, 0);
    atomic_store(&left, 0);
    for (int i = 0; i < 8; i++) ck_assert_int_eq(MR_spawn(gated, NULL, NULL), 0);
    wait_for(&entered, 8);
    /* Every one of the 8 is blocked; both engines are free for this (engine 1 may steal). */
    ck_assert_int_eq(mr_test_pfib(24), 46368);
    ck_assert_int_eq(atomic_load(&left), 0);
    for (int i = 0; i < 8; i++) sem_post(&gate);
    wait_for(&left, 8);
    sem_destroy(&gate);
  }
  ck_assert_uint_eq(MR_TEST_STAT(blocking_offloaded), 40);
  ck_assert_uint_eq(MR_TEST_STAT(blocking_inline), 0);
  ck_assert_uint_eq(MR_TEST_STAT(contexts_suspended), MR_TEST_STAT(contexts_resumed));
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* The same with each context blocking 100 ms, as a system call would: all 8 overlap. */
static atomic_int inside, most_inside;
static void sleeper(void *arg) {
  (void)arg;
  MR_blocking_begin();
  int now = atomic_fetch_add(&inside, 1) + 1;
  int m = atomic_load(&most_inside);
  while (now > m && !atomic_compare_exchange_weak(&most_inside, &m, now)) {}
  mr_test_sleep_ms(100);
  atomic_fetch_sub(&inside, 1);
  MR_blocking_end();
  atomic_fetch_add(&left, 1);
}

START_TEST(test_sleeping_contexts_overlap) {
  mr_test_start(2, "--max-backup-threads 8");
  atomic_store(&inside, 0);
  atomic_store(&most_inside, 0);
  atomic_store(&left, 0);
  for (int i = 0; i < 8; i++) ck_assert_int_eq(MR_spawn(sleeper, NULL, NULL), 0);
  ck_assert_int_eq(mr_test_pfib(20), 6765);
  wait_for(&left, 8);
  /* Without backups at most 2 (one per engine, and engine 0 runs this test) could sleep at
   * once; a context only waits for a backup if all 8 are busy. */
  ck_assert_int_gt(atomic_load(&most_inside), 2);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* With the cap reached a region runs in place, on its engine. */
static void in_place(void *arg) {
  (void)arg;
  int e = MR_engine_id();
  MR_blocking_begin();
  ck_assert_int_eq(MR_engine_id(), e); /* no backup: still on the engine */
  MR_blocking_end();
  atomic_fetch_add(&left, 1);
}

START_TEST(test_cap_runs_in_place) {
  mr_test_start(2, "--max-backup-threads 1");
  sem_init(&gate, 0, 0);
  atomic_store(&entered, 0);
  atomic_store(&left, 0);
  ck_assert_int_eq(MR_spawn(gated, NULL, NULL), 0); /* takes the only backup */
  wait_for(&entered, 1);
  int threads = mr_test_count_threads();
  ck_assert_int_eq(MR_spawn(in_place, NULL, NULL), 0);
  wait_for(&left, 1);
  mr_test_expect_threads(threads); /* no thread beyond the cap */
  sem_post(&gate);
  wait_for(&left, 2);
  ck_assert_uint_eq(MR_TEST_STAT(blocking_offloaded), 1);
  ck_assert_uint_eq(MR_TEST_STAT(blocking_inline), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  sem_destroy(&gate);
}
END_TEST

/* Every engine begins a region at the same moment, with one backup allowed: one backup thread
 * is made, however the creations race (before, each engine that found none idle and the count
 * below the cap made one: 6-8 threads where the cap allows 5). */
static atomic_int at_barrier, regions_done, offloaded_now, most_offloaded;

static void racing_region(void *arg) {
  int engines = (int)(intptr_t)arg;
  atomic_fetch_add(&at_barrier, 1);
  while (atomic_load(&at_barrier) < engines) sched_yield();
  MR_blocking_begin();
  if (MR_engine_id() == -1) {
    int now = atomic_fetch_add(&offloaded_now, 1) + 1;
    int most = atomic_load(&most_offloaded);
    while (now > most && !atomic_compare_exchange_weak(&most_offloaded, &most, now)) {}
    mr_test_sleep_ms(5);
    atomic_fetch_sub(&offloaded_now, 1);
  }
  MR_blocking_end();
  atomic_fetch_add(&regions_done, 1);
}

START_TEST(test_cap_holds_when_regions_race) {
  enum { ENGINES = 4 };
  for (int round = 0; round < 40; round++) {
    mr_test_start(ENGINES, "--max-backup-threads 1");
    int threads = mr_test_count_threads();
    atomic_store(&at_barrier, 0);
    atomic_store(&regions_done, 0);
    atomic_store(&most_offloaded, 0);
    MR_SpawnOptions o;
    MR_spawn_options_default(&o);
    for (int i = 0; i < ENGINES; i++) {
      o.engine = i;
      ck_assert_int_eq(MR_spawn(racing_region, (void *)(intptr_t)ENGINES, &o), 0);
    }
    /* Sleep (the primordial suspends) so that engine 0 runs its share. */
    for (int w = 0; w < 20000 && atomic_load(&regions_done) < ENGINES; w++)
      ck_assert_int_eq(MR_sleep_for(1000000), 0);
    ck_assert_int_eq(atomic_load(&regions_done), ENGINES);
    int most = atomic_load(&most_offloaded);
    ck_assert_int_le(most, 1); /* regions on backups at once */
    if (MR_TEST_EXACT_RESOURCES) ck_assert_int_le(mr_test_count_threads(), threads + 1);
    ck_assert_uint_le(MR_TEST_STAT(blocking_offloaded), ENGINES);
    ck_assert_int_eq(MR_shutdown(), 0);
  }
}
END_TEST

/* One context, many regions: one backup thread serves them all; nesting moves it once; errno
 * set in the region survives the way back. */
static void many_regions(void *arg) {
  (void)arg;
  for (int i = 0; i < 200; i++) {
    MR_blocking_begin();
    MR_blocking_begin(); /* nested: no second move */
    ck_assert_int_eq(MR_engine_id(), -1);
    MR_blocking_end();
    ck_assert_int_eq(MR_engine_id(), -1); /* still inside the outer region */
    errno = ENOTCONN;
    MR_blocking_end();
    ck_assert_int_eq(errno, ENOTCONN);
    ck_assert_int_ge(MR_engine_id(), 0);
  }
  atomic_fetch_add(&left, 1);
}

START_TEST(test_backup_reused_and_nesting) {
  mr_test_start(2, NULL);
  atomic_store(&left, 0);
  int threads = mr_test_count_threads();
  ck_assert_int_eq(MR_spawn(many_regions, NULL, NULL), 0);
  wait_for(&left, 1);
  mr_test_expect_threads(threads + 1);
  ck_assert_uint_eq(MR_TEST_STAT(blocking_offloaded), 200);
  ck_assert_int_eq(MR_shutdown(), 0);
  /* The backup thread is gone with the runtime (and engine 1, and the runtime's own). */
  mr_test_expect_threads(threads - 1 - MR_TEST_RUNTIME_THREADS);
}
END_TEST

/* The primordial context may block too; inside, it forks like any thread that is not an
 * engine. A bound context comes back to its own engine. */
static void bound_region(void *arg) {
  (void)arg;
  for (int i = 0; i < 50; i++) {
    MR_blocking_begin();
    mr_test_sleep_ms(1);
    MR_blocking_end();
    ck_assert_int_eq(MR_engine_id(), 1);
  }
  atomic_fetch_add(&left, 1);
}

START_TEST(test_primordial_and_bound_regions) {
  mr_test_start(2, NULL);
  atomic_store(&left, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = 1;
  ck_assert_int_eq(MR_spawn(bound_region, NULL, &o), 0);
  for (int i = 0; i < 20; i++) {
    MR_blocking_begin();
    ck_assert_int_eq(MR_engine_id(), -1);
    ck_assert_int_eq(mr_test_pfib(15), 610); /* through the injector */
    MR_blocking_end();
    ck_assert_int_eq(MR_engine_id(), 0);
  }
  wait_for(&left, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* Outside the runtime and on threads that are not engines both calls do nothing. */
START_TEST(test_no_engine_does_nothing) {
  MR_blocking_begin();
  MR_blocking_end();
  mr_test_start(1, NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

START_TEST(test_unmatched_end_stops) {
  mr_test_start(1, NULL);
  MR_blocking_end();
}
END_TEST

int main(void) {
  Suite *s = suite_create("blocking");
  TCase *tc = mr_tcase("blocking", 120);
  tcase_add_test(tc, test_blocked_contexts_leave_engines_free);
  tcase_add_test(tc, test_sleeping_contexts_overlap);
  tcase_add_test(tc, test_cap_runs_in_place);
  tcase_add_test(tc, test_cap_holds_when_regions_race);
  tcase_add_test(tc, test_backup_reused_and_nesting);
  tcase_add_test(tc, test_primordial_and_bound_regions);
  tcase_add_test(tc, test_no_engine_does_nothing);
  tcase_add_test_raise_signal(tc, test_unmatched_end_stops, SIGABRT);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
