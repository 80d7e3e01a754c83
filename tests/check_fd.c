/* check_fd.c: MR_wait_fd. Pipes become readable while contexts wait (on every engine, from a
 * thread that is not an engine), time-outs, a read and a write waiter on one descriptor (one
 * engine or two) and a second reader refused, every error code,
 * MR_shutdown_now while contexts wait, polls (a time-out of 0) that report a ready descriptor
 * ready from two engines at once, and a loopback TCP echo (127.0.0.1 only) with 100
 * connections, a context per connection on both sides, every byte checked; a signal handed to a
 * context through a self-pipe (doc/api.md, "Signal handlers"); descriptors closed while
 * contexts wait on them, waiters dropped with their channel, and a thread's time-out under a
 * stream of signals; a wait on a descriptor of the runtime's own refused. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

#define MS 1000000ll

static void start_fd(int engines, unsigned extra_flags) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_FD_WAITS | extra_flags;
  c.engines = engines;
  ck_assert_int_eq(MR_init(&c), 0);
}

/* ---- a pipe becomes readable while a context waits; and a time-out ---- */
static int pipe_fds[2];
static void writer(void *arg) {
  (void)arg;
  ck_assert_int_eq(MR_sleep_for(10 * MS), 0);
  ck_assert_int_eq(write(pipe_fds[1], "x", 1), 1);
}

START_TEST(test_pipe_ready_and_timeout) {
  char c;
  start_fd(2, 0);
  ck_assert_int_eq(pipe2(pipe_fds, O_NONBLOCK), 0);
  for (int rep = 0; rep < 50; rep++) {
    ck_assert_int_eq(MR_spawn(writer, NULL, NULL), 0);
    int engine = MR_engine_id();
    ck_assert_int_eq(MR_wait_fd(pipe_fds[0], MR_FD_READ, 5000 * MS), MR_FD_READ);
    ck_assert_int_eq(MR_engine_id(), engine);
    ck_assert_int_eq(read(pipe_fds[0], &c, 1), 1);
  }
  uint64_t t0 = MR_now();
  ck_assert_int_eq(MR_wait_fd(pipe_fds[0], MR_FD_READ, 20 * MS), 0);
  ck_assert(MR_now() - t0 >= 20 * (uint64_t)MS);
  ck_assert_int_eq(MR_wait_fd(pipe_fds[1], MR_FD_WRITE, 0), MR_FD_WRITE);
  close(pipe_fds[0]);
  /* The reader closed: the writer's end reports an error. */
  ck_assert(MR_wait_fd(pipe_fds[1], MR_FD_WRITE, 1000 * MS) & MR_FD_ERROR);
  close(pipe_fds[1]);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a zero or tiny time-out: a ready descriptor is always reported ready ---- */
/* A time-out of 0 used to arm a timer due at once, and a tiny one still does; the other engine,
 * passing its idle loop, could fire it before the waiting engine read its epoll instance, and
 * report a ready descriptor as timed out. A poller on each engine, so that each passes its idle
 * loop often and may take the other's overdue timers. Loop index 0: time-out 0; 1: 1 ns. */
static int poll_ready[2][2], poll_empty[2][2]; /* a ready and an empty pipe per poller */
static int poll_rounds;
static int64_t poll_timeout;
static atomic_int poll_wrong, poll_slow;

static void poller(void *arg) {
  const int *ready = poll_ready[(intptr_t)arg], *empty = poll_empty[(intptr_t)arg];
  for (int i = 0; i < poll_rounds; i++) {
    if (MR_wait_fd(ready[0], MR_FD_READ, poll_timeout) != MR_FD_READ)
      atomic_fetch_add(&poll_wrong, 1);
    if (MR_wait_fd(ready[1], MR_FD_WRITE, poll_timeout) != MR_FD_WRITE)
      atomic_fetch_add(&poll_wrong, 1);
    uint64_t t0 = MR_now();
    if (MR_wait_fd(empty[0], MR_FD_READ, poll_timeout) != 0) atomic_fetch_add(&poll_wrong, 1);
    /* Promptly: nothing is waited for (a second is far beyond any scheduling delay). */
    if (MR_now() - t0 > 1000 * (uint64_t)MS) atomic_fetch_add(&poll_slow, 1);
  }
}

START_TEST(test_poll_ready) {
  poll_rounds = MR_TEST_SCALE(20000);
  poll_timeout = _i;
  start_fd(2, 0);
  for (int p = 0; p < 2; p++) {
    ck_assert_int_eq(pipe2(poll_ready[p], O_NONBLOCK), 0);
    ck_assert_int_eq(pipe2(poll_empty[p], O_NONBLOCK), 0);
    ck_assert_int_eq(write(poll_ready[p][1], "x", 1), 1);
  }
  atomic_store(&poll_wrong, 0);
  atomic_store(&poll_slow, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = 1;
  ck_assert_int_eq(MR_spawn(poller, (void *)(intptr_t)1, &o), 0);
  ck_assert_int_eq(MR_engine_id(), 0);
  poller((void *)(intptr_t)0); /* this context, on engine 0 */
  ck_assert_int_eq(MR_shutdown(), 0);
  const int wrong = atomic_load(&poll_wrong), slow = atomic_load(&poll_slow);
  ck_assert_int_eq(wrong, 0);
  ck_assert_int_eq(slow, 0);
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 2; i++) {
      close(poll_ready[p][i]);
      close(poll_empty[p][i]);
    }
}
END_TEST

/* ---- one read waiter and one write waiter per descriptor, from any engines ---- */
static int two_fds[2];
static atomic_int two_woken, two_inuse;
static void reader(void *arg) {
  int rc = MR_wait_fd(two_fds[0], MR_FD_READ, 5000 * MS);
  (void)arg;
  if (rc == MR_FD_READ) atomic_fetch_add(&two_woken, 1);
  if (rc == MR_EINUSE) atomic_fetch_add(&two_inuse, 1);
}
/* Waits for the socket's other direction: writable once the reader's side drained it. */
static void writer_waiter(void *arg) {
  int rc = MR_wait_fd(two_fds[0], MR_FD_WRITE, 5000 * MS);
  (void)arg;
  if (rc & MR_FD_WRITE) atomic_fetch_add(&two_woken, 1);
  if (rc == MR_EINUSE) atomic_fetch_add(&two_inuse, 1);
}

static void spawn_on(MR_TaskFn fn, int engine) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = engine;
  ck_assert_int_eq(MR_spawn(fn, NULL, &o), 0);
}

