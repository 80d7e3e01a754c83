/* check_channel.c: channels (doc/api.md, "Channels"): every call's good and bad input; the
 * highest-first and round-robin policies under a saturating backlog; deadline order; followups;
 * the channel of sparks; bound contexts across MR_yield. The close policies are in
 * check_channel_close.c, lost wake-ups across channels in check_channel_stress.c. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "channelutil.h"

/* ---- bad input ---- */

static void *calls_from_a_plain_thread(void *arg) {
  (void)arg;
  ck_assert_int_eq(MR_yield(), MR_ENOTENGINE);
  ck_assert_int_eq(MR_channel_current(), MR_ENOTENGINE);
  /* Creating, spawning and statistics work from any thread. */
  MR_ChannelOptions c;
  MR_channel_options_default(&c);
  c.level = 5;
  int ch = MR_channel_create(&c);
  ck_assert_int_gt(ch, 0);
  ck_assert_int_eq(spawn_in(nothing, NULL, ch, 0), 0);
  MR_ChannelStats s;
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_stats(ch, &s), 0);
  return NULL;
}

/* Not running; the defaults; every bad MR_channel_create. */
START_TEST(test_errors_create) {
  MR_ChannelOptions c;
  MR_ChannelStats s;
  MR_SpawnOptions o;

  /* Not running. */
  MR_channel_options_default(&c);
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_create(&c), MR_ENOTINIT);
  ck_assert_int_eq(MR_channel_current(), MR_ENOTINIT);
  ck_assert_int_eq(MR_yield(), MR_ENOTINIT);
  ck_assert_int_eq(MR_channel_stats(0, &s), MR_ENOTINIT);

  mr_test_start(2, NULL);
  /* The defaults. */
  memset(&c, 0x5a, sizeof c);
  MR_channel_options_default(&c);
  ck_assert_uint_eq(c.size, sizeof c);
  ck_assert_int_eq(c.level, 0);
  ck_assert_int_eq(c.kind, MR_CHANNEL_FIFO);
  ck_assert_int_eq(c.close, MR_CLOSE_COMPLETE);
  ck_assert_int_eq(c.followup, -1);
  memset(&o, 0x5a, sizeof o);
  MR_spawn_options_default(&o);
  ck_assert_int_eq(o.channel, MR_CHANNEL_DEFAULT);
  ck_assert_uint_eq(o.deadline, 0);
  ck_assert_int_eq(MR_channel_current(), MR_CHANNEL_DEFAULT); /* the primordial context */

  /* MR_channel_create. */
  ck_assert_int_eq(MR_channel_create(NULL), MR_EINVAL);
  MR_channel_options_default(&c);
  c.size = 0;
  ck_assert_int_eq(MR_channel_create(&c), MR_EINVAL);
  c.size = sizeof c - 1;
  ck_assert_int_eq(MR_channel_create(&c), MR_EINVAL);
  MR_channel_options_default(&c);
  c.kind = 2;
  ck_assert_int_eq(MR_channel_create(&c), MR_EINVAL);
  c.kind = -1;
  ck_assert_int_eq(MR_channel_create(&c), MR_EINVAL);
  MR_channel_options_default(&c);
  c.close = 2;
  ck_assert_int_eq(MR_channel_create(&c), MR_EINVAL);
  MR_channel_options_default(&c);
  c.level = -1;
  ck_assert_int_eq(MR_channel_create(&c), MR_ELEVEL);
  c.level = MR_LEVELS;
  ck_assert_int_eq(MR_channel_create(&c), MR_ELEVEL);
  MR_channel_options_default(&c);
  c.followup = 1; /* no channel 1 yet */
  ck_assert_int_eq(MR_channel_create(&c), MR_ENOCHANNEL);
  c.followup = MR_MAX_CHANNELS;
  ck_assert_int_eq(MR_channel_create(&c), MR_ENOCHANNEL);
  c.followup = -2;
  ck_assert_int_eq(MR_channel_create(&c), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* Good channels, then every bad MR_spawn into them and every bad MR_channel_stats. */
START_TEST(test_errors_spawn_and_stats) {
  MR_ChannelOptions c;
  MR_ChannelStats s;
  MR_SpawnOptions o;
  mr_test_start(2, NULL);
  /* Good channels: numbered from 1; the last level; a followup that exists. */
  MR_channel_options_default(&c);
  c.level = MR_LEVELS - 1;
  ck_assert_int_eq(MR_channel_create(&c), 1);
  c.kind = MR_CHANNEL_DEADLINE;
  c.close = MR_CLOSE_DROP;
  c.followup = 1;
  ck_assert_int_eq(MR_channel_create(&c), 2);
  int fifo = 1, dl = 2;

  /* MR_spawn into channels. */
  MR_spawn_options_default(&o);
  o.channel = MR_MAX_CHANNELS;
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), MR_ENOCHANNEL);
  o.channel = -1;
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), MR_ENOCHANNEL);
  o.channel = 3; /* not made yet */
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), MR_ENOCHANNEL);
  o.channel = fifo;
  o.deadline = MR_now();
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), MR_EDEADLINE);
  o.channel = MR_CHANNEL_DEFAULT;
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), MR_EDEADLINE);
  o.channel = dl;
  o.deadline = 0;
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), MR_EDEADLINE);
  o.deadline = MR_now();
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), 0);
  o.channel = fifo;
  o.deadline = 0;
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), 0);
  /* A size that ends before `channel` means the default channel, whatever follows. */
  o.size = offsetof(MR_SpawnOptions, channel);
  o.channel = 99;
  o.deadline = 7;
  ck_assert_int_eq(MR_spawn(nothing, NULL, &o), 0);

  /* MR_channel_stats. */
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_stats(MR_MAX_CHANNELS, &s), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_channel_stats(-1, &s), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_channel_stats(3, &s), MR_ENOCHANNEL);
  ck_assert_int_eq(MR_channel_stats(fifo, NULL), MR_EINVAL);
  s.size = sizeof s - 1;
  ck_assert_int_eq(MR_channel_stats(fifo, &s), MR_EINVAL);
  s.size = 0;
  ck_assert_int_eq(MR_channel_stats(fifo, &s), MR_EINVAL);
  s.size = sizeof s;
  ck_assert_int_eq(MR_channel_stats(MR_CHANNEL_DEFAULT, &s), 0);
  ck_assert_uint_eq(s.ns_run, 0); /* neither --stats nor round-robin */

  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* Calls from a thread that is not an engine; too many channels; the report's size. */
