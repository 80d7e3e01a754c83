// runqueue.hpp: the locked FIFOs that any thread may push to: runnable contexts (the shared
// queue, each engine's bound queue) and the injector (sparks from threads that are not engines).
#ifndef MR_ENGINE_RUNQUEUE_HPP
#define MR_ENGINE_RUNQUEUE_HPP

#include <atomic>
#include <cstddef>
#include <mutex>

#include "context.hpp"

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

// A spark submitted by a thread that is not an engine (it has no deque): the injector's node.
struct Injected {
  Task task;
  Injected *next = nullptr;
};

using Injector = LockedFifo<Injected>;

}  // namespace mr::engine

#endif