START_TEST(test_two_waiters) {
  char c, buf[4096];
  start_fd(2, 0);
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, two_fds), 0);
  for (int rep = 0; rep < 20; rep++) {
    int same = rep % 2; /* both on engine 1, or one on each */
    atomic_store(&two_woken, 0);
    atomic_store(&two_inuse, 0);
    /* Fill the socket so that its writer must wait. */
    while (write(two_fds[0], buf, sizeof buf) > 0) {}
    spawn_on(reader, 1);
    spawn_on(writer_waiter, same ? 1 : 0);
    MR_sleep_for(5 * MS);
    ck_assert_int_eq(atomic_load(&two_inuse), 0);
    ck_assert_int_eq(write(two_fds[1], "y", 1), 1); /* the reader's side is readable */
    while (read(two_fds[1], buf, sizeof buf) > 0) { /* and the writer's writable */
    }
    while (atomic_load(&two_woken) < 2) MR_sleep_for(MS);
    ck_assert_int_eq(read(two_fds[0], &c, 1), 1);
  }
  /* Two readers: the second is refused, on another engine as on the same. */
  for (int rep = 0; rep < 2; rep++) {
    atomic_store(&two_woken, 0);
    atomic_store(&two_inuse, 0);
    spawn_on(reader, 1);
    spawn_on(reader, rep);
    while (atomic_load(&two_inuse) < 1) MR_sleep_for(MS);
    ck_assert_int_eq(write(two_fds[1], "z", 1), 1);
    while (atomic_load(&two_woken) < 1) MR_sleep_for(MS);
    ck_assert_int_eq(atomic_load(&two_inuse), 1);
    ck_assert_int_eq(read(two_fds[0], &c, 1), 1);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  close(two_fds[0]);
  close(two_fds[1]);
}
END_TEST

/* ---- a wait on a descriptor of the runtime's own (an engine's epoll instance or eventfd) ----
 * is refused, and leaves every engine able to be woken: bound work starts promptly after. */