START_TEST(test_errors_limits) {
  MR_ChannelOptions c;
  mr_test_start(2, NULL);
  /* From a thread that is not an engine. */
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, calls_from_a_plain_thread, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);

  /* Too many channels: 2 exist (the default and the thread's), MR_MAX_CHANNELS may. */
  MR_channel_options_default(&c);
  for (int i = 2; i < MR_MAX_CHANNELS; i++) {
    c.level = i % MR_LEVELS;
    ck_assert_int_eq(MR_channel_create(&c), i);
  }
  ck_assert_int_eq(MR_channel_create(&c), MR_ECHANNELS);
  ck_assert_int_eq(MR_channel_create(&c), MR_ECHANNELS); /* and stays so */
  /* Every channel works. */
  ck_assert_int_eq(spawn_in(nothing, NULL, MR_MAX_CHANNELS - 1, 0), 0);

  /* The report. */
  MR_ShutdownReport r;
  r.size = offsetof(MR_ShutdownReport, sparks_dropped);
  ck_assert_int_eq(MR_shutdown_report(&r), MR_EINVAL);
  ck_assert_int_eq(MR_shutdown_report(NULL), 0);
  ck_assert_int_eq(MR_yield(), MR_ENOTINIT);
}
END_TEST

/* A report whose size ends before the per-channel arrays gets the totals only. */
START_TEST(test_report_without_channels) {
  mr_test_start(1, NULL);
  int drop = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_DROP, -1);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(spawn_in(nothing, NULL, drop, 0), 0);
  MR_ShutdownReport r;
  memset(&r, 0x5a, sizeof r);
  r.size = offsetof(MR_ShutdownReport, channel_contexts_dropped);
  ck_assert_int_eq(MR_shutdown_report(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 5);
  ck_assert_uint_eq(r.sparks_dropped, 0);
  ck_assert_uint_eq(r.channel_contexts_dropped[drop], 0x5a5a5a5a5a5a5a5aull); /* untouched */
}
END_TEST

