// io_wait.cpp: waiting on file descriptors in the engines' park (io_wait.hpp).
#include "config.h"

#include "io_wait.hpp"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "fatal.hpp"
#include "fd_claims.hpp"
#include "fd_race.hpp"
#include "switch.hpp"
#include "timer_duty.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

// One context waiting on a descriptor, on the context's own stack. `state` (FdWait) decides who
// resumes it: the engine that sees the descriptor ready, or the time-out's timer (any engine), by
// CAS (fd_race.hpp).
struct FdWaiter {
  Context *ctx = nullptr;
  std::atomic<int> state{kFdWaiting};
  std::uint32_t revents = 0;  // written before the CAS to kFdReady (release)
  // Set by E's dispatch, on E, which the context runs on too: E's epoll_wait reported the
  // registration, which EPOLLONESHOT has therefore disabled.
  bool reported = false;
  Timer timer{};
  // Set (release, fd_timer_finish) by the time-out's fire function as its last access to the
  // record: a context whose cancel says the timer fired waits for it before its frame goes.
  std::atomic<bool> timer_done{false};
};

constexpr int kBatch = 64;

// epoll_pwait2 (Linux 5.11) takes the time-out in nanoseconds. An older kernel, or qemu-user
// (which does not emulate it), answers ENOSYS: from then on the wait is epoll_wait's, with the
// time-out in milliseconds rounded up, so that a deadline is never met early.
int epoll_wait_ns(int ep, epoll_event *ev, int n, const struct timespec *tp) {
  // relaxed: a cache of the kernel's answer, which every thread would find out for itself.
  static std::atomic<bool> no_pwait2{false};
  if (!no_pwait2.load(std::memory_order_relaxed)) {
    int r = epoll_pwait2(ep, ev, n, tp, nullptr);
    if (r >= 0 || errno != ENOSYS) return r;
    no_pwait2.store(true, std::memory_order_relaxed);
  }
  if (tp == nullptr) return epoll_wait(ep, ev, n, -1);
  std::int64_t ms = static_cast<std::int64_t>(tp->tv_sec) * 1000 + (tp->tv_nsec + 999999) / 1000000;
  return epoll_wait(ep, ev, n, static_cast<int>(std::min<std::int64_t>(ms, INT_MAX)));
}

// A waiter's descriptor is ready: resume its context unless the time-out won. Called only by
// the engine the context waits on (its park, or io_idle).
void ready(FdWaiter *w, std::uint32_t revents) {
  Context *c = w->ctx;  // the last read of *w unless we win
  w->reported = true;
  w->revents = revents;
  if (fd_ready_wins(w->state))  // acq_rel: publishes revents to the context
    schedule(c);  // bound to this engine: its queue, or CONTEXT to itself if it is SLEEPING
}

// Handle what epoll_wait returned on engine e's instance.
void dispatch(IoEngine *io, const epoll_event *ev, int n) {
  for (int i = 0; i < n; i++) {
    if (ev[i].data.ptr == nullptr) {  // the eventfd: an unpark; drain it
      std::uint64_t v;
      (void)!read(io->evfd, &v, sizeof v);
      continue;
    }
    ready(static_cast<FdWaiter *>(ev[i].data.ptr), ev[i].events);
  }
}

// The time-out (TimerFire), on whichever engine fires it.
void timed_out(void *wp, void *) {
  auto *w = static_cast<FdWaiter *>(wp);
  Context *c = w->ctx;
  bool won = fd_timeout_wins(w->state);
  // release: the context may let its frame go once it sees this (after its cancel said fired).
  fd_timer_finish(w->timer_done);
  if (won) schedule(c);
}

// The engines' park (MR_ParkFn) and unpark: epoll_wait on the engine's instance, whose eventfd
// the unpark writes. Readiness found here makes contexts runnable at once (CONTEXT to this very
// engine, which is SLEEPING: it then sees NOTIFIED).
int epoll_park(void *ctx, int engine, std::uint64_t deadline) {
  IoEngine *io = &static_cast<IoEngine *>(ctx)[engine];
  struct timespec rel, *tp = nullptr;
  if (deadline != kNever) {
    std::uint64_t now = now_ns(), d = deadline > now ? deadline - now : 0;
    rel.tv_sec = static_cast<time_t>(d / 1000000000u);
    rel.tv_nsec = static_cast<long>(d % 1000000000u);
    tp = &rel;
  }
  epoll_event ev[kBatch];
  int n = epoll_wait_ns(io->epfd, ev, kBatch, tp);
  if (n < 0) return errno == EINTR ? 0 : MR_EBADF;
  dispatch(io, ev, n);
  return 0;
}

void epoll_unpark(void *ctx, int engine) {
  IoEngine *io = &static_cast<IoEngine *>(ctx)[engine];
  std::uint64_t one = 1;
  (void)!write(io->evfd, &one, sizeof one);
}

