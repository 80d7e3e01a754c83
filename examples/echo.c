/* echo.c: a TCP echo server on 127.0.0.1 with a context per connection, waiting on its socket
 * with MR_wait_fd (no thread per connection, no callbacks: each connection is straight-line
 * code that suspends where it would block). Every wait ends at the server's deadline, so an idle
 * client cannot keep it alive, and an accept error that passes (out of descriptors, a connection
 * reset before it was taken) backs off and retries instead of ending the acceptor.
 *
 *   examples/echo              self-test: serve on a free port, run 20 client contexts that
 *                              each send 100 messages and check every echoed byte; then serve
 *                              for one second more with the process out of descriptors while a
 *                              client connects (accept fails with EMFILE until one is freed)
 *                              and an idle client that never sends, which the server must close
 *   examples/echo PORT [SECS]  serve on 127.0.0.1:PORT for SECS seconds (default 60); try
 *                              `nc 127.0.0.1 PORT` */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrengine.h"

#define SEC 1000000000ll

static int listener;
static uint64_t serve_until; /* MR_now() deadline of the server */
static int accept_limit;     /* connections to accept, 0 for no limit */
static atomic_int failures;

/* Nanoseconds to the server's deadline (0 once it has passed): the time-out of every wait. */
static int64_t time_left(void) {
  uint64_t now = MR_now();
  return now < serve_until ? (int64_t)(serve_until - now) : 0;
}

/* Write all of buf, suspending while the socket's buffer is full. */
static int send_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, buf, n);
    if (k > 0) {
      buf += k;
      n -= (size_t)k;
    } else if (k < 0 && errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_WRITE, time_left()) <= 0) return -1;
    } else {
      return -1;
    }
  }
  return 0;
}

/* One connection: read what comes, send it back, until the peer closes or the server's time is
 * up (MR_wait_fd returns 0 at the deadline). */
static void connection(void *arg) {
  int fd = (int)(intptr_t)arg;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (send_all(fd, buf, (size_t)n) != 0) break;
    } else if (n < 0 && errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_READ, time_left()) <= 0) break;
    } else {
      break; /* closed by the peer, or an error */
    }
  }
  close(fd);
}

/* Accept connections until serve_until (or accept_limit of them), each in a context of its own. */
static void acceptor(void *arg) {
  int accepted = 0;
  (void)arg;
  while (MR_now() < serve_until && (accept_limit == 0 || accepted < accept_limit)) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      accepted++;
      if (MR_spawn(connection, (void *)(intptr_t)fd, NULL) != 0) close(fd);
    } else if (errno == EAGAIN) {
      (void)MR_wait_fd(listener, MR_FD_READ, time_left());
    } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM ||
               errno == ECONNABORTED || errno == EPROTO || errno == EINTR) {
      /* Transient: out of descriptors or memory until a connection closes, or the peer gave up
       * before it was taken. Back off (the listener stays readable meanwhile) and retry. */
      MR_sleep_for(10 * 1000 * 1000);
    } else {
      perror("echo: accept");
      return;
    }
  }
}

/* Connect fd (a new non-blocking socket) to the server: fd, or -1 (the caller counts the
 * failure). */
