/* check_fork.c: the child of a fork() starts with no runtime (doc/api.md "fork()"): calls give
 * MR_ENOTINIT until it calls MR_init, which works; what the parent's threads held at the moment
 * of the fork (fd claims, contexts, tracing) does not reach it; the parent keeps running. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

/* In a child a failed Check assertion would report to the parent's runner: the child reports on
 * stderr and exits with 1 instead. */
#define CHILD_CHECK(cond)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "check_fork.c:%d: child: %s failed\n", __LINE__, #cond); \
      _exit(1);                                                                \
    }                                                                          \
  } while (0)

/* Wait for child pid; fail unless it exited with 0. */
static void expect_child_ok(pid_t pid) {
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child did not exit (signal %d)",
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ck_assert_int_eq(WEXITSTATUS(status), 0);
}

/* AddressSanitizer's allocator (GCC 12's libasan) takes no lock around fork(): a child forked
 * while another thread of the parent is in its allocator's slow path inherits that size class's
 * mutex held, and its first allocation of that class waits for ever (seen under gdb: a child's
 * new engine thread in SizeClassAllocator64::GetFromAllocator). The tests that fork while other
 * engines run and allocate are left out of that build; every other build runs them, and the
 * ASan build runs the forks of an idle runtime, once its engines have gone to sleep (an engine
 * that has just started is still allocating: a child forked then hung in 3 runs of 3). */
#if defined(MR_TEST_SANITIZER) && defined(__SANITIZE_ADDRESS__)
#define MR_FORK_WHILE_OTHERS_ALLOCATE 0
#else
#define MR_FORK_WHILE_OTHERS_ALLOCATE 1
#endif

/* Under ASan, wait until every engine but the caller's has slept once (so has finished starting)
 * and the runtime's other threads have had a moment to reach their waits. */
static void settle_before_fork(void) {
  if (MR_FORK_WHILE_OTHERS_ALLOCATE || MR_num_engines() == 0) return;
  for (int e = 0; e < MR_num_engines(); e++) {
    if (e == MR_engine_id()) continue;
    for (int w = 0; w < 2000; w++) {
      MR_EngineStats s;
      MR_engine_stats_init(&s);
      ck_assert_int_eq(MR_stats_get(e, &s), 0);
      if (s.sleeps > 0) break;
      mr_test_sleep_ms(1);
    }
  }
  mr_test_sleep_ms(20);
}

/* fork() with stdio flushed, so that the child's exit() writes nothing twice. */
static pid_t fork_flushed(void) {
  settle_before_fork();
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  return pid;
}

static MR_Config fd_config(int engines) {
  MR_Config c = mr_test_config(engines);
  c.flags |= MR_CONFIG_FD_WAITS | MR_CONFIG_QUIET;
  return c;
}

/* ---- in a child: no runtime, then one of its own ---- */

/* Calls with no runtime. */
static void child_expect_no_runtime(void) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  CHILD_CHECK(MR_num_engines() == 0);
  CHILD_CHECK(MR_engine_id() == -1);
  CHILD_CHECK(MR_shutdown() == MR_ENOTINIT);
  CHILD_CHECK(MR_shutdown_now(NULL) == MR_ENOTINIT);
  CHILD_CHECK(MR_spawn(mr_test_count_run, NULL, &o) == MR_ENOTINIT);
}

struct fd_wait {
  int fd;
  atomic_int result;
};
static void wait_readable(void *arg) {
  struct fd_wait *w = arg;
  atomic_store(&w->result, MR_wait_fd(w->fd, MR_FD_READ, 10 * 1000000000LL));
}

static atomic_int on_engine;
static void note_engine(void *arg) {
  (void)arg;
  atomic_store(&on_engine, MR_engine_id());
}

static void signal_after_sleep(void *f) {
  CHILD_CHECK(MR_sleep_for(1000000) == 0);
  MR_future_signal(f, 42);
}

/* A runtime of the child's own (MR_CONFIG_FD_WAITS): sparks, a bound context, a future, a sleep
 * and an fd wait, on the pipe p whose read end a context of the parent may be waiting on. */