/* ---- a saturating backlog ---- */

/* Backlog contexts: ~step_ns of work, then MR_yield, until stop (forever refilled: they go back
 * into their channel). */
static atomic_int backlog_stop;
static atomic_int backlog_alive;
static void backlog(void *arg) {
  uint64_t step = (uint64_t)(uintptr_t)arg;
  while (!atomic_load_explicit(&backlog_stop, memory_order_relaxed)) {
    spin_ns(step);
    ck_assert_int_eq(MR_yield(), 0);
  }
  atomic_fetch_sub(&backlog_alive, 1);
}

static void start_backlog(int ch, int n, uint64_t step_ns) {
  atomic_store(&backlog_stop, 0);
  atomic_fetch_add(&backlog_alive, n);
  for (int i = 0; i < n; i++)
    ck_assert_int_eq(spawn_in(backlog, (void *)(uintptr_t)step_ns, ch, 0), 0);
}

/* The top-level probe: when it started. */
struct probe {
  uint64_t started;
  MR_Future done;
};
static void probe_run(void *arg) {
  struct probe *p = arg;
  p->started = MR_now();
  MR_future_signal(&p->done, 1);
}

/* Highest-first: a plain thread spawns probes into the top level; they start within 20 ms
 * although 64 backlog contexts of ~1 ms each keep both engines busy (one FIFO queue would make
 * a probe wait ~32 ms; picking the lowest level, forever). */
#define PROBES 20
#define PROBE_BOUND_NS 20000000ull
static int top_channel, backlog_channel;
static uint64_t probe_latency[PROBES];
static MR_Future probes_done;
static void *probe_thread(void *arg) {
  (void)arg;
  mr_test_sleep_ms(50); /* the backlog is running */
  for (int i = 0; i < PROBES; i++) {
    struct probe p;
    MR_future_init(&p.done);
    p.started = 0;
    uint64_t t0 = MR_now();
    ck_assert_int_eq(spawn_in(probe_run, &p, top_channel, 0), 0);
    /* Wait at most 2 s, so that a probe that never starts fails here, not at the time-out. */
    while (!MR_future_is_signalled(&p.done) && MR_now() - t0 < 2000000000ull) mr_test_sleep_ms(1);
    ck_assert_msg(MR_future_is_signalled(&p.done), "probe %d never started", i);
    MR_future_wait(&p.done);
    probe_latency[i] = p.started - t0;
    mr_test_sleep_ms(3);
  }
  MR_future_signal(&probes_done, 1);
  return NULL;
}

START_TEST(test_highest_first_under_backlog) {
  mr_test_start(2, NULL);
  top_channel = make_channel(0, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  backlog_channel = make_channel(3, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  start_backlog(backlog_channel, 64, 1000000);
  MR_future_init(&probes_done);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, probe_thread, NULL), 0);
  MR_future_wait(&probes_done); /* engine 0 serves the backlog meanwhile */
  atomic_store(&backlog_stop, 1);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&backlog_alive), 0);
  /* Three probes in four within the bound: on a shared machine the OS may take an engine's CPU
   * away for longer than that, now and then; behind the backlog in one queue every probe would
   * wait about 32 ms. */
  int late = 0;
  uint64_t worst = 0;
  for (int i = 0; i < PROBES; i++) {
    if (probe_latency[i] >= PROBE_BOUND_NS) late++;
    if (probe_latency[i] > worst) worst = probe_latency[i];
  }
  ck_assert_msg(late <= PROBES / 4,
                "%d of %d top-level probes waited 20 ms or more (worst %llu us)", late, PROBES,
                (unsigned long long)(worst / 1000));
}
END_TEST

