// fd.cpp: the race for a context waiting on a file descriptor (doc/design.md section 23) under
// GenMC, with the engine's own steps (engine/fd_race.hpp). E, the engine the context waits on,
// sees the descriptor ready (io_wait.cpp's ready) while another engine fires the wait's time-out
// (timed_out); the timer was taken from its heap or cancelled under the heap's lock (a pthread
// mutex here, as TimerHeap's). The context then runs on E: it cancels its timer, waits for the
// fire function's last store if the cancel said fired, reads the result, and its frame goes (its
// memory holds a new waiting record). The winner makes the context runnable once, the loser not
// at all; a missing order lets the fire function read or win the new record: a race on a plain
// field (RC11), or a context scheduled twice (IMM).
#include "harness.hpp"

#include <genmc.h>

#include "engine/fd_race.hpp"

using namespace mr::engine;

namespace {

constexpr std::uint32_t kBits = 5;  // the ready bits E's epoll_wait returned

// The waiter record of io_wait.cpp, on the context's stack.
struct FdWaiter {
  int *ctx;
  std::atomic<int> state;
  std::uint32_t revents;
  std::atomic<bool> timer_done;
};

int context;  // the waiting context
FdWaiter w;
pthread_mutex_t heap = PTHREAD_MUTEX_INITIALIZER;
bool in_heap = true;           // the time-out's timer is pending; under heap
std::atomic<int> runnable;     // schedule: how many times the context was made runnable
std::atomic<int> won_by_time;  // the time-out won

// schedule(c) to E: a stand-in for its bound queue and CONTEXT (a release that E acquires).
void schedule(int *c) {
  assert(c == &context);
  assert(runnable.fetch_add(1, std::memory_order_release) == 0);  // never twice
}

// io_wait.cpp's ready, on E.
void ready(FdWaiter *p, std::uint32_t bits) {
  int *c = p->ctx;  // the last read of *p unless we win
  p->revents = bits;
  if (fd_ready_wins(p->state)) schedule(c);
}

// io_wait.cpp's timed_out, as TimerHeap::fire_due runs it (outside the heap's lock).
void timed_out(FdWaiter *p) {
  int *c = p->ctx;
  bool won = fd_timeout_wins(p->state);
  fd_timer_finish(p->timer_done);
  if (won) {
    won_by_time.store(1, std::memory_order_relaxed);
    schedule(c);
  }
}

// Another engine fires the overdue timer: fire_due takes it under the lock, then fires it.
void *firer(void *) {
  pthread_mutex_lock(&heap);
  bool mine = in_heap;
  in_heap = false;
  pthread_mutex_unlock(&heap);
  if (mine) timed_out(&w);
  return nullptr;
}

// E: sees the descriptor ready, then runs the context once it is runnable (wait_fd_context's
// end): the cancel, the wait for the fire function, the result; then the frame goes.
void *engine(void *) {
#ifndef SCENARIO_TIMEOUT
  ready(&w, kBits);
#endif
  __VERIFIER_assume(runnable.load(std::memory_order_acquire) == 1);
  pthread_mutex_lock(&heap);
  bool cancelled = in_heap;
  in_heap = false;
  pthread_mutex_unlock(&heap);
  if (!cancelled) __VERIFIER_assume(fd_timer_finished(w.timer_done));
  if (fd_was_ready(w.state))
    assert(w.revents == kBits && won_by_time.load(std::memory_order_relaxed) == 0);
  // The frame goes: its memory holds the next waiter's record (a fire function that still
  // reads it would see, or win, the new one).
  w.ctx = nullptr;
  w.revents = 0;
  w.state.store(kFdWaiting, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

int main() {
  w.ctx = &context;
  w.state.store(kFdWaiting, std::memory_order_relaxed);
  w.timer_done.store(false, std::memory_order_relaxed);
  pthread_t t[2];
  pthread_create(&t[0], nullptr, engine, nullptr);
  pthread_create(&t[1], nullptr, firer, nullptr);
  for (pthread_t &x : t) pthread_join(x, nullptr);
  assert(runnable.load(std::memory_order_relaxed) == 1);  // once, never lost
  return 0;
}
