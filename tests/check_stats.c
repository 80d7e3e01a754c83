/* check_stats.c: where engines run (--thread-pinning, MR_engine_cpu) and what they count
 * (MR_stats_get, MR_stats_print, --stats), through the C ABI. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

static int allowed_cpus(void) {
  cpu_set_t set;
  ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

/* Send this process's stderr to a temporary file; returns the file to read it back. */
static FILE *capture_stderr(void) {
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  fflush(stderr);
  ck_assert_int_ne(dup2(fileno(f), 2), -1);
  return f;
}

static char *read_all(FILE *f) {
  fflush(stderr);
  long n = ftell(f);
  ck_assert_int_ge(n, 0);
  char *buf = calloc((size_t)n + 1, 1);
  rewind(f);
  ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  return buf;
}

/* ---- pinning ---- */
static atomic_int where[64];
static void record_cpu(void *arg) {
  int e = (int)(intptr_t)arg;
  ck_assert_int_eq(MR_engine_id(), e);
  atomic_store(&where[e], sched_getcpu());
}

/* Each engine reports a distinct PU, and a context bound to it runs on that PU (engine 0: the
 * primordial context itself, which keeps engine 0 busy while it waits here). */
static void check_pinned(int engines) {
  int seen[1024] = {0};
  for (int e = 0; e < engines; e++) {
    int cpu = -2;
    ck_assert_int_eq(MR_engine_cpu(e, &cpu), 0);
    ck_assert_msg(cpu >= 0 && cpu < 1024, "engine %d is not pinned (%d)", e, cpu);
    ck_assert_msg(!seen[cpu], "two engines on PU %d", cpu);
    seen[cpu] = 1;
    if (e == 0) continue;
    atomic_store(&where[e], -1);
    MR_SpawnOptions o;
    MR_spawn_options_default(&o);
    o.engine = e;
    ck_assert_int_eq(MR_spawn(record_cpu, (void *)(intptr_t)e, &o), 0);
  }
  for (int e = 1; e < engines; e++) {
    int cpu;
    MR_engine_cpu(e, &cpu);
    for (int tries = 0; atomic_load(&where[e]) == -1 && tries < 5000; tries++) usleep(1000);
    ck_assert_int_eq(atomic_load(&where[e]), cpu);
  }
  int cpu0;
  MR_engine_cpu(0, &cpu0);
  ck_assert_int_eq(sched_getcpu(), cpu0); /* the primordial runs on engine 0 */
}