static int connect_socket(int fd) {
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  getsockname(listener, (struct sockaddr *)&a, &al);
  if (fd < 0 || (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 &&
                 (errno != EINPROGRESS || MR_wait_fd(fd, MR_FD_WRITE, 10 * SEC) != MR_FD_WRITE))) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

static int connect_to_server(void) {
  return connect_socket(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

/* Send message m of client id on fd and check that it comes back whole: 0, or -1. */
static int round_trip(int fd, int id, int m) {
  char out[64], in[64];
  size_t got = 0;
  snprintf(out, sizeof out, "client %d message %d", id, m);
  if (send_all(fd, out, sizeof out) != 0) return -1;
  while (got < sizeof in) {
    ssize_t n = read(fd, in + got, sizeof in - got);
    if (n > 0)
      got += (size_t)n;
    else if (n < 0 && errno == EAGAIN && MR_wait_fd(fd, MR_FD_READ, 10 * SEC) > 0)
      continue;
    else
      break;
  }
  return got == sizeof in && memcmp(in, out, sizeof out) == 0 ? 0 : -1;
}

/* A client of the self-test: 100 messages, each checked when it comes back. */
static void client(void *arg) {
  int id = (int)(intptr_t)arg;
  int fd = connect_to_server();
  for (int m = 0; fd >= 0 && m < 100; m++) {
    if (round_trip(fd, id, m) != 0) {
      atomic_fetch_add(&failures, 1);
      break;
    }
  }
  if (fd < 0) atomic_fetch_add(&failures, 1);
  if (fd >= 0) close(fd);
}

/* A client that connects and never sends: the server must close it at its deadline (read gives
 * 0) well before this client's own 10 s. */
static void idle_client(void *arg) {
  int fd = (int)(intptr_t)arg;
  char c;
  ssize_t n;
  while ((n = read(fd, &c, 1)) < 0 && errno == EAGAIN && MR_wait_fd(fd, MR_FD_READ, 10 * SEC) > 0)
    continue;
  if (n != 0) {
    fprintf(stderr, "echo: the server did not close an idle connection at its deadline\n");
    atomic_fetch_add(&failures, 1);
  }
  close(fd);
}

/* A client that connects while the process has no descriptor left, so that the acceptor's
 * accept fails with EMFILE; after 100 ms it frees them, and its message must then be echoed. */
static void starved_client(void *arg) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), n = 0;
  static int spare[256];
  struct rlimit old, low;
  (void)arg;
  if (fd < 0 || getrlimit(RLIMIT_NOFILE, &old) != 0) {
    atomic_fetch_add(&failures, 1);
    return;
  }
  low = old;
  low.rlim_cur = (rlim_t)fd + 32 < old.rlim_cur ? (rlim_t)fd + 32 : old.rlim_cur;
  setrlimit(RLIMIT_NOFILE, &low);
  while (n < 256 && (spare[n] = dup(fd)) >= 0) n++;
  fd = connect_socket(fd); /* needs no descriptor: the acceptor's accept meets EMFILE */
  MR_sleep_for(100 * 1000 * 1000);
  while (n > 0) close(spare[--n]);
  setrlimit(RLIMIT_NOFILE, &old);
  if (fd < 0 || round_trip(fd, 99, 0) != 0) {
    fprintf(stderr, "echo: a connection made while out of descriptors was not served\n");
    atomic_fetch_add(&failures, 1);
  }
  if (fd >= 0) close(fd);
}

/* The self-test's second part: one second of serving, out of descriptors for a moment, with an
 * idle client. MR_shutdown returns only once the server has closed every connection, so a server
 * that waits past its deadline hangs here: the alarm fails the test instead. */
static int self_test_limits(void) {
  MR_Config c;
  int idle;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_FD_WAITS;
  if (MR_init(&c) != 0) return 1;
  alarm(30);
  serve_until = MR_now() + (uint64_t)SEC;
  accept_limit = 0;
  MR_spawn(acceptor, NULL, NULL);
  idle = connect_to_server();
  if (idle < 0) atomic_fetch_add(&failures, 1);
  if (idle >= 0) MR_spawn(idle_client, (void *)(intptr_t)idle, NULL);
  MR_spawn(starved_client, NULL, NULL);
  MR_shutdown();
  alarm(0);
  return 0;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  double secs = argc > 2 ? atof(argv[2]) : 60;
  struct sockaddr_in a;
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_FD_WAITS;
  if (MR_init(&c) != 0) return 1;
  listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons((uint16_t)port);
  if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(listener, 128) != 0) {
    perror("echo: listen on 127.0.0.1");
    return 1;
  }
  if (argc > 1) {
    serve_until = MR_now() + (uint64_t)(secs * 1e9);
    printf("echo: serving on 127.0.0.1:%d for %.0f s\n", port, secs);
    MR_spawn(acceptor, NULL, NULL);
  } else {
    serve_until = MR_now() + 10 * (uint64_t)SEC; /* the self-test's bound */
    accept_limit = 20;
    MR_spawn(acceptor, NULL, NULL);
    for (intptr_t i = 0; i < 20; i++) MR_spawn(client, (void *)i, NULL);
  }
  MR_shutdown(); /* waits for the acceptor, every connection and every client */
  if (argc == 1 && self_test_limits() != 0) return 1;
  close(listener);
  if (argc == 1) printf("echo: self-test %s\n", atomic_load(&failures) ? "FAILED" : "passed");
  return atomic_load(&failures) ? 1 : 0;
}
