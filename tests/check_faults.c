/* check_faults.c: faults and misuse stop the process with a message that names them. Each case
 * runs in a child of its own whose stderr comes back through a pipe. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

/* Run body() in a forked child with stderr into a pipe; return its wait status and put what it
 * printed in out. */
static int run_child(void (*body)(void), char *out, size_t cap) {
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  fflush(stderr);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], STDERR_FILENO);
    body();
    _exit(0);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t r;
  while (n + 1 < cap && (r = read(fd[0], out + n, cap - 1 - n)) > 0) n += (size_t)r;
  out[n] = '\0';
  close(fd[0]);
  /* qemu-user reports a guest killed by a signal on stderr ("qemu: uncaught target signal 11
   * ..."): its line, not the child's, is left out. */
  if (mr_test_emulated()) {
    char *q = strstr(out, "qemu: uncaught target signal");
    if (q != NULL) *q = '\0';
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return status;
}

static int killed_by(int status, int sig) { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }

/* Deep enough for any stack we give it; each frame keeps 1 KiB live. */
static int recurse(volatile char *up, int depth) {
  volatile char frame[1024];
  frame[0] = (char)depth;
  frame[1023] = up ? up[0] : 0;
  if (depth == 0) return frame[0];
  return recurse(frame, depth - 1) + frame[1023];
}

static void deep(void *arg) {
  (void)arg;
  (void)recurse(NULL, 1 << 20);
}

static void overflow_spawned(void) {
  mr_test_start(2, "--stack-size 64");
  MR_spawn(deep, NULL, NULL);
  MR_shutdown();
}

static void overflow_spark(void) {
  MR_SyncTerm st;
  MR_Future never;
  mr_test_start(2, "--small-stack-size 32");
  MR_future_init(&never);
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, deep, NULL);
  /* Not the join, which would run the spark inline on this (the primordial's) stack: suspend,
   * so that an engine runs it in a spark context of its own. */
  (void)MR_future_wait(&never);
}

START_TEST(test_stack_overflow_names_the_option) {
  char out[1024];
  int st = run_child(overflow_spawned, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGABRT), "status %#x, stderr '%s'", st, out);
  ck_assert_msg(strstr(out,
                       "mrengine: context stack overflow (stack size 64 KiB); raise "
                       "--stack-size\n") != NULL,
                "stderr: '%s'", out);
  st = run_child(overflow_spark, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGABRT), "status %#x, stderr '%s'", st, out);
  ck_assert_msg(strstr(out,
                       "mrengine: context stack overflow (stack size 32 KiB); raise "
                       "--small-stack-size\n") != NULL,
                "stderr: '%s'", out);
}
END_TEST

/* A fault that is not an overflow keeps its usual outcome, and says nothing about stacks. */
static void null_write(void *arg) {
  (void)arg;
  *(volatile int *)(uintptr_t)arg = 1;
}
static void bad_pointer(void) {
  mr_test_start(2, NULL);
  MR_spawn(null_write, NULL, NULL);
  MR_shutdown();
}

START_TEST(test_other_faults_keep_their_signal) {
  char out[1024];
  if (!MR_TEST_OWN_SIGNALS) return; /* a sanitizer reports any other fault itself */
  int st = run_child(bad_pointer, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGSEGV), "status %#x, stderr '%s'", st, out);
  ck_assert_ptr_null(strstr(out, "stack overflow"));
}
END_TEST

/* After MR_shutdown the previous handler is back: a fault is the default SIGSEGV again. */
static void fault_after_shutdown(void) {
  mr_test_start(2, NULL);
  MR_shutdown();
  null_write(NULL);
}

START_TEST(test_handler_removed_at_shutdown) {
  char out[1024];
  if (!MR_TEST_OWN_SIGNALS) return; /* a sanitizer reports any other fault itself */
  int st = run_child(fault_after_shutdown, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGSEGV), "status %#x, stderr '%s'", st, out);
  ck_assert_str_eq(out, "");
}
END_TEST

/* A SIGSEGV or SIGBUS that was sent, not a fault (raise, kill: si_code <= 0), has its usual
 * outcome while the runtime runs: it kills the process (before, the handler swallowed it, and
 * was gone for the next overflow). */
