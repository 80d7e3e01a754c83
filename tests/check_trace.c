/* check_trace.c: tracing (--trace, MR_trace_start/stop/marker) through the C ABI. Every trace
 * the tests write is checked by tests/trace_check.py: ghc-events reads and validates the
 * eventlogs, whose spark counters must equal MR_stats_get's totals; the JSON traces parse and
 * their tracks nest and cover each engine's life. Skips (77) when python3 or ghc-events is
 * missing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

static char g_dir[] = "/tmp/mrengine-trace-XXXXXX";

/* A trace file name in the test's directory: "<dir>/<name>". */
static const char *trace_path(const char *name) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  return path;
}

/* The sums the eventlog's spark counters must equal. */
static void spark_totals(unsigned long long *created, unsigned long long *run) {
  *created = *run = 0;
  for (int e = 0; e < MR_num_engines(); e++) {
    MR_EngineStats s;
    MR_engine_stats_init(&s);
    ck_assert_int_eq(MR_stats_get(e, &s), 0);
    *created += s.sparks_pushed + s.sparks_injected;
    *run += s.sparks_run_local + s.sparks_stolen + s.sparks_injected;
  }
}

/* The checker's --sparks and --wakeups (trace_check.py): the counted events that are traced. */
static void noted_args(char *out, size_t size) {
  unsigned long long pushed = 0, run = 0, stolen = 0, wakeups = 0;
  for (int e = 0; e < MR_num_engines(); e++) {
    MR_EngineStats s;
    MR_engine_stats_init(&s);
    ck_assert_int_eq(MR_stats_get(e, &s), 0);
    pushed += s.sparks_pushed;
    run += s.sparks_run_local + s.sparks_injected;
    stolen += s.sparks_stolen;
    for (int k = 0; k < MR_NOTIFY_KINDS; k++) wakeups += s.wakeups[k];
  }
  snprintf(out, size, "--sparks %llu,%llu,%llu --wakeups %llu", pushed, run, stolen, wakeups);
}

/* Run the checker on path with extra arguments; fail the test if it fails. The file is removed
 * when it passes. */
static void check_file(const char *path, const char *extra) {
  char cmd[1024];
  const char *top = getenv("top_srcdir");
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/trace_check.py' '%s' %s", top ? top : ".", path,
           extra ? extra : "");
  int rc = system(cmd);
  ck_assert_msg(rc == 0, "trace check failed (%d): %s", rc, cmd);
  unlink(path);
}

/* ---- a workload of every kind of event ---- */
static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static MR_Future g_fut;
static void signaller(void *arg) {
  (void)arg;
  usleep(2000);
  MR_future_signal(&g_fut, 42);
}
static void blocker(void *arg) {
  (void)arg;
  MR_blocking_begin();
  usleep(1000);
  MR_blocking_end();
}
static atomic_long g_iters;
static void iteration(void *arg) {
  (void)arg;
  ck_assert_int_eq(mr_test_pfib(12), fib_seq(12));
  atomic_fetch_add(&g_iters, 1);
}

/* Sparks, joins, a future waited on from the primordial, a spawned context with a blocking
 * region, loop control; idle gaps between them (engines sleep and are woken). */
static void workload(void) {
  ck_assert_int_eq(mr_test_pfib(20), fib_seq(20));
  usleep(3000);
  MR_future_init(&g_fut);
  ck_assert_int_eq(MR_spawn(signaller, NULL, NULL), 0);
  ck_assert_int_eq((long)MR_future_wait(&g_fut), 42);
  ck_assert_int_eq(MR_spawn(blocker, NULL, NULL), 0);
  MR_LoopControl *lc;
  atomic_store(&g_iters, 0);
  ck_assert_int_eq(MR_lc_create(2, &lc), 0);
  for (long i = 0; i < 50; i++) ck_assert_int_eq(MR_lc_spawn(lc, iteration, NULL), 0);
  ck_assert_int_eq(MR_lc_finish(lc), 0);
  ck_assert_int_eq(atomic_load(&g_iters), 50);
  usleep(3000);
  ck_assert_int_eq(mr_test_pfib(18), fib_seq(18));
}

