// future.cpp: signalling and waiting on futures (future.hpp).
#include "config.h"

#include "future.hpp"

#include <sched.h>

#include "engine.hpp"
#include "fatal.hpp"
#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

// One waiter of a future, on the waiter's own stack: a suspended context, or a blocked thread
// that is not an engine. Valid until the waiter is resumed (the signaller reads `next` first).
struct FutureWaiter {
  FutureWaiter *next;
  Context *ctx;  // a suspended context, or a FOREIGN record (block_foreign)
};

// The state once the first signaller has published its value: waits out kSignalling (the
// signaller is between its CAS and its store, two instructions apart unless it is preempted).
std::uintptr_t settled(const Future *f, std::uintptr_t s) {
  // acquire: pairs with the signaller's release store of kSignalled.
  while (s == Future::kSignalling) {
    sched_yield();
    s = f->state.load(std::memory_order_acquire);
  }
  return s;
}

// Push w on f's waiter list, unless f is signalled. Returns false if it was (w not pushed).
bool add_waiter(Future *f, FutureWaiter *w) {
  // acquire: if kSignalled, the value is visible to the caller.
  std::uintptr_t s = f->state.load(std::memory_order_acquire);
  for (;;) {
    s = settled(f, s);
    if (s == Future::kSignalled) return false;
    w->next = reinterpret_cast<FutureWaiter *>(s);
    // CAS release: publishes *w (and the context's saved continuation) to the signaller;
    // failure acquire: as the load above.
    if (f->state.compare_exchange_weak(s, reinterpret_cast<std::uintptr_t>(w),
                                       std::memory_order_release, std::memory_order_acquire))
      return true;
  }
}

}  // namespace

void future_signal(Future *f, std::uintptr_t value) {
  // acquire: the waiters' nodes (their release CAS), or a first signaller's value.
  std::uintptr_t s = f->state.load(std::memory_order_acquire);
  for (;;) {
    if (s == Future::kSignalling || s == Future::kSignalled) {
      // A second signal: wait for the first to publish, then compare.
      settled(f, s);
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
    if (f->state.compare_exchange_weak(s, Future::kSignalling, std::memory_order_acquire,
                                       std::memory_order_acquire))
      break;
  }
  trace::on_future_signal(f);
  f->value.store(value, std::memory_order_relaxed);
  // release: publishes the value to every reader that sees kSignalled.
  f->state.store(Future::kSignalled, std::memory_order_release);
  for (auto *w = reinterpret_cast<FutureWaiter *>(s); w;) {
    FutureWaiter *next = w->next;  // before waking: the node dies with the waiter's frame
    schedule(w->ctx);
    w = next;
  }
}

bool future_is_signalled(const Future *f) {
  // acquire: a caller that sees true may read what the signaller wrote before signalling.
  return f->state.load(std::memory_order_acquire) == Future::kSignalled;
}

std::uintptr_t future_wait(Future *f) {
  // acquire: pairs with the signaller's release store, so the value is visible.
  if (settled(f, f->state.load(std::memory_order_acquire)) == Future::kSignalled) {
    trace::on_future_wait(f, false);
    return f->value.load(std::memory_order_relaxed);
  }
  trace::on_future_wait(f, true);
  Engine *e = this_engine();
  FutureWaiter w{nullptr, nullptr};
  // Publish the waiter only once a context is saved: the signaller may resume it at once. If
  // the future was signalled meanwhile, go on at once.
  wait_here(e, "MR_future_wait outside a context", trace::Why::FUTURE, [f, &w](Context *self) {
    w.ctx = self;
    return !add_waiter(f, &w);
  });
  // acquire: pairs with the signaller's release store (we were woken after it, or saw it in
  // add_waiter).
  MR_CHECK(f->state.load(std::memory_order_acquire) == Future::kSignalled,
           "a future waiter resumed before its future was signalled");
  return f->value.load(std::memory_order_relaxed);
}

}  // namespace mr::engine
