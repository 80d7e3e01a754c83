/* check_foreign.c: work from threads that are not engines. Their sparks go through the injector
 * and their joins block on a semaphore; the injector's push fence and the sleeper's last look
 * (doc/design.md, P1) must lose no spark while engines keep falling asleep. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrengine.h"
#include "testutil.h"

enum { THREADS = 4, JOBS = 100000, MAX_BATCH = 32 };

static unsigned char hits[THREADS][JOBS];

static void pause_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* One foreign thread: JOBS sparks in batches of 1..MAX_BATCH, each batch one parallel
 * conjunction joined by this thread, with pauses now and then so that the engines fall asleep
 * between batches. */
static void *submitter(void *arg) {
  int t = (int)(intptr_t)arg;
  unsigned seed = 12345u + (unsigned)t;
  int done = 0;
  while (done < JOBS) {
    int n = 1 + (int)(rand_r(&seed) % MAX_BATCH);
    if (n > JOBS - done) n = JOBS - done;
    mr_test_fork_join_counts(&hits[t][done], n);
    /* Every job of the batch has run once the join returns. */
    for (int k = 0; k < n; k++) ck_assert_int_eq(hits[t][done + k], 1);
    done += n;
    if (rand_r(&seed) % 8 == 0) pause_us(50 + (long)(rand_r(&seed) % 200));
  }
  return NULL;
}

