/* check_liveness.c: no runnable work and no due timer waits while an engine sleeps. An engine that
 * runs anything but its own sparks publishes the sparks it holds (doc/design.md, H1), so that the
 * other engines can take them: at a hand-off to another context, at a yield, before a blocking
 * region that runs in place, and at each fork inside one. A timer armed by a context that hands its engine to another is
 * answered for by a sleeping engine (TM1). Each case makes the other engine sleep while the one
 * that holds the work stays busy (spinning, or blocked in the kernel) until that work has run,
 * with a cap, so that the old behaviour fails an assertion rather than hanging. */
#define _GNU_SOURCE
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "mrengine.h"
#include "mrengine_time.h"
#include "testutil.h"

#define SPARKS 4
#define ROUNDS 20
/* How long a busy context waits for the work it must not keep from the other engine. */
#define CAP_NS 1000000000ull

static atomic_int started;

/* A spark that only says it started. */
static void mark_started(void *arg) {
  (void)arg;
  atomic_fetch_add(&started, 1);
}

/* Spin (without suspending: the engine stays busy) until n sparks have started or the cap has
 * passed. Returns whether they all started. */
static int spin_until_started(int n) {
  uint64_t until = MR_now() + CAP_NS;
  while (atomic_load(&started) < n)
    if (MR_now() > until) return 0;
  return 1;
}

/* Fork SPARKS sparks into st: the first is published, the newer ones held (2 engines: one kept
 * published), unless a thief asks meanwhile. */
static void fork_sparks(MR_SyncTerm *st) {
  atomic_store(&started, 0);
  MR_sync_term_init(st, SPARKS + 1);
  for (int i = 0; i < SPARKS; i++) MR_fork_new_child(st, mark_started, NULL);
}

/* --- a hand-off ---------------------------------------------------------------------------- */

static MR_Future handoff_go, handoff_back, handoff_ready;
static atomic_int handoff_saw;

/* Bound to engine 0 (so no thief takes it from the hand-off slot): signalled by the primordial,
 * it runs on the primordial's engine in its place and spins until the sparks the primordial
 * forked have started. */
static void handoff_target(void *arg) {
  (void)arg;
  MR_future_signal(&handoff_ready, 1);
  MR_future_wait(&handoff_go);
  atomic_store(&handoff_saw, spin_until_started(SPARKS));
  MR_future_signal(&handoff_back, 1);
}

/* The primordial (engine 0) forks sparks, signals a context bound to its engine (which goes to
 * the hand-off slot) and waits: the engine switches straight to that context, which spins until
 * the other engine has run every spark. */
