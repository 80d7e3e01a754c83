/* check_loop.c: loop control through the C ABI: a loop of 10^6 iterations never has more
 * worker contexts alive than its slots, every iteration runs once, and misuse gives codes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "mrengine.h"
#include "testutil.h"

static atomic_int alive, max_alive;
static atomic_ulong sum;
static unsigned char *ran;

static void iteration(void *env) {
  long i = (long)(intptr_t)env;
  int now = atomic_fetch_add(&alive, 1) + 1;
  int m = atomic_load(&max_alive);
  while (now > m && !atomic_compare_exchange_weak(&max_alive, &m, now)) {}
  ran[i]++;
  atomic_fetch_add(&sum, (unsigned long)i);
  atomic_fetch_sub(&alive, 1);
}

static void run_loop(long n, unsigned slots) {
  atomic_store(&alive, 0);
  atomic_store(&max_alive, 0);
  atomic_store(&sum, 0);
  ran = calloc((size_t)n, 1);
  MR_LoopControl *lc = NULL;
  ck_assert_int_eq(MR_lc_create(slots, &lc), 0);
  for (long i = 0; i < n; i++) ck_assert_int_eq(MR_lc_spawn(lc, iteration, (void *)(intptr_t)i), 0);
  ck_assert_int_eq(MR_lc_finish(lc), 0);
  ck_assert_int_eq(atomic_load(&alive), 0); /* all finished when finish returns */
  ck_assert_uint_eq(atomic_load(&sum), (unsigned long)n * (unsigned long)(n - 1) / 2);
  for (long i = 0; i < n; i++) ck_assert_msg(ran[i] == 1, "iteration %ld ran %d times", i, ran[i]);
  free(ran);
}

START_TEST(test_million_iterations_in_bounded_contexts) {
  mr_test_start(2, NULL);
  run_loop(1000000, 3);
  ck_assert_int_le(atomic_load(&max_alive), 3);
  ck_assert_int_ge(atomic_load(&max_alive), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* 0 slots: --lc-contexts-per-engine x engines. */
START_TEST(test_default_slots_from_option) {
  mr_test_start(2, "--lc-contexts-per-engine 2");
  for (int rep = 0; rep < 20; rep++) {
    run_loop(5000, 0);
    ck_assert_int_le(atomic_load(&max_alive), 4);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* One slot: iterations run one at a time, in order of their start. */
static long last_seen = -1;
static atomic_int out_of_order;
static void ordered(void *env) {
  long i = (long)(intptr_t)env;
  if (i != last_seen + 1) atomic_store(&out_of_order, 1);
  last_seen = i;
}
START_TEST(test_one_slot_is_sequential) {
  mr_test_start(2, NULL);
  MR_LoopControl *lc;
  ck_assert_int_eq(MR_lc_create(1, &lc), 0);
  for (long i = 0; i < 20000; i++)
    ck_assert_int_eq(MR_lc_spawn(lc, ordered, (void *)(intptr_t)i), 0);
  ck_assert_int_eq(MR_lc_finish(lc), 0);
  ck_assert_int_eq(last_seen, 19999);
  ck_assert_int_eq(atomic_load(&out_of_order), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

static void noop(void *env) { (void)env; }
static void *from_foreign(void *lc) {
  return (void *)(intptr_t)(MR_lc_spawn(lc, noop, NULL) * 100 + MR_lc_finish(lc));
}

START_TEST(test_errors) {
  MR_LoopControl *lc = NULL;
  ck_assert_int_eq(MR_lc_create(2, &lc), MR_ENOTINIT);
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_lc_create(2, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_lc_create(1u << 20, &lc), MR_EINVAL);
  ck_assert_int_eq(MR_lc_create(2, &lc), 0);
  ck_assert_int_eq(MR_lc_spawn(lc, NULL, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_lc_spawn(NULL, noop, NULL), MR_EINVAL);
  pthread_t t;
  void *r;
  ck_assert_int_eq(pthread_create(&t, NULL, from_foreign, lc), 0);
  pthread_join(t, &r);
  ck_assert_int_eq((int)(intptr_t)r, MR_ENOTENGINE * 100 + MR_ENOTENGINE);
  ck_assert_int_eq(MR_lc_finish(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_lc_finish(lc), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("loop");
  TCase *tc = mr_tcase("loop control", 120);
  tcase_add_test(tc, test_million_iterations_in_bounded_contexts);
  tcase_add_test(tc, test_default_slots_from_option);
  tcase_add_test(tc, test_one_slot_is_sequential);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