static void raise_segv(void) {
  mr_test_start(2, NULL);
  raise(SIGSEGV);
}
static void kill_bus(void) {
  mr_test_start(2, NULL);
  kill(getpid(), SIGBUS);
  mr_test_sleep_ms(1000); /* delivered to whichever thread: wait for it */
}

START_TEST(test_sent_fault_signals_kill) {
  char out[1024];
  if (!MR_TEST_OWN_SIGNALS) return; /* a sanitizer handles them itself */
  int st = run_child(raise_segv, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGSEGV), "status %#x, stderr '%s'", st, out);
  ck_assert_str_eq(out, "");
  st = run_child(kill_bus, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGBUS), "status %#x, stderr '%s'", st, out);
  ck_assert_str_eq(out, "");
}
END_TEST

/* Sent while the action before MR_init ignores it: ignored, and the handler stays to name a
 * later overflow. */
static void ignored_then_overflow(void) {
  signal(SIGSEGV, SIG_IGN);
  mr_test_start(2, "--stack-size 64");
  raise(SIGSEGV);
  MR_spawn(deep, NULL, NULL);
  MR_shutdown();
}

START_TEST(test_ignored_sent_fault_keeps_the_handler) {
  char out[1024];
  if (!MR_TEST_OWN_SIGNALS) return; /* a sanitizer handles them itself */
  int st = run_child(ignored_then_overflow, out, sizeof out);
  ck_assert_msg(killed_by(st, SIGABRT), "status %#x, stderr '%s'", st, out);
  ck_assert_msg(strstr(out, "mrengine: context stack overflow (stack size 64 KiB)") != NULL,
                "stderr: '%s'", out);
}
END_TEST

/* Misuse that cannot be an error code: the message names it. */
static void fork_after_shutdown(void) {
  MR_SyncTerm st;
  mr_test_start(1, NULL);
  MR_shutdown();
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, deep, NULL);
}
static void unmatched_blocking_end(void) {
  mr_test_start(1, NULL);
  MR_blocking_end();
}
static void empty_conjunction(void) {
  MR_SyncTerm st;
  mr_test_start(1, NULL);
  MR_sync_term_init(&st, 0);
}

static void nop(void *env) { (void)env; }

/* A conjunction counted for the caller alone, and a branch forked into it. */
static void fork_beyond_count(void) {
  MR_SyncTerm st;
  mr_test_start(1, NULL);
  MR_sync_term_init(&st, 1);
  MR_fork_new_child(&st, nop, NULL);
}

/* Two branches forked into a conjunction counted for one and the caller: the join returns
 * early, and the branch left over finds no parent when it arrives (or, if the first branch
 * was stolen and finished at once, the second fork finds no branch left). */
static void fork_beyond_count_late(void) {
  MR_SyncTerm st;
  mr_test_start(2, NULL);
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, nop, NULL);
  MR_fork_new_child(&st, nop, NULL);
  MR_join_and_continue(&st);
  mr_test_sleep_ms(3000); /* the leftover branch is stolen meanwhile */
}

/* An on_drop that waits: at MR_shutdown_now (on the shutdown's thread) and at a channel close
 * (in an engine's scheduler) there is no context to suspend. */
static MR_Future never_signalled;
static void waits_in_on_drop(void *arg) {
  (void)arg;
  MR_future_init(&never_signalled);
  MR_future_wait(&never_signalled);
}
static void spawn_with_waiting_on_drop(int ch) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = ch;
  o.on_drop = waits_in_on_drop;
  ck_assert_int_eq(MR_spawn(nop, NULL, &o), 0);
}
static void on_drop_waits_at_stop(void) {
  mr_test_start(1, NULL);
  spawn_with_waiting_on_drop(MR_CHANNEL_DEFAULT);
  MR_shutdown_now(NULL);
}
static void on_drop_waits_at_close(void) {
  MR_ChannelOptions c;
  mr_test_start(1, NULL);
  MR_channel_options_default(&c);
  c.close = MR_CLOSE_DROP;
  int ch = MR_channel_create(&c);
  spawn_with_waiting_on_drop(ch);
  MR_channel_close(ch);
  MR_channel_wait(ch);
}

