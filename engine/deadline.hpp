// deadline.hpp: what waits for a moment (doc/design.md, "Timers"): contexts that sleep until a
// deadline, timers that start a context or signal a future at one, tickers. They arm timers on
// the engines' heaps (timer.hpp); the engines fire them (timer_duty.hpp).
#ifndef MR_ENGINE_DEADLINE_HPP
#define MR_ENGINE_DEADLINE_HPP

#include <cstdint>

#include "engine.hpp"
#include "future.hpp"
#include "timer.hpp"

namespace mr::engine {

// The context running on the calling engine sleeps until `when`; a thread that is not an engine
// (or any thread while the runtime is not running) sleeps (clock_nanosleep). Returns 0 or
// MR_ENOMEM. Any thread.
int sleep_until(std::uint64_t when);

// Arm t to run fn(env) as a new context at `when`. Returns 0, MR_EINVAL (t pending), MR_ENOMEM
// or MR_ESHUTDOWN. Any thread while running.
int timer_start(Timer *t, std::uint64_t when, MR_TaskFn fn, void *env);

// Arm t to signal f with value at `when`. Returns 0, MR_EINVAL (t pending) or MR_ENOMEM. Any
// thread while running.
int future_signal_at(Future *f, std::uintptr_t value, std::uint64_t when, Timer *t);

// Cancel t: 0, MR_EFIRED, MR_ECANCELLED, MR_ESHUTDOWN (dropped) or MR_EINVAL (never armed). Any
// thread.
int timer_cancel(Timer *t);

// The inside of an MR_Ticker.
struct Ticker {
  std::uint64_t start, period, consumed;  // consumed: ticks already reported
};
static_assert(sizeof(Ticker) <= sizeof(MR_Ticker), "MR_Ticker too small");

void ticker_start(Ticker *tk, std::uint64_t period);
// Wait for the next tick; *ticks = periods elapsed since the last wait returned. 0 or MR_ENOMEM.
int ticker_wait(Ticker *tk, std::uint64_t *ticks);

}  // namespace mr::engine

#endif
