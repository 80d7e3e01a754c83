/* testutil.h: what every Check suite of mrengine shares. */
#ifndef MR_TESTUTIL_H
#define MR_TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrengine.h"

/* Run one suite in fork mode (unless CK_FORK=no, for gdb/valgrind) and return the exit status. */
static inline int mr_test_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A test case with a timeout (seconds), so that a deadlock fails instead of hanging. */
static inline TCase *mr_tcase(const char *name, double timeout) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, timeout);
  return tc;
}

/* A configuration of `engines` engines that ignores MRENGINE_OPTIONS (for MR_init, or the C++
 * mr::runtime). */
static inline MR_Config mr_test_config(int engines) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.engines = engines;
  return c;
}

/* Start the runtime for a test: `engines` engines (0: as `opts` or the machine decides), the
 * options text `opts` (may be NULL), MRENGINE_OPTIONS ignored. Fails the test if MR_init fails
 * or the number of engines differs. */
static inline void mr_test_start(int engines, const char *opts) {
  char text[256];
  MR_Config c;
  /* Engines go in the options text, as a user would write them. */
  if (engines > 0)
    snprintf(text, sizeof text, "-P %d %s", engines, opts ? opts : "");
  else
    snprintf(text, sizeof text, "%s", opts ? opts : "");
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.options = text;
  ck_assert_int_eq(MR_init(&c), 0);
  if (engines > 0) ck_assert_int_eq(MR_num_engines(), engines);
}

/* A build with --enable-sanitizer compiles the tests with MR_TEST_SANITIZER: the sanitizer's
 * runtime has threads and mappings of its own (so exact counts of ours are not checked), and
 * ThreadSanitizer allows about 8000 fibers (so the counts of contexts alive at once shrink). */
#ifdef MR_TEST_SANITIZER
#define MR_TEST_EXACT_RESOURCES 0
#define MR_TEST_SCALE(n) ((n) / 5)
#define MR_TEST_OWN_SIGNALS 0 /* the sanitizer handles SIGSEGV that is not ours */
#else
#define MR_TEST_EXACT_RESOURCES 1
#define MR_TEST_SCALE(n) (n)
#define MR_TEST_OWN_SIGNALS 1
#endif

/* The threads the runtime has of its own while it runs, besides engines and backup threads: the
 * debug build's liveness watchdog (doc/design.md, section 17). */
#ifdef MR_TEST_WATCHDOG
#define MR_TEST_RUNTIME_THREADS 1
#else
#define MR_TEST_RUNTIME_THREADS 0
#endif

/* Nonzero under an emulator: a cross build's make check runs every test through
 * tests/emulate.sh, which sets MR_TEST_EMULATED=1 (qemu-user passes the environment on). */
static inline int mr_test_emulated(void) {
  const char *e = getenv("MR_TEST_EMULATED");
  return e != NULL && strcmp(e, "1") == 0;
}

/* Add a test that cannot work under qemu-user to tc; under it, leave it out and say so and why
 * (tests/README.md, "Cross builds", lists them). */
#define mr_tcase_add_native_test(tc, test, why) mr_tcase_add_native_((tc), (test), #test, (why))
static inline void mr_tcase_add_native_(TCase *tc, const TTest *test, const char *name,
                                        const char *why) {
  if (mr_test_emulated())
    printf("SKIP under the emulator: %s: %s\n", name, why);
  else
    tcase_add_test(tc, test);
}

/* The threads of this process (/proc/self/task). */
static inline int mr_test_count_threads(void) {
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int n = 0;
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* The memory mappings of this process (/proc/self/maps lines): every context stack is one or
 * two (the stack and its guard page). */
static inline int mr_test_count_mappings(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  int n = 0, c;
  ck_assert_ptr_nonnull(f);
  while ((c = fgetc(f)) != EOF)
    if (c == '\n') n++;
  fclose(f);
  return n;
}

/* Sleep for ms milliseconds. */
static inline void mr_test_sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* Assert that the process has n threads, giving exiting threads up to 200 ms to leave
 * (pthread_join returns a moment before a thread leaves /proc/self/task). Not checked in a
 * sanitizer build. */
static inline void mr_test_expect_threads(int n) {
  int w;
  if (!MR_TEST_EXACT_RESOURCES) return;
  for (w = 0; w < 200 && mr_test_count_threads() != n; w++) mr_test_sleep_ms(1);
  ck_assert_int_eq(mr_test_count_threads(), n);
}

/* Assert that the process has n memory mappings (not checked in a sanitizer build). */
static inline void mr_test_expect_mappings(int n) {
  if (MR_TEST_EXACT_RESOURCES) ck_assert_int_eq(mr_test_count_mappings(), n);
}

/* The sum over every engine of one MR_EngineStats counter, e.g. MR_TEST_STAT(sparks_stolen). */
static inline uint64_t mr_test_stat_total(size_t offset) {
  uint64_t t = 0;
  int e;
  for (e = 0; e < MR_num_engines(); e++) {
    MR_EngineStats s;
    MR_engine_stats_init(&s);
    ck_assert_int_eq(MR_stats_get(e, &s), 0);
    t += *(const uint64_t *)(const void *)((const char *)&s + offset);
  }
  return t;
}
#define MR_TEST_STAT(field) mr_test_stat_total(offsetof(MR_EngineStats, field))

/* A job that counts its runs in the byte its environment points to. */
static inline void mr_test_count_run(void *slot) {
  __atomic_fetch_add((unsigned char *)slot, 1, __ATOMIC_RELAXED);
}

/* One parallel conjunction of n branches, mr_test_count_run(&slots[k]) each, joined here (from
 * any thread: one that is not an engine submits through the injector and blocks). */
static inline void mr_test_fork_join_counts(unsigned char *slots, int n) {
  MR_SyncTerm st;
  int k;
  MR_sync_term_init(&st, (unsigned)n + 1);
  for (k = 0; k < n; k++) MR_fork_new_child(&st, mr_test_count_run, &slots[k]);
  MR_join_and_continue(&st);
}

/* fib(n) with one spark per call through nested parallel conjunctions: fib(n+1)-1 sparks. */
struct mr_test_fib_arg {
  int n;
  long r;
};
static inline long mr_test_pfib(int n);
static inline void mr_test_fib_branch(void *env) {
  struct mr_test_fib_arg *a = (struct mr_test_fib_arg *)env;
  a->r = mr_test_pfib(a->n);
}
static inline long mr_test_pfib(int n) {
  MR_SyncTerm st;
  struct mr_test_fib_arg a;
  long b;
  if (n < 2) return n;
  a.n = n - 1;
  a.r = 0;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, mr_test_fib_branch, &a);
  b = mr_test_pfib(n - 2);
  MR_join_and_continue(&st);
  return a.r + b;
}

#endif