/* Round-robin: two saturated levels each get half of the engines' time over 2 s, by the
 * channels' own time counters, within 35%: the counters are wall time, and on a loaded machine
 * the OS takes an engine's processor away in the middle of one level's slice now and then (up to
 * 25% apart was seen at load 8); highest-first, what the test tells round-robin from, gives the
 * lower level nothing. */
static void round_robin_shares(const char *opts) {
  mr_test_start(2, opts);
  int hi = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  int lo = make_channel(4, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  start_backlog(hi, 4, 300000);
  start_backlog(lo, 4, 300000);
  uint64_t hi0 = ns_run(hi), lo0 = ns_run(lo);
  ck_assert_int_eq(MR_sleep_for(2000000000ull), 0); /* engine 0 works meanwhile */
  uint64_t h = ns_run(hi) - hi0, l = ns_run(lo) - lo0;
  atomic_store(&backlog_stop, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&backlog_alive), 0);
  uint64_t big = h > l ? h : l, small = h > l ? l : h;
  ck_assert_msg(big > 0 && (double)(big - small) <= 0.35 * (double)big,
                "level 1 ran %llu ms, level 4 %llu ms", (unsigned long long)(h / 1000000),
                (unsigned long long)(l / 1000000));
  /* Both engines were busy most of the 2 s (the time counters count real work). */
  ck_assert_uint_gt(h + l, 2000000000ull);
}

START_TEST(test_round_robin_shares) {
  round_robin_shares("--schedule=round-robin --level-slice-us=5000");
}
END_TEST

START_TEST(test_round_robin_short_slices) {
  round_robin_shares("--schedule round-robin --level-slice-us 500");
}
END_TEST

/* ---- deadline order ---- */

#define DL_N 200
static uint64_t dl_seen[DL_N];
static atomic_int dl_count;
static MR_Future dl_done;
static void record_deadline(void *arg) {
  int i = atomic_fetch_add(&dl_count, 1);
  dl_seen[i] = (uint64_t)(uintptr_t)arg;
  if (i == DL_N - 1) MR_future_signal(&dl_done, 1);
}

/* On 1 engine, contexts queued in a deadline channel (while the engine runs the spawner) run
 * earliest deadline first, equal deadlines in spawn order. */
START_TEST(test_deadline_order) {
  mr_test_start(1, NULL);
  int dl = make_channel(2, MR_CHANNEL_DEADLINE, MR_CLOSE_COMPLETE, -1);
  atomic_store(&dl_count, 0);
  MR_future_init(&dl_done);
  unsigned seed = 12345;
  uint64_t base = MR_now();
  for (int i = 0; i < DL_N; i++) {
    seed = seed * 1103515245u + 12345u;
    /* Deadlines before and after now, some equal; the low bits carry the spawn order. */
    uint64_t d = base - 500000000ull + (uint64_t)((seed >> 8) % 64) * 20000000ull;
    ck_assert_int_eq(spawn_in(record_deadline, (void *)(uintptr_t)(d * 256 + (uint64_t)i), dl, d),
                     0);
  }
  MR_future_wait(&dl_done);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&dl_count), DL_N);
  for (int i = 1; i < DL_N; i++)
    ck_assert_msg(dl_seen[i - 1] < dl_seen[i], "deadline order broken at %d", i);
}
END_TEST

/* Round-robin while engines drain sparks: 2 engines, slices of 2 ms; a context of the default
 * channel (level 0) forks 4000 sparks of 100 us, sleeps 1 ms and joins (meanwhile a context on
 * each engine runs a spark and takes the next, of its own deque or of the one it stole from,
 * without its scheduler); 20 ms in, a plain thread spawns a level-1 context, which must start
 * within 50 ms, not when the fan-out ends (200 ms of work per engine). */
