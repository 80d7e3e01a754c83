// future.cpp: signalling and waiting on futures (future.hpp).
#include "config.h"

#include "future.hpp"

#include "engine.hpp"
#include "fatal.hpp"
#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

void future_signal(Future *f, std::uintptr_t value) {
  signal_future(
      f, value, [f] { trace::on_future_signal(f); }, [](Context *c) { schedule(c); });
}

bool future_is_signalled(const Future *f) {
  // acquire: a caller that sees true may read what the signaller wrote before signalling.
  return f->state.load(std::memory_order_acquire) == Future::kSignalled;
}

std::uintptr_t future_wait(Future *f) {
  if (future_ready(f)) {
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
    return !future_add_waiter(f, &w);
  });
  // acquire: pairs with the signaller's release store (we were woken after it, or saw it in
  // add_waiter).
  MR_CHECK(f->state.load(std::memory_order_acquire) == Future::kSignalled,
           "a future waiter resumed before its future was signalled");
  return f->value.load(std::memory_order_relaxed);
}

}  // namespace mr::engine
