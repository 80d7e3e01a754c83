/* check_poll.c: MR_poll_wait with a test source whose items are flags. Waits end when the flag
 * is set by another context or by a thread that is not an engine while every engine sleeps (the
 * bounded sleep), the context resumes on its engine and the poll runs only there; nothing is
 * polled with no wait outstanding, and idle engines then use no CPU; the error codes;
 * MR_shutdown_now while contexts wait. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

#define MS 1000000ull

/* An item: a flag that someone sets, and the engine whose context waits for it. */
typedef struct Item {
  atomic_int set;
  int engine;
} Item;

static atomic_long polls, wrong_engine;

static int poll_flags(void *ctx, void *const *items, int n, unsigned char *done) {
  (void)ctx;
  atomic_fetch_add(&polls, 1);
  for (int i = 0; i < n; i++) {
    Item *it = items[i];
    if (it->engine != MR_engine_id()) atomic_fetch_add(&wrong_engine, 1);
    done[i] = atomic_load(&it->set) != 0;
  }
  return 0;
}

static const MR_PollSource flags_src = {poll_flags, NULL, 0};
static const MR_PollSource slow_src = {poll_flags, NULL, 2 * MS};

static void start(int engines) {
  MR_Config c = mr_test_config(engines);
  ck_assert_int_eq(MR_init(&c), 0);
}

static int wait_item(const MR_PollSource *src, Item *it) {
  it->engine = MR_engine_id();
  int rc = MR_poll_wait(src, it);
  if (rc == 0 && MR_engine_id() != it->engine) atomic_fetch_add(&wrong_engine, 1);
  return rc;
}

/* ---- waiters released by contexts, on every engine ---- */
#define PAIRS 200
static Item pair_items[PAIRS];
static atomic_int pair_done;
static void waiter(void *arg) {
  Item *it = arg;
  ck_assert_int_eq(wait_item(&flags_src, it), 0);
  ck_assert_int_ne(atomic_load(&it->set), 0);
  atomic_fetch_add(&pair_done, 1);
}
static void setter(void *arg) {
  Item *it = arg;
  if ((it - pair_items) % 3 == 0) ck_assert_int_eq(MR_sleep_for(MS / 10), 0);
  atomic_store(&it->set, 1);
}

START_TEST(test_released_by_contexts) {
  start(2);
  atomic_store(&wrong_engine, 0);
  atomic_store(&pair_done, 0);
  for (int i = 0; i < PAIRS; i++) {
    atomic_store(&pair_items[i].set, 0);
    ck_assert_int_eq(MR_spawn(waiter, &pair_items[i], NULL), 0);
    ck_assert_int_eq(MR_spawn(setter, &pair_items[i], NULL), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&pair_done), PAIRS);
  ck_assert_int_eq(atomic_load(&wrong_engine), 0);
}
END_TEST

/* ---- set by a thread that is not an engine while every engine sleeps: nobody notifies, so
 * only the engine's bounded sleep and its poll see it ---- */
static void *set_later(void *arg) {
  struct timespec ts = {0, 30 * 1000 * 1000};
  nanosleep(&ts, NULL);
  atomic_store(&((Item *)arg)->set, 1);
  return NULL;
}