/* --trace=FILE from MR_init to MR_shutdown, in both formats, on 1 to 3 engines. */
START_TEST(test_trace_whole_run) {
  int engines = 1 + _i / 2;
  const char *name = _i % 2 ? "whole.json" : "whole.eventlog";
  char opts[160], path[128], extra[256], noted[128];
  snprintf(path, sizeof path, "%s", trace_path(name));
  snprintf(opts, sizeof opts, "--trace=%s", path);
  mr_test_start(engines, opts);
  ck_assert_int_eq(MR_trace_start(trace_path("other.json")), MR_EBUSY);
  ck_assert_int_eq(MR_trace_marker("after start"), 0);
  workload();
  unsigned long long created, run;
  spark_totals(&created, &run);
  noted_args(noted, sizeof noted);
  ck_assert_int_eq(MR_shutdown(), 0);
  if (_i % 2)
    snprintf(extra, sizeof extra, "--engines %d --marker 'after start'", engines);
  else
    snprintf(extra, sizeof extra,
             "--engines %d --created %llu --run %llu %s --marker 'after start'", engines, created,
             run, noted);
  check_file(path, extra);
}
END_TEST

/* MR_trace_start/stop around regions, several times in one run, with markers; the spark
 * counters of a region count that region's sparks only. */
START_TEST(test_trace_regions) {
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_trace_stop(), MR_EINVAL); /* none on */
  ck_assert_int_eq(MR_trace_marker("nobody records this"), 0);
  for (int round = 0; round < 4; round++) {
    const char *name = round % 2 ? "region.json" : "region.eventlog";
    char path[128], extra[160];
    snprintf(path, sizeof path, "%s", trace_path(name));
    ck_assert_int_eq(mr_test_pfib(15), fib_seq(15)); /* untraced work before */
    unsigned long long c0, r0, c1, r1;
    spark_totals(&c0, &r0);
    ck_assert_int_eq(MR_trace_start(path), 0);
    ck_assert_int_eq(MR_trace_start(path), MR_EBUSY);
    ck_assert_int_eq(MR_trace_marker("region begins"), 0);
    workload();
    ck_assert_int_eq(MR_trace_marker("region \"ends\"\n"), 0);
    spark_totals(&c1, &r1);
    ck_assert_int_eq(MR_trace_stop(), 0);
    ck_assert_int_eq(MR_trace_stop(), MR_EINVAL);
    if (round % 2)
      snprintf(extra, sizeof extra, "--engines 2 --marker 'region begins'");
    else
      snprintf(extra, sizeof extra,
               "--engines 2 --created %llu --run %llu --marker 'region begins'", c1 - c0, r1 - r0);
    check_file(path, extra);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* Bad paths: a clear error at MR_init and from MR_trace_start, never a crash later. */
START_TEST(test_trace_bad_paths) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET;
  c.options = "--trace=/nonexistent-dir/x.eventlog";
  ck_assert_int_eq(MR_init(&c), MR_EOPTION);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "cannot open trace file"));
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "/nonexistent-dir/x.eventlog"));
  c.options = "--trace=x.txt";
  ck_assert_int_eq(MR_init(&c), MR_EOPTION);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "--trace"));
  ck_assert_int_eq(MR_trace_start(trace_path("x.json")), MR_ENOTINIT);
  ck_assert_int_eq(MR_trace_stop(), MR_ENOTINIT);
  ck_assert_int_eq(MR_trace_marker("x"), MR_ENOTINIT);
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_trace_start(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_trace_start(trace_path("x.txt")), MR_EINVAL);
  ck_assert_int_eq(MR_trace_start("/nonexistent-dir/x.json"), MR_EINVAL);
  ck_assert_int_eq(MR_trace_marker(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_shutdown(), 0);
  /* A runtime whose --trace failed leaves nothing behind: the next MR_init works. */
  mr_test_start(1, NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A path with control bytes, 10 KB long: the message escapes them and shows only its start. */
START_TEST(test_trace_bad_path_quoted) {
  enum { kLong = 10 * 1024 };
  static char options[kLong + 64];
  int n = snprintf(options, sizeof options, "--trace=/nonexistent-dir/\x01\x1b[31m");
  memset(options + n, 'a', kLong);
  strcpy(options + n + kLong, ".json");
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET;
  c.options = options;
  ck_assert_int_eq(MR_init(&c), MR_EOPTION);
  const char *msg = MR_init_error_message();
  ck_assert_ptr_nonnull(strstr(msg, "cannot open trace file '/nonexistent-dir/\\x01\\x1b[31maaa"));
  ck_assert_ptr_nonnull(strstr(msg, "aaa...':"));
  ck_assert_uint_lt(strlen(msg), 256);
  for (const char *p = msg; *p; p++) ck_assert_uint_ge((unsigned char)*p, 0x20);
}
END_TEST

/* ---- concurrency: 4 foreign threads inject while engines sleep and wake, the trace is
 * stopped and started under them, and the runtime shuts down ---- */
enum { kInjectors = 4 };
static atomic_int g_stop_injecting;
static void *injector(void *arg) {
  long id = (long)(intptr_t)arg;
  char text[64];
  for (int round = 0; !atomic_load(&g_stop_injecting); round++) {
    ck_assert_int_eq(mr_test_pfib(10 + (int)(id % 3)), fib_seq(10 + (int)(id % 3)));
    snprintf(text, sizeof text, "injector %ld round %d", id, round);
    ck_assert_int_eq(MR_trace_marker(text), 0);
    usleep((useconds_t)(200 + 300 * id)); /* the engines fall asleep meanwhile */
  }
  return NULL;
}

START_TEST(test_trace_foreign_injectors) {
  const char *name = _i % 2 ? "foreign.json" : "foreign.eventlog";
  const char *other = _i % 2 ? "foreign2.json" : "foreign2.eventlog";
  char path[128], path2[128], opts[160];
  snprintf(path, sizeof path, "%s", trace_path(name));
  snprintf(path2, sizeof path2, "%s", trace_path(other));
  snprintf(opts, sizeof opts, "--trace=%s%s", path, _i >= 2 ? " --lazy-engines" : "");
  mr_test_start(3, opts);
  pthread_t t[kInjectors];
  atomic_store(&g_stop_injecting, 0);
  for (long k = 0; k < kInjectors; k++)
    ck_assert_int_eq(pthread_create(&t[k], NULL, injector, (void *)(intptr_t)k), 0);
  for (int k = 0; k < 6; k++) {
    usleep(4000);
    if (k == 2) ck_assert_int_eq(MR_trace_stop(), 0);
    if (k == 3) ck_assert_int_eq(MR_trace_start(path2), 0);
  }
  atomic_store(&g_stop_injecting, 1);
  for (int k = 0; k < kInjectors; k++) ck_assert_int_eq(pthread_join(t[k], NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0); /* ends the second trace */
  check_file(path, "--engines 3");
  check_file(path2, "--engines 3");
}
END_TEST

/* A process killed while it traces leaves a trace that the readers read up to its last block. */
START_TEST(test_trace_killed) {
  const char *name = _i % 2 ? "killed.json" : "killed.eventlog";
  char path[128], opts[160];
  snprintf(path, sizeof path, "%s", trace_path(name));
  snprintf(opts, sizeof opts, "--trace=%s", path);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    mr_test_start(2, opts);
    for (;;) (void)mr_test_pfib(18);
  }
  /* Until some blocks are out (an engine writes a block every 4096 events). */
  struct stat st;
  for (int k = 0; k < 2000 && (stat(path, &st) != 0 || st.st_size < 300000); k++) usleep(1000);
  ck_assert_int_eq(kill(child, SIGKILL), 0);
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert(WIFSIGNALED(status));
  check_file(path, "--cut 1"); /* an engine whose buffer never filled has no block */
}
END_TEST

static int have(const char *cmd) {
  char buf[256];
  snprintf(buf, sizeof buf, "command -v %s >/dev/null 2>&1", cmd);
  return system(buf) == 0;
}

int main(void) {
  if (!have("python3") || !have("ghc-events")) {
    printf("check_trace: SKIP: python3 or ghc-events (Debian: libghc-ghc-events-dev) missing\n");
    return 77;
  }
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return EXIT_FAILURE;
  }
  Suite *s = suite_create("trace");
  TCase *tc = mr_tcase("files", 120);
  tcase_add_loop_test(tc, test_trace_whole_run, 0, 6);
  tcase_add_test(tc, test_trace_regions);
  tcase_add_test(tc, test_trace_bad_paths);
  tcase_add_test(tc, test_trace_bad_path_quoted);
  tcase_add_loop_test(tc, test_trace_killed, 0, 2);
  suite_add_tcase(s, tc);
  tc = mr_tcase("concurrency", 120);
  tcase_add_loop_test(tc, test_trace_foreign_injectors, 0, 4);
  suite_add_tcase(s, tc);
  int rc = mr_test_run(s);
  rmdir(g_dir); /* empty unless a check failed (its file stays for a look) */
  return rc;
}