START_TEST(test_pinning_binds_every_engine) {
  const char *mode = _i == 0 ? "--thread-pinning=cores" : "--thread-pinning pus";
  int n = allowed_cpus() < 2 ? 1 : 2;
  mr_test_start(n, mode);
  check_pinned(n);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* The thread that called MR_init gets its own binding back at MR_shutdown. */
START_TEST(test_pinning_restores_callers_affinity) {
  cpu_set_t before, during, after;
  ck_assert_int_eq(sched_getaffinity(0, sizeof before, &before), 0);
  mr_test_start(1, "--thread-pinning=cores");
  ck_assert_int_eq(sched_getaffinity(0, sizeof during, &during), 0);
  ck_assert_int_eq(CPU_COUNT(&during), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(sched_getaffinity(0, sizeof after, &after), 0);
  ck_assert(CPU_EQUAL(&before, &after));
}
END_TEST

/* More engines than PUs: a warning, then every engine unpinned; never a failure. */
START_TEST(test_pinning_more_engines_than_pus_warns) {
  FILE *f = capture_stderr();
  int n = allowed_cpus() + 1;
  mr_test_start(n, _i == 0 ? "--thread-pinning=pus" : "--thread-pinning=cores");
  for (int e = 0; e < n; e++) {
    int cpu = 0;
    ck_assert_int_eq(MR_engine_cpu(e, &cpu), 0);
    ck_assert_int_eq(cpu, -1);
  }
  ck_assert_int_eq(mr_test_pfib(15), 610);
  ck_assert_int_eq(MR_shutdown(), 0);
  char *err = read_all(f);
  ck_assert_msg(strstr(err, "mrengine: warning: --thread-pinning=") != NULL, "stderr: %s", err);
  ck_assert_msg(strstr(err, "engines run unpinned") != NULL, "stderr: %s", err);
  free(err);
}
END_TEST

/* MR_CONFIG_QUIET silences the warning. */
START_TEST(test_pinning_warning_quiet) {
  FILE *f = capture_stderr();
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET;
  char opts[64];
  snprintf(opts, sizeof opts, "-P %d --thread-pinning=cores", allowed_cpus() + 1);
  c.options = opts;
  ck_assert_int_eq(MR_init(&c), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  char *err = read_all(f);
  ck_assert_str_eq(err, "");
  free(err);
}
END_TEST

START_TEST(test_engine_cpu_errors) {
  int cpu = 5;
  ck_assert_int_eq(MR_engine_cpu(0, &cpu), MR_ENOTINIT);
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_engine_cpu(0, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_engine_cpu(2, &cpu), MR_ERANGE);
  ck_assert_int_eq(MR_engine_cpu(-1, &cpu), MR_ERANGE);
  for (int e = 0; e < 2; e++) {
    ck_assert_int_eq(MR_engine_cpu(e, &cpu), 0);
    ck_assert_int_eq(cpu, -1); /* the default is no pinning */
  }
  ck_assert_int_eq(MR_stats_print(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(MR_stats_print(stdout), MR_ENOTINIT);
}
END_TEST

/* ---- counters ---- */
struct totals {
  uint64_t pushed, local, stolen, attempts, failures, suspended, resumed, sent, received;
};

static struct totals sum_stats(void) {
  struct totals t = {0};
  for (int e = 0; e < MR_num_engines(); e++) {
    MR_EngineStats s;
    MR_engine_stats_init(&s);
    ck_assert_int_eq(MR_stats_get(e, &s), 0);
    t.pushed += s.sparks_pushed;
    t.local += s.sparks_run_local;
    t.stolen += s.sparks_stolen;
    t.attempts += s.steal_attempts;
    t.failures += s.steal_failures;
    t.suspended += s.contexts_suspended;
    t.resumed += s.contexts_resumed;
    t.sent += s.notifications_sent;
    for (int k = 0; k < 4; k++)
      if (k != MR_NOTIFY_SHUTDOWN) t.received += s.wakeups[k];
  }
  return t;
}

/* After each conjunction has joined, every spark pushed was run exactly once (here or stolen)
 * and every context that suspended was resumed. */
START_TEST(test_counters_balance) {
  mr_test_start(2 + _i, NULL);
  for (int rep = 0; rep < 30; rep++) {
    ck_assert_int_eq(mr_test_pfib(16), 987);
    struct totals t = sum_stats();
    ck_assert_uint_eq(t.pushed, t.local + t.stolen);
    ck_assert_uint_eq(t.suspended, t.resumed);
    ck_assert_uint_ge(t.attempts, t.failures);
    ck_assert_uint_ge(t.attempts - t.failures, t.stolen);
    ck_assert_uint_eq(t.pushed, (uint64_t)(rep + 1) * 1596); /* fib(n+1)-1 sparks */
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

static void signal_arg(void *f) { MR_future_signal(f, 1); }

/* The records the caller passes for the library to fill: each _init sets the size and zeroes
 * the rest, and the record is then accepted as it is. */
START_TEST(test_stats_records_init) {
  MR_EngineStats es;
  MR_ChannelStats cs;
  MR_ShutdownReport r;
  memset(&es, 0xa5, sizeof es);
  memset(&cs, 0xa5, sizeof cs);
  memset(&r, 0xa5, sizeof r);
  MR_engine_stats_init(&es);
  MR_channel_stats_init(&cs);
  MR_shutdown_report_init(&r);
  ck_assert_uint_eq(es.size, sizeof es);
  ck_assert_uint_eq(cs.size, sizeof cs);
  ck_assert_uint_eq(r.size, sizeof r);
  static const char zero[sizeof(MR_ShutdownReport)];
  size_t sz = sizeof es.size;
  ck_assert_int_eq(memcmp((char *)&es + sz, zero, sizeof es - sz), 0);
  ck_assert_int_eq(memcmp((char *)&cs + sz, zero, sizeof cs - sz), 0);
  ck_assert_int_eq(memcmp((char *)&r + sz, zero, sizeof r - sz), 0);
  MR_engine_stats_init(NULL); /* does nothing, as the options' _default functions */
  MR_channel_stats_init(NULL);
  MR_shutdown_report_init(NULL);

  mr_test_start(1, NULL);
  ck_assert_int_eq(mr_test_pfib(10), 55);
  ck_assert_int_eq(MR_stats_get(0, &es), 0);
  ck_assert_uint_eq(es.size, sizeof es);
  ck_assert_uint_eq(es.sparks_pushed, 88); /* fib(11) - 1 */
  MR_Future ran = MR_FUTURE_INIT;
  ck_assert_int_eq(MR_spawn(signal_arg, &ran, NULL), 0);
  MR_future_wait(&ran);
  ck_assert_int_eq(MR_channel_stats(MR_CHANNEL_DEFAULT, &cs), 0);
  ck_assert_uint_ge(cs.contexts_run, 1);
  ck_assert_int_eq(MR_shutdown_report(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 0);
}
END_TEST

static void idle_then_fib(void *arg) {
  (void)arg;
  ck_assert_int_eq(mr_test_pfib(12), 144);
}

/* The --stats table printed at MR_shutdown: one row per engine and a total row that is their
 * sum; sparks balance, and every notification sent was received. */
START_TEST(test_stats_table_at_shutdown) {
  FILE *f = capture_stderr();
  mr_test_start(3, "--stats --spin-rounds 1");
  for (int rep = 0; rep < 20; rep++) {
    ck_assert_int_eq(mr_test_pfib(14), 377);
    usleep(2000); /* let engines fall asleep, so that work must wake them */
    MR_SpawnOptions o;
    MR_spawn_options_default(&o);
    o.engine = rep % 3;
    ck_assert_int_eq(MR_spawn(idle_then_fib, NULL, &o), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  char *out = read_all(f);
  char *p = strstr(out, "mrengine statistics, 3 engine(s)\n");
  ck_assert_msg(p != NULL, "no table on stderr: %s", out);
  p = strchr(p, '\n') + 1;
  /* The header names the columns. */
  char names[32][16];
  int ncol = 0, off = 0, used;
  char *eol = strchr(p, '\n');
  ck_assert_ptr_nonnull(eol);
  *eol = '\0';
  while (ncol < 32 && sscanf(p + off, "%15s%n", names[ncol], &used) == 1) {
    off += used;
    ncol++;
  }
  ck_assert_str_eq(names[0], "engine");
  ck_assert_str_eq(names[1], "cpu");
  p = eol + 1;
  unsigned long long rows[4][32] = {{0}};
  for (int r = 0; r < 4; r++) {
    char first[16];
    off = 0;
    ck_assert_int_eq(sscanf(p, "%15s%n", first, &used), 1);
    off = used;
    char want[8];
    snprintf(want, sizeof want, r < 3 ? "%d" : "total", r);
    ck_assert_str_eq(first, want);
    int c0 = 2;
    if (r < 3) { /* the cpu column; the total row leaves it blank */
      int cpu;
      ck_assert_int_eq(sscanf(p + off, "%d%n", &cpu, &used), 1);
      ck_assert_int_eq(cpu, -1);
      off += used;
    }
    for (int c = c0; c < ncol; c++) {
      ck_assert_int_eq(sscanf(p + off, "%llu%n", &rows[r][c], &used), 1);
      off += used;
    }
    p = strchr(p, '\n') + 1;
  }
  int pushed = -1, local = -1, stolen = -1, sent = -1, wctx = -1, wadv = -1, wsteal = -1;
  for (int c = 2; c < ncol; c++) {
    ck_assert_uint_eq(rows[3][c], rows[0][c] + rows[1][c] + rows[2][c]);
    if (!strcmp(names[c], "pushed")) pushed = c;
    if (!strcmp(names[c], "local")) local = c;
    if (!strcmp(names[c], "stolen")) stolen = c;
    if (!strcmp(names[c], "sent")) sent = c;
    if (!strcmp(names[c], "w:ctx")) wctx = c;
    if (!strcmp(names[c], "w:adv")) wadv = c;
    if (!strcmp(names[c], "w:steal")) wsteal = c;
  }
  ck_assert(pushed > 0 && local > 0 && stolen > 0 && sent > 0 && wctx > 0 && wadv > 0 &&
            wsteal > 0);
  ck_assert_uint_eq(rows[3][pushed], 20ull * (609 + 232));
  ck_assert_uint_eq(rows[3][pushed], rows[3][local] + rows[3][stolen]);
  ck_assert_uint_gt(rows[3][sent], 0);
  ck_assert_uint_eq(rows[3][sent], rows[3][wctx] + rows[3][wadv] + rows[3][wsteal]);
  free(out);
}
END_TEST

static void count_job(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* One spark every 2 ms from the calling thread, which sleeps in the kernel meanwhile. */
static void *trickle(void *ran) {
  int i;
  for (i = 0; i < 60; i++) {
    MR_SyncTerm st;
    MR_sync_term_init(&st, 2);
    MR_fork_new_child(&st, count_job, ran);
    mr_test_sleep_ms(2);
    MR_join_and_continue(&st);
  }
  return NULL;
}

/* Adaptive spinning (doc/design.md section 3): a spark every 2 ms, so an engine is woken for
 * each, takes it, runs it and then spins for nothing. Its spins must shrink: without the
 * adaptation every spark costs 32 steal attempts more. Even _i: the primordial context posts
 * (engine 1 steals from engine 0); odd _i: a thread that is not an engine posts through the
 * injector while the primordial context waits in a blocking region. */
START_TEST(test_spin_adapts_to_a_trickle) {
  atomic_int ran = 0;
  uint64_t attempts, taken;
  /* Polls (polling build) every 100 ms only: a poll's search is counted as any other, and at the
   * default 1 ms two idle engines would add about 4 attempts per spark of their own. */
  mr_test_start(2, "--spin-rounds 32 --poll-interval-us 100000");
  if (_i % 2 == 0) {
    (void)trickle(&ran);
    taken = MR_TEST_STAT(sparks_stolen);
  } else {
    pthread_t poster;
    MR_blocking_begin();
    ck_assert_int_eq(pthread_create(&poster, NULL, trickle, &ran), 0);
    ck_assert_int_eq(pthread_join(poster, NULL), 0);
    MR_blocking_end();
    taken = MR_TEST_STAT(sparks_injected);
  }
  attempts = MR_TEST_STAT(steal_attempts);
  ck_assert_int_eq(atomic_load(&ran), 60);
  ck_assert_msg(taken >= 20, "only %llu of 60 sparks were taken by a woken engine",
                (unsigned long long)taken);
  ck_assert_msg(attempts < 8 * taken, "%llu steal attempts for %llu sparks taken",
                (unsigned long long)attempts, (unsigned long long)taken);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stats");
  TCase *tc = mr_tcase("pinning", 60);
  tcase_add_loop_test(tc, test_pinning_binds_every_engine, 0, 2);
  tcase_add_test(tc, test_pinning_restores_callers_affinity);
  tcase_add_loop_test(tc, test_pinning_more_engines_than_pus_warns, 0, 2);
  tcase_add_test(tc, test_pinning_warning_quiet);
  tcase_add_test(tc, test_engine_cpu_errors);
  suite_add_tcase(s, tc);
  tc = mr_tcase("counters", 120);
  tcase_add_loop_test(tc, test_counters_balance, 0, 2);
  tcase_add_test(tc, test_stats_table_at_shutdown);
  tcase_add_test(tc, test_stats_records_init);
  tcase_add_loop_test(tc, test_spin_adapts_to_a_trickle, 0, 4);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
