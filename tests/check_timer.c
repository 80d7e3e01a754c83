/* check_timer.c: sleeps, timers, futures at a deadline and tickers through the C ABI: nothing
 * fires early, everything fires (late bounds are generous: the machine is shared), cancel races
 * against firing, 10^5 pending timers on an idle runtime, bound contexts resume on their engine,
 * an engine whose context never suspends has its timers fired by another, and the error codes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mrengine.h"
#include "testutil.h"

#define MS 1000000ull
/* A timer or a sleep that is this late has been lost (the machine is noisy, never this noisy). */
#define LOST (3000 * MS)

/* ---- sleeps from contexts: never early, all resumed, each within LOST ---- */
enum { SLEEPERS = MR_TEST_SCALE(1000) };
static atomic_int sleep_bad, sleep_done;
static void sleeper(void *arg) {
  uint64_t ns = (uint64_t)(uintptr_t)arg;
  for (int k = 0; k < 3; k++) {
    uint64_t want = MR_now() + ns;
    ck_assert_int_eq(MR_sleep_until(want), 0);
    uint64_t got = MR_now();
    if (got < want || got - want > LOST) atomic_fetch_add(&sleep_bad, 1);
  }
  atomic_fetch_add(&sleep_done, 1);
}

START_TEST(test_sleeps) {
  mr_test_start(1 + _i, "--stack-size 64");
  atomic_store(&sleep_bad, 0);
  atomic_store(&sleep_done, 0);
  for (int i = 0; i < SLEEPERS; i++)
    ck_assert_int_eq(MR_spawn(sleeper, (void *)(uintptr_t)((i % 20) * MS / 4), NULL), 0);
  /* The primordial sleeps too (a context bound to engine 0). */
  uint64_t want = MR_now() + 10 * MS;
  ck_assert_int_eq(MR_sleep_for(10 * MS), 0);
  ck_assert(MR_now() >= want);
  ck_assert_int_eq(MR_engine_id(), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&sleep_done), SLEEPERS);
  ck_assert_int_eq(atomic_load(&sleep_bad), 0);
}
END_TEST

/* ---- bound contexts resume on their engine ---- */
static atomic_int bound_wrong;
static void bound_sleeper(void *arg) {
  int engine = (int)(intptr_t)arg;
  for (int k = 0; k < 20; k++) {
    ck_assert_int_eq(MR_sleep_for((uint64_t)(k % 3) * MS), 0);
    if (MR_engine_id() != engine) atomic_fetch_add(&bound_wrong, 1);
  }
}

START_TEST(test_bound_sleep) {
  mr_test_start(2, NULL);
  MR_SpawnOptions o;
  atomic_store(&bound_wrong, 0);
  for (int i = 0; i < 40; i++) {
    MR_spawn_options_default(&o);
    o.engine = i % 2;
    ck_assert_int_eq(MR_spawn(bound_sleeper, (void *)(intptr_t)(i % 2), &o), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&bound_wrong), 0);
}
END_TEST

/* ---- a thread that is not an engine, and no runtime at all: the thread sleeps ---- */
static void *foreign_sleeper(void *arg) {
  (void)arg;
  uint64_t want = MR_now() + 5 * MS;
  ck_assert_int_eq(MR_sleep_until(want), 0);
  ck_assert(MR_now() >= want);
  ck_assert_int_eq(MR_engine_id(), -1);
  return NULL;
}