std::uint32_t to_epoll(int events) {
  return ((events & MR_FD_READ) ? EPOLLIN | EPOLLRDHUP : 0u) |
         ((events & MR_FD_WRITE) ? EPOLLOUT : 0u);
}

int from_epoll(std::uint32_t ev) {
  // A hang-up makes a read return 0 (end of file): readable, as poll(2) has it.
  return ((ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) ? MR_FD_READ : 0) |
         ((ev & EPOLLOUT) ? MR_FD_WRITE : 0) | ((ev & (EPOLLERR | EPOLLHUP)) ? MR_FD_ERROR : 0);
}

// poll(2)'s bits are epoll's (Linux defines them so), so that one mapping serves both.
static_assert(POLLIN == EPOLLIN && POLLOUT == EPOLLOUT && POLLRDHUP == EPOLLRDHUP &&
                  POLLERR == EPOLLERR && POLLHUP == EPOLLHUP,
              "poll(2) and epoll bits differ");

// fd's readiness now, without waiting (poll(2) with a zero time-out): MR_FD_* bits, or 0.
int ready_now(int fd, int events) {
  pollfd p{};
  p.fd = fd;
  p.events = static_cast<short>(to_epoll(events));
  return poll(&p, 1, 0) == 1 ? from_epoll(static_cast<std::uint16_t>(p.revents)) : 0;
}

int code_of(int err) {
  switch (err) {
    case EBADF:
      return MR_EBADF;
    case EPERM:
      return MR_ENOTPOLL;
    case EEXIST:
      return MR_EINUSE;
    case ENOMEM:
    case ENOSPC:
      return MR_ENOMEM;
    default:
      return MR_EINVAL;
  }
}

// A thread that is not an engine (or the runtime not running), or a poll (a zero time-out) from
// anywhere: an epoll instance of its own for this one wait, so that a descriptor epoll refuses
// gets the codes a context gets (MR_EBADF for -1 or a closed one, MR_ENOTPOLL for a regular file
// or a directory) rather than poll(2)'s answers (it skips a negative fd and calls a file always
// ready).
int wait_fd_thread(int fd, int events, std::int64_t timeout_ns) {
  // Checked first: a closed fd's number would be the new epoll instance's own.
  if (fcntl(fd, F_GETFD) < 0) return MR_EBADF;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return code_of(errno);
  epoll_event ev{};
  ev.events = to_epoll(events);
  int n = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  if (n == 0) {
    struct timespec rel, *tp = nullptr;
    if (timeout_ns >= 0) {
      rel.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
      rel.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
      tp = &rel;
    }
    // A signal handler's interruption restarts the whole time-out: the caller asked for no less.
    while ((n = epoll_wait_ns(ep, &ev, 1, tp)) < 0 && errno == EINTR) {}
  }
  int err = n < 0 ? errno : 0;
  close(ep);
  if (n < 0) return code_of(err);
  return n == 0 ? 0 : from_epoll(ev.events);
}

}  // namespace

int io_start(Runtime *rt) {
  auto *io = new (std::nothrow) IoEngine[static_cast<std::size_t>(rt->n)];
  if (!io) return MR_ENOMEM;
  rt->io = io;
  for (int i = 0; i < rt->n; i++) {
    io[i].epfd = epoll_create1(EPOLL_CLOEXEC);
    io[i].evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    if (io[i].epfd < 0 || io[i].evfd < 0 ||
        epoll_ctl(io[i].epfd, EPOLL_CTL_ADD, io[i].evfd, &ev) != 0) {
      io_stop(rt);
      return MR_ENOMEM;
    }
    rt->engines[i]->sleep.park = Park{epoll_park, epoll_unpark, io};
  }
  return 0;
}

void io_stop(Runtime *rt) {
  if (!rt->io) return;
  fd_claims_forget_contexts();  // a context dropped while it waited holds its claim still
  for (int i = 0; i < rt->n; i++) {
    if (rt->io[i].epfd >= 0) close(rt->io[i].epfd);
    if (rt->io[i].evfd >= 0) close(rt->io[i].evfd);
  }
  delete[] rt->io;
  rt->io = nullptr;
}

void io_idle(Engine *e) {
  if (!g_rt->io) return;
  IoEngine *io = &g_rt->io[e->id];
  if (io->waiters == 0) return;
  epoll_event ev[kBatch];
  int n = epoll_wait(io->epfd, ev, kBatch, 0);
  if (n > 0) dispatch(io, ev, n);
}