static int own_fds[16], own_n, own_rc[16];
static atomic_int own_done, own_started;
static void own_waiter(void *arg) {
  (void)arg;
  for (int k = 0; k < own_n; k++) own_rc[k] = MR_wait_fd(own_fds[k], MR_FD_READ, MS);
  atomic_store(&own_done, 1);
}
static void own_mark(void *arg) {
  (void)arg;
  atomic_store(&own_started, 1);
}
static void own_list(void) {
  own_n = 0;
  for (int fd = 0; fd < 1024 && own_n < 16; fd++) {
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(path, buf, sizeof buf - 1);
    if (k < 0) continue;
    buf[k] = 0;
    if (strstr(buf, "[eventfd]") || strstr(buf, "[eventpoll]")) own_fds[own_n++] = fd;
  }
}
START_TEST(test_own_descriptors_refused) {
  start_fd(2, 0);
  own_list();
  ck_assert_int_ge(own_n, 4); /* an epoll instance and an eventfd per engine */
  for (int eng = 0; eng < 2; eng++) {
    atomic_store(&own_done, 0);
    spawn_on(own_waiter, eng);
    while (!atomic_load(&own_done)) MR_sleep_for(MS);
    for (int k = 0; k < own_n; k++) ck_assert_int_eq(own_rc[k], MR_EINUSE);
  }
  for (int round = 0; round < 20; round++)
    for (int eng = 0; eng < 2; eng++) {
      MR_sleep_for(5 * MS); /* let the engines sleep */
      atomic_store(&own_started, 0);
      uint64_t t0 = MR_now();
      spawn_on(own_mark, eng);
      while (!atomic_load(&own_started)) {
        ck_assert_msg(MR_now() - t0 < 2000 * MS, "engine %d was not woken", eng);
        MR_sleep_for(MS / 10);
      }
    }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a thread that is not an engine polls ---- */
static int th_fds[2];
static void *thread_waiter(void *arg) {
  (void)arg;
  ck_assert_int_eq(MR_wait_fd(th_fds[0], MR_FD_READ, 5000 * MS), MR_FD_READ);
  ck_assert_int_eq(MR_wait_fd(th_fds[1], MR_FD_WRITE, -1), MR_FD_WRITE);
  return NULL;
}

START_TEST(test_foreign_thread) {
  pthread_t th;
  start_fd(2, 0);
  ck_assert_int_eq(pipe2(th_fds, O_NONBLOCK), 0);
  ck_assert_int_eq(pthread_create(&th, NULL, thread_waiter, NULL), 0);
  MR_sleep_for(10 * MS);
  ck_assert_int_eq(write(th_fds[1], "t", 1), 1);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  /* Not running: the thread polls too. */
  ck_assert_int_eq(MR_wait_fd(th_fds[0], MR_FD_READ, 0), MR_FD_READ);
  close(th_fds[0]);
  close(th_fds[1]);
}
END_TEST

/* A regular file (unlinked: it goes when closed) and a pipe, for the error codes. */
static int file_and_pipe(int fds[2]) {
  char path[] = "/tmp/mrengine-check-fd-XXXXXX";
  int file = mkstemp(path);
  ck_assert_int_ge(file, 0);
  unlink(path);
  ck_assert_int_eq(pipe(fds), 0);
  return file;
}

/* A thread that is not an engine gets the codes a context gets (mrengine.h, MR_wait_fd). */
static void check_thread_codes(void) {
  int fds[2];
  int file = file_and_pipe(fds);
  uint64_t t0;
  ck_assert_int_eq(MR_wait_fd(-1, MR_FD_READ, 0), MR_EBADF);
  ck_assert_int_eq(MR_wait_fd(file, MR_FD_READ, 0), MR_ENOTPOLL);
  ck_assert_int_eq(MR_wait_fd(fds[0], 0, 0), MR_EINVAL);
  t0 = MR_now();
  ck_assert_int_eq(MR_wait_fd(fds[0], MR_FD_READ, 20 * MS), 0); /* timed out */
  ck_assert_uint_ge(MR_now() - t0, 20 * MS);
  ck_assert_int_eq(MR_wait_fd(fds[1], MR_FD_WRITE, -1), MR_FD_WRITE);
  close(fds[1]);
  ck_assert(MR_wait_fd(fds[0], MR_FD_READ, 0) & MR_FD_READ);      /* end of file */
  ck_assert_int_eq(MR_wait_fd(fds[1], MR_FD_WRITE, 0), MR_EBADF); /* closed */
  close(fds[0]);
  close(file);
}
static void *thread_codes(void *arg) {
  (void)arg;
  check_thread_codes();
  return NULL;
}

START_TEST(test_thread_codes) {
  pthread_t th;
  check_thread_codes(); /* not running */
  start_fd(2, 0);
  ck_assert_int_eq(pthread_create(&th, NULL, thread_codes, NULL), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a signal handed to a context: the handler writes a pipe (doc/api.md, "Signal handlers")
 * and makes only async-signal-safe calls ---- */
static int sig_fds[2];
static MR_Future sig_future = MR_FUTURE_INIT;
static volatile sig_atomic_t sig_seen_now;
static void on_usr1(int sig) {
  int saved = errno;
  (void)sig;
  sig_seen_now = MR_now() > 0 && !MR_future_is_signalled(&sig_future) && MR_num_engines() == 2;
  (void)!write(sig_fds[1], "s", 1);
  errno = saved;
}
static void *signaller(void *arg) {
  (void)arg;
  struct timespec t = {0, 10 * 1000 * 1000};
  nanosleep(&t, NULL);
  kill(getpid(), SIGUSR1);
  return NULL;
}
static void signal_waiter(void *arg) {
  char c;
  (void)arg;
  ck_assert_int_eq(MR_wait_fd(sig_fds[0], MR_FD_READ, 5000 * MS), MR_FD_READ);
  ck_assert_int_eq(read(sig_fds[0], &c, 1), 1);
  ck_assert_int_eq(c, 's');
  MR_future_signal(&sig_future, 1);
}

START_TEST(test_signal_self_pipe) {
  pthread_t th;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
  ck_assert_int_eq(pipe2(sig_fds, O_NONBLOCK | O_CLOEXEC), 0);
  start_fd(2, 0);
  ck_assert_int_eq(MR_spawn(signal_waiter, NULL, NULL), 0);
  ck_assert_int_eq(pthread_create(&th, NULL, signaller, NULL), 0);
  ck_assert_uint_eq(MR_future_wait(&sig_future), 1);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(sig_seen_now, 1);
  close(sig_fds[0]);
  close(sig_fds[1]);
}
END_TEST

/* ---- bad input ---- */
static int noop_park(void *ctx, int engine, uint64_t deadline) {
  (void)ctx;
  (void)engine;
  (void)deadline;
  return 0;
}
static void noop_unpark(void *ctx, int engine) {
  (void)ctx;
  (void)engine;
}

START_TEST(test_errors) {
  int fds[2];
  int file = file_and_pipe(fds);
  MR_Config c;
  /* The flag with a park hook. */
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV | MR_CONFIG_QUIET | MR_CONFIG_FD_WAITS;
  c.park = noop_park;
  c.unpark = noop_unpark;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  /* No flag. */
  mr_test_start(2, NULL);
  ck_assert_int_eq(MR_wait_fd(fds[0], MR_FD_READ, 0), MR_ENOFDWAIT);
  ck_assert_int_eq(MR_shutdown(), 0);
  start_fd(2, 0);
  ck_assert_int_eq(MR_wait_fd(fds[0], 0, 0), MR_EINVAL);
  ck_assert_int_eq(MR_wait_fd(fds[0], 8, 0), MR_EINVAL);
  ck_assert_int_eq(MR_wait_fd(file, MR_FD_READ, 0), MR_ENOTPOLL);
  ck_assert_int_eq(MR_wait_fd(-1, MR_FD_READ, 0), MR_EBADF);
  close(fds[1]);
  int closed = fds[1];
  ck_assert_int_eq(MR_wait_fd(closed, MR_FD_WRITE, 0), MR_EBADF);
  /* The writer closed: the reader's end is readable (end of file). */
  ck_assert(MR_wait_fd(fds[0], MR_FD_READ, 1000 * MS) & MR_FD_READ);
  ck_assert_int_eq(MR_shutdown(), 0);
  close(fds[0]);
  close(file);
  ck_assert_str_eq(MR_err_name(MR_ENOTPOLL), "MR_ENOTPOLL");
}
END_TEST

/* ---- MR_shutdown_now while contexts wait with no time-out ---- */
static int sd_fds[2][2];
static atomic_int sd_waiting;
static void sd_waiter(void *arg) {
  atomic_fetch_add(&sd_waiting, 1);
  (void)MR_wait_fd(sd_fds[(intptr_t)arg][0], MR_FD_READ, -1);
  ck_abort_msg("a dropped fd waiter resumed");
}

START_TEST(test_shutdown_now_while_waiting) {
  MR_ShutdownReport r;
  MR_SpawnOptions o;
  start_fd(2, 0);
  atomic_store(&sd_waiting, 0);
  for (intptr_t k = 0; k < 2; k++) {
    ck_assert_int_eq(pipe2(sd_fds[k], O_NONBLOCK), 0);
    MR_spawn_options_default(&o);
    o.engine = (int)k;
    ck_assert_int_eq(MR_spawn(sd_waiter, (void *)k, &o), 0);
  }
  while (atomic_load(&sd_waiting) < 2) MR_sleep_for(MS);
  MR_sleep_for(10 * MS);
  MR_shutdown_report_init(&r);
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 2);
  /* The dropped waiters' claims went with the runtime: the descriptors can be waited on. */
  ck_assert_int_eq(MR_wait_fd(sd_fds[0][0], MR_FD_READ, 0), 0);
  start_fd(1, 0);
  ck_assert_int_eq(MR_wait_fd(sd_fds[1][0], MR_FD_READ, 0), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  for (int k = 0; k < 2; k++) {
    close(sd_fds[k][0]);
    close(sd_fds[k][1]);
  }
}
END_TEST

/* ---- a descriptor closed while a context waits on it, its file kept open by a dup ---- */
/* The wait times out; its registration must not outlive it. Before the fix it stayed in the
 * engine's epoll instance (the delete failed: the number was closed) with a pointer to the wait's
 * record on the stack, so that the old file's readiness wrote into whatever wait lay at that
 * address next: here a wait on an empty pipe, from the same frame, which then returned
 * MR_FD_READ. */
struct delayed_op {
  int fd;
  int do_close; /* close(fd) after the delay, else write a byte into it */
};
static void *delayed(void *arg) {
  const struct delayed_op *op = arg;
  mr_test_sleep_ms(5);
  if (op->do_close)
    ck_assert_int_eq(close(op->fd), 0);
  else
    ck_assert_int_eq(write(op->fd, "x", 1), 1);
  return NULL;
}

/* One frame for both waits, so that their records share a stack address. */
static __attribute__((noinline)) int wait_read_30ms(int fd) {
  return MR_wait_fd(fd, MR_FD_READ, 30 * MS);
}

START_TEST(test_closed_while_waiting) {
  start_fd(2, 0);
  for (int rep = 0; rep < 20; rep++) {
    int p[2], q[2];
    char c;
    pthread_t th;
    ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
    const int keep = dup(p[0]); /* the file outlives the number waited on */
    ck_assert_int_ge(keep, 0);
    struct delayed_op closing = {p[0], 1};
    ck_assert_int_eq(pthread_create(&th, NULL, delayed, &closing), 0);
    /* Closed meanwhile: never ready. Or closed before the wait began (MR_EBADF), where the
     * delay ran out first (qemu-user is that slow): the rest still holds. */
    const int rc = wait_read_30ms(p[0]);
    ck_assert_msg(rc == 0 || rc == MR_EBADF, "the wait on a closed descriptor returned %d", rc);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    /* A later wait on an empty pipe while the old file becomes readable. */
    ck_assert_int_eq(pipe2(q, O_NONBLOCK), 0);
    struct delayed_op writing = {p[1], 0};
    ck_assert_int_eq(pthread_create(&th, NULL, delayed, &writing), 0);
    ck_assert_int_eq(wait_read_30ms(q[0]), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(read(keep, &c, 1), 1);
    /* The closed number is free for another wait of the same engine. */
    ck_assert_int_eq(write(q[1], "y", 1), 1);
    ck_assert_int_eq(wait_read_30ms(q[0]), MR_FD_READ);
    close(keep);
    close(p[1]);
    close(q[0]);
    close(q[1]);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a reader and a writer on one engine, and their descriptor closed ---- */
/* The close must close the socket (the peer sees EPIPE at once) and neither waiter may report
 * the closed descriptor ready. Before the fix the second waiter waited on a duplicate of the
 * descriptor, which kept the socket open: the peer's send succeeded, and the reader returned
 * MR_FD_READ. */
static int cw_fds[2];
static atomic_int cw_rc[2], cw_done;
static void cw_wait(void *arg) {
  const int events = (int)(intptr_t)arg; /* MR_FD_READ or MR_FD_WRITE */
  atomic_store(&cw_rc[events - 1], MR_wait_fd(cw_fds[0], events, 1000 * MS));
  atomic_fetch_add(&cw_done, 1);
}

START_TEST(test_close_with_two_waiters) {
  char buf[4096];
  MR_SpawnOptions o;
  start_fd(2, 0);
  for (int rep = 0; rep < 3; rep++) {
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, cw_fds), 0);
    while (write(cw_fds[0], buf, sizeof buf) > 0) { /* full: its writer must wait */
    }
    atomic_store(&cw_done, 0);
    MR_spawn_options_default(&o);
    o.engine = 1;
    ck_assert_int_eq(MR_spawn(cw_wait, (void *)(intptr_t)MR_FD_READ, &o), 0);
    MR_sleep_for(5 * MS);
    ck_assert_int_eq(MR_spawn(cw_wait, (void *)(intptr_t)MR_FD_WRITE, &o), 0);
    MR_sleep_for(20 * MS);
    ck_assert_int_eq(atomic_load(&cw_done), 0);
    ck_assert_int_eq(close(cw_fds[0]), 0);
    errno = 0;
    ck_assert_int_eq(send(cw_fds[1], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT), -1);
    ck_assert_int_eq(errno, EPIPE);
    while (atomic_load(&cw_done) < 2) MR_sleep_for(MS);
    ck_assert_int_eq(atomic_load(&cw_rc[0]), 0); /* the reader timed out */
    ck_assert_int_eq(atomic_load(&cw_rc[1]), 0); /* and so did the writer */
    close(cw_fds[1]);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- a waiter of a drop channel dropped when its wait ends ---- */
/* MR_channel_close drops the waiter when its wait ends (loop index 0: at its time-out; 1: the
 * descriptor became ready); the code after its suspension never runs. Its claim must go with it:
 * before the fix every later wait on the descriptor got MR_EINUSE. */
static int dw_fds[2];
static int64_t dw_timeout;
static atomic_int dw_waiting, dw_resumed, dw_dropped;
static void dw_wait(void *arg) {
  (void)arg;
  atomic_fetch_add(&dw_waiting, 1);
  (void)MR_wait_fd(dw_fds[0], MR_FD_READ, dw_timeout);
  atomic_fetch_add(&dw_resumed, 1);
}
static void dw_on_drop(void *arg) {
  (void)arg;
  atomic_fetch_add(&dw_dropped, 1);
}
static void *dw_thread_poll(void *arg) {
  return (void *)(intptr_t)MR_wait_fd(*(int *)arg, MR_FD_READ, 0);
}

START_TEST(test_dropped_waiter_releases_claim) {
  MR_ChannelOptions co;
  MR_SpawnOptions o;
  pthread_t th;
  void *thread_rc;
  const int ready = _i; /* the state of the pipe after the drop */
  int drops = 0;
  /* A time-out long enough to close the channel first, but for a heavily loaded machine; the
   * readiness variant's never comes. */
  dw_timeout = ready ? 10000 * MS : 100 * MS;
  start_fd(2, 0);
  ck_assert_int_eq(pipe2(dw_fds, O_NONBLOCK), 0);
  for (int rep = 0; rep < 10; rep++) {
    MR_channel_options_default(&co);
    co.close = MR_CLOSE_DROP;
    const int ch = MR_channel_create(&co);
    ck_assert_int_gt(ch, 0);
    atomic_store(&dw_waiting, 0);
    atomic_store(&dw_resumed, 0);
    atomic_store(&dw_dropped, 0);
    MR_spawn_options_default(&o);
    o.channel = ch;
    o.engine = rep % 2;
    o.on_drop = dw_on_drop;
    ck_assert_int_eq(MR_spawn(dw_wait, NULL, &o), 0);
    while (atomic_load(&dw_waiting) == 0) MR_sleep_for(MS);
    MR_sleep_for(5 * MS); /* it waits */
    ck_assert_int_eq(MR_channel_close(ch), 0);
    if (ready) ck_assert_int_eq(write(dw_fds[1], "x", 1), 1);
    ck_assert_int_eq(MR_channel_wait(ch), 0);
    /* Dropped; or, if its time-out came before the close, it ran to its end. */
    drops += atomic_load(&dw_dropped);
    ck_assert_int_eq(atomic_load(&dw_dropped) + atomic_load(&dw_resumed), 1);
    if (ready) ck_assert_int_eq(atomic_load(&dw_dropped), 1);
    const int want = ready ? MR_FD_READ : 0;
    /* Nobody waits on the descriptor now: a poll and a timed wait from a context, and a poll
     * from a thread that is not an engine. */
    ck_assert_int_eq(MR_wait_fd(dw_fds[0], MR_FD_READ, 0), want);
    ck_assert_int_eq(MR_wait_fd(dw_fds[0], MR_FD_READ, 10 * MS), want);
    ck_assert_int_eq(pthread_create(&th, NULL, dw_thread_poll, &dw_fds[0]), 0);
    ck_assert_int_eq(pthread_join(th, &thread_rc), 0);
    ck_assert_int_eq((int)(intptr_t)thread_rc, want);
    if (ready) {
      char c;
      ck_assert_int_eq(read(dw_fds[0], &c, 1), 1);
    }
  }
  ck_assert_int_gt(drops, 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  close(dw_fds[0]);
  close(dw_fds[1]);
}
END_TEST

/* ---- a descriptor number near the process's limit ---- */
/* An engine's records are found by descriptor number: a large one costs a block of the table,
 * not a table up to it, and waits on it as on any other. */
START_TEST(test_large_descriptor) {
  int p[2];
  struct rlimit rl;
  char c;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  /* As high as this process may go, up to 2^20 (this test's child only). */
  rl.rlim_cur = rl.rlim_max < (1u << 20) + 1 ? rl.rlim_max : (1u << 20) + 1;
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  const int big = (int)rl.rlim_cur - 1;
  ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
  ck_assert_int_eq(dup2(p[0], big), big);
  start_fd(2, 0);
  ck_assert_int_eq(MR_wait_fd(big, MR_FD_READ, 20 * MS), 0);
  ck_assert_int_eq(write(p[1], "x", 1), 1);
  ck_assert_int_eq(MR_wait_fd(big, MR_FD_READ, 5000 * MS), MR_FD_READ);
  ck_assert_int_eq(read(big, &c, 1), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  close(big);
  close(p[0]);
  close(p[1]);
}
END_TEST

/* ---- a thread's timed wait interrupted by signals ---- */
/* A signal every 5 ms at a thread in a 30 ms wait: the wait must still end at its time-out.
 * Before the fix each interruption restarted the whole time-out, and the wait lasted as long as
 * the signals did (here 2 s or more). */
static void on_usr2(int sig) { (void)sig; }
struct pester {
  pthread_t target;
  atomic_int stop;
};
static void *pester_thread(void *arg) {
  struct pester *p = arg;
  for (int i = 0; i < 400 && !atomic_load(&p->stop); i++) {
    pthread_kill(p->target, SIGUSR2);
    mr_test_sleep_ms(5);
  }
  return NULL;
}
static void *timed_wait_under_signals(void *arg) {
  int fds[2];
  struct pester p;
  pthread_t th;
  (void)arg;
  ck_assert_int_eq(pipe2(fds, O_NONBLOCK), 0);
  p.target = pthread_self();
  atomic_store(&p.stop, 0);
  ck_assert_int_eq(pthread_create(&th, NULL, pester_thread, &p), 0);
  const uint64_t t0 = MR_now();
  const int rc = MR_wait_fd(fds[0], MR_FD_READ, 30 * MS);
  const uint64_t took = MR_now() - t0;
  atomic_store(&p.stop, 1);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(rc, 0);
  ck_assert_uint_ge(took, 30 * MS);
  ck_assert_msg(took < 1000 * MS, "a 30 ms wait took %llu ms", (unsigned long long)(took / MS));
  close(fds[0]);
  close(fds[1]);
  return NULL;
}

START_TEST(test_thread_timeout_under_signals) {
  pthread_t th;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr2;
  sigemptyset(&sa.sa_mask); /* no SA_RESTART; epoll_wait is never restarted anyway */
  ck_assert_int_eq(sigaction(SIGUSR2, &sa, NULL), 0);
  timed_wait_under_signals(NULL); /* no runtime */
  start_fd(2, 0);
  ck_assert_int_eq(pthread_create(&th, NULL, timed_wait_under_signals, NULL), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- loopback echo: 100 connections, a context per connection on each side ---- */
enum { CONNS = 100, MSGS = MR_TEST_SCALE(50), LEN = 64 };
static int listener;
static atomic_int echo_bad, clients_done;

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
    } else if (k < 0 && errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_WRITE, 10000 * MS) <= 0) return -1;
    } else {
      return -1;
    }
  }
  return 0;
}

static void serve(void *arg) {
  int fd = (int)(intptr_t)arg;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (write_all(fd, buf, (size_t)n) != 0) break;
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_READ, 10000 * MS) <= 0) {
        atomic_fetch_add(&echo_bad, 1);
        break;
      }
    } else {
      break;
    }
  }
  close(fd);
}

static void acceptor(void *arg) {
  (void)arg;
  for (int accepted = 0; accepted < CONNS;) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      ck_assert_int_eq(MR_spawn(serve, (void *)(intptr_t)fd, NULL), 0);
      accepted++;
    } else {
      ck_assert_int_eq(errno, EAGAIN);
      ck_assert_int_eq(MR_wait_fd(listener, MR_FD_READ, 10000 * MS), MR_FD_READ);
    }
  }
}

