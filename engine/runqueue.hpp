// runqueue.hpp: the locked FIFOs that any thread may push to: runnable contexts (the shared
// queue, each engine's bound queue) and the injector (sparks from threads that are not engines).
#ifndef MR_ENGINE_RUNQUEUE_HPP
#define MR_ENGINE_RUNQUEUE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

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
    if (tail_) tail_->next = c; else head_ = c;
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
// out: a ring of tasks under a mutex. A spark costs no allocation (the ring doubles only when it
// is full, and never shrinks): after a long idle time malloc and free on cold caches were a third
// of the time a thread's spark took to start (doc/performance.md, "Wake latency"). The lock, the
// ring's indices and the size hint share one cache line.
class alignas(64) Injector {
 public:
  Injector() = default;
  ~Injector() { delete[] ring_; }
  Injector(const Injector &) = delete;
  Injector &operator=(const Injector &) = delete;

  // Any thread. The caller then runs the post-work check (P1).
  void push(const Task &t) {
    std::lock_guard<std::mutex> g(lock_);
    std::uint32_t n = static_cast<std::uint32_t>(size_.load(std::memory_order_relaxed));
    if (n == capacity_) grow();
    ring_[(head_ + n) & (capacity_ - 1)] = t;
    // relaxed: the callers' seq_cst fence after push orders it (P1); under the lock for pop.
    size_.store(n + 1, std::memory_order_relaxed);
  }

  // Any thread: the oldest spark into *t, or false if there is none. The unlocked size test
  // keeps the idle loop off the lock.
  bool pop(Task *t) {
    // relaxed: a stale zero is covered by the caller's fence-then-recheck (P1).
    if (size_.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard<std::mutex> g(lock_);
    std::size_t n = size_.load(std::memory_order_relaxed);  // relaxed: under the lock
    if (n == 0) return false;
    *t = ring_[head_];
    head_ = (head_ + 1) & (capacity_ - 1);
    size_.store(n - 1, std::memory_order_relaxed);  // relaxed: as in push
    return true;
  }

  // Any thread; relaxed: callers that need order put a seq_cst fence before the call.
  bool maybe_nonempty() const { return size_.load(std::memory_order_relaxed) != 0; }

 private:
  // Called with lock_ held and the ring full: double it (64 tasks at first), oldest first.
  void grow() {
    std::uint32_t cap = capacity_ == 0 ? 64 : capacity_ * 2;
    if (cap == 0) fatal("too many sparks submitted from threads that are not engines");
    Task *r = new (std::nothrow) Task[cap];
    if (!r) fatal("out of memory while submitting a spark from a thread that is not an engine");
    for (std::uint32_t i = 0; i < capacity_; i++) r[i] = ring_[(head_ + i) & (capacity_ - 1)];
    delete[] ring_;
    ring_ = r;
    head_ = 0;
    capacity_ = cap;
  }

  std::mutex lock_;
  Task *ring_ = nullptr;        // capacity_ slots (a power of two), protected by lock_
  std::uint32_t capacity_ = 0;  // protected by lock_
  std::uint32_t head_ = 0;      // the oldest spark's slot; protected by lock_
  // Written under lock_; read without it as a hint.
  std::atomic<std::size_t> size_{0};
};

}  // namespace mr::engine

#endif