#define RR_SPARKS 4000
static atomic_ullong rr_spawned_at, rr_started_at, rr_fanout_end;
static MR_Future rr_done;
static void rr_spin(void *arg) {
  (void)arg;
  spin_ns(100000);
}
static void rr_late(void *arg) {
  (void)arg;
  atomic_store(&rr_started_at, MR_now());
  MR_future_signal(&rr_done, 1);
}
static void rr_fanout(void *arg) {
  (void)arg;
  MR_SyncTerm st;
  MR_sync_term_init(&st, RR_SPARKS + 1);
  for (int i = 0; i < RR_SPARKS; i++) MR_fork_new_child(&st, rr_spin, NULL);
  /* Suspended, so that the sparks run in contexts of their own, each taking the next. */
  ck_assert_int_eq(MR_sleep_for(1000000), 0);
  MR_join_and_continue(&st);
  atomic_store(&rr_fanout_end, MR_now());
}
static void *rr_spawner(void *arg) {
  int ch = (int)(intptr_t)arg;
  mr_test_sleep_ms(20);
  atomic_store(&rr_spawned_at, MR_now());
  ck_assert_int_eq(spawn_in(rr_late, NULL, ch, 0), 0);
  return NULL;
}
START_TEST(test_round_robin_while_draining_sparks) {
  mr_test_start(2, "--schedule=round-robin --level-slice-us=2000");
  int low = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  MR_future_init(&rr_done);
  atomic_store(&rr_started_at, 0);
  atomic_store(&rr_fanout_end, 0);
  ck_assert_int_eq(spawn_in(rr_fanout, NULL, MR_CHANNEL_DEFAULT, 0), 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, rr_spawner, (void *)(intptr_t)low), 0);
  MR_future_wait(&rr_done); /* engine 0 drains sparks too meanwhile */
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  uint64_t latency = atomic_load(&rr_started_at) - atomic_load(&rr_spawned_at);
  ck_assert_msg(latency < 50000000u, "the level-1 context started %llu us after its spawn",
                (unsigned long long)(latency / 1000));
  /* The fan-out was still running then, or the test says nothing. */
  ck_assert_uint_gt(atomic_load(&rr_fanout_end), atomic_load(&rr_started_at));
}
END_TEST

/* A join's parent in a deadline channel resumes in deadline order: on 1 engine, P (deadline
 * +1 s) forks a spark and sleeps, the spark runs in a context of its own and sleeps longer, P
 * suspends at the join; the spark then spawns Q (deadline now, same channel) and ends, the
 * join's last arrival. Q runs before P resumes. 20 rounds. */