/* 4 foreign threads x 10^5 sparks: each runs exactly once, all through the injector. */
START_TEST(test_foreign_sparks_run_once) {
  mr_test_start(2, NULL);
  memset(hits, 0, sizeof hits);
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, submitter, (void *)(intptr_t)t), 0);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < THREADS; t++)
    for (int i = 0; i < JOBS; i++) ck_assert_int_eq(hits[t][i], 1);
  ck_assert_uint_eq(MR_TEST_STAT(sparks_injected), (uint64_t)THREADS * JOBS);
  /* The engines did fall asleep between batches (else the test would not test the fences). */
  ck_assert_uint_gt(MR_TEST_STAT(sleeps), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A foreign spark that forks in turn: its children are ordinary sparks on an engine's deque. */
static void fib_job(void *env) {
  long *r = (long *)env;
  *r = mr_test_pfib(18);
}

START_TEST(test_foreign_nested_conjunction) {
  mr_test_start(1 + _i, NULL);
  for (int rep = 0; rep < 20; rep++) {
    long r[3] = {0, 0, 0};
    MR_SyncTerm st;
    MR_sync_term_init(&st, 4);
    for (int k = 0; k < 3; k++) MR_fork_new_child(&st, fib_job, &r[k]);
    /* The foreign thread's own branch. */
    long mine = 0;
    for (int a = 0, b = 1, k = 0; k < 18; k++) {
      int c = a + b;
      a = b;
      b = c;
      mine = a;
    }
    MR_join_and_continue(&st);
    for (int k = 0; k < 3; k++) ck_assert_int_eq(r[k], 2584);
    ck_assert_int_eq(mine, 2584);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A conjunction of one branch (only the joiner's own) never blocks. */
START_TEST(test_foreign_join_alone) {
  mr_test_start(2, NULL);
  pthread_t th;
  MR_SyncTerm st;
  MR_sync_term_init(&st, 1);
  MR_join_and_continue(&st);
  /* And from a second thread that is not an engine either. */
  ck_assert_int_eq(pthread_create(&th, NULL, submitter, (void *)(intptr_t)0), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* Foreign spawns and foreign sparks mixed with engines' own work while engines sleep and wake:
 * MR_shutdown waits for every spawned context. */
static atomic_long spawned_runs;
static void spawned_job(void *arg) {
  (void)arg;
  atomic_fetch_add(&spawned_runs, 1);
  ck_assert_int_eq(mr_test_pfib(10), 55);
}

static void *spawner(void *arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  for (int i = 0; i < 2000; i++) {
    ck_assert_int_eq(MR_spawn(spawned_job, NULL, NULL), 0);
    if (rand_r(&seed) % 16 == 0) pause_us(100);
  }
  return NULL;
}

/* The only engine asleep, work posted by a thread that is not an engine (a blocking region's
 * backup thread): the post-work check wakes it. An engine of a one-engine runtime skips the check
 * (doc/design.md P1, "The only engine"); a thread that is not an engine must not. */
static void signal_one(void *arg) { MR_future_signal((MR_Future *)arg, 1); }

START_TEST(test_foreign_wakes_only_engine) {
  mr_test_start(1, NULL);
  uint64_t sleeps = MR_TEST_STAT(sleeps);
  MR_blocking_begin();
  for (int rep = 0; rep < 20; rep++) {
    pause_us(2000); /* the engine, with nothing to do, falls asleep */
    MR_Future f;
    MR_future_init(&f);
    ck_assert_int_eq(MR_spawn(signal_one, &f, NULL), 0);
    ck_assert_uint_eq(MR_future_wait(&f), 1);
  }
  MR_blocking_end();
  ck_assert_uint_gt(MR_TEST_STAT(sleeps), sleeps);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* The injector is first in first out, also when its ring wraps round and grows with sparks in
 * it. One engine, kept busy by the primordial context while a foreign thread injects a batch, so
 * that the whole batch is queued at once; then the primordial context leaves the engine (a
 * blocking region) and the engine alone runs the batch in the order it takes it. The first batch
 * (40) moves the ring's head; the second (150) wraps round it and makes it grow twice. */
enum { FIFO_BATCHES = 2 };
static const int fifo_batch[FIFO_BATCHES] = {40, 150};
static int fifo_order[150], fifo_index[150];
static atomic_int fifo_pos, fifo_ready, fifo_injected, fifo_joined;

static void fifo_job(void *env) { fifo_order[atomic_fetch_add(&fifo_pos, 1)] = *(int *)env; }

static void *fifo_injector(void *arg) {
  (void)arg;
  for (int b = 0; b < FIFO_BATCHES; b++) {
    while (atomic_load(&fifo_ready) != b + 1) { /* the primordial context holds the engine */
    }
    MR_SyncTerm st;
    MR_sync_term_init(&st, (unsigned)fifo_batch[b] + 1);
    for (int k = 0; k < fifo_batch[b]; k++) MR_fork_new_child(&st, fifo_job, &fifo_index[k]);
    atomic_store(&fifo_injected, b + 1);
    MR_join_and_continue(&st);
    atomic_store(&fifo_joined, b + 1);
  }
  return NULL;
}

START_TEST(test_foreign_injector_fifo) {
  mr_test_start(1, NULL);
  for (int k = 0; k < 150; k++) fifo_index[k] = k;
  atomic_store(&fifo_ready, 0);
  atomic_store(&fifo_injected, 0);
  atomic_store(&fifo_joined, 0);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, fifo_injector, NULL), 0);
  for (int b = 0; b < FIFO_BATCHES; b++) {
    atomic_store(&fifo_pos, 0);
    atomic_store(&fifo_ready, b + 1);
    while (atomic_load(&fifo_injected) != b + 1) {}
    MR_blocking_begin();
    while (atomic_load(&fifo_joined) != b + 1) pause_us(100);
    MR_blocking_end();
    ck_assert_int_eq(atomic_load(&fifo_pos), fifo_batch[b]);
    for (int k = 0; k < fifo_batch[b]; k++) ck_assert_int_eq(fifo_order[k], k);
  }
  pthread_join(th, NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

START_TEST(test_foreign_spawn_and_sparks) {
  mr_test_start(2, NULL);
  atomic_store(&spawned_runs, 0);
  memset(hits, 0, sizeof hits);
  pthread_t sp[2], su;
  for (int k = 0; k < 2; k++)
    ck_assert_int_eq(pthread_create(&sp[k], NULL, spawner, (void *)(uintptr_t)(k + 1)), 0);
  ck_assert_int_eq(pthread_create(&su, NULL, submitter, (void *)(intptr_t)1), 0);
  for (int k = 0; k < 2; k++) pthread_join(sp[k], NULL);
  pthread_join(su, NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&spawned_runs), 4000);
  for (int i = 0; i < JOBS; i++) ck_assert_int_eq(hits[1][i], 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("foreign");
  TCase *tc = mr_tcase("injector", 120);
  tcase_add_loop_test(tc, test_foreign_sparks_run_once, 0, 3);
  tcase_add_loop_test(tc, test_foreign_nested_conjunction, 0, 2);
  tcase_add_test(tc, test_foreign_join_alone);
  tcase_add_test(tc, test_foreign_wakes_only_engine);
  tcase_add_loop_test(tc, test_foreign_spawn_and_sparks, 0, 2);
  tcase_add_loop_test(tc, test_foreign_injector_fifo, 0, 3);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
