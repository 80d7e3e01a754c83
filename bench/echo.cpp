// echo.cpp: a loopback TCP echo server (127.0.0.1 only) in four ways, against one load
// generator (doc/performance.md, "Echo server").
//
//   bench/echo [--seconds S] [--conns C] [--reps R] [--impls LIST]
//
// The load generator is a child process: C connections, one 64-byte message outstanding on
// each, sent again as soon as its echo is back (a closed loop), for S seconds (default 10), driven
// by one epoll loop. The server runs in this process, which measures its own CPU time; figures
// are requests (round trips) per second and server CPU microseconds per request, the median of R
// runs (default 3) with min..max. The servers (LIST, comma-separated; default all):
//   waitfd    mrengine: a context per connection, MR_wait_fd on non-blocking sockets
//   blocking  mrengine: a context per connection, blocking reads in MR_blocking_begin/end
//   threads   a thread per connection, blocking reads and writes
//   libuv     one libuv loop (single-threaded), when built with libuv
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef MR_BENCH_LIBUV
#include <uv.h>
#endif

#include "mrengine.h"

namespace {

constexpr int kLen = 64;
int g_conns = 100;
double g_seconds = 10;

double cpu_s() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void die(const char *what) {
  std::perror(what);
  std::exit(1);
}

int listen_loopback(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  if (fd < 0) die("socket");
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) die("bind");
  if (listen(fd, 1024) != 0) die("listen");
  socklen_t al = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &al);
  *port = ntohs(a.sin_port);
  return fd;
}

// ---- the load generator (child process): returns round trips in g_seconds ----
long run_client(int port) {
  int ep = epoll_create1(0);
  std::vector<int> fds;
  std::vector<int> got(static_cast<std::size_t>(g_conns), 0);
  char msg[kLen], buf[kLen * 4];
  std::memset(msg, 'm', sizeof msg);
  for (int i = 0; i < g_conns; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) die("connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    fds.push_back(fd);
  }
  for (int fd : fds)
    if (write(fd, msg, kLen) != kLen) die("write");
  long trips = 0;
  auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(g_seconds);
  epoll_event evs[256];
  while (std::chrono::steady_clock::now() < stop) {
    int n = epoll_wait(ep, evs, 256, 100);
    for (int k = 0; k < n; k++) {
      int i = static_cast<int>(evs[k].data.u32);
      ssize_t r = read(fds[static_cast<std::size_t>(i)], buf, sizeof buf);
      if (r <= 0) continue;
      got[static_cast<std::size_t>(i)] += static_cast<int>(r);
      while (got[static_cast<std::size_t>(i)] >= kLen) {
        got[static_cast<std::size_t>(i)] -= kLen;
        trips++;
        if (write(fds[static_cast<std::size_t>(i)], msg, kLen) != kLen) die("write");
      }
    }
  }
  for (int fd : fds) close(fd);
  return trips;
}

// ---- servers: each accepts g_conns connections on `lfd` and echoes until every one closes ----
int write_all_blocking(int fd, const char *p, ssize_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, static_cast<size_t>(n));
    if (k <= 0) return -1;
    p += k;
    n -= k;
  }
  return 0;
}

// mrengine, MR_wait_fd
int g_lfd;
void waitfd_conn(void *arg) {
  int fd = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      const char *p = buf;
      while (n > 0) {
        ssize_t k = write(fd, p, static_cast<size_t>(n));
        if (k > 0) {
          p += k;
          n -= k;
        } else if (k < 0 && errno == EAGAIN) {
          (void)MR_wait_fd(fd, MR_FD_WRITE, -1);
        } else {
          n = -1;
        }
      }
      if (n < 0) break;
      // The reply is out; the client sends its next message only once it has it, so a read
      // now would find nothing: wait first (as libuv's loop does), then read.
      if (MR_wait_fd(fd, MR_FD_READ, -1) <= 0) break;
    } else if (n < 0 && errno == EAGAIN) {
      if (MR_wait_fd(fd, MR_FD_READ, -1) <= 0) break;
    } else {
      break;
    }
  }
  close(fd);
}
void waitfd_acceptor(void *) {
  for (int accepted = 0; accepted < g_conns;) {
    int fd = accept4(g_lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      MR_spawn(waitfd_conn, reinterpret_cast<void *>(static_cast<intptr_t>(fd)), nullptr);
      accepted++;
    } else {
      (void)MR_wait_fd(g_lfd, MR_FD_READ, -1);
    }
  }
}
void serve_waitfd(int lfd) {
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_FD_WAITS;
  if (MR_init(&c) != 0) die("MR_init");
  g_lfd = lfd;
  fcntl(lfd, F_SETFL, O_NONBLOCK);
  MR_spawn(waitfd_acceptor, nullptr, nullptr);
  (void)MR_shutdown();
  fcntl(lfd, F_SETFL, 0);
}

// mrengine, blocking regions
void blocking_conn(void *arg) {
  int fd = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  char buf[4096];
  for (;;) {
    MR_blocking_begin();
    ssize_t n = read(fd, buf, sizeof buf);
    MR_blocking_end();
    if (n <= 0 || write_all_blocking(fd, buf, n) != 0) break;
  }
  close(fd);
}
void serve_blocking(int lfd) {
  MR_Config c;
  MR_config_default(&c);
  c.options = "--max-backup-threads 256";
  if (MR_init(&c) != 0) die("MR_init");
  for (int i = 0; i < g_conns; i++) {
    MR_blocking_begin();
    int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    MR_blocking_end();
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    MR_spawn(blocking_conn, reinterpret_cast<void *>(static_cast<intptr_t>(fd)), nullptr);
  }
  (void)MR_shutdown();
}

