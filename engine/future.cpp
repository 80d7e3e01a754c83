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

// Push w on f's waiter list, unless f is signalled. Returns false if it was (w not pushed).
bool add_waiter(Future *f, FutureWaiter *w) {
  // acquire: if kSignalled, the value is visible to the caller.
  std::uintptr_t s = f->state.load(std::memory_order_acquire);
  for (;;) {
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
  // acq_rel: the first signaller is the only writer of value; a later one must see its value
  // once the state says kSignalled (below).
  if (f->signals.fetch_add(1, std::memory_order_acq_rel) != 0) {
    // A second signal: wait for the first to publish (it is between two stores), then compare.
    // acquire: pairs with the first signaller's exchange.
    while (f->state.load(std::memory_order_acquire) != Future::kSignalled) sched_yield();
    std::uintptr_t first = f->value.load(std::memory_order_relaxed);
    if (first != value)
      fatal("MR_future_signal: future %p signalled twice with different values (%#lx, then "
            "%#lx)",
            static_cast<void *>(f), static_cast<unsigned long>(first),
            static_cast<unsigned long>(value));
    return;
  }
  trace::on_future_signal(f);
  f->value.store(value, std::memory_order_relaxed);
  // exchange acq_rel: release publishes the value to waiters; acquire sees their nodes.
  std::uintptr_t s = f->state.exchange(Future::kSignalled, std::memory_order_acq_rel);
  MR_CHECK(s != Future::kSignalled, "future signalled by two first signallers");
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
  // acquire: pairs with the signaller's exchange, so the value is visible.
  if (f->state.load(std::memory_order_acquire) == Future::kSignalled) {
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
  // acquire: pairs with the signaller's exchange (we were woken after it, or saw it in
  // add_waiter).
  MR_CHECK(f->state.load(std::memory_order_acquire) == Future::kSignalled,
           "a future waiter resumed before its future was signalled");
  return f->value.load(std::memory_order_relaxed);
}

}  // namespace mr::engine
