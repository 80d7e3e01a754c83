// future.cpp: futures (engine/future.hpp, doc/design.md section 11) under GenMC: the state word's
// protocol as future_signal and future_wait run it. SIGNALLERS threads signal the value 42 and
// WAITERS threads wait: each sees the future signalled and reads 42, or pushes its node, which
// the first signaller then wakes exactly once. No waiter is lost, no value unseen.
#include "harness.hpp"

#include "engine/future.hpp"

#ifndef SIGNALLERS
#define SIGNALLERS 1
#endif
#ifndef WAITERS
#define WAITERS 2
#endif

using mr::engine::Context;
using mr::engine::Future;
using mr::engine::FutureWaiter;

namespace {

constexpr std::uintptr_t kValue = 42;
Future *future;

// A waiter's node and what became of it. The node is static (a waiter's frame in the engine),
// so that a waiter that pushed it may stop here; main checks that it was woken.
struct Waiter {
  FutureWaiter node;
  bool pushed;             // the waiter's own
  std::atomic<int> woken;  // by the signaller
};
Waiter waiters[WAITERS];

// schedule() of future_signal: the context named by the node is the waiter's record.
void wake(Context *c) {
  reinterpret_cast<Waiter *>(c)->woken.fetch_add(1, std::memory_order_relaxed);
}

void *signaller(void *) {
  mr::engine::signal_future(
      future, kValue, [] {}, wake);
  return nullptr;
}

// future_wait up to the suspension: the first look, then the push of the node.
void *waiter(void *arg) {
  Waiter *me = static_cast<Waiter *>(arg);
  if (mr::engine::future_ready(future)) {
    assert(future->value.load(std::memory_order_relaxed) == kValue);
    return nullptr;
  }
  me->node.ctx = reinterpret_cast<Context *>(me);
  // Signalled meanwhile: the value is not checked here. GenMC 0.11 gives a failed CAS's read the
  // success order (release: no acquire), so it would report the failure acquire of
  // future_add_waiter's CAS, which pairs with the signaller's store, as missing.
  if (!mr::engine::future_add_waiter(future, &me->node)) return nullptr;
  me->pushed = true;
  return nullptr;
}

}  // namespace

int main() {
  future = new Future;  // zeroed, as MR_Future's initialiser leaves it
  future->state.store(0, std::memory_order_relaxed);
  future->value.store(0, std::memory_order_relaxed);
  pthread_t s[SIGNALLERS], w[WAITERS];
  for (pthread_t &x : s) pthread_create(&x, nullptr, signaller, nullptr);
  for (int i = 0; i < WAITERS; i++) pthread_create(&w[i], nullptr, waiter, &waiters[i]);
  for (pthread_t &x : s) pthread_join(x, nullptr);
  for (pthread_t &x : w) pthread_join(x, nullptr);
  // Each waiter that pushed its node was woken once; no other was.
  for (Waiter &x : waiters) assert(x.woken.load(std::memory_order_relaxed) == (x.pushed ? 1 : 0));
  return 0;
}
