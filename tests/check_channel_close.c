/* check_channel_close.c: the close policies of channels at MR_shutdown (doc/api.md, "Closing"):
 * complete channels wait for their contexts, outside signals included; drop channels drop and
 * count what is queued, waiting or running, per channel; MR_shutdown_now counts everything; the
 * on_drop of every dropped spawned context is called once (check_channel_closing.c has
 * MR_channel_close). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "channelutil.h"

static atomic_int finished;
static MR_Future late;
static atomic_int shutdown_began;
static int late_drop_channel;
static void completes(void *arg) {
  (void)arg;
  atomic_fetch_add(&finished, 1);
}
static void waits_for_late(void *arg) {
  (void)arg;
  ck_assert_int_eq((int)MR_future_wait(&late), 42);
  /* MR_shutdown has begun: no new channel, no new work for a drop channel; a complete
   * channel's new work still runs. */
  MR_ChannelOptions c;
  MR_channel_options_default(&c);
  ck_assert_int_eq(MR_channel_create(&c), MR_ESHUTDOWN);
  ck_assert_int_eq(spawn_in(completes, NULL, late_drop_channel, 0), MR_ESHUTDOWN);
  ck_assert_int_eq(spawn_in(completes, NULL, MR_channel_current(), 0), 0);
  spin_ns(1000000);
  ck_assert_int_eq(MR_yield(), 0);
  atomic_fetch_add(&finished, 1);
}
static void works_and_yields(void *arg) {
  (void)arg;
  for (int i = 0; i < 5; i++) {
    spin_ns(100000);
    ck_assert_int_eq(MR_yield(), 0);
  }
  atomic_fetch_add(&finished, 1);
}
static uint64_t signalled_after;
static void *signal_late(void *arg) {
  (void)arg;
  while (!atomic_load(&shutdown_began)) mr_test_sleep_ms(1);
  uint64_t t0 = MR_now();
  mr_test_sleep_ms(100);
  signalled_after = MR_now() - t0;
  MR_future_signal(&late, 42);
  return NULL;
}

/* A complete channel's contexts all finish, including ones waiting for a future that a plain
 * thread signals 100 ms after MR_shutdown began (MR_shutdown waits for them), and the contexts
 * they spawn then; channels and drop channels' work are refused then (MR_ESHUTDOWN). */