START_TEST(test_handoff_publishes_held_sparks) {
  mr_test_start(2, NULL);
  for (int r = 0; r < ROUNDS; r++) {
    MR_SpawnOptions o;
    MR_SyncTerm st;
    MR_future_init(&handoff_go);
    MR_future_init(&handoff_back);
    MR_future_init(&handoff_ready);
    MR_spawn_options_default(&o);
    o.engine = 0;
    ck_assert_int_eq(MR_spawn(handoff_target, NULL, &o), 0);
    MR_future_wait(&handoff_ready);
    mr_test_sleep_ms(5); /* engine 1 falls asleep */
    fork_sparks(&st);
    MR_future_signal(&handoff_go, 1);
    MR_future_wait(&handoff_back);
    ck_assert_msg(atomic_load(&handoff_saw), "round %d: held sparks waited for the hand-off's end",
                  r);
    MR_join_and_continue(&st);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* --- a yield ------------------------------------------------------------------------------- */

static MR_Future yield_done;
static atomic_int yield_saw;

/* Unbound: forks, yields (its scheduler puts back the newest spark while it picks the yielder
 * to run again), then spins until every spark has started. */
static void yielder(void *arg) {
  MR_SyncTerm st;
  (void)arg;
  mr_test_sleep_ms(5); /* the other engine falls asleep */
  fork_sparks(&st);
  ck_assert_int_eq(MR_yield(), 0);
  atomic_store(&yield_saw, spin_until_started(SPARKS));
  MR_join_and_continue(&st);
  MR_future_signal(&yield_done, 1);
}

START_TEST(test_yield_keeps_sparks_published) {
  mr_test_start(2, NULL);
  for (int r = 0; r < ROUNDS; r++) {
    MR_future_init(&yield_done);
    ck_assert_int_eq(MR_spawn(yielder, NULL, NULL), 0);
    MR_future_wait(&yield_done);
    ck_assert_msg(atomic_load(&yield_saw), "round %d: a spark put back at the yield stayed held",
                  r);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* --- a blocking region run in place -------------------------------------------------------- */

static int pipe_fd[2];

static void write_pipe(void *arg) {
  (void)arg;
  ck_assert_int_eq(write(pipe_fd[1], "x", 1), 1);
}

/* With no backup thread, the region runs on the engine, which blocks in poll(2) until the
 * second spark (held, unless a thief asked first) writes the pipe: only the other engine can
 * run it. */
START_TEST(test_blocking_in_place_publishes_held_sparks) {
  mr_test_start(2, "--max-backup-threads 0");
  for (int r = 0; r < ROUNDS; r++) {
    MR_SyncTerm st;
    struct pollfd p;
    char c;
    ck_assert_int_eq(pipe(pipe_fd), 0);
    mr_test_sleep_ms(5); /* engine 1 falls asleep */
    MR_sync_term_init(&st, 3);
    MR_fork_new_child(&st, mark_started, NULL);
    MR_fork_new_child(&st, write_pipe, NULL);
    MR_blocking_begin();
    p.fd = pipe_fd[0];
    p.events = POLLIN;
    p.revents = 0;
    ck_assert_msg(poll(&p, 1, 1000) == 1, "round %d: the spark that writes the pipe stayed held",
                  r);
    ck_assert_int_eq(read(pipe_fd[0], &c, 1), 1);
    MR_blocking_end();
    MR_join_and_continue(&st);
    close(pipe_fd[0]);
    close(pipe_fd[1]);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* With no backup thread, the region runs on the engine, and the sparks are forked inside it,
 * by the inline fork and by the library's: the engine then blocks in poll(2) until each has
 * written the pipe. Held, all but one would wait for an engine that never pushes, pops or
 * switches again; each push in such a region publishes. */
START_TEST(test_blocking_in_place_publishes_sparks_forked_inside) {
  mr_test_start(2, "--max-backup-threads 0");
  for (int r = 0; r < ROUNDS; r++) {
    MR_SyncTerm st;
    int got = 0;
    ck_assert_int_eq(pipe(pipe_fd), 0);
    mr_test_sleep_ms(5); /* engine 1 falls asleep */
    MR_blocking_begin();
    ck_assert_int_eq(MR_engine_id(), 0); /* in place */
    MR_sync_term_init(&st, SPARKS + 1);
    for (int i = 0; i < SPARKS; i++) {
      if (i % 2)
        MR_fork_new_child(&st, write_pipe, NULL);
      else
        (MR_fork_new_child)(&st, write_pipe, NULL); /* the library's, not the inline one */
    }
    while (got < SPARKS) {
      struct pollfd p = {pipe_fd[0], POLLIN, 0};
      char c[SPARKS];
      ck_assert_msg(poll(&p, 1, 1000) == 1, "round %d: %d of %d sparks forked in the region ran", r,
                    got, SPARKS);
      ssize_t n = read(pipe_fd[0], c, sizeof c);
      ck_assert_int_gt(n, 0);
      got += (int)n;
    }
    MR_join_and_continue(&st);
    MR_blocking_end();
    close(pipe_fd[0]);
    close(pipe_fd[1]);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* --- a sleep that hands its engine to another context -------------------------------------- */

#define SLEEP_NS 5000000ull
#define BUSY_NS 300000000ull

static MR_Future sleep_done, busy_done;
static atomic_int slept;
static uint64_t sleep_took;

/* Bound to the sleeper's engine: runs there in the sleeper's place and computes for BUSY_NS,
 * or until the sleeper is back. */
static void busy(void *arg) {
  uint64_t until = MR_now() + BUSY_NS;
  (void)arg;
  while (!atomic_load(&slept) && MR_now() < until) {}
  MR_future_signal(&busy_done, 1);
}

/* Unbound: makes a context bound to its own engine runnable (it goes to the hand-off slot),
 * then sleeps: the engine switches straight to that context. */
static void sleeper(void *arg) {
  MR_SpawnOptions o;
  uint64_t t0;
  (void)arg;
  mr_test_sleep_ms(5); /* the other engine falls asleep */
  MR_spawn_options_default(&o);
  o.engine = MR_engine_id();
  ck_assert_int_eq(MR_spawn(busy, NULL, &o), 0);
  t0 = MR_now();
  ck_assert_int_eq(MR_sleep_for(SLEEP_NS), 0);
  sleep_took = MR_now() - t0;
  atomic_store(&slept, 1);
  MR_future_signal(&sleep_done, 1);
}

START_TEST(test_handoff_sleep_is_answered_for) {
  mr_test_start(2, NULL);
  for (int r = 0; r < ROUNDS / 2; r++) {
    MR_future_init(&sleep_done);
    MR_future_init(&busy_done);
    atomic_store(&slept, 0);
    ck_assert_int_eq(MR_spawn(sleeper, NULL, NULL), 0);
    MR_future_wait(&sleep_done);
    MR_future_wait(&busy_done); /* the next round starts with both engines free */
    /* The bound (TM1) is the grace (1 ms) and a wake-up; 100 ms leaves room for a loaded machine
     * and is a third of the busy context's time. */
    ck_assert_msg(sleep_took < 100000000ull, "round %d: a 5 ms sleep took %.1f ms", r,
                  (double)sleep_took / 1e6);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("liveness");
  TCase *tc = mr_tcase("liveness", 60);
  tcase_add_test(tc, test_handoff_publishes_held_sparks);
  tcase_add_test(tc, test_yield_keeps_sparks_published);
  tcase_add_test(tc, test_blocking_in_place_publishes_held_sparks);
  tcase_add_test(tc, test_blocking_in_place_publishes_sparks_forked_inside);
  tcase_add_test(tc, test_handoff_sleep_is_answered_for);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