static void client(void *arg) {
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  int id = (int)(intptr_t)arg, one = 1;
  char out[LEN], in[LEN];
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ck_assert_int_eq(getsockname(listener, (struct sockaddr *)&a, &al), 0);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    ck_assert_int_eq(errno, EINPROGRESS);
    ck_assert_int_eq(MR_wait_fd(fd, MR_FD_WRITE, 10000 * MS), MR_FD_WRITE);
  }
  for (int m = 0; m < MSGS; m++) {
    for (int i = 0; i < LEN; i++) out[i] = (char)(id * 31 + m * 7 + i);
    if (write_all(fd, out, LEN) != 0) {
      atomic_fetch_add(&echo_bad, 1);
      break;
    }
    size_t got = 0;
    while (got < LEN) {
      ssize_t n = read(fd, in + got, LEN - got);
      if (n > 0) {
        got += (size_t)n;
      } else if (n < 0 && errno == EAGAIN) {
        if (MR_wait_fd(fd, MR_FD_READ, 10000 * MS) <= 0) break;
      } else {
        break;
      }
    }
    if (got != LEN || memcmp(in, out, LEN) != 0) {
      atomic_fetch_add(&echo_bad, 1);
      break;
    }
  }
  close(fd);
  atomic_fetch_add(&clients_done, 1);
}

