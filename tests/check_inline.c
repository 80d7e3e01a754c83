/* check_inline.c: the inline fork and join of mrengine.h (version 2 of MR_EngineView), from a
 * client in a position-independent shared library (tests/inline_client.c, built -fPIC -shared)
 * whose call frames move between engines: results, the counters, and the engine the inline paths
 * use after a join that resumed the frame on another engine's thread, in a loop that gives a
 * compiler the chance to keep a thread-local's address across the join. Built twice: as
 * check_inline, and as check_calls with MR_NO_INLINE_FORKS, the way a client compiled against
 * version 1 of the view calls the functions. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "inline_client.h"
#include "mrengine.h"
#include "testutil.h"

static atomic_long joins, moved, wrong_view;

void inline_client_note(int before, int after, int view) {
  atomic_fetch_add(&joins, 1);
  if (after != before) atomic_fetch_add(&moved, 1);
  if (view != after) atomic_fetch_add(&wrong_view, 1);
}

static long seq_fib(int n) { return n < 2 ? n : seq_fib(n - 1) + seq_fib(n - 2); }

/* Joins (and sparks) of inline_client_fib(n): two per call with n >= 2. */
static long joins_of(int n) { return n < 2 ? 0 : 2 + joins_of(n - 1) + 2 * joins_of(n - 2); }

static uint64_t sum_stat(size_t offset) {
  MR_EngineStats s[8];
  int n = MR_num_engines();
  uint64_t total = 0;
  ck_assert_int_le(n, 8);
  for (int i = 0; i < n; i++) {
    MR_engine_stats_init(&s[i]);
    ck_assert_int_eq(MR_stats_get(i, &s[i]), 0);
    total += *(const uint64_t *)((const char *)&s[i] + offset);
  }
  return total;
}

/* fib in a spawned context: unlike the primordial (bound to engine 0), it may move. */
struct fib_job {
  int n;
  long r;
  MR_Future done;
};
static void fib_context(void *arg) {
  struct fib_job *j = arg;
  j->r = inline_client_fib(j->n);
  MR_future_signal(&j->done, 1);
}
static long fib_in_context(int n) {
  struct fib_job j = {n, 0, MR_FUTURE_INIT};
  ck_assert_int_eq(MR_spawn(fib_context, &j, NULL), 0);
  MR_future_wait(&j.done);
  return j.r;
}

/* inline_client_move in a spawned context. */
struct move_job {
  int r;
  MR_Future done;
};
static void move_context(void *arg) {
  struct move_job *j = arg;
  j->r = inline_client_move();
  MR_future_signal(&j->done, 1);
}
static int move_in_context(void) {
  struct move_job j = {0, MR_FUTURE_INIT};
  ck_assert_int_eq(MR_spawn(move_context, &j, NULL), 0);
  MR_future_wait(&j.done);
  return j.r;
}

/* 2 engines: frames move (stolen branches resume their parents on the thief's engine), and
 * after every join the inline paths see the engine the frame runs on. */
START_TEST(test_frames_move_and_see_their_engine) {
#ifndef MR_INLINE_FORKS
  printf(
      "check_inline: no inline fork and join in this build (MR_NO_INLINE_FORKS as check_calls,"
      " ThreadSanitizer, or neither x86-64 nor arm64): the calls are tested\n");
#endif
  mr_test_start(2, NULL);
  atomic_store(&joins, 0);
  atomic_store(&moved, 0);
  atomic_store(&wrong_view, 0);
  /* Moves that do not depend on the machine's load: each time, the other engine must steal the
   * context's first spark (a wake-up, P1), and the frame must resume on its engine. */
  enum { MOVES = 5 };
  int forced = 0;
  for (int i = 0; i < MOVES; i++) {
    int r = move_in_context();
    ck_assert_int_ge(r, 0); /* stolen within 10 s, and the sums are right */
    forced += r;
  }
  printf("check_inline: %d first sparks stolen, %d of those frames resumed on the thief's engine\n",
         MOVES, forced);
  /* The stolen branch waits for its parent to suspend (inline_client.c), so its frame moves
   * unless the parent's thread stopped for long at the wrong moment: not more than half of the
   * time. */
  ck_assert_int_ge(forced, MOVES / 2 + 1);
  long move_joins = atomic_load(&joins);
  ck_assert_int_eq(move_joins, MOVES * (2 + joins_of(9) + joins_of(10)));
  /* Rounds until enough frames have moved (a busy machine may give the thief few chances), for
   * at most about 10 s. */
  int rounds = 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (rounds >= 20 && (atomic_load(&moved) >= 50 || t.tv_sec - t0.tv_sec >= 10)) break;
    ck_assert_int_eq(fib_in_context(15), seq_fib(15));
    rounds++;
  }
  ck_assert_int_eq(atomic_load(&joins), move_joins + rounds * joins_of(15));
  ck_assert_int_eq(atomic_load(&wrong_view), 0);
  printf("check_inline: %d rounds, %ld joins, %ld resumed on another engine\n", rounds,
         atomic_load(&joins), atomic_load(&moved));
  /* Every spark pushed (inline or not) was run once: popped here or stolen. */
  uint64_t pushed = sum_stat(offsetof(MR_EngineStats, sparks_pushed));
  uint64_t run = sum_stat(offsetof(MR_EngineStats, sparks_run_local)) +
                 sum_stat(offsetof(MR_EngineStats, sparks_stolen));
  ck_assert_uint_eq(pushed, (uint64_t)move_joins + rounds * (uint64_t)joins_of(15));
  ck_assert_uint_eq(pushed, run);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* One engine: every spark is popped back inline, and the counters say so. */
START_TEST(test_one_engine_runs_every_spark_inline) {
  mr_test_start(1, NULL);
  ck_assert_int_eq(inline_client_fib(16), seq_fib(16));
  ck_assert_uint_eq(sum_stat(offsetof(MR_EngineStats, sparks_pushed)), joins_of(16));
  ck_assert_uint_eq(sum_stat(offsetof(MR_EngineStats, sparks_run_local)), joins_of(16));
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

static void *from_thread(void *out) {
  *(long *)out = inline_client_fib(12);
  return NULL;
}

/* A thread that is not an engine takes the calls (the injector) and gets the same answer. */
START_TEST(test_not_an_engine_uses_the_calls) {
  mr_test_start(2, NULL);
  pthread_t t;
  long r = 0;
  ck_assert_int_eq(pthread_create(&t, NULL, from_thread, &r), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(r, seq_fib(12));
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A deque that must grow (more sparks than its first array holds) takes the call and loses none. */
static atomic_int ran;
static void count(void *env) {
  (void)env;
  atomic_fetch_add(&ran, 1);
}

START_TEST(test_deque_growth) {
  enum { N = 5000 };
  mr_test_start(1, NULL);
  atomic_store(&ran, 0);
  MR_SyncTerm st;
  MR_sync_term_init(&st, N + 1);
  for (int i = 0; i < N; i++) MR_fork_new_child(&st, count, NULL);
  MR_join_and_continue(&st);
  ck_assert_int_eq(atomic_load(&ran), N);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("inline");
  TCase *tc = mr_tcase("inline", 60);
  tcase_add_test(tc, test_frames_move_and_see_their_engine);
  tcase_add_test(tc, test_one_engine_runs_every_spark_inline);
  tcase_add_test(tc, test_not_an_engine_uses_the_calls);
  tcase_add_test(tc, test_deque_growth);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return mr_test_run(suite()); }