START_TEST(test_released_while_asleep) {
  start(2);
  for (int rep = 0; rep < 5; rep++) {
    Item it = {0, -1};
    pthread_t t;
    uint64_t t0 = MR_now(); /* before the thread starts its 30 ms */
    ck_assert_int_eq(pthread_create(&t, NULL, set_later, &it), 0);
    ck_assert_int_eq(wait_item(rep % 2 ? &slow_src : &flags_src, &it), 0);
    ck_assert(MR_now() - t0 >= 30 * MS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
  }
  ck_assert_int_eq(atomic_load(&wrong_engine), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- nothing outstanding: no poll, and idle engines sleep ---- */

/* Steal calls and sleeps of engine e so far. */
static void idle_counts(int e, uint64_t *steals, uint64_t *sleeps) {
  MR_EngineStats s;
  MR_engine_stats_init(&s);
  ck_assert_int_eq(MR_stats_get(e, &s), 0);
  *steals = s.steal_attempts;
  *sleeps = s.sleeps;
}

/* Idle engines sleep: counted, not timed (CPU time on a loaded machine is not theirs alone).
 * A sleep lasts until a notification or, in the polling build, a poll interval, so an engine
 * sleeps at most once an interval (and a few times more for the caller's timer); between two
 * sleeps it makes at most its spin rounds of steals from each other engine. An engine that
 * spun instead of sleeping would make thousands of steal calls a millisecond. */
START_TEST(test_no_wait_no_poll) {
  start(2);
  const int n = MR_num_engines();
  Item it = {1, -1};
  ck_assert_int_eq(wait_item(&flags_src, &it), 0); /* done at the first poll */
  atomic_store(&polls, 0);
  uint64_t steals0[2], sleeps0[2];
  for (int e = 0; e < n; e++) idle_counts(e, &steals0[e], &sleeps0[e]);
  const uint64_t t0 = MR_now();
  ck_assert_int_eq(MR_sleep_for(100 * MS), 0); /* every engine idle, then asleep */
  const uint64_t elapsed_us = (MR_now() - t0) / 1000;
  ck_assert_int_eq(atomic_load(&polls), 0);
  MR_Config c = mr_test_config(n);
  const uint64_t max_sleeps = elapsed_us / c.poll_interval_us + 4;
  for (int e = 0; e < n; e++) {
    uint64_t steals, sleeps;
    idle_counts(e, &steals, &sleeps);
    steals -= steals0[e];
    sleeps -= sleeps0[e];
    ck_assert_msg(sleeps <= max_sleeps, "engine %d slept %llu times in %llu us", e,
                  (unsigned long long)sleeps, (unsigned long long)elapsed_us);
    const uint64_t max_steals = (sleeps + 2) * (uint64_t)c.spin_rounds * (uint64_t)(n - 1) * 2;
    ck_assert_msg(steals <= max_steals, "engine %d made %llu steal calls between %llu sleeps", e,
                  (unsigned long long)steals, (unsigned long long)sleeps);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- the codes ---- */
static void *foreign_wait(void *arg) {
  Item it = {1, -1};
  (void)arg;
  return (void *)(intptr_t)MR_poll_wait(&flags_src, &it);
}

START_TEST(test_errors) {
  Item it = {1, -1};
  MR_PollSource no_fn = {NULL, NULL, 0};
  ck_assert_int_eq(MR_poll_wait(&flags_src, &it), MR_ENOTENGINE); /* not running */
  start(1);
  ck_assert_int_eq(MR_poll_wait(NULL, &it), MR_EINVAL);
  ck_assert_int_eq(MR_poll_wait(&no_fn, &it), MR_EINVAL);
  ck_assert_int_eq(MR_poll_wait(&flags_src, NULL), MR_EINVAL);
  pthread_t t;
  void *rc;
  ck_assert_int_eq(pthread_create(&t, NULL, foreign_wait, NULL), 0);
  ck_assert_int_eq(pthread_join(t, &rc), 0);
  ck_assert_int_eq((intptr_t)rc, MR_ENOTENGINE);
  MR_blocking_begin();
  ck_assert_int_eq(MR_poll_wait(&flags_src, &it), MR_ENOTENGINE);
  MR_blocking_end();
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- MR_shutdown_now drops the waiting contexts; their items are polled no more ---- */
static Item never[8];
static void wait_never(void *arg) {
  (void)wait_item(&flags_src, arg);
  ck_abort_msg("a wait that never ends ended");
}

START_TEST(test_shutdown_now_while_waiting) {
  start(2);
  for (int i = 0; i < 8; i++) ck_assert_int_eq(MR_spawn(wait_never, &never[i], NULL), 0);
  ck_assert_int_eq(MR_sleep_for(20 * MS), 0);
  MR_ShutdownReport r;
  MR_shutdown_report_init(&r);
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 8);
  atomic_store(&polls, 0);
  usleep(10000);
  ck_assert_int_eq(atomic_load(&polls), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("poll");
  TCase *tc = mr_tcase("poll", 60);
  tcase_add_test(tc, test_released_by_contexts);
  tcase_add_test(tc, test_released_while_asleep);
  tcase_add_test(tc, test_no_wait_no_poll);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_shutdown_now_while_waiting);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
