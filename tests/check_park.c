/* check_park.c: the park hook (MR_Config.park / unpark). A test double keeps the contract in its
 * weakest form (a binary permit; it returns early, without consuming the permit, on every
 * third call) and counts its calls: sparks, futures, sleeps and lazy engines all run to the right
 * result through it, it is only ever called for the engine whose thread calls it, and the
 * errors (one hook without the other, a park that fails) are reported. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrengine.h"
#include "testutil.h"

enum { MAXE = 8 };

struct permit {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int set;
};
static struct permit permits[MAXE];
static atomic_long parks, unparks, early, wrong_thread;

static void double_init(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  for (int i = 0; i < MAXE; i++) {
    pthread_mutex_init(&permits[i].lock, NULL);
    pthread_cond_init(&permits[i].cond, &a);
    permits[i].set = 0;
  }
  pthread_condattr_destroy(&a);
  atomic_store(&parks, 0);
  atomic_store(&unparks, 0);
  atomic_store(&early, 0);
  atomic_store(&wrong_thread, 0);
}

static int double_park(void *ctx, int engine, uint64_t deadline) {
  struct permit *p = &permits[engine];
  long n = atomic_fetch_add(&parks, 1);
  ck_assert_ptr_eq(ctx, (void *)permits);
  if (MR_engine_id() != engine) atomic_fetch_add(&wrong_thread, 1);
  if (n % 3 == 2) { /* early, for no reason, leaving any permit where it is */
    atomic_fetch_add(&early, 1);
    return 0;
  }
  pthread_mutex_lock(&p->lock);
  while (!p->set) {
    if (deadline == UINT64_MAX) {
      pthread_cond_wait(&p->cond, &p->lock);
    } else {
      struct timespec ts;
      ts.tv_sec = (time_t)(deadline / 1000000000u);
      ts.tv_nsec = (long)(deadline % 1000000000u);
      if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT) break;
    }
  }
  p->set = 0;
  pthread_mutex_unlock(&p->lock);
  return 0;
}

static void double_unpark(void *ctx, int engine) {
  struct permit *p = &permits[engine];
  (void)ctx;
  atomic_fetch_add(&unparks, 1);
  pthread_mutex_lock(&p->lock);
  p->set = 1;
  pthread_cond_signal(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

static void start_with_double(int engines, const char *opts) {
  char text[128];
  MR_Config c;
  double_init();
  snprintf(text, sizeof text, "-P %d %s", engines, opts ? opts : "");
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.options = text;
  c.park = double_park;
  c.unpark = double_unpark;
  c.park_ctx = permits;
  ck_assert_int_eq(MR_init(&c), 0);
}

/* ---- work through the hook ---- */
struct fib_env {
  int n;
  long r;
};
static void fib(void *arg) {
  struct fib_env *e = arg, a, b;
  if (e->n < 2) {
    e->r = e->n;
    return;
  }
  a.n = e->n - 1;
  b.n = e->n - 2;
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, fib, &a);
  fib(&b);
  MR_join_and_continue(&st);
  e->r = a.r + b.r;
}

enum { LINKS = MR_TEST_SCALE(2000) };
static MR_Future chain[LINKS + 1];
static void link_fn(void *arg) {
  intptr_t i = (intptr_t)arg;
  uintptr_t v = MR_future_wait(&chain[i]);
  if (i % 50 == 0) MR_sleep_for(100000); /* a timed park now and then */
  MR_future_signal(&chain[i + 1], v + 1);
}

START_TEST(test_work_through_hook) {
  /* _i = 0: eager engines; 1: lazy engines (started by a notification through the hook). */
  for (int round = 0; round < 5; round++) {
    start_with_double(2 + round % 2, _i ? "--lazy-engines --stack-size 64" : "--stack-size 64");
    struct fib_env f = {20, 0};
    fib(&f);
    ck_assert_int_eq(f.r, 6765);
    for (int i = 0; i <= LINKS; i++) MR_future_init(&chain[i]);
    for (intptr_t i = LINKS - 1; i >= 0; i--)
      ck_assert_int_eq(MR_spawn(link_fn, (void *)i, NULL), 0);
    MR_future_signal(&chain[0], 0);
    ck_assert_uint_eq(MR_future_wait(&chain[LINKS]), LINKS);
    uint64_t want = MR_now() + 2000000;
    ck_assert_int_eq(MR_sleep_until(want), 0);
    ck_assert(MR_now() >= want);
    ck_assert_int_eq(MR_shutdown(), 0);
    ck_assert_int_gt(atomic_load(&parks), 0);
    ck_assert_int_gt(atomic_load(&unparks), 0);
    ck_assert_int_eq(atomic_load(&wrong_thread), 0);
  }
  ck_assert_int_gt(atomic_load(&early), 0);
}
END_TEST

/* ---- errors ---- */
START_TEST(test_hooks_set_together) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET;
  c.park = double_park;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "park"));
  c.park = NULL;
  c.unpark = double_unpark;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
}
END_TEST

static int failing_park(void *ctx, int engine, uint64_t deadline) {
  (void)ctx;
  (void)engine;
  (void)deadline;
  return MR_EINVAL;
}
static void noop_unpark(void *ctx, int engine) {
  (void)ctx;
  (void)engine;
}

/* A park that fails stops the process with a message (SIGABRT), rather than spinning. */
START_TEST(test_failing_park_stops) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.engines = 2;
  c.park = failing_park;
  c.unpark = noop_unpark;
  ck_assert_int_eq(MR_init(&c), 0);
  /* Engine 1 finds nothing to do and parks. */
  MR_sleep_for(5000000000ull);
  ck_abort_msg("a failing park hook was not reported");
}
END_TEST

int main(void) {
  Suite *s = suite_create("park");
  TCase *tc = mr_tcase("park", 120);
  tcase_add_loop_test(tc, test_work_through_hook, 0, 2);
  tcase_add_test(tc, test_hooks_set_together);
  tcase_add_test_raise_signal(tc, test_failing_park_stops, SIGABRT);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
