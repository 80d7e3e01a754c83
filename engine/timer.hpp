// timer.hpp: pending timers, one store per engine (doc/design.md, "Timers").
//
// Each engine keeps the timers armed on it in a 4-ary min-heap ordered by deadline (as Go keeps
// one per P): arm, cancel and pop are O(log n) under the heap's mutex, and the earliest deadline
// is also kept in an atomic word so that the idle loop and the other engines read it without the
// lock. A Timer record is the caller's (MR_Timer) or lives on a sleeping context's stack; the
// heap only points at it, and never touches it once it has fired, been cancelled or been
// dropped. This file knows nothing of contexts or engines: what a timer does when it fires is a
// function pointer its arming code hands down.
#ifndef MR_ENGINE_TIMER_HPP
#define MR_ENGINE_TIMER_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "clock.hpp"
#include "mrengine.h"
#include "timer_state.hpp"

namespace mr::engine {

inline constexpr std::uint64_t kNever = UINT64_MAX;  // "no deadline"

// What a timer does when it fires: fire(a, b), called by the engine that fires it (its own, or
// one that took over its overdue timers), outside every lock, after the record was left for good.
using TimerFire = void (*)(void *a, void *b);

struct Timer {
  std::uint64_t when;    // the deadline (CLOCK_MONOTONIC ns); set before arming
  TimerFire fire;        // set before arming
  void *a, *b;           // fire's arguments; set before arming
  std::uint32_t index;   // position in its heap while PENDING; under the heap's lock
  std::int32_t heap_id;  // which engine's heap holds it; written by arm before it is shared
  // Written under the heap's lock; read without it (acquire, timer_look) by cancel's fast
  // answers and by tests. release stores (timer_state.hpp): a reader that sees
  // FIRED/CANCELLED/DROPPED may reuse the record.
  std::atomic<TimerState> state;
};
static_assert(sizeof(Timer) <= sizeof(MR_Timer), "MR_Timer too small");
static_assert(alignof(Timer) <= alignof(MR_Timer), "MR_Timer alignment too small");

class TimerHeap {
 public:
  explicit TimerHeap(int id) : id_(id) {}
  // Touches no timer: a pending one may live on a context's stack that is already unmapped, so
  // the shutdown drops them first (drop_all).
  ~TimerHeap() = default;
  TimerHeap(const TimerHeap &) = delete;
  TimerHeap &operator=(const TimerHeap &) = delete;

  // Add t (FREE or finished, with when/fire/a/b set). Returns true if t is now the earliest.
  // Throws std::bad_alloc (t left as it was). Any thread.
  bool arm(Timer *t);

  // Remove t if it is still pending here: CANCELLED, true. Otherwise false and *was holds its
  // state (FIRED, CANCELLED, DROPPED, or FREE for a record never armed). Any thread.
  bool cancel(Timer *t, TimerState *was);

  // Take every timer due at `now`, mark it FIRED and run its fire function (outside the lock).
  // Returns how many fired. Any thread (the owner, or an engine taking over its overdue timers).
  int fire_due(std::uint64_t now);

  // The earliest deadline, or kNever. Any thread; relaxed: a hint, ordered by the callers'
  // fences (doc/design.md, TM1).
  std::uint64_t earliest() const { return earliest_.load(std::memory_order_relaxed); }

  // How many arms have made their timer the earliest, ever: an engine that compares it with the
  // count at its last cover knows whether a new earliest deadline needs one (timers_handed_off,
  // TM1). Any thread; relaxed: the engine reads its own arms in program order, and an arm from
  // another thread covers itself.
  std::uint64_t lowered() const { return lowered_.load(std::memory_order_relaxed); }

  // How many timers are pending. Any thread (takes the lock).
  std::size_t size();

  // Mark every pending timer DROPPED (nothing of them runs) and forget it; returns how many.
  // Called by the shutdown once no engine runs, before any context's stack is freed: a sleeping
  // context's timer lives on its stack (doc/design.md, "Timers").
  std::size_t drop_all();

 private:
  static constexpr std::size_t kArity = 4;
  void place(std::size_t i, Timer *t) {
    heap_[i] = t;
    t->index = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void remove_at(std::size_t i);
  void publish_earliest() {
    // relaxed: readers use it as a hint and order it with fences (TM1); under lock_.
    earliest_.store(heap_.empty() ? kNever : heap_[0]->when, std::memory_order_relaxed);
  }

  const int id_;
  std::mutex lock_;
  std::vector<Timer *> heap_;  // under lock_
  std::atomic<std::uint64_t> earliest_{kNever};
  std::atomic<std::uint64_t> lowered_{0};  // written under lock_
};

}  // namespace mr::engine

#endif