static int jd_channel;
static MR_Future jd_done, jd_q_done;
static char jd_trail[4];
static atomic_int jd_len;
static void jd_mark(char c) { jd_trail[atomic_fetch_add(&jd_len, 1)] = c; }
static void jd_q(void *arg) {
  (void)arg;
  jd_mark('Q');
  MR_future_signal(&jd_q_done, 1);
}
static void jd_spark(void *arg) {
  (void)arg;
  ck_assert_int_eq(MR_sleep_for(20000000), 0);
  ck_assert_int_eq(spawn_in(jd_q, NULL, jd_channel, MR_now()), 0);
}
static void jd_parent(void *arg) {
  (void)arg;
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, jd_spark, NULL);
  ck_assert_int_eq(MR_sleep_for(5000000), 0); /* the engine runs the spark meanwhile */
  MR_join_and_continue(&st);
  jd_mark('P');
  MR_future_signal(&jd_done, 1);
}
START_TEST(test_join_parent_keeps_deadline_order) {
  mr_test_start(1, NULL);
  jd_channel = make_channel(0, MR_CHANNEL_DEADLINE, MR_CLOSE_COMPLETE, -1);
  for (int round = 0; round < 20; round++) {
    atomic_store(&jd_len, 0);
    MR_future_init(&jd_done);
    MR_future_init(&jd_q_done);
    ck_assert_int_eq(spawn_in(jd_parent, NULL, jd_channel, MR_now() + 1000000000ull), 0);
    MR_future_wait(&jd_done);
    MR_future_wait(&jd_q_done);
    jd_trail[2] = 0;
    ck_assert_str_eq(jd_trail, "QP");
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- followup ---- */

/* What ran, in order, on the one engine. */
static char trail[64];
static atomic_int trail_len;
static void mark(char c) { trail[atomic_fetch_add(&trail_len, 1)] = c; }

static MR_Future fu_wake, fu_all;
static void started_work(void *arg) {
  (void)arg;
  mark('a');
  ck_assert_int_eq(MR_yield(), 0); /* queued in the followup (level 0) */
  mark('b');
  MR_future_wait(&fu_wake); /* resumed into the followup when queued work signals it */
  mark('c');
}
static void queued_work(void *arg) {
  int i = (int)(intptr_t)arg;
  mark((char)('0' + i));
  if (i == 0) MR_future_signal(&fu_wake, 1);
  if (i == 9) MR_future_signal(&fu_all, 1);
}

/* A context spawned from a context goes to the engine's hand-off slot and runs first when the
 * spawner suspends (doc/design.md, "The hand-off slot"); the one spawned before it goes to its
 * queue. A last spawn into the default channel puts every backlog context in its queue, in
 * order. */
static void flush_handoff(void) { ck_assert_int_eq(MR_spawn(nothing, NULL, NULL), 0); }

/* 1 engine: a backlog channel (level 3), with or without a followup, holding a context that
 * starts first and suspends (MR_yield, then a future) and 10 queued contexts; the order they
 * ran in is left in trail. */
static void run_backlog(int with_followup) {
  mr_test_start(1, NULL);
  int followup = with_followup ? make_channel(0, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1) : -1;
  int bl = make_channel(3, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, followup);
  atomic_store(&trail_len, 0);
  MR_future_init(&fu_wake);
  MR_future_init(&fu_all);
  ck_assert_int_eq(spawn_in(started_work, NULL, bl, 0), 0);
  for (int i = 0; i < 10; i++)
    ck_assert_int_eq(spawn_in(queued_work, (void *)(intptr_t)i, bl, 0), 0);
  flush_handoff();
  MR_future_wait(&fu_all);
  ck_assert_int_eq(MR_shutdown(), 0);
  trail[atomic_load(&trail_len)] = 0;
}

/* With a top channel (level 0) as the backlog's followup, the context that started first
 * resumes, after MR_yield and after a future, before the backlog's queued contexts. */
START_TEST(test_followup_resumes_first) {
  run_backlog(1);
  ck_assert_str_eq(trail, "ab0c123456789");
}
END_TEST

/* Without a followup the same context goes back behind the queued work. */
START_TEST(test_no_followup_queues_behind) {
  run_backlog(0);
  ck_assert_str_eq(trail, "a0123456789bc");
}
END_TEST

/* ---- sparks and channels ---- */

static int spark_channel;
static atomic_int wrong_channel, engines_seen;
static long chfib(int n);
struct chfib_arg {
  int n;
  long r;
};
static void chfib_branch(void *env) {
  struct chfib_arg *a = env;
  a->r = chfib(a->n);
}
static long chfib(int n) {
  if (MR_channel_current() != spark_channel) atomic_fetch_add(&wrong_channel, 1);
  atomic_fetch_or_explicit(&engines_seen, 1 << MR_engine_id(), memory_order_relaxed);
  if (n < 2) return n;
  MR_SyncTerm st;
  struct chfib_arg a = {n - 1, 0};
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, chfib_branch, &a);
  long b = chfib(n - 2);
  MR_join_and_continue(&st);
  return a.r + b;
}
static MR_Future fib_done;
static void fib_in_channel(void *arg) {
  (void)arg;
  ck_assert_int_eq(MR_channel_current(), spark_channel);
  ck_assert_int_eq(chfib(22), 17711);
  MR_future_signal(&fib_done, 1);
}

/* Sparks forked in a channel's context run in that channel, inline or stolen by the other engine
 * (whose context for them is counted in the channel's statistics, not another's); the main
 * context's are the default channel's. */
START_TEST(test_sparks_belong_to_the_channel) {
  mr_test_start(2, NULL);
  spark_channel = make_channel(2, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  int other = make_channel(2, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  int stolen = 0;
  for (int round = 0; round < 20 && !stolen; round++) {
    atomic_store(&engines_seen, 0);
    atomic_store(&wrong_channel, 0);
    MR_future_init(&fib_done);
    uint64_t before = contexts_run(spark_channel), other_before = contexts_run(other);
    ck_assert_int_eq(spawn_in(fib_in_channel, NULL, spark_channel, 0), 0);
    MR_future_wait(&fib_done);
    ck_assert_int_eq(atomic_load(&wrong_channel), 0);
    uint64_t ran = contexts_run(spark_channel) - before;
    ck_assert_uint_ge(ran, 1);
    ck_assert_uint_eq(contexts_run(other) - other_before, 0);
    /* Sparks ran on both engines: one was stolen, and the thief's context is the channel's. */
    stolen = atomic_load(&engines_seen) == 3;
    if (stolen) ck_assert_uint_ge(ran, 2);
  }
  ck_assert_msg(stolen, "no spark of the channel was stolen in 20 rounds");
  /* The main context's sparks: the default channel. */
  spark_channel = MR_CHANNEL_DEFAULT;
  atomic_store(&wrong_channel, 0);
  ck_assert_int_eq(chfib(20), 6765);
  ck_assert_int_eq(atomic_load(&wrong_channel), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- bound contexts ---- */

static atomic_int moved, bound_done;
static void yields_bound(void *arg) {
  int want = (int)(intptr_t)arg;
  if (want < 0) want = MR_context_bind_here();
  for (int i = 0; i < 2000; i++) {
    if (MR_engine_id() != want) atomic_fetch_add(&moved, 1);
    ck_assert_int_eq(MR_yield(), 0);
  }
  if (MR_engine_id() != want) atomic_fetch_add(&moved, 1);
  atomic_fetch_add(&bound_done, 1);
}

/* Contexts bound at spawn or by MR_context_bind_here stay on their engine across MR_yield,
 * while unbound backlog work in their channel keeps both engines busy. */
START_TEST(test_bound_keeps_engine_across_yield) {
  mr_test_start(2, NULL);
  int ch = make_channel(1, MR_CHANNEL_FIFO, MR_CLOSE_COMPLETE, -1);
  atomic_store(&moved, 0);
  atomic_store(&bound_done, 0);
  start_backlog(ch, 4, 20000);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  for (int i = 0; i < 8; i++) {
    o.engine = i % 2;
    ck_assert_int_eq(MR_spawn(yields_bound, (void *)(intptr_t)(i % 2), &o), 0);
  }
  o.engine = -1;
  for (int i = 0; i < 8; i++) ck_assert_int_eq(MR_spawn(yields_bound, (void *)(intptr_t)-1, &o), 0);
  while (atomic_load(&bound_done) < 16) ck_assert_int_eq(MR_sleep_for(1000000), 0);
  atomic_store(&backlog_stop, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&moved), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("channel");
  TCase *tc = mr_tcase("api", 30);
  tcase_add_test(tc, test_errors_create);
  tcase_add_test(tc, test_errors_spawn_and_stats);
  tcase_add_test(tc, test_errors_limits);
  tcase_add_test(tc, test_report_without_channels);
  suite_add_tcase(s, tc);
  tc = mr_tcase("policy", 60);
  tcase_add_test(tc, test_highest_first_under_backlog);
  tcase_add_test(tc, test_round_robin_shares);
  tcase_add_test(tc, test_round_robin_short_slices);
  tcase_add_test(tc, test_round_robin_while_draining_sparks);
  tcase_add_test(tc, test_deadline_order);
  tcase_add_test(tc, test_join_parent_keeps_deadline_order);
  tcase_add_test(tc, test_followup_resumes_first);
  tcase_add_test(tc, test_no_followup_queues_behind);
  suite_add_tcase(s, tc);
  tc = mr_tcase("contexts", 60);
  tcase_add_test(tc, test_sparks_belong_to_the_channel);
  tcase_add_test(tc, test_bound_keeps_engine_across_yield);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