START_TEST(test_close_complete_waits_for_outside_signal) {
  mr_test_start(2, NULL);
  int ch = make_channel(2, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  int ch2 = make_channel(5, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, ch);
  late_drop_channel = make_channel(5, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  atomic_store(&finished, 0);
  atomic_store(&shutdown_began, 0);
  MR_future_init(&late);
  ck_assert_int_eq(spawn_in(waits_for_late, NULL, ch, 0), 0);
  ck_assert_int_eq(spawn_in(waits_for_late, NULL, ch2, 0), 0);
  for (int i = 0; i < 50; i++)
    ck_assert_int_eq(spawn_in(works_and_yields, NULL, i % 2 ? ch : ch2, 0), 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, signal_late, NULL), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  atomic_store(&shutdown_began, 1);
  uint64_t t0 = MR_now();
  ck_assert_int_eq(MR_shutdown_report(&r), 0);
  uint64_t took = MR_now() - t0;
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(atomic_load(&finished), 54);
  ck_assert_uint_ge(took, signalled_after);
  ck_assert_uint_eq(r.contexts_dropped, 0);
  ck_assert_uint_eq(r.sparks_dropped, 0);
  for (int i = 0; i < MR_MAX_CHANNELS; i++) {
    ck_assert_uint_eq(r.channel_contexts_dropped[i], 0);
    ck_assert_uint_eq(r.channel_sparks_dropped[i], 0);
  }
}
END_TEST

/* Drop channels: exact per-channel counts of queued contexts (FIFO and deadline channels), a
 * context waiting on a future that is never signalled, and sparks left on the deque; complete
 * channels run everything. 1 engine, so nothing of it can run before MR_shutdown. */
#define SPARKS 7
static MR_SyncTerm drop_st;
static MR_Future forked, never;
static atomic_int ran_in_drop;
static void counts_run(void *arg) {
  (void)arg;
  atomic_fetch_add(&ran_in_drop, 1);
}
static void forks_then_waits(void *arg) {
  (void)arg;
  MR_sync_term_init(&drop_st, SPARKS + 1);
  for (int i = 0; i < SPARKS; i++) MR_fork_new_child(&drop_st, counts_run, NULL);
  MR_future_signal(&forked, 1);
  MR_future_wait(&never); /* the main context (level 0) runs before these sparks (level 6) */
  atomic_fetch_add(&ran_in_drop, 100);
}
START_TEST(test_close_drop_counts) {
  mr_test_start(1, NULL);
  int d1 = make_channel(6, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  int d2 = make_channel(0, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  int c1 = make_channel(6, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  int d3 = make_channel(3, MR_CHANNEL_DEADLINE, MR_CLOSE_DROP, -1);
  atomic_store(&ran_in_drop, 0);
  atomic_store(&finished, 0);
  MR_future_init(&forked);
  MR_future_init(&never);
  ck_assert_int_eq(spawn_in(forks_then_waits, NULL, d1, 0), 0);
  MR_future_wait(&forked);
  ck_assert_int_eq(atomic_load(&ran_in_drop), 0);
  for (int i = 0; i < 11; i++) ck_assert_int_eq(spawn_in(counts_run, NULL, d1, 0), 0);
  for (int i = 0; i < 13; i++) ck_assert_int_eq(spawn_in(counts_run, NULL, d2, 0), 0);
  for (int i = 0; i < 17; i++) ck_assert_int_eq(spawn_in(completes, NULL, c1, 0), 0);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(spawn_in(counts_run, NULL, d3, MR_now() - (uint64_t)i), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  ck_assert_int_eq(MR_shutdown_report(&r), 0);
  ck_assert_int_eq(atomic_load(&ran_in_drop), 0);
  ck_assert_int_eq(atomic_load(&finished), 17);
  ck_assert_uint_eq(r.channel_contexts_dropped[d1], 12);
  ck_assert_uint_eq(r.channel_sparks_dropped[d1], SPARKS);
  ck_assert_uint_eq(r.channel_contexts_dropped[d2], 13);
  ck_assert_uint_eq(r.channel_sparks_dropped[d2], 0);
  ck_assert_uint_eq(r.channel_contexts_dropped[d3], 5);
  for (int i = 0; i < MR_MAX_CHANNELS; i++)
    if (i != d1 && i != d2 && i != d3) {
      ck_assert_uint_eq(r.channel_contexts_dropped[i], 0);
      ck_assert_uint_eq(r.channel_sparks_dropped[i], 0);
    }
  ck_assert_uint_eq(r.contexts_dropped, 30);
  ck_assert_uint_eq(r.sparks_dropped, SPARKS);
}
END_TEST

/* MR_shutdown_now drops the queued contexts of every channel, FIFO or deadline, complete or
 * drop (and the one in the hand-off slot), and counts them per channel. */
START_TEST(test_shutdown_now_counts) {
  mr_test_start(1, NULL);
  int dl = make_channel(2, MR_CHANNEL_DEADLINE, MR_CLOSE_COMPLETE, -1);
  int fifo = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  atomic_store(&ran_in_drop, 0);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(spawn_in(counts_run, NULL, dl, MR_now() + (uint64_t)i), 0);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(spawn_in(counts_run, NULL, fifo, 0), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(MR_spawn(counts_run, NULL, NULL), 0);
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(spawn_in(counts_run, NULL, dl, MR_now() - (uint64_t)i), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_int_eq(atomic_load(&ran_in_drop), 0);
  ck_assert_uint_eq(r.channel_contexts_dropped[dl], 7);
  ck_assert_uint_eq(r.channel_contexts_dropped[fifo], 4);
  ck_assert_uint_eq(r.channel_contexts_dropped[MR_CHANNEL_DEFAULT], 3);
  ck_assert_uint_eq(r.contexts_dropped, 14);
  ck_assert_uint_eq(r.sparks_dropped, 0);
}
END_TEST

/* A drop channel's context that is running when MR_shutdown begins runs to its next suspension
 * (MR_yield) and is dropped there; counted once. 2 engines: it spins on engine 1. */
static atomic_int spinning, after_yield;
static void spins_until_closing(void *arg) {
  (void)arg;
  atomic_store(&spinning, 1);
  while (!atomic_load(&shutdown_began)) {}
  spin_ns(20000000); /* MR_shutdown is under way */
  MR_yield();
  atomic_store(&after_yield, 1);
}

START_TEST(test_close_drop_running_context) {
  mr_test_start(2, NULL);
  int d = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  atomic_store(&spinning, 0);
  atomic_store(&after_yield, 0);
  atomic_store(&shutdown_began, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = d;
  o.engine = 1;
  ck_assert_int_eq(MR_spawn(spins_until_closing, NULL, &o), 0);
  while (!atomic_load(&spinning)) ck_assert_int_eq(MR_yield(), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  atomic_store(&shutdown_began, 1);
  ck_assert_int_eq(MR_shutdown_report(&r), 0);
  ck_assert_int_eq(atomic_load(&after_yield), 0);
  ck_assert_uint_eq(r.channel_contexts_dropped[d], 1);
  ck_assert_uint_eq(r.contexts_dropped, 1);
}
END_TEST

/* MR_SpawnOptions.on_drop at both shutdowns: called once for each spawned context dropped
 * before its function returned (queued, waiting, or running and dropped at its next suspension),
 * never for one whose function returned; at MR_shutdown_now on the thread of the shutdown. A
 * future signalled by on_drop wakes a thread that waits for it, and a dropped context waiting
 * for it is freed without running. MR_SpawnOptions.on_free: once for each dropped context,
 * after its on_drop, on the thread of the shutdown at both (also for those an engine dropped
 * while MR_shutdown closed). _i: 0 MR_shutdown, 1 MR_shutdown_now. */
#define DROP_SLOTS 16
static atomic_int drop_calls[DROP_SLOTS];
static atomic_int done_calls[DROP_SLOTS];
static atomic_int off_thread_drops;
static atomic_int free_calls[DROP_SLOTS];
static atomic_int off_thread_frees, frees_before_drop;
static pthread_t shutdown_thread;
static MR_Future dropped_status, never2;
static void on_drop_count(void *arg) {
  int i = (int)(intptr_t)arg;
  atomic_fetch_add(&drop_calls[i], 1);
  if (!pthread_equal(pthread_self(), shutdown_thread)) atomic_fetch_add(&off_thread_drops, 1);
  if (i == 0) MR_future_signal(&dropped_status, (uintptr_t)(intptr_t)MR_EDROPPED);
}
static void on_free_count(void *arg) {
  int i = (int)(intptr_t)arg;
  atomic_fetch_add(&free_calls[i], 1);
  if (!pthread_equal(pthread_self(), shutdown_thread)) atomic_fetch_add(&off_thread_frees, 1);
  if (atomic_load(&drop_calls[i]) != 1) atomic_fetch_add(&frees_before_drop, 1);
}
static void done_slot(void *arg) { atomic_fetch_add(&done_calls[(int)(intptr_t)arg], 1); }
static void waits_forever_slot(void *arg) {
  MR_future_wait(&never2);
  done_slot(arg);
}
static void yields_slot(void *arg) {
  atomic_store(&spinning, 1);
  while (!atomic_load(&shutdown_began)) {}
  spin_ns(20000000); /* the shutdown is under way */
  ck_assert_int_eq(MR_yield(), 0);
  done_slot(arg);
}
static void waits_for_dropped(void *arg) {
  MR_future_wait(&dropped_status);
  done_slot(arg);
}
static void *thread_waits_for_dropped(void *arg) {
  (void)arg;
  return (void *)(uintptr_t)MR_future_wait(&dropped_status);
}
static int spawn_slot(MR_TaskFn fn, int i, int ch, int engine) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  ck_assert_ptr_null(o.on_drop);
  ck_assert_ptr_null(o.on_free);
  o.channel = ch;
  o.engine = engine;
  o.on_drop = on_drop_count;
  o.on_free = on_free_count;
  return MR_spawn(fn, (void *)(intptr_t)i, &o);
}
START_TEST(test_on_drop_once) {
  int now = _i;
  mr_test_start(2, NULL);
  int d = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  int c = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  shutdown_thread = pthread_self();
  for (int i = 0; i < DROP_SLOTS; i++) {
    atomic_store(&drop_calls[i], 0);
    atomic_store(&done_calls[i], 0);
    atomic_store(&free_calls[i], 0);
  }
  atomic_store(&off_thread_drops, 0);
  atomic_store(&off_thread_frees, 0);
  atomic_store(&frees_before_drop, 0);
  atomic_store(&spinning, 0);
  atomic_store(&shutdown_began, 0);
  MR_future_init(&dropped_status);
  MR_future_init(&never2);
  /* Slots 1, 2: functions that return before the shutdown (drop and complete channels). */
  ck_assert_int_eq(spawn_slot(done_slot, 1, d, -1), 0);
  ck_assert_int_eq(spawn_slot(done_slot, 2, c, -1), 0);
  while (atomic_load(&done_calls[1]) + atomic_load(&done_calls[2]) < 2)
    ck_assert_int_eq(MR_yield(), 0);
  /* Slot 0: waits forever (dropped with the runtime); its on_drop signals dropped_status. */
  ck_assert_int_eq(spawn_slot(waits_forever_slot, 0, d, -1), 0);
  /* Slot 3: a context that waits for dropped_status, dropped too; slot 4: one that spins on
   * engine 1 until the shutdown begins, then yields (MR_shutdown drops it in its scheduler). */
  ck_assert_int_eq(spawn_slot(waits_for_dropped, 3, d, -1), 0);
  ck_assert_int_eq(spawn_slot(yields_slot, 4, d, 1), 0);
  while (!atomic_load(&spinning)) ck_assert_int_eq(MR_yield(), 0);
  /* Slots 5..9: queued, never started (engine 1 is busy with slot 4, engine 0 does not yield). */
  for (int i = 5; i < 10; i++) ck_assert_int_eq(spawn_slot(done_slot, i, d, 1), 0);
  /* Slot 10: a complete channel's context that waits forever (MR_shutdown_now drops it). */
  if (now) ck_assert_int_eq(spawn_slot(waits_forever_slot, 10, c, -1), 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, thread_waits_for_dropped, NULL), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  atomic_store(&shutdown_began, 1);
  ck_assert_int_eq(now ? MR_shutdown_now(&r) : MR_shutdown_report(&r), 0);
  void *status;
  ck_assert_int_eq(pthread_join(t, &status), 0); /* woken by slot 0's on_drop */
  ck_assert_int_eq((int)(intptr_t)status, MR_EDROPPED);
  for (int i = 0; i < DROP_SLOTS; i++) {
    int dropped = i == 0 || (i >= 3 && i < 10) || (now && i == 10);
    ck_assert_msg(atomic_load(&drop_calls[i]) == dropped, "slot %d: %d on_drop calls", i,
                  atomic_load(&drop_calls[i]));
    ck_assert_msg(atomic_load(&free_calls[i]) == dropped, "slot %d: %d on_free calls", i,
                  atomic_load(&free_calls[i]));
    ck_assert_int_eq(atomic_load(&done_calls[i]), i == 1 || i == 2);
  }
  ck_assert_uint_eq(r.channel_contexts_dropped[d], 8);
  ck_assert_uint_eq(r.channel_contexts_dropped[c], (uint64_t)now);
  /* MR_shutdown_now calls every on_drop on this thread; MR_shutdown may drop slot 4 (and the
   * queued slots) in engine 1's scheduler while it closes. */
  if (now) ck_assert_int_eq(atomic_load(&off_thread_drops), 0);
  ck_assert_int_eq(atomic_load(&off_thread_frees), 0);
  ck_assert_int_eq(atomic_load(&frees_before_drop), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("channel_close");
  TCase *tc = mr_tcase("close", 30);
  tcase_add_test(tc, test_close_complete_waits_for_outside_signal);
  tcase_add_test(tc, test_close_drop_counts);
  tcase_add_test(tc, test_close_drop_running_context);
  tcase_add_test(tc, test_shutdown_now_counts);
  tcase_add_loop_test(tc, test_on_drop_once, 0, 2);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