static void child_use_runtime(const int p[2]) {
  MR_Config c = fd_config(2);
  CHILD_CHECK(MR_init(&c) == 0);
  CHILD_CHECK(MR_num_engines() == 2);
  CHILD_CHECK(mr_test_pfib(18) == 2584);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = 1;
  atomic_store(&on_engine, -1);
  CHILD_CHECK(MR_spawn(note_engine, NULL, &o) == 0);
  MR_Future f = MR_FUTURE_INIT;
  CHILD_CHECK(MR_spawn(signal_after_sleep, &f, NULL) == 0);
  CHILD_CHECK(MR_future_wait(&f) == 42);
  static struct fd_wait w;
  w.fd = p[0];
  atomic_store(&w.result, -100);
  CHILD_CHECK(MR_spawn(wait_readable, &w, NULL) == 0);
  CHILD_CHECK(MR_sleep_for(5000000) == 0);
  CHILD_CHECK(write(p[1], "c", 1) == 1);
  /* None of the parent's contexts is the child's to drop. */
  MR_ShutdownReport r;
  r.size = sizeof r;
  CHILD_CHECK(MR_shutdown_report(&r) == 0);
  CHILD_CHECK(r.contexts_dropped == 0 && r.sparks_dropped == 0);
  CHILD_CHECK(atomic_load(&on_engine) == 1);
  CHILD_CHECK(atomic_load(&w.result) == MR_FD_READ);
  CHILD_CHECK(MR_num_engines() == 0);
}

/* ---- the parent's side ---- */

static void wait_future(void *f) { (void)MR_future_wait(f); }

/* A context of the parent waits on the pipe's read end (so its claim is held) and is suspended
 * at the moment of the fork; the child uses a runtime of its own on the same pipe, and its
 * MR_shutdown_now finds none of the parent's contexts. */
START_TEST(test_child_uses_runtime) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  MR_Config c = fd_config(3);
  ck_assert_int_eq(MR_init(&c), 0);
  ck_assert_int_eq(mr_test_pfib(18), 2584);
  static struct fd_wait w;
  w.fd = p[0];
  atomic_store(&w.result, -100);
  ck_assert_int_eq(MR_spawn(wait_readable, &w, NULL), 0);
  MR_Future parked = MR_FUTURE_INIT;
  ck_assert_int_eq(MR_spawn(wait_future, &parked, NULL), 0);
  mr_test_sleep_ms(20); /* both wait */
  pid_t pid = fork_flushed();
  if (pid == 0) {
    child_expect_no_runtime();
    child_use_runtime(p);
    /* The child's own runtime again, stopped at once: it has none of the parent's contexts. */
    MR_Config c2 = mr_test_config(2);
    CHILD_CHECK(MR_init(&c2) == 0);
    MR_ShutdownReport r;
    r.size = sizeof r;
    CHILD_CHECK(MR_shutdown_now(&r) == 0);
    CHILD_CHECK(r.contexts_dropped == 0 && r.sparks_dropped == 0);
    _exit(0);
  }
  expect_child_ok(pid);
  /* The child's byte is in the pipe: the parent's waiter ends. */
  ck_assert_int_eq(mr_test_pfib(18), 2584);
  MR_future_signal(&parked, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&w.result), MR_FD_READ);
  close(p[0]);
  close(p[1]);
}
END_TEST

