// runqueue.hpp: the locked FIFOs that any thread may push to: runnable contexts (the shared
// queue, each engine's bound queue) and the injector (sparks from threads that are not engines).
#ifndef MR_ENGINE_RUNQUEUE_HPP
#define MR_ENGINE_RUNQUEUE_HPP

#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>

#include <boost/circular_buffer.hpp>

#include "context.hpp"
#include "fatal.hpp"

namespace mr::engine {

// Node: any type with a `Node *next` link.
template <class Node>
class LockedFifo {
 public:
  // Any thread. The caller then makes sure someone will look (doc/design.md, P1 and P3).
  void push(Node *c) {
    std::lock_guard<std::mutex> g(lock_);
    c->next = nullptr;
    if (tail_)
      tail_->next = c;
    else
      head_ = c;
    tail_ = c;
    // relaxed: the callers' seq_cst fence after push orders it (P1/P3); under the lock for pop.
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // Any thread. nullptr if empty. The unlocked size test keeps the idle loop off the lock.
  Node *pop() {
    // relaxed: a stale zero is covered by the caller's fence-then-recheck (P1/P3).
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard<std::mutex> g(lock_);
    Node *c = head_;
    if (!c) return nullptr;
    head_ = c->next;
    if (!head_) tail_ = nullptr;
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return c;
  }

  // Any thread; relaxed: callers that need order put a seq_cst fence before the call.
  bool maybe_nonempty() const { return size_.load(std::memory_order_relaxed) != 0; }

 private:
  std::mutex lock_;
  Node *head_ = nullptr;  // protected by lock_
  Node *tail_ = nullptr;  // protected by lock_
  // Written under lock_; read without it as a hint.
  std::atomic<std::size_t> size_{0};
};

using RunQueue = LockedFifo<Context>;

// The sparks submitted by threads that are not engines (they have no deque), first in first
// out: a ring of tasks (boost::circular_buffer) under a mutex. A spark costs no allocation (the
// ring doubles only when it is full, and never shrinks): after a long idle time malloc and free
// on cold caches were a third of the time a thread's spark took to start (doc/performance.md,
// "Wake latency"). The lock and the size hint share one cache line.
//
// With a collector's hooks, the ring's storage is a root range (list_roots): the env of a spark
// waiting here is the program's only reference to it. A collector reads the range with every
// thread stopped, perhaps one inside push: so the range is published apart from the ring, and
// moves to a bigger ring only once that one holds every task, before the old one is freed.
class alignas(64) Injector {
 public:
  Injector() {
    gc_.roots = &Injector::roots;
    gc_.owner = this;
  }
  Injector(const Injector &) = delete;
  Injector &operator=(const Injector &) = delete;

  // Any thread. The caller then runs the post-work check (P1).
  void push(const Task &t) {
    std::lock_guard<std::mutex> g(lock_);
    if (ring_.full()) {
      grow_with(t);
    } else {
      ring_.push_back(t);
    }
    // relaxed: the callers' seq_cst fence after push orders it (P1); under the lock for pop.
    size_.store(ring_.size(), std::memory_order_relaxed);
  }

  // Any thread: the oldest spark into *t, or false if there is none. The unlocked size test
  // keeps the idle loop off the lock.
  bool pop(Task *t) {
    // relaxed: a stale zero is covered by the caller's fence-then-recheck (P1).
    if (size_.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard<std::mutex> g(lock_);
    if (ring_.empty()) return false;
    *t = ring_.front();
    ring_.pop_front();
    size_.store(ring_.size(), std::memory_order_relaxed);  // relaxed: as in push
    return true;
  }

  // Any thread; relaxed: callers that need order put a seq_cst fence before the call.
  bool maybe_nonempty() const { return size_.load(std::memory_order_relaxed) != 0; }

  // The ring as a collector's root range, from the runtime's start (hooks installed) until it
  // is freed.
  void list_roots() { gc::add_roots(&gc_); }
  void unlist_roots() { gc::remove(&gc_); }

 private:
  // Under lock_, ring_ full: a ring of twice the capacity (64 tasks at first) with every task
  // and t, in order; its range published; then the old ring freed.
  void grow_with(const Task &t) {
    try {
      const std::size_t cap = ring_.capacity() == 0 ? 64 : 2 * ring_.capacity();
      boost::circular_buffer<Task> bigger(cap);
      bigger.insert(bigger.end(), ring_.begin(), ring_.end());
      bigger.push_back(t);
      // Filled from its start and never popped: its first element is its storage's first slot.
      // relaxed (both): read only by a collector with this thread stopped (gc.hpp's Stack);
      // the start first, so a stop between the two stores scans the new storage for the old
      // (smaller) capacity.
      roots_lo_.store(bigger.array_one().first, std::memory_order_relaxed);
      roots_cap_.store(cap, std::memory_order_relaxed);
      ring_.swap(bigger);
    } catch (const std::bad_alloc &) {
      fatal("out of memory while submitting a spark from a thread that is not an engine");
    }
  }  // the old ring freed here, after the range moved off it

  static std::size_t roots(const void *owner, MR_GcStackFn fn, void *arg) {
    const auto *self = static_cast<const Injector *>(owner);
    const Task *lo = self->roots_lo_.load(std::memory_order_relaxed);  // relaxed: as stored
    if (!lo) return 0;
    fn(const_cast<Task *>(lo),
       const_cast<Task *>(lo) + self->roots_cap_.load(std::memory_order_relaxed), arg);
    return 1;
  }

  std::mutex lock_;
  boost::circular_buffer<Task> ring_;  // protected by lock_
  // Written under lock_; read without it as a hint.
  std::atomic<std::size_t> size_{0};
  // The storage of ring_ and its capacity for a collector: written under lock_ (grow_with).
  std::atomic<const Task *> roots_lo_{nullptr};
  std::atomic<std::size_t> roots_cap_{0};
  gc::Stack gc_;  // the record that lists roots (gc.hpp)
};

}  // namespace mr::engine

#endif
