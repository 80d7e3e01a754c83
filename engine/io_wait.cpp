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

// One context waiting on a descriptor, on the context's own stack. `state` (FdWait) decides who
// resumes it: the engine that sees the descriptor ready, or the time-out's timer (any engine), by
// CAS (fd_race.hpp). The engine E it waits on finds it through fd's record in E's table
// (FdSlot::waiter), never through the registration.
struct FdWaiter {
  Engine *e = nullptr;  // E
  int fd = -1;
  int events = 0;  // MR_FD_READ and/or MR_FD_WRITE, claimed (fd_claims.hpp)
  Context *ctx = nullptr;
  std::atomic<int> state{kFdWaiting};
  std::uint32_t revents = 0;  // written before the CAS to kFdReady (release)
  // On E only: in fd's record (registered), and whether E's dispatch reported it ready.
  bool registered = false;
  bool reported = false;
  bool timed = false;  // the timer is armed (set once it is)
  Timer timer{};
  // Set (release, fd_timer_finish) by the time-out's fire function as its last access to the
  // record: a context whose cancel says the timer fired waits for it before its frame goes.
  std::atomic<bool> timer_done{false};
};

namespace {

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

// The moment timeout_ns from now: kNever for a negative time-out (none), else below kNever.
std::uint64_t deadline_after(std::int64_t timeout_ns) {
  if (timeout_ns < 0) return kNever;
  const std::uint64_t now = now_ns(), t = static_cast<std::uint64_t>(timeout_ns);
  return t > kNever - 1 - now ? kNever - 1 : now + t;
}

// What is left until deadline, into *rel (zero once it has passed); nullptr for kNever (no
// time-out), as epoll_wait_ns takes it.
const struct timespec *left_until(std::uint64_t deadline, struct timespec *rel) {
  if (deadline == kNever) return nullptr;
  const std::uint64_t now = now_ns(), d = deadline > now ? deadline - now : 0;
  rel->tv_sec = static_cast<time_t>(d / 1000000000u);
  rel->tv_nsec = static_cast<long>(d % 1000000000u);
  return rel;
}

std::uint32_t to_epoll(int events) {
  return ((events & MR_FD_READ) ? EPOLLIN | EPOLLRDHUP : 0u) |
         ((events & MR_FD_WRITE) ? EPOLLOUT : 0u);
}

// The bits of an event that concern w: those of its own directions, and errors and hang-ups,
// which epoll reports whatever the registration asked for. What a registration of w's alone
// would have reported.
std::uint32_t concerning(const FdWaiter *w, std::uint32_t revents) {
  return revents & (to_epoll(w->events) | EPOLLERR | EPOLLHUP);
}

// The directions s's waiters still wait for (not yet reported ready), as epoll bits.
std::uint32_t wanted(const FdSlot *s) {
  std::uint32_t bits = 0;
  for (const FdWaiter *w : s->waiter)
    if (w && !w->reported) bits |= to_epoll(w->events);
  return bits;
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

// Arm s's registration again (EPOLL_CTL_MOD) for `bits`, with s's token. Returns 0 or errno.
int rearm(IoEngine *io, FdSlot *s, std::uint32_t bits) {
  epoll_event ev{};
  ev.events = bits | EPOLLONESHOT;
  ev.data.u64 = FdSlots::token(s);
  if (epoll_ctl(io->epfd, EPOLL_CTL_MOD, s->fd, &ev) != 0) return errno;
  s->armed = bits;
  return 0;
}

// Handle what epoll_wait returned on engine e's instance. An event whose token is stale (its
// record was let go: the registration outlived its wait) is ignored.
void dispatch(IoEngine *io, const epoll_event *ev, int n) {
  for (int i = 0; i < n; i++) {
    if (ev[i].data.u64 == kEventfdToken) {  // an unpark; drain it
      std::uint64_t v;
      (void)!read(io->evfd, &v, sizeof v);
      continue;
    }
    FdSlot *s = io->slots.of_token(ev[i].data.u64);
    if (!s) continue;
    s->armed = 0;  // EPOLLONESHOT disabled the registration
    const std::uint32_t bits = ev[i].events;
    for (int d = 0; d < 2; d++) {
      FdWaiter *w = s->waiter[d];
      if (w && !w->reported && concerning(w, bits) != 0) ready(w, bits);  // once: then reported
    }
    // A waiter for the other direction waits on: armed again for it. If that fails (fd was
    // closed), it waits for its time-out, as a closed descriptor's waiter does.
    if (std::uint32_t rest = wanted(s); rest != 0) (void)rearm(io, s, rest);
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
  struct timespec rel;
  epoll_event ev[kBatch];
  int n = epoll_wait_ns(io->epfd, ev, kBatch, left_until(deadline, &rel));
  if (n < 0) return errno == EINTR ? 0 : MR_EBADF;
  dispatch(io, ev, n);
  return 0;
}

void epoll_unpark(void *ctx, int engine) {
  IoEngine *io = &static_cast<IoEngine *>(ctx)[engine];
  std::uint64_t one = 1;
  (void)!write(io->evfd, &one, sizeof one);
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
    // After a signal handler's interruption the wait goes on until the same deadline, as the
    // sleeps' (clock_nanosleep with TIMER_ABSTIME) do: neither shorter than asked, nor made
    // longer by each signal (a profiler's or an interval timer's would make it endless).
    const std::uint64_t deadline = deadline_after(timeout_ns);
    struct timespec rel;
    while ((n = epoll_wait_ns(ep, &ev, 1, left_until(deadline, &rel))) < 0 && errno == EINTR) {}
  }
  int err = n < 0 ? errno : 0;
  close(ep);
  if (n < 0) return code_of(err);
  return n == 0 ? 0 : from_epoll(ev.events);
}

}  // namespace

namespace {

// The lowest and highest number of the runtime's own descriptors (every engine's epoll instance
// and eventfd), set by io_start before any engine runs and read only by contexts: a range
// before the loop, so that a wait on another descriptor (all of them, in practice) costs two
// comparisons.
int g_own_lo = 0, g_own_hi = -1;

}  // namespace

bool io_owns(const Runtime *rt, int fd) {
  if (fd < g_own_lo || fd > g_own_hi) return false;
  for (int i = 0; i < rt->n; i++)
    if (fd == rt->io[i].epfd || fd == rt->io[i].evfd) return true;
  return false;
}

int io_start(Runtime *rt) {
  auto *io = new (std::nothrow) IoEngine[static_cast<std::size_t>(rt->n)];
  if (!io) return MR_ENOMEM;
  rt->io = io;
  g_own_lo = INT_MAX;
  g_own_hi = -1;
  for (int i = 0; i < rt->n; i++) {
    io[i].epfd = epoll_create1(EPOLL_CLOEXEC);
    io[i].evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kEventfdToken;
    if (io[i].epfd < 0 || io[i].evfd < 0 ||
        epoll_ctl(io[i].epfd, EPOLL_CTL_ADD, io[i].evfd, &ev) != 0) {
      io_stop(rt);
      return MR_ENOMEM;
    }
    rt->engines[i]->sleep.park = Park{epoll_park, epoll_unpark, io};
    g_own_lo = std::min({g_own_lo, io[i].epfd, io[i].evfd});
    g_own_hi = std::max({g_own_hi, io[i].epfd, io[i].evfd});
  }
  return 0;
}

void io_stop(Runtime *rt) {
  if (!rt->io) return;
  // A context still waiting when the engines stopped (MR_shutdown_now's, or a drop channel's
  // at the end of MR_shutdown) is dropped without its wait ending: it holds its claim still.
  fd_claims_forget_contexts();
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

// w waits on fd: into fd's record of io (made if w is the first waiter of this engine on fd) and
// its registration, armed for every direction the record's waiters wait for. A first waiter arms
// a registration an earlier wait on fd left (disabled) in the instance, EPOLL_CTL_MOD, and adds
// one (EPOLL_CTL_ADD) only if there is none: one system call a wait. Returns 0 or an MR_E* code
// (nothing changed). Called only by E, in the publish step of w's suspension.
int add_waiter(IoEngine *io, FdWaiter *w) {
  FdSlot *s = io->slots.find(w->fd);
  const bool first = s == nullptr;
  if (first) {
    try {
      s = io->slots.make(w->fd);
    } catch (const std::bad_alloc &) {
      return MR_ENOMEM;
    }
  }
  const std::uint32_t bits = wanted(s) | to_epoll(w->events);
  int err = rearm(io, s, bits);
  if (err == ENOENT && !first) {
    // fd's number names another file than the registration's (it was closed and reused while
    // the other waiter waits): that registration cannot be deleted, and may still be armed. Its
    // record is retired (its events are ignored from now on) and the waiter moves to a new one,
    // registered below for the file fd names now.
    FdSlot *old = s;
    try {
      s = io->slots.make(w->fd);
    } catch (const std::bad_alloc &) {
      return MR_ENOMEM;
    }
    s->waiter[0] = old->waiter[0];
    s->waiter[1] = old->waiter[1];
    io->slots.retire(old);
  }
  if (err == ENOENT) {
    epoll_event ev{};
    ev.events = bits | EPOLLONESHOT;
    ev.data.u64 = FdSlots::token(s);
    err = epoll_ctl(io->epfd, EPOLL_CTL_ADD, w->fd, &ev) == 0 ? 0 : errno;
    if (err == 0) s->armed = bits;
  }
  if (err != 0) {
    if (first) io->slots.free(s);  // nothing of it is in the instance
    return code_of(err);
  }
  for (int d = 0; d < 2; d++)
    if (w->events & (d == 0 ? MR_FD_READ : MR_FD_WRITE)) s->waiter[d] = w;
  w->registered = true;
  return 0;
}

// w's wait is over: out of fd's record. The last waiter of the record lets it go: a
// registration still armed (the time-out won, or nobody reported it) is deleted, since no wait
// would arm it again with its own token soon; a disabled one stays in the instance for the next
// wait's EPOLL_CTL_MOD. A delete that fails (fd was closed, or names another file now, while the
// registration's file stays open elsewhere) leaves the registration armed with a token that the
// retired record never matches again. A waiter that stays has the registration armed for what
// it still waits for. Called only by E.
void remove_waiter(IoEngine *io, FdWaiter *w) {
  FdSlot *s = io->slots.find(w->fd);
  for (FdWaiter *&x : s->waiter)
    if (x == w) x = nullptr;
  w->registered = false;
  if (!s->waiter[0] && !s->waiter[1]) {
    if (s->armed != 0 && epoll_ctl(io->epfd, EPOLL_CTL_DEL, s->fd, nullptr) != 0)
      io->slots.retire(s);
    else
      io->slots.free(s);
    return;
  }
  if (std::uint32_t rest = wanted(s); rest != 0 && rest != s->armed) (void)rearm(io, s, rest);
}

// w's wait ends on E: out of the instance, its timer cancelled, its claim given back. Called
// only by E: the context, resumed on E; or E's scheduler, dropping it (the context's unwait,
// end_dropped below), when the code after its suspension never runs.
void end_wait(FdWaiter *w) {
  Engine *e = w->e;
  MR_DASSERT(this_engine() == e, "an fd wait ended on another engine than its own");
  IoEngine *io = &g_rt->io[e->id];
  if (w->registered) {
    remove_waiter(io, w);
    io->waiters--;
  }
  TimerState was;
  if (w->timed && !e->timers.cancel(&w->timer, &was) && was == TimerState::FIRED) {
    // acquire: pairs with timed_out's release store, its last access to w.
    while (!fd_timer_finished(w->timer_done)) sched_yield();
  }
  fd_release(w->fd, w->events, true);
}

void end_dropped(void *w) { end_wait(static_cast<FdWaiter *>(w)); }

// A context on engine e waits (fd's `events` claimed).
int wait_fd_context(Engine *e, int fd, int events, std::int64_t timeout_ns) {
  IoEngine *io = &g_rt->io[e->id];
  Context *self = e->current;
  const int was_bound = self->bound;
  self->bound = e->id;  // resume here: only this engine reads its epoll instance
  FdWaiter w;
  w.e = e;
  w.fd = fd;
  w.events = events;
  const bool timed = timeout_ns >= 0;
  int err = 0;
  if (timed) {
    w.timer.when = deadline_after(timeout_ns);
    w.timer.fire = timed_out;
    w.timer.a = &w;
  }
  // Dropped once the wait is over (a closed drop channel), the context never runs the end below:
  // its scheduler ends the wait instead.
  self->unwait = {end_dropped, &w};
  suspend_self(e, "MR_wait_fd outside a context", trace::Why::FD,
               [e, io, timed, &w, &err](Context *c) {
                 w.ctx = c;
                 if (int rc = add_waiter(io, &w); rc != 0) {
                   err = rc;
                   return true;  // run again at once
                 }
                 io->waiters++;
                 if (timed) {
                   try {
                     (void)e->timers.arm(&w.timer);
                     w.timed = true;
                   } catch (const std::bad_alloc &) {
                     // No time-out can be stored: no wait. Out of the instance before self is run again, so
                     // that no dispatch can find w.
                     err = MR_ENOMEM;
                     remove_waiter(io, &w);
                     io->waiters--;
                     return true;
                   }
                 }
                 return false;
               });
  // On E again (bound): no dispatch on this engine runs while we do, and ONESHOT reported the
  // registration at most once since it was last armed.
  self->unwait = {};
  self->bound = was_bound;
  end_wait(&w);
  if (err) return err;
  // acquire: pairs with the winner's CAS, so revents is visible.
  if (fd_was_ready(w.state)) return from_epoll(concerning(&w, w.revents));
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
  // On an engine's thread outside any context (an on_drop, a polled source's poll function) a
  // wait would stop the engine: the process stops with a message, as at a join. A poll (a zero
  // time-out) waits for nothing.
  MR_CHECK(!e || in_context || timeout_ns == 0, "MR_wait_fd outside a context");
  if (in_context && !g_rt->io) return MR_ENOFDWAIT;
  if (fd < 0) return MR_EBADF;
  // A registration of the runtime's own descriptor would take over or stand beside an engine's
  // (its eventfd is registered in its instance: a re-arm would replace the unpark's token, and
  // the engine could no longer be woken). Refused before any epoll call.
  if (in_context && io_owns(g_rt, fd)) return MR_EINUSE;
  if (int rc = fd_claim(fd, events, in_context); rc != 0) return rc;
  // A zero time-out is a poll, which waits for nothing: a context takes a thread's way too. (Its
  // own way would arm a timer due at once, which another engine could fire before this one read
  // its instance: a ready descriptor would be reported as timed out.) A context's wait gives its
  // claim back as it ends (end_wait), where a drop ends it too.
  if (in_context && timeout_ns != 0) return wait_fd_context(e, fd, events, timeout_ns);
  int rc = wait_fd_thread(fd, events, timeout_ns);
  fd_release(fd, events, in_context);
  return rc;
}

}  // namespace mr::engine
