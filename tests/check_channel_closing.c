/* check_channel_closing.c: MR_channel_close and MR_channel_wait while the runtime runs
 * (doc/api.md, "Closing"): the errors; a complete channel runs what was spawned before the
 * close, a drop channel drops and counts it (on_drop once each); a context closing its own
 * channel; closes racing spawns from contexts and threads, every spawn run, dropped and counted,
 * or refused with MR_ECLOSED. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "channelutil.h"

static atomic_int ran, started, drops;
static void count_drop(void *arg) {
  (void)arg;
  atomic_fetch_add(&drops, 1);
}
static int spawn_counted(MR_TaskFn fn, void *arg, int ch) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  o.on_drop = count_drop;
  return MR_spawn(fn, arg, &o);
}
static void runs(void *arg) {
  (void)arg;
  atomic_fetch_add(&started, 1);
  ck_assert_int_eq(MR_yield(), 0); /* a suspension: a closed drop channel drops it here */
  atomic_fetch_add(&ran, 1);
}
static uint64_t dropped_in(int ch) {
  MR_ChannelStats s;
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_stats(ch, &s), 0);
  return s.contexts_dropped;
}
static void reset(void) {
  atomic_store(&ran, 0);
  atomic_store(&started, 0);
  atomic_store(&drops, 0);
}

static int own_wait_rc;
static MR_Future closed;
static void waits_for_own_channel(void *arg) {
  MR_future_wait(&closed);
  own_wait_rc = MR_channel_wait(*(int *)arg);
}

/* The codes: the default channel cannot be closed, a second close and a spawn into a closed
 * channel get MR_ECLOSED, an open channel cannot be waited for, a context of the channel gets
 * MR_EDEADLK; nothing once MR_shutdown has begun or the runtime stopped. */