START_TEST(test_foreign_sleep) {
  pthread_t th;
  uint64_t want = MR_now() + 5 * MS;
  ck_assert_int_eq(MR_sleep_for(5 * MS), 0); /* not running */
  ck_assert(MR_now() >= want);
  mr_test_start(2, NULL);
  ck_assert_int_eq(pthread_create(&th, NULL, foreign_sleeper, NULL), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- bad input ---- */
static atomic_int ran;
static void count_run(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

START_TEST(test_bad_input) {
  MR_Timer t = MR_TIMER_INIT, u = MR_TIMER_INIT;
  MR_Ticker tk;
  uint64_t n;
  ck_assert_int_eq(MR_timer_start(&t, MR_now(), count_run, &ran), MR_ENOTINIT);
  ck_assert_int_eq(MR_timer_cancel(&t), MR_EINVAL); /* never started */
  ck_assert_int_eq(MR_timer_cancel(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_ticker_start(&tk, 0), MR_EINVAL);
  ck_assert_int_eq(MR_ticker_start(NULL, 1), MR_EINVAL);
  ck_assert_int_eq(MR_ticker_wait(&tk, NULL), MR_EINVAL);
  memset(&tk, 0, sizeof tk);
  ck_assert_int_eq(MR_ticker_wait(&tk, &n), MR_EINVAL); /* not started */
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_sleep_for(UINT64_MAX), MR_EOVERFLOW);
  ck_assert_int_eq(MR_sleep_for(UINT64_MAX - MR_now() / 2), MR_EOVERFLOW);
  ck_assert_int_eq(MR_sleep_until(0), 0); /* in the past: at once */
  ck_assert_int_eq(MR_sleep_for(0), 0);
  ck_assert_int_eq(MR_timer_start(NULL, 0, count_run, &ran), MR_EINVAL);
  ck_assert_int_eq(MR_timer_start(&t, 0, NULL, &ran), MR_EINVAL);
  ck_assert_int_eq(MR_future_signal_at(NULL, 1, 0, &t), MR_EINVAL);
  /* Pending, cancelled, cancelled again; started again; a pending timer cannot be started. */
  ck_assert_int_eq(MR_timer_start(&t, MR_now() + 3600000 * MS, count_run, &ran), 0);
  ck_assert_int_eq(MR_timer_start(&t, MR_now(), count_run, &ran), MR_EINVAL);
  ck_assert_int_eq(MR_timer_cancel(&t), 0);
  ck_assert_int_eq(MR_timer_cancel(&t), MR_ECANCELLED);
  /* A deadline in the past fires at once; cancel then says it fired. */
  atomic_store(&ran, 0);
  ck_assert_int_eq(MR_timer_start(&t, 1, count_run, &ran), 0);
  ck_assert_int_eq(MR_timer_cancel(&t), MR_EFIRED);
  /* Dropped at shutdown: never runs, and cancel says so afterwards. */
  ck_assert_int_eq(MR_timer_start(&u, MR_now() + 3600000 * MS, count_run, &ran), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&ran), 1);
  ck_assert_int_eq(MR_timer_cancel(&u), MR_ESHUTDOWN);
  ck_assert_str_eq(MR_err_name(MR_EFIRED), "MR_EFIRED");
  ck_assert_str_eq(MR_err_name(MR_ECANCELLED), "MR_ECANCELLED");
  ck_assert_str_eq(MR_err_name(MR_EOVERFLOW), "MR_EOVERFLOW");
}
END_TEST

/* ---- timers fire once each, not early, in every build; from contexts and a foreign thread --- */
enum { TIMERS = MR_TEST_SCALE(2000) };
static MR_Timer timers[TIMERS];
static uint64_t timer_due[TIMERS];
static atomic_int timer_runs[TIMERS];
static atomic_int timer_early;
static void timer_fn(void *arg) {
  intptr_t i = (intptr_t)arg;
  if (MR_now() < timer_due[i]) atomic_fetch_add(&timer_early, 1);
  atomic_fetch_add(&timer_runs[i], 1);
}

static void arm_range(intptr_t from, intptr_t to) {
  for (intptr_t i = from; i < to; i++) {
    timer_due[i] = MR_now() + (uint64_t)(i % 17) * MS / 2;
    ck_assert_int_eq(MR_timer_start(&timers[i], timer_due[i], timer_fn, (void *)i), 0);
  }
}
static void arm_half(void *arg) {
  (void)arg;
  arm_range(0, TIMERS / 2);
}
static void *arm_foreign(void *arg) {
  (void)arg;
  arm_range(TIMERS / 2, TIMERS);
  return NULL;
}

START_TEST(test_timers_fire) {
  pthread_t th;
  mr_test_start(2, NULL);
  memset(timers, 0, sizeof timers);
  atomic_store(&timer_early, 0);
  for (int i = 0; i < TIMERS; i++) atomic_store(&timer_runs[i], 0);
  ck_assert_int_eq(MR_spawn(arm_half, NULL, NULL), 0);
  ck_assert_int_eq(pthread_create(&th, NULL, arm_foreign, NULL), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  /* Wait (suspended) until each has run, then cancel says it fired. */
  uint64_t stop = MR_now() + LOST;
  for (int i = 0; i < TIMERS; i++) {
    while (atomic_load(&timer_runs[i]) == 0 && MR_now() < stop) MR_sleep_for(MS);
    ck_assert_int_eq(atomic_load(&timer_runs[i]), 1);
    ck_assert_int_eq(MR_timer_cancel(&timers[i]), MR_EFIRED);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&timer_early), 0);
}
END_TEST

/* ---- cancel races: arm/cancel pairs from two threads against firing ---- */
enum { PAIRS = MR_TEST_SCALE(100000) };
static MR_Timer race_t[2][256];
static atomic_int race_runs[2][256];
static atomic_long race_fired[2], race_cancelled[2], race_bad;
static void race_fn(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* Timers in a ring of 256: each slot is cancelled, or waited for until it fired, before reuse. */
static void race_side(int side) {
  for (long k = 0; k < PAIRS / 2; k++) {
    int s = (int)(k % 256);
    MR_Timer *t = &race_t[side][s];
    ck_assert_int_eq(
        MR_timer_start(t, MR_now() + (uint64_t)(k % 5) * 20000, race_fn, &race_runs[side][s]), 0);
    int rc = MR_timer_cancel(t);
    if (rc == 0) {
      atomic_fetch_add(&race_cancelled[side], 1);
    } else if (rc == MR_EFIRED) {
      atomic_fetch_add(&race_fired[side], 1);
    } else {
      atomic_fetch_add(&race_bad, 1);
    }
  }
}
static void race_ctx(void *arg) { race_side((int)(intptr_t)arg); }
static void *race_thread(void *arg) {
  race_side((int)(intptr_t)arg);
  return NULL;
}

START_TEST(test_cancel_race) {
  pthread_t th;
  mr_test_start(2, NULL);
  memset(race_t, 0, sizeof race_t);
  for (int s = 0; s < 2; s++) {
    atomic_store(&race_fired[s], 0);
    atomic_store(&race_cancelled[s], 0);
    for (int i = 0; i < 256; i++) atomic_store(&race_runs[s][i], 0);
  }
  atomic_store(&race_bad, 0);
  /* Side 0 in a context on the engines, side 1 on a thread that is not an engine. */
  ck_assert_int_eq(MR_spawn(race_ctx, (void *)0, NULL), 0);
  ck_assert_int_eq(pthread_create(&th, NULL, race_thread, (void *)1), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  /* Wait until side 0 is done and every fired function has run (a timer that fired while the
   * runtime shuts down may be dropped, so this is checked before MR_shutdown). */
  uint64_t stop = MR_now() + 4 * LOST;
  long runs[2];
  for (;;) {
    for (int s = 0; s < 2; s++) {
      runs[s] = 0;
      for (int i = 0; i < 256; i++) runs[s] += atomic_load(&race_runs[s][i]);
    }
    if ((runs[0] == atomic_load(&race_fired[0]) && runs[1] == atomic_load(&race_fired[1]) &&
         atomic_load(&race_fired[0]) + atomic_load(&race_cancelled[0]) == PAIRS / 2) ||
        MR_now() > stop)
      break;
    MR_sleep_for(MS);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&race_bad), 0);
  for (int s = 0; s < 2; s++) {
    /* Exactly the timers cancel called fired ran; the cancelled ones never did. */
    ck_assert_int_eq(runs[s], atomic_load(&race_fired[s]));
    ck_assert_int_eq(atomic_load(&race_fired[s]) + atomic_load(&race_cancelled[s]), PAIRS / 2);
  }
}
END_TEST

/* ---- 10^5 pending timers on an idle runtime: none fires, all cancel ---- */
enum { PENDING = MR_TEST_SCALE(100000) };
static MR_Timer pending_t[PENDING];

START_TEST(test_many_pending) {
  mr_test_start(2, NULL);
  memset(pending_t, 0, sizeof pending_t);
  atomic_store(&ran, 0);
  uint64_t far = MR_now() + 3600000 * MS;
  for (int i = 0; i < PENDING; i++)
    ck_assert_int_eq(
        MR_timer_start(&pending_t[i], far + (uint64_t)((i * 7919) % PENDING), count_run, &ran), 0);
  ck_assert_int_eq(MR_sleep_for(100 * MS), 0);
  /* Cancel in an order unrelated to the heap's. */
  for (int i = 0; i < PENDING; i++)
    ck_assert_int_eq(MR_timer_cancel(&pending_t[(i * 31) % PENDING]), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&ran), 0);
}
END_TEST

/* ---- an engine whose context never suspends: another engine fires its timer ---- */
static atomic_int taken_flag;
static void set_flag(void *arg) {
  (void)arg;
  atomic_store(&taken_flag, 1);
}
static atomic_int busy_saw_flag;
static MR_Future busy_done;
static void busy(void *arg) {
  MR_Timer *t = arg;
  ck_assert_int_eq(MR_timer_start(t, MR_now() + 5 * MS, set_flag, NULL), 0);
  /* Spin without suspending: this engine never passes its idle loop meanwhile. */
  uint64_t stop = MR_now() + LOST;
  while (!atomic_load(&taken_flag) && MR_now() < stop) {}
  atomic_store(&busy_saw_flag, atomic_load(&taken_flag));
  MR_future_signal(&busy_done, 1);
}

START_TEST(test_busy_engine_takeover) {
  MR_Timer t = MR_TIMER_INIT;
  MR_SpawnOptions o;
  mr_test_start(2, NULL);
  MR_future_init(&busy_done);
  for (int rep = 0; rep < 5; rep++) {
    atomic_store(&taken_flag, 0);
    atomic_store(&busy_saw_flag, 0);
    MR_spawn_options_default(&o);
    o.engine = 1;
    ck_assert_int_eq(MR_spawn(busy, &t, &o), 0);
    /* The primordial waits on a future (no deadline of its own), so engine 0 sleeps while
     * engine 1 spins: only the arm's cover (TM1) wakes it in time. */
    ck_assert_uint_eq(MR_future_wait(&busy_done), 1);
    MR_future_init(&busy_done);
    ck_assert_int_eq(atomic_load(&busy_saw_flag), 1);
  }
  MR_EngineStats st;
  MR_engine_stats_init(&st);
  ck_assert_int_eq(MR_stats_get(0, &st), 0);
  ck_assert_uint_ge(st.timers_taken, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a future signalled at a deadline; cancelled, it stays unsignalled ---- */
START_TEST(test_future_at) {
  MR_Future f = MR_FUTURE_INIT, g = MR_FUTURE_INIT;
  MR_Timer t = MR_TIMER_INIT, u = MR_TIMER_INIT;
  mr_test_start(2, NULL);
  for (int rep = 0; rep < 20; rep++) {
    MR_future_init(&f);
    uint64_t due = MR_now() + (uint64_t)(rep % 4) * MS;
    ck_assert_int_eq(MR_future_signal_at(&f, 42 + (uintptr_t)rep, due, &t), 0);
    ck_assert_uint_eq(MR_future_wait(&f), 42 + (uintptr_t)rep);
    ck_assert(MR_now() >= due);
    ck_assert_int_eq(MR_timer_cancel(&t), MR_EFIRED);
  }
  ck_assert_int_eq(MR_future_signal_at(&g, 1, MR_now() + 20 * MS, &u), 0);
  ck_assert_int_eq(MR_timer_cancel(&u), 0);
  ck_assert_int_eq(MR_sleep_for(40 * MS), 0);
  ck_assert(!MR_future_is_signalled(&g));
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a ticker counts missed ticks ---- */
START_TEST(test_ticker) {
  MR_Ticker tk;
  uint64_t n, total = 0;
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_ticker_start(&tk, 5 * MS), 0);
  for (int k = 0; k < 5; k++) {
    ck_assert_int_eq(MR_ticker_wait(&tk, &n), 0);
    ck_assert_uint_ge(n, 1);
    total += n;
  }
  ck_assert_int_eq(MR_sleep_for(50 * MS), 0);
  /* At least 50 ms since the last tick was reported: at least 10 periods. */
  ck_assert_int_eq(MR_ticker_wait(&tk, &n), 0);
  ck_assert_uint_ge(n, 10);
  ck_assert_int_eq(MR_shutdown(), 0);
  (void)total;
}
END_TEST

/* ---- a shutdown while contexts sleep: their timers live on their stacks, which the shutdown
 * frees; the timers are dropped before (a crash or an ASan report otherwise) ---- */
static atomic_int asleep;
static void long_sleeper(void *arg) {
  (void)arg;
  atomic_fetch_add(&asleep, 1);
  (void)MR_sleep_for(3600ull * 1000 * MS);
  ck_abort_msg("a dropped sleeper resumed");
}

static void start_sleepers(int channel, int n) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = channel;
  atomic_store(&asleep, 0);
  for (int i = 0; i < n; i++) ck_assert_int_eq(MR_spawn(long_sleeper, NULL, &o), 0);
  while (atomic_load(&asleep) < n) MR_sleep_for(MS);
  MR_sleep_for(5 * MS); /* the last one is in its sleep */
}

START_TEST(test_shutdown_drops_sleepers) {
  MR_ChannelOptions c;
  MR_ShutdownReport r;
  mr_test_start(2, NULL);
  MR_channel_options_default(&c);
  c.close = MR_CLOSE_DROP;
  int ch = MR_channel_create(&c);
  ck_assert_int_gt(ch, 0);
  start_sleepers(ch, 50);
  ck_assert_int_eq(MR_shutdown(), 0); /* drop channel: the sleepers are dropped */
  mr_test_start(2, NULL);
  start_sleepers(MR_CHANNEL_DEFAULT, 50);
  MR_shutdown_report_init(&r);
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 50);
}
END_TEST

int main(void) {
  Suite *s = suite_create("timer");
  TCase *tc = mr_tcase("sleep", 120);
  tcase_add_loop_test(tc, test_sleeps, 0, 2);
  tcase_add_test(tc, test_bound_sleep);
  tcase_add_test(tc, test_foreign_sleep);
  tcase_add_loop_test(tc, test_shutdown_drops_sleepers, 0, 5);
  suite_add_tcase(s, tc);
  tc = mr_tcase("timer", 180);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_timers_fire);
  tcase_add_test(tc, test_cancel_race);
  tcase_add_test(tc, test_many_pending);
  tcase_add_test(tc, test_busy_engine_takeover);
  tcase_add_test(tc, test_future_at);
  tcase_add_test(tc, test_ticker);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