START_TEST(test_loopback_echo) {
  struct sockaddr_in a;
  start_fd(2, 0);
  atomic_store(&echo_bad, 0);
  atomic_store(&clients_done, 0);
  listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(listener, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ck_assert_int_eq(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(listener, CONNS), 0);
  ck_assert_int_eq(MR_spawn(acceptor, NULL, NULL), 0);
  for (int i = 0; i < CONNS; i++) ck_assert_int_eq(MR_spawn(client, (void *)(intptr_t)i, NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0); /* every client, server and the acceptor finished */
  close(listener);
  ck_assert_int_eq(atomic_load(&clients_done), CONNS);
  ck_assert_int_eq(atomic_load(&echo_bad), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fd");
  TCase *tc = mr_tcase("fd", 120);
  tcase_add_test(tc, test_pipe_ready_and_timeout);
  tcase_add_loop_test(tc, test_poll_ready, 0, 2);
  tcase_add_test(tc, test_two_waiters);
  tcase_add_test(tc, test_own_descriptors_refused);
  tcase_add_test(tc, test_foreign_thread);
  tcase_add_test(tc, test_thread_codes);
  tcase_add_test(tc, test_signal_self_pipe);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_shutdown_now_while_waiting);
#if !(defined(MR_TEST_SANITIZER) && defined(__SANITIZE_THREAD__))
  /* ThreadSanitizer reports the close(2) of a descriptor another thread waits on as a race,
   * which is this test's point: run in the other builds. */
  tcase_add_test(tc, test_closed_while_waiting);
#endif
  tcase_add_test(tc, test_close_with_two_waiters);
  tcase_add_loop_test(tc, test_dropped_waiter_releases_claim, 0, 2);
  tcase_add_test(tc, test_thread_timeout_under_signals);
  tcase_add_test(tc, test_large_descriptor);
  tcase_add_test(tc, test_loopback_echo);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
