// watchdog.cpp: the debug build's liveness watchdog (watchdog.hpp).
#include "config.h"

#include "watchdog.hpp"

#ifdef MR_DEBUG

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "fatal.hpp"
#include "timer_duty.hpp"

namespace mr::engine {

namespace {

// What the watchdog saw of one engine's sleep: the stamp of the sleep (sleep_stamp) and when the
// watchdog first saw it; `since` is 0 while the engine is not SLEEPING.
struct SleepSeen {
  std::uint64_t stamp = 0;
  std::uint64_t since = 0;
};

}  // namespace

struct Watchdog {
  std::thread thread;
  std::mutex lock;
  std::condition_variable cv;
  bool stop = false;  // under lock
  // The watchdog thread's own, here rather than on its stack: in a child of fork(), where the
  // thread is gone, it is still reachable from g_rt (a leak checker at the child's exit).
  std::vector<SleepSeen> seen;
};

namespace {

constexpr auto kTick = std::chrono::milliseconds(5);

// The engine (other than `not_this`) that has slept longest, since before `from`, or -1.
int sleeper_since(const std::vector<SleepSeen> &seen, std::uint64_t from, int not_this) {
  for (int i = 0; i < static_cast<int>(seen.size()); i++)
    if (i != not_this && seen[i].since != 0 && seen[i].since <= from) return i;
  return -1;
}

void look(std::vector<SleepSeen> &seen) {
  const Runtime *rt = g_rt;
  const std::uint64_t now = now_ns();
  // relaxed loads throughout: estimates, each condition held for the whole bound.
  for (int i = 0; i < rt->n; i++) {
    const Shared *x = rt->engines[i];
    if (x->sleep.state.load(std::memory_order_relaxed) != State::SLEEPING) {
      seen[i].since = 0;
      continue;
    }
    std::uint64_t stamp = x->sleep_stamp.load(std::memory_order_relaxed);
    if (seen[i].since == 0 || seen[i].stamp != stamp) seen[i] = SleepSeen{stamp, now};
  }
  if (now < kWatchdogBoundNs) return;
  const std::uint64_t late = now - kWatchdogBoundNs;
  for (int i = 0; i < rt->n; i++) {
    const Shared *x = rt->engines[i];
    std::int64_t end = x->strand_end.load(std::memory_order_relaxed);
    if (end == 0 || !x->deque.holds_below(end)) continue;
    std::uint64_t since = x->strand_since.load(std::memory_order_relaxed);
    int s = sleeper_since(seen, late, i);
    if (since <= late && s >= 0)
      fatal(
          "liveness watchdog: engine %d has held sparks since it ran another context %llu ms "
          "ago, and engine %d sleeps (doc/design.md, H1)",
          i, static_cast<unsigned long long>((now - since) / 1000000), s);
  }
  bool awake = false, covered = false;
  std::uint64_t due = kNever;
  for (int i = 0; i < rt->n; i++) {
    const Shared *x = rt->engines[i];
    State st = x->sleep.state.load(std::memory_order_relaxed);
    if (st != State::WORKING && st != State::SLEEPING) awake = true;
    std::uint64_t d = x->timers.earliest();
    if (d < due) due = d;
  }
  if (due > late || awake) return;
  for (int i = 0; i < rt->n; i++) {
    const Shared *x = rt->engines[i];
    if (x->sleep.state.load(std::memory_order_relaxed) == State::SLEEPING &&
        x->wait_deadline.load(std::memory_order_relaxed) <= add_saturating(due, kTakeoverGraceNs))
      covered = true;
  }
  int s = sleeper_since(seen, late, -1);
  if (!covered && s >= 0 && seen[s].since <= late)
    fatal(
        "liveness watchdog: a timer is %llu ms overdue while engine %d sleeps and no sleeping "
        "engine's wait ends by it (doc/design.md, TM1)",
        static_cast<unsigned long long>((now - due) / 1000000), s);
}

void run(Watchdog *w) {
  std::unique_lock<std::mutex> lk(w->lock);
  while (!w->cv.wait_for(lk, kTick, [w] { return w->stop; })) look(w->seen);
}

}  // namespace

void watchdog_start() {
  auto *w = new Watchdog;
  w->seen.resize(static_cast<std::size_t>(g_rt->n));
  g_rt->watchdog = w;
  w->thread = std::thread(run, w);
}

void watchdog_stop() {
  Watchdog *w = g_rt->watchdog;
  if (!w) return;
  {
    std::lock_guard<std::mutex> lk(w->lock);
    w->stop = true;
  }
  w->cv.notify_one();
  w->thread.join();
  delete w;
  g_rt->watchdog = nullptr;
}

}  // namespace mr::engine

#endif