/* An on_drop that sleeps or waits on a descriptor, and a polled source's poll function that
 * sleeps: on an engine's thread outside any context they would block the engine (they did,
 * silently, 300 ms each), as a future's wait would. */
static void sleeps_in_on_drop(void *arg) {
  (void)arg;
  MR_sleep_for(300000000);
}
static void waits_fd_in_on_drop(void *arg) {
  int fds[2];
  (void)arg;
  if (pipe(fds) != 0) _exit(30);
  MR_wait_fd(fds[0], MR_FD_READ, 300000000);
}
static void drop_at_close_calling(void (*on_drop)(void *), unsigned flags) {
  MR_ChannelOptions co;
  MR_SpawnOptions o;
  MR_Config c = mr_test_config(1);
  c.flags |= flags;
  if (MR_init(&c) != 0) _exit(31);
  MR_channel_options_default(&co);
  co.close = MR_CLOSE_DROP;
  int ch = MR_channel_create(&co);
  MR_spawn_options_default(&o);
  o.channel = ch;
  o.on_drop = on_drop;
  if (MR_spawn(nop, NULL, &o) != 0) _exit(32);
  MR_channel_close(ch);
  MR_channel_wait(ch);
}
static void on_drop_sleeps_at_close(void) { drop_at_close_calling(sleeps_in_on_drop, 0); }
static void on_drop_waits_fd_at_close(void) {
  drop_at_close_calling(waits_fd_in_on_drop, MR_CONFIG_FD_WAITS);
}
static void on_drop_sleeps_at_stop(void) {
  MR_SpawnOptions o;
  mr_test_start(1, NULL);
  MR_spawn_options_default(&o);
  o.on_drop = sleeps_in_on_drop;
  if (MR_spawn(nop, NULL, &o) != 0) _exit(33);
  MR_shutdown_now(NULL);
}
static int sleeping_poll(void *ctx, void *const *items, int n, unsigned char *done) {
  (void)ctx;
  (void)items;
  MR_sleep_for(300000000);
  for (int i = 0; i < n; i++) done[i] = 1;
  return 0;
}
static const MR_PollSource sleeping_source = {sleeping_poll, NULL, 0};
static void poll_fn_sleeps(void) {
  static int item;
  mr_test_start(1, NULL);
  MR_poll_wait(&sleeping_source, &item);
}

START_TEST(test_misuse_is_named) {
  static const struct {
    void (*body)(void);
    const char *says;
  } cases[] = {
      {fork_after_shutdown, "mrengine: MR_fork_new_child called while the runtime is not running"},
      {unmatched_blocking_end, "mrengine: MR_blocking_end without a matching MR_blocking_begin"},
      {empty_conjunction, "mrengine: MR_sync_term_init: a conjunction has at least 1 branch"},
      {fork_beyond_count, "mrengine: MR_fork_new_child: more branches forked than"},
      /* Either check may see it first, depending on when the first branch is stolen. */
      {fork_beyond_count_late, "more branches forked than MR_sync_term_init counted"},
      {on_drop_waits_at_stop, "mrengine: MR_future_wait outside a context"},
      {on_drop_waits_at_close, "mrengine: MR_future_wait outside a context"},
      {on_drop_sleeps_at_close, "mrengine: MR_sleep_until outside a context"},
      {on_drop_waits_fd_at_close, "mrengine: MR_wait_fd outside a context"},
      {on_drop_sleeps_at_stop, "mrengine: MR_sleep_until outside a context"},
      {poll_fn_sleeps, "mrengine: MR_sleep_until outside a context"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[1024];
    int st = run_child(cases[i].body, out, sizeof out);
    ck_assert_msg(killed_by(st, SIGABRT), "case %zu: status %#x", i, st);
    ck_assert_msg(strstr(out, cases[i].says) != NULL, "case %zu: stderr '%s'", i, out);
  }
}
END_TEST

/* Misuse that has an error code returns it and changes nothing. */
START_TEST(test_misuse_with_codes) {
  mr_test_start(2, NULL);
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  ck_assert_int_eq(MR_init(&c), MR_EBUSY); /* MR_init twice */
  ck_assert_int_eq(MR_num_engines(), 2);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(MR_shutdown(), MR_ENOTINIT); /* use after shutdown */
  ck_assert_int_eq(MR_spawn(deep, NULL, NULL), MR_ENOTINIT);
  ck_assert_int_eq(MR_lc_create(2, NULL), MR_ENOTINIT);
}
END_TEST

/* ---- resource failure: address space (RLIMIT_AS applies to root as well) ---- */

static long vm_size_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmSize: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

static void set_as_limit(rlim_t bytes) {
  struct rlimit r;
  ck_assert_int_eq(getrlimit(RLIMIT_AS, &r), 0);
  r.rlim_cur = bytes;
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &r), 0);
}

