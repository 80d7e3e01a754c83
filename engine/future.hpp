// future.hpp: futures, the single-assignment values of dependent parallel conjunctions
// (doc/design.md, "Futures").
#ifndef MR_ENGINE_FUTURE_HPP
#define MR_ENGINE_FUTURE_HPP

#include <atomic>
#include <cstdint>

#include <sched.h>

#include "fatal.hpp"
#include "mrengine.h"
#include "mutant.hpp"

namespace mr::engine {

struct Context;

// The inside of an MR_Future. A zeroed Future is unsignalled with no waiters.
//   state:   0 or the head of the waiter list (each node on its waiter's stack, so aligned and
//            never 1 or 2), then kSignalling, then kSignalled. Waiters push themselves by CAS
//            (release, so their node is visible to the signaller); the first signaller CASes
//            the list to kSignalling (acquire), so it alone takes the whole list and writes the
//            value, then stores kSignalled (release). Readers that see kSignalled (acquire) see
//            the value; one that sees kSignalling waits the two stores out.
//   value:   written by the first signaller between its CAS and its store (relaxed, published by
//            the store).
struct Future {
  static constexpr std::uintptr_t kSignalled = 1;
  static constexpr std::uintptr_t kSignalling = 2;
  std::atomic<std::uintptr_t> state;
  std::atomic<std::uintptr_t> value;
};
static_assert(sizeof(Future) <= sizeof(MR_Future), "MR_Future too small");
static_assert(alignof(Future) <= alignof(MR_Future), "MR_Future alignment too small");

// ---- The protocol of the state word, written once: future.cpp and tests/weak run it ----------

// One waiter of a future, on the waiter's own stack: a suspended context, or a blocked thread
// that is not an engine. Valid until the waiter is resumed (the signaller reads `next` first).
struct FutureWaiter {
  FutureWaiter *next;
  Context *ctx;  // a suspended context, or a FOREIGN record (block_foreign)
};

// The state once the first signaller has published its value: waits out kSignalling (the
// signaller is between its CAS and its store, two instructions apart unless it is preempted).
inline std::uintptr_t future_settled(const Future *f, std::uintptr_t s) {
  // acquire: pairs with the signaller's release store of kSignalled.
  while (s == Future::kSignalling) {
    sched_yield();
    s = f->state.load(MR_WEAK_MUTANT(FUTURE_SETTLED, std::memory_order_acquire));
  }
  return s;
}

// Is f signalled, its value visible to the caller? The waiter's first look (future_wait).
inline bool future_ready(const Future *f) {
  // acquire: pairs with the signaller's release store, so the value is visible.
  return future_settled(f, f->state.load(MR_WEAK_MUTANT(
                               FUTURE_WAIT_LOAD, std::memory_order_acquire))) == Future::kSignalled;
}

// Push w on f's waiter list, unless f is signalled. Returns false if it was (w not pushed).
inline bool future_add_waiter(Future *f, FutureWaiter *w) {
  // acquire: if kSignalled, the value is visible to the caller.
  std::uintptr_t s = f->state.load(MR_WEAK_MUTANT(FUTURE_WAITER_LOAD, std::memory_order_acquire));
  for (;;) {
    s = future_settled(f, s);
    if (s == Future::kSignalled) return false;
    w->next = reinterpret_cast<FutureWaiter *>(s);
    // CAS release: publishes *w (and the context's saved continuation) to the signaller;
    // failure acquire: as the load above.
    if (f->state.compare_exchange_weak(
            s, reinterpret_cast<std::uintptr_t>(w),
            MR_WEAK_MUTANT(FUTURE_WAITER_CAS, std::memory_order_release),
            MR_WEAK_MUTANT(FUTURE_WAITER_LOAD, std::memory_order_acquire)))
      return true;
  }
}

// future_signal's protocol: on_signal() once the signal is claimed, wake(ctx) for each waiter.
template <class OnSignal, class Wake>
void signal_future(Future *f, std::uintptr_t value, OnSignal on_signal, Wake wake) {
  // acquire: the waiters' nodes (their release CAS), or a first signaller's value.
  std::uintptr_t s = f->state.load(MR_WEAK_MUTANT(FUTURE_SIGNAL_CAS, std::memory_order_acquire));
  for (;;) {
    if (s == Future::kSignalling || s == Future::kSignalled) {
      // A second signal: wait for the first to publish, then compare.
      future_settled(f, s);
      std::uintptr_t first = f->value.load(std::memory_order_relaxed);
      if (first != value)
        fatal(
            "MR_future_signal: future %p signalled twice with different values (%#lx, then "
            "%#lx)",
            static_cast<void *>(f), static_cast<unsigned long>(first),
            static_cast<unsigned long>(value));
      return;
    }
    // CAS acquire: takes the waiter list (pairs with the waiters' release CAS); failure
    // acquire: as the load above.
    if (f->state.compare_exchange_weak(
            s, Future::kSignalling, MR_WEAK_MUTANT(FUTURE_SIGNAL_CAS, std::memory_order_acquire),
            MR_WEAK_MUTANT(FUTURE_SIGNAL_CAS, std::memory_order_acquire)))
      break;
  }
  on_signal();
  f->value.store(value, std::memory_order_relaxed);
  // release: publishes the value to every reader that sees kSignalled.
  f->state.store(Future::kSignalled, MR_WEAK_MUTANT(FUTURE_SIGNALLED, std::memory_order_release));
  for (auto *w = reinterpret_cast<FutureWaiter *>(s); w;) {
    FutureWaiter *next = w->next;  // before waking: the node dies with the waiter's frame
    wake(w->ctx);
    w = next;
  }
}

// Make f signalled with `value` and resume every waiter. Any thread while running. A second
// signal with the same value returns; with a different value it stops the process.
void future_signal(Future *f, std::uintptr_t value);

// Is f signalled (future_wait would not wait)? Any thread.
bool future_is_signalled(const Future *f);

// The value of f, suspending the calling context (or blocking the calling thread, if it is not
// an engine) until f is signalled.
std::uintptr_t future_wait(Future *f);

}  // namespace mr::engine

#endif