// a thread per connection
void serve_threads(int lfd) {
  std::vector<std::thread> th;
  for (int i = 0; i < g_conns; i++) {
    int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC), one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    th.emplace_back([fd] {
      char buf[4096];
      for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0 || write_all_blocking(fd, buf, n) != 0) break;
      }
      close(fd);
    });
  }
  for (auto &t : th) t.join();
}

#ifdef MR_BENCH_LIBUV
// libuv: one loop
uv_loop_t *g_loop;
int g_closed;
struct UvConn {
  uv_tcp_t tcp;
  char buf[4096];
};
struct UvWrite {
  uv_write_t req;
  char data[4096];
};
void uv_alloc(uv_handle_t *h, size_t, uv_buf_t *b) {
  auto *c = static_cast<UvConn *>(h->data);
  *b = uv_buf_init(c->buf, sizeof c->buf);
}
void uv_closed(uv_handle_t *h) {
  delete static_cast<UvConn *>(h->data);
  if (++g_closed == g_conns) uv_stop(g_loop);
}
void uv_written(uv_write_t *w, int) { delete reinterpret_cast<UvWrite *>(w); }
void uv_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  if (n < 0) {
    uv_close(reinterpret_cast<uv_handle_t *>(s), uv_closed);
    return;
  }
  if (n == 0) return;
  auto *w = new UvWrite;
  std::memcpy(w->data, b->base, static_cast<size_t>(n));
  uv_buf_t out = uv_buf_init(w->data, static_cast<unsigned>(n));
  uv_write(&w->req, s, &out, 1, uv_written);
}
void uv_on_conn(uv_stream_t *server, int) {
  auto *c = new UvConn;
  uv_tcp_init(g_loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(server, reinterpret_cast<uv_stream_t *>(&c->tcp)) == 0) {
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start(reinterpret_cast<uv_stream_t *>(&c->tcp), uv_alloc, uv_on_read);
  }
}
void serve_libuv(int lfd) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  g_loop = &loop;
  g_closed = 0;
  uv_tcp_t server;
  uv_tcp_init(&loop, &server);
  uv_tcp_open(&server, dup(lfd));
  uv_listen(reinterpret_cast<uv_stream_t *>(&server), 1024, uv_on_conn);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t *>(&server), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
}
#endif

struct Impl {
  const char *key, *name;
  void (*serve)(int lfd);
};
const Impl kImpls[] = {
    {"waitfd", "mrengine, MR_wait_fd", serve_waitfd},
    {"blocking", "mrengine, blocking regions", serve_blocking},
    {"threads", "a thread per connection", serve_threads},
#ifdef MR_BENCH_LIBUV
    {"libuv", "libuv (one loop)", serve_libuv},
#endif
};

// One run: the server in this process, the client in a child. Returns {req/s, cpu us/req}.
std::pair<double, double> run_once(const Impl &im) {
  int port, pfd[2];
  int lfd = listen_loopback(&port);
  if (pipe(pfd) != 0) die("pipe");
  double c0 = cpu_s();
  pid_t pid = fork();
  if (pid == 0) {
    close(pfd[0]);
    long trips = run_client(port);
    if (write(pfd[1], &trips, sizeof trips) != sizeof trips) _exit(1);
    _exit(0);
  }
  close(pfd[1]);
  im.serve(lfd);
  double cpu = cpu_s() - c0;
  long trips = 0;
  if (read(pfd[0], &trips, sizeof trips) != sizeof trips) die("read trips");
  int st;
  waitpid(pid, &st, 0);
  close(pfd[0]);
  close(lfd);
  return {static_cast<double>(trips) / g_seconds, cpu * 1e6 / static_cast<double>(trips)};
}

}  // namespace

int main(int argc, char **argv) {
  int reps = 3;
  std::string impls = "all";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc)
      g_seconds = std::atof(argv[++i]);
    else if (a == "--conns" && i + 1 < argc)
      g_conns = std::atoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--impls" && i + 1 < argc)
      impls = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--seconds S] [--conns C] [--reps R] [--impls LIST]\n",
                   argv[0]);
      return 2;
    }
  }
  if (g_seconds <= 0 || g_seconds > 60 || g_conns < 1 || g_conns > 1000 || reps < 1) {
    std::fprintf(stderr, "bounds: 0 < seconds <= 60, 1 <= conns <= 1000, reps >= 1\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  std::printf(
      "loopback echo, %d connections, %d-byte messages, %.0f s per run, median of %d "
      "(min..max)\n",
      g_conns, kLen, g_seconds, reps);
  std::printf("  %-28s %24s %26s\n", "server", "requests/s", "server CPU us/request");
  for (const Impl &im : kImpls) {
    if (impls != "all" &&
        ("," + impls + ",").find(std::string(",") + im.key + ",") == std::string::npos)
      continue;
    std::vector<double> rps, cpu;
    for (int r = 0; r < reps; r++) {
      auto [a, b] = run_once(im);
      rps.push_back(a);
      cpu.push_back(b);
    }
    std::sort(rps.begin(), rps.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("  %-28s %9.0f (%7.0f..%7.0f) %9.2f (%6.2f..%6.2f)\n", im.name, rps[rps.size() / 2],
                rps.front(), rps.back(), cpu[cpu.size() / 2], cpu.front(), cpu.back());
    std::fflush(stdout);
  }
  return 0;
}
