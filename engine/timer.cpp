// timer.cpp: the per-engine 4-ary heap of pending timers (timer.hpp).
#include "config.h"

#include "timer.hpp"

#include "fatal.hpp"

namespace mr::engine {

std::size_t TimerHeap::drop_all() {
  std::lock_guard<std::mutex> g(lock_);
  // release: as every change out of PENDING (the owner of a user's MR_Timer reads it acquire).
  for (Timer *t : heap_) timer_mark_dropped(t->state);
  std::size_t n = heap_.size();
  heap_.clear();
  publish_earliest();
  return n;
}

void TimerHeap::sift_up(std::size_t i) {
  Timer *t = heap_[i];
  while (i > 0) {
    std::size_t p = (i - 1) / kArity;
    if (heap_[p]->when <= t->when) break;
    place(i, heap_[p]);
    i = p;
  }
  place(i, t);
}

void TimerHeap::sift_down(std::size_t i) {
  Timer *t = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t c = i * kArity + 1;
    if (c >= n) break;
    std::size_t best = c;
    for (std::size_t k = c + 1; k < c + kArity && k < n; k++)
      if (heap_[k]->when < heap_[best]->when) best = k;
    if (heap_[best]->when >= t->when) break;
    place(i, heap_[best]);
    i = best;
  }
  place(i, t);
}

void TimerHeap::remove_at(std::size_t i) {
  Timer *last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  place(i, last);
  if (i > 0 && heap_[(i - 1) / kArity]->when > last->when)
    sift_up(i);
  else
    sift_down(i);
}

bool TimerHeap::arm(Timer *t) {
  std::lock_guard<std::mutex> g(lock_);
  heap_.push_back(t);  // may throw: t untouched
  t->heap_id = id_;
  // release: whoever sees PENDING sees the fields above.
  timer_mark_pending(t->state);
  sift_up(heap_.size() - 1);
  publish_earliest();
  if (heap_[0] != t) return false;
  // relaxed: under lock_; see lowered().
  lowered_.store(lowered_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}

bool TimerHeap::cancel(Timer *t, TimerState *was) {
  std::lock_guard<std::mutex> g(lock_);
  // relaxed: every change out of PENDING is made under lock_, which we hold.
  TimerState s = timer_look_locked(t->state);
  // A record left PENDING by a runtime that has stopped is not in this heap: check the slot.
  if (s != TimerState::PENDING || t->index >= heap_.size() || heap_[t->index] != t) {
    *was = s == TimerState::PENDING ? TimerState::DROPPED : s;
    return false;
  }
  remove_at(t->index);
  publish_earliest();
  // release: the caller may reuse the record once it sees CANCELLED.
  timer_mark_cancelled(t->state);
  return true;
}

int TimerHeap::fire_due(std::uint64_t now) {
  int fired = 0;
  for (;;) {
    TimerFire f;
    void *a, *b;
    {
      std::lock_guard<std::mutex> g(lock_);
      if (heap_.empty() || heap_[0]->when > now) return fired;
      Timer *t = heap_[0];
      remove_at(0);
      publish_earliest();
      f = t->fire;
      a = t->a;
      b = t->b;
      // release: after this store the record is the caller's again; nothing here touches it.
      timer_mark_fired(t->state);
    }
    f(a, b);
    fired++;
  }
}

std::size_t TimerHeap::size() {
  std::lock_guard<std::mutex> g(lock_);
  return heap_.size();
}

}  // namespace mr::engine