namespace {

// Register fd for w in io's instance, or, when fd is there already (a waiter of this engine
// waits on it for the other direction, which fd_claims allows), a duplicate of it: epoll keys
// its entries by descriptor number. Returns the descriptor registered, or an MR_E* code (< 0).
// With no other waiter on fd, a registration an earlier wait left (disabled) is armed again
// (EPOLL_CTL_MOD): nobody else can be using it.
int register_fd(IoEngine *io, int fd, int events, bool other_waits, FdWaiter *w) {
  epoll_event ev{};
  ev.events = to_epoll(events) | EPOLLONESHOT;
  ev.data.ptr = w;
  if (!other_waits) {
    if (epoll_ctl(io->epfd, EPOLL_CTL_MOD, fd, &ev) == 0) return fd;
    if (errno != ENOENT) return code_of(errno);
  }
  if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) return fd;
  if (errno != EEXIST || !other_waits) return code_of(errno);
  int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return errno == EMFILE || errno == ENFILE ? MR_ENOMEM : code_of(errno);
  if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, dup, &ev) == 0) return dup;
  int err = code_of(errno);
  close(dup);
  return err;
}

// A context on engine e waits (fd's `events` claimed; `other_waits`: so is the other direction).
int wait_fd_context(Engine *e, int fd, int events, bool other_waits, std::int64_t timeout_ns) {
  IoEngine *io = &g_rt->io[e->id];
  Context *self = e->current;
  const int was_bound = self->bound;
  self->bound = e->id;  // resume here: only this engine reads its epoll instance
  FdWaiter w;
  int err = 0, reg = -1;
  bool timed = timeout_ns >= 0;
  if (timed) {
    std::uint64_t now = now_ns();
    w.timer.when = static_cast<std::uint64_t>(timeout_ns) > kNever - 1 - now
                       ? kNever - 1
                       : now + static_cast<std::uint64_t>(timeout_ns);
    w.timer.fire = timed_out;
    w.timer.a = &w;
  }
  suspend_self(e, "MR_wait_fd outside a context", trace::Why::FD,
               [e, io, fd, events, other_waits, timed, &w, &err, &reg](Context *c) {
                 w.ctx = c;
                 reg = register_fd(io, fd, events, other_waits, &w);
                 if (reg < 0) {
                   err = reg;
                   return true;  // run again at once
                 }
                 io->waiters++;
                 if (timed) {
                   try {
                     (void)e->timers.arm(&w.timer);
                   } catch (const std::bad_alloc &) {
                     // No time-out can be stored: no wait. Out of the instance before
                     // self is run again, so that no dispatch can find w.
                     err = MR_ENOMEM;
                     (void)epoll_ctl(io->epfd, EPOLL_CTL_DEL, reg, nullptr);
                     if (reg != fd) close(reg);
                     io->waiters--;
                     reg = -1;
                     return true;
                   }
                 }
                 return false;
               });
  // On e again (bound): no dispatch on this engine runs while we do, and ONESHOT reported w at
  // most once. A registration e reported is disabled: fd stays in the instance, and the next
  // wait on fd here arms it again (one system call a wait, not an add and a delete). One still
  // armed (the time-out won) points at w, which is going, and a duplicate's number is closed
  // now: out of the instance.
  self->bound = was_bound;
  if (reg >= 0) {
    if (reg != fd || !w.reported) (void)epoll_ctl(io->epfd, EPOLL_CTL_DEL, reg, nullptr);
    if (reg != fd) close(reg);
    io->waiters--;
  }
  if (err) return err;
  TimerState was;
  if (timed && !e->timers.cancel(&w.timer, &was) && was == TimerState::FIRED) {
    // acquire: pairs with timed_out's release store, its last access to w.
    while (!fd_timer_finished(w.timer_done)) sched_yield();
  }
  // acquire: pairs with the winner's CAS, so revents is visible.
  if (fd_was_ready(w.state)) return from_epoll(w.revents);
  // The time-out won. With a time-out shorter than the way from the suspension to this engine's
  // next look at its instance, another engine's idle loop may fire the timer first, whether or
  // not fd was ready all along: one look now reports it ready if it is, as poll(2) does at its
  // call. One system call, on the time-out's path only.
  return ready_now(fd, events);
}

}  // namespace

int wait_fd(int fd, int events, std::int64_t timeout_ns) {
  if (events == 0 || (events & ~(MR_FD_READ | MR_FD_WRITE)) != 0) return MR_EINVAL;
  Engine *e = this_engine();
  const bool in_context = e && e->current;
  if (in_context && !g_rt->io) return MR_ENOFDWAIT;
  int other = 0;
  if (int rc = fd_claim(fd, events, in_context, &other); rc != 0) return rc;
  // A zero time-out is a poll, which waits for nothing: a context takes a thread's way too. (Its
  // own way would arm a timer due at once, which another engine could fire before this one read
  // its instance: a ready descriptor would be reported as timed out.)
  int rc = in_context && timeout_ns != 0 ? wait_fd_context(e, fd, events, other != 0, timeout_ns)
                                         : wait_fd_thread(fd, events, timeout_ns);
  fd_release(fd, events, in_context);
  return rc;
}

}  // namespace mr::engine