/* A child that only exits (with _exit, or with exit and the destructors it runs). */
START_TEST(test_child_only_exits) {
  mr_test_start(3, NULL);
  for (int how = 0; how < 2; how++) {
    pid_t pid = fork_flushed();
    if (pid == 0) {
      if (how == 0) _exit(0);
      exit(0);
    }
    expect_child_ok(pid);
  }
  ck_assert_int_eq(mr_test_pfib(18), 2584);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* MR_init, MR_shutdown and MR_init again in a child; and a fork with the parent's runtime
 * already stopped. */
START_TEST(test_child_init_again) {
  mr_test_start(2, NULL);
  pid_t pid = fork_flushed();
  if (pid == 0) {
    for (int round = 0; round < 3; round++) {
      child_expect_no_runtime();
      MR_Config c = mr_test_config(2);
      CHILD_CHECK(MR_init(&c) == 0);
      c.flags |= MR_CONFIG_QUIET;
      CHILD_CHECK(MR_init(&c) == MR_EBUSY);
      CHILD_CHECK(mr_test_pfib(15) == 610);
      CHILD_CHECK(MR_shutdown() == 0);
    }
    _exit(0);
  }
  expect_child_ok(pid);
  ck_assert_int_eq(MR_shutdown(), 0);
  pid = fork_flushed();
  if (pid == 0) {
    child_expect_no_runtime();
    MR_Config c = mr_test_config(2);
    CHILD_CHECK(MR_init(&c) == 0);
    CHILD_CHECK(MR_shutdown() == 0);
    _exit(0);
  }
  expect_child_ok(pid);
}
END_TEST

/* The parent's stack overflow handler is not the child's: before MR_init the child has the
 * action the process had before the parent's MR_init. */
START_TEST(test_child_has_no_fault_handler) {
  if (!MR_TEST_OWN_SIGNALS) return;
  struct sigaction before;
  ck_assert_int_eq(sigaction(SIGSEGV, NULL, &before), 0);
  mr_test_start(2, NULL);
  pid_t pid = fork_flushed();
  if (pid == 0) {
    struct sigaction now;
    CHILD_CHECK(sigaction(SIGSEGV, NULL, &now) == 0);
    CHILD_CHECK(now.sa_handler == before.sa_handler);
    _exit(0);
  }
  expect_child_ok(pid);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* A trace being recorded in the parent is not the child's: a thread of the child that signals a
 * future with no runtime records nothing. */
START_TEST(test_child_of_a_traced_parent) {
  char path[] = "/tmp/check_fork_XXXXXX.json";
  int fd = mkstemps(path, 5);
  ck_assert_int_ge(fd, 0);
  close(fd);
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_trace_start(path), 0);
  pid_t pid = fork_flushed();
  if (pid == 0) {
    MR_Future f = MR_FUTURE_INIT;
    MR_future_signal(&f, 1);
    CHILD_CHECK(MR_future_wait(&f) == 1);
    CHILD_CHECK(MR_trace_stop() == MR_ENOTINIT);
    _exit(0);
  }
  expect_child_ok(pid);
  ck_assert_int_eq(MR_trace_stop(), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  unlink(path);
}
END_TEST

/* The child's own MR_init with the parent's options (--trace of the same file, as a child that
 * re-reads MRENGINE_OPTIONS gets) does not write the parent's trace file: it starts with no
 * trace, and the parent's file holds the parent's trace alone (before, the child truncated it
 * under the parent, which went on writing at its offset: a file with a hole, or the child's
 * marker in it). */
static int file_has(const char *path, const char *text, size_t *size, int *nul) {
  static char buf[1 << 20];
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  *size = n;
  *nul = strlen(buf) != n;
  return strstr(buf, text) != NULL;
}

START_TEST(test_child_keeps_off_the_parents_trace) {
  char path[] = "/tmp/check_fork_XXXXXX.json", opts[128];
  int fd = mkstemps(path, 5);
  ck_assert_int_ge(fd, 0);
  close(fd);
  snprintf(opts, sizeof opts, "--trace %s", path);
  mr_test_start(2, opts);
  ck_assert_int_eq(MR_trace_marker("parent-before"), 0);
  ck_assert_int_eq(mr_test_pfib(15), 610);
  pid_t pid = fork_flushed();
  if (pid == 0) {
    MR_Config c = mr_test_config(2);
    c.options = opts;
    CHILD_CHECK(MR_init(&c) == 0);
    CHILD_CHECK(MR_trace_marker("from-the-child") == 0);
    CHILD_CHECK(mr_test_pfib(15) == 610);
    CHILD_CHECK(MR_trace_stop() == MR_EINVAL); /* no trace on */
    CHILD_CHECK(MR_shutdown() == 0);
    _exit(0);
  }
  expect_child_ok(pid);
  ck_assert_int_eq(mr_test_pfib(15), 610);
  ck_assert_int_eq(MR_trace_marker("parent-after"), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  size_t size;
  int nul;
  ck_assert(!file_has(path, "from-the-child", &size, &nul));
  ck_assert(file_has(path, "parent-before", &size, &nul));
  ck_assert(file_has(path, "parent-after", &size, &nul));
  ck_assert_int_eq(nul, 0);
  ck_assert_uint_gt(size, 0);
  unlink(path);
}
END_TEST

/* ---- forks while the engines are busy ---- */

static atomic_int stop_busy;
static unsigned char busy_runs;
static int busy_pipes[3][2];

/* Sparks, fd waits (each takes and gives back a claim under the claims lock) and spawns (new
 * contexts go into the context registry), until stop_busy. */
static void busy(void *arg) {
  int *p = arg;
  while (!atomic_load(&stop_busy)) {
    (void)mr_test_pfib(10);
    (void)MR_wait_fd(p[1], MR_FD_WRITE, 0);
    (void)MR_spawn(mr_test_count_run, &busy_runs, NULL);
    MR_yield();
  }
}

START_TEST(test_fork_while_busy) {
  MR_Config c = fd_config(3);
  ck_assert_int_eq(MR_init(&c), 0);
  atomic_store(&stop_busy, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(pipe(busy_pipes[i]), 0);
    o.engine = i;
    ck_assert_int_eq(MR_spawn(busy, busy_pipes[i], &o), 0);
  }
  const int rounds = MR_TEST_SCALE(40);
  for (int round = 0; round < rounds; round++) {
    pid_t pid = fork_flushed();
    if (pid == 0) {
      child_expect_no_runtime();
      MR_Config cc = fd_config(2);
      CHILD_CHECK(MR_init(&cc) == 0);
      CHILD_CHECK(mr_test_pfib(12) == 144);
      /* Every descriptor the parent's contexts were waiting on is free here. */
      for (int i = 0; i < 3; i++)
        CHILD_CHECK(MR_wait_fd(busy_pipes[i][1], MR_FD_WRITE, 0) == MR_FD_WRITE);
      CHILD_CHECK(MR_shutdown() == 0);
      _exit(0);
    }
    expect_child_ok(pid);
  }
  atomic_store(&stop_busy, 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  for (int i = 0; i < 3; i++) {
    close(busy_pipes[i][0]);
    close(busy_pipes[i][1]);
  }
}
END_TEST

/* ---- a fork from a context ---- */

/* The child continues on the context's stack with no runtime; it may start one of its own (the
 * context's stack is then its primordial context) and must end the process, never return. */
static void fork_here(void *arg) {
  atomic_int *ok = arg;
  pid_t pid = fork();
  if (pid == 0) {
    child_expect_no_runtime();
    /* Regions run in place: the calling thread's own region records are the ones used. */
    MR_Config c = mr_test_config(2);
    c.options = "--max-backup-threads 0";
    CHILD_CHECK(MR_init(&c) == 0);
    CHILD_CHECK(mr_test_pfib(15) == 610);
    for (int i = 0; i < 2; i++) {
      MR_blocking_begin();
      MR_blocking_end();
    }
    /* Not one of the parent's contexts is there to drop (its own stack among them). */
    MR_ShutdownReport r;
    r.size = sizeof r;
    CHILD_CHECK(MR_shutdown_now(&r) == 0);
    CHILD_CHECK(r.contexts_dropped == 0);
    _exit(0);
  }
  int status = -1;
  MR_blocking_begin();
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    atomic_fetch_add(ok, 1);
  MR_blocking_end();
}

/* The same inside a blocking region (the forking thread is a backup thread). */
static void fork_in_region(void *arg) {
  MR_blocking_begin();
  fork_here(arg);
  MR_blocking_end();
}

START_TEST(test_fork_from_context) {
  mr_test_start(2, NULL);
  static atomic_int ok;
  atomic_store(&ok, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = 1;
  fflush(NULL);
  ck_assert_int_eq(MR_spawn(fork_here, &ok, &o), 0);
  ck_assert_int_eq(MR_spawn(fork_here, &ok, NULL), 0);
  ck_assert_int_eq(MR_spawn(fork_in_region, &ok, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&ok), 3);
}
END_TEST

static Suite *fork_suite(void) {
  Suite *s = suite_create("fork");
  TCase *tc = mr_tcase("child", 60);
  tcase_add_test(tc, test_child_uses_runtime);
  tcase_add_test(tc, test_child_only_exits);
  tcase_add_test(tc, test_child_init_again);
  tcase_add_test(tc, test_child_has_no_fault_handler);
  tcase_add_test(tc, test_child_of_a_traced_parent);
  tcase_add_test(tc, test_child_keeps_off_the_parents_trace);
  if (MR_FORK_WHILE_OTHERS_ALLOCATE) tcase_add_test(tc, test_fork_from_context);
  suite_add_tcase(s, tc);
  if (MR_FORK_WHILE_OTHERS_ALLOCATE) {
    tc = mr_tcase("busy", 120);
    tcase_add_test(tc, test_fork_while_busy);
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(void) {
#if defined(MR_TEST_SANITIZER) && defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer does not follow a fork of a process with threads: its own records keep the
   * parent's threads, so the child's first new thread stops it ("starting new threads after
   * multi-threaded fork is not supported"; with die_after_fork=0, "dup thread with used id").
   * Skipped (77) in that build. */
  return 77;
#endif
  if (mr_test_emulated()) {
    printf(
        "check_fork: SKIP: under qemu-user the child of a fork() of a process with threads "
        "cannot start a thread (qemu stops it in an assertion of its own)\n");
    return 77;
  }
  return mr_test_run(fork_suite());
}
