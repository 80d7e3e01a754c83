/* echo.c: a TCP echo server on 127.0.0.1 with a context per connection, waiting on its socket
 * with MR_wait_fd (no thread per connection, no callbacks: each connection is straight-line
 * code that suspends where it would block).
 *
 *   examples/echo              self-test: serve on a free port, run 20 client contexts that
 *                              each send 100 messages and check every echoed byte, then stop
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
#include <sys/socket.h>
#include <unistd.h>

#include "mrengine.h"

#define SEC 1000000000ll

static int listener;
static uint64_t serve_until; /* MR_now() deadline of the server */
static int accept_limit;     /* connections to accept, 0 for no limit */
static atomic_int failures;

/* Write all of buf, suspending while the socket's buffer is full. */
static int send_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, buf, n);
    if (k > 0) {
      buf += k;
      n -= (size_t)k;
    } else if (k < 0 && errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_WRITE, 10 * SEC) <= 0) return -1;
    } else {
      return -1;
    }
  }
  return 0;
}

/* One connection: read what comes, send it back, until the peer closes. */
static void connection(void *arg) {
  int fd = (int)(intptr_t)arg;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (send_all(fd, buf, (size_t)n) != 0) break;
    } else if (n < 0 && errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_READ, -1) <= 0) break;
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
      int64_t left = (int64_t)(serve_until - MR_now());
      (void)MR_wait_fd(listener, MR_FD_READ, left > 0 ? left : 0);
    } else {
      perror("accept");
      return;
    }
  }
}

/* A client of the self-test: 100 messages, each checked when it comes back. */
static void client(void *arg) {
  int id = (int)(intptr_t)arg;
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  char out[64], in[64];
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  getsockname(listener, (struct sockaddr *)&a, &al);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 &&
      (errno != EINPROGRESS || MR_wait_fd(fd, MR_FD_WRITE, 10 * SEC) != MR_FD_WRITE)) {
    atomic_fetch_add(&failures, 1);
    close(fd);
    return;
  }
  for (int m = 0; m < 100; m++) {
    size_t got = 0;
    snprintf(out, sizeof out, "client %d message %d", id, m);
    if (send_all(fd, out, sizeof out) != 0) break;
    while (got < sizeof in) {
      ssize_t n = read(fd, in + got, sizeof in - got);
      if (n > 0)
        got += (size_t)n;
      else if (n < 0 && errno == EAGAIN && MR_wait_fd(fd, MR_FD_READ, 10 * SEC) > 0)
        continue;
      else
        break;
    }
    if (got != sizeof in || memcmp(in, out, sizeof out) != 0) {
      atomic_fetch_add(&failures, 1);
      break;
    }
  }
  close(fd);
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
  close(listener);
  if (argc == 1) printf("echo: self-test %s\n", atomic_load(&failures) ? "FAILED" : "passed");
  return atomic_load(&failures) ? 1 : 0;
}