START_TEST(test_errors) {
  ck_assert_int_eq(MR_channel_close(1), MR_ENOTINIT);
  ck_assert_int_eq(MR_channel_wait(1), MR_ENOTINIT);
  mr_test_start(2, NULL);
  int ch = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  ck_assert_int_eq(MR_channel_close(MR_CHANNEL_DEFAULT), MR_EINVAL);
  ck_assert_int_eq(MR_channel_wait(MR_CHANNEL_DEFAULT), MR_EINVAL);
  ck_assert_int_eq(MR_channel_close(ch + 1), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_channel_close(-1), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_channel_wait(ch + 1), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_channel_wait(ch), MR_EINVAL); /* open */
  own_wait_rc = 1;
  MR_future_init(&closed);
  ck_assert_int_eq(spawn_in(waits_for_own_channel, &ch, ch, 0), 0);
  ck_assert_int_eq(MR_channel_close(ch), 0);
  MR_future_signal(&closed, 1);
  ck_assert_int_eq(MR_channel_close(ch), MR_ECLOSED);
  ck_assert_int_eq(spawn_in(nothing, NULL, ch, 0), MR_ECLOSED);
  ck_assert_int_eq(MR_channel_wait(ch), 0);
  ck_assert_int_eq(own_wait_rc, MR_EDEADLK);
  ck_assert_int_eq(MR_channel_wait(ch), 0); /* again: at once */
  /* The default channel stays open. */
  ck_assert_int_eq(MR_spawn(nothing, NULL, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(MR_channel_close(ch), MR_ENOTINIT);
}
END_TEST

/* MR_CLOSE_COMPLETE: what was spawned before the close runs to its end (1 engine, so all of it
 * is queued at the close); nothing is dropped; no on_drop. */
START_TEST(test_complete_runs_queued) {
  mr_test_start(1, NULL);
  int ch = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  reset();
  for (int i = 0; i < 20; i++) ck_assert_int_eq(spawn_counted(runs, NULL, ch), 0);
  ck_assert_int_eq(atomic_load(&started), 0);
  ck_assert_int_eq(MR_channel_close(ch), 0);
  ck_assert_int_eq(spawn_counted(runs, NULL, ch), MR_ECLOSED);
  ck_assert_int_eq(MR_channel_wait(ch), 0);
  ck_assert_int_eq(atomic_load(&ran), 20);
  ck_assert_int_eq(atomic_load(&drops), 0);
  ck_assert_uint_eq(dropped_in(ch), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&drops), 0);
}
END_TEST

/* MR_CLOSE_DROP: the queued contexts (FIFO and deadline channels) are dropped and counted, and a
 * started one that suspended is dropped when it would resume; on_drop once each; the channel's
 * sparks still run (a started conjunction's parent waits for them). 1 engine. */
static MR_Future go;
static atomic_int sparks_ran;
static void spark(void *arg) {
  (void)arg;
  atomic_fetch_add(&sparks_ran, 1);
}
static void forks_and_waits(void *arg) {
  (void)arg;
  MR_SyncTerm st;
  MR_sync_term_init(&st, 3);
  MR_fork_new_child(&st, spark, NULL);
  MR_fork_new_child(&st, spark, NULL);
  atomic_fetch_add(&started, 1);
  MR_future_wait(&go); /* suspended, its two sparks on the deque, when the channel closes */
  MR_join_and_continue(&st);
  atomic_fetch_add(&ran, 1);
}
START_TEST(test_drop_drops_queued) {
  mr_test_start(1, NULL);
  /* Level 0, as this context: its yields let them run. */
  int ch = make_channel(0, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  int dl = make_channel(2, MR_CHANNEL_DEADLINE, MR_CLOSE_DROP, -1);
  int keep = make_channel(0, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  reset();
  atomic_store(&sparks_ran, 0);
  MR_future_init(&go);
  ck_assert_int_eq(spawn_counted(forks_and_waits, NULL, ch), 0);
  while (atomic_load(&started) < 1) ck_assert_int_eq(MR_yield(), 0);
  for (int i = 0; i < 9; i++) ck_assert_int_eq(spawn_counted(runs, NULL, ch), 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = dl;
  o.on_drop = count_drop;
  for (int i = 0; i < 4; i++) {
    o.deadline = MR_now() + (uint64_t)i;
    ck_assert_int_eq(MR_spawn(runs, NULL, &o), 0);
  }
  ck_assert_int_eq(spawn_counted(runs, NULL, keep), 0); /* another drop channel, left open */
  ck_assert_int_eq(MR_channel_close(ch), 0);
  ck_assert_int_eq(MR_channel_close(dl), 0);
  MR_future_signal(&go, 1);
  ck_assert_int_eq(MR_channel_wait(ch), 0);
  ck_assert_int_eq(MR_channel_wait(dl), 0);
  ck_assert_int_eq(atomic_load(&drops), 14);
  ck_assert_uint_eq(dropped_in(ch), 10);
  ck_assert_uint_eq(dropped_in(dl), 4);
  ck_assert_uint_eq(dropped_in(keep), 0);
  ck_assert_int_eq(spawn_counted(runs, NULL, ch), MR_ECLOSED);
  /* The open channel runs on; the closed one's sparks ran (taken by this engine's scheduler). */
  while (atomic_load(&ran) < 1 || atomic_load(&sparks_ran) < 2) ck_assert_int_eq(MR_yield(), 0);
  ck_assert_int_eq(atomic_load(&ran), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&drops), 14);
}
END_TEST

/* A context closes its own channel, with 5 fellows it spawned queued behind it. Drop: it runs on
 * to its next suspension, where it is dropped (on_drop called), and its fellows with it.
 * Complete: it and they finish. _i: 0 drop, 1 complete. */
static atomic_int close_rc, after_close;
static void closes_own(void *arg) {
  (void)arg;
  int ch = MR_channel_current();
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  o.engine = MR_engine_id(); /* queued behind it: it does not suspend before it closes */
  o.on_drop = count_drop;
  for (int i = 0; i < 5; i++) ck_assert_int_eq(MR_spawn(runs, NULL, &o), 0);
  atomic_store(&close_rc, MR_channel_close(ch));
  ck_assert_int_eq(MR_channel_wait(ch), MR_EDEADLK);
  ck_assert_int_eq(spawn_counted(runs, NULL, ch), MR_ECLOSED);
  ck_assert_int_eq(MR_yield(), 0);
  atomic_store(&after_close, 1);
}
START_TEST(test_close_own_channel) {
  int complete = _i;
  mr_test_start(2, NULL);
  int ch = make_channel(1, MR_CHANNEL_FIFO, complete ? MR_CLOSE_COMPLETE : MR_CLOSE_DROP, -1);
  reset();
  atomic_store(&close_rc, 1);
  atomic_store(&after_close, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  o.engine = 1;
  o.on_drop = count_drop;
  ck_assert_int_eq(MR_spawn(closes_own, NULL, &o), 0);
  while (atomic_load(&close_rc) == 1) ck_assert_int_eq(MR_yield(), 0);
  ck_assert_int_eq(atomic_load(&close_rc), 0);
  ck_assert_int_eq(MR_channel_wait(ch), 0);
  ck_assert_int_eq(atomic_load(&after_close), complete);
  ck_assert_int_eq(atomic_load(&ran), (complete ? 5 : 0));
  ck_assert_int_eq(atomic_load(&drops), (complete ? 0 : 6));
  ck_assert_uint_eq(dropped_in(ch), (complete ? 0 : 6));
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* Closes racing spawns: in each round two threads that are not engines and two contexts spawn
 * into a new channel while this context closes it after a short while, then waits. Every spawn
 * got 0 or MR_ECLOSED; every one that got 0 ran to its end or was dropped (on_drop once, counted
 * by the channel); none after a refusal got 0. Rounds alternate the policies; 50 channels per
 * runtime. */
#define SPAWNERS 4
#define PER_SPAWNER 40
typedef struct {
  int ch;
  atomic_int ok, refused, done;
} Round;
static void spawn_until_refused(Round *r) {
  int refused = 0;
  for (int i = 0; i < PER_SPAWNER; i++) {
    int rc = spawn_counted(runs, NULL, r->ch);
    ck_assert(rc == 0 || rc == MR_ECLOSED);
    ck_assert(!(refused && rc == 0)); /* closed stays closed */
    if (rc == 0) {
      atomic_fetch_add(&r->ok, 1);
    } else {
      refused = 1;
      atomic_fetch_add(&r->refused, 1);
    }
    if (i % 8 == 0) spin_ns(2000);
  }
  atomic_fetch_add(&r->done, 1);
}
static void *spawner_thread(void *arg) {
  spawn_until_refused(arg);
  return NULL;
}
static void spawner_context(void *arg) { spawn_until_refused(arg); }

static void race_round(int round) {
  int drop = round % 2;
  Round r;
  r.ch = make_channel(round % 3, MR_CHANNEL_FIFO, drop ? MR_CLOSE_DROP : MR_CLOSE_COMPLETE, -1);
  atomic_store(&r.ok, 0);
  atomic_store(&r.refused, 0);
  atomic_store(&r.done, 0);
  reset();
  pthread_t t[2];
  for (int i = 0; i < 2; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, spawner_thread, &r), 0);
  for (int i = 0; i < 2; i++) ck_assert_int_eq(MR_spawn(spawner_context, &r, NULL), 0);
  spin_ns((uint64_t)(round % 7) * 20000);
  ck_assert_int_eq(MR_channel_close(r.ch), 0);
  ck_assert_int_eq(MR_channel_wait(r.ch), 0);
  /* Everything spawned before the close has finished or been dropped, now: nothing changes. */
  int ran_now = atomic_load(&ran), drops_now = atomic_load(&drops);
  while (atomic_load(&r.done) < SPAWNERS) ck_assert_int_eq(MR_yield(), 0);
  for (int i = 0; i < 2; i++) ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  int ok = atomic_load(&r.ok);
  ck_assert_int_eq(ok + atomic_load(&r.refused), SPAWNERS * PER_SPAWNER);
  ck_assert_int_eq(atomic_load(&ran) + atomic_load(&drops), ok);
  ck_assert_int_eq(atomic_load(&ran), ran_now);
  ck_assert_int_eq(atomic_load(&drops), drops_now);
  ck_assert_uint_eq(dropped_in(r.ch), (uint64_t)atomic_load(&drops));
  if (!drop) ck_assert_int_eq(atomic_load(&drops), 0);
}
START_TEST(test_close_races_spawns) {
  for (int rt = 0; rt < 3; rt++) {
    mr_test_start(2, NULL);
    for (int round = 0; round < 50; round++) race_round(rt * 50 + round);
    ck_assert_int_eq(MR_shutdown(), 0);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("channel_closing");
  TCase *tc = mr_tcase("closing", 120);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_complete_runs_queued);
  tcase_add_test(tc, test_drop_drops_queued);
  tcase_add_loop_test(tc, test_close_own_channel, 0, 2);
  tcase_add_test(tc, test_close_races_spawns);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