/* MR_init cannot create its engine threads (no room for their stacks): an error code, and no
 * thread or mapping left behind; with the room back, it starts. */
static void init_without_room(void) {
  int threads = mr_test_count_threads(), maps = 0;
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET;
  c.engines = 4;
  set_as_limit((rlim_t)(vm_size_kib() + 2048) * 1024); /* 2 MiB more: no 8 MiB thread stack */
  /* Fail 20 times: the first may leave the allocator's own mappings (the heap may have had to
   * move); after that the count must not move. */
  for (int round = 0; round < 20; round++) {
    int rc = MR_init(&c);
    if (rc != MR_EAGAIN && rc != MR_ENOMEM) _exit(10);
    if (MR_num_engines() != 0) _exit(11);
    if (mr_test_count_threads() != threads) _exit(12);
    if (round == 1) maps = mr_test_count_mappings();
    if (round > 1 && mr_test_count_mappings() != maps) _exit(13);
  }
  if (strstr(MR_init_error_message(), "engine thread") == NULL &&
      strstr(MR_init_error_message(), "memory") == NULL)
    _exit(14);
  set_as_limit(RLIM_INFINITY);
  if (MR_init(&c) != 0 || MR_num_engines() != 4) _exit(15);
  if (MR_shutdown() != 0) _exit(16);
  _exit(0);
}

/* A stack that cannot be mapped: MR_spawn says MR_ENOMEM and the runtime goes on. */
static atomic_int small_ran;
static void small_body(void *arg) {
  (void)arg;
  atomic_fetch_add(&small_ran, 1);
}
static void spawn_without_room(void) {
  mr_test_start(2, "--stack-size 1048576"); /* 1 GiB stacks */
  set_as_limit((rlim_t)(vm_size_kib() + 64 * 1024) * 1024);
  if (MR_spawn(small_body, NULL, NULL) != MR_ENOMEM) _exit(20);
  set_as_limit(RLIM_INFINITY);
  if (MR_spawn(small_body, NULL, NULL) != 0) _exit(21);
  if (MR_shutdown() != 0 || atomic_load(&small_ran) != 1) _exit(22);
  _exit(0);
}

START_TEST(test_out_of_address_space) {
  if (!MR_TEST_EXACT_RESOURCES) return; /* sanitizers reserve terabytes of address space */
  char out[1024];
  int st = run_child(init_without_room, out, sizeof out);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "init: status %#x, stderr '%s'", st, out);
  st = run_child(spawn_without_room, out, sizeof out);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "spawn: status %#x, stderr '%s'", st, out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("faults");
  TCase *tc = mr_tcase("faults", 60);
  mr_tcase_add_native_test(tc, test_stack_overflow_names_the_option,
                           "qemu-user answers madvise(MADV_GUARD_INSTALL) with success and "
                           "installs no guard, so an overflow is never caught");
  tcase_add_test(tc, test_other_faults_keep_their_signal);
  tcase_add_test(tc, test_handler_removed_at_shutdown);
  tcase_add_test(tc, test_sent_fault_signals_kill);
  mr_tcase_add_native_test(tc, test_ignored_sent_fault_keeps_the_handler,
                           "qemu-user installs no guard page (above), so the overflow is never "
                           "caught");
  tcase_add_test(tc, test_misuse_is_named);
  tcase_add_test(tc, test_misuse_with_codes);
  mr_tcase_add_native_test(tc, test_out_of_address_space,
                           "qemu-user accepts setrlimit(RLIMIT_AS) and applies no limit");
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
