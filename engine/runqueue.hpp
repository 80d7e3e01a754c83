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
class alignas(64) Injector {
 public:
  // Any thread. The caller then runs the post-work check (P1).
  void push(const Task &t) {
    std::lock_guard<std::mutex> g(lock_);
    if (ring_.full()) {  // double it (64 tasks at first); set_capacity keeps their order
      try {
        ring_.set_capacity(ring_.capacity() == 0 ? 64 : 2 * ring_.capacity());
      } catch (const std::bad_alloc &) {
        fatal("out of memory while submitting a spark from a thread that is not an engine");
      }
    }
    ring_.push_back(t);
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

 private:
  std::mutex lock_;
  boost::circular_buffer<Task> ring_;  // protected by lock_
  // Written under lock_; read without it as a hint.
  std::atomic<std::size_t> size_{0};
};

}  // namespace mr::engine

#endif
