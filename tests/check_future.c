/* check_future.c: futures through the C ABI: chains and fans of 10^4 futures across engines,
 * waiters that suspend before the signal and waiters that come after it, threads that are not
 * engines on either side, and the double-signal rules. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

enum { N = MR_TEST_SCALE(10000) };

/* 10^4 suspended contexts at once: small stacks. */
#define STACK "--stack-size 64"

/* ---- a chain: link i waits for future i and signals future i+1 with value + i ---- */
static MR_Future chain[N + 1];
static void chain_link(void *arg) {
  intptr_t i = (intptr_t)arg;
  uintptr_t v = MR_future_wait(&chain[i]);
  MR_future_signal(&chain[i + 1], v + (uintptr_t)i);
}

START_TEST(test_chain_of_futures) {
  mr_test_start(1 + _i, STACK);
  for (int rep = 0; rep < 3; rep++) {
    for (int i = 0; i <= N; i++) MR_future_init(&chain[i]);
    /* Spawned last to first, so most links wait before their future is signalled. */
    for (intptr_t i = N - 1; i >= 0; i--)
      ck_assert_int_eq(MR_spawn(chain_link, (void *)i, NULL), 0);
    MR_future_signal(&chain[0], 7);
    ck_assert_uint_eq(MR_future_wait(&chain[N]), 7 + (uintptr_t)N * (N - 1) / 2);
    for (int i = 0; i <= N; i++) ck_assert(MR_future_is_signalled(&chain[i]));
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a fan: 10^4 waiters on one future ---- */
static MR_Future fan;
static atomic_int fan_started, fan_got;
static atomic_ulong fan_sum;
static void fan_waiter(void *arg) {
  (void)arg;
  atomic_fetch_add(&fan_started, 1);
  uintptr_t v = MR_future_wait(&fan);
  atomic_fetch_add(&fan_sum, v);
  atomic_fetch_add(&fan_got, 1);
}

/* Signal when all have started (most suspended) or at once (_i = 1: races with the waits). */
START_TEST(test_fan_of_waiters) {
  mr_test_start(2, STACK);
  for (int rep = 0; rep < 3; rep++) {
    MR_future_init(&fan);
    atomic_store(&fan_started, 0);
    atomic_store(&fan_got, 0);
    atomic_store(&fan_sum, 0);
    for (int i = 0; i < N; i++) ck_assert_int_eq(MR_spawn(fan_waiter, NULL, NULL), 0);
    if (_i == 0)
      while (atomic_load(&fan_started) < N) usleep(100); /* engine 1 runs them */
    MR_future_signal(&fan, 3);
    /* MR_shutdown would wait for them too; here count them while running. */
    while (atomic_load(&fan_got) < N) usleep(100);
    ck_assert_uint_eq(atomic_load(&fan_sum), 3ul * N);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A wait after the signal returns at once, without suspending. */
static MR_Future early;
START_TEST(test_wait_after_signal_does_not_suspend) {
  mr_test_start(2, STACK);
  MR_future_init(&early);
  ck_assert(!MR_future_is_signalled(&early));
  MR_future_signal(&early, 42);
  uint64_t before = MR_TEST_STAT(contexts_suspended);
  for (int i = 0; i < 1000; i++) ck_assert_uint_eq(MR_future_wait(&early), 42);
  ck_assert_uint_eq(MR_TEST_STAT(contexts_suspended), before);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- threads that are not engines ---- */
static MR_Future to_foreign, from_foreign;
static void *foreign_waiter(void *arg) {
  (void)arg;
  uintptr_t v = MR_future_wait(&to_foreign); /* blocks: this thread is not an engine */
  MR_future_signal(&from_foreign, v * 2);    /* and wakes a suspended context */
  return NULL;
}
static void engine_side(void *arg) {
  (void)arg;
  MR_future_signal(&to_foreign, 21);
}

START_TEST(test_foreign_threads_wait_and_signal) {
  mr_test_start(2, STACK);
  for (int rep = 0; rep < 200; rep++) {
    MR_future_init(&to_foreign);
    MR_future_init(&from_foreign);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, foreign_waiter, NULL), 0);
    if (rep % 2) usleep(50); /* sometimes the thread is already blocked */
    ck_assert_int_eq(MR_spawn(engine_side, NULL, NULL), 0);
    ck_assert_uint_eq(MR_future_wait(&from_foreign), 42); /* the primordial suspends */
    pthread_join(t, NULL);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- MR_context_bind_here: a bound context resumes on its engine ---- */
enum { BIND_N = MR_TEST_SCALE(2000) };
static MR_Future bind_gate, bind_all_started, bind_all_done;
static atomic_int bind_started, bind_same, bind_done;
static void bound_waiter(void *arg) {
  (void)arg;
  int here = MR_context_bind_here();
  ck_assert_int_eq(here, MR_engine_id());
  if (atomic_fetch_add(&bind_started, 1) + 1 == BIND_N) MR_future_signal(&bind_all_started, 1);
  (void)MR_future_wait(&bind_gate); /* suspends until every waiter has started */
  if (MR_engine_id() == here) atomic_fetch_add(&bind_same, 1);
  if (atomic_fetch_add(&bind_done, 1) + 1 == BIND_N) MR_future_signal(&bind_all_done, 1);
}
static void *bind_from_foreign(void *arg) {
  (void)arg;
  return (void *)(intptr_t)MR_context_bind_here();
}

START_TEST(test_bound_context_resumes_on_its_engine) {
  ck_assert_int_eq(MR_context_bind_here(), MR_ENOTINIT);
  mr_test_start(2, STACK);
  pthread_t t;
  void *rc;
  ck_assert_int_eq(pthread_create(&t, NULL, bind_from_foreign, NULL), 0);
  pthread_join(t, &rc);
  ck_assert_int_eq((int)(intptr_t)rc, MR_ENOTENGINE);
  ck_assert_int_eq(MR_context_bind_here(), 0); /* the primordial: engine 0 */
  for (int rep = 0; rep < 3; rep++) {
    MR_future_init(&bind_gate);
    MR_future_init(&bind_all_started);
    MR_future_init(&bind_all_done);
    atomic_store(&bind_started, 0);
    atomic_store(&bind_same, 0);
    atomic_store(&bind_done, 0);
    /* Unbound spawns: both engines start them (the primordial suspends below), and resumed
     * unbound from the shared queue, some would move. */
    for (int i = 0; i < BIND_N; i++) ck_assert_int_eq(MR_spawn(bound_waiter, NULL, NULL), 0);
    (void)MR_future_wait(&bind_all_started);
    MR_future_signal(&bind_gate, 1);
    (void)MR_future_wait(&bind_all_done);
    ck_assert_int_eq(atomic_load(&bind_same), BIND_N);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- double signals ---- */
START_TEST(test_same_value_twice_is_allowed) {
  mr_test_start(1, STACK);
  MR_Future f = MR_FUTURE_INIT;
  MR_future_signal(&f, 5);
  MR_future_signal(&f, 5);
  ck_assert_uint_eq(MR_future_wait(&f), 5);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

START_TEST(test_different_value_twice_stops) {
  mr_test_start(1, STACK);
  MR_Future f = MR_FUTURE_INIT;
  MR_future_signal(&f, 5);
  FILE *err = tmpfile();
  dup2(fileno(err), 2);
  MR_future_signal(&f, 6); /* aborts */
}
END_TEST

int main(void) {
  Suite *s = suite_create("future");
  TCase *tc = mr_tcase("futures", 120);
  tcase_add_loop_test(tc, test_chain_of_futures, 0, 2);
  tcase_add_loop_test(tc, test_fan_of_waiters, 0, 2);
  tcase_add_test(tc, test_wait_after_signal_does_not_suspend);
  tcase_add_test(tc, test_foreign_threads_wait_and_signal);
  tcase_add_test(tc, test_bound_context_resumes_on_its_engine);
  tcase_add_test(tc, test_same_value_twice_is_allowed);
  tcase_add_test_raise_signal(tc, test_different_value_twice_stops, SIGABRT);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
